// The BSON specification's conformance corpus (../shared/test-data/bson-corpus),
// run as bson-corpus.md describes for a codec without an intermediate
// representation:
//   valid:        cB validates; a copy element by element is byte-identical;
//                 cB -> canonical = cEJ; cB -> relaxed = rEJ; cEJ -> cB
//                 (unless lossy); dB -> cEJ / rEJ and back to cB; dEJ -> cB
//                 and -> cEJ; rEJ -> BSON -> relaxed = rEJ; converted_bson
//                 <-> converted_extjson.
//   decodeErrors: ValidateBson and Document::FromBytes reject the bytes.
//   parseErrors:  FromJson rejects the text (which simdjson accepts as plain
//                 JSON, so the failure is Extended JSON's); for decimal128
//                 files Decimal128::FromString and a {"$numberDecimal": ..}
//                 parse reject the string.
// JSON texts are compared after normalisation: both sides are parsed with
// simdjson and re-printed compactly in order, numbers by type and exact
// value, and "$numberDouble" strings by the double they denote (the corpus
// writes "1.2345678921232E+18" where we write "1.2345678921232e+18").
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "rockdoc/document.h"
#include "rockdoc/json.h"
#include "rockdoc/types.h"
#include "test_paths.h"

namespace rockdoc {
namespace {

std::string CorpusDir() { return rockdoc::test::TestDataDir() + "/bson-corpus"; }

// Cases skipped on purpose, by "file: description", with the reason. Keep
// this empty unless a case truly cannot apply to rockdoc.
const std::map<std::string, std::string>& SkipList() {
  static const auto* skips = new std::map<std::string, std::string>{};
  return *skips;
}

std::string HexToBytes(std::string_view hex) {
  std::string out;
  auto nibble = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return c - 'A' + 10;
  };
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(nibble(hex[i]) * 16 + nibble(hex[i + 1])));
  }
  return out;
}

std::string BytesToHex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

void NormalizeString(std::string_view s, std::string* out) {
  out->push_back('"');
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out->append(buf);
    } else {
      out->push_back(static_cast<char>(c));
    }
  }
  out->push_back('"');
}

void NormalizeDouble(double d, std::string* out) {
  if (std::isnan(d)) {
    out->append("NaN");
    return;
  }
  char buf[40];
  auto r = std::to_chars(buf, buf + sizeof(buf), d);
  out->append(buf, r.ptr - buf);
}

// Compact, ordered re-printing of a JSON value; see the file comment.
void Normalize(simdjson::dom::element e, std::string_view parent_key, std::string* out) {
  using simdjson::dom::element_type;
  switch (e.type()) {
    case element_type::OBJECT: {
      out->push_back('{');
      bool first = true;
      for (auto [key, value] : e.get_object()) {
        if (!first) out->push_back(',');
        first = false;
        NormalizeString(key, out);
        out->push_back(':');
        Normalize(value, key, out);
      }
      out->push_back('}');
      return;
    }
    case element_type::ARRAY: {
      out->push_back('[');
      bool first = true;
      for (auto value : e.get_array()) {
        if (!first) out->push_back(',');
        first = false;
        Normalize(value, "", out);
      }
      out->push_back(']');
      return;
    }
    case element_type::STRING: {
      std::string_view s = e.get_string().value();
      if (parent_key == "$numberDouble" && s != "Infinity" && s != "-Infinity" && s != "NaN") {
        double d = std::strtod(std::string(s).c_str(), nullptr);
        out->append("D\"");
        NormalizeDouble(d, out);
        out->push_back('"');
        return;
      }
      NormalizeString(s, out);
      return;
    }
    case element_type::INT64:
      out->append("I" + std::to_string(e.get_int64().value()));
      return;
    case element_type::UINT64:
      out->append("U" + std::to_string(e.get_uint64().value()));
      return;
    case element_type::DOUBLE:
      out->push_back('D');
      NormalizeDouble(e.get_double().value(), out);
      return;
    case element_type::BOOL:
      out->append(e.get_bool().value() ? "true" : "false");
      return;
    case element_type::NULL_VALUE:
      out->append("null");
      return;
  }
}

// The normal form of a JSON text, or "<invalid JSON: ...>".
std::string NormalJson(std::string_view text) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(text);
  simdjson::dom::element root;
  if (auto err = parser.parse(padded).get(root)) {
    return std::string("<invalid JSON: ") + simdjson::error_message(err) + "> " + std::string(text);
  }
  std::string out;
  Normalize(root, "", &out);
  return out;
}

// What a test case can say, with presence flags.
struct ValidCase {
  std::string description;
  std::string canonical_bson, canonical_extjson;
  std::string relaxed_extjson, degenerate_bson, degenerate_extjson;
  std::string converted_bson, converted_extjson;
  bool has_relaxed = false, has_degenerate_bson = false, has_degenerate_extjson = false;
  bool has_converted_bson = false, has_converted_extjson = false;
  bool lossy = false;
};

struct Counts {
  int valid = 0, decode_errors = 0, parse_errors = 0, skipped = 0;
  // Individual assertions within valid cases, for the log.
  int checks = 0;
};

