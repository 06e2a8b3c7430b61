/* The C API (include/rockdoc/c.h), compiled as C99: every function and its
 * error paths. Documents are built and read with the few BSON helpers below
 * (no BSON library), as a C program of another project would. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, clock_gettime */

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "rockdoc/c.h"

static int failures = 0;

#define CHECK(cond)                                                     \
  do {                                                                  \
    if (!(cond)) {                                                      \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                       \
    }                                                                   \
  } while (0)

#define CHECK_CODE(err, expected)                                                      \
  do {                                                                                 \
    if ((err).code != (expected)) {                                                    \
      fprintf(stderr, "%s:%d: code %d (%s), expected %d\n", __FILE__, __LINE__,       \
              (int)(err).code, (err).message ? (err).message : "(null)", (expected)); \
      ++failures;                                                                      \
    }                                                                                  \
  } while (0)

/* ---- A minimal BSON writer ---- */

typedef struct {
  uint8_t data[1024];
  size_t len;
  size_t open[8]; /* where each open document's length goes */
  int depth;
} Doc;

static void put_i32(uint8_t* p, int32_t v) {
  uint32_t u = (uint32_t)v;
  p[0] = (uint8_t)u;
  p[1] = (uint8_t)(u >> 8);
  p[2] = (uint8_t)(u >> 16);
  p[3] = (uint8_t)(u >> 24);
}

static void doc_begin(Doc* d) {
  d->len = 4;
  d->depth = 0;
  d->open[0] = 0;
}

static void doc_key(Doc* d, uint8_t type, const char* key) {
  d->data[d->len++] = type;
  memcpy(d->data + d->len, key, strlen(key) + 1);
  d->len += strlen(key) + 1;
}

static void doc_int32(Doc* d, const char* key, int32_t v) {
  doc_key(d, 0x10, key);
  put_i32(d->data + d->len, v);
  d->len += 4;
}

static void doc_bool(Doc* d, const char* key, int v) {
  doc_key(d, 0x08, key);
  d->data[d->len++] = v ? 1 : 0;
}

static void doc_string(Doc* d, const char* key, const char* s) {
  doc_key(d, 0x02, key);
  put_i32(d->data + d->len, (int32_t)strlen(s) + 1);
  d->len += 4;
  memcpy(d->data + d->len, s, strlen(s) + 1);
  d->len += strlen(s) + 1;
}

/* type 0x03: document, 0x04: array (keys "0", "1", ...). */
static void doc_open(Doc* d, const char* key, uint8_t type) {
  doc_key(d, type, key);
  d->open[++d->depth] = d->len;
  d->len += 4;
}

static void doc_close(Doc* d) {
  d->data[d->len++] = 0;
  size_t start = d->open[d->depth--];
  put_i32(d->data + start, (int32_t)(d->len - start));
}

static void doc_end(Doc* d) {
  d->data[d->len++] = 0;
  put_i32(d->data, (int32_t)d->len);
}

/* A document `bytes` (its own length header) as the value of `key`. */
static void doc_embed(Doc* d, const char* key, const uint8_t* bytes) {
  doc_key(d, 0x03, key);
  memcpy(d->data + d->len, bytes, (size_t)(bytes[0] | bytes[1] << 8 | bytes[2] << 16));
  d->len += (size_t)(bytes[0] | bytes[1] << 8 | bytes[2] << 16);
}

/* ---- A minimal BSON reader: a top-level field's type and value ---- */

static int32_t get_i32(const uint8_t* p) {
  return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                   (uint32_t)p[3] << 24);
}

/* The size of an element's value of type `type` at `v`, or 0 if unknown. */
static size_t value_size(uint8_t type, const uint8_t* v) {
  switch (type) {
    case 0x01: return 8;                          /* double */
    case 0x02: return 4 + (size_t)get_i32(v);     /* string */
    case 0x03: case 0x04: return (size_t)get_i32(v); /* document, array */
    case 0x07: return 12;                         /* ObjectId */
    case 0x08: return 1;                          /* bool */
    case 0x09: case 0x11: case 0x12: return 8;    /* datetime, timestamp, int64 */
    case 0x0A: return 0;                          /* null */
    case 0x10: return 4;                          /* int32 */
    default: return (size_t)-1;
  }
}

/* The value of field `key` of `doc` (its type in *type), or NULL. */
static const uint8_t* doc_get(const uint8_t* doc, const char* key, uint8_t* type) {
  const uint8_t* end = doc + get_i32(doc) - 1;
  const uint8_t* p = doc + 4;
  while (p < end) {
    uint8_t t = *p++;
    const char* k = (const char*)p;
    p += strlen(k) + 1;
    if (strcmp(k, key) == 0) {
      *type = t;
      return p;
    }
    size_t n = value_size(t, p);
    if (n == (size_t)-1) return NULL;
    p += n;
  }
  return NULL;
}

static int32_t int_field(const uint8_t* doc, const char* key) {
  uint8_t type = 0;
  const uint8_t* v = doc_get(doc, key, &type);
  if (v == NULL) return -999;
  if (type == 0x10) return get_i32(v);
  if (type == 0x01) {
    double d;
    memcpy(&d, v, 8);
    return (int32_t)d;
  }
  if (type == 0x12) return get_i32(v); /* small int64s */
  return -998;
}

/* ---- Tests ---- */

static void insert_numbers(rockdoc_client_t* db, int n) {
  for (int i = 0; i < n; ++i) {
    Doc d;
    doc_begin(&d);
    doc_int32(&d, "_id", i);
    doc_int32(&d, "v", i % 3);
    doc_end(&d);
    rockdoc_error_t err = ROCKDOC_ERROR_INIT;
    CHECK(rockdoc_insert_one(db, "test", "c", d.data, d.len, &err) == 1);
    CHECK_CODE(err, 0);
    rockdoc_error_clear(&err);
  }
}

