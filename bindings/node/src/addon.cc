// rockdoc's Node.js addon: the only native code of the `rockdoc` npm package.
//
// It offers one class, Native, over rockdoc's C API (include/rockdoc/c.h):
//   open(path, {createIfMissing, sync, changeLog, blockCacheBytes}) -> Promise<void>
//   command(db, bsonBuffer, batch) -> Promise<Buffer>   (the reply's BSON)
//   close() -> Promise<void>
// Everything else (the driver's API, BSON encoding with js-bson, error
// classes) is JavaScript in lib/.
//
// Threads: every engine call runs on libuv's worker pool (Napi::AsyncWorker),
// so the event loop never blocks; the C API's client is thread-safe, so
// several commands of one client may run at once. An Engine counts the calls
// inside the engine; Close marks it closed (a call that starts after that
// fails with code 20, "client is closed") and waits for the count to drop to
// zero before rockdoc_close, so a client is never closed under a call.
//
// Ownership: an Engine is shared by its Native object and the workers in
// flight. Engines still open when the Node.js environment tears down (process
// exit, a worker thread's end) are closed by an environment cleanup hook, and
// one whose Native object is collected is closed by its destructor: RocksDB's
// lock and files are released either way.
#include <napi.h>
#include <rockdoc/c.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>

namespace {

constexpr int32_t kIllegalOperation = 20;

class Engine {
 public:
  // Opens the directory; returns the C API's code (0: opened) and message.
  int32_t Open(const std::string& path, rockdoc_options_t* options, std::string* message) {
    rockdoc_error_t err = ROCKDOC_ERROR_INIT;
    rockdoc_client_t* client = rockdoc_open(path.c_str(), options, &err);
    int32_t code = client ? 0 : (err.code ? err.code : 1);
    if (!client) *message = err.message ? err.message : "rockdoc_open failed";
    rockdoc_error_clear(&err);
    std::lock_guard<std::mutex> lock(mu_);
    client_ = client;
    return code;
  }

  // Marks a call inside the engine; false once the client is closed.
  rockdoc_client_t* Enter() {
    std::lock_guard<std::mutex> lock(mu_);
    if (client_ == nullptr || closing_) return nullptr;
    ++in_flight_;
    return client_;
  }

  void Leave() {
    std::lock_guard<std::mutex> lock(mu_);
    if (--in_flight_ == 0) idle_.notify_all();
  }

  // Closes once no call is inside the engine (idempotent). Returns the C
  // API's code (0: closed cleanly).
  int32_t Close(std::string* message) {
    std::unique_lock<std::mutex> lock(mu_);
    closing_ = true;
    idle_.wait(lock, [this] { return in_flight_ == 0; });
    rockdoc_client_t* client = std::exchange(client_, nullptr);
    lock.unlock();
    if (client == nullptr) return 0;
    rockdoc_error_t err = ROCKDOC_ERROR_INIT;
    int32_t code = rockdoc_close(client, &err) ? 0 : (err.code ? err.code : 1);
    if (code != 0 && message) *message = err.message ? err.message : "rockdoc_close failed";
    rockdoc_error_clear(&err);
    return code;
  }

  bool open() {
    std::lock_guard<std::mutex> lock(mu_);
    return client_ != nullptr && !closing_;
  }

 private:
  std::mutex mu_;
  std::condition_variable idle_;
  rockdoc_client_t* client_ = nullptr;
  bool closing_ = false;
  int in_flight_ = 0;
};

// The engines of this addon instance still open, for the cleanup hook.
struct AddonData {
  std::mutex mu;
  std::set<std::shared_ptr<Engine>> open;
};

// Never freed: a Native collected during teardown may still look it up.
void KeepAddonData(Napi::Env, AddonData*) {}

void CloseAllAtTeardown(AddonData* data) {
  std::set<std::shared_ptr<Engine>> engines;
  {
    std::lock_guard<std::mutex> lock(data->mu);
    engines.swap(data->open);
  }
  for (const auto& engine : engines) engine->Close(nullptr);
}

Napi::Error MakeError(Napi::Env env, int32_t code, const std::string& message) {
  Napi::Error error = Napi::Error::New(env, message);
  error.Set("code", Napi::Number::New(env, code));
  return error;
}

// A promise settled by a worker: Execute on the pool, OnOK on the JS thread.
class PromiseWorker : public Napi::AsyncWorker {
 public:
  // `self`, the Native object, is kept alive while the worker is queued, so
  // that it is never collected (and its engine closed) under a call.
  PromiseWorker(Napi::Object self, std::shared_ptr<Engine> engine)
      : Napi::AsyncWorker(self.Env(), "rockdoc"),
        deferred_(Napi::Promise::Deferred::New(self.Env())),
        engine_(std::move(engine)),
        self_(Napi::Persistent(self)) {}
  Napi::Promise Queued() {
    Queue();
    return deferred_.Promise();
  }

