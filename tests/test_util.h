// Shared test helpers: a scratch directory, JSON literals, and a generator
// of random documents covering every BSON type.
#ifndef ROCKDOC_TESTS_TEST_UTIL_H_
#define ROCKDOC_TESTS_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "rockdoc/client.h"
#include "rockdoc/document.h"
#include "rockdoc/json.h"
#include "test_paths.h"

namespace rockdoc::test {

// A fresh empty directory, removed with everything in it on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "rockdoc-test-XXXXXX").string();
    char* made = mkdtemp(tmpl.data());
    if (made == nullptr) std::abort();
    path_ = made;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The options tests open their clients with: an in-memory database when
// the environment has ROCKDOC_TEST_IN_MEMORY=1 (CTest's `in_memory` label
// runs the CRUD and aggregation suites so), the directory otherwise; and
// the change log on.
inline ClientOptions TestClientOptions() {
  ClientOptions options;
  const char* in_memory = std::getenv("ROCKDOC_TEST_IN_MEMORY");
  options.in_memory = in_memory != nullptr && std::string_view(in_memory) == "1";
  // The change log on (it is off by default): every suite on these options
  // writes through it.
  options.change_log = true;
  return options;
}

// A test with a rockdoc::Client on a scratch directory, reopened by Open()
// (what survives a restart), and the database "test".
class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }
  void Open() {
    client_.reset();
    auto c = Client::Open(dir_.Sub("db"), TestClientOptions());
    ASSERT_TRUE(c.ok()) << c.status();
    client_ = std::move(c).value();
  }
  Database db() { return client_->GetDatabase("test"); }

  ScratchDir dir_;
  std::unique_ptr<Client> client_;
};

// A document from a JSON / Extended JSON literal; fails the test on error.
inline Document Json(std::string_view text) {
  auto doc = FromJson(text);
  EXPECT_TRUE(doc.ok()) << doc.status() << " in " << text;
  return doc.ok() ? std::move(doc).value() : Document();
}

// Runs `command` through Client::RunCommand, the door the shell, the C API
// and the wire server use: the reply, or its error (ok: 0) as a Status.
inline StatusOr<Document> RunCommandOk(const Client& client, std::string_view db,
                                       DocumentView command) {
  Document reply = client.RunCommand(db, command);
  Element ok = reply.Get("ok");
  if (ok.ok() && ok.IsNumber() && ok.NumberAsDouble() == 1) return reply;
  Element code = reply.Get("code"), errmsg = reply.Get("errmsg");
  return Status(static_cast<ErrorCode>(code.IsNumber() ? static_cast<int>(code.NumberAsDouble()) : 1),
                errmsg.IsString() ? std::string(errmsg.String()) : std::string("no errmsg"));
}

// The collMod command on db.coll with the fields of the JSON object
// `changes` ("{\"validator\": {}}"), as mongosh's db.runCommand sends it.
inline StatusOr<Document> CollModCommand(const Client& client, std::string_view db,
                                         std::string_view coll, std::string_view changes) {
  Document fields = Json(changes);
  BsonBuilder cmd;
  cmd.AppendString("collMod", coll);
  for (const Element& e : fields) cmd.AppendElement(e);
  return RunCommandOk(client, db, std::move(cmd).Build());
}

// The create command on db.coll with the fields of the JSON object
// `options` ("{\"capped\": true, \"size\": 4096}"), as mongosh's
// db.createCollection sends it: the options decoded by the command layer.
inline Status CreateCommand(const Client& client, std::string_view db, std::string_view coll,
                            std::string_view options) {
  Document fields = Json(options);
  BsonBuilder cmd;
  cmd.AppendString("create", coll);
  for (const Element& e : fields) cmd.AppendElement(e);
  return RunCommandOk(client, db, std::move(cmd).Build()).status();
}

// A capped collection's options: at most `size` bytes and, when given,
// `max` documents.
inline CreateCollectionOptions CappedOptions(int64_t size,
                                             std::optional<int64_t> max = std::nullopt) {
  CreateCollectionOptions o;
  o.capped = true;
  o.size = size;
  o.max = max;
  return o;
}

// A collection's options with the validator of the JSON object `validator`.
inline CreateCollectionOptions ValidatorOptions(std::string_view validator) {
  CreateCollectionOptions o;
  o.validator = Json(validator);
  return o;
}

// What `c.Find(filter, options)` returns, each document as JSON, sorted
// unless `options` sort (then in their order). A failure fails the test.
inline std::vector<std::string> FoundJson(const Collection& c, const Document& filter,
                                          const FindOptions& options = {}) {
  std::vector<std::string> out;
  auto cursor = c.Find(filter, options);
  EXPECT_TRUE(cursor.ok()) << cursor.status();
  if (!cursor.ok()) return out;
  auto docs = cursor->ToVector();
  EXPECT_TRUE(docs.ok()) << docs.status();
  if (!docs.ok()) return out;
  for (const Document& d : *docs) out.push_back(ToJson(d));
  if (options.sort.empty()) std::sort(out.begin(), out.end());
  return out;
}

// The documents of a JSON array literal ("[{...}, {...}]").
inline std::vector<Document> JsonArray(std::string_view text) {
  Document docs = Json(std::string("{\"d\": ") + std::string(text) + "}");
  std::vector<Document> v;
  if (docs.Get("d").type() != BsonType::kArray) return v;
  for (const Element& e : docs.Get("d").Array()) {
    v.push_back(Document::AdoptValidated(std::string(e.Document().bytes())));
  }
  return v;
}

// Random documents with every BSON type, nested documents and arrays, and
// edge-case numbers. Deterministic for a given seed.
class RandomDocuments {
 public:
  explicit RandomDocuments(uint64_t seed, int max_depth = 3, int max_fields = 6)
      : rng_(seed), max_depth_(max_depth), max_fields_(max_fields) {}