static void test_open_and_close(const char* dir) {
  rockdoc_error_t err = ROCKDOC_ERROR_INIT;
  CHECK(rockdoc_version() != NULL && strlen(rockdoc_version()) > 0);

  /* Bad arguments. */
  CHECK(rockdoc_open(NULL, NULL, &err) == NULL);
  CHECK_CODE(err, 2);
  CHECK(err.message != NULL && strstr(err.message, "path") != NULL);
  rockdoc_error_clear(&err);
  CHECK(err.code == 0 && err.message == NULL);

  /* A missing directory with create_if_missing off: NonExistentPath (29). */
  char missing[512];
  snprintf(missing, sizeof missing, "%s/missing", dir);
  rockdoc_options_t* options = rockdoc_options_create();
  CHECK(options != NULL);
  rockdoc_options_set_create_if_missing(options, 0);
  rockdoc_options_set_sync(options, 1);
  rockdoc_options_set_block_cache_bytes(options, 8u << 20);
  CHECK(rockdoc_open(missing, options, &err) == NULL);
  CHECK_CODE(err, 29);
  rockdoc_error_clear(&err);
  rockdoc_options_set_create_if_missing(options, 1);

  char path[512];
  snprintf(path, sizeof path, "%s/db", dir);
  rockdoc_client_t* db = rockdoc_open(path, options, &err);
  CHECK(db != NULL);
  rockdoc_options_destroy(options);
  /* A second client of the same directory: DBPathInUse (98). */
  CHECK(rockdoc_open(path, NULL, &err) == NULL);
  CHECK_CODE(err, 98);
  rockdoc_error_clear(&err);
  /* A read-only client beside it (ClientOptions::read_only): its writes are
   * IllegalOperation (20); the owner's go on. */
  rockdoc_options_t* read_only = rockdoc_options_create();
  rockdoc_options_set_read_only(read_only, 1);
  rockdoc_options_set_record_cache_bytes(read_only, 0);
  rockdoc_client_t* reader = rockdoc_open(path, read_only, &err);
  rockdoc_options_destroy(read_only);
  CHECK(reader != NULL);
  CHECK_CODE(err, 0);
  {
    Doc d;
    doc_begin(&d);
    doc_int32(&d, "_id", 1);
    doc_end(&d);
    CHECK(rockdoc_insert_one(reader, "test", "ro", d.data, d.len, &err) == 0);
    CHECK_CODE(err, 20);
    CHECK(err.message != NULL && strstr(err.message, "read-only") != NULL);
    rockdoc_error_clear(&err);
    CHECK(rockdoc_insert_one(db, "test", "ro", d.data, d.len, &err) == 1);
    rockdoc_error_clear(&err);
  }
  CHECK(rockdoc_close(reader, &err) == 1);
  /* A hot copy opens while the original stays open; not over an existing
   * directory (IllegalOperation, 20). */
  char copy[512];
  snprintf(copy, sizeof copy, "%s/copy", dir);
  CHECK(rockdoc_checkpoint(db, copy, &err) == 1);
  CHECK(rockdoc_checkpoint(db, copy, &err) == 0);
  CHECK_CODE(err, 20);
  rockdoc_error_clear(&err);
  rockdoc_client_t* copy_db = rockdoc_open(copy, NULL, &err);
  if (copy_db == NULL) fprintf(stderr, "open copy: %d %s\n", err.code, err.message);
  CHECK(copy_db != NULL);
  CHECK(rockdoc_close(copy_db, &err) == 1);
  CHECK(rockdoc_close(db, &err) == 1);
  CHECK(rockdoc_close(NULL, &err) == 1);
  rockdoc_options_destroy(NULL);
  rockdoc_free(NULL);
  rockdoc_error_clear(NULL);
}

static void test_commands(rockdoc_client_t* db) {
  rockdoc_error_t err = ROCKDOC_ERROR_INIT;
  uint8_t* reply = NULL;
  size_t reply_len = 0;
  Doc ping;
  doc_begin(&ping);
  doc_int32(&ping, "ping", 1);
  doc_end(&ping);
  CHECK(rockdoc_run_command(db, "test", ping.data, ping.len, &reply, &reply_len, &err) == 1);
  CHECK(reply != NULL && reply_len == (size_t)get_i32(reply));
  CHECK(int_field(reply, "ok") == 1);
  rockdoc_free(reply);

  /* A failing command: its code, and its reply all the same. */
  Doc bogus;
  doc_begin(&bogus);
  doc_int32(&bogus, "bogus", 1);
  doc_end(&bogus);
  CHECK(rockdoc_run_command(db, "test", bogus.data, bogus.len, &reply, &reply_len, &err) == 0);
  CHECK_CODE(err, 59);
  CHECK(reply != NULL && int_field(reply, "ok") == 0 && int_field(reply, "code") == 59);
  rockdoc_free(reply);
  rockdoc_error_clear(&err);

  /* A length that disagrees with the header, and bytes that are not BSON:
   * InvalidBSON (22), no reply, nothing read past the buffer. */
  CHECK(rockdoc_run_command(db, "test", ping.data, ping.len - 1, &reply, &reply_len, &err) == 0);
  CHECK_CODE(err, 22);
  CHECK(reply == NULL && reply_len == 0);
  rockdoc_error_clear(&err);
  CHECK(rockdoc_run_command(db, "test", ping.data, 3, &reply, &reply_len, &err) == 0);
  CHECK_CODE(err, 22);
  rockdoc_error_clear(&err);
  Doc broken = ping;
  broken.data[4] = 0x50; /* no such BSON type */
  CHECK(rockdoc_run_command(db, "test", broken.data, broken.len, &reply, &reply_len, &err) == 0);
  CHECK_CODE(err, 22);
  rockdoc_error_clear(&err);
  /* NULL arguments: BadValue (2). */
  CHECK(rockdoc_run_command(NULL, "test", ping.data, ping.len, &reply, &reply_len, &err) == 0);
  CHECK_CODE(err, 2);
  rockdoc_error_clear(&err);
  CHECK(rockdoc_run_command(db, NULL, ping.data, ping.len, &reply, &reply_len, &err) == 0);
  CHECK_CODE(err, 2);
  rockdoc_error_clear(&err);
  CHECK(rockdoc_run_command(db, "test", NULL, 0, &reply, &reply_len, &err) == 0);
  CHECK_CODE(err, 2);
  rockdoc_error_clear(&err);
  CHECK(rockdoc_run_command(db, "test", ping.data, ping.len, NULL, &reply_len, &err) == 0);
  CHECK_CODE(err, 2);
  rockdoc_error_clear(&err);
  /* Errors may be ignored. */
  CHECK(rockdoc_run_command(db, "test", bogus.data, bogus.len, &reply, &reply_len, NULL) == 0);
  rockdoc_free(reply);
}

