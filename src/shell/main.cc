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

namespace rockdoc::shell {
namespace {

constexpr const char* kUsage =
    "Usage: rockdoc [DIR] [--eval CODE] [--quiet] [--json] [FILE.js ...]\n"
    "       rockdoc --dbpath DIR --salvage\n"
    "\n"
    "A MongoDB-style JavaScript shell over a rockdoc database directory.\n"
    "\n"
    "  DIR           the database directory (default ./rockdoc-data; created when missing):\n"
    "                an argument not ending in .js that is not an existing file, as mongosh\n"
    "                takes its first such argument as the address\n"
    "  --dbpath DIR  the same, as mongod and the tools say it (--db DIR is an alias)\n"
    "  --eval CODE   run CODE and print its value (may be repeated)\n"
    "  --json        print results as relaxed Extended JSON, one value per line\n"
    "  --quiet       no banner\n"
    "  FILE.js       run the script (results are not printed; use print/printjson)\n"
    "  --salvage     make a database whose write-ahead log is damaged openable again,\n"
    "                keeping every write before the damage (copy the directory first;\n"
    "                see README.md, Durability); prints what it found and exits\n"
    "  --help, -h    this text\n"
    "  --version     the version of rockdoc\n"
    "\n"
    "Without --eval or files, the interactive shell starts (reading statements from\n"
    "standard input, without prompts, when it is not a terminal).\n"
    "Exit status: non-zero when a script or --eval code throws, or exit(n)'s n.\n";

// --salvage: Client::Salvage, and what it found, for a person to read.
int Salvage(const std::string& path) {
  auto report = Client::Salvage(path);
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
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* name, std::string* out) {
      size_t len = std::strlen(name);
      if (arg.size() > len && arg.compare(0, len, name) == 0 && arg[len] == '=') {
        *out = arg.substr(len + 1);
        return true;
      }
      if (arg == name) {
        if (i + 1 >= argc) {
          std::cerr << "rockdoc: " << name << " needs a value\n" << kUsage;
          std::exit(2);
        }
        *out = argv[++i];
        return true;
      }
      return false;
    };
    std::string v;
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (arg == "--version") {
      std::cout << "rockdoc version: " << rockdoc_version() << "\n";
      return 0;
    } else if (value("--dbpath", &v) || value("--db", &v)) {
      if (db_given) {
        std::cerr << "rockdoc: the database directory is given twice (" << options.db_path
                  << " and " << v << ")\n"
                  << kUsage;
        return 2;
      }
      options.db_path = v;
      db_given = true;
    } else if (value("--eval", &v)) {
      evals.push_back(v);
    } else if (arg == "--quiet") {
      options.quiet = true;
    } else if (arg == "--json") {
      options.json = true;
    } else if (arg == "--salvage") {
      salvage = true;
    } else if (arg.size() > 1 && arg[0] == '-') {
      std::cerr << "rockdoc: unknown option " << arg << "\n" << kUsage;
      return 2;
    } else if (IsScript(arg)) {
      files.push_back(arg);
    } else if (!db_given) {
      // `rockdoc DIR`, as sqlite3 FILE and duckdb FILE: created when missing.
      options.db_path = arg;
      db_given = true;
    } else {
      std::cerr << "rockdoc: " << arg
                << " is neither a script (FILE.js) nor the database directory "
                << "(" << options.db_path << " is)\n"
                << kUsage;
      return 2;
    }
  }

  if (salvage) {
    if (!db_given || !evals.empty() || !files.empty()) {
      std::cerr << "rockdoc: --salvage takes --dbpath DIR and nothing else\n" << kUsage;
      return 2;
    }
    return Salvage(options.db_path);
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
