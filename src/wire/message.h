// wire/message.h: MongoDB's wire protocol messages, parsed from and built
// into bytes.
//
// Every message starts with a 16-byte header (little-endian int32s:
// messageLength, requestID, responseTo, opCode). rockdoc speaks:
// - OP_MSG (2013): flagBits (uint32), then sections: kind 0, the command
//   body (one BSON document, exactly one such section); kind 1, a document
//   sequence (int32 size, a C-string identifier, BSON documents), which
//   the command sees as an array field of that name, as MongoDB folds it;
//   then, with the checksumPresent flag, the CRC-32C of everything before
//   it (wire/crc32c.h).
// - OP_QUERY (2004), only for a driver's first hello/isMaster on
//   `admin.$cmd` (or `<db>.$cmd`), answered with OP_REPLY (1).
// Everything else (OP_COMPRESSED, which rockdoc never offers in its hello,
// and the legacy opcodes MongoDB 6.0 removed) is refused.
//
// Parsing never trusts a length: each is checked against the bytes that
// are there and against kMaxMessageSize before anything is read, and every
// document is checked with ValidateBson.
//
// Thread safety: pure functions over values.
#ifndef ROCKDOC_WIRE_MESSAGE_H_
#define ROCKDOC_WIRE_MESSAGE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc::wire {

// Opcodes. Wire values: do not change them.
enum class OpCode : int32_t {
  kReply = 1,
  kUpdate = 2001,
  kInsert = 2002,
  kQuery = 2004,
  kGetMore = 2005,
  kDelete = 2006,
  kKillCursors = 2007,
  kCompressed = 2012,
  kMsg = 2013,
};

// The largest message rockdoc accepts or sends (hello's maxMessageSizeBytes).
inline constexpr int32_t kMaxMessageSize = 48000000;
inline constexpr size_t kHeaderSize = 16;

// OP_MSG flagBits. Bits 0-15 are required: a message with an unknown one
// set is refused. Bits 16-31 are optional: the protocol says a receiver
// ignores the ones it does not know, so rockdoc does (the one exception to
// "nothing accepted and ignored", because MongoDB's specification demands it).
inline constexpr uint32_t kChecksumPresent = 1u << 0;
inline constexpr uint32_t kMoreToCome = 1u << 1;
inline constexpr uint32_t kExhaustAllowed = 1u << 16;

struct MessageHeader {
  int32_t message_length = 0;
  int32_t request_id = 0;
  int32_t response_to = 0;
  int32_t op_code = 0;
};

// Reads the header from the first 16 bytes of `bytes`. ProtocolError (17)
// when fewer than 16 bytes, or messageLength below 16 or above
// kMaxMessageSize (the caller then closes the connection: the stream can no
// longer be framed).
StatusOr<MessageHeader> ParseHeader(std::string_view bytes);

// A document sequence (section kind 1).
struct DocumentSequence {
  std::string identifier;
  std::vector<DocumentView> documents;  // views into the message's bytes
};

// A parsed OP_MSG. Views point into the message's bytes, which must outlive it.
struct OpMsg {
  MessageHeader header;
  uint32_t flags = 0;
  DocumentView body;
  std::vector<DocumentSequence> sequences;
  bool checksum_present() const { return flags & kChecksumPresent; }
  bool more_to_come() const { return flags & kMoreToCome; }
  bool exhaust_allowed() const { return flags & kExhaustAllowed; }
};

// Parses a whole OP_MSG message (header included; `bytes.size()` must be
// its messageLength). Errors: ProtocolError (17) for framing (a section
// or sequence whose length lies, no body or two, an unknown section kind,
// an unknown required flag bit, a checksum that does not match, a sequence
// identifier repeated or also a body field); InvalidBSON (22) for a
// document that fails ValidateBson; BSONObjectTooLarge (10334) for a body
// or a sequence document over 16 MiB + 16 KiB (mongod's BSONObjMaxInternalSize:
// an update statement carrying a document of 16 MiB is larger than 16 MiB,
// and an insert's document over 16 MiB is its statement's write error).
StatusOr<OpMsg> ParseOpMsg(std::string_view bytes);

// The command a client means: the body with each document sequence
// appended as an array field named by its identifier, as MongoDB's
// OpMsgRequest presents it to commands.
// Example: body {insert: "c", $db: "d"} + sequence "documents" [{a:1}]
//   -> {insert: "c", $db: "d", documents: [{a: 1}]}
Document FoldSequences(const OpMsg& msg);

// A parsed OP_QUERY (views into the message's bytes).
struct OpQuery {
  MessageHeader header;
  int32_t flags = 0;
  std::string_view full_collection_name;  // "<db>.$cmd" for a command
  int32_t number_to_skip = 0;
  int32_t number_to_return = 0;
  DocumentView query;
  std::optional<DocumentView> return_fields_selector;
};

// Parses a whole OP_QUERY message. ProtocolError (17) for framing,
// InvalidBSON (22) for a document that fails validation.
StatusOr<OpQuery> ParseOpQuery(std::string_view bytes);

// Builds an OP_MSG of one body section. `flags` may hold kMoreToCome
// (exhaust replies) and kChecksumPresent (then the CRC-32C is appended).
std::string BuildOpMsg(int32_t request_id, int32_t response_to, uint32_t flags,
                       DocumentView body);

// Builds an OP_REPLY carrying `doc` as its one document (responseFlags 0
// or, for a failed query, QueryFailure (2) with a {$err, code} document).
inline constexpr int32_t kReplyQueryFailure = 1 << 1;
std::string BuildOpReply(int32_t request_id, int32_t response_to, int32_t response_flags,
                         DocumentView doc);

}  // namespace rockdoc::wire

#endif  // ROCKDOC_WIRE_MESSAGE_H_