static void test_crud(rockdoc_client_t* db) {
  rockdoc_error_t err = ROCKDOC_ERROR_INIT;
  insert_numbers(db, 7);

  /* A duplicate _id: DuplicateKey (11000). */
  Doc dup;
  doc_begin(&dup);
  doc_int32(&dup, "_id", 3);
  doc_end(&dup);
  CHECK(rockdoc_insert_one(db, "test", "c", dup.data, dup.len, &err) == 0);
  CHECK_CODE(err, 11000);
  CHECK(err.message != NULL && strstr(err.message, "E11000") != NULL);
  rockdoc_error_clear(&err);
  CHECK(rockdoc_insert_one(db, "test", NULL, dup.data, dup.len, &err) == 0);
  CHECK_CODE(err, 2);
  rockdoc_error_clear(&err);
  CHECK(rockdoc_insert_one(db, "test", "c", dup.data, dup.len + 4, &err) == 0);
  CHECK_CODE(err, 22);
  rockdoc_error_clear(&err);

  /* find: every document, sorted, in batches of 2 (first batch, then
   * getMore as the cursor is read). */
  Doc options;
  doc_begin(&options);
  doc_open(&options, "sort", 0x03);
  doc_int32(&options, "_id", -1);
  doc_close(&options);
  doc_int32(&options, "batchSize", 2);
  doc_end(&options);
  rockdoc_cursor_t* c = rockdoc_find(db, "test", "c", NULL, 0, options.data, options.len, &err);
  CHECK(c != NULL);
  const uint8_t* doc = NULL;
  size_t doc_len = 0;
  int expected = 6, seen = 0;
  while (c != NULL && rockdoc_cursor_next(c, &doc, &doc_len, &err)) {
    CHECK(doc_len == (size_t)get_i32(doc));
    CHECK(int_field(doc, "_id") == expected);
    --expected;
    ++seen;
  }
  CHECK_CODE(err, 0);
  CHECK(seen == 7);
  CHECK(rockdoc_cursor_next(c, &doc, &doc_len, &err) == 0); /* stays at the end */
  rockdoc_cursor_close(c);

  /* A filter, and a cursor closed before its end. */
  Doc filter;
  doc_begin(&filter);
  doc_int32(&filter, "v", 1);
  doc_end(&filter);
  Doc small;
  doc_begin(&small);
  doc_int32(&small, "batchSize", 1);
  doc_end(&small);
  c = rockdoc_find(db, "test", "c", filter.data, filter.len, small.data, small.len, &err);
  CHECK(c != NULL && rockdoc_cursor_next(c, &doc, &doc_len, &err) == 1);
  CHECK(int_field(doc, "v") == 1);
  rockdoc_cursor_close(c);
  rockdoc_cursor_close(NULL);

  /* Bad find arguments: an unknown option (40415), a bad filter (22). */
  Doc bad_option;
  doc_begin(&bad_option);
  doc_int32(&bad_option, "bogus", 1);
  doc_end(&bad_option);
  CHECK(rockdoc_find(db, "test", "c", NULL, 0, bad_option.data, bad_option.len, &err) == NULL);
  CHECK_CODE(err, 40415);
  rockdoc_error_clear(&err);
  CHECK(rockdoc_find(db, "test", "c", filter.data, 2, NULL, 0, &err) == NULL);
  CHECK_CODE(err, 22);
  rockdoc_error_clear(&err);
  /* rockdoc_command_cursor on a command without a cursor. */
  Doc ping;
  doc_begin(&ping);
  doc_int32(&ping, "ping", 1);
  doc_end(&ping);
  CHECK(rockdoc_command_cursor(db, "test", ping.data, ping.len, &err) == NULL);
  CHECK_CODE(err, 2);
  rockdoc_error_clear(&err);
  Doc list;
  doc_begin(&list);
  doc_int32(&list, "listCollections", 1);
  doc_string(&list, "comment", "from C");
  doc_end(&list);
  c = rockdoc_command_cursor(db, "test", list.data, list.len, &err);
  CHECK(c != NULL && rockdoc_cursor_next(c, &doc, &doc_len, &err) == 1);
  rockdoc_cursor_close(c);
  CHECK(rockdoc_cursor_next(NULL, &doc, &doc_len, &err) == 0);
  CHECK_CODE(err, 2);
  rockdoc_error_clear(&err);

  /* update: every document with v = 1, then an upsert. */
  Doc set;
  doc_begin(&set);
  doc_open(&set, "$set", 0x03);
  doc_bool(&set, "seen", 1);
  doc_close(&set);
  doc_end(&set);
  int64_t matched = -1, modified = -1;
  CHECK(rockdoc_update(db, "test", "c", filter.data, filter.len, set.data, set.len, 1, 0,
                       &matched, &modified, &err) == 1);
  CHECK(matched == 2 && modified == 2);
  Doc nobody;
  doc_begin(&nobody);
  doc_int32(&nobody, "_id", 100);
  doc_end(&nobody);
  CHECK(rockdoc_update(db, "test", "c", nobody.data, nobody.len, set.data, set.len, 0, 1,
                       &matched, &modified, &err) == 1);
  CHECK(matched == 1 && modified == 0);
  /* An update that cannot apply: its write error's code. */
  Doc bad_update;
  doc_begin(&bad_update);
  doc_open(&bad_update, "$bogus", 0x03);
  doc_close(&bad_update);
  doc_end(&bad_update);
  CHECK(rockdoc_update(db, "test", "c", filter.data, filter.len, bad_update.data, bad_update.len,
                       0, 0, NULL, NULL, &err) == 0);
  CHECK_CODE(err, 9); /* FailedToParse: unknown modifier */
  rockdoc_error_clear(&err);

  /* delete: one, then the rest of v = 1. */
  int64_t deleted = -1;
  CHECK(rockdoc_delete(db, "test", "c", filter.data, filter.len, 0, &deleted, &err) == 1);
  CHECK(deleted == 1);
  CHECK(rockdoc_delete(db, "test", "c", filter.data, filter.len, 1, &deleted, &err) == 1);
  CHECK(deleted == 1);
  CHECK(rockdoc_delete(db, "test", "c", NULL, 0, 1, &deleted, &err) == 0);
  CHECK_CODE(err, 2);
  rockdoc_error_clear(&err);
}

