#include "json/json_internal.h"

#include <array>

namespace rockdoc::json_internal {
namespace {

constexpr char kBase64Chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// 0..63 for base64 digits, 64 for '=', 255 for anything else.
constexpr std::array<uint8_t, 256> MakeBase64Table() {
  std::array<uint8_t, 256> t{};
  for (auto& v : t) v = 255;
  for (int i = 0; i < 64; ++i) t[static_cast<uint8_t>(kBase64Chars[i])] = static_cast<uint8_t>(i);
  t['='] = 64;
  return t;
}
constexpr std::array<uint8_t, 256> kBase64Table = MakeBase64Table();

constexpr int64_t kMillisPerDay = 86'400'000;

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

bool ReadDigits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned DaysInMonth(int64_t y, unsigned m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

}  // namespace

void AppendBase64(std::string_view data, std::string* out) {
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  size_t n = data.size();
  size_t start = out->size();
  out->resize(start + (n + 2) / 3 * 4);
  char* w = out->data() + start;
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t v = (uint32_t{p[i]} << 16) | (uint32_t{p[i + 1]} << 8) | p[i + 2];
    *w++ = kBase64Chars[v >> 18];
    *w++ = kBase64Chars[(v >> 12) & 63];
    *w++ = kBase64Chars[(v >> 6) & 63];
    *w++ = kBase64Chars[v & 63];
  }
  if (i < n) {
    uint32_t v = uint32_t{p[i]} << 16;
    if (i + 1 < n) v |= uint32_t{p[i + 1]} << 8;
    *w++ = kBase64Chars[v >> 18];
    *w++ = kBase64Chars[(v >> 12) & 63];
    *w++ = i + 1 < n ? kBase64Chars[(v >> 6) & 63] : '=';
    *w++ = '=';
  }
}

bool DecodeBase64(std::string_view text, std::string* out) {
  if (text.size() % 4 != 0) return false;
  out->reserve(out->size() + text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    uint8_t a = kBase64Table[static_cast<uint8_t>(text[i])];
    uint8_t b = kBase64Table[static_cast<uint8_t>(text[i + 1])];
    uint8_t c = kBase64Table[static_cast<uint8_t>(text[i + 2])];
    uint8_t d = kBase64Table[static_cast<uint8_t>(text[i + 3])];
    bool last = i + 4 == text.size();
    if (a > 63 || b > 63) return false;
    if (c == 64) {
      // "xx==": only in the final quantum, and the unused bits must be zero
      // so that every byte string has exactly one encoding.
      if (!last || d != 64 || (b & 0x0F) != 0) return false;
      out->push_back(static_cast<char>((a << 2) | (b >> 4)));
    } else if (d == 64) {
      if (!last || c > 63 || (c & 0x03) != 0) return false;
      out->push_back(static_cast<char>((a << 2) | (b >> 4)));
      out->push_back(static_cast<char>((b << 4) | (c >> 2)));
    } else {
      if (c > 63 || d > 63) return false;
      out->push_back(static_cast<char>((a << 2) | (b >> 4)));
      out->push_back(static_cast<char>((b << 4) | (c >> 2)));
      out->push_back(static_cast<char>((c << 6) | d));
    }
  }
  return true;
}

// The era-based day counting of the proleptic Gregorian calendar: an era is
// 400 years (146097 days), and counting years from March puts the leap day
// at the end of the year, which makes the month arithmetic linear.
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = FloorDiv(y, 400);
  const int64_t yoe = y - era * 400;                                     // [0, 399]
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  // [0, 365]
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;            // [0, 146096]
  return era * 146097 + doe - 719468;
}

void CivilFromDays(int64_t z, int64_t* year, unsigned* month, unsigned* day) {
  z += 719468;
  const int64_t era = FloorDiv(z, 146097);
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *day = static_cast<unsigned>(doy - (153 * mp + 2) / 5 + 1);
  *month = static_cast<unsigned>(mp < 10 ? mp + 3 : mp - 9);
  *year = yoe + era * 400 + (*month <= 2);
}

bool ParseIsoDate(std::string_view s, int64_t* millis) {
  int year, month, day, hour, minute, second;
  if (!ReadDigits(s, 0, 4, &year) || s.size() < 19 || s[4] != '-' ||
      !ReadDigits(s, 5, 2, &month) || s[7] != '-' || !ReadDigits(s, 8, 2, &day) ||
      (s[10] != 'T' && s[10] != 't') || !ReadDigits(s, 11, 2, &hour) || s[13] != ':' ||
      !ReadDigits(s, 14, 2, &minute) || s[16] != ':' || !ReadDigits(s, 17, 2, &second)) {
    return false;
  }
  if (month < 1 || month > 12 || day < 1 || static_cast<unsigned>(day) > DaysInMonth(year, month) ||
      hour > 23 || minute > 59 || second > 59) {
    return false;
  }
  size_t pos = 19;
  int ms = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    size_t digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 3) ms = ms * 10 + (s[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0 || digits > 9) return false;
    for (size_t i = digits; i < 3; ++i) ms *= 10;
  }
  int offset_minutes = 0;
  if (pos >= s.size()) return false;
  if (s[pos] == 'Z' || s[pos] == 'z') {
    ++pos;
  } else if (s[pos] == '+' || s[pos] == '-') {
    int sign = s[pos] == '-' ? -1 : 1;
    ++pos;
    int oh, om = 0;
    if (!ReadDigits(s, pos, 2, &oh)) return false;
    pos += 2;
    if (pos < s.size()) {
      if (s[pos] == ':') ++pos;
      if (!ReadDigits(s, pos, 2, &om)) return false;
      pos += 2;
    }
    if (oh > 23 || om > 59) return false;
    offset_minutes = sign * (oh * 60 + om);
  } else {
    return false;
  }
  if (pos != s.size()) return false;
  int64_t days = DaysFromCivil(year, month, day);
  *millis = days * kMillisPerDay + ((hour * 60 + minute - offset_minutes) * 60 + second) * 1000LL + ms;
  return true;
}

bool DateYearInRange(int64_t millis, int64_t min_year, int64_t max_year) {
  int64_t y;
  unsigned m, d;
  CivilFromDays(FloorDiv(millis, kMillisPerDay), &y, &m, &d);
  return y >= min_year && y <= max_year;
}

void AppendIsoDate(int64_t millis, bool always_millis, std::string* out) {
  int64_t days = FloorDiv(millis, kMillisPerDay);
  int64_t rem = millis - days * kMillisPerDay;  // [0, 86399999]
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, &y, &m, &d);
  auto put = [out](int64_t v, int width) {
    char buf[8];
    for (int i = width - 1; i >= 0; --i) {
      buf[i] = static_cast<char>('0' + v % 10);
      v /= 10;
    }
    out->append(buf, width);
  };
  put(y, 4);
  out->push_back('-');
  put(m, 2);
  out->push_back('-');
  put(d, 2);
  out->push_back('T');
  put(rem / 3'600'000, 2);
  out->push_back(':');
  put(rem / 60'000 % 60, 2);
  out->push_back(':');
  put(rem / 1000 % 60, 2);
  if (always_millis || rem % 1000 != 0) {
    out->push_back('.');
    put(rem % 1000, 3);
  }
  out->push_back('Z');
}

}  // namespace rockdoc::json_internal
