// api/client_internal.h: what the library's own code (and its tests) may do
// with a Client that the public API does not offer.
#ifndef ROCKDOC_API_CLIENT_INTERNAL_H_
#define ROCKDOC_API_CLIENT_INTERNAL_H_

#include <memory>
#include <string>

#include "rockdoc/client.h"
#include "rockdoc/status.h"

namespace rocksdb {
class FileSystem;
}  // namespace rocksdb

namespace rockdoc::internal {

struct ClientAccess {
  // Client::Open with RocksDB's files read and written through
  // `file_system` (nullptr: the real file system). The fault-injection
  // tests open databases through a file system that fails on command.
  static StatusOr<std::unique_ptr<Client>> Open(const std::string& path,
                                                const ClientOptions& options,
                                                std::shared_ptr<rocksdb::FileSystem> file_system);
};

}  // namespace rockdoc::internal

#endif  // ROCKDOC_API_CLIENT_INTERNAL_H_