// Checks everything a valid case promises. Failures name the case.
void RunValid(const std::string& where, const ValidCase& c, Counts* counts) {
  SCOPED_TRACE(where);
  const std::string cb = HexToBytes(c.canonical_bson);
  const std::string cej = NormalJson(c.canonical_extjson);

  // cB validates and re-encodes byte for byte through the builder.
  ASSERT_TRUE(ValidateBson(cb).ok()) << ValidateBson(cb);
  auto doc = Document::FromBytes(cb);
  ASSERT_TRUE(doc.ok()) << doc.status();
  BsonBuilder copy;
  for (Element e : doc->view()) copy.AppendElement(e);
  EXPECT_EQ(BytesToHex(std::move(copy).Build().bytes()), BytesToHex(cb));
  ++counts->checks;

  // cB -> canonical Extended JSON = cEJ.
  EXPECT_EQ(NormalJson(ToJson(*doc, JsonFormat::kCanonical)), cej);
  ++counts->checks;
  // cB -> relaxed = rEJ.
  if (c.has_relaxed) {
    EXPECT_EQ(NormalJson(ToJson(*doc, JsonFormat::kRelaxed)), NormalJson(c.relaxed_extjson));
    ++counts->checks;
  }
  // cEJ -> cB unless lossy; and its canonical form prints back to cEJ.
  auto parsed = FromJson(c.canonical_extjson);
  ASSERT_TRUE(parsed.ok()) << parsed.status() << " parsing " << c.canonical_extjson;
  if (!c.lossy) {
    EXPECT_EQ(BytesToHex(parsed->bytes()), BytesToHex(cb)) << c.canonical_extjson;
    ++counts->checks;
  }
  EXPECT_EQ(NormalJson(ToJson(*parsed, JsonFormat::kCanonical)), cej);
  ++counts->checks;

  if (c.has_degenerate_bson) {
    const std::string db = HexToBytes(c.degenerate_bson);
    auto ddoc = Document::FromBytes(db);
    ASSERT_TRUE(ddoc.ok()) << ddoc.status();
    const std::string text = ToJson(*ddoc, JsonFormat::kCanonical);
    EXPECT_EQ(NormalJson(text), cej);
    if (c.has_relaxed) {
      EXPECT_EQ(NormalJson(ToJson(*ddoc, JsonFormat::kRelaxed)), NormalJson(c.relaxed_extjson));
    }
    // native_to_bson(bson_to_native(dB)) = cB, with our JSON as the native form.
    if (!c.lossy) {
      auto back = FromJson(text);
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_EQ(BytesToHex(back->bytes()), BytesToHex(cb));
    }
    counts->checks += 3;
  }
  if (c.has_degenerate_extjson) {
    auto ddoc = FromJson(c.degenerate_extjson);
    ASSERT_TRUE(ddoc.ok()) << ddoc.status() << " parsing " << c.degenerate_extjson;
    if (!c.lossy) EXPECT_EQ(BytesToHex(ddoc->bytes()), BytesToHex(cb)) << c.degenerate_extjson;
    EXPECT_EQ(NormalJson(ToJson(*ddoc, JsonFormat::kCanonical)), cej);
    counts->checks += 2;
  }
  if (c.has_relaxed) {
    // rEJ -> BSON -> relaxed = rEJ.
    auto rdoc = FromJson(c.relaxed_extjson);
    ASSERT_TRUE(rdoc.ok()) << rdoc.status() << " parsing " << c.relaxed_extjson;
    EXPECT_EQ(NormalJson(ToJson(*rdoc, JsonFormat::kRelaxed)), NormalJson(c.relaxed_extjson));
    ++counts->checks;
  }
  if (c.has_converted_bson) {
    const std::string cvb = HexToBytes(c.converted_bson);
    auto cdoc = Document::FromBytes(cvb);
    ASSERT_TRUE(cdoc.ok()) << cdoc.status();
    if (c.has_converted_extjson) {
      EXPECT_EQ(NormalJson(ToJson(*cdoc, JsonFormat::kCanonical)),
                NormalJson(c.converted_extjson));
      auto back = FromJson(c.converted_extjson);
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_EQ(BytesToHex(back->bytes()), BytesToHex(cvb));
      counts->checks += 2;
    }
  }
}

std::string EscapeForJson(std::string_view s) {
  std::string out;
  NormalizeString(s, &out);
  return out;
}

