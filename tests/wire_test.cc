// The wire layer (src/wire/): CRC-32C against its specification's vectors,
// messages parsed from hand-built bytes (each way a message can be
// malformed, with the specific error), messages built and parsed back, and
// the service's answer to each class of message over a real database.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/endian.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"
#include "wire/crc32c.h"
#include "wire/message.h"
#include "wire/service.h"

namespace rockdoc::wire {
namespace {

using rockdoc::test::Json;

// ---- CRC-32C ----

TEST(Crc32cTest, CheckValueOfRfc3720) {
  // The CRC catalogue's check value: CRC-32C of the ASCII digits 1..9.
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
}

TEST(Crc32cTest, Rfc3720Appendix) {
  // RFC 3720 B.4: 32 bytes of zeros, of 0xFF, ascending and descending.
  std::string zeros(32, '\0'), ones(32, '\xFF'), up(32, 0), down(32, 0);
  for (int i = 0; i < 32; ++i) {
    up[i] = static_cast<char>(i);
    down[i] = static_cast<char>(31 - i);
  }
  EXPECT_EQ(Crc32c(zeros), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(ones), 0x62A8AB43u);
  EXPECT_EQ(Crc32c(up), 0x46DD794Eu);
  EXPECT_EQ(Crc32c(down), 0x113FDB5Cu);
  EXPECT_EQ(Crc32c(""), 0u);
}

TEST(Crc32cTest, InPiecesEqualsWhole) {
  std::string data;
  for (int i = 0; i < 1000; ++i) data.push_back(static_cast<char>(i * 7 + 3));
  for (size_t cut : {0, 1, 7, 8, 9, 500, 999, 1000}) {
    EXPECT_EQ(Crc32c(data.substr(cut), Crc32c(data.substr(0, cut))), Crc32c(data)) << cut;
  }
}

// ---- Hand-built messages ----

void Put32(std::string* out, int32_t v) { AppendLE<int32_t>(out, v); }

// A message: header (the length patched) + payload.
std::string Message(int32_t op, std::string_view payload, int32_t request_id = 7) {
  std::string m;
  Put32(&m, static_cast<int32_t>(16 + payload.size()));
  Put32(&m, request_id);
  Put32(&m, 0);
  Put32(&m, op);
  m.append(payload);
  return m;
}

// Section kind 0: the body.
std::string BodySection(std::string_view json) {
  std::string s(1, '\0');
  s.append(Json(json).bytes());
  return s;
}

// Section kind 1: a document sequence (size, identifier, documents).
std::string SequenceSection(std::string_view identifier, const std::vector<std::string>& docs) {
  std::string content(identifier);
  content.push_back('\0');
  for (const std::string& d : docs) content.append(Json(d).bytes());
  std::string s(1, '\x01');
  Put32(&s, static_cast<int32_t>(4 + content.size()));
  s.append(content);
  return s;
}

std::string Flags(uint32_t flags) {
  std::string s;
  AppendLE<uint32_t>(&s, flags);
  return s;
}

std::string OpMsgBytes(uint32_t flags, std::string_view sections) {
  return Message(2013, Flags(flags) + std::string(sections));
}

// The same with the CRC-32C appended (flag set).
std::string WithChecksum(std::string_view sections) {
  std::string m = Message(2013, Flags(kChecksumPresent) + std::string(sections) + "0000");
  const uint32_t crc = Crc32c(std::string_view(m).substr(0, m.size() - 4));
  StoreLE<uint32_t>(reinterpret_cast<uint8_t*>(m.data()) + m.size() - 4, crc);
  return m;
}

void ExpectError(const StatusOr<OpMsg>& r, ErrorCode code, std::string_view text) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), code) << r.status().ToString();
  EXPECT_NE(r.status().message().find(text), std::string_view::npos) << r.status().ToString();
}

TEST(WireHeaderTest, Fields) {
  std::string m = Message(2013, "abcd", 42);
  auto h = ParseHeader(m);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->message_length, 20);
  EXPECT_EQ(h->request_id, 42);
  EXPECT_EQ(h->response_to, 0);
  EXPECT_EQ(h->op_code, 2013);
}

