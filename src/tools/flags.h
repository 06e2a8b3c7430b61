// tools/flags.h: command lines in mongo-tools' style (--name value,
// --name=value, -d value, boolean --name), decoded from a table of known
// names so that no flag is accepted and ignored.
//
// Two steps, as the commands' options: ParseFlags splits argv by the table
// of every flag the mongo-tools program knows (its arity), into a document
// {name: value-or-true} plus positional arguments; then the program decodes
// that document through an OptionField table (common/option_table.h), where
// a flag rockdoc does not implement has no decoder and is an error.
//
// Thread safety: stateless.
#ifndef ROCKDOC_TOOLS_FLAGS_H_
#define ROCKDOC_TOOLS_FLAGS_H_

#include <string>
#include <string_view>
#include <vector>

#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc::tools {

enum class FlagArity {
  kNone,      // --gzip: true
  kRequired,  // --db test, --db=test
  kOptional,  // --archive or --archive=FILE (only the = form takes a value)
};

struct FlagSpec {
  std::string_view name;
  char short_name;  // '\0' when none
  FlagArity arity;
  // For --help: "ARG|what it does" ("|what it does" for a flag without a
  // value; the text follows the last '|'). Empty for a flag that is known
  // only to be refused (mongo-tools has it, rockdoc does not implement it):
  // --help lists no flag it would then refuse.
  std::string_view help = {};
};

struct ParsedFlags {
  // {name: string (or true for kNone flags)}, in command-line order; a flag
  // given twice appears twice.
  Document flags;
  std::vector<std::string> positional;
};

// Errors (BadValue): "unknown option \"--x\"", "expected an argument for
// flag --db", "flag --gzip does not take an argument".
StatusOr<ParsedFlags> ParseFlags(int argc, const char* const* argv,
                                 const std::vector<FlagSpec>& specs);

// The flags that have a help text, one line each, aligned:
// "  -d, --db NAME   the database to dump (default: every database)".
std::string FlagHelp(const std::vector<FlagSpec>& specs);

}  // namespace rockdoc::tools

#endif  // ROCKDOC_TOOLS_FLAGS_H_
