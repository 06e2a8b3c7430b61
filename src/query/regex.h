// query/regex.h: MongoDB-flavoured regular expressions over PCRE2.
//
// A Regex is compiled once (at query parse time) and then matched many
// times. Patterns are UTF-8; the options are MongoDB's flag letters
// (i: case-insensitive, m: multi-line anchors, s: dot matches newline,
// x: extended/whitespace-insensitive). Every match runs under a match limit
// and a depth limit, so a catastrophically backtracking pattern stops with
// "no match" instead of hanging the query.
//
// Thread safety: a compiled Regex is immutable and may be matched from many
// threads at once (each thread uses its own match buffer).
#ifndef ROCKDOC_QUERY_REGEX_H_
#define ROCKDOC_QUERY_REGEX_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rockdoc/status.h"

namespace rockdoc {

class Regex {
 public:
  // Limits on one match (PCRE2's match_limit and depth_limit). Generous for
  // ordinary patterns, small enough that a runaway one gives up quickly.
  static constexpr uint32_t kMatchLimit = 1'000'000;
  static constexpr uint32_t kDepthLimit = 10'000;

  // Compiles `pattern` with MongoDB option letters. Errors, with MongoDB's
  // codes: BadValue for an embedded NUL in the pattern; 51108 "invalid flag
  // in regex options: <c>"; 51091 "Regular expression is invalid: <why>".
  static StatusOr<std::shared_ptr<const Regex>> Compile(std::string_view pattern,
                                                        std::string_view options);

  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // True when the pattern matches somewhere in `subject` (a search, not a
  // whole-string match, as MongoDB's $regex). False on no match and also
  // when a limit is hit or the subject is not valid UTF-8.
  bool PartialMatch(std::string_view subject) const;

  // The first match at or after byte `start` of `subject`: *groups gets
  // the whole match then each capture group as byte offsets (begin, end),
  // {-1, -1} for a group that took no part. False when there is none (or
  // a limit is hit, or the subject is not valid UTF-8).
  struct Span {
    int64_t begin;
    int64_t end;
  };
  bool Find(std::string_view subject, size_t start, std::vector<Span>* groups) const;

  const std::string& pattern() const { return pattern_; }
  const std::string& options() const { return options_; }

 private:
  Regex(std::string pattern, std::string options) : pattern_(std::move(pattern)),
                                                     options_(std::move(options)) {}
  std::string pattern_;
  std::string options_;
  // pcre2_code_8* and pcre2_match_context_8*, kept opaque so that the
  // PCRE2 header stays inside regex.cc.
  void* code_ = nullptr;
  void* match_context_ = nullptr;
};

}  // namespace rockdoc

#endif  // ROCKDOC_QUERY_REGEX_H_