/* ---- Change streams ---- */

/* An event's operationType and documentKey._id ("insert 3"), in `out`. */
static void describe_event(const uint8_t* event, char* out, size_t size) {
  uint8_t type = 0;
  const uint8_t* op = doc_get(event, "operationType", &type);
  const uint8_t* key = doc_get(event, "documentKey", &type);
  int id = key != NULL && type == 0x03 ? int_field(key, "_id") : -1;
  snprintf(out, size, "%s %d", op != NULL ? (const char*)op + 4 : "?", id);
}

/* What a subscription's callbacks saw, guarded for the test's thread. */
typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int events;
  int ends;
  int32_t end_code;
  int in_order; /* each event's _id one more than the last */
  int last_id;
} Seen;

static void on_event(void* context, const uint8_t* event, size_t len) {
  Seen* seen = (Seen*)context;
  uint8_t type = 0;
  const uint8_t* key = doc_get(event, "documentKey", &type);
  int id = key != NULL ? int_field(key, "_id") : -1;
  pthread_mutex_lock(&seen->mu);
  if ((size_t)get_i32(event) != len || id != seen->last_id + 1) seen->in_order = 0;
  seen->last_id = id;
  ++seen->events;
  pthread_cond_broadcast(&seen->cv);
  pthread_mutex_unlock(&seen->mu);
}

static void on_end(void* context, int32_t code, const char* message) {
  Seen* seen = (Seen*)context;
  (void)message;
  pthread_mutex_lock(&seen->mu);
  ++seen->ends;
  seen->end_code = code;
  pthread_cond_broadcast(&seen->cv);
  pthread_mutex_unlock(&seen->mu);
}

/* Waits until `seen` has `events` events (a minute at most: a defect fails
 * instead of hanging). */
static int wait_for_events(Seen* seen, int events) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 60;
  pthread_mutex_lock(&seen->mu);
  int rc = 0;
  while (seen->events < events && rc == 0) rc = pthread_cond_timedwait(&seen->cv, &seen->mu, &until);
  int got = seen->events;
  pthread_mutex_unlock(&seen->mu);
  return got >= events;
}

/* Inserts {_id: id} into test.<collection>, with a: <a> when a >= 0. */
static void insert_doc(rockdoc_client_t* db, const char* collection, int id, int a) {
  Doc d;
  doc_begin(&d);
  doc_int32(&d, "_id", id);
  if (a >= 0) doc_int32(&d, "a", a);
  doc_end(&d);
  rockdoc_error_t err = ROCKDOC_ERROR_INIT;
  CHECK(rockdoc_insert_one(db, "test", collection, d.data, d.len, &err) == 1);
  rockdoc_error_clear(&err);
}

static void insert_ids(rockdoc_client_t* db, int from, int to) {
  for (int i = from; i < to; ++i) insert_doc(db, "ev", i, -1);
}

