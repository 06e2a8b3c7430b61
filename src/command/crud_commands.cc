// command/crud_commands.cc: the commands that read and write documents:
// find, getMore, killCursors, insert, update, delete, count, distinct.
#include "api/client_internal.h"
#include "command/command.h"
#include "common/deadline.h"
#include "command/change_stream_options.h"
#include "command/cursor_manager.h"
#include "command/handlers.h"
#include "query/expr_match_expression.h"
#include "query/update/update_driver.h"
#include "rockdoc/json.h"

namespace rockdoc::internal {

namespace {

// The find command's `gte: 0` fields: "BSON field 'find.limit' value must
// be >= 0, actual value '-1'" (51024).
Status NonNegative(const Element& e, int64_t value) {
  if (value >= 0) return Status::OK();
  return Status(static_cast<ErrorCode>(51024), "BSON field '" + std::string(e.key()) +
                                                   "' value must be >= 0, actual value '" +
                                                   std::to_string(value) + "'");
}

template <typename O, int64_t O::*M>
Status NonNegativeRow(const Element& e, O* o) {
  ROCKDOC_ASSIGN_OR_RETURN(int64_t v, IntegerField(e));
  ROCKDOC_RETURN_IF_ERROR(NonNegative(e, v));
  o->*M = v;
  return Status::OK();
}

// hint: a key pattern ({a: 1}) or an index name.
template <typename O>
Status HintRow(const Element& e, O* o) {
  if (e.IsString()) {
    o->hint_name = std::string(e.String());
    return Status::OK();
  }
  if (e.IsDocument()) {
    o->hint = Document::AdoptValidated(std::string(e.Document().bytes()));
    return Status::OK();
  }
  return WrongType(e, "types '[string, object]'");
}

// comment on the reads the profiler records (find, count, distinct,
// aggregate): kept for the profile entry, as MongoDB's (the generic row
// accepts it elsewhere).
template <typename O>
Status CommentRow(const Element& e, O* o) {
  o->options.comment = Value::FromElement(e);
  return Status::OK();
}

std::string Namespace(const CommandContext& ctx, std::string_view collection) {
  return ctx.db + "." + std::string(collection);
}

// ---- find ----

struct FindArgs {
  std::string collection;
  Document filter;
  FindOptions options;
  int64_t batch_size = kDefaultFirstBatch;
  bool single_batch = false;
  bool no_cursor_timeout = false;
  bool await_data = false;
};

// The find command's fields (find_command.idl), each applied or refused.
constexpr OptionField<FindArgs> kFindFields[] = {
    {"find",
     [](const Element& e, FindArgs* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->collection, CollectionName("find", e));
       return Status::OK();
     }},
    {"filter", &DocumentRow<FindArgs, &FindArgs::filter>},
    {"sort",
     [](const Element& e, FindArgs* o) {
       return DocumentRow<FindOptions, &FindOptions::sort>(e, &o->options);
     }},
    {"projection",
     [](const Element& e, FindArgs* o) {
       return DocumentRow<FindOptions, &FindOptions::projection>(e, &o->options);
     }},
    {"hint", [](const Element& e, FindArgs* o) { return HintRow(e, &o->options); }},
    {"skip",
     [](const Element& e, FindArgs* o) {
       return NonNegativeRow<FindOptions, &FindOptions::skip>(e, &o->options);
     }},
    {"limit",
     [](const Element& e, FindArgs* o) {
       return NonNegativeRow<FindOptions, &FindOptions::limit>(e, &o->options);
     }},
    {"batchSize", &NonNegativeRow<FindArgs, &FindArgs::batch_size>},
    {"singleBatch", &BoolRow<FindArgs, &FindArgs::single_batch>},
    {"maxTimeMS",
     [](const Element& e, FindArgs* o) {
       return NonNegativeRow<FindOptions, &FindOptions::max_time_ms>(e, &o->options);
     }},
    {"noCursorTimeout", &BoolRow<FindArgs, &FindArgs::no_cursor_timeout>},
    {"allowDiskUse", [](const Element& e, FindArgs*) { return CheckAllowDiskUse(e); }},
    // Partial results are about unreachable shards; there are none.
    {"allowPartialResults", &ApiBoolRow<FindArgs>},
    {"collation", &CollationRow<FindArgs>},
    {"let",
     [](const Element& e, FindArgs* o) {
       return DocumentRow<FindOptions, &FindOptions::let>(e, &o->options);
     }},
    {"min",
     [](const Element& e, FindArgs* o) {
       return DocumentRow<FindOptions, &FindOptions::min>(e, &o->options);
     }},
    {"max",
     [](const Element& e, FindArgs* o) {
       return DocumentRow<FindOptions, &FindOptions::max>(e, &o->options);
     }},
    {"returnKey",
     [](const Element& e, FindArgs* o) {
       return BoolRow<FindOptions, &FindOptions::return_key>(e, &o->options);
     }},
    {"showRecordId",
     [](const Element& e, FindArgs* o) {
       return BoolRow<FindOptions, &FindOptions::show_record_id>(e, &o->options);
     }},
    {"tailable",
     [](const Element& e, FindArgs* o) {
       return BoolRow<FindOptions, &FindOptions::tailable>(e, &o->options);
     }},
    {"awaitData", &BoolRow<FindArgs, &FindArgs::await_data>},
    {"oplogReplay", nullptr},
    {"readOnce", nullptr},
    {"maxScan", nullptr},
    {"comment", &CommentRow<FindArgs>},
    ROCKDOC_GENERIC_COMMAND_ROWS(FindArgs)};

}  // namespace

Status RunFind(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  FindArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("find", cmd, kFindFields, &args));
  // MongoDB's checks of the cursor type (tailable_mode.cpp, query_request_helper).
  if (args.await_data && !args.options.tailable) {
    return Status(ErrorCode::kFailedToParse,
                  "Cannot set 'awaitData' without also setting 'tailable'");
  }
  if (args.options.tailable && args.single_batch) {
    return BadValue("cannot use tailable option with the 'singleBatch' option");
  }
  Collection coll = ctx.database().GetCollection(args.collection);
  ROCKDOC_ASSIGN_OR_RETURN(Cursor cursor, coll.Find(args.filter, args.options));
  // A tailable cursor over a collection that exists: what awaitData waits on.
  std::shared_ptr<CappedState> tailed;
  if (const CursorImpl* impl = ClientAccess::ImplOf(cursor); impl != nullptr) {
    tailed = impl->tailed();
  }
  CommandCursor c(ctx.db, args.collection, std::move(cursor));
  c.no_timeout = args.no_cursor_timeout;
  if (tailed != nullptr) {
    c.tailable = true;
    // Its end is not final: the limit is what closes it.
    if (args.options.limit != 0) c.remaining = std::abs(args.options.limit);
    if (args.await_data) {
      c.await_stop = std::make_shared<AwaitStop>();
      c.await_stop->capped = std::move(tailed);
    }
  }
  return CursorReply(ctx, std::move(c), args.batch_size, args.single_batch, reply);
}

