// api/client_internal.h: what the library's own code (and its tests) may do
// with a Client that the public API does not offer.
#ifndef ROCKDOC_API_CLIENT_INTERNAL_H_
#define ROCKDOC_API_CLIENT_INTERNAL_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "exec/plan_executor.h"
#include "pipeline/pipeline.h"
#include "rockdoc/client.h"
#include "rockdoc/status.h"
#include "storage/engine.h"

namespace rocksdb {
class FileSystem;
}  // namespace rocksdb

namespace rockdoc::internal {

class SessionState;

struct ClientAccess {
  // Client::Open with RocksDB's files read and written through
  // `file_system` (nullptr: the real file system). The fault-injection
  // tests open databases through a file system that fails on command.
  static StatusOr<std::unique_ptr<Client>> Open(const std::string& path,
                                                const ClientOptions& options,
                                                std::shared_ptr<rocksdb::FileSystem> file_system);
  // A Database handle on an engine, for the library's own tasks (the TTL
  // monitor) that run without a Client object.
  static Database DatabaseOf(std::shared_ptr<Engine> engine, std::string name,
                             std::shared_ptr<SessionState> session = nullptr);
  // The engine under a Database handle (benchmarks read RocksDB's state
  // through it, white-box tests their storage).
  static std::shared_ptr<Engine> EngineOf(const Database& database) {
    return database.engine_;
  }
  static const std::shared_ptr<Engine>& EngineOf(const Client& client) { return client.engine_; }
  static ClientRep& RepOf(const Client& client) { return *client.rep_; }
  // What a Cursor delegates to (null for a default one): the command
  // layer's awaitData getMore asks a tailable cursor what to wait on.
  static CursorImpl* ImplOf(const Cursor& cursor) { return cursor.impl_.get(); }
  static ChangeStreamImpl* ImplOf(const ChangeStream& stream) { return stream.impl_.get(); }
};

// An awaitData getMore of a change stream (command/): waits up to `ms` for
// a commit after the stream's position, or until *stop is set and the
// change log's WakeAll called (killCursors, the server's shutdown).
void WaitForChange(ChangeStreamImpl* stream, int64_t ms, const std::atomic<bool>* stop);
// Wakes the waiters of WaitForChange (one whose stop flag was set returns).
void WakeChangeStream(ChangeStreamImpl* stream);

// The state a layer above the API keeps for each client (the command
// layer's cursors and sessions: command/run_command.cc's CommandState),
// which the client owns without knowing its type.
class ClientExtension {
 public:
  virtual ~ClientExtension() = default;
};

// What a Client holds besides its engine, out of the public header. It is
// destroyed with the client, after Client::Close has stopped the engine's
// background runner (which reaps idle cursors and sessions).
struct ClientRep {
  // The command layer's state, made once, on the client's first command.
  std::once_flag commands_once;
  std::unique_ptr<ClientExtension> commands;
};

// $out's and $merge's targets (pipeline/pipeline.h's OpenTargetFn) in the
// engine's databases. `session`: the aggregate's (they refuse to run in its
// transaction, as MongoDB's: OperationNotSupportedInTransaction 263).
OpenTargetFn MakeOpenTarget(std::shared_ptr<Engine> engine, std::shared_ptr<SessionState> session);

// Registers the TTL monitor on the engine's background runner (every
// ClientOptions::ttl_monitor_period_ms; not at all when 0).
void StartTtlMonitor(const std::shared_ptr<Engine>& engine);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_API_CLIENT_INTERNAL_H_
