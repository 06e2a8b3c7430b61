// wire/scram.h: the server side of SCRAM-SHA-256 (RFC 5802, RFC 7677) and
// SCRAM-SHA-1 (RFC 5802) as MongoDB runs them through saslStart /
// saslContinue, and the credentials it stores for a user (MongoDB's:
// iteration count, salt, StoredKey and ServerKey, never the password).
// SCRAM-SHA-1's password is MongoDB's digest of it, hex md5("user:mongo:
// password") (ScramPassword), as every driver sends it.
//
// SCRAM-SHA-256's password is SASLprep'd (RFC 4013, ICU's StringPrep
// profile), as drivers prepare it; SCRAM-SHA-1's is not (MongoDB's digest
// is of the password as given).
//
// Thread safety: a ScramServer is one conversation, of one connection.
#ifndef ROCKDOC_WIRE_SCRAM_H_
#define ROCKDOC_WIRE_SCRAM_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "rockdoc/status.h"
#include "wire/crypto.h"

namespace rockdoc::wire {

enum class ScramMechanism { kSha1, kSha256 };
// "SCRAM-SHA-1", "SCRAM-SHA-256".
const char* ScramMechanismName(ScramMechanism m);
// The mechanism named `name`, or nullopt.
std::optional<ScramMechanism> ParseScramMechanism(std::string_view name);
inline Hash ScramHash(ScramMechanism m) {
  return m == ScramMechanism::kSha1 ? Hash::kSha1 : Hash::kSha256;
}

// MongoDB's default iteration counts (scramIterationCount,
// scramSHA256IterationCount) and salt sizes.
inline constexpr int kScramIterations = 15000;
inline constexpr int kScramSha1Iterations = 10000;
int DefaultScramIterations(ScramMechanism m);

// What SCRAM runs over as the password for `user`: SASLprep(password) for
// SCRAM-SHA-256 (BadValue when it refuses the password), MongoDB's hex
// md5("user:mongo:password") for SCRAM-SHA-1.
StatusOr<std::string> ScramPassword(ScramMechanism m, std::string_view user,
                                    std::string_view password);

struct ScramCredentials {
  int iteration_count = kScramIterations;
  std::string salt;        // raw bytes
  std::string stored_key;  // raw bytes: SHA-256(ClientKey)
  std::string server_key;  // raw bytes: HMAC(SaltedPassword, "Server Key")
};

// BadValue for an empty password, or one that SASLprep refuses (not
// UTF-8, a prohibited character, a mix of directions, an unassigned code
// point).
Status CheckPassword(std::string_view password);

// RFC 4013's SASLprep of UTF-8 `text` (stored strings: unassigned code
// points refused): the mapped, NFKC-normalized string, or BadValue.
StatusOr<std::string> SaslPrep(std::string_view text);

// The credentials of `password` (CheckPassword first) with `salt` (28
// random bytes when empty) and `iterations`.
ScramCredentials MakeScramCredentials(std::string_view password, std::string salt = "",
                                      int iterations = kScramIterations,
                                      ScramMechanism mechanism = ScramMechanism::kSha256);

class ScramServer {
 public:
  explicit ScramServer(ScramMechanism mechanism = ScramMechanism::kSha256)
      : mechanism_(mechanism) {}
  using Lookup = std::function<std::optional<ScramCredentials>(std::string_view user)>;

  // The client's first message ("n,,n=user,r=nonce") -> the server's
  // first ("r=nonce+ours,s=salt,i=count"). `nonce_suffix`: ours (24 random
  // bytes, base64, when empty; tests give RFC 7677's). AuthenticationFailed
  // (18) for an unknown user, BadValue for a malformed message,
  // MechanismUnavailable (334) for channel binding or an authzid.
  StatusOr<std::string> Start(std::string_view client_first, const Lookup& lookup,
                              std::string nonce_suffix = "");
  // The client's final message ("c=biws,r=...,p=proof") -> the server's
  // ("v=signature"). AuthenticationFailed when the proof is wrong.
  StatusOr<std::string> Finish(std::string_view client_final);

  const std::string& user() const { return user_; }
  ScramMechanism mechanism() const { return mechanism_; }
  bool done() const { return done_; }

 private:
  enum class Step { kStart, kFinish, kDone };
  Status Malformed(std::string_view what) const;
  ScramMechanism mechanism_;
  Step step_ = Step::kStart;
  bool done_ = false;
  std::string user_;
  std::string gs2_header_;
  std::string client_first_bare_;
  std::string server_first_;
  std::string nonce_;
  ScramCredentials credentials_;
};

}  // namespace rockdoc::wire

#endif  // ROCKDOC_WIRE_SCRAM_H_
