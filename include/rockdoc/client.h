// rockdoc/client.h: opening a database directory, databases, collections,
// and the operations on documents.
//
// A `Client` owns one open database directory (one RocksDB instance; one
// process at a time: a second opener gets DBPathInUse). It holds any number
// of named databases, each holding collections, as a MongoDB deployment does.
// `Database` and `Collection` are cheap handles (a name and a reference to
// the client's engine), created freely and copied by value; a collection
// springs into existence on its first insert, as in MongoDB.
//
// Thread safety: a Client and all handles derived from it may be used from
// many threads at once. Every write of a document (and its index entries) is
// one RocksDB transaction: concurrent writers never see half of one, and a
// read-modify-write of one document (an update) holds that document's lock,
// so concurrent updates never lose each other's changes. Multi-document
// writes (insertMany, updateMany, deleteMany) lock documents in one global
// order and, as MongoDB, never report an internal write conflict: a
// document whose lock wait would deadlock is rolled back alone and retried,
// so each call changes each matching document exactly once. A Cursor reads
// one consistent snapshot; one Cursor must not be used from two threads at
// once.
//
// Lifetime: handles and cursors keep the engine alive; Client::Close (or the
// destructor) flushes and closes the directory, after which operations on
// surviving handles fail with a clear error.
//
// The options the operations take are in rockdoc/options.h, what they
// return in rockdoc/results.h; this header includes both. The library's
// layers below the API include those two and never this one
// (src/README.md).
//
// Example:
//   auto client = rockdoc::Client::Open("/tmp/library");
//   rockdoc::Collection books = (*client)->GetDatabase("library").GetCollection("books");
//   auto r = books.InsertOne(rockdoc::FromJson(R"({"title": "Dune"})").value());
//   auto cursor = books.Find(rockdoc::Document());
//   while (cursor->Next()) std::cout << rockdoc::ToJson(cursor->document()) << "\n";
#ifndef ROCKDOC_CLIENT_H_
#define ROCKDOC_CLIENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rockdoc/document.h"
#include "rockdoc/export.h"
#include "rockdoc/options.h"
#include "rockdoc/results.h"
#include "rockdoc/status.h"

namespace rockdoc {

namespace internal {
class Engine;
class CursorImpl;
struct ClientAccess;
struct ClientRep;
}  // namespace internal

class Database;
class Collection;
class Session;
class Cursor;
class ChangeStream;
struct AggregateOptions;
namespace internal {
class SessionState;
class ChangeStreamImpl;
class ChangeSubscriptionImpl;
class LiveQueryImpl;
struct OpContext;
}

class ROCKDOC_EXPORT Client {
 public:
  // Opens (or creates) the database directory at `path`.
  // Errors: DBPathInUse (98) when another process (or another Client in
  // this process, under any spelling of the path) has it open;
  // NonExistentPath (29) when missing and create_if_missing is false;
  // UnsupportedFormat (12) when the directory holds something that is not a
  // rockdoc database, such as a symlink, FIFO or device (it is left
  // untouched); FileNotOpen (38) naming the path when permissions (or a
  // read-only file system) forbid reading or writing it;
  // DataCorruptionDetected (296) when the files are damaged. That includes a
  // write-ahead log damaged in the middle (intact records follow the damage)
  // or missing: opening would drop acknowledged writes, so nothing is
  // changed and the message says what was found. A torn tail (the last
  // write cut short by a crash) is not damage: it is dropped. To keep what
  // is intact, copy the directory and call Salvage.
  static StatusOr<std::unique_ptr<Client>> Open(const std::string& path,
                                                const ClientOptions& options = {});

  // Makes a database whose write-ahead log is damaged or missing openable
  // again, keeping every transaction before the first damage: the state
  // the database was in at that moment, so indexes and counts agree with
  // the documents. Transactions after the damage are discarded (their log
  // records counted in the report) and each damaged log is kept beside it as
  // <name>.damaged. On a healthy database it changes nothing and reports
  // no findings. Errors as Open's (never DataCorruptionDetected for the
  // log; still for a damaged MANIFEST or table file); the directory must
  // not be open.
  // Example:
  //   auto report = rockdoc::Client::Salvage("/data/library");
  //   for (const auto& f : report->findings) std::cerr << f << "\n";
  //   auto client = rockdoc::Client::Open("/data/library");
  static StatusOr<SalvageReport> Salvage(const std::string& path,
                                         const ClientOptions& options = {});
  // Re-encrypts the closed database directory `path` from `old_key` to
  // `new_key` (ClientOptions::encryption_key): each file is rewritten to a
  // temporary file under the new key, synced, and renamed over the old one.
  // An empty old_key encrypts a plain database; an empty new_key decrypts
  // one. A rotation that stops part-way (a crash, a full disk) leaves every
  // file whole, some under each key: the directory then opens with new_key
  // and old_key in previous_encryption_keys, and the same call run again
  // finishes it (files already under new_key are kept). Costs a rewrite of
  // every byte. DBPathInUse when the directory is open (in any process);
  // BadValue for a key that is not 32 bytes; InvalidOptions naming a file
  // under neither key (nothing is rewritten then).
  // Example:
  //   auto report = rockdoc::Client::RotateEncryptionKey("/data/library", old_key, new_key);
  static StatusOr<KeyRotationReport> RotateEncryptionKey(const std::string& path,
                                                         const std::string& old_key,
                                                         const std::string& new_key);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // A handle on the database `name` (created on first write). An invalid
  // name makes every operation on the handle fail with InvalidNamespace.
  Database GetDatabase(std::string_view name) const;
  // A session: a context for causally related operations and for
  // multi-document transactions (see Session). Cheap; not thread-safe
  // (one thread at a time, as a driver's ClientSession).
  StatusOr<Session> StartSession(const SessionOptions& options = {}) const;
  // Databases that hold at least one collection, sorted.
  StatusOr<std::vector<std::string>> ListDatabaseNames() const;
  // A change stream of every collection of every database but admin,
  // config and local (see ChangeStream).
  StatusOr<ChangeStream> Watch(DocumentView pipeline = {},
                               const ChangeStreamOptions& options = {}) const;
  // Changes the change log's retention while the directory is open, as
  // replSetResizeOplog changes the oplog's (ClientOptions::
  // change_log_max_bytes and change_log_min_retention_hours set it at open;
  // rockdoc-serve's replSetResizeOplog calls this): a smaller bound trims
  // at once. Not kept in the directory: the next open takes ClientOptions'.
  // BadValue for max_bytes <= 0 or hours < 0 (or NaN); IllegalOperation
  // when the change log is off.
  Status SetChangeLogRetention(int64_t max_bytes, double min_retention_hours) const;
  // Drops every collection of `name`. OK when there is none.
  Status DropDatabase(std::string_view name);

