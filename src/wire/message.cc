#include "wire/message.h"

#include <cstring>

#include "command/command.h"
#include "common/utf8.h"
#include "common/endian.h"
#include "wire/crc32c.h"

namespace rockdoc::wire {

namespace {

// The most document sequences one OP_MSG may carry (ParseOpMsg).
constexpr size_t kMaxDocumentSequences = 16;

Status ProtocolError(std::string message) {
  return Status(ErrorCode::kProtocolError, std::move(message));
}

int32_t Int32At(std::string_view bytes, size_t at) {
  return LoadLE<int32_t>(reinterpret_cast<const uint8_t*>(bytes.data()) + at);
}

// A reader over a message's bytes that checks every length it is given.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  size_t remaining() const { return bytes_.size() - at_; }
  size_t position() const { return at_; }
  bool ReadInt32(int32_t* out) {
    if (remaining() < 4) return false;
    *out = Int32At(bytes_, at_);
    at_ += 4;
    return true;
  }
  void Skip(size_t n) { at_ += n; }  // n <= remaining()
  bool ReadByte(uint8_t* out) {
    if (remaining() < 1) return false;
    *out = static_cast<uint8_t>(bytes_[at_++]);
    return true;
  }
  // A NUL-terminated string, within the bytes.
  bool ReadCString(std::string_view* out) {
    const size_t end = bytes_.find('\0', at_);
    if (end == std::string_view::npos) return false;
    *out = bytes_.substr(at_, end - at_);
    at_ = end + 1;
    return true;
  }
  // A BSON document: its declared length must fit the bytes left; the
  // document is then validated whole.
  Status ReadDocument(std::string_view what, size_t max_size, DocumentView* out) {
    if (remaining() < 5) return ProtocolError(std::string(what) + " is truncated");
    const int32_t length = Int32At(bytes_, at_);
    if (length < 5 || static_cast<size_t>(length) > remaining()) {
      return ProtocolError(std::string(what) + " declares " + std::to_string(length) +
                           " bytes where " + std::to_string(remaining()) + " remain");
    }
    BsonValidationOptions options;
    options.max_size = max_size;
    Status s = ValidateBson(bytes_.substr(at_, length), options);
    if (!s.ok()) {
      return Status(s.code(), std::string(what) + ": " + std::string(s.message()));
    }
    *out = DocumentView(reinterpret_cast<const uint8_t*>(bytes_.data()) + at_);
    at_ += length;
    return Status::OK();
  }

 private:
  std::string_view bytes_;
  size_t at_ = 0;
};

void AppendHeader(std::string* out, int32_t request_id, int32_t response_to, OpCode op) {
  AppendLE<int32_t>(out, 0);  // the length, patched when the message is complete
  AppendLE<int32_t>(out, request_id);
  AppendLE<int32_t>(out, response_to);
  AppendLE<int32_t>(out, static_cast<int32_t>(op));
}

void PatchLength(std::string* out) {
  StoreLE<int32_t>(reinterpret_cast<uint8_t*>(out->data()), static_cast<int32_t>(out->size()));
}

}  // namespace

StatusOr<MessageHeader> ParseHeader(std::string_view bytes) {
  if (bytes.size() < kHeaderSize) return ProtocolError("message header is truncated");
  MessageHeader h;
  h.message_length = Int32At(bytes, 0);
  h.request_id = Int32At(bytes, 4);
  h.response_to = Int32At(bytes, 8);
  h.op_code = Int32At(bytes, 12);
  if (h.message_length < static_cast<int32_t>(kHeaderSize)) {
    return ProtocolError("message length " + std::to_string(h.message_length) +
                         " is shorter than its header");
  }
  if (h.message_length > kMaxMessageSize) {
    return ProtocolError("message length " + std::to_string(h.message_length) +
                         " is over the maximum message size of " +
                         std::to_string(kMaxMessageSize));
  }
  return h;
}