// ---- getMore, killCursors ----

namespace {
struct GetMoreArgs {
  int64_t id = 0;
  std::string collection;
  int64_t batch_size = -1;  // no count limit: 16 MiB
  std::optional<int64_t> max_time_ms;  // an awaitData cursor's wait
};
// How long an awaitData getMore waits for writes without a maxTimeMS:
// MongoDB's default, one second.
constexpr int64_t kDefaultAwaitDataMs = 1000;
constexpr OptionField<GetMoreArgs> kGetMoreFields[] = {
    {"getMore",
     [](const Element& e, GetMoreArgs* o) -> Status {
       if (e.type() != BsonType::kInt64) return WrongType(e, "type 'long'");
       o->id = e.Int64();
       return Status::OK();
     }},
    {"collection", &StringRow<GetMoreArgs, &GetMoreArgs::collection>},
    {"batchSize",
     [](const Element& e, GetMoreArgs* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(int64_t n, IntegerField(e));
       if (n <= 0) {
         return Status(
             ErrorCode::kBadValue,
             "Batch size for getMore must be positive, but received: " + std::to_string(n));
       }
       o->batch_size = n;
       return Status::OK();
     }},
    // How long an awaitData cursor waits for writes (0: until there are
    // some); other cursors refuse it (RunGetMore), as MongoDB's.
    {"maxTimeMS",
     [](const Element& e, GetMoreArgs* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(int64_t ms, IntegerField(e));
       ROCKDOC_RETURN_IF_ERROR(CheckMaxTimeMS(ms));
       o->max_time_ms = ms;
       return Status::OK();
     }},
    {"term", nullptr},
    {"lastKnownCommittedOpTime", nullptr},
    ROCKDOC_GENERIC_COMMAND_ROWS(GetMoreArgs)};
}  // namespace

// FillBatch, and for an awaitData cursor with nothing to return yet, waits
// for a write to its collection (a condition variable the writers signal:
// CappedState::WaitForWrite) up to `wait_ms` (0: no limit), killCursors or
// the server's shutdown, and looks again after each write.
StatusOr<bool> FillAwaitedBatch(const CursorManager& cursors, CommandCursor* c,
                                int64_t batch_size, int64_t wait_ms, Operation* operation,
                                BsonBuilder* batch) {
  const Deadline deadline = Deadline::AfterMillis(wait_ms);
  // killOp of this getMore ends its wait (the cursor goes with it).
  struct Waker {
    Operation* op;
    ~Waker() {
      if (op != nullptr) op->SetWaker(nullptr);
    }
  } waker{c->await_stop != nullptr ? operation : nullptr};
  if (waker.op != nullptr) waker.op->SetWaker([stop = c->await_stop] { stop->Stop(); });
  const std::atomic<bool>* interrupt = CurrentInterrupt();
  auto killed = [interrupt] {
    return interrupt != nullptr && interrupt->load(std::memory_order_acquire);
  };
  while (true) {
    if (killed()) return InterruptedError();
    int64_t appended = 0;
    ROCKDOC_ASSIGN_OR_RETURN(bool exhausted, FillBatch(c, batch_size, batch, &appended));
    AwaitStop* stop = c->await_stop.get();
    if (appended > 0 || !exhausted || stop == nullptr || c->remaining == 0 || cursors.stopping()) {
      return exhausted;
    }
    if (stop->stopped.load(std::memory_order_acquire)) {
      // killOp sets the flag, then stops the wait: a stop seen after the
      // check above may be its, and the getMore fails as killed (its caller
      // closes the cursor); otherwise killCursors stopped it.
      if (killed()) return InterruptedError();
      return exhausted;
    }
    if (!deadline.Check().ok()) return exhausted;  // waited long enough: an empty batch
    // At most a day per wait (no limit: waits again after it).
    const int64_t ms = std::min<int64_t>(deadline.RemainingMillis(), 24 * 3600 * 1000);
    if (c->stream) {
      WaitForChange(ClientAccess::ImplOf(*c->stream), ms, &stop->stopped);
      continue;
    }
    const CursorImpl* impl = ClientAccess::ImplOf(*c->cursor);
    stop->capped->WaitForWrite(impl->writes_seen(), ms, &stop->stopped);
  }
}

Status RunGetMore(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  GetMoreArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("getMore", cmd, kGetMoreFields, &args));
  if (args.collection.empty()) {
    return MissingField("getMore.collection");
  }
  const std::string ns = Namespace(ctx, args.collection);
  ROCKDOC_ASSIGN_OR_RETURN(std::unique_ptr<CommandCursor> c, ctx.cursors->CheckOut(args.id, ns));
  if (args.max_time_ms && c->await_stop == nullptr) {
    ctx.cursors->CheckIn(args.id, std::move(c));  // refused, not closed
    return BadValue("cannot set maxTimeMS on getMore command for a non-awaitData cursor");
  }
  reply->OpenDocument("cursor");
  reply->OpenArray("nextBatch");
  StatusOr<bool> exhausted = FillAwaitedBatch(*ctx.cursors, c.get(), args.batch_size,
                                              args.max_time_ms.value_or(kDefaultAwaitDataMs),
                                              ctx.operation, reply);
  if (!exhausted.ok()) {
    ctx.cursors->Kill(args.id, ns);  // a failed cursor is closed, as MongoDB's
    return exhausted.status();
  }
  if (c->await_stop != nullptr && c->await_stop->stopped.load() && !ctx.cursors->stopping()) {
    // killCursors ended the wait: the cursor is gone, the getMore interrupted.
    return Status(ErrorCode::kInterrupted,
                  "operation was interrupted: cursor id " + std::to_string(args.id) +
                      " was killed");
  }
  reply->Close();
  if (c->stream) reply->AppendDocument("postBatchResumeToken", c->stream->resume_token());
  const bool closes = *exhausted && !StaysOpen(*c);
  if (closes) {
    ctx.cursors->Kill(args.id, ns);
  } else {
    ctx.cursors->CheckIn(args.id, std::move(c));
  }
  reply->AppendInt64("id", closes ? 0 : args.id);
  reply->AppendString("ns", ns);
  reply->Close();
  return Status::OK();
}

namespace {
struct KillCursorsArgs {
  std::string collection;
  std::vector<int64_t> ids;
  bool has_ids = false;
};
constexpr OptionField<KillCursorsArgs> kKillCursorsFields[] = {
    {"killCursors",
     [](const Element& e, KillCursorsArgs* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->collection, CollectionName("killCursors", e));
       return Status::OK();
     }},
    {"cursors",
     [](const Element& e, KillCursorsArgs* o) -> Status {
       if (e.type() != BsonType::kArray) return WrongType(e, "type 'array'");
       o->has_ids = true;
       for (Element id : e.Array()) {
         if (id.type() != BsonType::kInt64) return WrongType(id, "type 'long'");
         o->ids.push_back(id.Int64());
       }
       return Status::OK();
     }},
    ROCKDOC_GENERIC_COMMAND_ROWS(KillCursorsArgs)};

