// command/handlers.h: every command's handler (command/command.h), listed
// by name in run_command.cc's table.
#ifndef ROCKDOC_COMMAND_HANDLERS_H_
#define ROCKDOC_COMMAND_HANDLERS_H_

#include <memory>
#include <optional>
#include <string>

#include "command/command.h"
#include "common/deadline.h"
#include "stats/server_activity.h"

namespace rockdoc::internal {

// The MongoDB release whose commands rockdoc answers as (buildInfo's
// version, hello's maxWireVersion), so drivers enable what it has.
inline constexpr char kCompatibleMongoVersion[] = "7.0.0";
inline constexpr int kCompatibleMongoVersionArray[] = {7, 0, 0, 0};
inline constexpr int kMaxWireVersion = 21;  // MongoDB 7.0

// server_commands.cc
Status RunPing(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunHello(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunIsMaster(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunBuildInfo(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunListCollections(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunListIndexes(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunCreate(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunDrop(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunDropDatabase(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunCreateIndexes(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunDropIndexes(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
// command/search_index_commands.cc
Status RunCreateSearchIndexes(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunDropSearchIndex(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunUpdateSearchIndex(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunCollMod(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunRenameCollection(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunValidate(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);

// stats_commands.cc
Status RunCollStats(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunDbStats(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunProfile(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunClearQueryStats(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunListDatabases(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunServerStatus(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunHostInfo(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunGetParameter(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);

Status RunSetParameter(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);

// admin_commands.cc
Status RunCurrentOp(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunKillOp(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunTop(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunGetLog(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunConnectionStatus(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);

// One command the dispatcher runs, for its whole run: counted in
// opcounters, listed by currentOp (its opid; killOp sets the interrupt flag
// this puts in scope on the running thread, common/deadline.h), timed into
// top's figures for its namespace, and logged as mongod's "Slow query"
// when it takes 100 ms or more.
class RecordedCommand {
 public:
  RecordedCommand(const Client& client, CommandConnection* connection, std::string_view db,
                  std::string_view name, DocumentView cmd);
  ~RecordedCommand();
  RecordedCommand(const RecordedCommand&) = delete;
  RecordedCommand& operator=(const RecordedCommand&) = delete;
  Operation* operation() const { return operation_.get(); }

 private:
  ServerActivity& activity_;
  std::string name_;
  std::shared_ptr<Operation> operation_;
  std::optional<InterruptScope> interrupt_;
  std::optional<OperationScope> scope_;
  TopColumn column_ = TopColumn::kCommands;
  bool write_ = false;
  std::string top_ns_;  // "" when the command names no collection
};

// session_commands.cc
Status RunCommitTransaction(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunAbortTransaction(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunEndSessions(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);

// crud_commands.cc
Status RunFind(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunGetMore(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunKillCursors(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunInsert(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunUpdate(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunDelete(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
// Decodes an update or delete command and every statement without running
// any (what RunUpdate and RunDelete do first): the retryable write path,
// which runs the statements one by one, checks them all before the first.
Status CheckWriteStatements(std::string_view command, DocumentView cmd);
Status RunCount(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunDistinct(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunAggregate(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunFindAndModify(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);
Status RunExplain(CommandContext& ctx, DocumentView cmd, BsonBuilder* reply);

// Shared by the commands that answer with a cursor: appends
// {cursor: {firstBatch: [...], id, ns}} with up to `batch_size` documents
// (negative: no count limit) under the 16 MiB rule, and keeps the cursor open
// (registered with ctx.cursors) when documents remain and `single_batch`
// is false.
Status CursorReply(CommandContext& ctx, struct CommandCursor c, int64_t batch_size,
                   bool single_batch, BsonBuilder* reply);

// A command's `cursor: {batchSize}` option (listCollections, listIndexes,
// aggregate): batchSize a non-negative integer (51024 otherwise), any other
// field 40415.
struct CursorOption {
  int64_t batch_size = 101;  // MongoDB's default first batch
};
Status DecodeCursorOption(const Element& e, CursorOption* out);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_COMMAND_HANDLERS_H_
