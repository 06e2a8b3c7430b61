/* rockdoc/c.h: rockdoc's C API (C99), for C programs and for other languages'
 * foreign-function interfaces (Python's ctypes, Go's cgo, Rust, ...).
 *
 * In the style of LevelDB's and SQLite's C APIs:
 *   - handles are opaque (rockdoc_client_t, rockdoc_cursor_t,
 *     rockdoc_options_t, rockdoc_change_stream_t, rockdoc_subscription_t,
 *     rockdoc_live_query_t);
 *   - documents are BSON bytes plus a length, so each language uses its own
 *     BSON library (in C, libbson, Debian's libbson-dev: bson_get_data(b)
 *     and b->len in, bson_init_static out; rockdoc itself needs none); a
 *     length that disagrees with the document's own header, or bytes that
 *     are not valid BSON, are an error (InvalidBSON, 22), never a read past
 *     the buffer;
 *   - errors are a MongoDB error code plus a message, in a rockdoc_error_t
 *     the caller owns: initialize it with ROCKDOC_ERROR_INIT, pass its
 *     address (or NULL to ignore errors), and release its message with
 *     rockdoc_error_clear. A function that fails sets it and returns 0 /
 *     NULL; one that succeeds leaves it as it was;
 *   - every buffer the library returns (replies, messages) is released with
 *     rockdoc_free;
 *   - no C++ exception and no abort crosses this boundary: NULL handles,
 *     NULL strings and malformed documents are errors (BadValue, 2;
 *     InvalidBSON, 22); an unexpected failure is InternalError (1).
 *
 * Lifetime and threads: a client is thread-safe (many threads may use one
 * client at once); a cursor is used by one thread at a time, and must be
 * closed before its client. A document a cursor lends (rockdoc_cursor_next)
 * is valid until the next call on that cursor. rockdoc_close releases the
 * client whatever its result.
 *
 * Example:
 *   rockdoc_error_t err = ROCKDOC_ERROR_INIT;
 *   rockdoc_client_t* db = rockdoc_open("/tmp/shop", NULL, &err);
 *   if (!db) { fprintf(stderr, "%d %s\n", err.code, err.message); ... }
 *   rockdoc_insert_one(db, "shop", "orders", doc, doc_len, &err);
 *   rockdoc_cursor_t* c = rockdoc_find(db, "shop", "orders", filter, filter_len,
 *                                      NULL, 0, &err);
 *   const uint8_t* d; size_t n;
 *   while (rockdoc_cursor_next(c, &d, &n, &err)) use(d, n);
 *   rockdoc_cursor_close(c);
 *   rockdoc_close(db, &err);
 *   rockdoc_error_clear(&err);
 *
 * Bindings (Python's bindings/python/, Node.js's bindings/node/; Go, Rust,
 * Swift, Kotlin to follow the same path): a binding that offers its MongoDB driver's API
 * needs only rockdoc_open / rockdoc_close, rockdoc_run_command and, for
 * writes in its driver's batches, rockdoc_run_batch_command. It builds
 * the very commands its driver would send to a server (insert, update,
 * delete, find + getMore + killCursors, aggregate, findAndModify, count,
 * distinct, createIndexes, listIndexes, dropIndexes; lsid, txnNumber,
 * autocommit and startTransaction for sessions and transactions;
 * commitTransaction / abortTransaction on "admin"; an aggregate that opens
 * with $changeStream, read by getMore with maxTimeMS, for watch()), encodes
 * them with the driver's own BSON library and codec options, and maps an
 * ok: 0 reply (or a reply's writeErrors) onto the driver's own exception
 * classes by code, as the driver maps a server's replies. So the binding
 * accepts and refuses exactly what rockdoc-serve does for that driver, and
 * a test can run the same assertions through both. The calls block: a
 * binding releases its interpreter's lock around each (Python's GIL; a
 * Node.js addon runs them on its worker pool), which is safe because a
 * client is thread-safe; it closes a client only when no call of its is in
 * flight (the Python module defers the close to the last one), and closes
 * the clients left open at its interpreter's exit.
 *   Python: client.shop.orders.insert_one({"sku": "a1"}) becomes
 *   rockdoc_run_command(db, "shop",
 *       bson({insert: "orders", documents: [{_id: ObjectId(..), sku: "a1"}],
 *             ordered: true}), &reply, &reply_len, &err)
 *   and reply {n: 1, ok: 1} becomes InsertOneResult(inserted_id).
 *   Node.js: await db.collection("orders").insertOne({sku: "a1"}) becomes
 *   the same command, encoded with js-bson and run by the addon on libuv's
 *   worker pool (Napi::AsyncWorker), the promise settled on the JavaScript
 *   thread with the reply's bytes; a cursor's id is read from those bytes
 *   as a 64-bit integer (a double would round it). The addon counts the
 *   calls inside the engine and closes a client only once none is (also
 *   from its environment cleanup hook at process exit, which may come
 *   while a worker still runs one). Node.js needed nothing beyond these
 *   entry points: the other calls below are for C programs and for
 *   bindings that want a native path (rockdoc_watch, rockdoc_subscribe,
 *   rockdoc_observe) rather than their driver's commands.
 */
