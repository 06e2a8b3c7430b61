// The Shell: one SpiderMonkey context over one open directory.
//
// Start-up order matters to SpiderMonkey: JS_Init once per process; per
// context, js::UseInternalJobQueues before JS::InitSelfHostedCode; then the
// global, the standard classes, our natives and the embedded scripts
// (bson_types.js, inspect.js, shell_api.js). Tear-down is the reverse, and
// every persistent root (the global, the converter's prototypes) is dropped
// before JS_DestroyContext, which asserts otherwise.

#include "shell/shell.h"

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>

#include "shell/shell_internal.h"

namespace rockdoc::shell {
namespace {

const JSClass kGlobalClass = {
    "global", JSCLASS_GLOBAL_FLAGS, &JS::DefaultGlobalClassOps, nullptr, nullptr, nullptr};

// Contexts alive in the process (JS_ShutDown must not run while any is).
std::atomic<int> g_live_contexts{0};

void ShutDownJsEngine() {
  if (g_live_contexts.load() == 0) JS_ShutDown();
}

// JS_Init may run once per process, before any context; it cannot run again
// after JS_ShutDown, so the engine stays up until exit, when JS_ShutDown
// stops its helper threads before static destructors tear down the mutexes
// they use (without it the process crashes on its way out).
bool InitJsEngineOnce() {
  static std::once_flag once;
  static bool ok = false;
  std::call_once(once, [] {
    ok = JS_Init();
    if (ok) std::atexit(ShutDownJsEngine);
  });
  return ok;
}

bool InterruptCallback(JSContext* cx) {
  ShellState* st = GetState(cx);
  if (st && st->interrupt_pending.exchange(false)) {
    st->interrupted = true;
    return false;  // ends the running script, uncatchably
  }
  return true;
}

// Escapes `s` as a JavaScript string literal.
std::string JsQuote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        out += c;
    }
  }
  return out + "\"";
}

bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}

// A line that is one of the shell's commands, rewritten as a call; nullopt
// for ordinary JavaScript. The commands are mongosh's: `use NAME`,
// `show WHAT [ARG]`, `it`, `help [TOPIC]`, `exit`, `quit`, and the REPL's
// `.help` and `.exit` (Node's REPL commands, which mongosh keeps; the
// sqlite3 and duckdb shells know them too). A command must be
// alone on its line (an optional `;` may end it) and its first word must not
// be followed by anything that makes it JavaScript (`use(`, `it = 1`, ...).
std::optional<std::string> RewriteCommandLine(std::string_view line) {
  size_t b = line.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return std::nullopt;
  size_t e = line.find_last_not_of(" \t\r;");
  if (e == std::string_view::npos || e < b) return std::nullopt;
  std::string_view body = line.substr(b, e - b + 1);
  if (body == ".help") return std::string("__shell.help('.');");
  if (body == ".exit") return std::string("quit();");
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < body.size()) {
    while (i < body.size() && (body[i] == ' ' || body[i] == '\t')) ++i;
    size_t start = i;
    while (i < body.size() && body[i] != ' ' && body[i] != '\t') ++i;
    if (i > start) words.push_back(body.substr(start, i - start));
  }
  if (words.empty()) return std::nullopt;
  std::string_view cmd = words[0];
  for (char c : cmd) {
    if (!IsWordChar(c)) return std::nullopt;
  }
  auto plain_args = [&]() {
    for (size_t k = 1; k < words.size(); ++k) {
      for (char c : words[k]) {
        // An operator or a paren means JavaScript (`use = 1`, `show (x)`).
        if (c == '=' || c == '(' || c == ')' || c == '+' || c == '{' || c == '[' || c == ',' ||
            c == '`' || c == '\'' || c == '"') {
          return false;
        }
      }
    }
    return true;
  };
  if (cmd == "use" && words.size() == 2 && plain_args()) {
    return "__shell.use(" + JsQuote(words[1]) + ");";
  }
  if (cmd == "show" && (words.size() == 2 || words.size() == 3) && plain_args()) {
    return "__shell.show(" + JsQuote(words[1]) +
           (words.size() == 3 ? ", " + JsQuote(words[2]) : std::string()) + ");";
  }
  if (cmd == "it" && words.size() == 1) return std::string("__shell.it();");
  if ((cmd == "exit" || cmd == "quit") && words.size() == 1) return std::string("quit();");
  if (cmd == "help" && words.size() <= 2 && plain_args()) {
    return "__shell.help(" + (words.size() == 2 ? JsQuote(words[1]) : std::string()) + ");";
  }
  return std::nullopt;
}

