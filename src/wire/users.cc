#include "wire/users.h"

#include <algorithm>
#include <iterator>
#include <vector>

#include "command/command.h"
#include "rockdoc/json.h"
#include "wire/crypto.h"

namespace rockdoc::wire {

// The command layer's decoding tables (ROCKDOC_GENERIC_COMMAND_ROWS names
// its rows unqualified).
using namespace ::rockdoc::internal;  // NOLINT(build/namespaces)

namespace {

constexpr ScramMechanism kMechanisms[] = {ScramMechanism::kSha1, ScramMechanism::kSha256};

std::string UserId(std::string_view db, std::string_view user) {
  return std::string(db) + "." + std::string(user);
}

Document IdFilter(std::string_view db, std::string_view user) {
  BsonBuilder b;
  b.AppendString("_id", UserId(db, user));
  return std::move(b).Build();
}

// ---- createUser ----

struct CreateUserArgs {
  std::string user;
  std::string pwd;
  bool has_pwd = false;
  bool has_roles = false;
  // Which credentials to store (mongod's default: both).
  std::vector<ScramMechanism> mechanisms;
};

Status RootRole(const Element& role, std::string_view db) {
  if (role.IsString() && role.String() == "root" && db == "admin") return Status::OK();
  if (role.IsDocument() && role.Document().Get("role").IsString() &&
      role.Document().Get("role").String() == "root" &&
      role.Document().Get("db").IsString() && role.Document().Get("db").String() == "admin" &&
      role.Document().CountFields() == 2) {
    return Status::OK();
  }
  return Status(ErrorCode::kNotImplemented,
                "roles other than root in admin are not supported by rockdoc (it has no "
                "authorization: every authenticated user may do everything)");
}

}  // namespace

Collection UserStore::Users() const {
  return client_->GetDatabase(kUsersDatabase).GetCollection(kUsersCollection);
}

namespace {

// A user document's userId bytes ("" without one).
std::string UserIdBytes(DocumentView user) {
  std::optional<BinaryView> id = user.Get("userId").AsBinary();
  return id ? std::string(id->data) : std::string();
}

}  // namespace

bool UserStore::StillAuthenticated(const AuthState& auth) const {
  BsonBuilder filter;
  filter.AppendString("_id", auth.user);
  auto found = Users().FindOne(std::move(filter).Build());
  // A read that fails keeps nobody in: the command is then Unauthorized.
  if (!found.ok() || !found->has_value()) return false;
  return UserIdBytes(**found) == auth.user_id;
}

std::optional<ScramCredentials> UserStore::Lookup(std::string_view db, std::string_view user,
                                                  std::string* user_id,
                                                  ScramMechanism mechanism) const {
  auto found = Users().FindOne(IdFilter(db, user));
  if (!found.ok() || !found->has_value()) return std::nullopt;
  if (user_id != nullptr) *user_id = UserIdBytes(**found);
  Element c = (**found).Get("credentials");
  if (!c.IsDocument()) return std::nullopt;
  c = c.Document().Get(ScramMechanismName(mechanism));
  if (!c.IsDocument()) return std::nullopt;
  DocumentView d = c.Document();
  auto salt = d.Get("salt").IsString() ? Base64Decode(d.Get("salt").String()) : std::nullopt;
  auto stored = d.Get("storedKey").IsString() ? Base64Decode(d.Get("storedKey").String())
                                              : std::nullopt;
  auto server = d.Get("serverKey").IsString() ? Base64Decode(d.Get("serverKey").String())
                                              : std::nullopt;
  int64_t iterations = 0;
  if (!salt || !stored || !server || !d.Get("iterationCount").ExactInt64(&iterations) ||
      iterations < 1 || iterations > 10000000) {
    return std::nullopt;
  }
  ScramCredentials out;
  out.iteration_count = static_cast<int>(iterations);
  out.salt = *salt;
  out.stored_key = *stored;
  out.server_key = *server;
  return out;
}

bool UserStore::Empty() const {
  auto n = Users().CountDocuments(Document());
  return n.ok() && *n == 0;
}

Status UserStore::CreateUser(std::string_view db, DocumentView cmd, BsonBuilder*) const {
  static constexpr OptionField<CreateUserArgs> kFields[] = {
      {"createUser",
       [](const Element& e, CreateUserArgs* o) -> Status {
         if (!e.IsString()) return WrongType(e, "type 'string'");
         o->user = std::string(e.String());
         return Status::OK();
       }},
      {"pwd",
       [](const Element& e, CreateUserArgs* o) -> Status {
         if (!e.IsString()) return WrongType(e, "type 'string'");
         o->pwd = std::string(e.String());
         o->has_pwd = true;
         return Status::OK();
       }},
      {"roles",
       [](const Element& e, CreateUserArgs* o) -> Status {
         if (!e.IsArray()) return WrongType(e, "type 'array'");
         o->has_roles = true;
         return Status::OK();
       }},
      {"mechanisms",
       [](const Element& e, CreateUserArgs* o) -> Status {
         if (!e.IsArray()) return WrongType(e, "type 'array'");
         o->mechanisms.clear();
         for (Element m : e.Array()) {
           const auto parsed = m.IsString() ? ParseScramMechanism(m.String()) : std::nullopt;
           if (!parsed) {
             return Status(ErrorCode::kNotImplemented,
                           "mechanisms other than SCRAM-SHA-1 and SCRAM-SHA-256 are not "
                           "supported by rockdoc");
           }
           o->mechanisms.push_back(*parsed);
         }
         if (o->mechanisms.empty()) {
           return Status(ErrorCode::kBadValue, "mechanisms field must not be empty");
         }
         return Status::OK();
       }},
      {"digestPassword", nullptr},
      {"customData", nullptr},
      {"authenticationRestrictions", nullptr},
      ROCKDOC_GENERIC_COMMAND_ROWS(CreateUserArgs)};
  CreateUserArgs args;
  args.mechanisms.assign(std::begin(kMechanisms), std::end(kMechanisms));
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("createUser", cmd, kFields, &args));
  if (args.user.empty()) return Status(ErrorCode::kBadValue, "User name must not be empty");
  if (!args.has_pwd) return internal::MissingField("createUser.pwd");
  if (!args.has_roles) return internal::MissingField("createUser.roles");
  for (Element role : cmd.Get("roles").Array()) ROCKDOC_RETURN_IF_ERROR(RootRole(role, db));
  ROCKDOC_RETURN_IF_ERROR(CheckPassword(args.pwd));
  BsonBuilder u;
  u.AppendString("_id", UserId(db, args.user));
  u.AppendBinary("userId", BinarySubtype::kUuid, RandomBytes(16));
  u.AppendString("user", args.user);
  u.AppendString("db", db);
  u.OpenDocument("credentials");
  for (ScramMechanism m : kMechanisms) {
    if (std::find(args.mechanisms.begin(), args.mechanisms.end(), m) == args.mechanisms.end()) {
      continue;
    }
    ROCKDOC_ASSIGN_OR_RETURN(std::string password, ScramPassword(m, args.user, args.pwd));
    const ScramCredentials c =
        MakeScramCredentials(password, "", DefaultScramIterations(m), m);
    u.OpenDocument(ScramMechanismName(m));
    u.AppendInt32("iterationCount", c.iteration_count);
    u.AppendString("salt", Base64Encode(c.salt));
    u.AppendString("storedKey", Base64Encode(c.stored_key));
    u.AppendString("serverKey", Base64Encode(c.server_key));
    u.Close();
  }
  u.Close();
  u.OpenArray("roles");
  u.OpenDocument("");
  u.AppendString("role", "root");
  u.AppendString("db", "admin");
  u.Close();
  u.Close();
  auto inserted = Users().InsertOne(std::move(u).Build());
  if (!inserted.ok()) {
    if (inserted.status().code() == ErrorCode::kDuplicateKey) {
      return Status(static_cast<ErrorCode>(51003),
                    "User \"" + args.user + "@" + std::string(db) + "\" already exists");
    }
    return inserted.status();
  }
  return Status::OK();
}