static void test_change_streams(const char* dir) {
  rockdoc_error_t err = ROCKDOC_ERROR_INIT;
  char path[512];
  snprintf(path, sizeof path, "%s/streams", dir);
  /* Without the change log: 40573, as a standalone mongod answers. */
  rockdoc_client_t* plain = rockdoc_open(path, NULL, &err);
  CHECK(plain != NULL);
  CHECK(rockdoc_watch(plain, "test", "ev", NULL, 0, NULL, 0, 0, &err) == NULL);
  CHECK_CODE(err, 40573);
  rockdoc_error_clear(&err);
  CHECK(rockdoc_close(plain, &err) == 1);

  rockdoc_options_t* options = rockdoc_options_create();
  rockdoc_options_set_change_log(options, 1);
  rockdoc_client_t* db = rockdoc_open(path, options, &err);
  rockdoc_options_destroy(options);
  CHECK(db != NULL);
  if (db == NULL) return;
  insert_ids(db, 0, 1); /* the collection exists */

  /* The spec's fields are the $changeStream stage's: an unknown one is 40415. */
  Doc bogus;
  doc_begin(&bogus);
  doc_int32(&bogus, "bogus", 1);
  doc_end(&bogus);
  CHECK(rockdoc_watch(db, "test", "ev", NULL, 0, bogus.data, bogus.len, 0, &err) == NULL);
  CHECK_CODE(err, 40415);
  rockdoc_error_clear(&err);
  CHECK(rockdoc_watch(db, NULL, "ev", NULL, 0, NULL, 0, 0, &err) == NULL);
  CHECK_CODE(err, 2);
  rockdoc_error_clear(&err);

  /* A pipeline: only the inserts of _id >= 2. */
  Doc pipeline;
  doc_begin(&pipeline);
  doc_open(&pipeline, "0", 0x03);
  doc_open(&pipeline, "$match", 0x03);
  doc_open(&pipeline, "documentKey._id", 0x03);
  doc_int32(&pipeline, "$gte", 2);
  doc_close(&pipeline);
  doc_close(&pipeline);
  doc_close(&pipeline);
  doc_end(&pipeline);
  rockdoc_change_stream_t* all = rockdoc_watch(db, "test", "ev", NULL, 0, NULL, 0, 0, &err);
  rockdoc_change_stream_t* some =
      rockdoc_watch(db, "test", "ev", pipeline.data, pipeline.len, NULL, 0, 0, &err);
  rockdoc_change_stream_t* everything = rockdoc_watch(db, NULL, NULL, NULL, 0, NULL, 0, 0, &err);
  CHECK(all != NULL && some != NULL && everything != NULL);
  if (all == NULL || some == NULL || everything == NULL) return;
  insert_ids(db, 1, 4);
  const uint8_t* event = NULL;
  size_t len = 0;
  char seen_text[64];
  for (int i = 1; i < 4; ++i) {
    CHECK(rockdoc_change_stream_try_next(all, &event, &len, &err) == 1);
    describe_event(event, seen_text, sizeof seen_text);
    char want[64];
    snprintf(want, sizeof want, "insert %d", i);
    CHECK(strcmp(seen_text, want) == 0);
    CHECK(len == (size_t)get_i32(event));
    if (i == 1) {
      /* Resume after the first: the second and third. */
      const uint8_t* token = NULL;
      size_t token_len = 0;
      CHECK(rockdoc_change_stream_resume_token(all, &token, &token_len, &err) == 1);
      Doc spec;
      doc_begin(&spec);
      doc_embed(&spec, "resumeAfter", token);
      doc_end(&spec);
      rockdoc_change_stream_t* resumed =
          rockdoc_watch(db, "test", "ev", NULL, 0, spec.data, spec.len, 0, &err);
      CHECK(resumed != NULL);
      CHECK(rockdoc_change_stream_try_next(resumed, &event, &len, &err) == 1);
      describe_event(event, seen_text, sizeof seen_text);
      CHECK(strcmp(seen_text, "insert 2") == 0);
      rockdoc_change_stream_close(resumed);
    }
  }
  CHECK(rockdoc_change_stream_try_next(all, &event, &len, &err) == 0);
  CHECK_CODE(err, 0);
  CHECK(rockdoc_change_stream_try_next(some, &event, &len, &err) == 1);
  describe_event(event, seen_text, sizeof seen_text);
  CHECK(strcmp(seen_text, "insert 2") == 0);
  int n = 0;
  while (rockdoc_change_stream_try_next(everything, &event, &len, &err) == 1) ++n;
  CHECK(n == 3);
  CHECK(rockdoc_change_stream_closed(all) == 0);
  rockdoc_change_stream_close(some);
  rockdoc_change_stream_close(everything);

  /* A subscription: the next inserts on rockdoc's thread, in order; after
   * cancel, nothing. */
  Seen seen;
  memset(&seen, 0, sizeof seen);
  pthread_mutex_init(&seen.mu, NULL);
  pthread_cond_init(&seen.cv, NULL);
  seen.in_order = 1;
  seen.last_id = 3;
  CHECK(rockdoc_subscribe(NULL, on_event, on_end, &seen, &err) == NULL);
  CHECK_CODE(err, 2);
  rockdoc_error_clear(&err);
  rockdoc_subscription_t* sub = rockdoc_subscribe(all, on_event, on_end, &seen, &err);
  CHECK(sub != NULL);
  if (sub != NULL) {
    CHECK(rockdoc_subscription_running(sub) == 1);
    insert_ids(db, 4, 24);
    CHECK(wait_for_events(&seen, 20));
    uint8_t* token = NULL;
    size_t token_len = 0;
    CHECK(rockdoc_subscription_resume_token(sub, &token, &token_len, &err) == 1);
    CHECK(token != NULL && token_len == (size_t)get_i32(token));
    rockdoc_free(token);
    rockdoc_subscription_cancel(sub);
    insert_ids(db, 24, 25);
    pthread_mutex_lock(&seen.mu);
    CHECK(seen.events == 20 && seen.in_order == 1);
    CHECK(seen.ends == 1 && seen.end_code == 0);
    pthread_mutex_unlock(&seen.mu);
  }

  /* A dropped collection ends its stream: drop, invalidate, closed. */
  rockdoc_change_stream_t* ending = rockdoc_watch(db, "test", "ev", NULL, 0, NULL, 0, 0, &err);
  CHECK(ending != NULL);
  Doc drop;
  doc_begin(&drop);
  doc_string(&drop, "drop", "ev");
  doc_end(&drop);
  uint8_t* reply = NULL;
  size_t reply_len = 0;
  CHECK(rockdoc_run_command(db, "test", drop.data, drop.len, &reply, &reply_len, &err) == 1);
  rockdoc_free(reply);
  CHECK(rockdoc_change_stream_try_next(ending, &event, &len, &err) == 1);
  describe_event(event, seen_text, sizeof seen_text);
  CHECK(strncmp(seen_text, "drop", 4) == 0);
  CHECK(rockdoc_change_stream_try_next(ending, &event, &len, &err) == 1);
  describe_event(event, seen_text, sizeof seen_text);
  CHECK(strncmp(seen_text, "invalidate", 10) == 0);
  CHECK(rockdoc_change_stream_try_next(ending, &event, &len, &err) == 0);
  CHECK(rockdoc_change_stream_closed(ending) == 1);
  rockdoc_change_stream_close(ending);
  rockdoc_change_stream_close(NULL);
  rockdoc_subscription_cancel(NULL);
  CHECK(rockdoc_close(db, &err) == 1);
  rockdoc_error_clear(&err);
  pthread_mutex_destroy(&seen.mu);
  pthread_cond_destroy(&seen.cv);
}