Counts RunFile(const std::filesystem::path& path) {
  Counts counts;
  const std::string file = path.filename().string();
  simdjson::dom::parser parser;
  simdjson::padded_string text;
  EXPECT_EQ(simdjson::padded_string::load(path.string()).get(text), simdjson::SUCCESS) << file;
  simdjson::dom::object root;
  EXPECT_EQ(parser.parse(text).get(root), simdjson::SUCCESS) << file;
  const bool is_decimal = file.rfind("decimal128", 0) == 0;

  auto skipped = [&](std::string_view description) {
    auto it = SkipList().find(file + ": " + std::string(description));
    if (it == SkipList().end()) return false;
    ++counts.skipped;
    std::cout << "[ SKIP ] " << file << ": " << description << " -- " << it->second << "\n";
    return true;
  };
  auto get = [](simdjson::dom::object o, const char* key, std::string* out) {
    std::string_view v;
    if (o[key].get(v) != simdjson::SUCCESS) return false;
    out->assign(v);
    return true;
  };

  simdjson::dom::array valid;
  if (root["valid"].get(valid) == simdjson::SUCCESS) {
    for (simdjson::dom::object c : valid) {
      ValidCase vc;
      get(c, "description", &vc.description);
      if (skipped(vc.description)) continue;
      EXPECT_TRUE(get(c, "canonical_bson", &vc.canonical_bson)) << file << vc.description;
      EXPECT_TRUE(get(c, "canonical_extjson", &vc.canonical_extjson)) << file << vc.description;
      vc.has_relaxed = get(c, "relaxed_extjson", &vc.relaxed_extjson);
      vc.has_degenerate_bson = get(c, "degenerate_bson", &vc.degenerate_bson);
      vc.has_degenerate_extjson = get(c, "degenerate_extjson", &vc.degenerate_extjson);
      vc.has_converted_bson = get(c, "converted_bson", &vc.converted_bson);
      vc.has_converted_extjson = get(c, "converted_extjson", &vc.converted_extjson);
      bool lossy = false;
      vc.lossy = c["lossy"].get(lossy) == simdjson::SUCCESS && lossy;
      RunValid(file + ": " + vc.description, vc, &counts);
      ++counts.valid;
    }
  }
  simdjson::dom::array decode_errors;
  if (root["decodeErrors"].get(decode_errors) == simdjson::SUCCESS) {
    for (simdjson::dom::object c : decode_errors) {
      std::string description, hex;
      get(c, "description", &description);
      if (skipped(description)) continue;
      EXPECT_TRUE(get(c, "bson", &hex));
      const std::string bytes = HexToBytes(hex);
      Status s = ValidateBson(bytes);
      EXPECT_FALSE(s.ok()) << file << ": " << description << " was accepted: " << hex;
      EXPECT_FALSE(Document::FromBytes(bytes).ok()) << file << ": " << description;
      ++counts.decode_errors;
    }
  }
  simdjson::dom::array parse_errors;
  if (root["parseErrors"].get(parse_errors) == simdjson::SUCCESS) {
    for (simdjson::dom::object c : parse_errors) {
      std::string description, input;
      get(c, "description", &description);
      if (skipped(description)) continue;
      EXPECT_TRUE(get(c, "string", &input));
      if (is_decimal) {
        EXPECT_FALSE(Decimal128::FromString(input).ok())
            << file << ": " << description << ": " << input;
        auto doc = FromJson("{\"d\": {\"$numberDecimal\": " + EscapeForJson(input) + "}}");
        EXPECT_FALSE(doc.ok()) << file << ": " << description << ": " << input;
        if (!doc.ok()) EXPECT_EQ(doc.status().code(), ErrorCode::kFailedToParse);
      } else {
        // Plain JSON, so the rejection is about Extended JSON.
        simdjson::dom::parser plain;
        simdjson::padded_string padded(input);
        simdjson::dom::element ignored;
        EXPECT_EQ(plain.parse(padded).get(ignored), simdjson::SUCCESS) << input;
        auto doc = FromJson(input);
        EXPECT_FALSE(doc.ok()) << file << ": " << description << ": " << input << " gave "
                               << (doc.ok() ? ToJson(*doc, JsonFormat::kCanonical) : "");
        if (!doc.ok()) {
          EXPECT_EQ(doc.status().code(), ErrorCode::kFailedToParse);
          EXPECT_NE(doc.status().message().find("offset"), std::string_view::npos);
        }
      }
      ++counts.parse_errors;
    }
  }
  return counts;
}

TEST(BsonCorpusTest, EveryFileEveryCase) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(CorpusDir())) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty()) << "no corpus in " << CorpusDir();
  Counts total;
  for (const auto& f : files) {
    SCOPED_TRACE(f.filename().string());
    Counts c = RunFile(f);
    total.valid += c.valid;
    total.decode_errors += c.decode_errors;
    total.parse_errors += c.parse_errors;
    total.skipped += c.skipped;
    total.checks += c.checks;
  }
  std::cout << "bson corpus: " << files.size() << " files, " << total.valid << " valid ("
            << total.checks << " checks), " << total.decode_errors << " decodeErrors, "
            << total.parse_errors << " parseErrors, " << total.skipped << " skipped\n";
  // The corpus at commit 92b3c0b, as test-data/README.md counts it; every
  // skip must be in SkipList() with its reason.
  EXPECT_EQ(total.valid + total.decode_errors + total.parse_errors + total.skipped,
            728 + 75 + 180);
  EXPECT_EQ(total.skipped, static_cast<int>(SkipList().size()));
  EXPECT_EQ(total.valid, 728 - total.skipped);
  EXPECT_EQ(total.decode_errors, 75);
  EXPECT_EQ(total.parse_errors, 180);
}

}  // namespace
}  // namespace rockdoc
