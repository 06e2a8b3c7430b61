// What the wire server tests (wire_server_test.cc, wire_tls_test.cc) make
// of a reply they read off a socket, whatever carried it.
#ifndef ROCKDOC_TESTS_WIRE_REPLY_H_
#define ROCKDOC_TESTS_WIRE_REPLY_H_

#include <optional>
#include <string>

#include "test_util.h"
#include "wire/message.h"

namespace rockdoc::wire {

// The body of an OP_MSG reply; {"closed": true} when none came (the server
// closed the connection), {"unparsable": true} when it is no OP_MSG.
inline Document ReplyBody(const std::optional<std::string>& reply) {
  if (!reply) return rockdoc::test::Json(R"({"closed": true})");
  auto msg = ParseOpMsg(*reply);
  if (!msg.ok()) return rockdoc::test::Json(R"({"unparsable": true})");
  return Document::AdoptValidated(std::string(msg->body.bytes()));
}

}  // namespace rockdoc::wire

#endif  // ROCKDOC_TESTS_WIRE_REPLY_H_