  // Flushes memtables and closes the directory. Idempotent. Operations on
  // handles that outlive it fail with IllegalOperation.
  Status Close();

  const std::string& path() const;
  StorageStats GetStorageStats() const;

  // Compacts the whole database: flushes the memtables, then rewrites every
  // table file down to the last level, dropping overwritten and deleted
  // versions. Afterwards GetStorageStats().live_sst_bytes is the size of the
  // live data alone (what the documents and indexes cost), not what write
  // amplification left behind. Blocks until done; other threads may go on
  // reading and writing meanwhile. Costs a full rewrite of the data: an
  // administrative call (MongoDB's compact command), not one for hot paths.
  // Errors: IllegalOperation after Close; OperationFailed (with RocksDB's
  // message) when the rewrite fails, e.g. on a full disk.
  Status Compact();

  // A read-only client (ClientOptions::read_only) reads what the
  // directory's owner has written up to now. Each operation that looks a
  // collection up catches up by itself; this is for a caller that holds a
  // cursor or a handle and wants the owner's latest writes seen at a point
  // of its choosing. OK and nothing for a read-write client.
  // IllegalOperation after Close.
  Status CatchUp() const;
  // Whether this client was opened read-only.
  bool read_only() const;

  // Forgets every query statistic ($queryStats): in memory now, and the
  // persisted ones at close. IllegalOperation after Close.
  Status ClearQueryStats() const;

  // Hot backup: writes an openable copy of the whole database, as it is at
  // one moment, into the new directory `dir`, while other threads go on
  // reading and writing (a RocksDB checkpoint: the memtables are flushed,
  // then the table files are hard-linked when `dir` is on the same file
  // system, copied otherwise). Client::Open(dir) opens the copy.
  // IllegalOperation (20) when `dir` exists; FileNotOpen or OperationFailed
  // naming the path when it cannot be written. A failed checkpoint may
  // leave a partial `dir` behind, which is not a database: remove it.
  // Example:
  //   ROCKDOC_RETURN_IF_ERROR(client->Checkpoint("/backups/library-2026-11-27"));
  Status Checkpoint(const std::string& dir) const;

  // Runs a MongoDB database command against database `db` and returns its
  // reply, as a MongoDB server would: {..., ok: 1}, or on failure
  // {ok: 0, errmsg, code, codeName, errorLabels?} (write commands report
  // per-statement failures in `writeErrors` with ok: 1). Never throws;
  // malformed BSON, unknown commands (CommandNotFound, 59), unknown fields
  // (40415) and wrong types (TypeMismatch, 14) are error replies. Commands
  // that return a cursor keep it on the client: getMore continues it,
  // killCursors closes it, and it closes itself after 10 minutes idle. The
  // commands, their fields and their replies: src/command/README.md.
  // Thread-safe.
  // Example:
  //   Document reply = client->RunCommand("shop", Json(R"({"find": "orders",
  //                                                     "filter": {"total": {"$gt": 5}}})"));
  //   if (reply.Get("ok").NumberAsDouble() != 1) ... reply.Get("errmsg") ...
  Document RunCommand(std::string_view db, DocumentView command) const;

 private:
  friend struct internal::ClientAccess;
  explicit Client(std::shared_ptr<internal::Engine> engine);
  std::shared_ptr<internal::Engine> engine_;
  // The rest of the client's state, which the public API does not name (the
  // command layer's cursors and sessions: api/client_internal.h).
  std::unique_ptr<internal::ClientRep> rep_;
};

class ROCKDOC_EXPORT Database {
 public:
  const std::string& name() const { return name_; }
  // A handle on the collection `name`; it exists once created or inserted into.
  Collection GetCollection(std::string_view name) const;
  // Creates an empty collection. NamespaceExists (48) if it exists;
  // InvalidNamespace (73) for a bad name.
  Status CreateCollection(std::string_view name) const;
  // The same with createCollection's options (CreateCollectionOptions in
  // rockdoc/options.h; the create command decodes its document into them,
  // refusing the options rockdoc does not implement): a validator (query
  // operators and $jsonSchema) with validationLevel and validationAction,
  // a capped collection's size and max, or a view's viewOn and pipeline (as
  // CreateView). InvalidOptions (72) for a combination MongoDB refuses
  // (capped without size, a view with other options, ...); the validator's
  // own parse errors.
  Status CreateCollection(std::string_view name, const CreateCollectionOptions& options) const;
  // The same, giving the collection's UUID (16 bytes) instead of a new
  // random one, as mongorestore --preserveUUID creates collections (no
  // create command field does this: MongoDB's applyOps `ui`). BadValue for
  // another length, or for a view's options (a view has no UUID). rockdoc
  // finds collections by name: the caller keeps UUIDs unique if it needs.
  Status CreateCollectionWithUuid(std::string_view name, const CreateCollectionOptions& options,
                                  std::string_view uuid) const;
  // Creates a view (db.createView): a read-only collection whose documents
  // are those of `pipeline` (an array of stages) run over `view_on` (a
  // collection or view of this database, existing or not), computed on
  // every read. Finds, counts, distinct, aggregates and their explains
  // work on a view (rewritten into an aggregate of the collection under
  // it); writes, index commands and Stats fail with
  // CommandNotSupportedOnView (166). NamespaceExists (48) when the name is
  // taken; OptionNotSupportedOnView (167) for $out or $merge in the
  // pipeline; GraphContainsCycle (93) when the view would read itself
  // (through viewOn, $lookup, $graphLookup or $unionWith);
  // ViewDepthLimitExceeded (165) past 20 nested views; the pipeline's own
  // parse errors. CreateCollection(name, {viewOn, pipeline}) does the same.
  // DropCollection drops a view; RenameCollection refuses one (166).
  Status CreateView(std::string_view name, std::string_view view_on, DocumentView pipeline) const;
  // Names of this database's collections and views, sorted.
  StatusOr<std::vector<std::string>> ListCollectionNames() const;
  // The same with each collection's options as listCollections shows them
  // ({capped, size, max, validator, validationLevel, validationAction}), and
  // each view's ({viewOn, pipeline}), and each collection's UUID
  // (listCollections' info.uuid).
  struct CollectionInfo {
    std::string name;
    Document options;
    bool is_view = false;
    std::string uuid;  // 16 bytes; empty for a view
  };
  StatusOr<std::vector<CollectionInfo>> ListCollections() const;
  // A pipeline without a collection (MongoDB's db.aggregate, {aggregate:
  // 1}): its first stage is {$documents: [...]}, the documents it runs over;
  // $lookup and $unionWith read this database's collections.
  StatusOr<Cursor> Aggregate(DocumentView pipeline) const;
  StatusOr<Cursor> Aggregate(DocumentView pipeline, const AggregateOptions& options) const;
  // A change stream of this database's collections (system.* excluded;
  // see ChangeStream).
  StatusOr<ChangeStream> Watch(DocumentView pipeline = {},
                               const ChangeStreamOptions& options = {}) const;

