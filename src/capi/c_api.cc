// capi/c_api.cc: the C API (include/rockdoc/c.h) over Client::RunCommand.
// Every entry point checks its arguments, catches every exception, and
// reports failures as a MongoDB code plus a message.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "command/change_stream_options.h"
#include "command/command.h"
#include "common/option_table.h"
#include "rockdoc/c.h"
#include "rockdoc/client.h"
#include "rockdoc/document.h"
#include "rockdoc/status.h"

struct rockdoc_options_t {
  rockdoc::ClientOptions options;
};

struct rockdoc_client_t {
  std::unique_ptr<rockdoc::Client> client;
};

struct rockdoc_change_stream_t {
  rockdoc::ChangeStream stream;
  std::optional<rockdoc::Document> event;  // what next lent
  rockdoc::Document token;                 // what resume_token lent
};

struct rockdoc_subscription_t {
  std::optional<rockdoc::ChangeSubscription> subscription;
};

struct rockdoc_live_query_t {
  std::optional<rockdoc::LiveQuery> query;
};

struct rockdoc_cursor_t {
  rockdoc_client_t* client = nullptr;
  std::string db;
  std::string collection;  // what getMore names (the cursor's ns after "db.")
  int64_t id = 0;
  rockdoc::Document reply;                  // the reply holding the current batch
  std::vector<rockdoc::DocumentView> docs;  // views into `reply`
  size_t next = 0;
};

namespace {

using rockdoc::BsonBuilder;
using rockdoc::Document;
using rockdoc::DocumentView;
using rockdoc::Element;
using rockdoc::ErrorCode;
using rockdoc::Status;

char* CopyString(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out != nullptr) std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

void SetError(rockdoc_error_t* err, int32_t code, const std::string& message) {
  if (err == nullptr) return;
  std::free(err->message);
  err->code = code;
  err->message = CopyString(message);
}

void SetError(rockdoc_error_t* err, const Status& s) {
  SetError(err, static_cast<int32_t>(s.code()), std::string(s.message()));
}

// Runs `body`, turning an exception into InternalError: none crosses into C.
template <typename R, typename F>
R Guard(rockdoc_error_t* err, R on_failure, F body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    SetError(err, static_cast<int32_t>(ErrorCode::kInternalError), "out of memory");
  } catch (const std::exception& e) {
    SetError(err, static_cast<int32_t>(ErrorCode::kInternalError), e.what());
  } catch (...) {
    SetError(err, static_cast<int32_t>(ErrorCode::kInternalError), "unknown exception");
  }
  return on_failure;
}

bool NotNull(const void* p, const char* what, rockdoc_error_t* err) {
  if (p != nullptr) return true;
  SetError(err, static_cast<int32_t>(ErrorCode::kBadValue), std::string(what) + " is NULL");
  return false;
}

// A document from C: `len` bytes at `p`, whose header must say `len` and
// which must be valid BSON. Never reads past p + len.
// At most `max_size` bytes (a document's 16 MiB unless a command's bound
// is given).
bool CheckDocument(const uint8_t* p, size_t len, const char* what, DocumentView* out,
                   rockdoc_error_t* err, size_t max_size = rockdoc::kMaxBsonObjectSize) {
  if (!NotNull(p, what, err)) return false;
  auto invalid = [&](const std::string& why) {
    SetError(err, static_cast<int32_t>(ErrorCode::kInvalidBSON), std::string(what) + ": " + why);
    return false;
  };
  if (len < 5) return invalid("a BSON document has at least 5 bytes, got " + std::to_string(len));
  const uint32_t header = static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                          static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
  if (header != len) {
    return invalid("the document's length header says " + std::to_string(header) +
                   " bytes, the buffer has " + std::to_string(len));
  }
  rockdoc::BsonValidationOptions limits;
  limits.max_size = max_size;
  Status valid =
      rockdoc::ValidateBson(std::string_view(reinterpret_cast<const char*>(p), len), limits);
  if (!valid.ok()) {
    SetError(err, valid);
    return false;
  }
  *out = DocumentView(p);
  return true;
}

bool CheckClient(const rockdoc_client_t* client, rockdoc_error_t* err) {
  if (!NotNull(client, "client", err)) return false;
  if (client->client == nullptr) {
    SetError(err, static_cast<int32_t>(ErrorCode::kIllegalOperation), "client is closed");
    return false;
  }
  return true;
}