// Rewrites command lines, keeping every other line (and the line count, so
// that error positions stay right) as it is.
std::string RewriteShellCommands(std::string_view code) {
  std::string out;
  out.reserve(code.size() + 16);
  size_t pos = 0;
  while (pos <= code.size()) {
    size_t nl = code.find('\n', pos);
    std::string_view line =
        code.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    if (auto rewritten = RewriteCommandLine(line)) {
      out += *rewritten;
    } else {
      out.append(line);
    }
    if (nl == std::string_view::npos) break;
    out += '\n';
    pos = nl + 1;
  }
  return out;
}

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  // A script may start with "#!/usr/bin/env rockdoc": keep the line (for
  // line numbers) but not its text.
  if (out->rfind("#!", 0) == 0) {
    size_t nl = out->find('\n');
    out->replace(0, nl == std::string::npos ? out->size() : nl, "");
  }
  return true;
}

}  // namespace

class Shell::Impl {
 public:
  explicit Impl(const ShellOptions& options) : options_(options) {
    state_.options = &options_;
    state_.out = options_.out ? options_.out : &std::cout;
    state_.err = options_.err ? options_.err : &std::cerr;
  }

  ~Impl() {
    state_.live_queries.clear();
    if (cx_) {
      state_.converter.Reset();
      if (global_) {
        JS::LeaveRealm(cx_, old_realm_);
        global_.reset();
      }
      JS_SetContextPrivate(cx_, nullptr);
      JS_DestroyContext(cx_);
      cx_ = nullptr;
      --g_live_contexts;
    }
    if (client_) client_->Close().IgnoreError();
  }

  Status Init() {
    auto client = Client::Open(options_.db_path, options_.client);
    if (!client.ok()) return client.status();
    client_ = std::move(client).value();
    state_.client = client_.get();
    state_.load_file = [this](JSContext*, const std::string& path) { return LoadFile(path); };

    if (!InitJsEngineOnce()) return Status(ErrorCode::kJSInterpreterFailure, "JS_Init failed");
    cx_ = JS_NewContext(options_.js_heap_bytes);
    if (!cx_) return Status(ErrorCode::kJSInterpreterFailure, "cannot create a JS context");
    ++g_live_contexts;
    JS_SetContextPrivate(cx_, &state_);
    JS_SetGCParameter(cx_, JSGC_MAX_BYTES, options_.js_heap_bytes);
    // Promises need a job queue; it must exist before the self-hosted code.
    if (!js::UseInternalJobQueues(cx_) || !JS::InitSelfHostedCode(cx_)) {
      return Status(ErrorCode::kJSInterpreterFailure, "cannot initialize SpiderMonkey");
    }
    JS_AddInterruptCallback(cx_, InterruptCallback);

    JS::RealmOptions realm_options;
    JS::RootedObject global(cx_, JS_NewGlobalObject(cx_, &kGlobalClass, nullptr,
                                                    JS::FireOnNewGlobalHook, realm_options));
    if (!global) return Status(ErrorCode::kJSInterpreterFailure, "cannot create the global");
    global_ = std::make_unique<JS::PersistentRootedObject>(cx_, global);
    old_realm_ = JS::EnterRealm(cx_, global);
    if (!JS::InitRealmStandardClasses(cx_) || !DefineNatives(cx_, global)) {
      return Status(ErrorCode::kJSInterpreterFailure, "cannot define the shell's globals");
    }
    for (size_t i = 0; i < kNumEmbeddedScripts; ++i) {
      const EmbeddedScript& script = kEmbeddedScripts[i];
      JS::RootedValue ignored(cx_);
      if (!EvaluateRaw(script.source, script.name, &ignored)) {
        return Status(ErrorCode::kJSInterpreterFailure,
                      std::string("shell script failed: ") + TakeErrorText());
      }
      // The converter needs the wrapper classes, defined by the first script.
      if (i == 0 && !state_.converter.Init(cx_, global)) {
        return Status(ErrorCode::kJSInterpreterFailure, TakeErrorText());
      }
    }
    return Status::OK();
  }

