// wire/crypto.h: what SCRAM-SHA-256 (wire/scram.h) needs: SHA-256 (FIPS
// 180-4), HMAC-SHA-256 (RFC 2104), PBKDF2-HMAC-SHA-256 (RFC 8018), base64
// (RFC 4648), random bytes from the kernel (getrandom) and a comparison in
// constant time.
//
// The digests, HMAC, PBKDF2 and the comparison are OpenSSL's (libcrypto:
// EVP_Digest, HMAC, PKCS5_PBKDF2_HMAC, CRYPTO_memcmp): rockdoc writes no
// cryptography by hand. Base64 is the Extended JSON layer's codec. Tests
// check each against the specifications' vectors. Only the wire library
// (rockdoc_wire) links OpenSSL; the engine, librockdoc, does not.
//
// Thread safety: pure functions; RandomBytes is thread-safe.
#ifndef ROCKDOC_WIRE_CRYPTO_H_
#define ROCKDOC_WIRE_CRYPTO_H_

#include <optional>
#include <string>
#include <string_view>

namespace rockdoc::wire {

// The 32-byte SHA-256 digest of `data`.
std::string Sha256(std::string_view data);
// HMAC-SHA-256 of `data` under `key` (32 bytes).
std::string HmacSha256(std::string_view key, std::string_view data);
// PBKDF2 with HMAC-SHA-256: `length` bytes from `password`, `salt` and
// `iterations` (>= 1).
std::string Pbkdf2HmacSha256(std::string_view password, std::string_view salt, int iterations,
                             size_t length = 32);

std::string Base64Encode(std::string_view bytes);
// nullopt for text that is not canonical base64 (padding included).
std::optional<std::string> Base64Decode(std::string_view text);

// `n` random bytes from the kernel's generator.
std::string RandomBytes(size_t n);

// Whether a == b, in a time that does not depend on where they differ.
bool ConstantTimeEqual(std::string_view a, std::string_view b);

}  // namespace rockdoc::wire

#endif  // ROCKDOC_WIRE_CRYPTO_H_
