#include "common/utf8.h"

namespace rockdoc {

std::string ToValidUtf8(std::string_view s) {
  size_t i = FirstInvalidUtf8(s);
  if (i == s.size()) return std::string(s);
  std::string out(s.substr(0, i));
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  while (i < s.size()) {
    const size_t len = Utf8SequenceLength(p + i, s.size() - i);
    if (len == 0) {
      out += '?';
      ++i;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

}  // namespace rockdoc