TEST(WireHeaderTest, LengthsThatCannotBeFramed) {
  EXPECT_EQ(ParseHeader("short").status().code(), ErrorCode::kProtocolError);
  std::string m = Message(2013, "");
  StoreLE<int32_t>(reinterpret_cast<uint8_t*>(m.data()), 15);
  EXPECT_EQ(ParseHeader(m).status().code(), ErrorCode::kProtocolError);
  StoreLE<int32_t>(reinterpret_cast<uint8_t*>(m.data()), -1);
  EXPECT_EQ(ParseHeader(m).status().code(), ErrorCode::kProtocolError);
  StoreLE<int32_t>(reinterpret_cast<uint8_t*>(m.data()), kMaxMessageSize + 1);
  EXPECT_NE(ParseHeader(m).status().message().find("maximum message size"), std::string::npos);
  StoreLE<int32_t>(reinterpret_cast<uint8_t*>(m.data()), kMaxMessageSize);
  EXPECT_TRUE(ParseHeader(m).ok());
}

TEST(OpMsgTest, BodyOnly) {
  std::string m = OpMsgBytes(0, BodySection(R"({"ping": 1, "$db": "admin"})"));
  auto msg = ParseOpMsg(m);
  ASSERT_TRUE(msg.ok()) << msg.status().ToString();
  EXPECT_EQ(msg->flags, 0u);
  EXPECT_EQ(ToJson(msg->body), R"({"ping": 1, "$db": "admin"})");
  EXPECT_TRUE(msg->sequences.empty());
  EXPECT_EQ(FoldSequences(*msg), Json(R"({"ping": 1, "$db": "admin"})"));
}

TEST(OpMsgTest, DocumentSequencesFoldIntoArrays) {
  // The sequence may come before the body, as the protocol allows.
  std::string m = OpMsgBytes(
      0, SequenceSection("documents", {R"({"_id": 1})", R"({"_id": 2, "a": "x"})"}) +
             BodySection(R"({"insert": "c", "$db": "d"})") +
             SequenceSection("empty", {}));
  auto msg = ParseOpMsg(m);
  ASSERT_TRUE(msg.ok()) << msg.status().ToString();
  ASSERT_EQ(msg->sequences.size(), 2u);
  EXPECT_EQ(msg->sequences[0].identifier, "documents");
  EXPECT_EQ(msg->sequences[0].documents.size(), 2u);
  EXPECT_EQ(ToJson(FoldSequences(*msg)),
            R"({"insert": "c", "$db": "d", "documents": [{"_id": 1}, {"_id": 2, "a": "x"}], )"
            R"("empty": []})");
}

// A crafted message of many tiny sequences is refused, not checked each
// against each (the cap is 16; real commands carry one or two).
TEST(OpMsgTest, ManyDocumentSequencesAreRefused) {
  std::string sections = BodySection(R"({"insert": "c", "$db": "d"})");
  for (int i = 0; i < 16; ++i) sections += SequenceSection("s" + std::to_string(i), {});
  ASSERT_TRUE(ParseOpMsg(OpMsgBytes(0, sections)).ok());
  sections += SequenceSection("s16", {});
  ExpectError(ParseOpMsg(OpMsgBytes(0, sections)), ErrorCode::kProtocolError,
              "more than 16 document sequences");
}

TEST(OpMsgTest, FlagBits) {
  auto msg = ParseOpMsg(OpMsgBytes(kMoreToCome | kExhaustAllowed, BodySection(R"({"a": 1})")));
  ASSERT_TRUE(msg.ok());
  EXPECT_TRUE(msg->more_to_come());
  EXPECT_TRUE(msg->exhaust_allowed());
  EXPECT_FALSE(msg->checksum_present());
  // An unknown required bit (0-15) is refused; an unknown optional one
  // (16-31) is ignored, as the protocol says.
  ExpectError(ParseOpMsg(OpMsgBytes(1u << 2, BodySection(R"({"a": 1})"))),
              ErrorCode::kProtocolError, "unknown required flag bit");
  EXPECT_TRUE(ParseOpMsg(OpMsgBytes(1u << 20, BodySection(R"({"a": 1})"))).ok());
}

