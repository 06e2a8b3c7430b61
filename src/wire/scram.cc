#include "wire/scram.h"

#include <unicode/usprep.h>
#include <unicode/ustring.h>

#include <memory>

#include "wire/crypto.h"

namespace rockdoc::wire {

namespace {

Status Failed() { return Status(ErrorCode::kAuthenticationFailed, "Authentication failed."); }

// A SCRAM saslname: "=2C" is ',' and "=3D" is '='; any other '=' is an error.
std::optional<std::string> DecodeName(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '=') {
      out += s[i];
    } else if (s.substr(i, 3) == "=2C") {
      out += ',';
      i += 2;
    } else if (s.substr(i, 3) == "=3D") {
      out += '=';
      i += 2;
    } else {
      return std::nullopt;
    }
  }
  return out;
}

// "k=value" at the front of `s`, up to the next ',' (consumed).
std::optional<std::string_view> Attribute(std::string_view* s, char key) {
  if (s->size() < 2 || (*s)[0] != key || (*s)[1] != '=') return std::nullopt;
  const size_t comma = s->find(',');
  std::string_view value = s->substr(2, comma == std::string_view::npos ? s->npos : comma - 2);
  s->remove_prefix(comma == std::string_view::npos ? s->size() : comma + 1);
  return value;
}

}  // namespace

const char* ScramMechanismName(ScramMechanism m) {
  return m == ScramMechanism::kSha1 ? "SCRAM-SHA-1" : "SCRAM-SHA-256";
}

std::optional<ScramMechanism> ParseScramMechanism(std::string_view name) {
  for (ScramMechanism m : {ScramMechanism::kSha1, ScramMechanism::kSha256}) {
    if (name == ScramMechanismName(m)) return m;
  }
  return std::nullopt;
}

int DefaultScramIterations(ScramMechanism m) {
  return m == ScramMechanism::kSha1 ? kScramSha1Iterations : kScramIterations;
}

StatusOr<std::string> ScramPassword(ScramMechanism m, std::string_view user,
                                    std::string_view password) {
  if (m == ScramMechanism::kSha256) return SaslPrep(password);
  return Md5Hex(std::string(user) + ":mongo:" + std::string(password));
}

StatusOr<std::string> SaslPrep(std::string_view text) {
  const auto refused = [](UErrorCode e) {
    return Status(ErrorCode::kBadValue, std::string("the password is refused by SASLprep "
                                                    "(RFC 4013): ") + u_errorName(e));
  };
  bool ascii = true;
  for (unsigned char c : text) ascii = ascii && c >= 0x20 && c < 0x7F;
  if (ascii) return std::string(text);  // SASLprep maps printable ASCII to itself
  UErrorCode e = U_ZERO_ERROR;
  int32_t n16 = 0;
  u_strFromUTF8(nullptr, 0, &n16, text.data(), static_cast<int32_t>(text.size()), &e);
  if (e != U_BUFFER_OVERFLOW_ERROR && U_FAILURE(e)) return refused(e);
  std::u16string in(static_cast<size_t>(n16), u'\0');
  e = U_ZERO_ERROR;
  u_strFromUTF8(in.data(), n16, nullptr, text.data(), static_cast<int32_t>(text.size()), &e);
  if (U_FAILURE(e)) return refused(e);
  e = U_ZERO_ERROR;
  std::unique_ptr<UStringPrepProfile, decltype(&usprep_close)> profile(
      usprep_openByType(USPREP_RFC4013_SASLPREP, &e), &usprep_close);
  if (U_FAILURE(e)) return refused(e);
  // Measured first (NFKC may lengthen it), then prepared.
  UParseError where;
  const int32_t m = usprep_prepare(profile.get(), in.data(), static_cast<int32_t>(in.size()),
                                   nullptr, 0, USPREP_DEFAULT, &where, &e);
  if (e != U_BUFFER_OVERFLOW_ERROR && U_FAILURE(e)) return refused(e);
  std::u16string out(static_cast<size_t>(m), u'\0');
  e = U_ZERO_ERROR;
  usprep_prepare(profile.get(), in.data(), static_cast<int32_t>(in.size()), out.data(), m,
                 USPREP_DEFAULT, &where, &e);
  if (U_FAILURE(e)) return refused(e);
  if (m == 0) return Status(ErrorCode::kBadValue, "Password cannot be empty (after SASLprep)");
  std::string utf8(static_cast<size_t>(m) * 3, '\0');  // at most 3 bytes a UTF-16 unit
  int32_t n8 = 0;
  u_strToUTF8(utf8.data(), static_cast<int32_t>(utf8.size()), &n8, out.data(), m, &e);
  if (U_FAILURE(e)) return refused(e);
  utf8.resize(static_cast<size_t>(n8));
  return utf8;
}

