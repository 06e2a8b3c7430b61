// libFuzzer: arbitrary text into FromJson. Whatever parses must be valid
// BSON, and its canonical Extended JSON must parse back to the same bytes
// (and print the same text again). Aborts on any violation.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "rockdoc/document.h"
#include "rockdoc/json.h"

namespace {

using rockdoc::fuzz::Fail;

}  // namespace

namespace {

// Whether any value in `doc`, at any depth, is a decimal128 NaN.
bool HasDecimalNaN(rockdoc::DocumentView doc) {
  for (rockdoc::Element e : doc) {
    if (e.type() == rockdoc::BsonType::kDecimal128 && e.Decimal().IsNaN()) return true;
    if ((e.type() == rockdoc::BsonType::kDocument || e.type() == rockdoc::BsonType::kArray) &&
        HasDecimalNaN(e.Document())) {
      return true;
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto doc = rockdoc::FromJson(text);
  if (!doc.ok()) {
    if (doc.status().code() != rockdoc::ErrorCode::kFailedToParse) {
      Fail("error other than FailedToParse", doc.status().ToString(), text);
    }
    return 0;
  }
  // FromJson accepts up to 200 levels; BSON validation of stored documents
  // stops at 100, so validate structure with the parser's own limit.
  rockdoc::BsonValidationOptions options;
  options.max_depth = 256;
  options.max_size = static_cast<size_t>(1) << 30;
  rockdoc::Status valid = rockdoc::ValidateBson(doc->bytes(), options);
  if (!valid.ok()) Fail("FromJson produced invalid BSON", valid.ToString(), text);

  for (auto format : {rockdoc::JsonFormat::kCanonical, rockdoc::JsonFormat::kRelaxed}) {
    std::string out = rockdoc::ToJson(*doc, format);
    auto again = rockdoc::FromJson(out);
    if (!again.ok()) Fail("our own Extended JSON does not parse", again.status().ToString(), out);
    // The BSON spec's corpus marks a decimal NaN's sign and payload as lossy
    // in Extended JSON ("-NaN" reads as NaN): only there may bytes differ.
    if (format == rockdoc::JsonFormat::kCanonical && again->bytes() != doc->bytes() &&
        !HasDecimalNaN(*doc)) {
      Fail("canonical round trip changed the bytes", out,
           rockdoc::ToJson(*again, rockdoc::JsonFormat::kCanonical));
    }
    // Relaxed may narrow int64 to int32, but is a fixed point after one trip.
    if (rockdoc::ToJson(*again, format) != out) {
      Fail("writing what we read changed the text", out, rockdoc::ToJson(*again, format));
    }
  }
  (void)rockdoc::ToJson(*doc, rockdoc::JsonFormat::kShell);
  return 0;
}
