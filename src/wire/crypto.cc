#include "wire/crypto.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>

#include "json/json_internal.h"

namespace rockdoc::wire {

namespace {

// FIPS 180-4 4.2.2: the first 32 bits of the fractional parts of the cube
// roots of the first 64 primes.
constexpr uint32_t kK[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

inline uint32_t Rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void Compress(uint32_t h[8], const uint8_t block[64]) {
  uint32_t w[64];
  for (int t = 0; t < 16; ++t) {
    w[t] = static_cast<uint32_t>(block[4 * t]) << 24 | static_cast<uint32_t>(block[4 * t + 1]) << 16 |
           static_cast<uint32_t>(block[4 * t + 2]) << 8 | block[4 * t + 3];
  }
  for (int t = 16; t < 64; ++t) {
    const uint32_t s0 = Rotr(w[t - 15], 7) ^ Rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const uint32_t s1 = Rotr(w[t - 2], 17) ^ Rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  for (int t = 0; t < 64; ++t) {
    const uint32_t t1 =
        hh + (Rotr(e, 6) ^ Rotr(e, 11) ^ Rotr(e, 25)) + ((e & f) ^ (~e & g)) + kK[t] + w[t];
    const uint32_t t2 = (Rotr(a, 2) ^ Rotr(a, 13) ^ Rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    hh = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
  h[5] += f;
  h[6] += g;
  h[7] += hh;
}

}  // namespace

std::string Sha256(std::string_view data) {
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  size_t n = data.size();
  while (n >= 64) {
    Compress(h, p);
    p += 64;
    n -= 64;
  }
  // Padding: 0x80, zeros, then the length in bits, big-endian, to a
  // multiple of 64 bytes.
  uint8_t tail[128] = {};
  for (size_t i = 0; i < n; ++i) tail[i] = p[i];
  tail[n] = 0x80;
  const size_t tail_size = n + 1 + 8 <= 64 ? 64 : 128;
  const uint64_t bits = static_cast<uint64_t>(data.size()) * 8;
  for (int i = 0; i < 8; ++i) tail[tail_size - 1 - i] = static_cast<uint8_t>(bits >> (8 * i));
  Compress(h, tail);
  if (tail_size == 128) Compress(h, tail + 64);
  std::string out(32, '\0');
  for (int i = 0; i < 8; ++i) {
    out[4 * i] = static_cast<char>(h[i] >> 24);
    out[4 * i + 1] = static_cast<char>(h[i] >> 16);
    out[4 * i + 2] = static_cast<char>(h[i] >> 8);
    out[4 * i + 3] = static_cast<char>(h[i]);
  }
  return out;
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  std::string k = key.size() > 64 ? Sha256(key) : std::string(key);
  k.resize(64, '\0');
  std::string inner(64, '\0'), outer(64, '\0');
  for (int i = 0; i < 64; ++i) {
    inner[i] = static_cast<char>(k[i] ^ 0x36);
    outer[i] = static_cast<char>(k[i] ^ 0x5c);
  }
  inner.append(data);
  outer.append(Sha256(inner));
  return Sha256(outer);
}

std::string Pbkdf2HmacSha256(std::string_view password, std::string_view salt, int iterations,
                             size_t length) {
  std::string out;
  for (uint32_t block = 1; out.size() < length; ++block) {
    std::string s(salt);
    s.push_back(static_cast<char>(block >> 24));
    s.push_back(static_cast<char>(block >> 16));
    s.push_back(static_cast<char>(block >> 8));
    s.push_back(static_cast<char>(block));
    std::string u = HmacSha256(password, s);
    std::string t = u;
    for (int i = 1; i < iterations; ++i) {
      u = HmacSha256(password, u);
      for (size_t j = 0; j < t.size(); ++j) t[j] ^= u[j];
    }
    out += t;
  }
  out.resize(length);
  return out;
}

// The Extended JSON layer's strict RFC 4648 codec (json/json_internal.h).
std::string Base64Encode(std::string_view bytes) {
  std::string out;
  json_internal::AppendBase64(bytes, &out);
  return out;
}

std::optional<std::string> Base64Decode(std::string_view text) {
  std::string out;
  if (!json_internal::DecodeBase64(text, &out)) return std::nullopt;
  return out;
}

std::string RandomBytes(size_t n) {
  std::string out(n, '\0');
  size_t got = 0;
  while (got < n) {
    const ssize_t r = getrandom(out.data() + got, n - got, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      std::abort();  // no kernel randomness: nothing safe to fall back on
    }
    got += static_cast<size_t>(r);
  }
  return out;
}

bool ConstantTimeEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace rockdoc::wire
