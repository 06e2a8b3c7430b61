// stats/telemetry.h: what the engine knows of its own use, kept with the
// engine for its whole life: the query statistics per shape ($queryStats)
// and the profiler (stats/query_stats.h). It is the engine's kStats
// attachment (storage/engine.h), beside the catalog and apart from it: the
// catalog holds metadata (which collections and indexes exist), this holds
// measurements. The query statistics are read at open (AttachTo) and written
// when the engine closes (BeforeClose, before the catalog's last write).
//
// Who feeds it: api/query_recorder.h, when a read ends. Who reads it:
// $queryStats (pipeline/source_stages.cc, through api/), the profile
// commands, the schema advisor. What the store records of each
// collection's writes is in stats/collection_statistics.h, held by the
// collection's catalog entry, which persists it.
//
// Thread safety: QueryStats and Profiler are thread-safe.
#ifndef ROCKDOC_STATS_TELEMETRY_H_
#define ROCKDOC_STATS_TELEMETRY_H_

#include "stats/query_stats.h"
#include "stats/server_activity.h"
#include "storage/engine.h"

namespace rockdoc::internal {

class Telemetry : public EngineAttachment {
 public:
  explicit Telemetry(Engine* engine) : engine_(engine) {}
  // Reads the persisted query statistics and attaches the result to
  // `engine`; a damaged entry fails the open (DataCorruptionDetected).
  static Status AttachTo(Engine* engine);

  QueryStats& query_stats() { return query_stats_; }
  Profiler& profiler() { return profiler_; }
  // The operations in flight and the server's counters (server_activity.h).
  ServerActivity& activity() { return activity_; }

  // Writes the query statistics (best effort: a failure to record them
  // must not keep the database from closing).
  void BeforeClose() override;

 private:
  Engine* engine_;
  QueryStats query_stats_;
  Profiler profiler_;
  ServerActivity activity_;
};

// The telemetry attached to `engine` (Telemetry::AttachTo).
inline Telemetry& StatsOf(const Engine& engine) {
  return *static_cast<Telemetry*>(engine.attachment(AttachmentSlot::kStats));
}

}  // namespace rockdoc::internal

#endif  // ROCKDOC_STATS_TELEMETRY_H_