TEST(OpMsgTest, Checksum) {
  std::string m = WithChecksum(BodySection(R"({"ping": 1, "$db": "admin"})"));
  auto msg = ParseOpMsg(m);
  ASSERT_TRUE(msg.ok()) << msg.status().ToString();
  EXPECT_TRUE(msg->checksum_present());
  EXPECT_EQ(ToJson(msg->body), R"({"ping": 1, "$db": "admin"})");
  // One flipped bit anywhere (the header, a document, the checksum itself).
  for (size_t at : {size_t{5}, size_t{25}, m.size() - 1}) {
    std::string bad = m;
    bad[at] ^= 0x10;
    ExpectError(ParseOpMsg(bad), ErrorCode::kProtocolError, "checksum does not match");
  }
  // The flag without room for the checksum.
  ExpectError(ParseOpMsg(Message(2013, Flags(kChecksumPresent) + "\x01")),
              ErrorCode::kProtocolError, "checksum is truncated");
}

TEST(OpMsgTest, MalformedSections) {
  ExpectError(ParseOpMsg(OpMsgBytes(0, "")), ErrorCode::kProtocolError, "no body section");
  ExpectError(ParseOpMsg(Message(2013, "\x01\x00")), ErrorCode::kProtocolError, "no flagBits");
  ExpectError(ParseOpMsg(OpMsgBytes(0, BodySection(R"({"a": 1})") + BodySection(R"({"b": 1})"))),
              ErrorCode::kProtocolError, "more than one body");
  ExpectError(ParseOpMsg(OpMsgBytes(0, BodySection(R"({"a": 1})") + "\x02")),
              ErrorCode::kProtocolError, "unknown kind 2");
  ExpectError(ParseOpMsg(OpMsgBytes(0, SequenceSection("d", {R"({"x": 1})"}))),
              ErrorCode::kProtocolError, "no body section");
  ExpectError(ParseOpMsg(OpMsgBytes(0, BodySection(R"({"d": 1})") +
                                           SequenceSection("d", {R"({"x": 1})"}))),
              ErrorCode::kProtocolError, "duplicates a field of the body");
  ExpectError(ParseOpMsg(OpMsgBytes(0, BodySection(R"({"a": 1})") + SequenceSection("d", {}) +
                                           SequenceSection("d", {}))),
              ErrorCode::kProtocolError, "two document sequences");
  ExpectError(ParseOpMsg(OpMsgBytes(0, BodySection(R"({"a": 1})") + SequenceSection("", {}))),
              ErrorCode::kProtocolError, "no identifier");
  // An identifier that is not UTF-8 (found by fuzz/wire_message_fuzz.cc: it
  // was quoted into an error message, making the reply invalid BSON).
  ExpectError(ParseOpMsg(OpMsgBytes(0, BodySection(R"({"a": 1})") +
                                           SequenceSection("documen\x91s", {}))),
              ErrorCode::kProtocolError, "identifier is not valid UTF-8");
}

TEST(OpMsgTest, LengthsThatLie) {
  const std::string body = BodySection(R"({"a": 1})");
  // The body's own length says more than the message holds, or less than 5.
  for (int32_t lie : {1000, 4, -1, 0}) {
    std::string b = body;
    StoreLE<int32_t>(reinterpret_cast<uint8_t*>(b.data()) + 1, lie);
    EXPECT_FALSE(ParseOpMsg(OpMsgBytes(0, b)).ok()) << lie;
  }
  // The body's length is shorter than its elements (a terminator inside).
  {
    std::string b = body;
    StoreLE<int32_t>(reinterpret_cast<uint8_t*>(b.data()) + 1, 8);
    EXPECT_FALSE(ParseOpMsg(OpMsgBytes(0, b)).ok());
  }
  // A sequence whose size runs past the message, or is below its own 4 bytes.
  for (int32_t lie : {1000, 3, -5}) {
    std::string seq = SequenceSection("d", {R"({"x": 1})"});
    StoreLE<int32_t>(reinterpret_cast<uint8_t*>(seq.data()) + 1, lie);
    ExpectError(ParseOpMsg(OpMsgBytes(0, body + seq)), ErrorCode::kProtocolError,
                "document sequence size");
  }
  // A sequence whose size cuts its last document short.
  {
    std::string seq = SequenceSection("d", {R"({"x": 1})"});
    StoreLE<int32_t>(reinterpret_cast<uint8_t*>(seq.data()) + 1,
                     static_cast<int32_t>(seq.size() - 1 - 3));
    EXPECT_FALSE(ParseOpMsg(OpMsgBytes(0, body + seq.substr(0, seq.size() - 3))).ok());
  }
  // The header's length disagrees with the bytes given.
  std::string m = OpMsgBytes(0, body);
  EXPECT_FALSE(ParseOpMsg(m.substr(0, m.size() - 1)).ok());
}

