// rockdoc/options.h: the options of the client and of its operations
// (ClientOptions, FindOptions, UpdateOptions, AggregateOptions, IndexOptions,
// ...), plain structs of standard types and rockdoc documents.
//
// They live apart from rockdoc/client.h, as LevelDB's and RocksDB's
// options.h live apart from their db.h: the library's own layers below the
// API (storage, index, planner, pipeline, ...; src/README.md) take these
// options and may include this header, but never rockdoc/client.h (the build
// checks it: tests/layering/no_client_h_below_api.cmake). Users include
// rockdoc/client.h, which includes this header.
//
// Thread safety: plain values.
#ifndef ROCKDOC_OPTIONS_H_
#define ROCKDOC_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rockdoc/document.h"
#include "rockdoc/export.h"
#include "rockdoc/status.h"

namespace rockdoc {

// The block cache a ClientOptions starts with: sized from memory as MongoDB
// sizes WiredTiger's cache, half of (memory - 1 GiB) and at least 256 MiB,
// where memory is the machine's RAM or the cgroup's memory limit when that
// is lower (24 GiB of RAM: 11.5 GiB). The cache takes memory only as blocks
// are read into it; every Client has its own.
ROCKDOC_EXPORT size_t DefaultBlockCacheBytes();

// The path that opens an in-memory database, as SQLite's ":memory:".
inline constexpr char kInMemoryPath[] = ":memory:";

// The key of a file as mongod's --encryptionKeyFile holds it (the base64
// of 32 bytes, as `openssl rand -base64 32 > key; chmod 600 key` makes it),
// for ClientOptions::encryption_key. BadValue when the file holds no such
// key or its group or others may read it ("permissions on <file> are too
// open", as mongod says); FileNotOpen when it cannot be read.
ROCKDOC_EXPORT StatusOr<std::string> EncryptionKeyFromFile(const std::string& path);

// What Client::RotateEncryptionKey did.
struct KeyRotationReport {
  int files_rewritten = 0;       // files now under the new key
  int files_kept = 0;            // files already under it (or empty)
  uint64_t bytes_rewritten = 0;  // their data, prefixes aside
};

struct ClientOptions {
  // Create the directory (and a new database in it) when missing. When
  // false, opening a missing directory fails with NonExistentPath.
  bool create_if_missing = true;
  // A database that lives and dies with its Client, in memory (RocksDB's
  // in-memory Env): no file is read or written, nothing survives Close, and
  // each Open is a new, empty database of its own, whatever the path (which
  // only names it; Client::path() says ":memory:"). Opening the path
  // ":memory:" (kInMemoryPath) sets it. Everything else works as on disk,
  // spilling (allowDiskUse) included, into memory; Checkpoint is
  // IllegalOperation (there are no files to copy).
  bool in_memory = false;
  // Open the directory for reading alongside the process that owns it for
  // writing (an application, rockdoc-serve, another shell), or when no one
  // owns it: RocksDB's secondary instance, which reads the owner's files and
  // never writes into the directory (its own small info log goes to a
  // temporary directory, removed at Close). The client sees the database as
  // of its last catch-up with the owner's writes: at Open, at the start of
  // every operation that looks a collection up, and at CatchUp(). Every write
  // (documents, indexes, collections, Compact, Checkpoint) is
  // IllegalOperation (20), naming the owner's process. Change streams, live
  // queries, the TTL monitor and the record cache are off. The directory must
  // hold a database of this rockdoc's format (an older one is
  // UnsupportedFormat: open it once for writing to upgrade it), and
  // create_if_missing does not apply (a missing one is NonExistentPath).
  // With in_memory: InvalidOptions.
  bool read_only = false;
  // Encryption at rest: the 32 bytes of an AES-256 key (raw bytes, not
  // text; EncryptionKeyFromFile reads mongod's --encryptionKeyFile form).
  // Every file RocksDB writes under the directory (table files, write-ahead
  // logs, MANIFEST, CURRENT, OPTIONS, the info log, aggregate's spill runs,
  // and checkpoints, which need the same key) is encrypted with AES-256-CTR
  // through OpenSSL, each file under a random counter of its own; the
  // ROCKDOC marker and ROCKDOC.owner stay plain and hold no data. The key is
  // never written anywhere. A new directory is created encrypted. Opening an
  // encrypted directory without its key, with a wrong key, or a plain one
  // with a key, is InvalidOptions (72) saying which, and writes nothing. A
  // key of another length is BadValue; with in_memory, InvalidOptions (there
  // are no files). Empty (the default): no encryption. Keys change with
  // RotateEncryptionKey (client.h), on a closed directory.
  std::string encryption_key;
  // Keys that files of the directory may still be under, read but never
  // written with: what a RotateEncryptionKey that stopped part-way needs
  // until it is run again.
  std::vector<std::string> previous_encryption_keys;
  // Durability of each acknowledged write. The write-ahead log is always on.
  //  - false (default, like MongoDB's j:false): a commit is in the OS page
  //    cache; a process crash loses nothing, a power failure or kernel crash
  //    can lose the acknowledged writes the OS had not yet written back
  //    (Linux: up to about 30 s by default), always the most recent ones and
  //    never half a write: recovery stops at the last whole transaction.
  //  - true: each commit fsyncs the log before it is acknowledged; nothing
  //    acknowledged is lost on power failure, at the cost of one fsync per
  //    write (batched writes such as InsertMany share one).
  bool sync = false;
  // The table files the engine keeps open at once (RocksDB's
  // max_open_files): -1 keeps every one open (fastest; one descriptor per
  // file of the database), a number >= 20 bounds them (a file past the
  // bound is reopened when read). Other values are BadValue at Open.
  // rockdoc-serve bounds it within the process's open-file limit, beside
  // its connections (README.md, "rockdoc serve").
  int max_open_files = -1;
  // RocksDB block cache (uncompressed data blocks), shared by all collections.
  size_t block_cache_bytes = DefaultBlockCacheBytes();
  // The record cache above RocksDB: documents kept as their BSON, by
  // collection and _id, for point reads (find by _id, and the fetch of each
  // document an index scan finds), kept coherent by every commit, and
  // bounded by this many bytes (LRU eviction; each document costs its size
  // plus about 200 bytes). 0 turns it off. The default, 64 MiB, holds the hot
  // working set of a few hundred thousand small documents while staying a
  // small fraction of the default block cache (at least 256 MiB), whose
  // blocks it duplicates: it is memory traded for reads that skip RocksDB.
  // It starts empty at every open.
  size_t record_cache_bytes = size_t{64} << 20;
  // How long a write waits for a document lock held by another writer
  // before failing with LockTimeout (24).
  int64_t lock_timeout_ms = 10000;
  // How long a multi-document transaction may stay open (MongoDB's
  // transactionLifetimeLimitSeconds, 60 s by default): past it the
  // transaction is aborted, its locks released, and its next operation or
  // commit fails with NoSuchTransaction (251).
  int64_t transaction_lifetime_limit_ms = 60000;
  // How often the TTL monitor deletes expired documents of TTL indexes
  // (MongoDB's ttlMonitorSleepSecs, 60 s). 0 turns the monitor off;
  // negative is BadValue at Open.
  int64_t ttl_monitor_period_ms = 60000;
  // What an index build's sort holds in memory before it spills sorted runs
  // to the directory's _tmp/ (MongoDB's maxIndexBuildMemoryUsageMegabytes,
  // 200 MB). Must be positive (BadValue at Open).
  int64_t max_index_build_memory_bytes = int64_t{200} << 20;
  // Statistics kept as a side effect of operations, for the schema
  // advisor and for people. On, writes cost at most about 3% more
  // (bench/statistics_bench.cc measures on against off: 0.4% to 2.7% more
  // instructions on its insert and update workloads). Off turns off the
  // growth watch (no growth warnings counted, logged or returned in
  // results), the distributions kept on write (document sizes and array
  // lengths: Collection::GrowthStats, collStats' documentSizes and
  // arrayLengths), and the query statistics and profiler (levels 1 and 2
  // are then refused, and nothing is recorded). A client that
  // writes with them off leaves its collections' document sizes unknown to
  // the next one with them on, until its Collection::Stats rebuilds them.
  bool collect_statistics = true;
  // The change log (change streams: Collection::Watch and the aggregate
  // command's $changeStream): each committed insert, update, replace and
  // delete (and each drop, rename and dropDatabase) is recorded as an event
  // in the same write as the change, in commit order, as a replica set's
  // oplog records it. Off by default, as a standalone mongod has no oplog:
  // Watch then fails with 40573. It costs writes what the oplog costs
  // MongoDB, a second copy of what they write (bench/statistics_bench.cc
  // --switch change_log: inserts of ~300-byte documents 0.5x (batched) to
  // 0.78x (one by one), updates 0.8x). rockdoc-serve turns it on, as it
  // answers as a replica set, and so does the shell. Unset (the default):
  // as the directory had it when last opened (off for a new one or an
  // in-memory database), so that a tool or an application opening a
  // directory with the defaults neither drops nor starts its log. Set to
  // false on a directory that has the log, its events are forgotten: a
  // stream cannot resume across that gap (286).
  std::optional<bool> change_log;
  // Its retention, as the oplog's: trimmed from the oldest commit once it
  // holds more than change_log_max_bytes (replSetResizeOplog's size; must
  // be positive), but never the commits younger than
  // change_log_min_retention_hours (oplogMinRetentionHours; 0: none; must
  // not be negative). A stream resumed from an event trimmed away fails
  // with ChangeStreamHistoryLost (286).
  int64_t change_log_max_bytes = int64_t{256} << 20;
  double change_log_min_retention_hours = 0;
};

// A change stream's options (Collection::Watch, Database::Watch,
// Client::Watch; the driver's watch() options, the $changeStream stage's
// fields).
struct ChangeStreamOptions {
  // What an update event's fullDocument holds: "default" (none),
  // "updateLookup" (the document as it is when the event is read, null
  // when it is gone), "whenAvailable" (the post-image: the document as the
  // update left it, recorded with the event when its collection had
  // changeStreamPreAndPostImages enabled; null otherwise), "required" (the
  // same, and an event without one fails the stream with
  // NoMatchingDocument, 47). Another value is BadValue.
  std::string full_document = "default";
  // fullDocumentBeforeChange of update, replace and delete events: "off"
  // (none), "whenAvailable" (the pre-image, the document before the change,
  // recorded as the post-image is; null otherwise), "required" (the same,
  // and NoMatchingDocument, 47, without one).
  std::string full_document_before_change = "off";
  // Where the stream starts (at most one of the three; none: now):
  // after the event whose _id (resume token) is given (startAfter also
  // after an invalidate), or at the first event at or after a cluster time.
  // A start the log no longer holds is ChangeStreamHistoryLost (286).
  std::optional<Document> resume_after;
  std::optional<Document> start_after;
  std::optional<BsonTimestamp> start_at_operation_time;
  // showExpandedEvents (MongoDB 6.0+): the DDL events create,
  // createIndexes, dropIndexes and modify, and the expanded fields:
  // collectionUUID, operationDescription (create, createIndexes,
  // dropIndexes, modify, rename), modify's stateBeforeChange, and
  // updateDescription.disambiguatedPaths. Without it none of these appear.
  bool show_expanded_events = false;
  // How long ChangeStream::Next waits for an event (maxAwaitTimeMS).
  int64_t max_await_time_ms = 1000;
};

// Client::StartSession's options (mongosh's startSession({...})).
struct SessionOptions {
  // A snapshot session (MongoDB's {snapshot: true}): every read in it sees
  // the state of the database at the session's first read, across
  // collections and databases; writes are refused (a snapshot session is
  // for consistent multi-collection reads outside transactions).
  bool snapshot = false;
};

// Session::StartTransaction's options. rockdoc runs one node with snapshot
// isolation, so MongoDB's readConcern/writeConcern/readPreference have a
// single meaning here; the shell accepts the values that mean it and refuses
// the rest. Nothing here yet: a field is added when an option has an effect.
struct TransactionOptions {};

struct InsertManyOptions {
  bool ordered = true;
  // bypassDocumentValidation: the collection's validator is not applied.
  bool bypass_document_validation = false;
  // maxTimeMS: checked before each document; once it has passed the call
  // fails with MaxTimeMSExpired (50) "operation exceeded time limit" (the
  // documents before it stay inserted, as in MongoDB); 0 = no limit; at
  // most 2^31 - 1 (BadValue otherwise). See "Time limits" in rockdoc/client.h.
  int64_t max_time_ms = 0;
};

struct InsertOneOptions {
  // bypassDocumentValidation: the collection's validator is not applied.
  bool bypass_document_validation = false;
};

struct FindOptions {
  // {field: 1 | -1, ...}; empty = no order (the plan's natural order).
  // {$natural: 1 | -1} (alone): storage order, forward or backward.
  Document sort;
  // MongoDB projection: {a: 1, b: 1} or {a: 0}, dotted paths, $slice,
  // $elemMatch, positional "a.$".
  Document projection;
  int64_t skip = 0;  // negative: error 51024, as the find command
  // 0 = no limit. A negative limit is treated as its absolute value.
  int64_t limit = 0;
  // Forces an index: its key pattern ({a: 1}) or, in hint_name, its name.
  // {$natural: 1 | -1} forces a collection scan (other $natural values:
  // BadValue).
  Document hint;
  std::string hint_name;
  // A blocking sort (no index provides the order) may use at most this much
  // memory, as MongoDB's 100 MB; past it the query fails with
  // QueryExceededMemoryLimitNoDiskUseAllowed (292).
  int64_t max_blocking_sort_bytes = int64_t{100} << 20;
  // maxTimeMS: the operation fails with MaxTimeMSExpired (50) "operation
  // exceeded time limit" once it has run this long; 0 = no limit; at most
  // 2^31 - 1 (BadValue otherwise). See "Time limits" in rockdoc/client.h.
  int64_t max_time_ms = 0;
  // let: variables for the filter's $expr ({$$name}): {name: <expression>},
  // each evaluated once before the operation runs, as MongoDB 5.0+'s.
  Document let;
  // comment: any value, which the operation's profile entry (system.profile's
  // `command`) carries, as MongoDB's; nothing else reads it.
  std::optional<Value> comment;
  // min / max: index key values ({a: 3, b: "x"}) bounding a scan of the
  // hinted index, as MongoDB's: min inclusive, max exclusive, both in the
  // index's order (a descending field's min is its highest value). Each
  // names exactly the index's fields, in its order; the filter still
  // applies. Errors: no hint, 51173 "When using min()/max() a hint of which
  // index to use must be provided"; a $natural hint or sort,
  // NoQueryExecutionPlans (291) "min and max are incompatible with
  // $natural"; other fields than the index's, 51174 "The index chosen is
  // not compatible with min/max"; min and max naming different fields,
  // 51176; min not before max, 51175.
  Document min;
  Document max;
  // returnKey: each result is the index key of the entry that produced it
  // ({a: 5} for an index {a: 1}; {_id: v} through the _id order; {} from a
  // collection scan), as MongoDB's; the projection and show_record_id are
  // then ignored, as MongoDB ignores them.
  bool return_key = false;
  // showRecordId: each result gets a last field `$recordId`, what identifies
  // the document in storage, stable for the document's life: in a capped
  // collection its insertion sequence number (a long, 1, 2, ..., as
  // MongoDB's record ids); elsewhere the records are clustered by _id, and
  // it is the _id's keystring as BinData (subtype 0), as MongoDB shows the
  // record id of a clustered collection.
  bool show_record_id = false;
  // tailable (capped collections only; MongoDB's errors otherwise: BadValue
  // "... tailable cursor requested on non capped collection", a sort other
  // than {$natural: 1}): the cursor reads in insertion order, and its end is
  // not final: Next() returning false with an OK status means "nothing more
  // yet", and a later Next() returns the documents inserted since (each
  // such call reads a new snapshot). When the document it last returned has
  // been removed by the collection's roll-over, Next() fails with
  // CappedPositionLost (136). The plan is always a collection scan (a hint
  // is not used, as MongoDB's).
  bool tailable = false;
  // The collation (MongoDB's collation document, {locale: "en", strength:
  // 2, ...}; {locale: "simple"} is binary): how strings compare in the
  // filter, the sort and the index choice. Absent: the collection's default.
  std::optional<Document> collation;
};

struct CountOptions {
  int64_t skip = 0;
  int64_t limit = 0;
  Document hint;
  std::string hint_name;
  // maxTimeMS: the operation fails with MaxTimeMSExpired (50) "operation
  // exceeded time limit" once it has run this long; 0 = no limit; at most
  // 2^31 - 1 (BadValue otherwise). See "Time limits" in rockdoc/client.h.
  int64_t max_time_ms = 0;
  // comment: any value, which the operation's profile entry (system.profile's
  // `command`) carries, as MongoDB's; nothing else reads it.
  std::optional<Value> comment;
  // The collation (MongoDB's collation document, {locale: "en", strength:
  // 2, ...}; {locale: "simple"} is binary): how strings compare in the
  // filter, the sort and the index choice. Absent: the collection's default.
  std::optional<Document> collation;
};

// An update pipeline: the array of stages [{$set: ...}, {$unset: ...}] (its
// bytes: a BSON array is a document keyed "0", "1", ...). The stages are
// $addFields/$set, $project, $unset, $replaceRoot/$replaceWith over
// aggregation expressions; the result keeps the original `_id`. Fields may
// be created with `$` or `.` in their names ($setField, $replaceWith), as
// in MongoDB 5.0+. arrayFilters are refused (FailedToParse).
struct UpdatePipeline {
  DocumentView stages;
};

struct UpdateOptions {
  // Insert a document when none matches, seeded from the filter's equality
  // fields with the update applied ($setOnInsert included).
  bool upsert = false;
  // Filters for the $[identifier] positional operator, one per identifier.
  std::vector<Document> array_filters;
  // updateOne / replaceOne: which matching document is changed when several
  // match (MongoDB 8.0's sort option). updateMany refuses one: FailedToParse (9).
  Document sort;
  Document hint;
  std::string hint_name;
  // maxTimeMS: the operation fails with MaxTimeMSExpired (50) "operation
  // exceeded time limit" once it has run this long; 0 = no limit; at most
  // 2^31 - 1 (BadValue otherwise). See "Time limits" in rockdoc/client.h.
  int64_t max_time_ms = 0;
  // bypassDocumentValidation: the collection's validator is not applied.
  bool bypass_document_validation = false;
  // let: variables for the filter's $expr and an update pipeline's
  // expressions ({$$name}), each evaluated once before the update runs.
  Document let;
  // The collation (MongoDB's collation document, {locale: "en", strength:
  // 2, ...}; {locale: "simple"} is binary): how strings compare in the
  // filter, the sort and the index choice. Absent: the collection's default.
  std::optional<Document> collation;
};

// deleteOne / deleteMany.
struct DeleteOptions {
  // Forces an index for finding the targets: its key pattern or, in
  // hint_name, its name (as FindOptions::hint).
  Document hint;
  std::string hint_name;
  // maxTimeMS: the operation fails with MaxTimeMSExpired (50) "operation
  // exceeded time limit" once it has run this long; 0 = no limit; at most
  // 2^31 - 1 (BadValue otherwise). See "Time limits" in rockdoc/client.h.
  int64_t max_time_ms = 0;
  // let: variables for the filter's $expr ({$$name}): {name: <expression>},
  // each evaluated once before the operation runs, as MongoDB 5.0+'s.
  Document let;
  // The collation (MongoDB's collation document, {locale: "en", strength:
  // 2, ...}; {locale: "simple"} is binary): how strings compare in the
  // filter, the sort and the index choice. Absent: the collection's default.
  std::optional<Document> collation;
};

// distinct.
struct DistinctOptions {
  // maxTimeMS: the operation fails with MaxTimeMSExpired (50) "operation
  // exceeded time limit" once it has run this long; 0 = no limit; at most
  // 2^31 - 1 (BadValue otherwise). See "Time limits" in rockdoc/client.h.
  int64_t max_time_ms = 0;
  // comment: any value, which the operation's profile entry (system.profile's
  // `command`) carries, as MongoDB's; nothing else reads it.
  std::optional<Value> comment;
  // The collation (MongoDB's collation document, {locale: "en", strength:
  // 2, ...}; {locale: "simple"} is binary): how strings compare in the
  // filter, the sort and the index choice. Absent: the collection's default.
  std::optional<Document> collation;
};

// Collection::Aggregate's options.
struct AggregateOptions {
  // maxTimeMS: one deadline for the whole pipeline, its stages' work and
  // all its finds (the leading one, each $lookup's, ...); 0 = no limit.
  int64_t max_time_ms = 0;
  // An index for the pipeline's leading find: a key pattern, or a name.
  Document hint;
  std::string hint_name;
  // Variables for the pipeline's expressions ({$$name}): {name: <expression>},
  // each evaluated once before the pipeline runs.
  Document let;
  // comment: any value, which the operation's profile entry (system.profile's
  // `command`) carries, as MongoDB's; nothing else reads it.
  std::optional<Value> comment;
  // allowDiskUse: $sort and $group that outgrow their 100 MB write sorted
  // runs to the database directory's _tmp/ folder and still answer (then
  // $group's output is in _id order); false, they fail with
  // QueryExceededMemoryLimitNoDiskUseAllowed (292), as every other blocking
  // stage does past 100 MB either way.
  bool allow_disk_use = false;
  // The memory each blocking stage may hold, as MongoDB's 100 MB (its
  // internalDocumentSourceGroupMaxMemoryBytes and friends); lower it to see
  // spilling on small data. At least 1 (BadValue otherwise).
  int64_t max_blocking_stage_bytes = int64_t{100} << 20;
  // The collation (FindOptions::collation). rockdoc applies one (given, or
  // the collection's default) to pipelines whose string comparisons are all
  // in their leading $match and $sort (then $skip, $limit, $count, $project
  // inclusions and a constant-key $group counting: countDocuments' form);
  // other pipelines under a collation are NotImplemented (238).
  std::optional<Document> collation;
};

enum class ReturnDocument { kBefore, kAfter };

struct FindOneAndModifyOptions {
  // Which matching document is chosen when several match.
  Document sort;
  Document projection;
  bool upsert = false;
  ReturnDocument return_document = ReturnDocument::kBefore;
  std::vector<Document> array_filters;
  // Forces an index for finding the document: its key pattern or, in
  // hint_name, its name (as FindOptions::hint).
  Document hint;
  std::string hint_name;
  // maxTimeMS: the operation fails with MaxTimeMSExpired (50) "operation
  // exceeded time limit" once it has run this long; 0 = no limit; at most
  // 2^31 - 1 (BadValue otherwise). See "Time limits" in rockdoc/client.h.
  int64_t max_time_ms = 0;
  // bypassDocumentValidation: the collection's validator is not applied.
  bool bypass_document_validation = false;
  // let: variables for the filter's $expr and an update pipeline's
  // expressions ({$$name}), each evaluated once before the operation runs.
  Document let;
  // The collation (MongoDB's collation document, {locale: "en", strength:
  // 2, ...}; {locale: "simple"} is binary): how strings compare in the
  // filter, the sort and the index choice. Absent: the collection's default.
  std::optional<Document> collation;
};

// The options of an index that rockdoc implements. Every option MongoDB
// knows and rockdoc does not has no field here: in a createIndexes
// command's specification, the command layer refuses it (NotImplemented).
struct IndexOptions {
  std::string name;  // default: "a_1_b_-1" from the key pattern
  bool unique = false;
  bool sparse = false;
  // `background` as given: no effect (every build is one scan, as MongoDB's
  // since 4.2), kept in the index's specification, which listIndexes shows,
  // as MongoDB keeps it.
  std::optional<bool> background;
  Document partial_filter_expression;
  // A TTL index (single field): documents whose indexed field is a date (or
  // an array holding one) older than this many seconds are deleted by the
  // client's TTL monitor (ClientOptions::ttl_monitor_period_ms). 0 to
  // 2147483647; unset: not a TTL index.
  std::optional<int64_t> expire_after_seconds;
  // A hidden index (MongoDB 4.4+): kept up to date on every write, and its
  // unique and TTL options hold, but the planner does not see it (a hint
  // naming it is BadValue, as for an index that does not exist), so that
  // the effect of dropping it can be tried and undone (CollMod's
  // index.hidden). Not for the _id index, nor a system collection's
  // (BadValue). listIndexes shows `hidden: true` only when set.
  bool hidden = false;
  // The index's collation: its string keys are this collation's sort keys,
  // and it serves queries with the same collation only. Absent: the
  // collection's default.
  std::optional<Document> collation;
  // 2dsphere indexes only: the index version (MongoDB's
  // 2dsphereIndexVersion); rockdoc builds version 3, the default, and
  // refuses 1 and 2 (NotImplemented).
  std::optional<int32_t> sphere_index_version;
  // Text indexes ({a: "text"}, "$**": "text", compound with ordered prefix
  // and suffix fields), as MongoDB's: `weights` ({field: 1 to 99999}; fields
  // named here are indexed too), `default_language` ("english"; MongoDB's
  // languages or "none"), `language_override` (the field naming a
  // document's language, "language"), `text_index_version` (3, the only one
  // rockdoc builds). Unset: the defaults.
  std::optional<Document> weights;
  std::optional<std::string> default_language;
  std::optional<std::string> language_override;
  std::optional<int32_t> text_index_version;
  // A search index's definition (createSearchIndexes' `definition`; for a
  // vectorSearch index MongoDB's {fields: [{type: "vector", path,
  // numDimensions, similarity}, {type: "filter", path}...]}), checked and
  // kept by its kind (index/vector_access_method.cc). Unset for ordinary
  // indexes; CreateIndexes refuses it (search indexes are made by
  // Collection::CreateSearchIndexes).
  std::optional<Document> search_definition;
};

// One search index of a CreateSearchIndexes call (createSearchIndexes'
// {name, type, definition}).
struct SearchIndexModel {
  std::string name;                   // empty: "default"
  std::string type = "vectorSearch";  // "vectorSearch" (or "search": NotImplemented)
  Document definition;
};

// One index of a CreateIndexes call: its key pattern and options.
struct IndexModel {
  Document keys;
  IndexOptions options;
};

// A collection's validation (create and collMod's validationLevel and
// validationAction, as MongoDB's): which writes the validator checks (off:
// none; strict: every insert and update; moderate: updates of documents
// that were valid), and what a failing write gets (error: refused, 121;
// warn: written, and logged).
enum class ValidationLevel { kOff, kStrict, kModerate };
enum class ValidationAction { kError, kWarn };

// createCollection's options (Database::CreateCollection). The create
// command's document is decoded into these by the command layer (command/),
// from its table; the options MongoDB knows and rockdoc does not have no
// field here (the command refuses them, NotImplemented).
struct CreateCollectionOptions {
  // A capped collection: at most `size` bytes of documents (required;
  // 1..2^50, rounded up to 4096, then to a multiple of 256) and, when `max`
  // is positive, at most that many documents (< 2^31); the oldest go first.
  // `size` and `max` without `capped` are InvalidOptions (72).
  bool capped = false;
  std::optional<int64_t> size;
  std::optional<int64_t> max;
  // The validator: query operators and $jsonSchema ({}: none).
  std::optional<Document> validator;
  std::optional<ValidationLevel> validation_level;
  std::optional<ValidationAction> validation_action;
  // A view (as Database::CreateView): the collection or view it reads
  // (non-empty) and its pipeline, an array of stages. A view takes no other
  // option; `pipeline` without `view_on` is InvalidOptions.
  std::optional<std::string> view_on;
  std::optional<Document> pipeline;
  // changeStreamPreAndPostImages: {enabled}: whether each update, replace
  // and delete records the document as it was (and an update as it became)
  // with its change event, for change streams' fullDocumentBeforeChange and
  // fullDocument "whenAvailable"/"required" (ChangeStreamOptions). A view
  // takes no such option (InvalidOptions, 72).
  std::optional<bool> change_stream_pre_and_post_images;
  // The collection's default collation, for its operations and its new
  // indexes when they name none.
  std::optional<Document> collation;
};

// collMod's `index`: which index (by name, or by key pattern: exactly one
// of the two) and what changes.
struct CollModIndex {
  std::string name;
  Document key_pattern;
  // The TTL expiry, 0..2147483647 (CannotCreateIndex, 67, otherwise); on a
  // single-field index that is not TTL yet, it makes it one.
  std::optional<int64_t> expire_after_seconds;
  // Hides the index from the planner, or shows it again (mongosh's
  // hideIndex / unhideIndex); see IndexOptions::hidden.
  std::optional<bool> hidden;
};

// collMod's changes (Database::CollMod); a field left unset is unchanged.
// The collMod command's document is decoded into these by the command
// layer (command/), from its table.
struct CollModOptions {
  std::optional<CollModIndex> index;
  std::optional<Document> validator;  // {} removes it
  std::optional<ValidationLevel> validation_level;
  std::optional<ValidationAction> validation_action;
  // A capped collection's limits, from the next insert on: cappedSize in
  // bytes (1..2^50, rounded as at create), cappedMax in documents
  // (< 2^31; 0 or less: no bound).
  std::optional<int64_t> capped_size;
  std::optional<int64_t> capped_max;
  // A view's new definition: both, and nothing else.
  std::optional<std::string> view_on;
  std::optional<Document> pipeline;  // an array of stages
  // Turns the recording of pre- and post-images on or off from the next
  // write on (CreateCollectionOptions::change_stream_pre_and_post_images).
  std::optional<bool> change_stream_pre_and_post_images;
};

enum class ExplainVerbosity { kQueryPlanner, kExecutionStats, kAllPlansExecution };

}  // namespace rockdoc

#endif  // ROCKDOC_OPTIONS_H_
