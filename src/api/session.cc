// Sessions and multi-document transactions (include/rockdoc/client.h).
// Declared first so that the shell and the lab can be written against the
// API; the implementation follows in the next commits.
#include "rockdoc/client.h"

namespace rockdoc {
namespace internal {
class SessionState {};
}  // namespace internal

namespace {
Status NotYet() { return NotImplemented("sessions are not implemented yet"); }
}  // namespace

StatusOr<Session> Client::StartSession(const SessionOptions&) const { return NotYet(); }

Session::Session(std::shared_ptr<internal::SessionState> state) : state_(std::move(state)) {}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;
Database Session::GetDatabase(std::string_view name) const {
  return Database(nullptr, std::string(name), state_);
}
Status Session::StartTransaction(const TransactionOptions&) { return NotYet(); }
Status Session::CommitTransaction() { return NotYet(); }
Status Session::AbortTransaction() { return NotYet(); }
bool Session::InTransaction() const { return false; }
Status Session::WithTransaction(const std::function<Status(Session&)>&, const TransactionOptions&) {
  return NotYet();
}
Status Session::EndSession() { return NotYet(); }

}  // namespace rockdoc