TEST(OpMsgTest, InvalidBson) {
  // A string element whose length runs past the document.
  std::string doc("\x10\x00\x00\x00\x02s\x00\x30\x00\x00\x00hi\x00\x00", 16);
  std::string b(1, '\0');
  b += doc;
  ExpectError(ParseOpMsg(OpMsgBytes(0, b)), ErrorCode::kInvalidBSON, "OP_MSG body");
  // The same inside a document sequence.
  std::string content = std::string("d", 1) + '\0' + doc;
  std::string seq(1, '\x01');
  Put32(&seq, static_cast<int32_t>(4 + content.size()));
  seq += content;
  ExpectError(ParseOpMsg(OpMsgBytes(0, BodySection(R"({"a": 1})") + seq)),
              ErrorCode::kInvalidBSON, "document sequence 'd'");
}

TEST(OpMsgTest, BuildParsesBack) {
  Document body = Json(R"({"ok": 1, "n": {"$numberLong": "5"}})");
  for (uint32_t flags : {0u, kMoreToCome, kChecksumPresent, kChecksumPresent | kMoreToCome}) {
    std::string m = BuildOpMsg(11, 7, flags, body);
    auto msg = ParseOpMsg(m);
    ASSERT_TRUE(msg.ok()) << msg.status().ToString();
    EXPECT_EQ(msg->header.request_id, 11);
    EXPECT_EQ(msg->header.response_to, 7);
    EXPECT_EQ(msg->flags, flags);
    EXPECT_EQ(std::string(msg->body.bytes()), body.bytes());
  }
}

// ---- OP_QUERY and OP_REPLY ----

std::string OpQueryBytes(std::string_view ns, std::string_view query_json) {
  std::string p;
  Put32(&p, 0);  // flags
  p.append(ns);
  p.push_back('\0');
  Put32(&p, 0);   // numberToSkip
  Put32(&p, -1);  // numberToReturn
  p.append(Json(query_json).bytes());
  return Message(2004, p);
}

TEST(OpQueryTest, Parses) {
  const std::string bytes = OpQueryBytes("admin.$cmd", R"({"isMaster": 1})");
  auto q = ParseOpQuery(bytes);  // views into `bytes`
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->full_collection_name, "admin.$cmd");
  EXPECT_EQ(q->number_to_return, -1);
  EXPECT_EQ(ToJson(q->query), R"({"isMaster": 1})");
  EXPECT_FALSE(q->return_fields_selector.has_value());
  // No NUL after the namespace; garbage after the documents.
  std::string m = OpQueryBytes("admin.$cmd", R"({"isMaster": 1})");
  EXPECT_FALSE(ParseOpQuery(Message(2004, std::string("\0\0\0\0admin", 9))).ok());
  std::string extra = m + "xyz";
  StoreLE<int32_t>(reinterpret_cast<uint8_t*>(extra.data()), static_cast<int32_t>(extra.size()));
  EXPECT_FALSE(ParseOpQuery(extra).ok());
}

// Reads an OP_REPLY's flags and its one document.
std::pair<int32_t, Document> ParseReply(const std::string& m) {
  EXPECT_GE(m.size(), 36u + 5);
  EXPECT_EQ(LoadLE<int32_t>(reinterpret_cast<const uint8_t*>(m.data()) + 12), 1);
  EXPECT_EQ(LoadLE<int32_t>(reinterpret_cast<const uint8_t*>(m.data())),
            static_cast<int32_t>(m.size()));
  EXPECT_EQ(LoadLE<int32_t>(reinterpret_cast<const uint8_t*>(m.data()) + 32), 1);
  auto doc = Document::FromBytes(std::string_view(m).substr(36));
  EXPECT_TRUE(doc.ok());
  return {LoadLE<int32_t>(reinterpret_cast<const uint8_t*>(m.data()) + 16),
          doc.ok() ? *doc : Document()};
}

// ---- The service over a database ----