void AppendIds(BsonBuilder* reply, std::string_view name, const std::vector<int64_t>& ids) {
  reply->OpenArray(name);
  for (int64_t id : ids) reply->AppendInt64("", id);
  reply->Close();
}
}  // namespace

Status RunKillCursors(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  KillCursorsArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("killCursors", cmd, kKillCursorsFields, &args));
  if (!args.has_ids) {
    return MissingField("killCursors.cursors");
  }
  std::vector<int64_t> killed, not_found;
  const std::string ns = Namespace(ctx, args.collection);
  for (int64_t id : args.ids) (ctx.cursors->Kill(id, ns) ? killed : not_found).push_back(id);
  AppendIds(reply, "cursorsKilled", killed);
  AppendIds(reply, "cursorsNotFound", not_found);
  AppendIds(reply, "cursorsAlive", {});
  AppendIds(reply, "cursorsUnknown", {});
  return Status::OK();
}

// ---- Writes ----

namespace {

// One failed statement of a write command: {index, code, <extra fields>?,
// errInfo?, errmsg} (a duplicate key's: {index, code, keyPattern, keyValue,
// errmsg}, as mongod's).
void AppendWriteError(BsonBuilder* errors, size_t index, const Status& s) {
  errors->OpenDocument("");
  errors->AppendInt32("index", static_cast<int32_t>(index));
  errors->AppendInt32("code", static_cast<int32_t>(s.code()));
  AppendErrorDetails(s, errors);
  errors->AppendString("errmsg", s.message());
  errors->Close();
}

// A statement's error that ends the whole command: one with error labels
// (a WriteConflict or NoSuchTransaction in a transaction, which MongoDB
// returns as the command's error, with TransientTransactionError, so that
// drivers retry the transaction), or an interruption (MaxTimeMSExpired:
// mongod's write path rethrows those, "these have always failed the whole
// batch"), else OK.
Status CommandLevelError(const std::vector<WriteError>& errors) {
  for (const WriteError& e : errors) {
    if (!e.status.error_labels().empty() || e.status.code() == ErrorCode::kMaxTimeMSExpired) {
      return e.status;
    }
  }
  return Status::OK();
}

void AppendWriteErrors(BsonBuilder* reply, const std::vector<WriteError>& errors) {
  if (errors.empty()) return;
  reply->OpenArray("writeErrors");
  for (const WriteError& e : errors) AppendWriteError(reply, e.index, e.status);
  reply->Close();
}

// rockdoc's own field of insert, update and findAndModify replies: the
// growth warnings the writes raised (GrowthStatistics), one string each, at
// most kMaxWriteWarnings and a line saying how many more. Drivers ignore a
// field they do not know; the shell prints them.
void AppendGrowthWarnings(BsonBuilder* reply, const std::vector<std::string>& warnings) {
  if (warnings.empty()) return;
  reply->OpenArray("warnings");
  for (size_t i = 0; i < warnings.size() && i <= kMaxWriteWarnings; ++i) {
    if (i == kMaxWriteWarnings) {
      reply->AppendString("", "and " + std::to_string(warnings.size() - i) +
                                  " more growth warning(s) (see the database's log)");
      break;
    }
    reply->AppendString("", warnings[i]);
  }
  reply->Close();
}

// An array of documents field: insert's documents, update's updates ...
Status DocumentArray(const Element& e, std::vector<Document>* out) {
  if (e.type() != BsonType::kArray) return WrongType(e, "type 'array'");
  for (Element d : e.Array()) {
    if (!d.IsDocument()) return WrongType(d, "type 'object'");
    out->push_back(Document::AdoptValidated(std::string(d.Document().bytes())));
  }
  return Status::OK();
}

struct InsertArgs {
  std::string collection;
  std::vector<Document> documents;
  bool has_documents = false;
  bool ordered = true;
  bool bypass_document_validation = false;
  int64_t max_time_ms = 0;
};
constexpr OptionField<InsertArgs> kInsertFields[] = {
    {"insert",
     [](const Element& e, InsertArgs* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->collection, CollectionName("insert", e));
       return Status::OK();
     }},
    {"documents",
     [](const Element& e, InsertArgs* o) {
       o->has_documents = true;
       return DocumentArray(e, &o->documents);
     }},
    {"ordered", &BoolRow<InsertArgs, &InsertArgs::ordered>},
    {"bypassDocumentValidation",
     &BoolRow<InsertArgs, &InsertArgs::bypass_document_validation>},
    {"maxTimeMS", &NonNegativeRow<InsertArgs, &InsertArgs::max_time_ms>},
    ROCKDOC_GENERIC_COMMAND_ROWS(InsertArgs)};

}  // namespace

Status RunInsert(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  InsertArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("insert", cmd, kInsertFields, &args));
  if (!args.has_documents) {
    return MissingField("insert.documents");
  }
  if (args.documents.empty()) {
    return Status(ErrorCode::kInvalidLength,
                  "Write batch sizes must be between 1 and 100000. "
                  "Got 0 operations.");
  }
  InsertManyOptions options;
  options.ordered = args.ordered;
  options.bypass_document_validation = args.bypass_document_validation;
  options.max_time_ms = args.max_time_ms;
  ROCKDOC_ASSIGN_OR_RETURN(
      InsertManyResult result,
      ctx.database().GetCollection(args.collection).InsertMany(args.documents, options));
  ROCKDOC_RETURN_IF_ERROR(CommandLevelError(result.write_errors));
  reply->AppendInt32("n", static_cast<int32_t>(result.inserted_count()));
  AppendWriteErrors(reply, result.write_errors);
  AppendGrowthWarnings(reply, result.warnings);
  return Status::OK();
}

namespace {

struct UpdateStatement {
  Document q, u;
  bool pipeline = false;  // `u` is an array of stages
  UpdateOptions options;
  bool multi = false;
  bool has_q = false, has_u = false;
};
constexpr OptionField<UpdateStatement> kUpdateStatementFields[] = {
    {"q",
     [](const Element& e, UpdateStatement* o) {
       o->has_q = true;
       return DocumentRow<UpdateStatement, &UpdateStatement::q>(e, o);
     }},
    {"u",
     [](const Element& e, UpdateStatement* o) -> Status {
       o->has_u = true;
       if (e.type() == BsonType::kArray) {
         o->pipeline = true;
         o->u = Document::AdoptValidated(std::string(e.Array().bytes()));
         return Status::OK();
       }
       return DocumentRow<UpdateStatement, &UpdateStatement::u>(e, o);
     }},
    {"upsert",
     [](const Element& e, UpdateStatement* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->options.upsert, BoolField(e));
       return Status::OK();
     }},
    {"multi", &BoolRow<UpdateStatement, &UpdateStatement::multi>},
    {"arrayFilters",
     [](const Element& e, UpdateStatement* o) {
       return DocumentArray(e, &o->options.array_filters);
     }},
    {"hint", [](const Element& e, UpdateStatement* o) { return HintRow(e, &o->options); }},
    {"sort",
     [](const Element& e, UpdateStatement* o) {
       return DocumentRow<UpdateOptions, &UpdateOptions::sort>(e, &o->options);
     }},
    {"collation", &CollationRow<UpdateStatement>},
    {"c", nullptr},
};