  // The profiler (mongosh's db.setProfilingLevel): `level` 0 (off), 1 (the
  // finds, counts, distincts and aggregates that take `slowms` or more), 2
  // (all of them), for this database; -1 changes nothing (mongosh's
  // db.getProfilingStatus()). Profiled operations are written to this
  // database's `system.profile` (a capped collection of 1 MiB, made on first
  // use) when it is read and when the client closes. `slowms` is one
  // setting for every database (100 by default), also the threshold of the
  // "Slow query" lines in the database's log (LOG) at every level. Returns
  // the settings before the call, as MongoDB's profile command: the level
  // (`was`) and slowms.
  // Errors: BadValue for another level or a negative slowms;
  // IllegalOperation for 1 or 2 when ClientOptions::collect_statistics is off.
  struct ProfilingStatus {
    int was = 0;
    int64_t slowms = 100;
  };
  StatusOr<ProfilingStatus> SetProfilingLevel(int level,
                                              std::optional<int64_t> slowms = std::nullopt) const;
  // Drops the collection with all its documents and indexes. OK (and
  // false in *existed) when there is none.
  Status DropCollection(std::string_view name, bool* existed = nullptr) const;
  // Renames `from` to `to` in this database. NamespaceNotFound (26) when
  // `from` does not exist; NamespaceExists (48) when `to` exists unless
  // drop_target is true.
  Status RenameCollection(std::string_view from, std::string_view to,
                          bool drop_target = false) const;
  // Drops every collection of the database.
  Status Drop() const;
  // collMod: changes a collection's options (CollModOptions in
  // rockdoc/options.h; the collMod command decodes its document into them).
  // rockdoc implements validator, validationLevel and validationAction, a
  // capped collection's cappedSize and cappedMax (applied from the next
  // insert, as MongoDB does; InvalidOptions (72) on other collections), and
  // `index` (changing a TTL index's expiry, or making a single-field index
  // a TTL index; the result says the expiry before and after); a view's
  // `view_on` and `pipeline` (both, and nothing else: InvalidOptions
  // otherwise; the checks of CreateView). NamespaceNotFound (26),
  // IndexNotFound (27), CannotCreateIndex (67) for an expiry out of range.
  StatusOr<CollModResult> CollMod(std::string_view collection,
                                  const CollModOptions& options) const;

 private:
  friend class Client;
  friend class Session;
  friend struct internal::ClientAccess;
  Database(std::shared_ptr<internal::Engine> engine, std::string name,
           std::shared_ptr<internal::SessionState> session = nullptr)
      : engine_(std::move(engine)), name_(std::move(name)), session_(std::move(session)) {}
  // CreateCollection's and CreateCollectionWithUuid's work (uuid: null for
  // a new random one).
  Status Create(std::string_view name, const CreateCollectionOptions& options,
                const std::string* uuid) const;
  std::shared_ptr<internal::Engine> engine_;
  std::string name_;
  // The session whose operations these are (null: none).
  std::shared_ptr<internal::SessionState> session_;
};

// A session and its multi-document transactions, with MongoDB's semantics:
//  - Between StartTransaction and CommitTransaction, every operation through
//    GetDatabase(...) handles of this session reads one snapshot (taken at
//    the transaction's first operation) plus its own writes, and its writes
//    become visible to others all at once at commit, across documents,
//    collections and databases of this client; AbortTransaction (or an
//    error, or EndSession, or the destructor) discards them all.
//  - Two transactions writing the same document: the second gets
//    WriteConflict (112) at once, labelled TransientTransactionError, and its
//    transaction is aborted (retry it whole; WithTransaction does). A write
//    outside any transaction to a document a transaction has written waits
//    for that transaction to end (up to lock_timeout_ms).
//  - Any failed operation inside a transaction aborts it (as the server
//    does); later operations and CommitTransaction then fail with
//    NoSuchTransaction (251), labelled TransientTransactionError.
//  - A transaction open longer than ClientOptions::transaction_lifetime_
//    limit_ms is aborted.
//  - Not allowed inside a transaction (OperationNotSupportedInTransaction,
//    263): creating views and capped collections, dropping collections and
//    indexes, renames, estimatedDocumentCount, validate, and creating
//    indexes on a collection the transaction did not create or has written
//    to. Creating a collection (Database::CreateCollection, inserting into
//    a missing one, CreateIndex on a missing one) and its indexes is, as
//    in MongoDB 4.4+, part of the transaction: other readers see the
//    collection once it commits, an abort leaves nothing, and another
//    creator of the name meanwhile gets WriteConflict (112).
// Outside a transaction, operations through the session behave as without
// one (each write is its own atomic change), except in a snapshot session.
// A Session is used by one thread at a time; sessions on different threads
// are independent.
class ROCKDOC_EXPORT Session {
 public:
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  // Ends the session (aborting an open transaction).
  ~Session();

