#include "query/field_path.h"

namespace rockdoc {

bool IsAllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

FieldPath::FieldPath(std::string dotted) : dotted_(std::move(dotted)) { Split(); }

void FieldPath::Split() {
  parts_.clear();
  index_parts_.clear();
  size_t start = 0;
  for (;;) {
    size_t dot = dotted_.find('.', start);
    size_t end = dot == std::string::npos ? dotted_.size() : dot;
    parts_.emplace_back(static_cast<uint32_t>(start), static_cast<uint32_t>(end - start));
    index_parts_.push_back(IsAllDigits(std::string_view(dotted_).substr(start, end - start)));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
}

std::vector<std::string> SplitDotted(std::string_view path) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t dot = path.find('.', start);
    parts.emplace_back(path.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

StatusOr<std::vector<std::string>> SplitFieldPath(std::string_view path) {
  std::vector<std::string> parts = SplitDotted(path);
  for (const std::string& part : parts) {
    if (part.empty()) {
      return Status(static_cast<ErrorCode>(15998), "FieldPath field names may not be empty strings.");
    }
    if (part[0] == '$') {
      return Status(static_cast<ErrorCode>(16410),
                    "FieldPath field names may not start with '$'. Consider using $getField or "
                    "$setField.");
    }
  }
  return parts;
}

}  // namespace rockdoc
