// wire/users.h: rockdoc serve's users and the commands that manage and
// authenticate them: createUser, dropUser, usersInfo, saslStart and
// saslContinue (SCRAM-SHA-256, wire/scram.h).
//
// Users live in the collection `rockdoc.users` of the `admin` database,
// one document each in MongoDB's admin.system.users shape: {_id:
// "<db>.<user>", userId: UUID, user, db, credentials: {"SCRAM-SHA-1": ..., "SCRAM-SHA-256":
// {iterationCount, salt, storedKey, serverKey}} (base64, as MongoDB stores
// them), roles}. userId tells a user from one dropped and created again
// under the same name (users made before it existed have none).
//
// An authenticated connection stays so while its user does, as mongod's:
// every command re-reads the user (StillAuthenticated), and a user dropped
// (or dropped and created again) meanwhile leaves the connection
// unauthenticated. (mongod keeps a connection authenticated when only its
// user's password changes; rockdoc has no updateUser, so a new password
// is a new user, and the connection must log in again.)
// rockdoc has no authorization: an authenticated user may do everything,
// so the only role createUser takes is `root` (others are NotImplemented
// rather than accepted and not enforced).
//
// Thread safety: a UserStore is shared by all connections (the Client is
// thread-safe); commands of one connection run one at a time.
#ifndef ROCKDOC_WIRE_USERS_H_
#define ROCKDOC_WIRE_USERS_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "api/query_recorder.h"
#include "rockdoc/client.h"
#include "rockdoc/document.h"
#include "wire/scram.h"

namespace rockdoc::wire {

using internal::kUsersCollection;  // api/query_recorder.h: admin.rockdoc.users
using internal::kUsersDatabase;

// One connection's authentication: its SCRAM conversation and the user it
// proved to be.
struct AuthState {
  std::string user;  // "<db>.<user>" once authenticated, else empty
  std::string user_id;  // its userId's bytes ("" for a user without one)
  std::unique_ptr<ScramServer> conversation;
  std::string conversation_user_id;  // the userId of the user the conversation read
  std::string conversation_db;
  bool skip_empty_exchange = false;
  bool awaiting_empty_step = false;
};

class UserStore {
 public:
  explicit UserStore(const Client* client) : client_(client) {}

  // The `mechanism` credentials of `user` of database `db`, or nullopt
  // (no such user, or none for that mechanism); its userId's bytes into
  // *user_id when given ("" when it has none).
  std::optional<ScramCredentials> Lookup(std::string_view db, std::string_view user,
                                         std::string* user_id = nullptr,
                                         ScramMechanism mechanism = ScramMechanism::kSha256) const;
  // Whether the user `auth` authenticated as still exists, the same one
  // (its userId): false once it was dropped, even if created again.
  bool StillAuthenticated(const AuthState& auth) const;
  // Whether any user exists (the localhost exception applies while none does).
  bool Empty() const;

  // The commands, each appending its reply's fields (not `ok`) to `reply`.
  Status CreateUser(std::string_view db, DocumentView cmd, BsonBuilder* reply) const;
  Status DropUser(std::string_view db, DocumentView cmd, BsonBuilder* reply) const;
  Status UsersInfo(std::string_view db, DocumentView cmd, BsonBuilder* reply) const;
  Status SaslStart(std::string_view db, DocumentView cmd, AuthState* auth,
                   BsonBuilder* reply) const;
  Status SaslContinue(std::string_view db, DocumentView cmd, AuthState* auth,
                      BsonBuilder* reply) const;

 private:
  Collection Users() const;
  const Client* client_;
};

}  // namespace rockdoc::wire

#endif  // ROCKDOC_WIRE_USERS_H_
