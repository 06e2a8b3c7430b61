// Temporary: operations declared in client.h whose implementation lands in
// the next commits (query language, indexes). Each fails clearly meanwhile.
#include "rockdoc/client.h"

namespace rockdoc {

namespace {
Status Pending(const char* what) {
  return Status(ErrorCode::kNotImplemented, std::string(what) + " is not available yet");
}
}  // namespace


}  // namespace rockdoc