  // A handle on database `name` whose operations run in this session.
  Database GetDatabase(std::string_view name) const;

  // IllegalOperation (20) "Transaction already in progress on this session."
  // when one is open; IllegalOperation for a snapshot or ended session.
  Status StartTransaction(const TransactionOptions& options = {});
  // Commits. IllegalOperation "No transaction started" when none was
  // started; NoSuchTransaction (251) when it was aborted (by an error or its
  // lifetime); WriteConflict (112) labelled TransientTransactionError when it
  // lost a conflict at commit. Committing again after a commit succeeds
  // (it is a retry of a commit that already happened), as with drivers.
  Status CommitTransaction();
  // Aborts. IllegalOperation "No transaction started", "Cannot call
  // abortTransaction twice" and "Cannot call abortTransaction after calling
  // commitTransaction", as the drivers say.
  Status AbortTransaction();
  // True between StartTransaction and its commit or abort.
  bool InTransaction() const;

  // The drivers' withTransaction: starts a transaction, runs `fn`, commits;
  // when `fn` or the commit fails with an error labelled
  // TransientTransactionError, the whole transaction runs again, and a
  // commit labelled UnknownTransactionCommitResult is retried, for up to
  // 120 s. Any other error aborts the transaction and is returned.
  Status WithTransaction(const std::function<Status(Session&)>& fn,
                         const TransactionOptions& options = {});

  // Ends the session, aborting an open transaction. Later operations through
  // it fail with IllegalOperation "Cannot use a session that has ended".
  Status EndSession();

 private:
  friend class Client;
  explicit Session(std::shared_ptr<internal::SessionState> state);
  std::shared_ptr<internal::SessionState> state_;
};

// A stream of documents over one consistent snapshot, read in batches as it
// goes (never all at once).
//
//   while (cursor.Next()) Use(cursor.document());
//   if (!cursor.status().ok()) ...
class ROCKDOC_EXPORT Cursor {
 public:
  Cursor(Cursor&&) noexcept;
  Cursor& operator=(Cursor&&) noexcept;
  ~Cursor();

  // Advances; false at the end or on error (then status() says which).
  bool Next();
  // The current document; valid until the next call to Next().
  DocumentView document() const;
  Status status() const;
  // The remaining documents, copied.
  StatusOr<std::vector<Document>> ToVector();

 private:
  friend class Collection;
  friend class Database;
  friend struct internal::ClientAccess;
  explicit Cursor(std::unique_ptr<internal::CursorImpl> impl);
  std::unique_ptr<internal::CursorImpl> impl_;
};

// A change stream (MongoDB's watch()): the changes committed to a
// collection, a database or the whole client, as MongoDB's change events,
// in commit order, from the change log (ClientOptions::change_log; off,
// Watch fails with 40573 as on a standalone mongod).
//
//   {_id: <resume token>, operationType: "insert" | "update" | "replace" |
//    "delete" | "drop" | "rename" | "dropDatabase" | "invalidate",
//    clusterTime: Timestamp, wallTime: Date,
//    fullDocument (insert, replace; update with "updateLookup"),
//    ns: {db, coll}, to: {db, coll} (rename), documentKey: {_id},
//    updateDescription: {updatedFields, removedFields, truncatedArrays}
//    (update), txnNumber and lsid (a multi-document transaction's events,
//    which share its clusterTime)}
//
// A collection's stream ends with an invalidate event after its
// collection's drop or rename, a database's after its dropDatabase (a
// collection's drops come first); then Next returns nullopt and closed()
// is true. startAfter the invalidate's token starts a new stream after it
// (resumeAfter it is InvalidResumeToken, 260).
//
// `pipeline` may hold the stages MongoDB allows after $changeStream
// ($match, $project, $addFields, $set, $unset, $replaceRoot,
// $replaceWith, $redact); another is IllegalOperation (20). Watch inside
// a multi-document transaction is OperationNotSupportedInTransaction (263).
// Pre- and post-images (fullDocument "whenAvailable"/"required",
// fullDocumentBeforeChange) and the expanded events (showExpandedEvents):
// ChangeStreamOptions.
//
//   auto stream = db.GetCollection("orders").Watch();
//   while (auto event = stream->Next()) { if (*event) Use(**event); }
class ROCKDOC_EXPORT ChangeStream {
 public:
  ChangeStream(ChangeStream&&) noexcept;
  ChangeStream& operator=(ChangeStream&&) noexcept;
  ~ChangeStream();

  // The next event, waiting up to max_await_time_ms for one; nullopt when
  // none came in that time (the stream stays open: call again).
  StatusOr<std::optional<Document>> Next();
  // The same without waiting.
  StatusOr<std::optional<Document>> TryNext();
  // The resume token after which the stream stands: the last event's _id,
  // or, when the stream has read further (past events its pipeline dropped,
  // or to the end of the log), a token for that point (a driver's
  // postBatchResumeToken). ChangeStreamOptions::resume_after takes it.
  Document resume_token() const;
  // Ends the stream; Next and TryNext then return nullopt at once.
  void Close();
  bool closed() const;