struct WriteArgs {
  std::string collection;
  std::vector<Document> statements;
  bool has_statements = false;
  bool ordered = true;
  int64_t max_time_ms = 0;
  bool bypass_document_validation = false;  // update's (meaningless to delete)
  Document let;  // variables of every statement's filter (and update pipeline)
};

template <const char* kCommand, const char* kStatements>
constexpr OptionField<WriteArgs> kWriteFields[] = {
    {kCommand,
     [](const Element& e, WriteArgs* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->collection, CollectionName(kCommand, e));
       return Status::OK();
     }},
    {kStatements,
     [](const Element& e, WriteArgs* o) {
       o->has_statements = true;
       return DocumentArray(e, &o->statements);
     }},
    {"ordered", &BoolRow<WriteArgs, &WriteArgs::ordered>},
    {"maxTimeMS", &NonNegativeRow<WriteArgs, &WriteArgs::max_time_ms>},
    {"bypassDocumentValidation", &BoolRow<WriteArgs, &WriteArgs::bypass_document_validation>},
    {"let", &DocumentRow<WriteArgs, &WriteArgs::let>},
    ROCKDOC_GENERIC_COMMAND_ROWS(WriteArgs)};

constexpr char kUpdate[] = "update";
constexpr char kUpdates[] = "updates";
constexpr char kDelete[] = "delete";
constexpr char kDeletes[] = "deletes";

// Decodes the common part of update and delete and checks the statements
// are there.
template <size_t N>
Status DecodeWrite(std::string_view command, std::string_view statements, DocumentView cmd,
                   const OptionField<WriteArgs> (&table)[N], WriteArgs* args) {
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand(command, cmd, table, args));
  if (!args->has_statements) {
    return MissingField(std::string(command) + "." + std::string(statements));
  }
  if (args->statements.empty()) {
    return Status(ErrorCode::kInvalidLength,
                  "Write batch sizes must be between 1 and 100000. Got 0 operations.");
  }
  return Status::OK();
}

// Decodes one statement of an update, and parses its pipeline: what mongod
// refuses when it parses the request (unknown and mistyped fields, a
// missing q or u, a pipeline stage that is not one) fails the whole
// command; what it finds running the statement (an unknown update operator,
// a replacement with multi) is that statement's write error.
Status DecodeUpdateStatement(DocumentView statement, UpdateStatement* st) {
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("update.updates", statement, kUpdateStatementFields, st));
  if (!st->has_q || !st->has_u) {
    return MissingField(std::string("update.updates.") + (st->has_q ? "u" : "q"));
  }
  if (!st->pipeline) return Status::OK();
  // With the command's variables (`let`), which the stages may use.
  std::shared_ptr<FilterVariables> let;
  if (!st->options.let.empty()) {
    ROCKDOC_ASSIGN_OR_RETURN(let, BindLetVariables(st->options.let.view()));
  }
  return UpdateDriver::ParsePipeline(st->u.view(), let.get()).status();
}

// Every statement of an update, decoded before the first runs: a malformed
// one fails the command (ok: 0), as mongod's parse of the request does.
StatusOr<std::vector<UpdateStatement>> DecodeUpdateStatements(const WriteArgs& args) {
  std::vector<UpdateStatement> statements(args.statements.size());
  for (size_t i = 0; i < args.statements.size(); ++i) {
    statements[i].options.max_time_ms = args.max_time_ms;
    statements[i].options.bypass_document_validation = args.bypass_document_validation;
    statements[i].options.let = args.let;
    ROCKDOC_RETURN_IF_ERROR(DecodeUpdateStatement(args.statements[i], &statements[i]));
  }
  return statements;
}

// Whether `u` is a replacement (no field starts with '$').
bool IsReplacement(DocumentView u) {
  for (Element e : u) {
    if (e.key().starts_with("$")) return false;
  }
  return true;
}

}  // namespace

Status RunUpdate(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  WriteArgs args;
  ROCKDOC_RETURN_IF_ERROR(
      DecodeWrite(kUpdate, kUpdates, cmd, kWriteFields<kUpdate, kUpdates>, &args));
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<UpdateStatement> statements, DecodeUpdateStatements(args));
  Collection coll = ctx.database().GetCollection(args.collection);
  int64_t n = 0, modified = 0;
  std::vector<WriteError> errors;
  std::vector<std::string> warnings;
  BsonBuilder upserted;
  bool any_upserted = false;
  for (size_t i = 0; i < statements.size(); ++i) {
    const UpdateStatement& st = statements[i];
    auto run = [&]() -> StatusOr<UpdateResult> {
      // UpdateOne takes operators or a replacement; a replacement has one target.
      if (st.pipeline) {
        const UpdatePipeline pipeline{st.u.view()};
        return st.multi ? coll.UpdateMany(st.q, pipeline, st.options)
                        : coll.UpdateOne(st.q, pipeline, st.options);
      }
      if (st.multi && IsReplacement(st.u)) {
        return Status(ErrorCode::kFailedToParse,
                      "multi update is not supported for replacement-style update");
      }
      return st.multi ? coll.UpdateMany(st.q, st.u, st.options)
                      : coll.UpdateOne(st.q, st.u, st.options);
    };
    StatusOr<UpdateResult> r = run();
    if (!r.ok()) {
      errors.push_back(WriteError{i, r.status()});
      if (args.ordered) break;
      continue;
    }
    n += r->matched_count;
    modified += r->modified_count;
    for (std::string& w : r->warnings) warnings.push_back(std::move(w));
    if (r->upserted_id) {
      ++n;
      if (!any_upserted) upserted.OpenArray("upserted");
      any_upserted = true;
      upserted.OpenDocument("");
      upserted.AppendInt32("index", static_cast<int32_t>(i));
      upserted.AppendElementAs("_id", r->upserted_id->element());
      upserted.Close();
    }
  }
  ROCKDOC_RETURN_IF_ERROR(CommandLevelError(errors));
  reply->AppendInt32("n", static_cast<int32_t>(n));
  reply->AppendInt32("nModified", static_cast<int32_t>(modified));
  if (any_upserted) {
    upserted.Close();
    Document u = std::move(upserted).Build();
    reply->AppendElement(*u.begin());
  }
  AppendWriteErrors(reply, errors);
  AppendGrowthWarnings(reply, warnings);
  return Status::OK();
}

