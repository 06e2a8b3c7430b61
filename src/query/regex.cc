#include "query/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "common/deadline.h"

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

// A match under a deadline: PCRE2 calls OnCallout at every pattern item it
// tries; every kCalloutsPerCheck calls the deadline is read, and once it has
// passed the match is abandoned (PCRE2 returns PCRE2_ERROR_CALLOUT).
struct CalloutState {
  const internal::Deadline* deadline;
  uint32_t calls = 0;
  bool expired = false;
};

int OnCallout(pcre2_callout_block*, void* data) {
  auto* state = static_cast<CalloutState*>(data);
  if (++state->calls % Regex::kCalloutsPerCheck != 0) return 0;
  if (state->deadline->Check().ok()) return 0;
  state->expired = true;
  return PCRE2_ERROR_CALLOUT;
}

struct ThreadMatchContext {
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  ~ThreadMatchContext() { pcre2_match_context_free(context); }
};

pcre2_match_context* MatchContextForThisThread() {
  thread_local ThreadMatchContext tls;
  return tls.context;
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
  std::shared_ptr<Regex> regex(new Regex(std::string(pattern), std::string(options)));
  regex->code_ = code;
  regex->compile_flags_ = flags;
  pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT, &regex->capture_count_);
  return std::shared_ptr<const Regex>(std::move(regex));
}

Regex::~Regex() {
  pcre2_code_free(static_cast<pcre2_code*>(code_));
  pcre2_code_free(static_cast<pcre2_code*>(callout_code_));
}

const void* Regex::CalloutCode() const {
  std::call_once(callout_once_, [this] {
    int error_code = 0;
    PCRE2_SIZE error_offset = 0;
    // The pattern compiled once already: this cannot fail but for memory,
    // and then the match runs without callouts (bounded by PCRE2's limits).
    callout_code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern_.data()), pattern_.size(),
                                  compile_flags_ | PCRE2_AUTO_CALLOUT, &error_code, &error_offset,
                                  nullptr);
  });
  return callout_code_ != nullptr ? callout_code_ : code_;
}

StatusOr<bool> Regex::Search(std::string_view subject, size_t start, std::vector<Span>* groups,
                             std::string_view op) const {
  const auto* code = static_cast<const pcre2_code*>(code_);
  // No match context without a deadline: PCRE2's default limits, as
  // MongoDB; with one, the same limits and a callout that watches it.
  pcre2_match_context* context = nullptr;
  CalloutState callouts{internal::CurrentDeadline()};
  if (callouts.deadline != nullptr) {
    code = static_cast<const pcre2_code*>(CalloutCode());
    context = MatchContextForThisThread();
    pcre2_set_callout(context, &OnCallout, &callouts);
  }
  // A yes/no answer needs a single ovector pair (PCRE2 reports success with
  // rc == 0 when the ovector is too small): the thread's block serves.
  std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> own(nullptr,
                                                                      &pcre2_match_data_free);
  pcre2_match_data* data = MatchDataForThisThread();
  if (groups != nullptr) {
    own.reset(pcre2_match_data_create(capture_count_ + 1, nullptr));
    data = own.get();
    groups->clear();
  }
  const int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(),
                             start, 0, data, context);
  if (context != nullptr) pcre2_set_callout(context, nullptr, nullptr);
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  if (callouts.expired) return internal::MaxTimeExpiredError();
  if (rc < 0) {
    PCRE2_UCHAR buffer[256];
    pcre2_get_error_message(rc, buffer, sizeof(buffer));
    return Status(static_cast<ErrorCode>(51156),
                  "Error occurred while executing the regular expression in " + std::string(op) +
                      ". Result code: " + reinterpret_cast<const char*>(buffer));
  }
  if (groups != nullptr) {
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data);
    for (uint32_t i = 0; i <= capture_count_; ++i) {
      const bool unset = static_cast<int>(i) >= rc || ovector[2 * i] == PCRE2_UNSET;
      groups->push_back(unset ? Span{-1, -1}
                              : Span{static_cast<int64_t>(ovector[2 * i]),
                                     static_cast<int64_t>(ovector[2 * i + 1])});
    }
  }
  return true;
}

}  // namespace rockdoc