#ifndef ROCKDOC_C_H_
#define ROCKDOC_C_H_

#include <stddef.h>
#include <stdint.h>

#include "rockdoc/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rockdoc_client_t rockdoc_client_t;
typedef struct rockdoc_cursor_t rockdoc_cursor_t;
typedef struct rockdoc_options_t rockdoc_options_t;
typedef struct rockdoc_change_stream_t rockdoc_change_stream_t;
typedef struct rockdoc_subscription_t rockdoc_subscription_t;
typedef struct rockdoc_live_query_t rockdoc_live_query_t;

/* An error: MongoDB's numeric code (0: none) and a message (NULL: none). */
typedef struct rockdoc_error_t {
  int32_t code;
  char* message;
} rockdoc_error_t;
#define ROCKDOC_ERROR_INIT {0, NULL}

/* Releases err->message and resets *err to ROCKDOC_ERROR_INIT. */
ROCKDOC_EXPORT void rockdoc_error_clear(rockdoc_error_t* err);

/* Releases a buffer the library returned (NULL is fine). */
ROCKDOC_EXPORT void rockdoc_free(void* ptr);

/* The library's version, "0.1.0" (static storage). */
ROCKDOC_EXPORT const char* rockdoc_version(void);

/* ---- Options (all optional: NULL options means the defaults) ---- */

ROCKDOC_EXPORT rockdoc_options_t* rockdoc_options_create(void);
ROCKDOC_EXPORT void rockdoc_options_destroy(rockdoc_options_t* options);
/* Create the directory when missing (default 1). */
ROCKDOC_EXPORT void rockdoc_options_set_create_if_missing(rockdoc_options_t* options, int value);
/* Sync the write-ahead log on every commit (default 0). */
ROCKDOC_EXPORT void rockdoc_options_set_sync(rockdoc_options_t* options, int value);
/* The block cache's size in bytes (default: sized from memory as MongoDB
 * sizes WiredTiger's cache, half of (RAM or the cgroup's limit - 1 GiB) and
 * at least 256 MiB; rockdoc::DefaultBlockCacheBytes in rockdoc/options.h). */
ROCKDOC_EXPORT void rockdoc_options_set_block_cache_bytes(rockdoc_options_t* options, size_t bytes);
/* Keep the change log that change streams read (default 0, as a standalone
 * mongod has no oplog; ClientOptions::change_log says what it costs). An
 * open without it drops the log a previous open kept. */
ROCKDOC_EXPORT void rockdoc_options_set_change_log(rockdoc_options_t* options, int value);
/* Open read-only beside the process that owns the directory for writing
 * (default 0; ClientOptions::read_only): the owner's writes are seen as
 * they come, this client's writes fail with IllegalOperation (20). */
ROCKDOC_EXPORT void rockdoc_options_set_read_only(rockdoc_options_t* options, int value);
/* The record cache's budget in bytes (default 64 MiB; 0 turns it off;
 * ClientOptions::record_cache_bytes). */
ROCKDOC_EXPORT void rockdoc_options_set_record_cache_bytes(rockdoc_options_t* options,
                                                           size_t bytes);

/* Encryption at rest (ClientOptions::encryption_key): the `size` bytes of
 * an AES-256 key (32; another size fails at open with BadValue). Copied;
 * NULL or size 0 turns encryption off. */
ROCKDOC_EXPORT void rockdoc_options_set_encryption_key(rockdoc_options_t* options,
                                                       const void* key, size_t size);
/* The same from a file as mongod's --encryptionKeyFile holds it (the base64
 * of 32 bytes, readable by its owner alone: EncryptionKeyFromFile). 1 on
 * success; 0 with `err` set (BadValue, FileNotOpen) otherwise. */
ROCKDOC_EXPORT int rockdoc_options_set_encryption_key_file(rockdoc_options_t* options,
                                                           const char* path,
                                                           rockdoc_error_t* err);
