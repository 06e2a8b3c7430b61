// api/query_recorder.h: how a read is recorded in the query statistics and
// the profiler (stats/query_stats.h) when it ends.
//
// A find's record rides on its executor (PlanExecutor::OnDone: a cursor is
// recorded when it goes away, with all its batches); countDocuments',
// distinct's and findById's when the call returns; an aggregate's on its
// cursor (RecordedCursor). The reads an operation makes for itself (an
// aggregate's finds and $lookups, distinct's find) are not recorded on
// their own: NestedReads marks them.
//
// What a read pays with statistics on: a shape hash of its filter, sort
// and projection (no allocation), two clock reads per Next() call, and a
// lookup under the store's mutex at the end. A shape's document is built
// only the first time it is seen; a profile entry only when the profiler
// takes the operation.
//
// Thread safety: a recorder belongs to its operation.
#ifndef ROCKDOC_API_QUERY_RECORDER_H_
#define ROCKDOC_API_QUERY_RECORDER_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "exec/plan_executor.h"
#include "planner/canonical_query.h"
#include "rockdoc/client.h"
#include "stats/telemetry.h"
#include "storage/engine.h"

namespace rockdoc::internal {

// Where rockdoc-serve keeps its --auth users (wire/users.h): the engine's
// bookkeeping, read again before every command of an authenticated
// connection, so the recorder leaves it out (recorded, it would be the
// busiest shape of all).
inline constexpr std::string_view kUsersDatabase = "admin";
inline constexpr std::string_view kUsersCollection = "rockdoc.users";

// What the reads inside a recorded operation examined: added to its
// figures when it ends.
struct NestedFigures {
  int64_t keys_examined = 0;
  int64_t docs_examined = 0;
  bool collscan = false;
  // The plan of the first read the operation made (an aggregate's leading
  // find, made before any $lookup reads), whichever read ends first.
  std::string plan_summary;
  bool first_read_made = false;
};

// While one lives on a thread, reads there are part of an operation
// recorded as a whole: they add what they examine to `into` (when not
// null) instead of being recorded on their own.
class NestedReads {
 public:
  explicit NestedReads(std::shared_ptr<NestedFigures> into = nullptr)
      : saved_(std::move(into_)) {
    ++depth_;
    into_ = into != nullptr ? std::move(into) : saved_;
  }
  ~NestedReads() {
    --depth_;
    into_ = std::move(saved_);
  }
  NestedReads(const NestedReads&) = delete;
  NestedReads& operator=(const NestedReads&) = delete;
  static bool active() { return depth_ > 0; }
  static const std::shared_ptr<NestedFigures>& into() { return into_; }

 private:
  std::shared_ptr<NestedFigures> saved_;
  static thread_local int depth_;
  static thread_local std::shared_ptr<NestedFigures> into_;
};

class QueryRecorder {
 public:
  // Null when the engine keeps no statistics or the read is nested.
  // `command`: "find", "count" or "distinct" (`distinct_key` its key).
  static std::unique_ptr<QueryRecorder> ForFind(const Engine& engine, const std::string& db,
                                                const std::string& coll, std::string_view command,
                                                const CanonicalQuery& cq,
                                                std::string_view distinct_key = {});
  // `comment`: the command's, for the profile entry.
  static std::unique_ptr<QueryRecorder> ForPipeline(const Engine& engine, const std::string& db,
                                                    const std::string& coll,
                                                    DocumentView pipeline,
                                                    const std::optional<Value>& comment = {});

  // The run ended. `root`: its plan (for planSummary), or null with
  // `plan_summary` given.
  void Finish(int64_t nanos, int64_t keys_examined, int64_t docs_examined, int64_t returned,
              const PlanStage* root, std::string plan_summary = {});

  // What a count returns is its count: the documents it matched.
  void set_returned(int64_t n) { returned_override_ = n; }
  // Keeps the query a distinct parsed for its shape until Finish.
  void Own(std::unique_ptr<CanonicalQuery> cq) { owned_cq_ = std::move(cq); }
  // Where this operation's own reads add their figures (see NestedReads).
  // Made on first use (an operation that reads for itself); a nested
  // read's recorder has none (its reads add to its parent's).
  std::shared_ptr<NestedFigures> nested() {
    if (nested_ == nullptr && parent_ == nullptr) nested_ = std::make_shared<NestedFigures>();
    return nested_;
  }
  // findOne({_id: v}): recorded after the read, with no recorder kept
  // (the commonest read: nothing allocated but the entry's first time).
  // `nanos`: the read's time; `found`: whether a document was there.
  static void RecordIdRead(const Engine& engine, const std::string& db, const std::string& coll,
                           const Element& id, int64_t nanos, bool found);
  // Whether reads are recorded at all (statistics on).
  static bool Records(const Engine& engine);