class ServiceTest : public rockdoc::test::ClientTest {
 protected:
  void SetUp() override {
    ClientTest::SetUp();
    service_ = std::make_unique<Service>(client_.get());
  }
  // The reply document of an OP_MSG reply.
  Document Reply(const Response& r, uint32_t* flags = nullptr) {
    auto msg = ParseOpMsg(r.reply);
    EXPECT_TRUE(msg.ok()) << msg.status().ToString();
    if (!msg.ok()) return Document();
    if (flags) *flags = msg->flags;
    return Document::AdoptValidated(std::string(msg->body.bytes()));
  }
  std::unique_ptr<Service> service_;
  ConnectionState conn_;
};

TEST_F(ServiceTest, RunsACommandWithItsSequences) {
  Response r = service_->Handle(
      OpMsgBytes(0, BodySection(R"({"insert": "c", "$db": "d"})") +
                        SequenceSection("documents", {R"({"_id": 1})", R"({"_id": 2})"})),
      &conn_);
  EXPECT_FALSE(r.close);
  Document reply = Reply(r);
  EXPECT_EQ(ToJson(reply), R"({"n": 2, "ok": 1.0})");
  auto header = ParseHeader(r.reply);
  EXPECT_EQ(header->response_to, 7);
  r = service_->Handle(OpMsgBytes(0, BodySection(R"({"count": "c", "$db": "d"})")), &conn_);
  EXPECT_EQ(ToJson(Reply(r)), R"({"n": 2, "ok": 1.0})");
}

TEST_F(ServiceTest, ChecksumIsAnsweredWithOne) {
  Response r = service_->Handle(WithChecksum(BodySection(R"({"ping": 1, "$db": "admin"})")),
                                &conn_);
  uint32_t flags = 0;
  EXPECT_EQ(ToJson(Reply(r, &flags)), R"({"ok": 1.0})");
  EXPECT_EQ(flags, kChecksumPresent);
}

TEST_F(ServiceTest, MalformedOpMsgGetsAnErrorReply) {
  std::string bad = WithChecksum(BodySection(R"({"ping": 1, "$db": "admin"})"));
  bad[bad.size() - 1] ^= 1;
  Response r = service_->Handle(bad, &conn_);
  EXPECT_FALSE(r.close);
  Document reply = Reply(r);
  EXPECT_EQ(reply.Get("code").Int32(), 17);
  EXPECT_EQ(reply.Get("codeName").String(), "ProtocolError");
  EXPECT_EQ(reply.Get("ok").Double(), 0);

  r = service_->Handle(OpMsgBytes(0, BodySection(R"({"a": 1})") + "\x05"), &conn_);
  EXPECT_NE(Reply(r).Get("errmsg").String().find("unknown kind 5"), std::string_view::npos);

  r = service_->Handle(OpMsgBytes(0, BodySection(R"({"ping": 1})")), &conn_);
  EXPECT_EQ(Reply(r).Get("code").Int32(), 40571);  // no $db
}

TEST_F(ServiceTest, ConnectionClosedForWhatCannotBeAnswered) {
  for (int32_t op : {2001, 2002, 2005, 2006, 2007, 2012, 1, 0, 9999}) {
    Response r = service_->Handle(Message(op, "abcd"), &conn_);
    EXPECT_TRUE(r.close) << op;
    EXPECT_TRUE(r.reply.empty()) << op;
  }
  std::string m = Message(2013, "");
  StoreLE<int32_t>(reinterpret_cast<uint8_t*>(m.data()), kMaxMessageSize + 1);
  EXPECT_TRUE(service_->Handle(m, &conn_).close);
}

TEST_F(ServiceTest, MoreToCome) {
  // No reply; an unacknowledged (w: 0) write is applied all the same.
  Response r = service_->Handle(
      OpMsgBytes(kMoreToCome, BodySection(R"({"insert": "c", "$db": "d", "documents": [{"_id": 1}],
                                              "writeConcern": {"w": 0}})")),
      &conn_);
  EXPECT_TRUE(r.reply.empty());
  EXPECT_FALSE(r.close);
  EXPECT_EQ(client_->GetDatabase("d").GetCollection("c").CountDocuments(Document()).value(), 1);
  // A failed one closes the connection, the only way to tell.
  r = service_->Handle(OpMsgBytes(kMoreToCome, BodySection(R"({"nosuch": 1, "$db": "d"})")),
                       &conn_);
  EXPECT_TRUE(r.close);
  EXPECT_NE(r.reason.find("no such command"), std::string::npos);
  // w: 0 with a reply wanted stays what the command layer says (not supported).
  r = service_->Handle(OpMsgBytes(0, BodySection(R"({"insert": "c", "$db": "d",
                                   "documents": [{"_id": 2}], "writeConcern": {"w": 0}})")),
                       &conn_);
  EXPECT_EQ(Reply(r).Get("code").Int32(), 238);
}