  Document Next() {
    BsonBuilder b;
    int n = Uniform(0, max_fields_);
    for (int i = 0; i < n; ++i) AppendValue(&b, Key(), 0);
    return std::move(b).Build();
  }

  // Appends one random value under `key`.
  void AppendValue(BsonBuilder* b, const std::string& key, int depth) {
    int kind = Uniform(0, depth >= max_depth_ ? 20 : 22);
    switch (kind) {
      case 0: b->AppendDouble(key, RandomDouble()); break;
      case 1: b->AppendString(key, String()); break;
      case 2: b->AppendBinary(key, Pick({BinarySubtype::kGeneric, BinarySubtype::kUuid,
                                          BinarySubtype::kBinaryOld, BinarySubtype::kUserDefined}),
                              String()); break;
      case 3: b->AppendUndefined(key); break;
      case 4: b->AppendObjectId(key, ObjectId::GenerateAt(static_cast<uint32_t>(rng_()))); break;
      case 5: b->AppendBool(key, rng_() & 1); break;
      case 6: b->AppendDateTime(key, static_cast<int64_t>(rng_()) >> Uniform(0, 40)); break;
      case 7: b->AppendNull(key); break;
      case 8: b->AppendRegex(key, Pick<std::string>({"a.*", "^x$", "[0-9]+"}),
                             Pick<std::string>({"", "i", "imx"})); break;
      case 9: b->AppendCode(key, String()); break;
      case 10: b->AppendSymbol(key, String()); break;
      case 11: b->AppendInt32(key, RandomInt32()); break;
      case 12: b->AppendTimestamp(key, BsonTimestamp{static_cast<uint32_t>(rng_()),
                                                     static_cast<uint32_t>(rng_())}); break;
      case 13: b->AppendInt64(key, RandomInt64()); break;
      case 14: b->AppendDecimal128(key, RandomDecimal()); break;
      case 15: b->AppendMinKey(key); break;
      case 16: b->AppendMaxKey(key); break;
      case 17: b->AppendInt32(key, Uniform(-3, 3)); break;     // small: many ties
      case 18: b->AppendDouble(key, Uniform(-3, 3) / 2.0); break;
      case 19: b->AppendString(key, Pick<std::string>({"", "a", "b", "ab"})); break;
      case 20: b->AppendDbPointer(key, "db.c", ObjectId::GenerateAt(7)); break;
      case 21: {
        b->OpenDocument(key);
        int n = Uniform(0, 3);
        for (int i = 0; i < n; ++i) AppendValue(b, Key(), depth + 1);
        b->Close();
        break;
      }
      default: {
        b->OpenArray(key);
        int n = Uniform(0, 4);
        for (int i = 0; i < n; ++i) AppendValue(b, "", depth + 1);
        b->Close();
        break;
      }
    }
  }

  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  std::mt19937_64& rng() { return rng_; }

  std::string Key() { return Pick<std::string>({"a", "b", "c", "x", "y", "_id", "é", "k1"}); }

  std::string String() {
    static const std::string kPieces[] = {"a", "b", "z", "é", "日本", std::string("\0", 1), " "};
    std::string s;
    int n = Uniform(0, 5);
    for (int i = 0; i < n; ++i) s += kPieces[Uniform(0, 6)];
    return s;
  }

  double RandomDouble() {
    switch (Uniform(0, 9)) {
      case 0: return std::numeric_limits<double>::infinity() * (rng_() & 1 ? 1 : -1);
      case 1: return std::numeric_limits<double>::quiet_NaN();
      case 2: return (rng_() & 1) ? 0.0 : -0.0;
      case 3: return std::numeric_limits<double>::denorm_min() * Uniform(1, 100);
      case 4: return static_cast<double>(RandomInt64());
      case 5: return 9007199254740992.0 + Uniform(-2, 2) * 2.0;
      default: {
        std::uniform_real_distribution<double> u(-1e6, 1e6);
        return u(rng_) * std::pow(10.0, Uniform(-20, 20));
      }
    }
  }
  int32_t RandomInt32() {
    switch (Uniform(0, 3)) {
      case 0: return std::numeric_limits<int32_t>::min();
      case 1: return std::numeric_limits<int32_t>::max();
      default: return static_cast<int32_t>(rng_());
    }
  }
  int64_t RandomInt64() {
    switch (Uniform(0, 4)) {
      case 0: return std::numeric_limits<int64_t>::min();
      case 1: return std::numeric_limits<int64_t>::max();
      case 2: return (int64_t{1} << 53) + Uniform(-2, 2);
      default: return static_cast<int64_t>(rng_()) >> Uniform(0, 60);
    }
  }
  Decimal128 RandomDecimal() {
    switch (Uniform(0, 5)) {
      case 0: return Decimal128::NaN();
      case 1: return Decimal128::Infinity(rng_() & 1);
      case 2: return Decimal128::FromInt64(Uniform(-5, 5));
      default: {
        Decimal128::Parts p;
        p.negative = rng_() & 1;
        p.coefficient_low = rng_() >> Uniform(0, 63);
        p.exponent = Uniform(-30, 30);
        return Decimal128::FromParts(p);
      }
    }
  }

  template <typename T>
  T Pick(std::initializer_list<T> options) {
    return *(options.begin() + Uniform(0, static_cast<int>(options.size()) - 1));
  }

 private:
  std::mt19937_64 rng_;
  int max_depth_;
  int max_fields_;
};

}  // namespace rockdoc::test

#endif  // ROCKDOC_TESTS_TEST_UTIL_H_