  // Records `exec`'s run when it goes away (`used_nanos`: its planning).
  // Returns the recorder (null when `recorder` is), alive as long as `exec`.
  static QueryRecorder* Attach(std::unique_ptr<QueryRecorder> recorder, PlanExecutor* exec,
                     int64_t used_nanos);

 private:
  QueryRecorder(const Engine& engine, std::string db, std::string coll, std::string command);
  // A nested read's: adds to `parent` only.
  explicit QueryRecorder(std::shared_ptr<NestedFigures> parent);
  // Null when nothing records this read; a nested read's recorder inside a
  // recorded operation.
  static std::unique_ptr<QueryRecorder> Begin(const Engine& engine, const std::string& db,
                                              const std::string& coll, std::string command,
                                              bool* top);
  // The shape's hash and traits, and its start noted (application-level
  // joins); with `build_now`, the shape document too when the store has no
  // entry for it (a pipeline's: the caller's pipeline is gone by Finish).
  template <typename ShapeFn>
  void Prepare(const ShapeFn& shape, bool build_now);
  // The shape document, built when the store first sees the shape: from
  // shape_, the find's query (alive until Finish: the executor's, or
  // owned_cq_) or the _id read's value.
  std::optional<Document> BuildShape() const;

  Telemetry* telemetry_;
  const Engine* engine_;
  QueryShapeId id_;
  ShapeTraits traits_;
  std::optional<Document> shape_;     // a pipeline's, when the store had none
  const CanonicalQuery* cq_ = nullptr;  // a find's, count's or distinct's
  std::unique_ptr<CanonicalQuery> owned_cq_;  // distinct's, kept here
  std::string distinct_key_;
  Element id_value_;                  // findById's value (alive until Finish)
  std::optional<Document> command_;   // the profiler's copy, when it may take the run
  std::vector<std::string> lookups_;  // the collections $lookup joins
  std::optional<int64_t> returned_override_;
  bool caller_holds_use_ = false;  // Finish runs under the caller's Engine::Use
  std::shared_ptr<NestedFigures> nested_;
  std::shared_ptr<NestedFigures> parent_;  // a nested read's
  bool first_read_ = false;                // the parent's first: its plan summary
};

// An update's or delete's run (`kind` "update" or "remove"): no query
// statistics (MongoDB keeps them for reads), but the slow query log and the
// profiler, as MongoDB's. `root`: the write stage over its plan.
void RecordWrite(const Engine& engine, const std::string& db, const std::string& coll,
                 std::string_view kind, const CanonicalQuery& cq, const PlanStage& root,
                 int64_t matched, int64_t written, int64_t nanos);

// A pipeline's cursor that times itself and records its run when it goes
// away; its finds are nested reads.
// `used_nanos`: the time its open took.
std::unique_ptr<CursorImpl> RecordedCursor(std::shared_ptr<const Engine> engine,
                                           std::unique_ptr<CursorImpl> cursor,
                                           std::unique_ptr<QueryRecorder> recorder,
                                           int64_t used_nanos);
// A cursor of an operation that is not recorded (a collectionless
// aggregate) whose reads are its own: none of them is recorded either.
std::unique_ptr<CursorImpl> UnrecordedCursor(std::unique_ptr<CursorImpl> cursor);

// Writes the profiler's waiting entries of `db` into db.system.profile (a
// capped collection of 1 MiB, made when missing, as MongoDB's).
Status FlushProfile(const std::shared_ptr<Engine>& engine, const std::string& db);
// Before a read of db.system.profile: its waiting entries, written.
inline Status FlushProfileBeforeRead(const std::shared_ptr<Engine>& engine, const std::string& db,
                                     const std::string& coll) {
  if (coll != "system.profile") return Status::OK();
  return FlushProfile(engine, db);
}
// Of every database (the client closes).
Status FlushAllProfiles(const std::shared_ptr<Engine>& engine);

}  // namespace rockdoc::internal

#endif  // ROCKDOC_API_QUERY_RECORDER_H_