 protected:
  void OnOK() override {
    Napi::Env env = Env();
    if (code_ != 0) {
      deferred_.Reject(MakeError(env, code_, message_).Value());
      return;
    }
    deferred_.Resolve(Result(env));
  }
  virtual Napi::Value Result(Napi::Env env) { return env.Undefined(); }

  Napi::Promise::Deferred deferred_;
  std::shared_ptr<Engine> engine_;
  Napi::ObjectReference self_;
  int32_t code_ = 0;
  std::string message_;
};

class OpenWorker : public PromiseWorker {
 public:
  OpenWorker(Napi::Object self, std::shared_ptr<Engine> engine, std::string path,
             rockdoc_options_t* options, AddonData* data)
      : PromiseWorker(self, std::move(engine)), path_(std::move(path)), options_(options),
        data_(data) {}
  ~OpenWorker() override { rockdoc_options_destroy(options_); }
  void Execute() override {
    code_ = engine_->Open(path_, options_, &message_);
    if (code_ == 0) {
      std::lock_guard<std::mutex> lock(data_->mu);
      data_->open.insert(engine_);
    }
  }

 private:
  std::string path_;
  rockdoc_options_t* options_;
  AddonData* data_;
};

class CommandWorker : public PromiseWorker {
 public:
  CommandWorker(Napi::Object self, std::shared_ptr<Engine> engine, std::string db,
                Napi::Buffer<uint8_t> command, bool batch)
      : PromiseWorker(self, std::move(engine)), db_(std::move(db)),
        command_(command.Data()), command_len_(command.Length()), batch_(batch) {
    // The command's bytes are read in Execute: the buffer is kept alive
    // (not copied) until the worker is done.
    keep_ = Napi::Persistent(command.As<Napi::Object>());
  }
  ~CommandWorker() override { rockdoc_free(reply_); }
  void Execute() override {
    rockdoc_client_t* client = engine_->Enter();
    if (client == nullptr) {
      code_ = kIllegalOperation;
      message_ = "client is closed";
      return;
    }
    rockdoc_error_t err = ROCKDOC_ERROR_INIT;
    auto run = batch_ ? rockdoc_run_batch_command : rockdoc_run_command;
    int ok = run(client, db_.c_str(), command_, command_len_, &reply_, &reply_len_, &err);
    engine_->Leave();
    // A command that failed (ok: 0) still has its reply, which carries
    // what the driver's errors need (codeName, errorLabels, writeErrors):
    // the JavaScript side maps it as the driver maps a server's reply.
    if (!ok && reply_ == nullptr) {
      code_ = err.code ? err.code : 1;
      message_ = err.message ? err.message : "command failed";
    }
    rockdoc_error_clear(&err);
  }

 protected:
  Napi::Value Result(Napi::Env env) override {
    // The reply's bytes become the Buffer's without a copy where the
    // runtime allows external buffers; where it does not (Electron's V8
    // memory cage), NewOrCopy copies them and frees ours at once.
    uint8_t* reply = std::exchange(reply_, nullptr);
    return Napi::Buffer<uint8_t>::NewOrCopy(env, reply, reply_len_,
                                            [](Napi::Env, uint8_t* data) { rockdoc_free(data); });
  }