/* A key files may still be under after a key rotation that stopped
 * part-way (ClientOptions::previous_encryption_keys); read, never written. */
ROCKDOC_EXPORT void rockdoc_options_add_previous_encryption_key(rockdoc_options_t* options,
                                                                const void* key, size_t size);
/* Re-encrypts the closed directory `path` from one key to another
 * (Client::RotateEncryptionKey; size 0 for no key: encrypts or decrypts a
 * database). 1 on success; 0 with `err` set otherwise. */
ROCKDOC_EXPORT int rockdoc_rotate_encryption_key(const char* path, const void* old_key,
                                                 size_t old_size, const void* new_key,
                                                 size_t new_size, rockdoc_error_t* err);

/* ---- Clients ---- */

/* Opens (or creates) the database directory `path`. NULL on failure:
 * DBPathInUse (98) when another client has it open, NonExistentPath (29),
 * DataCorruptionDetected (296), ... (see Client::Open). */
ROCKDOC_EXPORT rockdoc_client_t* rockdoc_open(const char* path, const rockdoc_options_t* options,
                                              rockdoc_error_t* err);

/* Closes the directory and releases the client (NULL is fine). Returns 1,
 * or 0 when closing failed (the client is released all the same). */
ROCKDOC_EXPORT int rockdoc_close(rockdoc_client_t* client, rockdoc_error_t* err);

/* Hot backup (Client::Checkpoint): writes an openable copy of the whole
 * database into the new directory `dir` while the client stays in use.
 * Returns 1, or 0 with the error: IllegalOperation (20) when `dir` exists. */
ROCKDOC_EXPORT int rockdoc_checkpoint(rockdoc_client_t* client, const char* dir,
                                      rockdoc_error_t* err);

/* ---- Commands ---- */

/* Runs a MongoDB database command (BSON) against database `db`. On success
 * returns 1 and *reply / *reply_len hold the reply (release it with
 * rockdoc_free). A command that fails (ok: 0) returns 0 with its code and
 * errmsg in *err, and still gives the reply (for writeErrors and the like,
 * a reply with ok: 1 is a success). Bad arguments return 0 with no reply
 * (*reply set to NULL). */
ROCKDOC_EXPORT int rockdoc_run_command(rockdoc_client_t* client, const char* db,
                                       const uint8_t* command, size_t command_len, uint8_t** reply,
                                       size_t* reply_len, rockdoc_error_t* err);

/* MongoDB's maxMessageSizeBytes (hello reports it): the most a driver puts
 * in one message of the wire protocol. */
#define ROCKDOC_MAX_MESSAGE_SIZE 48000000

/* rockdoc_run_command for a command that carries a driver's batch (insert's
 * documents, update's updates, delete's deletes): the command may be as
 * large as one message, ROCKDOC_MAX_MESSAGE_SIZE bytes, where
 * rockdoc_run_command takes 16 MiB + 16 KiB, as rockdoc-serve takes such a
 * command whose documents came as a document sequence. Each document in it
 * is still held to 16 MiB by the command (a larger one is that statement's
 * write error, BadValue 2, as mongod answers). A binding sends its writes
 * through this, in the batches its driver would send, so that they split
 * and fail as they do over the wire. A larger command is
 * BSONObjectTooLarge (10334), with no reply. */
ROCKDOC_EXPORT int rockdoc_run_batch_command(rockdoc_client_t* client, const char* db,
                                             const uint8_t* command, size_t command_len,
                                             uint8_t** reply, size_t* reply_len,
                                             rockdoc_error_t* err);

/* Runs a command that answers with a cursor (find, listCollections,
 * listIndexes, ...) and returns a cursor over all its results: the first
 * batch, then getMore as it is read. NULL on failure. */
ROCKDOC_EXPORT rockdoc_cursor_t* rockdoc_command_cursor(rockdoc_client_t* client, const char* db,
                                                        const uint8_t* command, size_t command_len,
                                                        rockdoc_error_t* err);

/* Lends the next document: returns 1 and sets *doc / *doc_len (valid until
 * the next call on this cursor); 0 at the end, or on an error (then *err is
 * set; check err->code). */
ROCKDOC_EXPORT int rockdoc_cursor_next(rockdoc_cursor_t* cursor, const uint8_t** doc,
                                       size_t* doc_len, rockdoc_error_t* err);

/* Closes the cursor (on the server side too) and releases it (NULL is
 * fine). */
ROCKDOC_EXPORT void rockdoc_cursor_close(rockdoc_cursor_t* cursor);

/* ---- Convenience calls (each one command: insert, find, update, delete) ---- */