 private:
  friend class Client;
  friend class Database;
  friend class Collection;
  friend struct internal::ClientAccess;
  friend class internal::ChangeSubscriptionImpl;
  friend class internal::LiveQueryImpl;
  explicit ChangeStream(std::unique_ptr<internal::ChangeStreamImpl> impl);
  std::unique_ptr<internal::ChangeStreamImpl> impl_;
};

// A change stream read on a thread of rockdoc's own: each event is passed
// to `on_event` on that thread, in commit order, as soon as it commits;
// `on_end` runs once, last, on that thread, with OK when the stream ended
// (an invalidate, which on_event saw first, or Cancel) and otherwise with
// the error that ended it (the client closed: IllegalOperation, 20; the log
// trimmed past the stream: ChangeStreamHistoryLost, 286; a stage's error).
// The callbacks run one at a time; while one runs, the next events wait in
// the log, so a slow callback delays, never loses, events.
//
// Thread safety: Cancel, running and resume_token may be called from any
// thread, a callback's included. Destroying the subscription cancels it;
// from its own callback that only stops it (the thread ends by itself).
//
//   auto sub = ChangeSubscription::Start(
//       *orders.Watch(), [](const Document& e) { Apply(e); },
//       [](const Status& s) { if (!s.ok()) Log(s); });
//   ...
//   sub->Cancel();  // no callback runs after this returns
class ROCKDOC_EXPORT ChangeSubscription {
 public:
  using EventCallback = std::function<void(const Document& event)>;
  using EndCallback = std::function<void(const Status& status)>;

  // Starts reading `stream`. BadValue for an empty on_event or a closed
  // stream. `on_end` may be empty.
  static StatusOr<ChangeSubscription> Start(ChangeStream stream, EventCallback on_event,
                                            EndCallback on_end = nullptr);

  ChangeSubscription(ChangeSubscription&&) noexcept;
  ChangeSubscription& operator=(ChangeSubscription&&) noexcept;
  ~ChangeSubscription();

  // Stops the thread and waits for it to end: once Cancel returns, on_end
  // has run and no callback runs again. From a callback: stops after that
  // callback returns, without waiting.
  void Cancel();
  // Whether the thread is still reading (false once on_end has run).
  bool running() const;
  // The resume token after the last event delivered (or the point read
  // to): ChangeStreamOptions::resume_after takes it, after a restart too.
  Document resume_token() const;

 private:
  explicit ChangeSubscription(std::shared_ptr<internal::ChangeSubscriptionImpl> impl);
  std::shared_ptr<internal::ChangeSubscriptionImpl> impl_;
};

// Live queries: Collection::Observe keeps the result of a find up to date
// and reports each difference, as Meteor's observeChanges does. The result
// is an ordered list: by `sort`, ties (and no sort) by _id ascending, then
// `skip` and `limit`; each document projected by `projection`.
struct ObserveOptions {
  Document sort;        // {field: 1 | -1, ...}; no $meta, no $natural
  Document projection;  // as FindOptions::projection (positional included)
  int64_t skip = 0;     // >= 0
  int64_t limit = 0;    // 0: no limit; >= 0
  // Where the callbacks run after the initial result (which Observe itself
  // delivers, on the caller's thread, as `added` calls before it returns):
  // true, on a thread of rockdoc's own, as soon as each change commits;
  // false, on the thread that calls LiveQuery::Poll.
  bool own_thread = true;
};

// What a live query reports. A client that applies them in order to a list
// (insert `doc` before the document whose _id is `before`, or at the end
// when there is none; likewise for moved) holds the query's result. Each
// may be empty. They run one at a time, never concurrently.
struct ObserveCallbacks {
  // A document entered the result (projected; with its _id unless the
  // projection removes it: `id` is always given).
  std::function<void(const Value& id, const Document& doc, const std::optional<Value>& before)>
      added;
  // A document in the result changed: `fields` holds the top-level fields
  // (after projection) that are new or have new values; `removed_fields`
  // those that are gone.
  std::function<void(const Value& id, const Document& fields,
                     const std::vector<std::string>& removed_fields)>
      changed;
  // A document moved within the result, before `before` (none: to the end).
  std::function<void(const Value& id, const std::optional<Value>& before)> moved;
  // A document left the result (deleted, no longer matching, or pushed
  // past the limit).
  std::function<void(const Value& id)> removed;
  // The query stopped: OK after Stop; otherwise the error that ended it
  // (the client closed: IllegalOperation, 20). Runs once, last.
  std::function<void(const Status& status)> ended;
};

// A running live query (Collection::Observe).
//
// It follows the change log (ClientOptions::change_log must be on) and is
// maintained from its events, without re-running the query: an insert or
// replace is matched as it comes, an update's document is read by _id, a
// delete is removed. A query with a limit keeps up to `limit` more
// documents past the result as a buffer; it re-runs the query only when
// documents leave a result whose buffer is empty and more may exist (a
// requery, counted in requeries()). When the log no longer holds its
// position (ChangeStreamHistoryLost), the query is re-run and the
// differences reported, so it never misses a change. A drop or rename of
// the collection removes every document; the query goes on and sees a
// collection created again under the name.
//
// Thread safety: Stop, running, result and requeries may be called from any
// thread, a callback's included. Destroying the handle stops the query.
//
//   auto live = orders.Observe(*FromJson(R"({"status": "open"})"),
//                              {.sort = *FromJson(R"({"due": 1})"), .limit = 10},
//                              {.added = [](auto& id, auto& doc, auto& before) { ... }});
//   ...
//   live->Stop();  // no callback runs after this returns
class ROCKDOC_EXPORT LiveQuery {
 public:
  LiveQuery(LiveQuery&&) noexcept;
  LiveQuery& operator=(LiveQuery&&) noexcept;
  ~LiveQuery();

  // own_thread false: applies the changes committed so far and reports them
  // on this thread, waiting up to wait_ms for a first one when there is
  // none. Returns the error that ended the query (then `ended` has run), or
  // OK. IllegalOperation for a query on its own thread, or one stopped.
  Status Poll(int64_t wait_ms = 0);
  // Stops the query; once Stop returns, `ended` has run and no callback runs
  // again. From a callback: stops after that callback returns.
  void Stop();
  bool running() const;
  // The result as the callbacks have reported it so far.
  std::vector<Document> result() const;
  // How many times the query was re-run after the initial result.
  int64_t requeries() const;