StatusOr<OpMsg> ParseOpMsg(std::string_view bytes) {
  OpMsg msg;
  ROCKDOC_ASSIGN_OR_RETURN(msg.header, ParseHeader(bytes));
  if (static_cast<size_t>(msg.header.message_length) != bytes.size()) {
    return ProtocolError("message length does not match the bytes given");
  }
  if (msg.header.op_code != static_cast<int32_t>(OpCode::kMsg)) {
    return ProtocolError("not an OP_MSG");
  }
  if (bytes.size() < kHeaderSize + 4) return ProtocolError("OP_MSG has no flagBits");
  msg.flags = static_cast<uint32_t>(Int32At(bytes, kHeaderSize));
  const uint32_t unknown_required = msg.flags & 0xFFFF & ~(kChecksumPresent | kMoreToCome);
  if (unknown_required != 0) {
    return ProtocolError("OP_MSG has an unknown required flag bit set (flagBits " +
                         std::to_string(msg.flags) + ")");
  }
  std::string_view sections = bytes.substr(kHeaderSize + 4);
  if (msg.checksum_present()) {
    if (sections.size() < 4) return ProtocolError("OP_MSG checksum is truncated");
    const uint32_t expected = static_cast<uint32_t>(Int32At(bytes, bytes.size() - 4));
    const uint32_t actual = Crc32c(bytes.substr(0, bytes.size() - 4));
    if (expected != actual) return ProtocolError("OP_MSG checksum does not match its contents");
    sections.remove_suffix(4);
  }
  Reader r(sections);
  bool have_body = false;
  while (r.remaining() > 0) {
    uint8_t kind = 0;
    r.ReadByte(&kind);
    if (kind == 0) {
      if (have_body) return ProtocolError("OP_MSG has more than one body section");
      ROCKDOC_RETURN_IF_ERROR(
          r.ReadDocument("OP_MSG body", internal::kMaxCommandSize, &msg.body));
      have_body = true;
    } else if (kind == 1) {
      int32_t size = 0;
      // The size counts itself.
      if (!r.ReadInt32(&size) || size < 4 || static_cast<size_t>(size) - 4 > r.remaining()) {
        return ProtocolError("OP_MSG document sequence size is invalid");
      }
      Reader seq(sections.substr(r.position(), size - 4));
      r.Skip(size - 4);
      DocumentSequence s;
      std::string_view identifier;
      if (!seq.ReadCString(&identifier) || identifier.empty()) {
        return ProtocolError("OP_MSG document sequence has no identifier");
      }
      // It becomes a field name, and error messages quote it: UTF-8, as
      // every BSON key.
      if (!IsValidUtf8(reinterpret_cast<const uint8_t*>(identifier.data()), identifier.size())) {
        return ProtocolError("OP_MSG document sequence identifier is not valid UTF-8");
      }
      // A command carries one or two sequences (documents, updates,
      // deletes; bulkWrite's ops and nsInfo): past a few, the checks below
      // (each against the others and the body) would cost a crafted message
      // quadratic time.
      if (msg.sequences.size() >= kMaxDocumentSequences) {
        return ProtocolError("OP_MSG has more than " + std::to_string(kMaxDocumentSequences) +
                             " document sequences");
      }
      s.identifier = std::string(identifier);
      for (const DocumentSequence& other : msg.sequences) {
        if (other.identifier == s.identifier) {
          return ProtocolError("OP_MSG has two document sequences named '" + s.identifier + "'");
        }
      }
      while (seq.remaining() > 0) {
        DocumentView d;
        // Each document may be a command's size (16 MiB + 16 KiB, mongod's
        // BSONObjMaxInternalSize): an update statement carries a document of
        // the largest size in its `u`, and an insert's document over 16 MiB
        // is that statement's write error (the store's check), not the
        // whole message's.
        ROCKDOC_RETURN_IF_ERROR(seq.ReadDocument(
            "OP_MSG document sequence '" + s.identifier + "'", internal::kMaxCommandSize, &d));
        s.documents.push_back(d);
      }
      msg.sequences.push_back(std::move(s));
    } else {
      return ProtocolError("OP_MSG has a section of unknown kind " + std::to_string(kind));
    }
  }
  if (!have_body) return ProtocolError("OP_MSG has no body section");
  for (const DocumentSequence& s : msg.sequences) {
    if (msg.body.Has(s.identifier)) {
      return ProtocolError("OP_MSG document sequence '" + s.identifier +
                           "' duplicates a field of the body");
    }
  }
  return msg;
}