/* Inserts one document (an _id is added when it has none). DuplicateKey
 * (11000) and other write errors are returned in *err. */
ROCKDOC_EXPORT int rockdoc_insert_one(rockdoc_client_t* client, const char* db,
                                      const char* collection, const uint8_t* doc, size_t doc_len,
                                      rockdoc_error_t* err);

/* Finds the documents matching `filter` (NULL: all). `options`, if not
 * NULL, is a BSON document of find command fields: sort, projection, skip,
 * limit, hint, batchSize, maxTimeMS, ... */
ROCKDOC_EXPORT rockdoc_cursor_t* rockdoc_find(rockdoc_client_t* client, const char* db,
                                              const char* collection, const uint8_t* filter,
                                              size_t filter_len, const uint8_t* options,
                                              size_t options_len, rockdoc_error_t* err);

/* Updates the first (multi = 0) or every (multi = 1) document matching
 * `filter` with `update` (operators or a replacement). *matched and
 * *modified (if not NULL) receive the counts; an upserted document counts
 * as matched. */
ROCKDOC_EXPORT int rockdoc_update(rockdoc_client_t* client, const char* db, const char* collection,
                                  const uint8_t* filter, size_t filter_len, const uint8_t* update,
                                  size_t update_len, int multi, int upsert, int64_t* matched,
                                  int64_t* modified, rockdoc_error_t* err);

/* Deletes the first (multi = 0) or every (multi = 1) document matching
 * `filter`; *deleted (if not NULL) receives the count. */
ROCKDOC_EXPORT int rockdoc_delete(rockdoc_client_t* client, const char* db, const char* collection,
                                  const uint8_t* filter, size_t filter_len, int multi,
                                  int64_t* deleted, rockdoc_error_t* err);

/* ---- Change streams (MongoDB's watch(); rockdoc::ChangeStream) ---- */

/* Opens a change stream of `db`.`collection`, of `db` (collection NULL) or
 * of every database but admin, config and local (db and collection NULL).
 * `pipeline` (NULL: none) is a BSON array of the stages MongoDB allows after
 * $changeStream, sent as a document ({"0": {...}, "1": {...}}); `spec` (NULL:
 * none) holds the $changeStream stage's fields (fullDocument, resumeAfter,
 * startAfter, startAtOperationTime, ...; an unknown one is 40415).
 * `max_await_ms`: how long rockdoc_change_stream_next waits for an event.
 * NULL on failure: 40573 when the client has no change log, and the errors
 * of Watch (rockdoc/client.h). Closed with rockdoc_change_stream_close,
 * before its client; used by one thread at a time. */
ROCKDOC_EXPORT rockdoc_change_stream_t* rockdoc_watch(rockdoc_client_t* client, const char* db,
                                                      const char* collection,
                                                      const uint8_t* pipeline, size_t pipeline_len,
                                                      const uint8_t* spec, size_t spec_len,
                                                      int64_t max_await_ms, rockdoc_error_t* err);

/* Lends the next event (valid until the next call on this stream): returns
 * 1 with *event / *event_len; 0 when none came within max_await_ms, when
 * the stream is closed (rockdoc_change_stream_closed), or on an error (then
 * *err is set: check err->code). _try_next does not wait. */
ROCKDOC_EXPORT int rockdoc_change_stream_next(rockdoc_change_stream_t* stream,
                                              const uint8_t** event, size_t* event_len,
                                              rockdoc_error_t* err);
ROCKDOC_EXPORT int rockdoc_change_stream_try_next(rockdoc_change_stream_t* stream,
                                                  const uint8_t** event, size_t* event_len,
                                                  rockdoc_error_t* err);

/* Lends the resume token after which the stream stands (valid until the
 * next call on this stream): spec's resumeAfter takes it. Returns 1, or 0
 * for a NULL argument. */
ROCKDOC_EXPORT int rockdoc_change_stream_resume_token(rockdoc_change_stream_t* stream,
                                                      const uint8_t** token, size_t* token_len,
                                                      rockdoc_error_t* err);

/* 1 once the stream has ended (its invalidate event was read), else 0. */
ROCKDOC_EXPORT int rockdoc_change_stream_closed(const rockdoc_change_stream_t* stream);

/* Closes the stream and releases it (NULL is fine). */
ROCKDOC_EXPORT void rockdoc_change_stream_close(rockdoc_change_stream_t* stream);