 private:
  friend class Collection;
  explicit LiveQuery(std::shared_ptr<internal::LiveQueryImpl> impl);
  std::shared_ptr<internal::LiveQueryImpl> impl_;
};

// Time limits (maxTimeMS), as MongoDB applies them: a read checks its
// limit in the work loop of its plan (every scan, blocking-sort input and
// count), every 128 steps. A cursor's limit is cumulative processing time
// across its Next() calls (Find's planning included); time the caller spends
// between Next() calls does not count. A write checks before each document
// and inside long update operators ($addToSet $each, $push $sort, $pull)
// and bounds its lock waits by it. Each document's change is all-or-nothing:
// when updateMany or deleteMany runs out of time, the documents it changed
// before stay changed and the call returns MaxTimeMSExpired without saying
// how many (as MongoDB's write error does).
class ROCKDOC_EXPORT Collection {
 public:
  const std::string& name() const { return name_; }
  const std::string& database_name() const { return db_name_; }
  // "db.collection"
  std::string full_name() const { return db_name_ + "." + name_; }

  // Inserts one document. A document without `_id` gets an ObjectId as its
  // first field; an `_id` elsewhere is moved first. Errors: BadValue (2)
  // "object to insert too large. size in bytes: N, max size: 16777216";
  // BadValue for an array, regex or undefined `_id`; DollarPrefixedFieldName
  // (52) for '$'-prefixed names inside an `_id` document (elsewhere they are
  // allowed, as since MongoDB 5.0); Overflow (15) for nesting deeper than 100;
  // DuplicateKey (11000) "E11000 duplicate key error collection: db.c
  // index: _id_ dup key: { _id: 1 }".
  StatusOr<InsertOneResult> InsertOne(DocumentView doc) const;
  StatusOr<InsertOneResult> InsertOne(DocumentView doc, const InsertOneOptions& options) const;
  // Inserts many documents. Per-document failures are reported in the
  // result (an ordered insert keeps exactly the documents before the first
  // failure; an unordered one keeps every valid document); the returned
  // Status is an error only when nothing could be attempted.
  StatusOr<InsertManyResult> InsertMany(const std::vector<Document>& docs,
                                        const InsertManyOptions& options = {}) const;

  // The document whose `_id` equals `id`, or nullopt.
  StatusOr<std::optional<Document>> FindById(const Element& id) const;
  // Documents matching `filter` (MongoDB's query language), with sort,
  // projection, skip, limit and hint. Errors in the filter or options
  // (BadValue and friends) are returned here, before anything is read.
  StatusOr<Cursor> Find(DocumentView filter, const FindOptions& options = {}) const;
  // The first document Find would return, or nullopt.
  StatusOr<std::optional<Document>> FindOne(DocumentView filter,
                                            const FindOptions& options = {}) const;
  // The distinct values of `field` (dotted; array elements count one by one,
  // an element that is an array counts whole) among documents matching
  // `filter`, in MongoDB's value order.
  StatusOr<std::vector<Value>> Distinct(std::string_view field, DocumentView filter) const;
  StatusOr<std::vector<Value>> Distinct(std::string_view field, DocumentView filter,
                                        const DistinctOptions& options) const;
  // MongoDB's explain of the find: {queryPlanner: {winningPlan, rejectedPlans,
  // ...}, executionStats: {...}} (the latter at the two higher verbosities).
  StatusOr<Document> ExplainFind(DocumentView filter, const FindOptions& options,
                                 ExplainVerbosity verbosity) const;
  // Runs the aggregation pipeline `pipeline` (an array of stages, e.g.
  // [{$match: ...}, {$group: ...}]) over this collection; see
  // src/pipeline/pipeline.h for the stages rockdoc has. A malformed stage
  // fails here, with MongoDB's code, before any document is read.
  StatusOr<Cursor> Aggregate(DocumentView pipeline, const AggregateOptions& options = {}) const;
  // A change stream of this collection (see ChangeStream).
  StatusOr<ChangeStream> Watch(DocumentView pipeline = {},
                               const ChangeStreamOptions& options = {}) const;
  // A live query of this collection's documents that match `filter` (see
  // LiveQuery): delivers the initial result as `added` calls before it
  // returns, then every difference. Errors: as Find's for the filter, sort
  // and projection; 40573 when the change log is off; BadValue for a
  // negative skip or limit, a $natural or $meta sort; CommandNotSupportedOnView
  // (166) on a view; OperationNotSupportedInTransaction (263) in a transaction.
  StatusOr<LiveQuery> Observe(DocumentView filter, const ObserveOptions& options,
                              ObserveCallbacks callbacks) const;
  // MongoDB's explain of the aggregate: the find's explain when the find is
  // the whole pipeline, else {explainVersion, stages: [{$cursor: <the find's
  // explain>}, {<stage>: <spec>}...]}, with nReturned and
  // executionTimeMillisEstimate per stage at the two higher verbosities
  // (which run the pipeline).
  StatusOr<Document> ExplainAggregate(DocumentView pipeline, const AggregateOptions& options,
                                      ExplainVerbosity verbosity) const;
  // MongoDB's explain of the distinct: the plan of the query that reads the
  // documents matching `filter` (Distinct runs that find and collects the
  // values of `field`); the key is checked as Distinct checks it.
  StatusOr<Document> ExplainDistinct(std::string_view field, DocumentView filter,
                                     const DistinctOptions& options,
                                     ExplainVerbosity verbosity) const;