// A reply's error (ok: 0) as a Status; OK for ok: 1.
Status ReplyStatus(const Document& reply) {
  if (reply.Get("ok").NumberAsDouble() == 1) return Status::OK();
  return Status(static_cast<ErrorCode>(reply.Get("code").Int32()),
                std::string(reply.Get("errmsg").String()));
}

// The first write error of a write command's reply, as a Status.
Status FirstWriteError(const Document& reply) {
  Element errors = reply.Get("writeErrors");
  if (errors.type() != rockdoc::BsonType::kArray) return Status::OK();
  for (Element e : errors.Array()) {
    DocumentView d = e.Document();
    return Status(static_cast<ErrorCode>(d.Get("code").Int32()),
                  std::string(d.Get("errmsg").String()));
  }
  return Status::OK();
}

// Runs a write command; its reply when it and its statements succeeded,
// else nullopt with *err set (the command's error or the first write error).
std::optional<Document> RunWrite(rockdoc_client_t* client, const char* db, Document command,
                                 rockdoc_error_t* err) {
  Document reply = client->client->RunCommand(db, command);
  Status s = ReplyStatus(reply);
  if (s.ok()) s = FirstWriteError(reply);
  if (!s.ok()) {
    SetError(err, s);
    return std::nullopt;
  }
  return reply;
}

// Loads the batch of `reply` (firstBatch or nextBatch) into the cursor.
bool LoadBatch(rockdoc_cursor_t* c, Document reply, rockdoc_error_t* err) {
  Status s = ReplyStatus(reply);
  if (!s.ok()) {
    SetError(err, s);
    return false;
  }
  Element cursor = reply.Get("cursor");
  if (cursor.type() != rockdoc::BsonType::kDocument) {
    SetError(err, static_cast<int32_t>(ErrorCode::kBadValue), "the command returns no cursor");
    return false;
  }
  c->reply = std::move(reply);
  DocumentView info = c->reply.Get("cursor").Document();
  c->id = info.Get("id").Int64();
  const std::string_view ns = info.Get("ns").String();
  const size_t dot = ns.find('.');
  c->collection = std::string(dot == std::string_view::npos ? ns : ns.substr(dot + 1));
  Element batch = info.Get("firstBatch");
  if (!batch.ok()) batch = info.Get("nextBatch");
  c->docs.clear();
  c->next = 0;
  for (Element d : batch.Array()) c->docs.push_back(d.Document());
  return true;
}

}  // namespace