namespace {
struct DeleteStatement {
  Document q;
  int64_t limit = -1;
  DeleteOptions options;
  bool has_q = false;
};
constexpr OptionField<DeleteStatement> kDeleteStatementFields[] = {
    {"q",
     [](const Element& e, DeleteStatement* o) {
       o->has_q = true;
       return DocumentRow<DeleteStatement, &DeleteStatement::q>(e, o);
     }},
    {"limit",
     [](const Element& e, DeleteStatement* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->limit, IntegerField(e));
       if (o->limit != 0 && o->limit != 1) {
         return Status(
             ErrorCode::kFailedToParse,
             "The limit field in delete objects must be 0 or 1. Got " + std::to_string(o->limit));
       }
       return Status::OK();
     }},
    {"hint", [](const Element& e, DeleteStatement* o) { return HintRow(e, &o->options); }},
    {"collation", &CollationRow<DeleteStatement>},
};

Status DecodeDeleteStatement(DocumentView statement, DeleteStatement* st) {
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("delete.deletes", statement, kDeleteStatementFields, st));
  if (!st->has_q || st->limit < 0) {
    return MissingField(std::string("delete.deletes.") + (st->has_q ? "limit" : "q"));
  }
  return Status::OK();
}

// As update's: every statement decoded before the first runs.
StatusOr<std::vector<DeleteStatement>> DecodeDeleteStatements(const WriteArgs& args) {
  std::vector<DeleteStatement> statements(args.statements.size());
  for (size_t i = 0; i < args.statements.size(); ++i) {
    statements[i].options.max_time_ms = args.max_time_ms;
    statements[i].options.let = args.let;
    ROCKDOC_RETURN_IF_ERROR(DecodeDeleteStatement(args.statements[i], &statements[i]));
  }
  return statements;
}
}  // namespace

Status CheckWriteStatements(std::string_view command, DocumentView cmd) {
  WriteArgs args;
  if (command == kUpdate) {
    ROCKDOC_RETURN_IF_ERROR(
        DecodeWrite(kUpdate, kUpdates, cmd, kWriteFields<kUpdate, kUpdates>, &args));
    return DecodeUpdateStatements(args).status();
  }
  if (command == kDelete) {
    ROCKDOC_RETURN_IF_ERROR(
        DecodeWrite(kDelete, kDeletes, cmd, kWriteFields<kDelete, kDeletes>, &args));
    return DecodeDeleteStatements(args).status();
  }
  return Status::OK();
}

Status RunDelete(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  WriteArgs args;
  ROCKDOC_RETURN_IF_ERROR(
      DecodeWrite(kDelete, kDeletes, cmd, kWriteFields<kDelete, kDeletes>, &args));
  ROCKDOC_ASSIGN_OR_RETURN(std::vector<DeleteStatement> statements, DecodeDeleteStatements(args));
  Collection coll = ctx.database().GetCollection(args.collection);
  int64_t n = 0;
  std::vector<WriteError> errors;
  for (size_t i = 0; i < statements.size(); ++i) {
    const DeleteStatement& st = statements[i];
    StatusOr<DeleteResult> r =
        st.limit == 1 ? coll.DeleteOne(st.q, st.options) : coll.DeleteMany(st.q, st.options);
    if (!r.ok()) {
      errors.push_back(WriteError{i, r.status()});
      if (args.ordered) break;
      continue;
    }
    n += r->deleted_count;
  }
  ROCKDOC_RETURN_IF_ERROR(CommandLevelError(errors));
  reply->AppendInt32("n", static_cast<int32_t>(n));
  AppendWriteErrors(reply, errors);
  return Status::OK();
}

// ---- findAndModify ----

namespace {
struct FindAndModifyArgs {
  std::string collection;
  Document query;
  Document update;
  bool pipeline = false;  // `update` is an array of stages
  bool has_update = false;
  bool remove = false;
  bool return_new = false;
  FindOneAndModifyOptions options;
};
constexpr OptionField<FindAndModifyArgs> kFindAndModifyFields[] = {
    {"findAndModify",
     [](const Element& e, FindAndModifyArgs* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->collection, CollectionName("findAndModify", e));
       return Status::OK();
     }},
    {"findandmodify",
     [](const Element& e, FindAndModifyArgs* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->collection, CollectionName("findAndModify", e));
       return Status::OK();
     }},
    {"query", &DocumentRow<FindAndModifyArgs, &FindAndModifyArgs::query>},
    {"update",
     [](const Element& e, FindAndModifyArgs* o) -> Status {
       o->has_update = true;
       if (e.type() == BsonType::kArray) {
         o->pipeline = true;
         o->update = Document::AdoptValidated(std::string(e.Array().bytes()));
         return Status::OK();
       }
       return DocumentRow<FindAndModifyArgs, &FindAndModifyArgs::update>(e, o);
     }},
    {"remove", &BoolRow<FindAndModifyArgs, &FindAndModifyArgs::remove>},
    {"new", &BoolRow<FindAndModifyArgs, &FindAndModifyArgs::return_new>},
    {"sort",
     [](const Element& e, FindAndModifyArgs* o) {
       return DocumentRow<FindOneAndModifyOptions, &FindOneAndModifyOptions::sort>(e, &o->options);
     }},
    {"fields",
     [](const Element& e, FindAndModifyArgs* o) {
       return DocumentRow<FindOneAndModifyOptions, &FindOneAndModifyOptions::projection>(
           e, &o->options);
     }},
    {"upsert",
     [](const Element& e, FindAndModifyArgs* o) {
       return BoolRow<FindOneAndModifyOptions, &FindOneAndModifyOptions::upsert>(e, &o->options);
     }},
    {"arrayFilters",
     [](const Element& e, FindAndModifyArgs* o) {
       return DocumentArray(e, &o->options.array_filters);
     }},
    {"maxTimeMS",
     [](const Element& e, FindAndModifyArgs* o) {
       return NonNegativeRow<FindOneAndModifyOptions, &FindOneAndModifyOptions::max_time_ms>(
           e, &o->options);
     }},
    {"bypassDocumentValidation",
     [](const Element& e, FindAndModifyArgs* o) {
       return BoolRow<FindOneAndModifyOptions,
                      &FindOneAndModifyOptions::bypass_document_validation>(e, &o->options);
     }},
    {"hint", [](const Element& e, FindAndModifyArgs* o) { return HintRow(e, &o->options); }},
    {"collation", &CollationRow<FindAndModifyArgs>},
    {"let",
     [](const Element& e, FindAndModifyArgs* o) {
       return DocumentRow<FindOneAndModifyOptions, &FindOneAndModifyOptions::let>(e, &o->options);
     }},
    ROCKDOC_GENERIC_COMMAND_ROWS(FindAndModifyArgs)};

Status DecodeFindAndModify(DocumentView cmd, FindAndModifyArgs* args) {
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("findAndModify", cmd, kFindAndModifyFields, args));
  auto fail = [](std::string message) {
    return Status(ErrorCode::kFailedToParse, std::move(message));
  };
  if (args->remove) {
    if (args->has_update) return fail("Cannot specify both an update and remove=true");
    if (args->options.upsert) return fail("Cannot specify both upsert=true and remove=true ");
    if (args->return_new) {
      return fail(
          "Cannot specify both new=true and remove=true; 'remove' always returns the deleted "
          "document");
    }
  } else if (!args->has_update) {
    return fail("Either an update or remove=true must be specified");
  }
  args->options.return_document =
      args->return_new ? ReturnDocument::kAfter : ReturnDocument::kBefore;
  return Status::OK();
}
}  // namespace