Status ScramServer::Malformed(std::string_view what) const {
  return Status(ErrorCode::kBadValue,
                std::string(ScramMechanismName(mechanism_)) + ": malformed " + std::string(what));
}

Status CheckPassword(std::string_view password) {
  if (password.empty()) return Status(ErrorCode::kBadValue, "Password cannot be empty");
  return SaslPrep(password).status();
}

ScramCredentials MakeScramCredentials(std::string_view password, std::string salt,
                                      int iterations, ScramMechanism mechanism) {
  const Hash h = ScramHash(mechanism);
  ScramCredentials c;
  c.iteration_count = iterations;
  // MongoDB's salt sizes: 16 bytes for SCRAM-SHA-1, 28 for SCRAM-SHA-256.
  c.salt = salt.empty() ? RandomBytes(mechanism == ScramMechanism::kSha1 ? 16 : 28)
                        : std::move(salt);
  const std::string salted = Pbkdf2Hmac(h, password, c.salt, iterations, DigestSize(h));
  c.stored_key = Digest(h, Hmac(h, salted, "Client Key"));
  c.server_key = Hmac(h, salted, "Server Key");
  return c;
}

StatusOr<std::string> ScramServer::Start(std::string_view client_first, const Lookup& lookup,
                                         std::string nonce_suffix) {
  if (step_ != Step::kStart) return Malformed("conversation: it has started");
  // gs2-header: "n,," (no channel binding, no authzid).
  if (client_first.substr(0, 1) == "p" || client_first.substr(0, 1) == "y") {
    if (client_first.substr(0, 1) == "p") {
      return Status(ErrorCode::kMechanismUnavailable, "SCRAM channel binding is not supported");
    }
  } else if (client_first.substr(0, 1) != "n") {
    return Malformed("client-first message");
  }
  if (client_first.size() < 3 || client_first[1] != ',') return Malformed("gs2 header");
  const size_t second_comma = client_first.find(',', 2);
  if (second_comma == std::string_view::npos) return Malformed("gs2 header");
  if (second_comma != 2) {
    return Status(ErrorCode::kMechanismUnavailable, "SCRAM authzid is not supported");
  }
  gs2_header_ = std::string(client_first.substr(0, 3));
  std::string_view bare = client_first.substr(3);
  client_first_bare_ = std::string(bare);
  auto name = Attribute(&bare, 'n');
  auto nonce = Attribute(&bare, 'r');
  if (!name || !nonce || nonce->empty() || !bare.empty()) {
    return Malformed("client-first message (extensions are not supported)");
  }
  auto user = DecodeName(*name);
  if (!user || user->empty()) return Malformed("user name");
  user_ = *user;
  std::optional<ScramCredentials> found = lookup(user_);
  if (!found) return Failed();
  credentials_ = *found;
  if (nonce_suffix.empty()) nonce_suffix = Base64Encode(RandomBytes(24));
  nonce_ = std::string(*nonce) + nonce_suffix;
  server_first_ = "r=" + nonce_ + ",s=" + Base64Encode(credentials_.salt) +
                  ",i=" + std::to_string(credentials_.iteration_count);
  step_ = Step::kFinish;
  return server_first_;
}

StatusOr<std::string> ScramServer::Finish(std::string_view client_final) {
  if (step_ != Step::kFinish) return Malformed("conversation: no client-first message");
  step_ = Step::kDone;  // one try per conversation
  const size_t proof_at = client_final.rfind(",p=");
  if (proof_at == std::string_view::npos) return Malformed("client-final message");
  const std::string_view without_proof = client_final.substr(0, proof_at);
  std::string_view rest = without_proof;
  auto binding = Attribute(&rest, 'c');
  auto nonce = Attribute(&rest, 'r');
  if (!binding || !nonce || !rest.empty()) return Malformed("client-final message");
  if (*binding != Base64Encode(gs2_header_)) return Failed();
  if (*nonce != nonce_) return Failed();
  auto proof = Base64Decode(client_final.substr(proof_at + 3));
  const Hash h = ScramHash(mechanism_);
  if (!proof || proof->size() != DigestSize(h)) return Failed();
  const std::string auth_message =
      client_first_bare_ + "," + server_first_ + "," + std::string(without_proof);
  const std::string client_signature = Hmac(h, credentials_.stored_key, auth_message);
  std::string client_key = *proof;
  for (size_t i = 0; i < client_key.size(); ++i) client_key[i] ^= client_signature[i];
  if (!ConstantTimeEqual(Digest(h, client_key), credentials_.stored_key)) return Failed();
  done_ = true;
  return "v=" + Base64Encode(Hmac(h, credentials_.server_key, auth_message));
}

}  // namespace rockdoc::wire