Status UserStore::DropUser(std::string_view db, DocumentView cmd, BsonBuilder*) const {
  struct Args {
    std::string user;
  };
  static constexpr OptionField<Args> kFields[] = {
      {"dropUser",
       [](const Element& e, Args* o) -> Status {
         if (!e.IsString()) return WrongType(e, "type 'string'");
         o->user = std::string(e.String());
         return Status::OK();
       }},
      ROCKDOC_GENERIC_COMMAND_ROWS(Args)};
  Args args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("dropUser", cmd, kFields, &args));
  ROCKDOC_ASSIGN_OR_RETURN(DeleteResult r, Users().DeleteOne(IdFilter(db, args.user)));
  if (r.deleted_count == 0) {
    return Status(ErrorCode::kUserNotFound,
                  "User '" + args.user + "@" + std::string(db) + "' not found");
  }
  return Status::OK();
}

Status UserStore::UsersInfo(std::string_view db, DocumentView cmd, BsonBuilder* reply) const {
  struct Args {};
  static constexpr OptionField<Args> kFields[] = {
      {"usersInfo", &internal::Accept<Args>},
      {"showCredentials", nullptr},
      {"showPrivileges", nullptr},
      {"showAuthenticationRestrictions", nullptr},
      {"filter", nullptr},
      ROCKDOC_GENERIC_COMMAND_ROWS(Args)};
  Args args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("usersInfo", cmd, kFields, &args));
  // usersInfo: "name" (of this database), {user, db}, or 1 (this database's).
  Element which = cmd.Get("usersInfo");
  BsonBuilder filter;
  if (which.IsString()) {
    filter.AppendString("_id", UserId(db, which.String()));
  } else if (which.IsDocument() && which.Document().Get("user").IsString() &&
             which.Document().Get("db").IsString() && which.Document().CountFields() == 2) {
    filter.AppendString("_id", UserId(which.Document().Get("db").String(),
                                      which.Document().Get("user").String()));
  } else if (which.IsNumber() && which.NumberAsDouble() == 1) {
    filter.AppendString("db", db);
  } else {
    return Status(ErrorCode::kNotImplemented,
                  "usersInfo takes a user name, {user, db} or 1 in rockdoc");
  }
  auto cursor = Users().Find(std::move(filter).Build());
  if (!cursor.ok()) return cursor.status();
  reply->OpenArray("users");
  while (cursor->Next()) {
    const DocumentView u = cursor->document();
    reply->OpenDocument("");
    for (std::string_view f : {"_id", "user", "db", "roles"}) reply->AppendElement(u.Get(f));
    reply->OpenArray("mechanisms");
    const Element credentials = u.Get("credentials");
    if (credentials.IsDocument()) {
      for (Element c : credentials.Document()) reply->AppendString("", c.key());
    }
    reply->Close();
    reply->Close();
  }
  ROCKDOC_RETURN_IF_ERROR(cursor->status());
  reply->Close();
  return Status::OK();
}