extern "C" {

void rockdoc_error_clear(rockdoc_error_t* err) {
  if (err == nullptr) return;
  std::free(err->message);
  err->code = 0;
  err->message = nullptr;
}

void rockdoc_free(void* ptr) { std::free(ptr); }

const char* rockdoc_version(void) { return ROCKDOC_VERSION_STRING; }

rockdoc_options_t* rockdoc_options_create(void) { return new (std::nothrow) rockdoc_options_t(); }
void rockdoc_options_destroy(rockdoc_options_t* options) { delete options; }
void rockdoc_options_set_create_if_missing(rockdoc_options_t* options, int value) {
  if (options != nullptr) options->options.create_if_missing = value != 0;
}
void rockdoc_options_set_sync(rockdoc_options_t* options, int value) {
  if (options != nullptr) options->options.sync = value != 0;
}
void rockdoc_options_set_block_cache_bytes(rockdoc_options_t* options, size_t bytes) {
  if (options != nullptr) options->options.block_cache_bytes = bytes;
}
void rockdoc_options_set_change_log(rockdoc_options_t* options, int value) {
  if (options != nullptr) options->options.change_log = value != 0;
}
void rockdoc_options_set_read_only(rockdoc_options_t* options, int value) {
  if (options != nullptr) options->options.read_only = value != 0;
}
void rockdoc_options_set_record_cache_bytes(rockdoc_options_t* options, size_t bytes) {
  if (options != nullptr) options->options.record_cache_bytes = bytes;
}

namespace {
std::string KeyBytes(const void* key, size_t size) {
  return key == nullptr ? std::string() : std::string(static_cast<const char*>(key), size);
}
}  // namespace

void rockdoc_options_set_encryption_key(rockdoc_options_t* options, const void* key,
                                        size_t size) {
  if (options != nullptr) options->options.encryption_key = KeyBytes(key, size);
}
int rockdoc_options_set_encryption_key_file(rockdoc_options_t* options, const char* path,
                                            rockdoc_error_t* err) {
  return Guard<int>(err, 0, [&]() -> int {
    if (!NotNull(options, "options", err) || !NotNull(path, "path", err)) return 0;
    auto key = rockdoc::EncryptionKeyFromFile(path);
    if (!key.ok()) {
      SetError(err, key.status());
      return 0;
    }
    options->options.encryption_key = std::move(key).value();
    return 1;
  });
}
void rockdoc_options_add_previous_encryption_key(rockdoc_options_t* options, const void* key,
                                                 size_t size) {
  if (options != nullptr) options->options.previous_encryption_keys.push_back(KeyBytes(key, size));
}
int rockdoc_rotate_encryption_key(const char* path, const void* old_key, size_t old_size,
                                  const void* new_key, size_t new_size, rockdoc_error_t* err) {
  return Guard<int>(err, 0, [&]() -> int {
    if (!NotNull(path, "path", err)) return 0;
    auto r = rockdoc::Client::RotateEncryptionKey(path, KeyBytes(old_key, old_size),
                                                  KeyBytes(new_key, new_size));
    if (!r.ok()) {
      SetError(err, r.status());
      return 0;
    }
    return 1;
  });
}

rockdoc_client_t* rockdoc_open(const char* path, const rockdoc_options_t* options,
                               rockdoc_error_t* err) {
  return Guard<rockdoc_client_t*>(err, nullptr, [&]() -> rockdoc_client_t* {
    if (!NotNull(path, "path", err)) return nullptr;
    auto opened = rockdoc::Client::Open(
        path, options != nullptr ? options->options : rockdoc::ClientOptions());
    if (!opened.ok()) {
      SetError(err, opened.status());
      return nullptr;
    }
    auto* client = new rockdoc_client_t();
    client->client = std::move(opened).value();
    return client;
  });
}

int rockdoc_close(rockdoc_client_t* client, rockdoc_error_t* err) {
  if (client == nullptr) return 1;
  int ok = Guard<int>(err, 0, [&]() -> int {
    if (client->client == nullptr) return 1;
    Status s = client->client->Close();
    if (!s.ok()) {
      SetError(err, s);
      return 0;
    }
    return 1;
  });
  delete client;
  return ok;
}

int rockdoc_checkpoint(rockdoc_client_t* client, const char* dir, rockdoc_error_t* err) {
  return Guard<int>(err, 0, [&]() -> int {
    if (!CheckClient(client, err) || !NotNull(dir, "dir", err)) return 0;
    Status s = client->client->Checkpoint(dir);
    if (!s.ok()) {
      SetError(err, s);
      return 0;
    }
    return 1;
  });
}

namespace {

// rockdoc_run_command and rockdoc_run_batch_command: the command at most
// `max_size` bytes, as the command layer bounds it.
int RunCommandBounded(rockdoc_client_t* client, const char* db, const uint8_t* command,
                      size_t command_len, size_t max_size, uint8_t** reply, size_t* reply_len,
                      rockdoc_error_t* err) {
  if (reply != nullptr) *reply = nullptr;
  if (reply_len != nullptr) *reply_len = 0;
  return Guard<int>(err, 0, [&]() -> int {
    DocumentView cmd;
    if (!CheckClient(client, err) || !NotNull(db, "db", err) || !NotNull(reply, "reply", err) ||
        !NotNull(reply_len, "reply_len", err) ||
        !CheckDocument(command, command_len, "command", &cmd, err, max_size)) {
      return 0;
    }
    Document answer = rockdoc::internal::RunCommandWithMaxSize(*client->client, db, cmd, max_size);
    const std::string_view bytes = answer.bytes();
    auto* out = static_cast<uint8_t*>(std::malloc(bytes.size()));
    if (out == nullptr) throw std::bad_alloc();
    std::memcpy(out, bytes.data(), bytes.size());
    *reply = out;
    *reply_len = bytes.size();
    Status s = ReplyStatus(answer);
    if (!s.ok()) {
      SetError(err, s);
      return 0;
    }
    return 1;
  });
}

}  // namespace

int rockdoc_run_command(rockdoc_client_t* client, const char* db, const uint8_t* command,
                        size_t command_len, uint8_t** reply, size_t* reply_len,
                        rockdoc_error_t* err) {
  return RunCommandBounded(client, db, command, command_len, rockdoc::internal::kMaxCommandSize,
                           reply, reply_len, err);
}

int rockdoc_run_batch_command(rockdoc_client_t* client, const char* db, const uint8_t* command,
                              size_t command_len, uint8_t** reply, size_t* reply_len,
                              rockdoc_error_t* err) {
  return RunCommandBounded(client, db, command, command_len, ROCKDOC_MAX_MESSAGE_SIZE, reply,
                           reply_len, err);
}

rockdoc_cursor_t* rockdoc_command_cursor(rockdoc_client_t* client, const char* db,
                                         const uint8_t* command, size_t command_len,
                                         rockdoc_error_t* err) {
  return Guard<rockdoc_cursor_t*>(err, nullptr, [&]() -> rockdoc_cursor_t* {
    DocumentView cmd;
    if (!CheckClient(client, err) || !NotNull(db, "db", err) ||
        !CheckDocument(command, command_len, "command", &cmd, err)) {
      return nullptr;
    }
    auto cursor = std::make_unique<rockdoc_cursor_t>();
    cursor->client = client;
    cursor->db = db;
    if (!LoadBatch(cursor.get(), client->client->RunCommand(db, cmd), err)) return nullptr;
    return cursor.release();
  });
}

int rockdoc_cursor_next(rockdoc_cursor_t* cursor, const uint8_t** doc, size_t* doc_len,
                        rockdoc_error_t* err) {
  return Guard<int>(err, 0, [&]() -> int {
    if (!NotNull(cursor, "cursor", err) || !NotNull(doc, "doc", err) ||
        !NotNull(doc_len, "doc_len", err) || !CheckClient(cursor->client, err)) {
      return 0;
    }
    while (cursor->next == cursor->docs.size()) {
      if (cursor->id == 0) return 0;
      BsonBuilder more;
      more.AppendInt64("getMore", cursor->id);
      more.AppendString("collection", cursor->collection);
      if (!LoadBatch(cursor,
                     cursor->client->client->RunCommand(cursor->db, std::move(more).Build()),
                     err)) {
        cursor->id = 0;  // a failed cursor is closed on the server side
        return 0;
      }
    }
    DocumentView d = cursor->docs[cursor->next++];
    *doc = reinterpret_cast<const uint8_t*>(d.bytes().data());
    *doc_len = d.bytes().size();
    return 1;
  });
}

void rockdoc_cursor_close(rockdoc_cursor_t* cursor) {
  if (cursor == nullptr) return;
  Guard<int>(nullptr, 0, [&]() -> int {
    if (cursor->id != 0 && cursor->client != nullptr && cursor->client->client != nullptr) {
      BsonBuilder kill;
      kill.AppendString("killCursors", cursor->collection);
      kill.OpenArray("cursors");
      kill.AppendInt64("", cursor->id);
      kill.Close();
      cursor->client->client->RunCommand(cursor->db, std::move(kill).Build());
    }
    return 1;
  });
  delete cursor;
}

int rockdoc_insert_one(rockdoc_client_t* client, const char* db, const char* collection,
                       const uint8_t* doc, size_t doc_len, rockdoc_error_t* err) {
  return Guard<int>(err, 0, [&]() -> int {
    DocumentView d;
    if (!CheckClient(client, err) || !NotNull(db, "db", err) ||
        !NotNull(collection, "collection", err) || !CheckDocument(doc, doc_len, "doc", &d, err)) {
      return 0;
    }
    BsonBuilder cmd;
    cmd.AppendString("insert", collection);
    cmd.OpenArray("documents");
    cmd.AppendDocument("", d);
    cmd.Close();
    return RunWrite(client, db, std::move(cmd).Build(), err) ? 1 : 0;
  });
}

rockdoc_cursor_t* rockdoc_find(rockdoc_client_t* client, const char* db, const char* collection,
                               const uint8_t* filter, size_t filter_len, const uint8_t* options,
                               size_t options_len, rockdoc_error_t* err) {
  return Guard<rockdoc_cursor_t*>(err, nullptr, [&]() -> rockdoc_cursor_t* {
    DocumentView f, o;
    if (!CheckClient(client, err) || !NotNull(db, "db", err) ||
        !NotNull(collection, "collection", err) ||
        (filter != nullptr && !CheckDocument(filter, filter_len, "filter", &f, err)) ||
        (options != nullptr && !CheckDocument(options, options_len, "options", &o, err))) {
      return nullptr;
    }
    BsonBuilder cmd;
    cmd.AppendString("find", collection);
    if (filter != nullptr) cmd.AppendDocument("filter", f);
    if (options != nullptr) {
      for (Element e : o) cmd.AppendElement(e);  // the find command decodes them
    }
    Document built = std::move(cmd).Build();
    const std::string_view bytes = built.bytes();
    return rockdoc_command_cursor(client, db, reinterpret_cast<const uint8_t*>(bytes.data()),
                                  bytes.size(), err);
  });
}

int rockdoc_update(rockdoc_client_t* client, const char* db, const char* collection,
                   const uint8_t* filter, size_t filter_len, const uint8_t* update,
                   size_t update_len, int multi, int upsert, int64_t* matched, int64_t* modified,
                   rockdoc_error_t* err) {
  return Guard<int>(err, 0, [&]() -> int {
    DocumentView f, u;
    if (!CheckClient(client, err) || !NotNull(db, "db", err) ||
        !NotNull(collection, "collection", err) ||
        !CheckDocument(filter, filter_len, "filter", &f, err) ||
        !CheckDocument(update, update_len, "update", &u, err)) {
      return 0;
    }
    BsonBuilder cmd;
    cmd.AppendString("update", collection);
    cmd.OpenArray("updates");
    cmd.OpenDocument("");
    cmd.AppendDocument("q", f);
    cmd.AppendDocument("u", u);
    cmd.AppendBool("multi", multi != 0);
    cmd.AppendBool("upsert", upsert != 0);
    cmd.Close();
    cmd.Close();
    std::optional<Document> reply = RunWrite(client, db, std::move(cmd).Build(), err);
    if (!reply) return 0;
    if (matched != nullptr) *matched = reply->Get("n").Int32();
    if (modified != nullptr) *modified = reply->Get("nModified").Int32();
    return 1;
  });
}

int rockdoc_delete(rockdoc_client_t* client, const char* db, const char* collection,
                   const uint8_t* filter, size_t filter_len, int multi, int64_t* deleted,
                   rockdoc_error_t* err) {
  return Guard<int>(err, 0, [&]() -> int {
    DocumentView f;
    if (!CheckClient(client, err) || !NotNull(db, "db", err) ||
        !NotNull(collection, "collection", err) ||
        !CheckDocument(filter, filter_len, "filter", &f, err)) {
      return 0;
    }
    BsonBuilder cmd;
    cmd.AppendString("delete", collection);
    cmd.OpenArray("deletes");
    cmd.OpenDocument("");
    cmd.AppendDocument("q", f);
    cmd.AppendInt32("limit", multi != 0 ? 0 : 1);
    cmd.Close();
    cmd.Close();
    std::optional<Document> reply = RunWrite(client, db, std::move(cmd).Build(), err);
    if (!reply) return 0;
    if (deleted != nullptr) *deleted = reply->Get("n").Int32();
    return 1;
  });
}

// ---- change streams ----

rockdoc_change_stream_t* rockdoc_watch(rockdoc_client_t* client, const char* db,
                                       const char* collection, const uint8_t* pipeline,
                                       size_t pipeline_len, const uint8_t* spec, size_t spec_len,
                                       int64_t max_await_ms, rockdoc_error_t* err) {
  return Guard<rockdoc_change_stream_t*>(err, nullptr, [&]() -> rockdoc_change_stream_t* {
    DocumentView stages, fields;
    if (!CheckClient(client, err) ||
        (pipeline != nullptr && !CheckDocument(pipeline, pipeline_len, "pipeline", &stages, err)) ||
        (spec != nullptr && !CheckDocument(spec, spec_len, "spec", &fields, err))) {
      return nullptr;
    }
    if (db == nullptr && collection != nullptr) {
      SetError(err, static_cast<int32_t>(ErrorCode::kBadValue), "a collection needs its db");
      return nullptr;
    }
    auto decoded = rockdoc::internal::ParseChangeStreamSpec(fields);
    if (!decoded.ok()) {
      SetError(err, decoded.status());
      return nullptr;
    }
    if (decoded->all_changes_for_cluster) {  // the command's spelling of db = NULL
      SetError(err, static_cast<int32_t>(ErrorCode::kInvalidOptions),
               "allChangesForCluster: watch every database with db and collection NULL");
      return nullptr;
    }
    rockdoc::ChangeStreamOptions options = std::move(decoded->options);
    options.max_await_time_ms = max_await_ms;
    rockdoc::Client& c = *client->client;
    auto stream = db == nullptr ? c.Watch(stages, options)
                  : collection == nullptr
                      ? c.GetDatabase(db).Watch(stages, options)
                      : c.GetDatabase(db).GetCollection(collection).Watch(stages, options);
    if (!stream.ok()) {
      SetError(err, stream.status());
      return nullptr;
    }
    return new rockdoc_change_stream_t{std::move(*stream), std::nullopt, Document()};
  });
}

namespace {
int LendEvent(rockdoc_change_stream_t* stream, bool wait, const uint8_t** event, size_t* event_len,
              rockdoc_error_t* err) {
  return Guard<int>(err, 0, [&]() -> int {
    if (!NotNull(stream, "stream", err) || !NotNull(event, "event", err) ||
        !NotNull(event_len, "event_len", err)) {
      return 0;
    }
    auto next = wait ? stream->stream.Next() : stream->stream.TryNext();
    if (!next.ok()) {
      SetError(err, next.status());
      return 0;
    }
    stream->event = std::move(*next);
    if (!stream->event) return 0;
    *event = stream->event->view().data();
    *event_len = stream->event->size();
    return 1;
  });
}
}  // namespace

int rockdoc_change_stream_next(rockdoc_change_stream_t* stream, const uint8_t** event,
                               size_t* event_len, rockdoc_error_t* err) {
  return LendEvent(stream, /*wait=*/true, event, event_len, err);
}
int rockdoc_change_stream_try_next(rockdoc_change_stream_t* stream, const uint8_t** event,
                                   size_t* event_len, rockdoc_error_t* err) {
  return LendEvent(stream, /*wait=*/false, event, event_len, err);
}

int rockdoc_change_stream_resume_token(rockdoc_change_stream_t* stream, const uint8_t** token,
                                       size_t* token_len, rockdoc_error_t* err) {
  return Guard<int>(err, 0, [&]() -> int {
    if (!NotNull(stream, "stream", err) || !NotNull(token, "token", err) ||
        !NotNull(token_len, "token_len", err)) {
      return 0;
    }
    stream->token = stream->stream.resume_token();
    *token = stream->token.view().data();
    *token_len = stream->token.size();
    return 1;
  });
}

int rockdoc_change_stream_closed(const rockdoc_change_stream_t* stream) {
  return stream != nullptr && stream->stream.closed() ? 1 : 0;
}

void rockdoc_change_stream_close(rockdoc_change_stream_t* stream) {
  if (stream == nullptr) return;
  stream->stream.Close();
  delete stream;
}

rockdoc_subscription_t* rockdoc_subscribe(rockdoc_change_stream_t* stream,
                                          rockdoc_event_fn on_event, rockdoc_end_fn on_end,
                                          void* context, rockdoc_error_t* err) {
  std::unique_ptr<rockdoc_change_stream_t> taken(stream);
  return Guard<rockdoc_subscription_t*>(err, nullptr, [&]() -> rockdoc_subscription_t* {
    if (!NotNull(stream, "stream", err) ||
        !NotNull(reinterpret_cast<const void*>(on_event), "on_event", err)) {
      return nullptr;
    }
    rockdoc::ChangeSubscription::EndCallback end;
    if (on_end != nullptr) {
      end = [on_end, context](const Status& s) {
        const std::string message(s.message());
        on_end(context, static_cast<int32_t>(s.code()), s.ok() ? nullptr : message.c_str());
      };
    }
    auto subscription = rockdoc::ChangeSubscription::Start(
        std::move(taken->stream),
        [on_event, context](const Document& e) { on_event(context, e.view().data(), e.size()); },
        std::move(end));
    if (!subscription.ok()) {
      SetError(err, subscription.status());
      return nullptr;
    }
    auto* out = new rockdoc_subscription_t();
    out->subscription.emplace(std::move(*subscription));
    return out;
  });
}

int rockdoc_subscription_resume_token(rockdoc_subscription_t* subscription, uint8_t** token,
                                      size_t* token_len, rockdoc_error_t* err) {
  return Guard<int>(err, 0, [&]() -> int {
    if (!NotNull(subscription, "subscription", err) || !NotNull(token, "token", err) ||
        !NotNull(token_len, "token_len", err)) {
      return 0;
    }
    const Document t = subscription->subscription->resume_token();
    *token = static_cast<uint8_t*>(std::malloc(t.size()));
    if (*token == nullptr) {
      SetError(err, static_cast<int32_t>(ErrorCode::kInternalError), "out of memory");
      return 0;
    }
    std::memcpy(*token, t.view().data(), t.size());
    *token_len = t.size();
    return 1;
  });
}

int rockdoc_subscription_running(const rockdoc_subscription_t* subscription) {
  return subscription != nullptr && subscription->subscription->running() ? 1 : 0;
}

void rockdoc_subscription_cancel(rockdoc_subscription_t* subscription) {
  if (subscription == nullptr) return;
  subscription->subscription->Cancel();
  delete subscription;
}

}  // extern "C"

