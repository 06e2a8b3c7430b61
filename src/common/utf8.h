// UTF-8 validation (RFC 3629): no overlong forms, no surrogates, nothing
// past U+10FFFF. ASCII runs are checked eight bytes at a time.
#ifndef ROCKDOC_COMMON_UTF8_H_
#define ROCKDOC_COMMON_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace rockdoc {

// The length (1 to 4) of the well-formed UTF-8 sequence that begins at
// `s` (`n` bytes available, n > 0), or 0 when none does.
inline size_t Utf8SequenceLength(const uint8_t* s, size_t n) {
  const uint8_t c = s[0];
  if (c < 0x80) return 1;
  size_t len;
  uint32_t cp;
  if ((c & 0xE0) == 0xC0) {
    len = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (len > n) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((s[k] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[k] & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

// The offset of the first byte that does not begin a well-formed sequence
// (`n` when there is none).
inline size_t FirstInvalidUtf8(const uint8_t* s, size_t n) {
  size_t i = 0;
  while (i < n) {
    if (i + 8 <= n) {
      uint64_t chunk;
      std::memcpy(&chunk, s + i, 8);
      if ((chunk & 0x8080808080808080ULL) == 0) {
        i += 8;
        continue;
      }
    }
    const size_t len = Utf8SequenceLength(s + i, n - i);
    if (len == 0) return i;
    i += len;
  }
  return n;
}

inline size_t FirstInvalidUtf8(std::string_view s) {
  return FirstInvalidUtf8(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

inline bool IsValidUtf8(const uint8_t* s, size_t n) { return FirstInvalidUtf8(s, n) == n; }

inline bool IsValidUtf8(std::string_view s) { return FirstInvalidUtf8(s) == s.size(); }

// `s` as valid UTF-8: each byte that does not begin a valid sequence
// becomes '?'. Text that quotes what a client sent (an error message
// naming a namespace or a field) goes through this before it is put into a
// BSON string, which must be UTF-8.
std::string ToValidUtf8(std::string_view s);

}  // namespace rockdoc

#endif  // ROCKDOC_COMMON_UTF8_H_
