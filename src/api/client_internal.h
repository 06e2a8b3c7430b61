// api/client_internal.h: what the library's own code (and its tests) may do
// with a Client that the public API does not offer.
#ifndef ROCKDOC_API_CLIENT_INTERNAL_H_
#define ROCKDOC_API_CLIENT_INTERNAL_H_

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
  // The command layer's state of a client (src/command/), made once on
  // the first command through `once`.
  static std::once_flag& CommandsOnce(const Client& client) { return client.commands_once_; }
  static std::shared_ptr<CommandState>& Commands(const Client& client) {
    return client.commands_;
  }
  // What a Cursor delegates to (null for a default one): the command
  // layer's awaitData getMore asks a tailable cursor what to wait on.
  static CursorImpl* ImplOf(const Cursor& cursor) { return cursor.impl_.get(); }
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
