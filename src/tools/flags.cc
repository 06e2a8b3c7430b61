#include "tools/flags.h"

#include <algorithm>
#include <optional>
#include <utility>

namespace rockdoc::tools {

StatusOr<ParsedFlags> ParseFlags(int argc, const char* const* argv,
                                 const std::vector<FlagSpec>& specs) {
  ParsedFlags out;
  BsonBuilder b;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-' || arg == "--") {
      if (arg == "--") {
        for (++i; i < argc; ++i) out.positional.emplace_back(argv[i]);
        break;
      }
      out.positional.emplace_back(arg);
      continue;
    }
    const FlagSpec* spec = nullptr;
    std::string_view name;
    std::optional<std::string_view> inline_value;
    if (arg[1] == '-') {
      name = arg.substr(2);
      size_t eq = name.find('=');
      if (eq != std::string_view::npos) {
        inline_value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      for (const FlagSpec& s : specs) {
        if (s.name == name) spec = &s;
      }
    } else {
      if (arg.size() > 2 && arg[2] != '=') {
        inline_value = arg.substr(2);  // -dtest, as Go's flags parser allows
      } else if (arg.size() > 2) {
        inline_value = arg.substr(3);
      }
      for (const FlagSpec& s : specs) {
        if (s.short_name == arg[1]) spec = &s;
      }
      if (spec != nullptr) name = spec->name;
    }
    if (spec == nullptr) {
      return BadValue("error parsing command line options: unknown option \"" + std::string(arg) +
                      "\"");
    }
    if (name.find('\0') != std::string_view::npos) return BadValue("flag names cannot hold NUL");
    switch (spec->arity) {
      case FlagArity::kNone:
        if (inline_value) {
          return BadValue("error parsing command line options: flag --" + std::string(name) +
                          " does not take an argument");
        }
        b.AppendBool(name, true);
        break;
      case FlagArity::kOptional:
        b.AppendString(name, inline_value.value_or(""));
        break;
      case FlagArity::kRequired:
        if (inline_value) {
          b.AppendString(name, *inline_value);
        } else if (i + 1 < argc) {
          b.AppendString(name, argv[++i]);
        } else {
          return BadValue("error parsing command line options: expected argument for flag --" +
                          std::string(name));
        }
        break;
    }
  }
  out.flags = std::move(b).Build();
  return out;
}

std::string FlagHelp(const std::vector<FlagSpec>& specs) {
  std::vector<std::pair<std::string, std::string_view>> rows;
  size_t width = 0;
  for (const FlagSpec& s : specs) {
    if (s.help.empty()) continue;
    const size_t bar = s.help.rfind('|');
    std::string_view arg =
        bar == std::string_view::npos ? std::string_view() : s.help.substr(0, bar);
    std::string left = s.short_name != '\0' ? std::string("-") + s.short_name + ", " : "    ";
    left += "--" + std::string(s.name);
    if (!arg.empty()) left += (arg.front() == '[' ? "" : " ") + std::string(arg);
    width = std::max(width, left.size());
    rows.emplace_back(std::move(left),
                      bar == std::string_view::npos ? s.help : s.help.substr(bar + 1));
  }
  std::string out;
  for (const auto& [left, text] : rows) {
    out += "  " + left + std::string(width - left.size() + 2, ' ') + std::string(text) + "\n";
  }
  return out;
}

}  // namespace rockdoc::tools
