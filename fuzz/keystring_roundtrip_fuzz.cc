// libFuzzer: the values of a document (BSON bytes, or else JSON text)
// through the keystring encoding; checks src/keystring/README.md's
// properties and aborts on a violation:
//   * exact decoding, ascending and descending: the decoded value is the
//     same BSON (arrays get keys 0, 1, ... by design);
//   * order: memcmp of two encodings has the sign of CompareValues, and
//     equal values (only they) have equal bytes;
//   * prefix-free: no encoding is a proper prefix of another's;
//   * a compound key of all the values decodes field by field and consumes
//     exactly the key.
// The values are the document's fields and the elements of its top-level
// arrays and documents.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.h"
#include "keystring/keystring.h"
#include "rockdoc/document.h"
#include "rockdoc/json.h"

namespace {

using rockdoc::BsonType;
using rockdoc::Element;
using rockdoc::fuzz::Fail;
using rockdoc::fuzz::Hex;

constexpr size_t kMaxValues = 24;

std::string_view ValueBytes(const Element& e) {
  return std::string_view(reinterpret_cast<const char*>(e.value_data()), e.value_size());
}

// True when every array below `e` (and `e` itself) has keys 0, 1, ...: only
// then can decoding give back the same bytes.
bool CanonicalArrays(const Element& e) {
  if (e.type() == BsonType::kCodeWithScope) {
    for (const Element& c : e.CodeWithScopeScope()) {
      if (!CanonicalArrays(c)) return false;
    }
    return true;
  }
  if (!e.IsContainer()) return true;
  size_t i = 0;
  for (const Element& c : e.Document()) {
    if (e.type() == BsonType::kArray && c.key() != std::to_string(i)) return false;
    if (!CanonicalArrays(c)) return false;
    ++i;
  }
  return true;
}

std::string Show(const Element& e) {
  return rockdoc::ValueToJson(e, rockdoc::JsonFormat::kCanonical);
}

void CheckDecodes(const Element& v, uint32_t descending) {
  rockdoc::keystring::Builder key(descending);
  key.Append(v);
  rockdoc::BsonBuilder out;
  size_t consumed = 0;
  rockdoc::Status s =
      rockdoc::keystring::Decode(key.bytes(), key.type_bits(), descending, {"v"}, &out, &consumed);
  if (!s.ok()) Fail("an encoded value does not decode", s.ToString(), Show(v));
  if (consumed != key.bytes().size()) Fail("Decode consumed a different length", Show(v), "");
  rockdoc::Document doc = std::move(out).Build();
  Element back = doc.Get("v");
  if (back.type() != v.type() || rockdoc::CompareValues(back, v) != 0) {
    Fail("decoding gives another value", Show(v), Show(back));
  }
  if (CanonicalArrays(v) && ValueBytes(back) != ValueBytes(v)) {
    Fail("decoding gives other bytes", Show(v), Show(back));
  }
}

int Sign(int x) { return (x > 0) - (x < 0); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto doc = rockdoc::Document::FromBytes(input);
  if (!doc.ok()) {
    // JSON nests deeper than stored documents may (and keys need that limit).
    doc = rockdoc::FromJson(input);
    if (!doc.ok() || !rockdoc::ValidateBson(doc->bytes()).ok()) return 0;
  }

  std::vector<Element> values;
  for (const Element& e : *doc) {
    if (values.size() < kMaxValues) values.push_back(e);
    if (e.IsContainer()) {
      for (const Element& c : e.Document()) {
        if (values.size() < kMaxValues) values.push_back(c);
      }
    }
  }
  std::vector<std::string> encoded;
  for (const Element& v : values) {
    CheckDecodes(v, 0);
    CheckDecodes(v, 1);
    encoded.push_back(rockdoc::keystring::EncodeValue(v));
  }
  for (size_t i = 0; i < values.size(); ++i) {
    for (size_t j = 0; j < values.size(); ++j) {
      const std::string& a = encoded[i];
      const std::string& b = encoded[j];
      const int by_bytes = Sign(a.compare(b));
      const int by_value = Sign(rockdoc::CompareValues(values[i], values[j]));
      if (by_bytes != by_value) {
        Fail("byte order differs from CompareValues", Show(values[i]) + " " + Hex(a),
             Show(values[j]) + " " + Hex(b));
      }
      if (a.size() < b.size() && b.compare(0, a.size(), a) == 0) {
        Fail("an encoding is a prefix of another", Hex(a), Hex(b));
      }
    }
  }

  // All the values as one compound key, with directions from the input.
  const uint32_t descending = size > 0 ? data[size - 1] : 0;
  rockdoc::keystring::Builder compound(descending);
  std::vector<std::string> names;
  for (size_t i = 0; i < values.size(); ++i) {
    compound.Append(values[i]);
    names.push_back("f" + std::to_string(i));
  }
  std::vector<std::string_view> name_views(names.begin(), names.end());
  rockdoc::BsonBuilder out;
  size_t consumed = 0;
  rockdoc::Status s = rockdoc::keystring::Decode(compound.bytes(), compound.type_bits(), descending,
                                                 name_views, &out, &consumed);
  if (!s.ok()) Fail("a compound key does not decode", s.ToString(), Hex(compound.bytes()));
  if (consumed != compound.bytes().size()) Fail("compound: consumed a different length", "", "");
  rockdoc::Document back = std::move(out).Build();
  size_t i = 0;
  for (const Element& e : back) {
    if (i >= values.size() || rockdoc::CompareValues(e, values[i]) != 0 ||
        e.type() != values[i].type()) {
      Fail("a compound key decodes to other values", rockdoc::fuzz::Json(back),
           rockdoc::fuzz::Json(*doc));
    }
    ++i;
  }
  if (i != values.size()) Fail("a compound key decodes to fewer values", "", "");
  return 0;
}