Status RunFindAndModify(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  FindAndModifyArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeFindAndModify(cmd, &args));
  Collection coll = ctx.database().GetCollection(args.collection);
  std::optional<Document> value;
  std::vector<std::string> warnings;
  reply->OpenDocument("lastErrorObject");
  if (args.remove) {
    ROCKDOC_ASSIGN_OR_RETURN(value, coll.FindOneAndDelete(args.query, args.options));
    reply->AppendInt32("n", value ? 1 : 0);
  } else {
    UpdateResult result;
    ROCKDOC_ASSIGN_OR_RETURN(
        value, args.pipeline
                   ? coll.FindOneAndUpdate(args.query, UpdatePipeline{args.update.view()}, args.options, &result)
                   : coll.FindOneAndUpdate(args.query, args.update, args.options, &result));
    reply->AppendInt32("n", result.matched_count > 0 || result.upserted_id ? 1 : 0);
    reply->AppendBool("updatedExisting", result.matched_count > 0);
    if (result.upserted_id) reply->AppendElementAs("upserted", result.upserted_id->element());
    warnings = std::move(result.warnings);
  }
  reply->Close();
  if (value) {
    reply->AppendDocument("value", *value);
  } else {
    reply->AppendNull("value");
  }
  AppendGrowthWarnings(reply, warnings);
  return Status::OK();
}

// ---- count, distinct ----

namespace {
struct CountArgs {
  std::string collection;
  Document query;
  CountOptions options;
};
constexpr OptionField<CountArgs> kCountFields[] = {
    {"count",
     [](const Element& e, CountArgs* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->collection, CollectionName("count", e));
       return Status::OK();
     }},
    {"query", &DocumentRow<CountArgs, &CountArgs::query>},
    // A negative limit counts as its absolute value, as MongoDB's count.
    {"limit",
     [](const Element& e, CountArgs* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(int64_t v, IntegerField(e));
       o->options.limit = v < 0 ? -v : v;
       return Status::OK();
     }},
    {"skip",
     [](const Element& e, CountArgs* o) {
       return NonNegativeRow<CountOptions, &CountOptions::skip>(e, &o->options);
     }},
    {"hint", [](const Element& e, CountArgs* o) { return HintRow(e, &o->options); }},
    {"maxTimeMS",
     [](const Element& e, CountArgs* o) {
       return NonNegativeRow<CountOptions, &CountOptions::max_time_ms>(e, &o->options);
     }},
    {"fields", &Accept<CountArgs>},  // ignored by MongoDB's count too (legacy)
    {"collation", &CollationRow<CountArgs>},
    {"comment", &CommentRow<CountArgs>},
    ROCKDOC_GENERIC_COMMAND_ROWS(CountArgs)};
}  // namespace

Status RunCount(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  CountArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("count", cmd, kCountFields, &args));
  ROCKDOC_ASSIGN_OR_RETURN(
      int64_t n,
      ctx.database().GetCollection(args.collection).CountDocuments(args.query, args.options));
  AppendNumber(reply, "n", n);
  return Status::OK();
}

namespace {
struct DistinctArgs {
  std::string collection;
  std::string key;
  bool has_key = false;
  Document query;
  DistinctOptions options;
};
constexpr OptionField<DistinctArgs> kDistinctFields[] = {
    {"distinct",
     [](const Element& e, DistinctArgs* o) -> Status {
       ROCKDOC_ASSIGN_OR_RETURN(o->collection, CollectionName("distinct", e));
       return Status::OK();
     }},
    {"key",
     [](const Element& e, DistinctArgs* o) {
       o->has_key = true;
       return StringRow<DistinctArgs, &DistinctArgs::key>(e, o);
     }},
    {"query",
     [](const Element& e, DistinctArgs* o) -> Status {
       if (e.IsNull()) return Status::OK();
       return DocumentRow<DistinctArgs, &DistinctArgs::query>(e, o);
     }},
    {"maxTimeMS",
     [](const Element& e, DistinctArgs* o) {
       return NonNegativeRow<DistinctOptions, &DistinctOptions::max_time_ms>(e, &o->options);
     }},
    {"hint", nullptr},
    {"collation", &CollationRow<DistinctArgs>},
    {"comment", &CommentRow<DistinctArgs>},
    ROCKDOC_GENERIC_COMMAND_ROWS(DistinctArgs)};
}  // namespace

Status RunDistinct(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  DistinctArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("distinct", cmd, kDistinctFields, &args));
  if (!args.has_key) {
    return MissingField("distinct.key");
  }
  ROCKDOC_ASSIGN_OR_RETURN(
      std::vector<Value> values,
      ctx.database().GetCollection(args.collection).Distinct(args.key, args.query, args.options));
  // The values are one array of the reply: at most 16 MiB of them, as
  // MongoDB's (17217), rather than a reply no client could take.
  const size_t start = reply->size();
  reply->OpenArray("values");
  for (const Value& v : values) {
    reply->AppendElementAs("", v.element());
    if (reply->size() - start > static_cast<size_t>(kMaxBsonObjectSize)) {
      return Status(static_cast<ErrorCode>(17217), "distinct too big, 16mb cap");
    }
  }
  reply->Close();
  return Status::OK();
}

// ---- aggregate ----

namespace {
struct AggregateArgs {
  std::string collection;
  bool collectionless = false;  // {aggregate: 1}
  Document pipeline;
  bool has_pipeline = false;
  bool has_cursor = false;
  bool explain = false;
  CursorOption cursor;
  AggregateOptions options;
};
constexpr OptionField<AggregateArgs> kAggregateFields[] = {
    {"aggregate",
     [](const Element& e, AggregateArgs* o) -> Status {
       if (e.IsNumber() && e.NumberAsDouble() == 1) {
         o->collectionless = true;
         return Status::OK();
       }
       ROCKDOC_ASSIGN_OR_RETURN(o->collection, CollectionName("aggregate", e));
       return Status::OK();
     }},
    {"pipeline",
     [](const Element& e, AggregateArgs* o) -> Status {
       if (e.type() != BsonType::kArray) return WrongType(e, "type 'array'");
       o->pipeline = Document::AdoptValidated(std::string(e.Array().bytes()));
       o->has_pipeline = true;
       return Status::OK();
     }},
    {"cursor",
     [](const Element& e, AggregateArgs* o) {
       o->has_cursor = true;
       return DecodeCursorOption(e, &o->cursor);
     }},
    {"maxTimeMS",
     [](const Element& e, AggregateArgs* o) {
       return NonNegativeRow<AggregateOptions, &AggregateOptions::max_time_ms>(e, &o->options);
     }},
    {"hint", [](const Element& e, AggregateArgs* o) { return HintRow(e, &o->options); }},
    // $sort and $group spill past their memory limit (pipeline/pipeline.h).
    {"allowDiskUse",
     [](const Element& e, AggregateArgs* o) {
       ROCKDOC_ASSIGN_OR_RETURN(o->options.allow_disk_use, BoolField(e));
       return Status::OK();
     }},
    // $out and $merge write through the collection API, which applies validators: refused.
    {"bypassDocumentValidation", nullptr},
    {"explain", &BoolRow<AggregateArgs, &AggregateArgs::explain>},
    {"let",
     [](const Element& e, AggregateArgs* o) {
       return DocumentRow<AggregateOptions, &AggregateOptions::let>(e, &o->options);
     }},
    {"collation", &CollationRow<AggregateArgs>},
    {"comment", &CommentRow<AggregateArgs>},
    ROCKDOC_GENERIC_COMMAND_ROWS(AggregateArgs)};
}  // namespace