  // Replaces the first document matching `filter` by `replacement` (which
  // keeps the old `_id`; a different `_id` is ImmutableField (66)).
  StatusOr<UpdateResult> ReplaceOne(DocumentView filter, DocumentView replacement,
                                    bool upsert = false) const;
  StatusOr<UpdateResult> ReplaceOne(DocumentView filter, DocumentView replacement,
                                    const UpdateOptions& options) const;
  StatusOr<DeleteResult> DeleteOne(DocumentView filter, const DeleteOptions& options = {}) const;
  StatusOr<DeleteResult> DeleteMany(DocumentView filter, const DeleteOptions& options = {}) const;

  // Applies `update` (update operators such as {$set: {...}}, or a
  // replacement document) to the first / every document matching `filter`.
  // The update is parsed and checked before anything is read; each
  // document's change is atomic; a result over 16 MiB fails with code 17419
  // and leaves the document as it was; an update that changes nothing
  // counts as matched, not modified, and writes nothing.
  StatusOr<UpdateResult> UpdateOne(DocumentView filter, DocumentView update,
                                   const UpdateOptions& options = {}) const;
  StatusOr<UpdateResult> UpdateMany(DocumentView filter, DocumentView update,
                                    const UpdateOptions& options = {}) const;
  // The same with an update pipeline ([{$set: {total: {$add: ["$a", "$b"]}}}]):
  // each target becomes what the stages make of it (UpdatePipeline).
  StatusOr<UpdateResult> UpdateOne(DocumentView filter, const UpdatePipeline& update,
                                   const UpdateOptions& options = {}) const;
  StatusOr<UpdateResult> UpdateMany(DocumentView filter, const UpdatePipeline& update,
                                    const UpdateOptions& options = {}) const;
  // Atomically find one document (the first in `sort` order), change it
  // and return it before or after the change (projected), or nullopt.
  // `result`, if not null, receives what the change did (matched,
  // modified, and the _id of an upserted document): findAndModify's
  // lastErrorObject.
  StatusOr<std::optional<Document>> FindOneAndUpdate(DocumentView filter, DocumentView update,
                                                     const FindOneAndModifyOptions& options = {},
                                                     UpdateResult* result = nullptr) const;
  StatusOr<std::optional<Document>> FindOneAndUpdate(DocumentView filter,
                                                     const UpdatePipeline& update,
                                                     const FindOneAndModifyOptions& options = {},
                                                     UpdateResult* result = nullptr) const;
  StatusOr<std::optional<Document>> FindOneAndReplace(DocumentView filter,
                                                      DocumentView replacement,
                                                      const FindOneAndModifyOptions& options = {},
                                                      UpdateResult* result = nullptr) const;
  StatusOr<std::optional<Document>> FindOneAndDelete(
      DocumentView filter, const FindOneAndModifyOptions& options = {}) const;
  // Explain of the plan that finds an update's or a delete's targets.
  StatusOr<Document> ExplainUpdate(DocumentView filter, DocumentView update, bool multi,
                                   const UpdateOptions& options,
                                   ExplainVerbosity verbosity) const;
  StatusOr<Document> ExplainUpdate(DocumentView filter, const UpdatePipeline& update, bool multi,
                                   const UpdateOptions& options,
                                   ExplainVerbosity verbosity) const;
  StatusOr<Document> ExplainDelete(DocumentView filter, bool multi,
                                   ExplainVerbosity verbosity) const;
  // The same with the delete's options (its hint).
  StatusOr<Document> ExplainDelete(DocumentView filter, bool multi, const DeleteOptions& options,
                                   ExplainVerbosity verbosity) const;

  // ---- Indexes ----
  // Creates an index (a no-op when an identical one exists); builds it over
  // the existing documents without holding them in memory. Returns the
  // index name. Errors: CannotIndexParallelArrays (171), DuplicateKey
  // (11000) for a unique index over duplicates (no partial index is left),
  // IndexOptionsConflict (85) / IndexKeySpecsConflict (86), BadValue or
  // CannotCreateIndex (67) for a malformed key pattern, NotImplemented (238)
  // "X indexes are not supported by rockdoc" for a special index type in
  // the key pattern (text, 2d, 2dsphere, hashed, wildcard "$**"). `progress`,
  // when given, is called with the number of documents indexed so far.
  StatusOr<std::string> CreateIndex(DocumentView keys, const IndexOptions& options = {},
                                    const std::function<void(int64_t)>& progress = {}) const;
  // createIndexes: every model is validated (options and key pattern, and
  // against the existing indexes) before anything is built, then all are
  // built and published together or none is: when one build fails (a
  // unique violation, say), the indexes built by this call are removed.
  // Returns the names, in order (an index that already exists, identical,
  // is not built again). Errors as CreateIndex;
  // BadValue for no index. `progress` as CreateIndex's, for each build.
  // `report`, when given, gets what MongoDB's createIndexes reply says
  // besides (counted as the call saw the collection, inside a transaction
  // too, where listIndexes does not run).
  struct CreateIndexesReport {
    int32_t num_indexes_before = 0;  // _id_ included
    int32_t num_indexes_after = 0;
    bool created_collection_automatically = false;
  };
  StatusOr<std::vector<std::string>> CreateIndexes(
      const std::vector<IndexModel>& indexes,
      const std::function<void(int64_t)>& progress = {},
      CreateIndexesReport* report = nullptr) const;
  // Every index as listIndexes shows it: {v: 2, key: {...}, name: "...",
  // unique?: true, ...}, the _id_ index first.
  StatusOr<std::vector<Document>> ListIndexes() const;
  // Drops by name. IndexNotFound (27); the _id_ index cannot be dropped
  // (InvalidOptions 72).
  Status DropIndex(std::string_view name) const;
  // Drops by key pattern.
  Status DropIndexByKey(DocumentView keys) const;
  // Drops every index but _id_.
  Status DropIndexes() const;
  // Per-index usage counters, as $indexStats: {name, key, accesses: {ops}}.
  StatusOr<std::vector<Document>> IndexStats() const;