namespace {

// rockdoc_observe's options document, decoded from a table of its names.
Status DecodeInt64Option(const Element& e, std::string_view name, int64_t* out) {
  std::optional<int64_t> v = e.AsExactInt64();
  if (!v) {
    return Status(ErrorCode::kTypeMismatch, std::string(name) + " must be a whole number");
  }
  *out = *v;
  return Status::OK();
}
Status DecodeDocumentOption(const Element& e, std::string_view name, Document* out) {
  if (!e.IsDocument()) {
    return Status(ErrorCode::kTypeMismatch, std::string(name) + " must be a document");
  }
  *out = Document::AdoptValidated(std::string(e.Document().bytes()));
  return Status::OK();
}
constexpr rockdoc::internal::OptionField<rockdoc::ObserveOptions> kObserveFields[] = {
    {"sort", [](const Element& e, rockdoc::ObserveOptions* o) {
       return DecodeDocumentOption(e, "sort", &o->sort);
     }},
    {"projection", [](const Element& e, rockdoc::ObserveOptions* o) {
       return DecodeDocumentOption(e, "projection", &o->projection);
     }},
    {"skip", [](const Element& e, rockdoc::ObserveOptions* o) {
       return DecodeInt64Option(e, "skip", &o->skip);
     }},
    {"limit", [](const Element& e, rockdoc::ObserveOptions* o) {
       return DecodeInt64Option(e, "limit", &o->limit);
     }},
    {"ownThread", [](const Element& e, rockdoc::ObserveOptions* o) {
       if (!e.IsBool()) return Status(ErrorCode::kTypeMismatch, "ownThread must be a bool");
       o->own_thread = e.Bool();
       return Status::OK();
     }},
};

// {_id: <value>}, for the callbacks.
Document IdDocument(const rockdoc::Value& id) {
  BsonBuilder b;
  b.AppendElementAs("_id", id.element());
  return std::move(b).Build();
}

rockdoc::ObserveCallbacks CallbacksOf(const rockdoc_observe_callbacks_t& c) {
  rockdoc::ObserveCallbacks out;
  void* context = c.context;
  if (c.added != nullptr) {
    out.added = [fn = c.added, context](const rockdoc::Value& id, const Document& doc,
                                        const std::optional<rockdoc::Value>& before) {
      const Document i = IdDocument(id);
      const std::optional<Document> b = before ? std::optional<Document>(IdDocument(*before))
                                               : std::nullopt;
      fn(context, i.view().data(), i.size(), doc.view().data(), doc.size(),
         b ? b->view().data() : nullptr, b ? b->size() : 0);
    };
  }
  if (c.changed != nullptr) {
    out.changed = [fn = c.changed, context](const rockdoc::Value& id, const Document& fields,
                                            const std::vector<std::string>& removed) {
      const Document i = IdDocument(id);
      BsonBuilder names;
      for (size_t k = 0; k < removed.size(); ++k) names.AppendString(std::to_string(k), removed[k]);
      const Document r = std::move(names).Build();
      fn(context, i.view().data(), i.size(), fields.view().data(), fields.size(), r.view().data(),
         r.size());
    };
  }
  if (c.moved != nullptr) {
    out.moved = [fn = c.moved, context](const rockdoc::Value& id,
                                        const std::optional<rockdoc::Value>& before) {
      const Document i = IdDocument(id);
      const std::optional<Document> b = before ? std::optional<Document>(IdDocument(*before))
                                               : std::nullopt;
      fn(context, i.view().data(), i.size(), b ? b->view().data() : nullptr, b ? b->size() : 0);
    };
  }
  if (c.removed != nullptr) {
    out.removed = [fn = c.removed, context](const rockdoc::Value& id) {
      const Document i = IdDocument(id);
      fn(context, i.view().data(), i.size());
    };
  }
  if (c.ended != nullptr) {
    out.ended = [fn = c.ended, context](const Status& s) {
      const std::string message(s.message());
      fn(context, static_cast<int32_t>(s.code()), s.ok() ? nullptr : message.c_str());
    };
  }
  return out;
}

}  // namespace

