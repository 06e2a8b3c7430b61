// libFuzzer: arbitrary bytes into keystring::Decode, the decoder covered
// queries use to rebuild values from index keys. Input layout:
//   byte 0: bits 0-2 the descending bits, bits 3-4 the field count - 1 (1-4)
//   byte 1: the length of the type bits (modulo what is left)
//   then the type bits, then the key.
// A key that does not decode fails with DataCorruptionDetected and leaves
// the builder closable. One that decodes gives BSON that is structurally
// valid, and is canonical: encoding the decoded values again gives exactly
// the key bytes the decoder consumed, type bits that agree with the ones it
// read, and decoding those gives the same BSON again. Aborts otherwise.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.h"
#include "keystring/keystring.h"
#include "rockdoc/document.h"

namespace {

using rockdoc::fuzz::Fail;
using rockdoc::fuzz::Hex;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint32_t descending = data[0] & 7;
  const int fields = ((data[0] >> 3) & 3) + 1;
  std::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  const size_t bits_size = rest.empty() ? 0 : data[1] % (rest.size() + 1);
  std::string_view type_bits = rest.substr(0, bits_size);
  std::string_view key = rest.substr(bits_size);
  static const std::vector<std::string_view> kNames = {"a", "b", "c", "d"};
  const std::vector<std::string_view> names(kNames.begin(), kNames.begin() + fields);
  const std::string what = "key " + Hex(key) + " type bits " + Hex(type_bits);

  rockdoc::BsonBuilder out;
  size_t consumed = 0;
  rockdoc::Status s =
      rockdoc::keystring::Decode(key, type_bits, descending, names, &out, &consumed);
  if (out.depth() != 0) Fail("Decode left a container open", s.ToString(), what);
  rockdoc::Document doc = std::move(out).Build();
  if (!s.ok()) {
    if (s.code() != rockdoc::ErrorCode::kDataCorruptionDetected) {
      Fail("Decode failed with a code other than DataCorruptionDetected", s.ToString(), what);
    }
    return 0;
  }
  if (consumed > key.size()) Fail("consumed more than the key", std::to_string(consumed), what);
  // Structure is checked, UTF-8 is not (see keystring.h).
  rockdoc::BsonValidationOptions options;
  options.check_utf8 = false;
  options.max_depth = rockdoc::kMaxNestingDepth + 1;
  rockdoc::Status valid = rockdoc::ValidateBson(doc.bytes(), options);
  if (!valid.ok()) Fail("Decode produced invalid BSON", valid.ToString(), what);
  if (static_cast<int>(doc.view().CountFields()) != fields) Fail("wrong field count", "", what);

  rockdoc::keystring::Builder again(descending);
  for (const rockdoc::Element& e : doc) again.Append(e);
  if (again.bytes() != key.substr(0, consumed)) {
    Fail("decoded values encode to other bytes", Hex(again.bytes()), what);
  }
  // The type bits read are the ones written again: equal bytes, except that
  // the last byte written may leave out bits the decoder did not read.
  const std::string& bits_again = again.type_bits();
  for (size_t i = 0; i < bits_again.size(); ++i) {
    const uint8_t mine = static_cast<uint8_t>(bits_again[i]);
    const uint8_t given = i < type_bits.size() ? static_cast<uint8_t>(type_bits[i]) : 0;
    if (i + 1 < bits_again.size() ? mine != given : (mine & ~given) != 0) {
      Fail("decoded values encode to other type bits", Hex(bits_again), what);
    }
  }
  rockdoc::BsonBuilder second;
  s = rockdoc::keystring::Decode(again.bytes(), bits_again, descending, names, &second);
  if (!s.ok()) Fail("the re-encoded key does not decode", s.ToString(), what);
  if (std::move(second).Build().bytes() != doc.bytes()) {
    Fail("the re-encoded key decodes to other values", rockdoc::fuzz::Json(doc), what);
  }
  return 0;
}
