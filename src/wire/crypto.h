// wire/crypto.h: what SCRAM-SHA-256 and SCRAM-SHA-1 (wire/scram.h) need:
// SHA-256 and SHA-1 (FIPS 180-4), HMAC (RFC 2104), PBKDF2 (RFC 8018), MD5 for
// MongoDB's SCRAM-SHA-1 password digest, base64
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

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX (no OpenSSL header here)

namespace rockdoc::wire {

// The digests SCRAM runs on: SHA-1 (SCRAM-SHA-1, RFC 5802; MongoDB's
// older default) and SHA-256 (SCRAM-SHA-256, RFC 7677).
enum class Hash { kSha1, kSha256 };
// The size of `hash`'s digest: 20 or 32 bytes.
size_t DigestSize(Hash hash);
// `hash`'s digest of `data`.
std::string Digest(Hash hash, std::string_view data);
// HMAC (RFC 2104) with `hash` of `data` under `key`.
std::string Hmac(Hash hash, std::string_view key, std::string_view data);
// PBKDF2 (RFC 8018) with HMAC-`hash`: `length` bytes from `password`,
// `salt` and `iterations` (>= 1).
std::string Pbkdf2Hmac(Hash hash, std::string_view password, std::string_view salt,
                       int iterations, size_t length);
// The lower-case hex MD5 digest of `data` (RFC 1321): only for MongoDB's
// SCRAM-SHA-1 password digest, md5("user:mongo:password"), never as a
// security function of its own.
std::string Md5Hex(std::string_view data);

// An MD5 digest (RFC 1321) over data given in pieces: dbHash's, which
// MongoDB computes over a collection's documents (a checksum, not a
// security function). Not copyable.
//
// Example:
//   Md5 md5;
//   for (...) md5.Update(document.bytes());
//   std::string hex = md5.HexDigest();
class Md5 {
 public:
  Md5();
  ~Md5();
  Md5(const Md5&) = delete;
  Md5& operator=(const Md5&) = delete;
  void Update(std::string_view data);
  // The lower-case hex digest of everything given; once.
  std::string HexDigest();

 private:
  ::evp_md_ctx_st* ctx_;  // OpenSSL's EVP_MD_CTX
};

// The 32-byte SHA-256 digest of `data`.
inline std::string Sha256(std::string_view data) { return Digest(Hash::kSha256, data); }
// HMAC-SHA-256 of `data` under `key` (32 bytes).
inline std::string HmacSha256(std::string_view key, std::string_view data) {
  return Hmac(Hash::kSha256, key, data);
}
// PBKDF2 with HMAC-SHA-256: `length` bytes from `password`, `salt` and
// `iterations` (>= 1).
inline std::string Pbkdf2HmacSha256(std::string_view password, std::string_view salt,
                                    int iterations, size_t length = 32) {
  return Pbkdf2Hmac(Hash::kSha256, password, salt, iterations, length);
}

std::string Base64Encode(std::string_view bytes);
// nullopt for text that is not canonical base64 (padding included).
std::optional<std::string> Base64Decode(std::string_view text);

// `n` random bytes from the kernel's generator.
std::string RandomBytes(size_t n);

// Whether a == b, in a time that does not depend on where they differ.
bool ConstantTimeEqual(std::string_view a, std::string_view b);

}  // namespace rockdoc::wire

#endif  // ROCKDOC_WIRE_CRYPTO_H_
