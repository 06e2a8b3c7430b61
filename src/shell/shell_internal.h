// shell/shell_internal.h: state shared by the shell's C++ parts (the
// context owner in shell.cc and the native functions in natives.cc).
//
// One ShellState per JSContext, reachable from natives through
// JS_GetContextPrivate. Used on the context's thread only, except the
// interrupt flag (signal handler).
#ifndef ROCKDOC_SHELL_SHELL_INTERNAL_H_
#define ROCKDOC_SHELL_SHELL_INTERNAL_H_

#include <atomic>
#include <functional>
#include <optional>
#include <ostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "rockdoc/client.h"
#include "shell/bson_convert.h"
#include "shell/js_headers.h"
#include "shell/shell.h"

namespace rockdoc::shell {

// A live query of the shell's (Cursor.observe): polled on the shell's
// thread, its callbacks queue the changes for observePoll to hand to the
// script.
struct ShellLiveQuery {
  std::vector<Document> changes;  // {op, id, doc | fields, removed, before}
  std::optional<LiveQuery> query;  // after `changes`: destroyed first
};

struct ShellState {
  Client* client = nullptr;
  // The script's live queries by handle (stopped before the client closes).
  std::map<int64_t, std::unique_ptr<ShellLiveQuery>> live_queries;
  int64_t next_live_query = 1;
  const ShellOptions* options = nullptr;
  std::ostream* out = nullptr;
  std::ostream* err = nullptr;
  BsonConverter converter;

  // exit()/quit(): the running code stops (uncatchably) and the shell ends.
  bool exit_requested = false;
  int exit_code = 0;
  // Ctrl-C: set by the signal handler, consumed by the interrupt callback.
  std::atomic<bool> interrupt_pending{false};
  // The last evaluation ended because of an interrupt.
  bool interrupted = false;

  // load(path): evaluates a file in the global scope (set by shell.cc).
  std::function<bool(JSContext*, const std::string&)> load_file;
};

inline ShellState* GetState(JSContext* cx) {
  return static_cast<ShellState*>(JS_GetContextPrivate(cx));
}

// Defines the global `__native` object whose functions bind the public API.
bool DefineNatives(JSContext* cx, JS::HandleObject global);

// Throws `status` as a JS MongoServerError (code, codeName, message), built
// by the prelude's __makeServerError. Always returns false.
bool ThrowStatus(JSContext* cx, const Status& status);

// The shell scripts compiled into the library (generated from src/shell/*.js).
struct EmbeddedScript {
  const char* name;
  const char* source;
};
extern const EmbeddedScript kEmbeddedScripts[];
extern const size_t kNumEmbeddedScripts;

}  // namespace rockdoc::shell

#endif  // ROCKDOC_SHELL_SHELL_INTERNAL_H_
