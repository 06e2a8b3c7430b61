// command/session_commands.cc: commitTransaction, abortTransaction and
// endSessions (the session fields themselves are applied by the
// dispatcher: command/server_sessions.h).
#include "command/command.h"
#include "command/handlers.h"
#include "command/server_sessions.h"

namespace rockdoc::internal {

namespace {

struct NoArgs {};
constexpr OptionField<NoArgs> kCommitFields[] = {{"commitTransaction", &Accept<NoArgs>},
                                                 // A recovery token is for sharded clusters.
                                                 {"recoveryToken", nullptr},
                                                 ROCKDOC_GENERIC_COMMAND_ROWS(NoArgs)};
constexpr OptionField<NoArgs> kAbortFields[] = {{"abortTransaction", &Accept<NoArgs>},
                                                {"recoveryToken", nullptr},
                                                ROCKDOC_GENERIC_COMMAND_ROWS(NoArgs)};

// The transaction commands need a session and a transaction number (the
// dispatcher has checked that the number is the session's).
Status NeedsTransaction(const CommandContext& ctx, DocumentView cmd, std::string_view name) {
  if (ctx.session == nullptr || !cmd.Get("txnNumber").ok()) {
    return Status(ErrorCode::kInvalidOptions,
                  std::string(name) +
                      " must be run within a transaction (lsid, txnNumber, "
                      "autocommit: false)");
  }
  return Status::OK();
}

}  // namespace

Status RunCommitTransaction(CommandContext& ctx, DocumentView cmd, BsonBuilder*) {
  NoArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("commitTransaction", cmd, kCommitFields, &args));
  ROCKDOC_RETURN_IF_ERROR(NeedsTransaction(ctx, cmd, "commitTransaction"));
  // A commit sent again answers as the first did (MongoDB's commit is
  // retryable; the dispatcher checked the number is the session's).
  if (ctx.server_session->committed && !ctx.session->InTransaction()) return Status::OK();
  Status s = ctx.session->CommitTransaction();
  if (s.ok()) ctx.server_session->committed = true;
  if (s.code() == ErrorCode::kIllegalOperation) {
    // The library's "No transaction started": for the server, an unknown
    // transaction.
    return Status(ErrorCode::kNoSuchTransaction, "Transaction has been aborted or was not started")
        .WithErrorLabel("TransientTransactionError");
  }
  return s;
}

Status RunAbortTransaction(CommandContext& ctx, DocumentView cmd, BsonBuilder*) {
  NoArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("abortTransaction", cmd, kAbortFields, &args));
  ROCKDOC_RETURN_IF_ERROR(NeedsTransaction(ctx, cmd, "abortTransaction"));
  Status s = ctx.session->AbortTransaction();
  if (s.code() == ErrorCode::kIllegalOperation) {
    return Status(ErrorCode::kNoSuchTransaction, "Transaction has been aborted or was not started")
        .WithErrorLabel("TransientTransactionError");
  }
  return s;
}

namespace {
struct EndSessionsArgs {
  std::vector<std::string> keys;
};
constexpr OptionField<EndSessionsArgs> kEndSessionsFields[] = {
    {"endSessions",
     [](const Element& e, EndSessionsArgs* o) -> Status {
       if (e.type() != BsonType::kArray) return WrongType(e, "type 'array'");
       for (Element lsid : e.Array()) {
         std::string key;
         ROCKDOC_RETURN_IF_ERROR(SessionKey(lsid, &key));
         o->keys.push_back(std::move(key));
       }
       return Status::OK();
     }},
    ROCKDOC_GENERIC_COMMAND_ROWS(EndSessionsArgs)};
}  // namespace

Status RunEndSessions(CommandContext& ctx, DocumentView cmd, BsonBuilder*) {
  EndSessionsArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("endSessions", cmd, kEndSessionsFields, &args));
  if (ctx.session != nullptr) {
    return Status(ErrorCode::kInvalidOptions, "endSessions does not take an lsid of its own");
  }
  // Sessions it does not know are ended already, as MongoDB treats them.
  for (const std::string& key : args.keys) ctx.sessions->End(key);
  return Status::OK();
}

}  // namespace rockdoc::internal
