// Helpers shared by the Extended JSON reader and writer: base64, hex and
// calendar arithmetic. Internal to src/json/; all functions are pure and
// thread-safe.
#ifndef ROCKDOC_JSON_JSON_INTERNAL_H_
#define ROCKDOC_JSON_JSON_INTERNAL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc::json_internal {

// Appends the RFC 4648 base64 encoding of `data` (with '=' padding).
void AppendBase64(std::string_view data, std::string* out);
// Decodes strict RFC 4648 base64: length a multiple of 4, padding only at
// the end, no whitespace. Appends to `out`; false on malformed input.
bool DecodeBase64(std::string_view text, std::string* out);

// Value of a hex digit (either case), or -1. A table, not comparisons: the
// digits of ObjectIds are random, and branches on them mispredict.
struct HexTable {
  int8_t v[256];
  constexpr HexTable() : v() {
    for (int i = 0; i < 256; ++i) v[i] = -1;
    for (int i = 0; i < 10; ++i) v['0' + i] = static_cast<int8_t>(i);
    for (int i = 0; i < 6; ++i) {
      v['a' + i] = static_cast<int8_t>(10 + i);
      v['A' + i] = static_cast<int8_t>(10 + i);
    }
  }
};
inline constexpr HexTable kHexTable{};
inline int HexValue(char c) { return kHexTable.v[static_cast<uint8_t>(c)]; }
inline constexpr char kHexDigits[] = "0123456789abcdef";

// Days since 1970-01-01 of a proleptic Gregorian date (month 1..12).
int64_t DaysFromCivil(int64_t year, unsigned month, unsigned day);
// The inverse: the civil date of a day number.
void CivilFromDays(int64_t days, int64_t* year, unsigned* month, unsigned* day);

// Parses an RFC 3339 date-time ("2012-12-24T12:15:30.501Z", offsets "+01:00"
// or "+0100", fraction of 1 to 9 digits truncated to milliseconds) into
// milliseconds since the epoch. False when malformed or out of range.
bool ParseIsoDate(std::string_view text, int64_t* millis);
// Appends "YYYY-MM-DDTHH:MM:SS[.mmm]Z" for a date whose year is in 0..9999.
// The fraction is written when non-zero or when `always_millis` is set.
// Precondition: the year is in range (see DateYearInRange).
void AppendIsoDate(int64_t millis, bool always_millis, std::string* out);
// True when `millis` falls in years [min_year, max_year].
bool DateYearInRange(int64_t millis, int64_t min_year, int64_t max_year);

}  // namespace rockdoc::json_internal

#endif  // ROCKDOC_JSON_JSON_INTERNAL_H_
