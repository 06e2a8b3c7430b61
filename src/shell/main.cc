// RunMain: the `rockdoc` program's command line.

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "rockdoc/c.h"
#include "shell/shell.h"
#include "tools/flags.h"

namespace rockdoc::shell {
namespace {

// The command line, split by the tools' parser (tools/flags.h: --name value,
// --name=value, -h) from this table, which also gives --help its lines.
const std::vector<tools::FlagSpec> kFlags = {
    {"dbpath", 0, tools::FlagArity::kRequired,
     "DIR|the database directory (default ./rockdoc-data; created when missing)"},
    {"db", 0, tools::FlagArity::kRequired, "DIR|the same (the shell's older name)"},
    {"eval", 0, tools::FlagArity::kRequired, "CODE|run CODE and print its value (may be repeated)"},
    {"json", 0, tools::FlagArity::kNone, "|print results as relaxed Extended JSON, one per line"},
    {"quiet", 0, tools::FlagArity::kNone, "|no banner"},
    {"noChangeLog", 0, tools::FlagArity::kNone,
     "|open without the change log: watch() refused (40573), writes faster, and the "
     "directory's change history dropped (README.md, Change streams)"},
    {"readonly", 0, tools::FlagArity::kNone,
     "|open the directory read-only beside the process that owns it for writing (an "
     "application, rockdoc-serve): its writes are seen as they come, writes here are refused "
     "(README.md, Several processes)"},
    {"encryptionKeyFile", 0, tools::FlagArity::kRequired,
     "FILE|the database's encryption key, as mongod's: the base64 of 32 bytes, readable by "
     "its owner alone (README.md, Security)"},
    {"salvage", 0, tools::FlagArity::kNone,
     "|open a damaged write-ahead log's database again, keeping what precedes the damage "
     "(copy it first; README.md, Durability)"},
    {"help", 'h', tools::FlagArity::kNone, "|this text"},
    {"version", 0, tools::FlagArity::kNone, "|the version of rockdoc"},
};

std::string Usage() {
  return "Usage: rockdoc [DIR] [--eval CODE] [--quiet] [--json] [FILE.js ...]\n"
         "       rockdoc --dbpath DIR --salvage\n"
         "\n"
         "A MongoDB-style JavaScript shell over a rockdoc database directory.\n"
         "\n"
         "  DIR      the database directory, as --dbpath: an argument not ending in .js that\n"
         "           is not an existing file (mongosh takes its first such argument as the\n"
         "           address; sqlite3 and duckdb their file)\n"
         "  FILE.js  run the script (results are not printed; use print/printjson)\n" +
         tools::FlagHelp(kFlags) +
         "\n"
         "Without --eval or files, the interactive shell starts (reading statements from\n"
         "standard input, without prompts, when it is not a terminal).\n"
         "Exit status: non-zero when a script or --eval code throws, or exit(n)'s n.\n";
}

// --salvage: Client::Salvage, and what it found, for a person to read.
int Salvage(const std::string& path, const ClientOptions& options) {
  auto report = Client::Salvage(path, options);
  if (!report.ok()) {
    std::cerr << "rockdoc: cannot salvage " << path << ": " << report.status().ToString() << "\n";
    return 1;
  }
  if (report->findings.empty()) {
    std::cout << "rockdoc: " << path << " needed no salvage; nothing was changed\n";
    return 0;
  }
  for (const std::string& f : report->findings) std::cout << "found: " << f << "\n";
  for (const std::string& f : report->saved_files) std::cout << "kept:  " << f << "\n";
  std::cout << "discarded " << report->discarded_log_records
            << " intact log records written after the damage\n"
            << "rockdoc: " << path
            << " opens again, as it was before the damage; run validate() on its collections\n";
  return 0;
}

// A positional argument is a script when it ends in .js or names an existing
// file that is not a directory; anything else is the database directory.
bool IsScript(const std::string& arg) {
  if (arg.size() > 3 && arg.compare(arg.size() - 3, 3, ".js") == 0) return true;
  struct stat st;
  return ::stat(arg.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
}

}  // namespace

int RunMain(int argc, char** argv) {
  ShellOptions options;
  std::vector<std::string> evals;
  std::vector<std::string> files;
  bool db_given = false;
  bool salvage = false;
  auto parsed = tools::ParseFlags(argc, argv, kFlags);
  if (!parsed.ok()) {
    std::cerr << "rockdoc: " << parsed.status().message() << "\n" << Usage();
    return 2;
  }
  for (const Element& flag : parsed->flags) {
    const std::string_view name = flag.key();
    const std::string value = flag.IsString() ? std::string(flag.String()) : std::string();
    if (name == "help") {
      std::cout << Usage();
      return 0;
    } else if (name == "version") {
      std::cout << "rockdoc version: " << rockdoc_version() << "\n";
      return 0;
    } else if (name == "dbpath" || name == "db") {
      if (db_given) {
        std::cerr << "rockdoc: the database directory is given twice (" << options.db_path
                  << " and " << value << ")\n"
                  << Usage();
        return 2;
      }
      options.db_path = value;
      db_given = true;
    } else if (name == "eval") {
      evals.push_back(value);
    } else if (name == "quiet") {
      options.quiet = true;
    } else if (name == "json") {
      options.json = true;
    } else if (name == "noChangeLog") {
      options.client.change_log = false;
    } else if (name == "salvage") {
      salvage = true;
    } else if (name == "readonly") {
      options.client.read_only = true;
    } else if (name == "encryptionKeyFile") {
      auto key = EncryptionKeyFromFile(value);
      if (!key.ok()) {
        std::cerr << "rockdoc: " << key.status().message() << "\n";
        return 2;
      }
      options.client.encryption_key = std::move(key).value();
    }
  }
  for (const std::string& arg : parsed->positional) {
    if (IsScript(arg)) {
      files.push_back(arg);
    } else if (!db_given) {
      // `rockdoc DIR`, as sqlite3 FILE and duckdb FILE: created when missing.
      options.db_path = arg;
      db_given = true;
    } else {
      std::cerr << "rockdoc: " << arg
                << " is neither a script (FILE.js) nor the database directory "
                << "(" << options.db_path << " is)\n"
                << Usage();
      return 2;
    }
  }

  if (salvage) {
    if (!db_given || !evals.empty() || !files.empty()) {
      std::cerr << "rockdoc: --salvage takes --dbpath DIR and nothing else\n" << Usage();
      return 2;
    }
    return Salvage(options.db_path, options.client);
  }

  auto shell = Shell::Open(options);
  if (!shell.ok()) {
    std::cerr << "rockdoc: cannot open " << options.db_path << ": " << shell.status().ToString()
              << "\n";
    if (shell.status().code() == ErrorCode::kDataCorruptionDetected) {
      std::cerr << "rockdoc: to keep what is intact, copy the directory, then run: rockdoc --db "
                << options.db_path << " --salvage\n";
    }
    return 1;
  }
  Shell& sh = **shell;

  if (!evals.empty() || !files.empty()) {
    for (const std::string& code : evals) {
      bool ok = sh.Evaluate(code, "<eval>", /*show_result=*/true);
      if (sh.exit_requested()) return sh.exit_code();
      if (!ok) return 1;
    }
    for (const std::string& file : files) {
      bool ok = sh.RunFile(file);
      if (sh.exit_requested()) return sh.exit_code();
      if (!ok) return 1;
    }
    return 0;
  }

  ReplOptions repl;
  repl.interactive = ::isatty(STDIN_FILENO) != 0;
  if (const char* home = std::getenv("HOME"); home && *home) {
    repl.history_file = std::string(home) + "/.rockdoc_history";
  }
  if (repl.interactive && !options.quiet) {
    std::cout << "rockdoc shell, database directory " << options.db_path << "\n"
              << "Type \"help\" for help, \"exit\" or Ctrl-D to leave.\n";
  }
  return RunRepl(sh, repl);
}

}  // namespace rockdoc::shell
