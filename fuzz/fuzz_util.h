// fuzz/fuzz_util.h: what the libFuzzer targets share: reporting a broken
// property, and the fixed documents that parsed filters and updates are
// applied to.
#ifndef ROCKDOC_FUZZ_FUZZ_UTIL_H_
#define ROCKDOC_FUZZ_FUZZ_UTIL_H_

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "rockdoc/document.h"
#include "rockdoc/json.h"

namespace rockdoc::fuzz {

// Prints what broke with the two texts that show it, and aborts (libFuzzer
// then saves the input as a crash).
[[noreturn]] inline void Fail(const char* what, std::string_view a, std::string_view b) {
  std::fprintf(stderr, "%s\n--- first\n%.*s\n--- second\n%.*s\n", what, static_cast<int>(a.size()),
               a.data(), static_cast<int>(b.size()), b.data());
  std::abort();
}

// Lower-case hex of bytes, for messages about keys.
inline std::string Hex(std::string_view s) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

inline std::string Json(DocumentView doc) {
  return ToJson(Document::AdoptValidated(std::string(doc.bytes())), JsonFormat::kCanonical);
}

// Documents with arrays (nested, empty, of documents), dotted and numeric
// field names, nulls, every BSON type, and numbers of every type that are
// equal in value.
inline const std::vector<Document>& FixedDocuments() {
  static const auto* const kDocs = [] {
    const char* const kTexts[] = {
        R"({})",
        R"({"_id": 1, "a": 1, "b": "x", "c": [1, 2, 3], "d": {"e": 5, "f": null}})",
        R"({"_id": 2, "a": [1, [2, 3], {"b": 4}], "b": null, "c": [],
            "d": [{"e": 1}, {"e": [2, 5]}]})",
        R"({"_id": 3, "a": {"b": {"c": [{"d": 1}, {"d": "1"}]}}, "a.b": 7, "x": [[[]]]})",
        R"({"_id": {"$oid": "5f1d7f0b9d3c2a1b2c3d4e5f"}, "a": {"$numberDecimal": "1.0"},
            "b": {"$numberDouble": "NaN"}, "c": {"$numberLong": "9007199254740993"},
            "d": {"$numberDouble": "-0.0"}, "e": {"$numberDouble": "Infinity"}, "f": 2.5})",
        R"({"_id": "s", "a": "abc", "b": "ABC\n",
            "c": {"$regularExpression": {"pattern": "^a", "options": "i"}},
            "d": {"$symbol": "abc"}, "e": {"$code": "f"},
            "f": {"$binary": {"base64": "AQID", "subType": "00"}}})",
        R"({"_id": 5, "a": true, "b": false, "c": {"$date": {"$numberLong": "0"}},
            "d": {"$timestamp": {"t": 1, "i": 2}}, "e": {"$minKey": 1}, "f": {"$maxKey": 1},
            "g": {"$undefined": true},
            "h": {"$dbPointer": {"$ref": "n", "$id": {"$oid": "5f1d7f0b9d3c2a1b2c3d4e5f"}}}})",
        R"({"_id": 6, "a": [{"b": 1, "c": [1, 2]}, {"b": 2, "c": [3]}, 5, null], "b": [null],
            "c": [[1, 2], [3]], "d": {"0": "x", "1": [1]}, "e": {"$ref": "c", "$id": 1},
            "f": [{"$numberInt": "7"}, {"$numberLong": "7"}]})",
        R"({"_id": 7, "a": {"b": [{"c": 1}, {"c": [1, {"d": 2}]}], "e": [[{"f": 1}]]}, "": 1,
            "$x": 2, "ü": "é"})",
    };
    auto* docs = new std::vector<Document>();
    for (const char* text : kTexts) {
      auto d = FromJson(text);
      if (!d.ok()) Fail("fixed document does not parse", d.status().ToString(), text);
      docs->push_back(std::move(*d));
    }
    return docs;
  }();
  return *kDocs;
}

}  // namespace rockdoc::fuzz

#endif  // ROCKDOC_FUZZ_FUZZ_UTIL_H_
