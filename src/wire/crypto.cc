#include "wire/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>

#include "common/logging.h"
#include "json/json_internal.h"

namespace rockdoc::wire {

namespace {

const unsigned char* Bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}
unsigned char* Bytes(std::string* s) { return reinterpret_cast<unsigned char*>(s->data()); }

const EVP_MD* Md(Hash hash) { return hash == Hash::kSha1 ? EVP_sha1() : EVP_sha256(); }

}  // namespace

size_t DigestSize(Hash hash) { return hash == Hash::kSha1 ? 20 : 32; }

// OpenSSL fails these only when it cannot allocate or the digest is not
// available (a broken installation): nothing a caller could recover from.
std::string Digest(Hash hash, std::string_view data) {
  std::string out(DigestSize(hash), '\0');
  unsigned int size = 0;
  ROCKDOC_CHECK(EVP_Digest(data.data(), data.size(), Bytes(&out), &size, Md(hash), nullptr) ==
                    1 &&
                size == out.size());
  return out;
}

std::string Hmac(Hash hash, std::string_view key, std::string_view data) {
  std::string out(DigestSize(hash), '\0');
  unsigned int size = 0;
  ROCKDOC_CHECK(HMAC(Md(hash), key.data(), static_cast<int>(key.size()), Bytes(data), data.size(),
                     Bytes(&out), &size) != nullptr &&
                size == out.size());
  return out;
}

std::string Pbkdf2Hmac(Hash hash, std::string_view password, std::string_view salt,
                       int iterations, size_t length) {
  std::string out(length, '\0');
  ROCKDOC_CHECK(PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()), Bytes(salt),
                                  static_cast<int>(salt.size()), iterations, Md(hash),
                                  static_cast<int>(length), Bytes(&out)) == 1);
  return out;
}

Md5::Md5() : ctx_(EVP_MD_CTX_new()) {
  ROCKDOC_CHECK(ctx_ != nullptr && EVP_DigestInit_ex(ctx_, EVP_md5(), nullptr) == 1);
}

Md5::~Md5() { EVP_MD_CTX_free(ctx_); }

void Md5::Update(std::string_view data) {
  ROCKDOC_CHECK(EVP_DigestUpdate(ctx_, data.data(), data.size()) == 1);
}

std::string Md5::HexDigest() {
  unsigned char digest[16];
  unsigned int size = 0;
  ROCKDOC_CHECK(EVP_DigestFinal_ex(ctx_, digest, &size) == 1 && size == sizeof digest);
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : digest) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

std::string Md5Hex(std::string_view data) {
  Md5 md5;
  md5.Update(data);
  return md5.HexDigest();
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
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace rockdoc::wire
