// query/regex.h: MongoDB-flavoured regular expressions over PCRE2.
//
// A Regex is compiled once (at query parse time) and then matched many
// times. Patterns are UTF-8; the options are MongoDB's flag letters
// (i: case-insensitive, m: multi-line anchors, s: dot matches newline,
// x: extended/whitespace-insensitive). Matches run under PCRE2's default
// limits (match limit 10,000,000, depth limit 10,000,000, heap 20 GB), as
// MongoDB's do; a match PCRE2 cannot decide (a limit reached, a subject that
// is not valid UTF-8) is an error, never "no match". Every match of the tree
// goes through Search (filters, $in, $regexMatch/$regexFind/$regexFindAll,
// JSON Schema's pattern and patternProperties). Under an operation's
// deadline (common/deadline.h's CurrentDeadline) a match checks it as it
// goes, through PCRE2's callouts, and stops with MaxTimeMSExpired.
//
// Thread safety: a compiled Regex is immutable and may be matched from many
// threads at once (each thread uses its own match buffer).
#ifndef ROCKDOC_QUERY_REGEX_H_
#define ROCKDOC_QUERY_REGEX_H_

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "rockdoc/status.h"

namespace rockdoc {

class Regex {
 public:
  // Compiles `pattern` with MongoDB option letters. Errors, with MongoDB's
  // codes: BadValue for an embedded NUL in the pattern; 51108 "invalid flag
  // in regex options: <c>"; 51091 "Regular expression is invalid: <why>".
  static StatusOr<std::shared_ptr<const Regex>> Compile(std::string_view pattern,
                                                        std::string_view options);

  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // How often a match under a deadline reads the clock: every this many of
  // PCRE2's automatic callouts (one per pattern item tried).
  static constexpr uint32_t kCalloutsPerCheck = 1024;

  // Byte offsets (begin, end) of a match or of a capture group; {-1, -1}
  // for a group that took no part.
  struct Span {
    int64_t begin;
    int64_t end;
  };

  // The first match at or after byte `start` of `subject` (a search, not a
  // whole-string match, as MongoDB's $regex): true and, when `groups` is
  // not null, *groups gets the whole match then each capture group; false
  // when there is none. `op` names the caller in errors ("$regex",
  // "$regexMatch", ...). Errors: 51156 "Error occurred while executing the
  // regular expression in <op>. Result code: <PCRE2's message>" when PCRE2
  // cannot decide (a limit reached, invalid UTF-8 in the subject);
  // MaxTimeMSExpired (50) when the thread's CurrentDeadline() passes during
  // the match (checked every kCalloutsPerCheck of PCRE2's callouts).
  StatusOr<bool> Search(std::string_view subject, size_t start, std::vector<Span>* groups,
                        std::string_view op) const;
  // Search from the start of `subject` without groups.
  StatusOr<bool> PartialMatch(std::string_view subject, std::string_view op) const {
    return Search(subject, 0, nullptr, op);
  }

  const std::string& pattern() const { return pattern_; }
  const std::string& options() const { return options_; }

 private:
  Regex(std::string pattern, std::string options) : pattern_(std::move(pattern)),
                                                     options_(std::move(options)) {}
  std::string pattern_;
  std::string options_;
  // The pattern compiled with PCRE2_AUTO_CALLOUT, for matches under a
  // deadline: compiled the first time one runs.
  const void* CalloutCode() const;

  // pcre2_code_8*, kept opaque so that the PCRE2 header stays inside
  // regex.cc.
  void* code_ = nullptr;
  uint32_t compile_flags_ = 0;
  uint32_t capture_count_ = 0;
  mutable std::once_flag callout_once_;
  mutable void* callout_code_ = nullptr;
};

}  // namespace rockdoc

#endif  // ROCKDOC_QUERY_REGEX_H_
