// White-box tests' storage engine: the layers below api/ driven without a
// Client.
#ifndef ROCKDOC_TESTS_ENGINE_TEST_UTIL_H_
#define ROCKDOC_TESTS_ENGINE_TEST_UTIL_H_

#include <memory>
#include <string>

#include "catalog/catalog.h"
#include "rockdoc/options.h"
#include "rockdoc/status.h"
#include "stats/telemetry.h"
#include "storage/engine.h"

namespace rockdoc::test {

// The engine of the directory `path` with the catalog and the statistics
// attached, as Client::Open attaches them: what catalog/, store/ and the
// index tests read and write through.
inline StatusOr<std::shared_ptr<internal::Engine>> OpenEngineWithCatalog(
    const std::string& path, const ClientOptions& options = ClientOptions{}) {
  ROCKDOC_ASSIGN_OR_RETURN(std::shared_ptr<internal::Engine> engine,
                           internal::Engine::Open(path, options));
  ROCKDOC_RETURN_IF_ERROR(internal::Catalog::AttachTo(engine.get()));
  ROCKDOC_RETURN_IF_ERROR(internal::Telemetry::AttachTo(engine.get()));
  return engine;
}

}  // namespace rockdoc::test

#endif  // ROCKDOC_TESTS_ENGINE_TEST_UTIL_H_
