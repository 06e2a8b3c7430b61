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

FieldPath& FieldPath::operator=(const FieldPath& other) {
  if (this != &other) {
    dotted_ = other.dotted_;
    Split();
  }
  return *this;
}

void FieldPath::Split() {
  parts_.clear();
  index_parts_.clear();
  std::string_view rest(dotted_);
  for (;;) {
    size_t dot = rest.find('.');
    std::string_view piece = rest.substr(0, dot);
    parts_.push_back(piece);
    index_parts_.push_back(IsAllDigits(piece));
    if (dot == std::string_view::npos) break;
    rest.remove_prefix(dot + 1);
  }
}

}  // namespace rockdoc
