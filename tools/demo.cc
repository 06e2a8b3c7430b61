// rockdoc-demo: stores a few documents in a database directory and reads
// them back: the smallest complete use of the library.
//
//   rockdoc-demo [DIR]     (default: ./rockdoc-data/demo)
#include <iostream>

#include "rockdoc/client.h"
#include "rockdoc/json.h"

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : "rockdoc-data/demo";
  auto client = rockdoc::Client::Open(dir);
  if (!client.ok()) {
    std::cerr << "rockdoc-demo: " << client.status() << "\n";
    return 1;
  }
  rockdoc::Collection books = (*client)->GetDatabase("library").GetCollection("books");
  if (auto s = books.Drop(); !s.ok()) {
    std::cerr << "rockdoc-demo: " << s << "\n";
    return 1;
  }
  const char* inputs[] = {
      R"({"_id": 1, "title": "Dune", "author": "Frank Herbert", "year": 1965, "tags": ["sf", "classic"]})",
      R"({"_id": 2, "title": "Neuromancer", "author": "William Gibson", "year": 1984})",
      R"({"title": "The Dispossessed", "author": "Ursula K. Le Guin", "year": 1974,
          "published": {"$date": "1974-05-01T00:00:00Z"}, "price": {"$numberDecimal": "9.99"}})",
  };
  std::vector<rockdoc::Document> docs;
  for (const char* text : inputs) {
    auto doc = rockdoc::FromJson(text);
    if (!doc.ok()) {
      std::cerr << "rockdoc-demo: " << doc.status() << "\n";
      return 1;
    }
    docs.push_back(std::move(doc).value());
  }
  auto inserted = books.InsertMany(docs);
  if (!inserted.ok() || !inserted->ok()) {
    std::cerr << "rockdoc-demo: insert failed\n";
    return 1;
  }
  std::cout << "inserted " << inserted->inserted_count() << " books into " << dir << "\n";

  // A duplicate _id is refused with MongoDB's error.
  auto dup = books.InsertOne(docs[0]);
  std::cout << "inserting _id 1 again: " << dup.status() << "\n";

  auto cursor = books.Find(rockdoc::Document());
  if (!cursor.ok()) {
    std::cerr << "rockdoc-demo: " << cursor.status() << "\n";
    return 1;
  }
  while (cursor->Next()) std::cout << rockdoc::ToJson(cursor->document()) << "\n";
  auto count = books.EstimatedDocumentCount();
  std::cout << "count: " << count.value_or(-1) << "\n";
  auto valid = books.Validate();
  std::cout << "validate: " << (valid.ok() && valid->valid ? "ok" : "FAILED") << "\n";
  return valid.ok() && valid->valid ? 0 : 1;
}