 private:
  std::string db_;
  const uint8_t* command_;
  size_t command_len_;
  bool batch_;
  Napi::ObjectReference keep_;
  uint8_t* reply_ = nullptr;
  size_t reply_len_ = 0;
};

class CloseWorker : public PromiseWorker {
 public:
  CloseWorker(Napi::Object self, std::shared_ptr<Engine> engine, AddonData* data)
      : PromiseWorker(self, std::move(engine)), data_(data) {}
  void Execute() override {
    {
      std::lock_guard<std::mutex> lock(data_->mu);
      data_->open.erase(engine_);
    }
    code_ = engine_->Close(&message_);
  }

 private:
  AddonData* data_;
};

class Native : public Napi::ObjectWrap<Native> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Native",
                       {InstanceMethod("open", &Native::Open),
                        InstanceMethod("command", &Native::Command),
                        InstanceMethod("close", &Native::Close),
                        InstanceAccessor("isOpen", &Native::IsOpen, nullptr)});
  }

  explicit Native(const Napi::CallbackInfo& info)
      : Napi::ObjectWrap<Native>(info), engine_(std::make_shared<Engine>()) {}

  ~Native() override {
    // Collected while open (no worker is queued: each keeps this object
    // alive): close now.
    AddonData* data = Env().GetInstanceData<AddonData>();
    if (data != nullptr) {
      std::lock_guard<std::mutex> lock(data->mu);
      data->open.erase(engine_);
    }
    engine_->Close(nullptr);
  }

 private:
  Napi::Value Open(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 1 || !info[0].IsString()) {
      throw Napi::TypeError::New(env, "open(path, options): path must be a string");
    }
    if (opened_) throw MakeError(env, kIllegalOperation, "open() was already called");
    opened_ = true;
    rockdoc_options_t* options = rockdoc_options_create();
    if (info.Length() > 1 && info[1].IsObject()) {
      Napi::Object o = info[1].As<Napi::Object>();
      auto flag = [&](const char* name, void (*set)(rockdoc_options_t*, int)) {
        if (o.Has(name) && !o.Get(name).IsUndefined()) set(options, o.Get(name).ToBoolean());
      };
      flag("createIfMissing", rockdoc_options_set_create_if_missing);
      flag("sync", rockdoc_options_set_sync);
      flag("changeLog", rockdoc_options_set_change_log);
      flag("readOnly", rockdoc_options_set_read_only);
      if (o.Has("blockCacheBytes") && o.Get("blockCacheBytes").IsNumber()) {
        double bytes = o.Get("blockCacheBytes").As<Napi::Number>().DoubleValue();
        if (bytes > 0) rockdoc_options_set_block_cache_bytes(options, static_cast<size_t>(bytes));
      }
    }
    return (new OpenWorker(info.This().As<Napi::Object>(), engine_, info[0].As<Napi::String>(), options,
                           env.GetInstanceData<AddonData>()))
        ->Queued();
  }

  Napi::Value Command(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 2 || !info[0].IsString() || !info[1].IsBuffer()) {
      throw Napi::TypeError::New(env, "command(db, bson, batch): db a string, bson a Buffer");
    }
    bool batch = info.Length() > 2 && info[2].ToBoolean();
    return (new CommandWorker(info.This().As<Napi::Object>(), engine_, info[0].As<Napi::String>(),
                              info[1].As<Napi::Buffer<uint8_t>>(), batch))
        ->Queued();
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    return (new CloseWorker(info.This().As<Napi::Object>(), engine_, env.GetInstanceData<AddonData>()))->Queued();
  }

  Napi::Value IsOpen(const Napi::CallbackInfo& info) {
    return Napi::Boolean::New(info.Env(), engine_->open());
  }

  std::shared_ptr<Engine> engine_;
  bool opened_ = false;
};

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  auto* data = new AddonData();
  env.SetInstanceData<AddonData, KeepAddonData>(data);
  env.AddCleanupHook(CloseAllAtTeardown, data);
  exports.Set("Native", Native::Define(env));
  exports.Set("version", Napi::String::New(env, rockdoc_version()));
  return exports;
}

}  // namespace

NODE_API_MODULE(rockdoc, Init)
