// shell/shell.h: `rockdoc`, a mongosh-style JavaScript shell over the
// embedded engine, as a library that the `rockdoc` program and the tests
// drive.
//
// A Shell owns one open database directory (a rockdoc::Client) and one
// SpiderMonkey context with the shell's globals: `db`, collections as its
// properties, cursors, the BSON helper types (ObjectId, ISODate, NumberLong,
// ...), print/printjson/load, and the commands `use`, `show`, `it`, `help`,
// `exit`. Results print as mongosh prints them, or as relaxed Extended JSON
// (one value per line) in JSON mode. The shell reaches the engine only
// through the public API (include/rockdoc/).
//
// Threading: a Shell is used from the thread that created it (SpiderMonkey
// binds a context to its thread), except RequestInterrupt, which any thread
// or a signal handler may call. One process may create many Shells one after
// another (the tests do), or several on different threads.
//
// Example:
//   std::ostringstream out;
//   rockdoc::shell::ShellOptions options;
//   options.db_path = "/tmp/library";
//   options.out = &out;
//   auto shell = rockdoc::shell::Shell::Open(options);
//   (*shell)->Evaluate("db.books.insertOne({title: 'Dune'})", "<eval>", /*show_result=*/true);
#ifndef ROCKDOC_SHELL_SHELL_H_
#define ROCKDOC_SHELL_SHELL_H_

#include <cstdint>
#include <istream>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "rockdoc/client.h"
#include "rockdoc/status.h"

namespace rockdoc::shell {

struct ShellOptions {
  ShellOptions() { client.change_log = true; }
  // The database directory, created when missing.
  std::string db_path = "./rockdoc-data";
  // How it is opened (Client::Open). The change log is on, unlike the
  // library's default: mongosh's scripts call watch(), as against the
  // replica set mongosh usually reaches (rockdoc-serve has it on too);
  // the shell's --noChangeLog turns it off (README: Change streams says
  // what it costs writes).
  ClientOptions client;
  // The database `db` names at start.
  std::string initial_db = "test";
  // Print every shown result as relaxed Extended JSON, one value per line
  // (a cursor or an array: one line per element).
  bool json = false;
  // No banner.
  bool quiet = false;
  // Where results and print() go, and where errors go. Null: std::cout and
  // std::cerr.
  std::ostream* out = nullptr;
  std::ostream* err = nullptr;
  // The JavaScript heap limit (SpiderMonkey's default is 32 MiB, too small
  // for toArray() over a real collection).
  uint32_t js_heap_bytes = 1u << 30;
  // Documents shown per cursor page before `Type "it" for more`.
  int display_batch_size = 20;
};

class Shell {
 public:
  // Opens the directory and creates the JavaScript context. Errors: the
  // Client's (DBPathInUse, ...), or InternalError (JSInterpreterFailure)
  // when the engine cannot start.
  static StatusOr<std::unique_ptr<Shell>> Open(const ShellOptions& options);
  ~Shell();
  Shell(const Shell&) = delete;
  Shell& operator=(const Shell&) = delete;

  // Runs `code` as one script named `source_name` (used in error
  // positions). Lines that are shell commands (`use NAME`, `show dbs`,
  // `show collections`, `it`, `help`, `exit`) are understood anywhere a
  // statement may stand on its own line. With `show_result`, the value of
  // the last expression is displayed as the REPL displays it. Returns false
  // when the code threw (the error has been printed on the error stream),
  // was interrupted, or called exit()/quit().
  bool Evaluate(std::string_view code, std::string_view source_name, bool show_result);
  // Reads and evaluates a script file (results are not displayed, as in
  // mongosh). False when it cannot be read or throws.
  bool RunFile(const std::string& path);

  // True when `code` is a complete JavaScript entry (the REPL asks for more
  // lines while it is not).
  bool IsCompleteEntry(std::string_view code);
  // The REPL prompt: "<db name>> ".
  std::string Prompt();
  // What Tab offers for `line` (the text before the cursor), as mongosh
  // completes: collection names and database methods after `db.`,
  // collection methods after `db.<name>.`, cursor methods after a find or
  // aggregate call, operators for a word starting with `$` (the stages, the
  // update, query or expression operators that fit where it stands), shell
  // commands and globals. Each is `line` with its last word completed, in
  // order; empty when nothing fits.
  std::vector<std::string> Complete(std::string_view line);

  // Stops the running statement at its next interrupt check (it ends as if
  // interrupted by Ctrl-C; the shell stays usable). Async-signal-safe.
  void RequestInterrupt();

  // Set once exit()/quit() ran: the process should end with exit_code().
  bool exit_requested() const;
  int exit_code() const;

  // The open directory, for callers that check the data directly.
  Client& client();

 private:
  class Impl;
  explicit Shell(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// How RunRepl reads its input.
struct ReplOptions {
  // Interactive: libedit line editing and history, prompts, Ctrl-C stops the
  // running statement. Otherwise lines are read from `in` without prompts.
  bool interactive = false;
  std::istream* in = nullptr;  // non-interactive input; null: std::cin
  // History file for the interactive mode ("" = no history file).
  std::string history_file;
};

// Runs the read-eval-print loop until end of input, `exit` or exit().
// Returns the exit status: exit()'s code, else 0 interactively, else 1 when
// any entry threw.
int RunRepl(Shell& shell, const ReplOptions& options);

// The `rockdoc` program:
//   rockdoc [DIR | --dbpath DIR] [--eval CODE] [--quiet] [--json] [FILE.js ...]
//   rockdoc --version | --help
// Opens DIR (default ./rockdoc-data; created when missing; --db DIR is an
// alias of --dbpath; a positional argument not ending in .js that is not an
// existing file is DIR, as mongosh takes its address), runs --eval code and the files in
// order, then the REPL unless code or files were given. Returns the exit
// status (non-zero when a script throws).
int RunMain(int argc, char** argv);

}  // namespace rockdoc::shell

#endif  // ROCKDOC_SHELL_SHELL_H_