/* A change stream read on a thread of rockdoc's own
 * (rockdoc::ChangeSubscription): on_event(context, event, event_len) for
 * each event in commit order (the bytes are valid during the call), then
 * on_end(context, code, message) once, last (code 0: the stream ended, or
 * the subscription was cancelled; else the error that ended it). Both run
 * on that thread, one call at a time. rockdoc_subscribe takes `stream`
 * (released, whatever the result: do not use or close it after); NULL on
 * failure. */
typedef void (*rockdoc_event_fn)(void* context, const uint8_t* event, size_t event_len);
typedef void (*rockdoc_end_fn)(void* context, int32_t code, const char* message);
ROCKDOC_EXPORT rockdoc_subscription_t* rockdoc_subscribe(rockdoc_change_stream_t* stream,
                                                         rockdoc_event_fn on_event,
                                                         rockdoc_end_fn on_end, void* context,
                                                         rockdoc_error_t* err);

/* Copies the resume token after the last event delivered into *token
 * (release it with rockdoc_free). Any thread. Returns 1, or 0 on failure. */
ROCKDOC_EXPORT int rockdoc_subscription_resume_token(rockdoc_subscription_t* subscription,
                                                     uint8_t** token, size_t* token_len,
                                                     rockdoc_error_t* err);

/* 1 while the thread reads, 0 once on_end has run. */
ROCKDOC_EXPORT int rockdoc_subscription_running(const rockdoc_subscription_t* subscription);

/* Stops the thread, waits for it (on_end has run when this returns), and
 * releases the subscription (NULL is fine). Not from a callback; before
 * the client's close. */
ROCKDOC_EXPORT void rockdoc_subscription_cancel(rockdoc_subscription_t* subscription);

/* ---- Live queries (rockdoc::LiveQuery, Collection::Observe) ---- */

/* What a live query reports; any may be NULL. Each _id is passed as a BSON
 * document {_id: <value>}; `before` likewise, or NULL (length 0) for "at
 * the end". changed's `removed_fields` is a BSON array of names, as a
 * document ({"0": "a", ...}). The bytes are valid during the call. The
 * calls come one at a time: from rockdoc_observe for the initial result,
 * then on rockdoc's own thread (ownThread, the default) or inside
 * rockdoc_live_query_poll. ended(context, code, message) comes once, last
 * (code 0 after rockdoc_live_query_stop). */
typedef struct rockdoc_observe_callbacks_t {
  void* context;
  void (*added)(void* context, const uint8_t* id, size_t id_len, const uint8_t* doc,
                size_t doc_len, const uint8_t* before, size_t before_len);
  void (*changed)(void* context, const uint8_t* id, size_t id_len, const uint8_t* fields,
                  size_t fields_len, const uint8_t* removed_fields, size_t removed_len);
  void (*moved)(void* context, const uint8_t* id, size_t id_len, const uint8_t* before,
                size_t before_len);
  void (*removed)(void* context, const uint8_t* id, size_t id_len);
  void (*ended)(void* context, int32_t code, const char* message);
} rockdoc_observe_callbacks_t;

/* Starts a live query of `db`.`collection`'s documents matching `filter`
 * (NULL: all). `options` (NULL: none) is a BSON document of sort,
 * projection, skip, limit and ownThread (a bool: false, the callbacks run
 * inside rockdoc_live_query_poll); another field is 40415. NULL on
 * failure, with Observe's errors (rockdoc/client.h). Stopped and released
 * with rockdoc_live_query_stop, before its client's close. */
ROCKDOC_EXPORT rockdoc_live_query_t* rockdoc_observe(rockdoc_client_t* client, const char* db,
                                                     const char* collection,
                                                     const uint8_t* filter, size_t filter_len,
                                                     const uint8_t* options, size_t options_len,
                                                     const rockdoc_observe_callbacks_t* callbacks,
                                                     rockdoc_error_t* err);

/* ownThread false: reports the changes committed so far on this thread,
 * waiting up to wait_ms for one when there is none. 1, or 0 with *err (the
 * query has then ended). */
ROCKDOC_EXPORT int rockdoc_live_query_poll(rockdoc_live_query_t* query, int64_t wait_ms,
                                           rockdoc_error_t* err);

/* 1 while the query runs, 0 once ended has run. */
ROCKDOC_EXPORT int rockdoc_live_query_running(const rockdoc_live_query_t* query);

/* How many times the query was re-run after its initial result. */
ROCKDOC_EXPORT int64_t rockdoc_live_query_requeries(const rockdoc_live_query_t* query);

/* Stops the query (ended has run when this returns) and releases it (NULL
 * is fine). Not from a callback. */
ROCKDOC_EXPORT void rockdoc_live_query_stop(rockdoc_live_query_t* query);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ROCKDOC_C_H_ */
