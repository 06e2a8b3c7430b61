// libFuzzer: arbitrary bytes into ValidateBson. Bytes it accepts must be
// safe to walk with the view API (every element, every accessor, nested
// documents), and must survive BSON -> canonical Extended JSON -> BSON
// byte for byte, except where the spec itself is lossy (NaN payloads) or
// cannot express the document ('$'-prefixed keys that read as wrappers,
// unsorted regex options, keys with NUL cannot occur). Aborts otherwise.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "rockdoc/document.h"
#include "rockdoc/json.h"

namespace {

using rockdoc::fuzz::Fail;

// Touches every accessor of every element, and reports whether the document
// is one Extended JSON can carry exactly.
bool Walk(rockdoc::DocumentView doc, bool is_array, int depth) {
  bool exact = true;
  int index = 0;
  for (rockdoc::Element e : doc) {
    std::string_view key = e.key();
    // A nested key starting with '$' may read back as a type wrapper;
    // array keys are rewritten as 0, 1, ... by design.
    if (depth > 0 && !is_array && !key.empty() && key[0] == '$') exact = false;
    // BSON arrays with keys other than 0, 1, ... are "degenerate": the JSON
    // array drops the keys.
    if (is_array && key != std::to_string(index)) exact = false;
    ++index;
    (void)e.size();
    (void)e.value_size();
    switch (e.type()) {
      case rockdoc::BsonType::kDouble: {
        double d = e.Double();
        if (std::isnan(d)) {
          uint64_t bits;
          std::memcpy(&bits, &d, 8);
          if (bits != 0x7FF8000000000000ULL) exact = false;  // payload or sign lost
        }
        break;
      }
      case rockdoc::BsonType::kString:
      case rockdoc::BsonType::kCode:
      case rockdoc::BsonType::kSymbol:
        (void)e.String();
        break;
      case rockdoc::BsonType::kDocument:
        exact &= Walk(e.Document(), false, depth + 1);
        break;
      case rockdoc::BsonType::kArray:
        exact &= Walk(e.Array(), true, depth + 1);
        break;
      case rockdoc::BsonType::kBinary:
        (void)e.Binary();
        break;
      case rockdoc::BsonType::kObjectId:
        (void)e.Oid();
        break;
      case rockdoc::BsonType::kBool:
        (void)e.Bool();
        break;
      case rockdoc::BsonType::kDateTime:
        (void)e.DateTime();
        break;
      case rockdoc::BsonType::kRegex: {
        rockdoc::RegexView re = e.Regex();
        for (size_t i = 1; i < re.options.size(); ++i) {
          if (re.options[i - 1] > re.options[i]) exact = false;  // written sorted
        }
        break;
      }
      case rockdoc::BsonType::kDbPointer:
        (void)e.DbPointer();
        break;
      case rockdoc::BsonType::kCodeWithScope:
        (void)e.CodeWithScopeCode();
        // The scope is a document at any depth: '$' keys in it may read as
        // wrappers too.
        exact &= Walk(e.CodeWithScopeScope(), false, depth + 1);
        break;
      case rockdoc::BsonType::kInt32:
        (void)e.Int32();
        break;
      case rockdoc::BsonType::kTimestamp:
        (void)e.Timestamp();
        break;
      case rockdoc::BsonType::kInt64:
        (void)e.Int64();
        break;
      case rockdoc::BsonType::kDecimal128: {
        // Non-canonical encodings (e.g. coefficients >= 10^34) print as
        // their value, not their bits.
        rockdoc::Decimal128 d = e.Decimal();
        auto back = rockdoc::Decimal128::FromString(d.ToString());
        if (!back.ok() || *back != d) exact = false;
        break;
      }
      default:
        break;
    }
    (void)e.NumberAsDouble();
  }
  return exact;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (!rockdoc::ValidateBson(bytes).ok()) return 0;
  auto doc = rockdoc::Document::FromBytes(bytes);
  if (!doc.ok()) Fail("ValidateBson accepted what FromBytes rejects", doc.status().ToString(), "");
  const bool exact = Walk(doc->view(), false, 0);

  // A copy through the builder is byte-identical.
  rockdoc::BsonBuilder copy;
  for (rockdoc::Element e : doc->view()) copy.AppendElement(e);
  if (std::move(copy).Build().bytes() != doc->bytes()) Fail("builder copy differs", "", "");

  const std::string canonical = rockdoc::ToJson(*doc, rockdoc::JsonFormat::kCanonical);
  auto back = rockdoc::FromJson(canonical);
  if (!back.ok()) {
    // Keys with '$' can legitimately collide with wrappers.
    if (exact) Fail("canonical Extended JSON does not parse", back.status().ToString(), canonical);
    return 0;
  }
  if (exact && back->bytes() != doc->bytes()) {
    Fail("BSON -> canonical -> BSON changed the bytes", canonical,
         rockdoc::ToJson(*back, rockdoc::JsonFormat::kCanonical));
  }
  // Whatever the input, our own output is a fixed point.
  const std::string again = rockdoc::ToJson(*back, rockdoc::JsonFormat::kCanonical);
  auto back2 = rockdoc::FromJson(again);
  if (!back2.ok() || back2->bytes() != back->bytes()) Fail("second round trip differs", again, "");
  (void)rockdoc::ToJson(*doc, rockdoc::JsonFormat::kRelaxed);
  (void)rockdoc::ToJson(*doc, rockdoc::JsonFormat::kShell);
  return 0;
}
