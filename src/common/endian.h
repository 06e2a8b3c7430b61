// Little- and big-endian loads and stores over unaligned bytes. BSON is
// little-endian; keystrings are big-endian so that bytes sort as numbers.
#ifndef ROCKDOC_COMMON_ENDIAN_H_
#define ROCKDOC_COMMON_ENDIAN_H_

#include <cstdint>
#include <cstring>
#include <string>

namespace rockdoc {

template <typename T>
inline T LoadLE(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;  // x86-64 and aarch64 Linux are little-endian (static_assert below)
}
template <typename T>
inline void StoreLE(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}
template <typename T>
inline void AppendLE(std::string* out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out->append(b, sizeof(T));
}
inline uint64_t LoadBE64(const uint8_t* p) { return __builtin_bswap64(LoadLE<uint64_t>(p)); }
inline uint32_t LoadBE32(const uint8_t* p) { return __builtin_bswap32(LoadLE<uint32_t>(p)); }
inline void AppendBE64(std::string* out, uint64_t v) { AppendLE(out, __builtin_bswap64(v)); }
inline void AppendBE32(std::string* out, uint32_t v) { AppendLE(out, __builtin_bswap32(v)); }

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "rockdoc assumes a little-endian host");

}  // namespace rockdoc

#endif  // ROCKDOC_COMMON_ENDIAN_H_