/* ---- Live queries ---- */

/* The client's list of a live query: _ids in order, and each one's "a". */
typedef struct {
  int ids[16];
  int a[16];
  int n;
  int bad;   /* a callback that named a document the list does not hold */
  int ends;
  int32_t end_code;
} LiveList;

static int live_find(const LiveList* l, int id) {
  for (int i = 0; i < l->n; ++i) {
    if (l->ids[i] == id) return i;
  }
  return -1;
}

static void live_insert(LiveList* l, int id, int a, const uint8_t* before) {
  int at = l->n;
  if (before != NULL) {
    at = live_find(l, int_field(before, "_id"));
    if (at < 0) {
      l->bad = 1;
      return;
    }
  }
  if (l->n == 16) {
    l->bad = 1;
    return;
  }
  memmove(l->ids + at + 1, l->ids + at, (size_t)(l->n - at) * sizeof(int));
  memmove(l->a + at + 1, l->a + at, (size_t)(l->n - at) * sizeof(int));
  l->ids[at] = id;
  l->a[at] = a;
  ++l->n;
}

static int live_take(LiveList* l, int id, int* a) {
  int at = live_find(l, id);
  if (at < 0) {
    l->bad = 1;
    return 0;
  }
  *a = l->a[at];
  memmove(l->ids + at, l->ids + at + 1, (size_t)(l->n - at - 1) * sizeof(int));
  memmove(l->a + at, l->a + at + 1, (size_t)(l->n - at - 1) * sizeof(int));
  --l->n;
  return 1;
}

static void on_added(void* context, const uint8_t* id, size_t id_len, const uint8_t* doc,
                     size_t doc_len, const uint8_t* before, size_t before_len) {
  LiveList* l = (LiveList*)context;
  if (id_len != (size_t)get_i32(id) || doc_len != (size_t)get_i32(doc) ||
      (before != NULL && before_len != (size_t)get_i32(before))) {
    l->bad = 1;
  }
  live_insert(l, int_field(id, "_id"), int_field(doc, "a"), before);
}

static void on_changed(void* context, const uint8_t* id, size_t id_len, const uint8_t* fields,
                       size_t fields_len, const uint8_t* removed, size_t removed_len) {
  LiveList* l = (LiveList*)context;
  (void)id_len;
  (void)fields_len;
  (void)removed;
  (void)removed_len;
  int at = live_find(l, int_field(id, "_id"));
  if (at < 0) {
    l->bad = 1;
    return;
  }
  if (int_field(fields, "a") > -998) l->a[at] = int_field(fields, "a");
}

static void on_moved(void* context, const uint8_t* id, size_t id_len, const uint8_t* before,
                     size_t before_len) {
  LiveList* l = (LiveList*)context;
  (void)id_len;
  (void)before_len;
  int a = 0;
  if (live_take(l, int_field(id, "_id"), &a)) live_insert(l, int_field(id, "_id"), a, before);
}

static void on_removed(void* context, const uint8_t* id, size_t id_len) {
  LiveList* l = (LiveList*)context;
  (void)id_len;
  int a = 0;
  live_take(l, int_field(id, "_id"), &a);
}

static void on_live_end(void* context, int32_t code, const char* message) {
  LiveList* l = (LiveList*)context;
  (void)message;
  ++l->ends;
  l->end_code = code;
}

static void insert_a(rockdoc_client_t* db, int id, int a) { insert_doc(db, "live", id, a); }

