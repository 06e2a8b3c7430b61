// The TTL monitor: deletes the documents of TTL indexes that have expired,
// every ClientOptions::ttl_monitor_period_ms, as MongoDB's TTLMonitor does.
// A document expires when the indexed field is a date (or an array holding
// one: the earliest counts, i.e. any) older than now - expireAfterSeconds;
// any other value never expires. A partial TTL index deletes only the
// documents it indexes.
#include <chrono>

#include "api/client_internal.h"
#include "catalog/catalog.h"
#include "rockdoc/client.h"

namespace rockdoc::internal {

namespace {

// {$and: [partialFilter, {field: {$lt: cutoff}}]}, or the second alone.
// $lt on a date matches only dates (MongoDB's type bracketing), and an array
// when one of its elements does.
Document ExpiredFilter(const IndexDescriptor& index, int64_t now_ms) {
  BsonBuilder expired;
  expired.OpenDocument(index.field_names()[0])
      .AppendDateTime("$lt", now_ms - index.expire_after_seconds() * 1000)
      .Close();
  if (!index.partial()) return std::move(expired).Build();
  BsonBuilder both;
  both.OpenArray("$and");
  both.AppendDocument("", index.partial_filter_expression());
  both.AppendDocument("", std::move(expired).Build());
  both.Close();
  return std::move(both).Build();
}

void RunTtlPass(const std::shared_ptr<Engine>& engine) {
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  Catalog& catalog = CatalogOf(*engine);
  for (const std::string& db : catalog.DatabaseNames()) {
    for (const std::string& name : catalog.CollectionNames(db)) {
      std::shared_ptr<CollectionMeta> meta = catalog.Find(db, name);
      if (meta == nullptr) continue;
      for (const auto& index : *meta->indexes()) {
        if (!index->ttl()) continue;
        if (engine->runner().stopping()) return;
        // A failure (the database closing, a conflict) leaves the documents
        // for the next pass, as MongoDB's monitor does.
        ClientAccess::DatabaseOf(engine, db)
            .GetCollection(name)
            .DeleteMany(ExpiredFilter(*index, now_ms))
            .status()
            .IgnoreError();
      }
    }
  }
}

}  // namespace

void StartTtlMonitor(const std::shared_ptr<Engine>& engine) {
  const int64_t period = engine->options().ttl_monitor_period_ms;
  // A read-only client deletes nothing: expiry is the owner's.
  if (period <= 0 || engine->read_only()) return;
  // Weak: the engine owns the runner that owns this task.
  std::weak_ptr<Engine> weak = engine;
  engine->runner().Add("ttl", period, [weak] {
    std::shared_ptr<Engine> e = weak.lock();
    if (e != nullptr && !e->closed()) RunTtlPass(e);
  });
}

Database ClientAccess::DatabaseOf(std::shared_ptr<Engine> engine, std::string name,
                                  std::shared_ptr<SessionState> session) {
  return Database(std::move(engine), std::move(name), std::move(session));
}

}  // namespace rockdoc::internal