namespace {

// A SASL payload: BinData (drivers) or a string (the legacy shell).
StatusOr<std::string> Payload(DocumentView cmd, std::string_view command) {
  Element p = cmd.Get("payload");
  if (p.IsBinary()) return std::string(p.Binary().data);
  if (p.IsString()) return std::string(p.String());
  if (!p.ok()) return internal::MissingField(std::string(command) + ".payload");
  return WrongType(p, "type 'binData'");
}

void AppendPayload(BsonBuilder* reply, std::string_view payload) {
  reply->AppendBinary("payload", BinarySubtype::kGeneric, payload);
}

struct SaslArgs {
  bool skip_empty_exchange = false;
  ScramMechanism mechanism = ScramMechanism::kSha256;
};

// The conversation proved the user: the connection is authenticated as
// the user (the one whose credentials it checked: its userId).
void Authenticated(std::string_view db, AuthState* auth) {
  auth->user = UserId(db, auth->conversation->user());
  auth->user_id = auth->conversation_user_id;
  auth->conversation.reset();
}

}  // namespace

Status UserStore::SaslStart(std::string_view db, DocumentView cmd, AuthState* auth,
                            BsonBuilder* reply) const {
  static constexpr OptionField<SaslArgs> kFields[] = {
      {"saslStart", &internal::Accept<SaslArgs>},
      {"mechanism",
       [](const Element& e, SaslArgs* o) -> Status {
         if (!e.IsString()) return WrongType(e, "type 'string'");
         const auto m = ParseScramMechanism(e.String());
         if (!m) {
           return Status(ErrorCode::kMechanismUnavailable,
                         "Received authentication for mechanism " + std::string(e.String()) +
                             " which is not enabled (rockdoc has SCRAM-SHA-1 and SCRAM-SHA-256)");
         }
         o->mechanism = *m;
         return Status::OK();
       }},
      {"payload", &internal::Accept<SaslArgs>},
      {"autoAuthorize", &internal::Accept<SaslArgs>},
      {"options",
       [](const Element& e, SaslArgs* o) -> Status {
         if (!e.IsDocument()) return WrongType(e, "type 'object'");
         for (Element f : e.Document()) {
           if (f.key() != "skipEmptyExchange") {
             return Status(ErrorCode::kUnknownBsonField,
                           "BSON field 'options." + std::string(f.key()) + "' is an unknown field.");
           }
           ROCKDOC_ASSIGN_OR_RETURN(o->skip_empty_exchange, internal::BoolField(f));
         }
         return Status::OK();
       }},
      ROCKDOC_GENERIC_COMMAND_ROWS(SaslArgs)};
  SaslArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("saslStart", cmd, kFields, &args));
  if (!cmd.Get("mechanism").ok()) return internal::MissingField("saslStart.mechanism");
  ROCKDOC_ASSIGN_OR_RETURN(std::string payload, Payload(cmd, "saslStart"));
  auth->conversation = std::make_unique<ScramServer>(args.mechanism);
  auth->conversation_db = std::string(db);
  auth->skip_empty_exchange = args.skip_empty_exchange;
  auth->awaiting_empty_step = false;
  const std::string auth_db(db);
  StatusOr<std::string> first =
      auth->conversation->Start(payload, [this, &auth_db, auth, &args](std::string_view user) {
        return Lookup(auth_db, user, &auth->conversation_user_id, args.mechanism);
      });
  if (!first.ok()) {
    auth->conversation.reset();
    return first.status();
  }
  reply->AppendInt32("conversationId", 1);
  reply->AppendBool("done", false);
  AppendPayload(reply, *first);
  return Status::OK();
}