namespace {

// An aggregate that is not an explain needs its `cursor` field.
Status CursorRequired(const AggregateArgs& args) {
  if (args.has_cursor) return Status::OK();
  return Status(ErrorCode::kFailedToParse,
                "The 'cursor' option is required, except for aggregate with the explain "
                "argument");
}

// Whether the pipeline opens with $changeStream (true), has none (false),
// or has one elsewhere (40602).
StatusOr<bool> IsChangeStream(DocumentView pipeline) {
  bool first = true, opens = false;
  for (const Element& stage : pipeline) {
    const bool is = stage.IsDocument() && stage.Document().Has("$changeStream");
    if (is && !first) {
      return Status(static_cast<ErrorCode>(40602),
                    "$changeStream is only valid as the first stage in a pipeline.");
    }
    opens = opens || (is && first);
    first = false;
  }
  return opens;
}

// aggregate with $changeStream first: a change stream of the collection,
// of the database ({aggregate: 1}) or, in admin with allChangesForCluster,
// of every database, kept as an awaitData cursor.
Status RunChangeStream(CommandContext& ctx, const AggregateArgs& args, BsonBuilder* reply) {
  // What a change stream does not apply: refused, never ignored.
  // (allowDiskUse is applied: none of its stages spills, as in MongoDB;
  // comment is a note for the logs, accepted as on every command.)
  const AggregateOptions& o = args.options;
  for (const auto& [given, field] :
       {std::pair{args.explain, "explain"}, std::pair{o.max_time_ms > 0, "maxTimeMS"},
        std::pair{!o.hint.empty() || !o.hint_name.empty(), "hint"},
        std::pair{!o.let.empty(), "let"}}) {
    if (given) {
      return Status(ErrorCode::kNotImplemented, std::string(field) +
                                                    " on a $changeStream aggregate is not "
                                                    "supported by rockdoc yet");
    }
  }
  // Every scope's, the whole cluster's included (Client::Watch has no
  // session to check).
  if (ctx.session != nullptr && ctx.session->InTransaction()) {
    return Status(ErrorCode::kOperationNotSupportedInTransaction,
                  "Cannot run 'aggregate' with $changeStream in a multi-document transaction.");
  }
  ROCKDOC_RETURN_IF_ERROR(CursorRequired(args));
  const Element stage = (*args.pipeline.view().begin()).Document().Get("$changeStream");
  if (!stage.IsDocument()) {
    return Status(static_cast<ErrorCode>(50808),
                  "$changeStream stage expects a document as argument");
  }
  ROCKDOC_ASSIGN_OR_RETURN(ChangeStreamSpec cs, ParseChangeStreamSpec(stage.Document()));
  // The stages after it.
  BsonBuilder rest;
  rest.OpenArray("p");
  bool first = true;
  for (const Element& e : args.pipeline.view()) {
    if (!first) rest.AppendElement(e);
    first = false;
  }
  rest.Close();
  Document stages = std::move(rest).Build();
  const DocumentView pipeline = stages.Get("p").Array();
  const bool admin = ctx.db == "admin";
  if (cs.all_changes_for_cluster && (!admin || !args.collectionless)) {
    return Status(ErrorCode::kInvalidOptions,
                  "A $changeStream with 'allChangesForCluster:true' may only be opened on the "
                  "'admin' database, and with no collection name");
  }
  if (admin && !cs.all_changes_for_cluster) {
    return Status(ErrorCode::kInvalidNamespace,
                  "$changeStream may not be opened on the internal admin database");
  }
  StatusOr<ChangeStream> stream =
      cs.all_changes_for_cluster ? ctx.client->Watch(pipeline, cs.options)
      : args.collectionless
          ? ctx.database().Watch(pipeline, cs.options)
          : ctx.database().GetCollection(args.collection).Watch(pipeline, cs.options);
  ROCKDOC_RETURN_IF_ERROR(stream.status());
  CommandCursor c(ctx.db, args.collectionless ? "$cmd.aggregate" : args.collection,
                  std::move(*stream));
  c.await_stop = std::make_shared<AwaitStop>();
  c.await_stop->log = ClientAccess::EngineOf(*ctx.client)->change_log();
  return CursorReply(ctx, std::move(c), args.cursor.batch_size, false, reply);
}

}  // namespace

Status RunAggregate(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  AggregateArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("aggregate", cmd, kAggregateFields, &args));
  if (!args.has_pipeline) {
    return MissingField("aggregate.pipeline");
  }
  ROCKDOC_ASSIGN_OR_RETURN(bool change_stream, IsChangeStream(args.pipeline.view()));
  if (change_stream) return RunChangeStream(ctx, args, reply);
  if (args.collectionless) {
    if (args.explain) {
      return Status(ErrorCode::kNotImplemented,
                    "explain of an aggregate without a collection is not supported by rockdoc yet");
    }
    ROCKDOC_RETURN_IF_ERROR(CursorRequired(args));
    ROCKDOC_ASSIGN_OR_RETURN(Cursor cursor, ctx.database().Aggregate(args.pipeline.view(), args.options));
    return CursorReply(ctx, CommandCursor(ctx.db, "$cmd.aggregate", std::move(cursor)),
                       args.cursor.batch_size, false, reply);
  }
  Collection coll = ctx.database().GetCollection(args.collection);
  if (args.explain) {
    // {aggregate, pipeline, explain: true}: the queryPlanner explain.
    ROCKDOC_ASSIGN_OR_RETURN(
        Document explained,
        coll.ExplainAggregate(args.pipeline.view(), args.options, ExplainVerbosity::kQueryPlanner));
    for (Element e : explained) reply->AppendElement(e);
    return Status::OK();
  }
  ROCKDOC_RETURN_IF_ERROR(CursorRequired(args));
  ROCKDOC_ASSIGN_OR_RETURN(Cursor cursor, coll.Aggregate(args.pipeline.view(), args.options));
  return CursorReply(ctx, CommandCursor(ctx.db, args.collection, std::move(cursor)),
                     args.cursor.batch_size, false, reply);
}