static void test_live_queries(const char* dir) {
  rockdoc_error_t err = ROCKDOC_ERROR_INIT;
  char path[512];
  snprintf(path, sizeof path, "%s/live", dir);
  rockdoc_options_t* options = rockdoc_options_create();
  rockdoc_options_set_change_log(options, 1);
  rockdoc_client_t* db = rockdoc_open(path, options, &err);
  rockdoc_options_destroy(options);
  CHECK(db != NULL);
  if (db == NULL) return;
  insert_a(db, 1, 30);
  insert_a(db, 2, 10);
  insert_a(db, 3, 20);
  insert_a(db, 4, 40);

  LiveList list;
  memset(&list, 0, sizeof list);
  rockdoc_observe_callbacks_t cb = {&list, on_added, on_changed, on_moved, on_removed,
                                    on_live_end};
  /* An unknown option is 40415; a NULL callbacks table is BadValue. */
  Doc bogus;
  doc_begin(&bogus);
  doc_int32(&bogus, "bogus", 1);
  doc_end(&bogus);
  CHECK(rockdoc_observe(db, "test", "live", NULL, 0, bogus.data, bogus.len, &cb, &err) == NULL);
  CHECK_CODE(err, 40415);
  rockdoc_error_clear(&err);
  CHECK(rockdoc_observe(db, "test", "live", NULL, 0, NULL, 0, NULL, &err) == NULL);
  CHECK_CODE(err, 2);
  rockdoc_error_clear(&err);

  /* The three smallest a, polled on this thread. */
  Doc o;
  doc_begin(&o);
  doc_open(&o, "sort", 0x03);
  doc_int32(&o, "a", 1);
  doc_close(&o);
  doc_int32(&o, "limit", 3);
  doc_bool(&o, "ownThread", 0);
  doc_end(&o);
  rockdoc_live_query_t* q = rockdoc_observe(db, "test", "live", NULL, 0, o.data, o.len, &cb, &err);
  CHECK(q != NULL);
  CHECK_CODE(err, 0);
  if (q == NULL) return;
  CHECK(list.n == 3 && list.ids[0] == 2 && list.ids[1] == 3 && list.ids[2] == 1);
  insert_a(db, 5, 15); /* second: pushes 1 out */
  CHECK(rockdoc_live_query_poll(q, 0, &err) == 1);
  CHECK(list.n == 3 && list.ids[0] == 2 && list.ids[1] == 5 && list.ids[2] == 3);
  Doc filter, update;
  doc_begin(&filter);
  doc_int32(&filter, "_id", 2);
  doc_end(&filter);
  doc_begin(&update);
  doc_open(&update, "$set", 0x03);
  doc_int32(&update, "a", 18);
  doc_close(&update);
  doc_end(&update);
  int64_t matched = 0, modified = 0;
  CHECK(rockdoc_update(db, "test", "live", filter.data, filter.len, update.data, update.len, 0, 0,
                       &matched, &modified, &err) == 1);
  CHECK(rockdoc_live_query_poll(q, 0, &err) == 1);
  CHECK(list.n == 3 && list.ids[0] == 5 && list.ids[1] == 2 && list.ids[2] == 3);
  CHECK(list.a[1] == 18);
  CHECK(list.bad == 0);
  CHECK(rockdoc_live_query_running(q) == 1);
  CHECK(rockdoc_live_query_requeries(q) == 0);
  rockdoc_live_query_stop(q);
  CHECK(list.ends == 1 && list.end_code == 0);
  rockdoc_live_query_stop(NULL);
  CHECK(rockdoc_close(db, &err) == 1);
  rockdoc_error_clear(&err);
}

/* ---- Batches: rockdoc_run_batch_command ---- */

/* {insert: "big", documents: [{_id: first_id + i, s: "xx..."} ...]}:
 * `count` documents (at most 10) of `doc_size` bytes each (at least 22),
 * malloc'ed; *len its size. */
static uint8_t* big_insert(int count, size_t doc_size, int first_id, size_t* len) {
  const size_t element = 1 + 2 + doc_size; /* type, "0".."9" key, document */
  const size_t array = 4 + (size_t)count * element + 1;
  *len = 4 + 16 + (1 + 10 + array) + 1;
  uint8_t* p = malloc(*len);
  if (p == NULL) return NULL;
  uint8_t* w = p;
  put_i32(w, (int32_t)*len);
  w += 4;
  *w++ = 0x02;
  memcpy(w, "insert", 7);
  w += 7;
  put_i32(w, 4);
  w += 4;
  memcpy(w, "big", 4);
  w += 4;
  *w++ = 0x04;
  memcpy(w, "documents", 10);
  w += 10;
  put_i32(w, (int32_t)array);
  w += 4;
  for (int i = 0; i < count; ++i) {
    const size_t chars = doc_size - 22;
    *w++ = 0x03;
    *w++ = (uint8_t)('0' + i);
    *w++ = 0;
    put_i32(w, (int32_t)doc_size);
    w += 4;
    *w++ = 0x10;
    memcpy(w, "_id", 4);
    w += 4;
    put_i32(w, first_id + i);
    w += 4;
    *w++ = 0x02;
    memcpy(w, "s", 2);
    w += 2;
    put_i32(w, (int32_t)(chars + 1));
    w += 4;
    memset(w, 'x', chars);
    w += chars;
    *w++ = 0;
    *w++ = 0; /* the document's end */
  }
  *w++ = 0; /* the array's */
  *w++ = 0; /* the command's */
  return p;
}