TEST_F(ServiceTest, OpQueryOnlyForTheHandshake) {
  for (std::string_view q : {R"({"isMaster": 1, "client": {"driver": {"name": "x"}}})",
                             R"({"$query": {"ismaster": 1}, "$readPreference": {"mode": "primary"}})",
                             R"({"hello": 1})"}) {
    Response r = service_->Handle(OpQueryBytes("admin.$cmd", q), &conn_);
    auto [flags, doc] = ParseReply(r.reply);
    EXPECT_EQ(flags, 0) << q;
    EXPECT_EQ(doc.Get("ok").NumberAsDouble(), 1) << ToJson(doc);
    EXPECT_EQ(doc.Get("maxWireVersion").Int32(), 21);
    EXPECT_EQ(doc.Get("maxMessageSizeBytes").Int32(), 48000000);
  }
  for (std::string_view q : {R"({"find": "c"})", R"({"insert": "c", "documents": []})"}) {
    Response r = service_->Handle(OpQueryBytes("d.$cmd", q), &conn_);
    auto [flags, doc] = ParseReply(r.reply);
    EXPECT_EQ(flags, kReplyQueryFailure);
    EXPECT_EQ(doc.Get("code").Int32(), 352) << ToJson(doc);
    EXPECT_FALSE(r.close);
  }
  // A namespace that is not UTF-8 is quoted as valid UTF-8 ('?' for the byte).
  {
    auto [flags, doc] =
        ParseReply(service_->Handle(OpQueryBytes("d\xff.c", R"({"find": "c"})"), &conn_).reply);
    EXPECT_NE(doc.Get("$err").String().find("find"), std::string_view::npos);
  }
  {
    auto [flags, doc] = ParseReply(service_->Handle(OpQueryBytes("d\xff.c", "{}"), &conn_).reply);
    EXPECT_NE(doc.Get("$err").String().find("d?.c"), std::string_view::npos) << ToJson(doc);
  }
  // A command on a database whose name is not UTF-8 (found by
  // fuzz/wire_message_fuzz.cc): the command layer's error quotes the name,
  // and the reply is still valid BSON.
  {
    Response r = service_->Handle(OpQueryBytes(".dmi\xa9.$cmd", R"({"isMaster": 1})"), &conn_);
    ASSERT_GE(r.reply.size(), 36u);
    ASSERT_TRUE(ValidateBson(std::string_view(r.reply).substr(36)).ok());
    auto [flags, doc] = ParseReply(r.reply);
    EXPECT_NE(doc.Get("errmsg").String().find("'.dmi?'"), std::string_view::npos) << ToJson(doc);
  }
  // A query of a collection, not a command.
  auto [flags, doc] = ParseReply(service_->Handle(OpQueryBytes("d.c", R"({"isMaster": 1})"),
                                                  &conn_).reply);
  EXPECT_EQ(doc.Get("code").Int32(), 352);
}

TEST_F(ServiceTest, AwaitableHelloStreams) {
  Document hello = Reply(service_->Handle(
      OpMsgBytes(0, BodySection(R"({"hello": 1, "$db": "admin"})")), &conn_));
  Element tv = hello.Get("topologyVersion");
  ASSERT_TRUE(tv.IsDocument());
  BsonBuilder b;
  b.AppendInt32("hello", 1);
  b.AppendString("$db", "admin");
  b.AppendDocument("topologyVersion", tv.Document());
  b.AppendInt64("maxAwaitTimeMS", 250);
  std::string body(1, '\0');
  body += std::move(b).Build().bytes();
  // The current version: the reply waits, and with exhaustAllowed streams.
  Response r = service_->Handle(OpMsgBytes(kExhaustAllowed, body), &conn_);
  EXPECT_EQ(r.delay_ms, 250);
  EXPECT_TRUE(r.exhaust);
  uint32_t flags = 0;
  EXPECT_EQ(Reply(r, &flags).Get("isWritablePrimary").Bool(), true);
  EXPECT_EQ(flags, kMoreToCome);
  const int32_t first_id = ParseHeader(r.reply)->request_id;
  Response next = service_->Continue(&conn_);
  EXPECT_TRUE(next.exhaust);
  EXPECT_EQ(ParseHeader(next.reply)->response_to, first_id);
  // Without exhaustAllowed: one reply, after the wait.
  r = service_->Handle(OpMsgBytes(0, body), &conn_);
  EXPECT_EQ(r.delay_ms, 250);
  EXPECT_FALSE(r.exhaust);
  // Another version (another process): answered at once.
  std::string other = Json(R"({"hello": 1, "$db": "admin",
      "topologyVersion": {"processId": {"$oid": "000000000000000000000000"},
                          "counter": {"$numberLong": "0"}},
      "maxAwaitTimeMS": 250})").bytes();
  r = service_->Handle(OpMsgBytes(0, std::string(1, '\0') + other), &conn_);
  EXPECT_EQ(r.delay_ms, 0);
  EXPECT_EQ(Reply(r).Get("ok").NumberAsDouble(), 1);
}