Document FoldSequences(const OpMsg& msg) {
  if (msg.sequences.empty()) return Document::AdoptValidated(std::string(msg.body.bytes()));
  BsonBuilder b;
  for (Element e : msg.body) b.AppendElement(e);
  for (const DocumentSequence& s : msg.sequences) {
    b.OpenArray(s.identifier);
    for (DocumentView d : s.documents) b.AppendDocument("", d);
    b.Close();
  }
  return std::move(b).Build();
}

StatusOr<OpQuery> ParseOpQuery(std::string_view bytes) {
  OpQuery q;
  ROCKDOC_ASSIGN_OR_RETURN(q.header, ParseHeader(bytes));
  if (static_cast<size_t>(q.header.message_length) != bytes.size()) {
    return ProtocolError("message length does not match the bytes given");
  }
  if (q.header.op_code != static_cast<int32_t>(OpCode::kQuery)) {
    return ProtocolError("not an OP_QUERY");
  }
  Reader r(bytes.substr(kHeaderSize));
  if (!r.ReadInt32(&q.flags) || !r.ReadCString(&q.full_collection_name) ||
      !r.ReadInt32(&q.number_to_skip) || !r.ReadInt32(&q.number_to_return)) {
    return ProtocolError("OP_QUERY is truncated");
  }
  ROCKDOC_RETURN_IF_ERROR(r.ReadDocument("OP_QUERY query", kMaxBsonObjectSize, &q.query));
  if (r.remaining() > 0) {
    DocumentView fields;
    ROCKDOC_RETURN_IF_ERROR(
        r.ReadDocument("OP_QUERY returnFieldsSelector", kMaxBsonObjectSize, &fields));
    q.return_fields_selector = fields;
  }
  if (r.remaining() > 0) return ProtocolError("OP_QUERY has bytes after its documents");
  return q;
}

std::string BuildOpMsg(int32_t request_id, int32_t response_to, uint32_t flags,
                       DocumentView body) {
  std::string out;
  out.reserve(kHeaderSize + 4 + 1 + body.size() + 4);
  AppendHeader(&out, request_id, response_to, OpCode::kMsg);
  AppendLE<uint32_t>(&out, flags);
  out.push_back('\0');  // section kind 0
  out.append(body.bytes());
  if (flags & kChecksumPresent) {
    PatchLength(&out);  // the checksum covers the final length
    out.resize(out.size() + 4);
    PatchLength(&out);
    const uint32_t crc = Crc32c(std::string_view(out).substr(0, out.size() - 4));
    StoreLE<uint32_t>(reinterpret_cast<uint8_t*>(out.data()) + out.size() - 4, crc);
    return out;
  }
  PatchLength(&out);
  return out;
}

std::string BuildOpReply(int32_t request_id, int32_t response_to, int32_t response_flags,
                         DocumentView doc) {
  std::string out;
  AppendHeader(&out, request_id, response_to, OpCode::kReply);
  AppendLE<int32_t>(&out, response_flags);
  AppendLE<int64_t>(&out, 0);  // cursorID
  AppendLE<int32_t>(&out, 0);  // startingFrom
  AppendLE<int32_t>(&out, 1);  // numberReturned
  out.append(doc.bytes());
  PatchLength(&out);
  return out;
}

}  // namespace rockdoc::wire