  // ---- Search indexes (MongoDB's createSearchIndexes and friends) ----
  // Search indexes are apart from the indexes above (ListIndexes does not
  // list them, DropIndexes does not drop them, no find plans with them), as
  // in MongoDB; they are kept by every write, in its transaction, like any
  // index. rockdoc builds type "vectorSearch" (the $vectorSearch stage of
  // Aggregate; README "Vector search"); type "search" (Atlas Search) is
  // NotImplemented (238).
  //
  // Creates each, built over the existing documents, and returns their
  // names. A model's name defaults to "default". Errors: BadValue (2) for a
  // bad definition, NotImplemented for quantization "scalar"/"binary",
  // IndexKeySpecsConflict (86) / IndexOptionsConflict (85) for a name or
  // path already indexed otherwise.
  //
  // Example:
  //   coll.CreateSearchIndexes({{"vec", "vectorSearch", *ParseJson(R"({"fields": [
  //       {"type": "vector", "path": "embedding", "numDimensions": 3,
  //        "similarity": "cosine"}, {"type": "filter", "path": "genre"}]})")}});
  StatusOr<std::vector<std::string>> CreateSearchIndexes(
      const std::vector<SearchIndexModel>& models) const;
  // The search indexes ({id, name, type, status: "READY", queryable: true,
  // latestDefinition}), or only the one named `name`.
  StatusOr<std::vector<Document>> ListSearchIndexes(
      const std::optional<std::string>& name = std::nullopt) const;
  // Drops the search index `name`. IndexNotFound (27) when there is none.
  Status DropSearchIndex(std::string_view name) const;
  // Replaces the definition of the search index `name` (its entries are
  // rebuilt from the documents). IndexNotFound (27) when there is none;
  // errors of the definition as CreateSearchIndexes'.
  Status UpdateSearchIndex(std::string_view name, DocumentView definition) const;

  // Documents matching `filter`, counted.
  StatusOr<int64_t> CountDocuments(DocumentView filter, const CountOptions& options = {}) const;
  // MongoDB's explain of the count: the plan under a COUNT stage. A count
  // whose filter an index answers alone examines keys, not documents.
  StatusOr<Document> ExplainCount(DocumentView filter, const CountOptions& options,
                                  ExplainVerbosity verbosity) const;
  // The collection's document count from its metadata (exact in rockdoc:
  // the count is updated in the same transaction as the documents).
  StatusOr<int64_t> EstimatedDocumentCount() const;

  // Drops the collection. OK when it does not exist.
  Status Drop() const;
  // Checks every document (valid BSON within limits, `_id` key agrees with
  // the document), the stored count, and every index entry against its
  // document and back.
  StatusOr<ValidateResult> Validate() const;

  // Counts and sizes (collStats). NamespaceNotFound (26) when the collection
  // does not exist. Reads every document (MongoDB keeps the data size with
  // the count; rockdoc sums it).
  StatusOr<CollectionStats> Stats() const;
  // What the store records of the collection's writes (GrowthStatistics),
  // from memory: no document is read, so unknown document sizes stay
  // unknown (Stats() rebuilds them). With collect_statistics off, what the
  // clients with them on recorded (this one's writes add nothing and make
  // the sizes unknown). NamespaceNotFound (26) when the collection does
  // not exist.
  StatusOr<GrowthStatistics> GrowthStats() const;

 private:
  friend class Database;
  StatusOr<InsertManyResult> InsertManyImpl(const std::vector<Document>& docs,
                                            const InsertManyOptions& options,
                                            const internal::OpContext& op) const;
  // FindOneAndUpdate / ExplainUpdate of operators or a pipeline.
  StatusOr<std::optional<Document>> FindOneAndUpdateImpl(DocumentView filter, DocumentView update,
                                                         bool pipeline,
                                                         const FindOneAndModifyOptions& options,
                                                         UpdateResult* result) const;
  StatusOr<Document> ExplainUpdateImpl(DocumentView filter, DocumentView update, bool pipeline,
                                       bool multi, const UpdateOptions& options,
                                       ExplainVerbosity verbosity) const;
  // A read of a view: the collection under it (nested views resolved) and
  // the views' pipeline over it. ResolveView: nullopt when this is no view.
  // The reads below run a read of a view (api/views.cc).
  using ViewRead = std::pair<Collection, Document>;
  StatusOr<std::optional<ViewRead>> ResolveView() const;
  StatusOr<Cursor> FindOnView(const ViewRead& view, DocumentView filter,
                              const FindOptions& options) const;
  StatusOr<Document> ExplainFindOnView(const ViewRead& view, DocumentView filter,
                                       const FindOptions& options, ExplainVerbosity verbosity) const;
  StatusOr<int64_t> CountOnView(const ViewRead& view, DocumentView filter,
                                const CountOptions& options) const;
  StatusOr<Document> ExplainCountOnView(const ViewRead& view, DocumentView filter,
                                        const CountOptions& options,
                                        ExplainVerbosity verbosity) const;
  // The finds an aggregation pipeline runs (internal::FindFn).
  std::function<StatusOr<std::unique_ptr<internal::CursorImpl>>(std::string_view, DocumentView,
                                                                const FindOptions&)>
  PipelineFind() const;
  // The same with the aggregate's collation (given, or the collection's
  // default) on its finds; NotImplemented for a pipeline rockdoc cannot
  // run under one (AggregateOptions::collation).
  StatusOr<std::function<StatusOr<std::unique_ptr<internal::CursorImpl>>(
      std::string_view, DocumentView, const FindOptions&)>>
  CollatedPipelineFind(DocumentView pipeline, const AggregateOptions& options) const;
  Collection(std::shared_ptr<internal::Engine> engine, std::string db, std::string name,
             std::shared_ptr<internal::SessionState> session = nullptr)
      : engine_(std::move(engine)),
        db_name_(std::move(db)),
        name_(std::move(name)),
        session_(std::move(session)) {}
  std::shared_ptr<internal::Engine> engine_;
  std::string db_name_;
  std::string name_;
  // The session whose operations these are (null: none).
  std::shared_ptr<internal::SessionState> session_;
};

}  // namespace rockdoc

#endif  // ROCKDOC_CLIENT_H_