Status UserStore::SaslContinue(std::string_view db, DocumentView cmd, AuthState* auth,
                               BsonBuilder* reply) const {
  struct Args {};
  static constexpr OptionField<Args> kFields[] = {
      {"saslContinue", &internal::Accept<Args>},
      {"conversationId", &internal::Accept<Args>},
      {"payload", &internal::Accept<Args>},
      ROCKDOC_GENERIC_COMMAND_ROWS(Args)};
  Args args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("saslContinue", cmd, kFields, &args));
  ROCKDOC_ASSIGN_OR_RETURN(std::string payload, Payload(cmd, "saslContinue"));
  int64_t id = 0;
  if (!auth->conversation || db != auth->conversation_db ||
      !cmd.Get("conversationId").ExactInt64(&id) || id != 1) {
    return Status(ErrorCode::kAuthenticationFailed, "No SASL session state found");
  }
  if (auth->awaiting_empty_step) {
    // The client's empty last step (without skipEmptyExchange).
    Authenticated(db, auth);
    reply->AppendInt32("conversationId", 1);
    reply->AppendBool("done", true);
    AppendPayload(reply, "");
    return Status::OK();
  }
  StatusOr<std::string> final = auth->conversation->Finish(payload);
  if (!final.ok()) {
    auth->conversation.reset();
    return final.status();
  }
  reply->AppendInt32("conversationId", 1);
  if (auth->skip_empty_exchange) {
    Authenticated(db, auth);
    reply->AppendBool("done", true);
  } else {
    auth->awaiting_empty_step = true;
    reply->AppendBool("done", false);
  }
  AppendPayload(reply, *final);
  return Status::OK();
}

}  // namespace rockdoc::wire