// ---- explain ----

namespace {
struct ExplainArgs {
  Document inner;
  ExplainVerbosity verbosity = ExplainVerbosity::kAllPlansExecution;  // MongoDB's default
};
constexpr OptionField<ExplainArgs> kExplainFields[] = {
    {"explain",
     [](const Element& e, ExplainArgs* o) -> Status {
       if (!e.IsDocument()) return WrongType(e, "type 'object'");
       o->inner = Document::AdoptValidated(std::string(e.Document().bytes()));
       return Status::OK();
     }},
    {"verbosity",
     [](const Element& e, ExplainArgs* o) -> Status {
       if (!e.IsString()) return WrongType(e, "type 'string'");
       if (e.String() == "queryPlanner") {
         o->verbosity = ExplainVerbosity::kQueryPlanner;
       } else if (e.String() == "executionStats") {
         o->verbosity = ExplainVerbosity::kExecutionStats;
       } else if (e.String() == "allPlansExecution") {
         o->verbosity = ExplainVerbosity::kAllPlansExecution;
       } else {
         return Status(ErrorCode::kBadValue,
                       "Enumeration value '" + std::string(e.String()) +
                           "' for field 'explain.verbosity' is not a valid value.");
       }
       return Status::OK();
     }},
    ROCKDOC_GENERIC_COMMAND_ROWS(ExplainArgs)};

// The one statement of an explained update or delete.
StatusOr<Document> OnlyStatement(std::string_view command, const WriteArgs& args) {
  if (args.statements.size() != 1) {
    return Status(ErrorCode::kInvalidLength,
                  std::string("explained ") + std::string(command) + " batches must be of size 1");
  }
  return args.statements[0];
}

StatusOr<Document> ExplainInner(CommandContext& ctx, DocumentView inner,
                                ExplainVerbosity verbosity) {
  if (inner.empty())
    return Status(ErrorCode::kFailedToParse, "explain command requires a nested object");
  const std::string_view name = (*inner.begin()).key();
  Element db = inner.Get("$db");
  if (db.ok() && (!db.IsString() || db.String() != ctx.db)) {
    return Status(ErrorCode::kInvalidNamespace,
                  "Mismatched $db in explain command. Expected " + ctx.db);
  }
  if (name == "find") {
    FindArgs args;
    ROCKDOC_RETURN_IF_ERROR(DecodeCommand("find", inner, kFindFields, &args));
    return ctx.database()
        .GetCollection(args.collection)
        .ExplainFind(args.filter, args.options, verbosity);
  }
  if (name == "count") {
    CountArgs args;
    ROCKDOC_RETURN_IF_ERROR(DecodeCommand("count", inner, kCountFields, &args));
    return ctx.database()
        .GetCollection(args.collection)
        .ExplainCount(args.query, args.options, verbosity);
  }
  if (name == "update") {
    WriteArgs args;
    ROCKDOC_RETURN_IF_ERROR(
        DecodeWrite(kUpdate, kUpdates, inner, kWriteFields<kUpdate, kUpdates>, &args));
    ROCKDOC_ASSIGN_OR_RETURN(Document statement, OnlyStatement("update", args));
    UpdateStatement st;
    st.options.let = args.let;
    ROCKDOC_RETURN_IF_ERROR(DecodeUpdateStatement(statement, &st));
    Collection coll = ctx.database().GetCollection(args.collection);
    if (st.pipeline) return coll.ExplainUpdate(st.q, UpdatePipeline{st.u.view()}, st.multi, st.options, verbosity);
    return coll.ExplainUpdate(st.q, st.u, st.multi, st.options, verbosity);
  }
  if (name == "delete") {
    WriteArgs args;
    ROCKDOC_RETURN_IF_ERROR(
        DecodeWrite(kDelete, kDeletes, inner, kWriteFields<kDelete, kDeletes>, &args));
    ROCKDOC_ASSIGN_OR_RETURN(Document statement, OnlyStatement("delete", args));
    DeleteStatement st;
    st.options.let = args.let;
    ROCKDOC_RETURN_IF_ERROR(DecodeDeleteStatement(statement, &st));
    return ctx.database()
        .GetCollection(args.collection)
        .ExplainDelete(st.q, st.limit != 1, st.options, verbosity);
  }
  if (name == "findAndModify" || name == "findandmodify") {
    FindAndModifyArgs args;
    ROCKDOC_RETURN_IF_ERROR(DecodeFindAndModify(inner, &args));
    Collection coll = ctx.database().GetCollection(args.collection);
    if (args.remove) {
      DeleteOptions del;
      del.hint = args.options.hint;
      del.hint_name = args.options.hint_name;
      del.let = args.options.let;
      return coll.ExplainDelete(args.query, false, del, verbosity);
    }
    UpdateOptions options;
    options.upsert = args.options.upsert;
    options.sort = args.options.sort;
    options.array_filters = args.options.array_filters;
    options.hint = args.options.hint;
    options.hint_name = args.options.hint_name;
    options.let = args.options.let;
    options.max_time_ms = args.options.max_time_ms;
    if (args.pipeline) {
      return coll.ExplainUpdate(args.query, UpdatePipeline{args.update.view()}, false, options, verbosity);
    }
    return coll.ExplainUpdate(args.query, args.update, false, options, verbosity);
  }
  if (name == "distinct") {
    DistinctArgs args;
    ROCKDOC_RETURN_IF_ERROR(DecodeCommand("distinct", inner, kDistinctFields, &args));
    if (!args.has_key) {
      return MissingField("distinct.key");
    }
    return ctx.database()
        .GetCollection(args.collection)
        .ExplainDistinct(args.key, args.query, args.options, verbosity);
  }
  if (name == "aggregate") {
    AggregateArgs args;
    ROCKDOC_RETURN_IF_ERROR(DecodeCommand("aggregate", inner, kAggregateFields, &args));
    if (!args.has_pipeline) return MissingField("aggregate.pipeline");
    if (args.collectionless) {
      return Status(ErrorCode::kNotImplemented,
                    "explain of an aggregate without a collection is not supported by rockdoc yet");
    }
    return ctx.database()
        .GetCollection(args.collection)
        .ExplainAggregate(args.pipeline.view(), args.options, verbosity);
  }
  return Status(ErrorCode::kCommandNotFound,
                "Explain failed due to unknown command: " + std::string(name));
}
}  // namespace

Status RunExplain(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply) {
  ExplainArgs args;
  ROCKDOC_RETURN_IF_ERROR(DecodeCommand("explain", cmd, kExplainFields, &args));
  ROCKDOC_ASSIGN_OR_RETURN(Document explained, ExplainInner(ctx, args.inner, args.verbosity));
  for (Element e : explained) {
    if (e.key() != "ok") reply->AppendElement(e);
  }
  return Status::OK();
}

}  // namespace rockdoc::internal
