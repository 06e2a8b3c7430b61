// A consumer of the installed library: public headers only, C++17. It
// links rockdoc::rockdoc and rockdoc::tools (find_package(rockdoc)).
#include <iostream>
#include <string>

#include "rockdoc/client.h"
#include "rockdoc/document.h"
#include "rockdoc/json.h"
#include "rockdoc/tools.h"

int main(int argc, char** argv) {
  auto doc = rockdoc::FromJson(R"({"name": "Ada", "born": {"$numberLong": "1815"}})");
  if (!doc.ok()) {
    std::cerr << doc.status() << "\n";
    return 1;
  }
  if (doc->GetPath("born").Int64() != 1815) return 1;
  std::cout << rockdoc::ToJson(*doc) << "\n";
  if (argc < 2) {
    std::cerr << "usage: consumer DIR\n";
    return 2;
  }
  // rockdoc::tools: a collection exported as CSV and imported back.
  const std::string dir = argv[1];
  auto client = rockdoc::Client::Open(dir);
  if (!client.ok()) {
    std::cerr << client.status() << "\n";
    return 1;
  }
  rockdoc::Collection people = (*client)->GetDatabase("app").GetCollection("people");
  if (!people.InsertOne(*doc).ok()) return 1;
  rockdoc::tools::ExportOptions out;
  out.db = "app";
  out.collection = "people";
  out.type = rockdoc::tools::ExportType::kCsv;
  out.fields = {"name", "born"};
  out.out = dir + ".people.csv";
  auto exported = rockdoc::tools::Export(**client, out);
  if (!exported.ok() || *exported != 1) {
    std::cerr << "export: " << exported.status() << "\n";
    return 1;
  }
  rockdoc::tools::ImportOptions in;
  in.db = "app";
  in.collection = "copy";
  in.type = rockdoc::tools::ExportType::kCsv;
  in.header_line = true;
  in.file = out.out;
  auto imported = rockdoc::tools::Import(**client, in);
  if (!imported.ok() || imported->imported != 1) {
    std::cerr << "import: " << imported.status() << "\n";
    return 1;
  }
  std::cout << "exported and imported 1 document\nrockdoc consumer ok\n";
  return 0;
}