  bool Evaluate(std::string_view code, std::string_view source_name, bool show_result) {
    state_.interrupted = false;
    state_.interrupt_pending = false;
    std::string source = RewriteShellCommands(code);
    JS::RootedValue result(cx_);
    bool ok = EvaluateRaw(source, std::string(source_name), &result);
    if (ok) ok = SettlePromise(&result);
    if (ok && show_result) {
      JS::RootedValue ignored(cx_);
      ok = CallShell("display", result, &ignored);
    }
    if (!ok) ReportFailure();
    return ok;
  }

  bool RunFile(const std::string& path) {
    std::string code;
    if (!ReadFile(path, &code)) {
      *state_.err << "Error: cannot read " << path << "\n";
      return false;
    }
    return Evaluate(code, path, /*show_result=*/false);
  }

  bool IsCompleteEntry(std::string_view code) {
    std::string source = RewriteShellCommands(code);
    JS::RootedObject global(cx_, *global_);
    return JS_Utf8BufferIsCompilableUnit(cx_, global, source.data(), source.size());
  }

  std::string Prompt() {
    // A Ctrl-C at the prompt must not interrupt the prompt's own call.
    state_.interrupt_pending = false;
    JS::RootedValue v(cx_);
    std::string prompt;
    if (!CallShell("prompt", JS::UndefinedHandleValue, &v) || !JsValueToUtf8(cx_, v, &prompt)) {
      JS_ClearPendingException(cx_);
      return "> ";
    }
    return prompt;
  }

  std::vector<std::string> Complete(std::string_view line) {
    state_.interrupt_pending = false;
    JS::RootedString text(cx_, NewJsString(cx_, line));
    JS::RootedValue arg(cx_);
    if (text) arg.setString(text);
    JS::RootedValue v(cx_);
    std::string joined;
    if (!text || !CallShell("complete", arg, &v) || !JsValueToUtf8(cx_, v, &joined)) {
      JS_ClearPendingException(cx_);  // a completion that fails offers nothing
      return {};
    }
    std::vector<std::string> out;
    size_t pos = 0;
    while (!joined.empty() && pos <= joined.size()) {
      size_t nl = joined.find('\n', pos);
      if (nl == std::string::npos) nl = joined.size();
      out.push_back(joined.substr(pos, nl - pos));
      pos = nl + 1;
    }
    return out;
  }

  void RequestInterrupt() {
    state_.interrupt_pending = true;
    if (cx_) JS_RequestInterruptCallback(cx_);
  }

  ShellState& state() { return state_; }
  const ShellState& state() const { return state_; }
  Client& client() { return *client_; }

 private:
  // Compiles and runs `source`, then the promise jobs it queued.
  bool EvaluateRaw(std::string_view source, const std::string& name,
                   JS::MutableHandleValue result) {
    JS::CompileOptions co(cx_);
    co.setFileAndLine(name.c_str(), 1);
    JS::SourceText<mozilla::Utf8Unit> text;
    if (!text.init(cx_, source.data(), source.size(), JS::SourceOwnership::Borrowed)) {
      return false;
    }
    bool ok = JS::Evaluate(cx_, co, text, result);
    // Jobs run even after a failure: a rejected promise handler may log.
    if (ok) js::RunJobs(cx_);
    return ok;
  }

  // A promise result is shown as what it settled to (mongosh awaits
  // results); a rejection is an uncaught error.
  bool SettlePromise(JS::MutableHandleValue result) {
    if (!result.isObject()) return true;
    JS::RootedObject obj(cx_, &result.toObject());
    if (!JS::IsPromiseObject(obj)) return true;
    js::RunJobs(cx_);
    switch (JS::GetPromiseState(obj)) {
      case JS::PromiseState::Fulfilled:
        result.set(JS::GetPromiseResult(obj));
        return true;
      case JS::PromiseState::Rejected: {
        JS::RootedValue reason(cx_, JS::GetPromiseResult(obj));
        JS::SetSettledPromiseIsHandled(cx_, obj);
        JS_SetPendingException(cx_, reason);
        return false;
      }
      case JS::PromiseState::Pending:
        return true;
    }
    return true;
  }

