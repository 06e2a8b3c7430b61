#include "query/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace rockdoc {

namespace {

// One match-data block per thread: a yes/no answer needs a single ovector
// pair (PCRE2 reports success with rc == 0 when the ovector is too small),
// and reusing it keeps matching allocation-free.
struct ThreadMatchData {
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  ~ThreadMatchData() { pcre2_match_data_free(data); }
};

pcre2_match_data* MatchDataForThisThread() {
  thread_local ThreadMatchData tls;
  return tls.data;
}

}  // namespace

StatusOr<std::shared_ptr<const Regex>> Regex::Compile(std::string_view pattern,
                                                      std::string_view options) {
  if (pattern.find('\0') != std::string_view::npos) {
    return Status(ErrorCode::kBadValue, "Regular expression cannot contain an embedded null byte");
  }
  uint32_t flags = PCRE2_UTF;
  for (char c : options) {
    switch (c) {
      case 'i': flags |= PCRE2_CASELESS; break;
      case 'm': flags |= PCRE2_MULTILINE; break;
      case 's': flags |= PCRE2_DOTALL; break;
      case 'x': flags |= PCRE2_EXTENDED; break;
      // MongoDB accepts 'u' (always-on UTF-8) and 'l' (locale, a no-op).
      case 'u':
      case 'l': break;
      default:
        return Status(static_cast<ErrorCode>(51108),
                      std::string("invalid flag in regex options: ") + c);
    }
  }
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   flags, &error_code, &error_offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR buffer[256];
    pcre2_get_error_message(error_code, buffer, sizeof(buffer));
    return Status(static_cast<ErrorCode>(51091),
                  std::string("Regular expression is invalid: ") +
                      reinterpret_cast<const char*>(buffer));
  }
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  pcre2_set_match_limit(context, kMatchLimit);
  pcre2_set_depth_limit(context, kDepthLimit);
  std::shared_ptr<Regex> regex(new Regex(std::string(pattern), std::string(options)));
  regex->code_ = code;
  regex->match_context_ = context;
  return std::shared_ptr<const Regex>(std::move(regex));
}

Regex::~Regex() {
  pcre2_code_free(static_cast<pcre2_code*>(code_));
  pcre2_match_context_free(static_cast<pcre2_match_context*>(match_context_));
}

bool Regex::PartialMatch(std::string_view subject) const {
  int rc = pcre2_match(static_cast<const pcre2_code*>(code_),
                       reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), 0, 0,
                       MatchDataForThisThread(),
                       static_cast<pcre2_match_context*>(match_context_));
  // rc > 0: matched; rc == 0: matched, ovector too small (we asked for one
  // pair). Negative: no match, a limit was hit, or bad UTF-8.
  return rc >= 0;
}

bool Regex::Find(std::string_view subject, size_t start, std::vector<Span>* groups) const {
  const auto* code = static_cast<const pcre2_code*>(code_);
  uint32_t capture_count = 0;
  pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT, &capture_count);
  pcre2_match_data* data = pcre2_match_data_create(capture_count + 1, nullptr);
  const int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(),
                             start, 0, data, static_cast<pcre2_match_context*>(match_context_));
  groups->clear();
  if (rc >= 0) {
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data);
    for (uint32_t i = 0; i <= capture_count; ++i) {
      const bool unset = static_cast<int>(i) >= rc || ovector[2 * i] == PCRE2_UNSET;
      groups->push_back(unset ? Span{-1, -1}
                              : Span{static_cast<int64_t>(ovector[2 * i]),
                                     static_cast<int64_t>(ovector[2 * i + 1])});
    }
  }
  pcre2_match_data_free(data);
  return rc >= 0;
}

}  // namespace rockdoc
