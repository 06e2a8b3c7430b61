// libFuzzer: arbitrary bytes as one wire message from a client, through
// the whole server path but the socket: parsing (header, OP_MSG sections
// and checksum, OP_QUERY) and command dispatch over a real database
// (wire/service.h). Nothing may crash, hang or read out of bounds (ASan,
// UBSan), and what comes back must hold together: either "close the
// connection" with no reply, or one reply that parses as an OP_MSG or
// OP_REPLY answering this request, with a body that is valid BSON.
//
// An input whose header's length is not its size gets it patched when its
// last byte is odd, so that mutated messages mostly reach the section
// parser and the commands instead of stopping at the framing check, while
// the other half still exercises lengths that lie.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "common/endian.h"
#include "fuzz_util.h"
#include "rockdoc/client.h"
#include "wire/message.h"
#include "wire/service.h"

namespace {

using rockdoc::fuzz::Fail;
using rockdoc::fuzz::Hex;
namespace wire = rockdoc::wire;

wire::Service& TheService() {
  static std::unique_ptr<rockdoc::Client> client = [] {
    std::string dir = (std::filesystem::temp_directory_path() / "rockdoc-wire-fuzz-XXXXXX");
    if (mkdtemp(dir.data()) == nullptr) std::abort();
    auto c = rockdoc::Client::Open(dir + "/db");
    if (!c.ok()) std::abort();
    return std::move(*c);
  }();
  static wire::Service service(client.get());
  return service;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Small messages only: the limits are tested by the unit tests, and
  // large inputs would only slow the search.
  if (size > 64 * 1024) return 0;
  std::string message(reinterpret_cast<const char*>(data), size);
  if (size >= 16 && (data[size - 1] & 1) &&
      rockdoc::LoadLE<int32_t>(data) != static_cast<int32_t>(size)) {
    rockdoc::StoreLE<int32_t>(reinterpret_cast<uint8_t*>(message.data()),
                              static_cast<int32_t>(size));
  }
  wire::ConnectionState conn;
  wire::Response r = TheService().Handle(message, &conn);
  if (r.reply.empty()) {
    return 0;  // closed, or a moreToCome request (no reply)
  }
  auto header = wire::ParseHeader(r.reply);
  if (!header.ok() || static_cast<size_t>(header->message_length) != r.reply.size()) {
    Fail("a reply's header does not frame it", Hex(message), Hex(r.reply));
  }
  auto request = wire::ParseHeader(message);
  if (!request.ok() || header->response_to != request->request_id) {
    Fail("a reply does not answer its request", Hex(message), Hex(r.reply));
  }
  if (header->op_code == static_cast<int32_t>(wire::OpCode::kMsg)) {
    auto msg = wire::ParseOpMsg(r.reply);
    if (!msg.ok()) Fail("a reply is not a valid OP_MSG", Hex(message), msg.status().message());
  } else if (header->op_code == static_cast<int32_t>(wire::OpCode::kReply)) {
    if (r.reply.size() < 36 || !rockdoc::ValidateBson(std::string_view(r.reply).substr(36)).ok()) {
      Fail("a reply is not a valid OP_REPLY", Hex(message), Hex(r.reply));
    }
  } else {
    Fail("a reply has an unexpected opcode", Hex(message), Hex(r.reply));
  }
  if (r.exhaust) {
    // An exhaust stream's next reply holds together too (no wait here).
    wire::Response next = TheService().Continue(&conn);
    if (!wire::ParseOpMsg(next.reply).ok()) Fail("an exhaust reply is not valid", "", "");
  }
  return 0;
}