  bool CallShell(const char* method, JS::HandleValue arg, JS::MutableHandleValue out) {
    JS::RootedObject global(cx_, *global_);
    JS::RootedValue shell(cx_);
    if (!JS_GetProperty(cx_, global, "__shell", &shell)) return false;
    if (!shell.isObject()) return ThrowTypeError(cx_, "__shell is missing");
    JS::RootedObject shell_obj(cx_, &shell.toObject());
    JS::RootedValueArray<1> args(cx_);
    args[0].set(arg);
    return JS_CallFunctionName(cx_, shell_obj, method, args, out);
  }

  bool LoadFile(const std::string& path) {
    std::string code;
    if (!ReadFile(path, &code)) {
      return ThrowStatus(cx_, Status(ErrorCode::kFileNotOpen, "cannot read file: " + path));
    }
    std::string source = RewriteShellCommands(code);
    JS::RootedValue ignored(cx_);
    return EvaluateRaw(source, path, &ignored);
  }

  // The pending exception as one line of text (cleared).
  std::string TakeErrorText() {
    if (!JS_IsExceptionPending(cx_)) return "unknown error";
    JS::ExceptionStack stack(cx_);
    if (!JS::StealPendingExceptionStack(cx_, &stack)) return "unknown error";
    JS::RootedValue exc(cx_, stack.exception());
    JS::RootedValue text(cx_);
    std::string out;
    if (global_ && CallShell("formatError", exc, &text) && JsValueToUtf8(cx_, text, &out)) {
      return out;
    }
    JS_ClearPendingException(cx_);
    JS::ErrorReportBuilder report(cx_);
    if (report.init(cx_, stack, JS::ErrorReportBuilder::WithSideEffects) && report.report()) {
      JSErrorReport* r = report.report();
      out = report.toStringResult() ? report.toStringResult().c_str() : "error";
      if (r->filename) {
        out += std::string(" @ ") + r->filename + ":" + std::to_string(r->lineno) + ":" +
               std::to_string(r->column + 1);
      }
      return out;
    }
    JS_ClearPendingException(cx_);
    return "uncaught exception";
  }

  void ReportFailure() {
    if (state_.exit_requested) {
      JS_ClearPendingException(cx_);
      return;
    }
    if (JS_IsExceptionPending(cx_)) {
      if (JS_IsThrowingOutOfMemory(cx_)) {
        JS_ClearPendingException(cx_);
        *state_.err << "Error: out of JavaScript memory" << std::endl;
        return;
      }
      *state_.err << TakeErrorText() << std::endl;
      return;
    }
    if (state_.interrupted) {
      *state_.err << "Interrupted: the statement was stopped" << std::endl;
      return;
    }
    // An uncatchable failure without exception: SpiderMonkey's way of
    // reporting an out-of-memory or over-recursion it could not throw.
    *state_.err << "Error: the statement was terminated (out of memory?)" << std::endl;
  }

  ShellOptions options_;
  std::unique_ptr<Client> client_;
  ShellState state_;
  JSContext* cx_ = nullptr;
  std::unique_ptr<JS::PersistentRootedObject> global_;
  JS::Realm* old_realm_ = nullptr;
};

StatusOr<std::unique_ptr<Shell>> Shell::Open(const ShellOptions& options) {
  auto impl = std::make_unique<Impl>(options);
  Status status = impl->Init();
  if (!status.ok()) return status;
  return std::unique_ptr<Shell>(new Shell(std::move(impl)));
}

Shell::Shell(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Shell::~Shell() = default;

bool Shell::Evaluate(std::string_view code, std::string_view source_name, bool show_result) {
  return impl_->Evaluate(code, source_name, show_result);
}
bool Shell::RunFile(const std::string& path) { return impl_->RunFile(path); }
bool Shell::IsCompleteEntry(std::string_view code) { return impl_->IsCompleteEntry(code); }
std::string Shell::Prompt() { return impl_->Prompt(); }
std::vector<std::string> Shell::Complete(std::string_view line) { return impl_->Complete(line); }
void Shell::RequestInterrupt() { impl_->RequestInterrupt(); }
bool Shell::exit_requested() const { return impl_->state().exit_requested; }
int Shell::exit_code() const { return impl_->state().exit_code; }
Client& Shell::client() { return impl_->client(); }

}  // namespace rockdoc::shell