rockdoc_live_query_t* rockdoc_observe(rockdoc_client_t* client, const char* db,
                                      const char* collection, const uint8_t* filter,
                                      size_t filter_len, const uint8_t* options,
                                      size_t options_len,
                                      const rockdoc_observe_callbacks_t* callbacks,
                                      rockdoc_error_t* err) {
  return Guard<rockdoc_live_query_t*>(err, nullptr, [&]() -> rockdoc_live_query_t* {
    DocumentView f, o;
    if (!CheckClient(client, err) || !NotNull(db, "db", err) ||
        !NotNull(collection, "collection", err) || !NotNull(callbacks, "callbacks", err) ||
        (filter != nullptr && !CheckDocument(filter, filter_len, "filter", &f, err)) ||
        (options != nullptr && !CheckDocument(options, options_len, "options", &o, err))) {
      return nullptr;
    }
    rockdoc::ObserveOptions decoded;
    Status s = rockdoc::internal::DecodeValidatedOptions(
        o, kObserveFields, &decoded,
        [](std::string_view name) {
          return Status(static_cast<ErrorCode>(40415),
                        "rockdoc_observe: unknown option '" + std::string(name) + "'");
        },
        [](std::string_view name) {
          return Status(ErrorCode::kNotImplemented,
                        "rockdoc_observe: '" + std::string(name) + "' is not supported");
        });
    if (!s.ok()) {
      SetError(err, s);
      return nullptr;
    }
    auto query = client->client->GetDatabase(db).GetCollection(collection).Observe(
        filter != nullptr ? f : DocumentView(), decoded, CallbacksOf(*callbacks));
    if (!query.ok()) {
      SetError(err, query.status());
      return nullptr;
    }
    auto* out = new rockdoc_live_query_t();
    out->query.emplace(std::move(*query));
    return out;
  });
}

int rockdoc_live_query_poll(rockdoc_live_query_t* query, int64_t wait_ms, rockdoc_error_t* err) {
  return Guard<int>(err, 0, [&]() -> int {
    if (!NotNull(query, "query", err)) return 0;
    Status s = query->query->Poll(wait_ms);
    if (!s.ok()) {
      SetError(err, s);
      return 0;
    }
    return 1;
  });
}

int rockdoc_live_query_running(const rockdoc_live_query_t* query) {
  return query != nullptr && query->query->running() ? 1 : 0;
}

int64_t rockdoc_live_query_requeries(const rockdoc_live_query_t* query) {
  return query == nullptr ? 0 : query->query->requeries();
}

void rockdoc_live_query_stop(rockdoc_live_query_t* query) {
  if (query == nullptr) return;
  try {
    query->query->Stop();
  } catch (...) {
  }
  delete query;
}