static void test_batch_command(rockdoc_client_t* db) {
  rockdoc_error_t err = ROCKDOC_ERROR_INIT;
  uint8_t* reply = NULL;
  size_t reply_len = 0;
  const size_t mib16 = 16u * 1024 * 1024;
  /* The bound is the message size hello reports. */
  Doc hello;
  doc_begin(&hello);
  doc_int32(&hello, "hello", 1);
  doc_end(&hello);
  CHECK(rockdoc_run_command(db, "admin", hello.data, hello.len, &reply, &reply_len, &err) == 1);
  CHECK(reply != NULL && int_field(reply, "maxMessageSizeBytes") == ROCKDOC_MAX_MESSAGE_SIZE);
  rockdoc_free(reply);

  /* A document of exactly 16 MiB inserts through either call (a command
   * may be 16 MiB + 16 KiB). */
  size_t len = 0;
  uint8_t* one = big_insert(1, mib16, 1, &len);
  CHECK(one != NULL);
  CHECK(rockdoc_run_command(db, "test", one, len, &reply, &reply_len, &err) == 1);
  CHECK(reply != NULL && int_field(reply, "n") == 1);
  rockdoc_free(reply);
  free(one);

  /* Two of them: past a command's bound, within a batch's. */
  uint8_t* two = big_insert(2, mib16, 5, &len);
  CHECK(two != NULL);
  CHECK(rockdoc_run_command(db, "test", two, len, &reply, &reply_len, &err) == 0);
  CHECK_CODE(err, 10334);
  CHECK(reply == NULL);
  rockdoc_error_clear(&err);
  CHECK(rockdoc_run_batch_command(db, "test", two, len, &reply, &reply_len, &err) == 1);
  CHECK(reply != NULL && int_field(reply, "n") == 2);
  rockdoc_free(reply);
  free(two);

  /* A document past 16 MiB inside a batch: that statement's write error. */
  uint8_t* over = big_insert(1, mib16 + 1, 9, &len);
  CHECK(over != NULL);
  CHECK(rockdoc_run_batch_command(db, "test", over, len, &reply, &reply_len, &err) == 1);
  uint8_t type = 0;
  CHECK(reply != NULL && int_field(reply, "n") == 0 && doc_get(reply, "writeErrors", &type) &&
        type == 0x04);
  rockdoc_free(reply);
  free(over);

  /* Past a message: BSONObjectTooLarge, no reply. */
  uint8_t* three = big_insert(3, mib16, 20, &len);
  CHECK(three != NULL && len > ROCKDOC_MAX_MESSAGE_SIZE);
  CHECK(rockdoc_run_batch_command(db, "test", three, len, &reply, &reply_len, &err) == 0);
  CHECK_CODE(err, 10334);
  CHECK(reply == NULL);
  rockdoc_error_clear(&err);
  free(three);
}

/* Encryption at rest: a key, then the same directory without it and with
 * another (InvalidOptions, 72), a key file, and a rotation. */
static void test_encryption(const char* dir) {
  rockdoc_error_t err = ROCKDOC_ERROR_INIT;
  char path[512], keyfile[512];
  snprintf(path, sizeof path, "%s/encrypted", dir);
  snprintf(keyfile, sizeof keyfile, "%s/db.key", dir);
  unsigned char key_a[32], key_b[32];
  memset(key_a, 'A', sizeof key_a);
  memset(key_b, 'B', sizeof key_b);
  rockdoc_options_t* options = rockdoc_options_create();
  rockdoc_options_set_encryption_key(options, key_a, sizeof key_a);
  rockdoc_client_t* db = rockdoc_open(path, options, &err);
  CHECK(db != NULL);
  {
    Doc d;
    doc_begin(&d);
    doc_int32(&d, "_id", 1);
    doc_end(&d);
    CHECK(db != NULL && rockdoc_insert_one(db, "test", "c", d.data, d.len, &err) == 1);
  }
  CHECK(rockdoc_close(db, &err) == 1);
  CHECK(rockdoc_open(path, NULL, &err) == NULL);
  CHECK_CODE(err, 72);
  rockdoc_error_clear(&err);
  rockdoc_options_set_encryption_key(options, key_b, 5);
  CHECK(rockdoc_open(path, options, &err) == NULL);
  CHECK_CODE(err, 2); /* not 32 bytes */
  rockdoc_error_clear(&err);
  /* mongod's key file: the base64 of 32 'A's, owner-only. */
  FILE* f = fopen(keyfile, "w");
  CHECK(f != NULL);
  if (f != NULL) {
    fputs("QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=\n", f);
    fclose(f);
  }
  chmod(keyfile, 0644);
  CHECK(rockdoc_options_set_encryption_key_file(options, keyfile, &err) == 0);
  CHECK_CODE(err, 2); /* others may read it: too open */
  rockdoc_error_clear(&err);
  chmod(keyfile, 0600);
  CHECK(rockdoc_options_set_encryption_key_file(options, keyfile, &err) == 1);
  db = rockdoc_open(path, options, &err);
  CHECK(db != NULL);
  CHECK(rockdoc_close(db, &err) == 1);
  /* A to B; then B opens it, and A only as a previous key beside B. */
  CHECK(rockdoc_rotate_encryption_key(path, key_a, 32, key_b, 32, &err) == 1);
  CHECK(rockdoc_open(path, options, &err) == NULL);
  CHECK_CODE(err, 72);
  rockdoc_error_clear(&err);
  rockdoc_options_set_encryption_key(options, key_b, 32);
  rockdoc_options_add_previous_encryption_key(options, key_a, 32);
  db = rockdoc_open(path, options, &err);
  CHECK(db != NULL);
  CHECK(rockdoc_close(db, &err) == 1);
  CHECK(rockdoc_rotate_encryption_key(path, key_a, 32, key_b, 5, &err) == 0);
  CHECK_CODE(err, 2);
  rockdoc_error_clear(&err);
  rockdoc_options_destroy(options);
}

int main(int argc, char** argv) {
  const char* dir = argc > 1 ? argv[1] : NULL;
  char made[] = "/tmp/rockdoc_c_api_XXXXXX";
  if (dir == NULL) dir = mkdtemp(made);
  if (dir == NULL) {
    perror("mkdtemp");
    return 2;
  }
  test_open_and_close(dir);
  test_change_streams(dir);
  test_live_queries(dir);
  test_encryption(dir);

  rockdoc_error_t err = ROCKDOC_ERROR_INIT;
  char path[512];
  snprintf(path, sizeof path, "%s/crud", dir);
  rockdoc_client_t* db = rockdoc_open(path, NULL, &err);
  CHECK(db != NULL);
  if (db != NULL) {
    test_commands(db);
    test_crud(db);
    test_batch_command(db);
    CHECK(rockdoc_close(db, &err) == 1);
  }
  rockdoc_error_clear(&err);
  if (failures == 0) printf("c_api_test: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
