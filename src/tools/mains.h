// tools/mains.h: the programs' mains (rockdoc-dump, -restore, -export,
// -import, -advise), over the calls of rockdoc/tools.h and rockdoc/advisor.h.
#ifndef ROCKDOC_TOOLS_MAINS_H_
#define ROCKDOC_TOOLS_MAINS_H_

#include <ostream>

namespace rockdoc::tools {

// The programs' mains: argv as given to main (argv[0] is the program).
// Flags are mongo-tools' names, decoded from one table per program; an
// unknown flag, or a mongo-tools flag rockdoc does not implement, is an
// error (exit status 3, as mongo-tools' option errors), never ignored.
// Returns the exit status. Output: `out` (archive or export data to stdout
// uses the process's stdout), log and errors: `err`.
int DumpMain(int argc, const char* const* argv, std::ostream& err);
int RestoreMain(int argc, const char* const* argv, std::ostream& err);
int ExportMain(int argc, const char* const* argv, std::ostream& err);
int ImportMain(int argc, const char* const* argv, std::ostream& err);
// rockdoc-advise DIR [--db NAME]... [--json] [--full] [--sample N]
// [--failOn info|warning|critical] [--unusedIndexDays N]: the schema advisor (rockdoc/advisor.h);
// the report on `out`. Exit status: 0 when nothing at or above --failOn
// (warning by default) was found, 2 when something was, 1 on a failure, 3
// for bad options.
int AdviseMain(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace rockdoc::tools

#endif  // ROCKDOC_TOOLS_MAINS_H_