TEST_F(ServiceTest, AuthRefusesTheUnauthenticated) {
  ServiceOptions options;
  options.auth = true;
  Service guarded(client_.get(), options);
  auto run = [&](std::string_view json, ConnectionState* conn) {
    return Reply(guarded.Handle(OpMsgBytes(0, BodySection(json)), conn));
  };
  ConnectionState remote;
  remote.local = false;
  EXPECT_EQ(run(R"({"ping": 1, "$db": "admin"})", &remote).Get("ok").NumberAsDouble(), 1);
  EXPECT_EQ(run(R"({"hello": 1, "$db": "admin"})", &remote).Get("ok").NumberAsDouble(), 1);
  for (std::string_view cmd : {R"({"insert": "c", "documents": [{}], "$db": "d"})",
                               R"({"find": "c", "$db": "d"})",
                               R"({"usersInfo": 1, "$db": "admin"})",
                               R"({"endSessions": [], "$db": "admin"})"}) {
    Document r = run(cmd, &remote);
    EXPECT_EQ(r.Get("code").Int32(), 13) << cmd << " " << ToJson(r);
  }
  // The localhost exception: not for a remote peer; for a local one, once.
  const char* create =
      R"({"createUser": "u", "pwd": "pencil", "roles": ["root"], "$db": "admin"})";
  EXPECT_EQ(run(create, &remote).Get("code").Int32(), 13);
  ConnectionState local;
  EXPECT_EQ(run(create, &local).Get("ok").NumberAsDouble(), 1);
  EXPECT_EQ(run(R"({"createUser": "v", "pwd": "p", "roles": ["root"], "$db": "admin"})", &local)
                .Get("code")
                .Int32(),
            13);
  // Nothing was written by the refused commands.
  EXPECT_EQ(client_->GetDatabase("d").GetCollection("c").CountDocuments(Document()).value(), 0);
  // An authenticated connection runs them (as the SCRAM conversation leaves
  // it: the user's name and userId).
  auto u = client_->GetDatabase("admin").GetCollection("rockdoc.users").FindOne(
      Json(R"({"_id": "admin.u"})"));
  ASSERT_TRUE(u.ok() && u->has_value());
  ASSERT_TRUE((**u).Get("userId").AsBinary().has_value());
  local.auth.user = "admin.u";
  local.auth.user_id = std::string((**u).Get("userId").AsBinary()->data);
  EXPECT_EQ(run(R"({"insert": "c", "documents": [{}], "$db": "d"})", &local).Get("n").Int32(), 1);
  // Another userId (a user dropped and created again under that name) is
  // not the user the connection logged in as: logged out.
  ConnectionState stale;
  stale.auth.user = "admin.u";
  stale.auth.user_id = "another one";
  EXPECT_EQ(run(R"({"find": "c", "$db": "d"})", &stale).Get("code").Int32(), 13);
  EXPECT_TRUE(stale.auth.user.empty());
  // Without auth, the same commands run unauthenticated.
  ConnectionState open;
  open.local = false;
  EXPECT_EQ(Reply(service_->Handle(OpMsgBytes(0, BodySection(R"({"find": "c", "$db": "d"})")),
                                   &open))
                .Get("ok")
                .NumberAsDouble(),
            1);
}

}  // namespace
}  // namespace rockdoc::wire
