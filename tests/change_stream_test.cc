// Change streams over the change log (issue 37): Collection/Database/
// Client::Watch see every committed insert, update, replace and delete as
// MongoDB's change events, in commit order, exactly once (none for a write
// rolled back, whole transactions at once), resume from a token (also
// after a restart), start at a cluster time, refuse a start the log no
// longer holds (286), and run the stages MongoDB allows after $changeStream.
// The updateDescription is checked against an independent truth: applied
// with rockdoc's own update operators to the old document, it gives the
// new one.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;

class ChangeStreamTest : public test::ClientTest {
 protected:
  // Every event available now.
  static std::vector<Document> Drain(ChangeStream& stream) {
    std::vector<Document> out;
    for (;;) {
      auto e = stream.TryNext();
      EXPECT_TRUE(e.ok()) << e.status();
      if (!e.ok() || !*e) return out;
      out.push_back(std::move(**e));
    }
  }
  static std::string Op(const Document& e) { return std::string(e.Get("operationType").String()); }
  // The event without its _id, clusterTime and wallTime (which vary).
  static std::string Shape(const Document& e) {
    BsonBuilder b;
    for (const Element& f : e) {
      if (f.key() == "_id" || f.key() == "clusterTime" || f.key() == "wallTime") continue;
      b.AppendElement(f);
    }
    return ToJson(std::move(b).Build());
  }
};

TEST_F(ChangeStreamTest, EveryKindOfWriteIsOneEventInCommitOrder) {
  Collection c = db().GetCollection("c");
  auto stream = c.Watch();
  ASSERT_TRUE(stream.ok()) << stream.status();
  ASSERT_TRUE(
      c.InsertOne(Json(R"({"_id": 1, "a": 1, "b": {"x": 1, "y": 2}, "arr": [1, 2, 3]})")).ok());
  ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 1})"),
                          Json(R"({"$set": {"a": 2, "b.x": 5, "n": "new"}, "$unset": {"b.y": 1},
                                   "$pop": {"arr": 1}})"))
                  .ok());
  ASSERT_TRUE(c.ReplaceOne(Json(R"({"_id": 1})"), Json(R"({"z": true})")).ok());
  ASSERT_TRUE(c.DeleteOne(Json(R"({"_id": 1})")).ok());
  // Not changed: no event.
  ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 99})"), Json(R"({"$set": {"a": 1}})")).ok());

  std::vector<Document> events = Drain(*stream);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(
      Shape(events[0]),
      R"({"operationType": "insert", "fullDocument": {"_id": 1, "a": 1, "b": {"x": 1, "y": 2}, "arr": [1, 2, 3]}, "ns": {"db": "test", "coll": "c"}, "documentKey": {"_id": 1}})");
  EXPECT_EQ(
      Shape(events[1]),
      R"({"operationType": "update", "ns": {"db": "test", "coll": "c"}, "documentKey": {"_id": 1}, "updateDescription": {"updatedFields": {"a": 2, "b.x": 5, "n": "new"}, "removedFields": ["b.y"], "truncatedArrays": [{"field": "arr", "newSize": 2}]}})");
  EXPECT_EQ(
      Shape(events[2]),
      R"({"operationType": "replace", "fullDocument": {"_id": 1, "z": true}, "ns": {"db": "test", "coll": "c"}, "documentKey": {"_id": 1}})");
  EXPECT_EQ(
      Shape(events[3]),
      R"({"operationType": "delete", "ns": {"db": "test", "coll": "c"}, "documentKey": {"_id": 1}})");
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_TRUE(events[i].Get("_id").Document().Get("_data").IsString());
    EXPECT_TRUE(events[i].Get("clusterTime").IsTimestamp());
    EXPECT_TRUE(events[i].Get("wallTime").IsDateTime());
    if (i > 0) {
      EXPECT_LT(events[i - 1].Get("clusterTime").Timestamp().AsUint64(),
                events[i].Get("clusterTime").Timestamp().AsUint64());
    }
  }
  // The field order of MongoDB's events.
  std::vector<std::string> keys;
  for (const Element& f : events[0]) keys.emplace_back(f.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"_id", "operationType", "clusterTime", "wallTime",
                                            "fullDocument", "ns", "documentKey"}));
}

TEST_F(ChangeStreamTest, WritesRolledBackHaveNoEventAndBatchesKeepOrder) {
  Collection c = db().GetCollection("c");
  auto stream = c.Watch();
  ASSERT_TRUE(stream.ok());
  // An unordered insertMany whose duplicate is rolled back document by
  // document (a savepoint each): events for the others only.
  InsertManyOptions unordered;
  unordered.ordered = false;
  std::vector<Document> docs;
  for (int i : {1, 2, 2, 3, 1, 4}) docs.push_back(Json("{\"_id\": " + std::to_string(i) + "}"));
  auto r = c.InsertMany(docs, unordered);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->write_errors.size(), 2u);
  std::vector<Document> events = Drain(*stream);
  std::vector<int> ids;
  for (const Document& e : events)
    ids.push_back(e.Get("documentKey").Document().Get("_id").Int32());
  EXPECT_EQ(ids, (std::vector<int>{1, 2, 3, 4}));
  // A unique index violation on update writes nothing and records nothing.
  IndexOptions unique_sparse;
  unique_sparse.unique = true;
  unique_sparse.sparse = true;
  ASSERT_TRUE(c.CreateIndex(Json(R"({"u": 1})"), unique_sparse).ok());
  ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$set": {"u": 1}})")).ok());
  EXPECT_EQ(c.UpdateOne(Json(R"({"_id": 2})"), Json(R"({"$set": {"u": 1}})")).status().code(),
            ErrorCode::kDuplicateKey);
  events = Drain(*stream);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].Get("documentKey").Document().Get("_id").Int32(), 1);
}

TEST_F(ChangeStreamTest, TransactionEventsAppearTogetherAtCommitAndNotAtAbort) {
  Collection plain = db().GetCollection("c");
  auto stream = plain.Watch();
  ASSERT_TRUE(stream.ok());
  auto session = client_->StartSession();
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE(session->StartTransaction().ok());
  Collection c = session->GetDatabase("test").GetCollection("c");
  ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 1})")).ok());
  ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 2})")).ok());
  ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$set": {"a": 1}})")).ok());
  // Watch inside a transaction is refused, as MongoDB's.
  EXPECT_EQ(c.Watch().status().code(), ErrorCode::kOperationNotSupportedInTransaction);
  EXPECT_TRUE(Drain(*stream).empty());  // not committed yet
  ASSERT_TRUE(session->CommitTransaction().ok());
  std::vector<Document> events = Drain(*stream);
  ASSERT_EQ(events.size(), 3u);
  for (const Document& e : events) {
    EXPECT_EQ(e.Get("clusterTime").Timestamp(), events[0].Get("clusterTime").Timestamp());
    EXPECT_EQ(e.Get("txnNumber").Int64(), events[0].Get("txnNumber").Int64());
    EXPECT_TRUE(e.Get("lsid").Document().Get("id").IsBinary());
  }
  EXPECT_EQ(Op(events[0]), "insert");
  EXPECT_EQ(Op(events[2]), "update");
  EXPECT_NE(events[0].Get("_id").Document().Get("_data").String(),
            events[1].Get("_id").Document().Get("_data").String());

  ASSERT_TRUE(session->StartTransaction().ok());
  ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 3})")).ok());
  ASSERT_TRUE(session->AbortTransaction().ok());
  ASSERT_TRUE(plain.InsertOne(Json(R"({"_id": 4})")).ok());
  events = Drain(*stream);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].Get("documentKey").Document().Get("_id").Int32(), 4);
  EXPECT_FALSE(events[0].Get("txnNumber").ok());
}

TEST_F(ChangeStreamTest, ResumesAfterATokenAlsoAfterARestart) {
  Collection c = db().GetCollection("c");
  auto stream = c.Watch();
  ASSERT_TRUE(stream.ok());
  for (int i = 1; i <= 5; ++i)
    ASSERT_TRUE(c.InsertOne(Json("{\"_id\": " + std::to_string(i) + "}")).ok());
  auto first = stream->TryNext();
  ASSERT_TRUE(first.ok() && *first);
  auto second = stream->TryNext();
  ASSERT_TRUE(second.ok() && *second);
  Document token = stream->resume_token();
  EXPECT_EQ(ToJson(token), ToJson((*second)->Get("_id").Document()));
  const BsonTimestamp second_time = (*second)->Get("clusterTime").Timestamp();

  Open();  // a restart: the log is durable
  c = db().GetCollection("c");
  ChangeStreamOptions after;
  after.resume_after = token;
  auto resumed = c.Watch({}, after);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  std::vector<Document> events = Drain(*resumed);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].Get("documentKey").Document().Get("_id").Int32(), 3);
  // Cluster times keep growing across the restart.
  ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 6})")).ok());
  events = Drain(*resumed);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_LT(second_time.AsUint64(), events[0].Get("clusterTime").Timestamp().AsUint64());

  // startAtOperationTime: from the second event's commit on.
  ChangeStreamOptions at;
  at.start_at_operation_time = second_time;
  auto from_time = c.Watch({}, at);
  ASSERT_TRUE(from_time.ok());
  EXPECT_EQ(Drain(*from_time).size(), 5u);  // 2, 3, 4, 5, 6
  // The high-water token after the end resumes at the end.
  ChangeStreamOptions at_end;
  at_end.resume_after = from_time->resume_token();
  auto tail = c.Watch({}, at_end);
  ASSERT_TRUE(tail.ok());
  EXPECT_TRUE(Drain(*tail).empty());

  ChangeStreamOptions two;
  two.resume_after = token;
  two.start_at_operation_time = second_time;
  EXPECT_EQ(c.Watch({}, two).status().code_number(), 40674);
  ChangeStreamOptions bad;
  bad.resume_after = Json(R"({"_data": "nonsense"})");
  EXPECT_EQ(c.Watch({}, bad).status().code(), ErrorCode::kBadValue);
}

TEST_F(ChangeStreamTest, AStartTheLogNoLongerHoldsIsHistoryLost) {
  client_.reset();
  ClientOptions small = test::TestClientOptions();
  small.change_log_max_bytes = 4096;
  auto opened = Client::Open(dir_.Sub("small"), small);
  ASSERT_TRUE(opened.ok());
  Collection c = (*opened)->GetDatabase("test").GetCollection("c");
  auto stream = c.Watch();
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 0})")).ok());
  auto first = stream->TryNext();
  ASSERT_TRUE(first.ok() && *first);
  const std::string pad(200, 'x');
  for (int i = 1; i <= 200; ++i) {
    ASSERT_TRUE(
        c.InsertOne(Json("{\"_id\": " + std::to_string(i) + ", \"pad\": \"" + pad + "\"}")).ok());
  }
  ChangeStreamOptions from_first;
  from_first.resume_after =
      Document::AdoptValidated(std::string((*first)->Get("_id").Document().bytes()));
  EXPECT_EQ(c.Watch({}, from_first).status().code(), ErrorCode::kChangeStreamHistoryLost);
  // The stream that fell behind learns it too, never skipping silently.
  auto behind = stream->TryNext();
  EXPECT_EQ(behind.status().code(), ErrorCode::kChangeStreamHistoryLost);
  // The newest events are still there.
  auto now = c.Watch();
  ASSERT_TRUE(now.ok());
  ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 1000})")).ok());
  EXPECT_EQ(Drain(*now).size(), 1u);
}

TEST_F(ChangeStreamTest, OffTheStreamIsRefusedAndTheHistoryStartsAnew) {
  Collection c = db().GetCollection("c");
  auto all = c.Watch();
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 1})")).ok());
  ASSERT_EQ(Drain(*all).size(), 1u);
  // Before the log began: not there.
  ChangeStreamOptions start;
  start.start_at_operation_time = BsonTimestamp{1, 0};
  EXPECT_EQ(c.Watch({}, start).status().code(), ErrorCode::kChangeStreamHistoryLost);
  Document token = all->resume_token();

  client_.reset();
  ClientOptions off = test::TestClientOptions();
  off.change_log = false;
  {
    auto opened = Client::Open(dir_.Sub("db"), off);
    ASSERT_TRUE(opened.ok());
    Collection oc = (*opened)->GetDatabase("test").GetCollection("c");
    EXPECT_EQ(oc.Watch().status().code_number(), 40573);
    ASSERT_TRUE(oc.InsertOne(Json(R"({"_id": 2})")).ok());  // no event: a gap
  }
  Open();
  ChangeStreamOptions resume;
  resume.resume_after = token;
  EXPECT_EQ(db().GetCollection("c").Watch({}, resume).status().code(),
            ErrorCode::kChangeStreamHistoryLost);
}

// ClientOptions::change_log unset keeps what the directory had: a tool or
// an application opening with the defaults neither drops a log (whose
// streams then resume across the reopen) nor starts one.
TEST_F(ChangeStreamTest, UnsetTheDirectoryKeepsItsLog) {
  Collection c = db().GetCollection("c");
  auto stream = c.Watch();
  ASSERT_TRUE(stream.ok()) << stream.status();
  ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 1})")).ok());
  ASSERT_EQ(Drain(*stream).size(), 1u);
  const Document token = stream->resume_token();
  client_.reset();
  ClientOptions unset = test::TestClientOptions();
  unset.change_log.reset();
  auto reopen = [&]() {
    auto opened = Client::Open(dir_.Sub("db"), unset);
    EXPECT_TRUE(opened.ok()) << opened.status();
    return opened.ok() ? std::move(opened).value() : nullptr;
  };
  {
    auto defaults = reopen();
    ASSERT_NE(defaults, nullptr);
    Collection dc = defaults->GetDatabase("test").GetCollection("c");
    ASSERT_TRUE(dc.InsertOne(Json(R"({"_id": 2})")).ok());
    ChangeStreamOptions resume;
    resume.resume_after = token;
    auto resumed = dc.Watch({}, resume);
    ASSERT_TRUE(resumed.ok()) << resumed.status();
    EXPECT_EQ(Drain(*resumed).size(), 1u);  // the insert made with the defaults
  }
  {
    ClientOptions off = unset;
    off.change_log = false;
    auto opened = Client::Open(dir_.Sub("db"), off);
    ASSERT_TRUE(opened.ok()) << opened.status();
  }
  // Turned off once, the defaults keep it off.
  auto defaults = reopen();
  ASSERT_NE(defaults, nullptr);
  EXPECT_EQ(defaults->GetDatabase("test").GetCollection("c").Watch().status().code_number(),
            40573);
}

TEST_F(ChangeStreamTest, ScopesAndPipelineStages) {
  Database other = client_->GetDatabase("other");
  auto db_stream = db().Watch();
  auto client_stream = client_->Watch();
  auto filtered = db().GetCollection("c").Watch(test::Json(R"({"p": [
      {"$match": {"operationType": "insert", "fullDocument.keep": true}},
      {"$project": {"fullDocument.keep": 0}}]})")
                                                    .Get("p")
                                                    .Array());
  ASSERT_TRUE(db_stream.ok() && client_stream.ok() && filtered.ok()) << filtered.status();
  ASSERT_TRUE(db().GetCollection("c").InsertOne(Json(R"({"_id": 1, "keep": true})")).ok());
  ASSERT_TRUE(db().GetCollection("c").InsertOne(Json(R"({"_id": 2, "keep": false})")).ok());
  ASSERT_TRUE(db().GetCollection("d").InsertOne(Json(R"({"_id": 3})")).ok());
  ASSERT_TRUE(other.GetCollection("c").InsertOne(Json(R"({"_id": 4})")).ok());
  ASSERT_TRUE(
      client_->GetDatabase("admin").GetCollection("x").InsertOne(Json(R"({"_id": 5})")).ok());
  EXPECT_EQ(Drain(*db_stream).size(), 3u);
  EXPECT_EQ(Drain(*client_stream).size(), 4u);  // admin's are not shown
  std::vector<Document> kept = Drain(*filtered);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(ToJson(kept[0].Get("fullDocument").Document()), R"({"_id": 1})");
  // The filtered stream's token stands past the events it dropped.
  ChangeStreamOptions resume;
  resume.resume_after = filtered->resume_token();
  auto after = db().GetCollection("c").Watch({}, resume);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(Drain(*after).empty());

  auto group = db().Watch(Json(R"({"p": [{"$group": {"_id": null}}]})").Get("p").Array());
  EXPECT_EQ(group.status().code(), ErrorCode::kIllegalOperation);
  auto changes_id = db().Watch(Json(R"({"p": [{"$set": {"_id": 1}}]})").Get("p").Array());
  ASSERT_TRUE(changes_id.ok());
  ASSERT_TRUE(db().GetCollection("c").InsertOne(Json(R"({"_id": 9})")).ok());
  EXPECT_EQ(changes_id->TryNext().status().code(), ErrorCode::kChangeStreamFatalError);
}

TEST_F(ChangeStreamTest, UpdateLookupReadsTheDocumentAsItIsNow) {
  Collection c = db().GetCollection("c");
  ChangeStreamOptions lookup;
  lookup.full_document = "updateLookup";
  auto stream = c.Watch({}, lookup);
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 1, "a": 1})")).ok());
  ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$inc": {"a": 1}})")).ok());
  ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$inc": {"a": 1}})")).ok());
  ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 2})")).ok());
  ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 2})"), Json(R"({"$set": {"b": 1}})")).ok());
  ASSERT_TRUE(c.DeleteOne(Json(R"({"_id": 2})")).ok());
  std::vector<Document> events = Drain(*stream);
  ASSERT_EQ(events.size(), 6u);
  // Both updates of _id 1 show its current version; _id 2 is gone: null.
  EXPECT_EQ(ToJson(events[1].Get("fullDocument").Document()), R"({"_id": 1, "a": 3})");
  EXPECT_EQ(ToJson(events[2].Get("fullDocument").Document()), R"({"_id": 1, "a": 3})");
  EXPECT_TRUE(events[4].Get("fullDocument").IsNull());
  std::vector<std::string> keys;
  for (const Element& f : events[1]) keys.emplace_back(f.key());
  EXPECT_EQ(keys,
            (std::vector<std::string>{"_id", "operationType", "clusterTime", "wallTime",
                                      "fullDocument", "ns", "documentKey", "updateDescription"}));
  ChangeStreamOptions post;
  post.full_document = "sometimes";
  EXPECT_EQ(c.Watch({}, post).status().code(), ErrorCode::kBadValue);
  ChangeStreamOptions negative;
  negative.max_await_time_ms = -1;
  EXPECT_EQ(c.Watch({}, negative).status().code(), ErrorCode::kBadValue);
}

TEST_F(ChangeStreamTest, NextWaitsForACommitOnAnotherThread) {
  Collection c = db().GetCollection("c");
  ChangeStreamOptions patient;
  patient.max_await_time_ms = 60000;
  auto stream = c.Watch({}, patient);
  ASSERT_TRUE(stream.ok());
  std::thread writer([&] { ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 1})")).ok()); });
  // Next returns as soon as the event is published, well before the
  // minute; it cannot return empty-handed unless the wake-up is lost.
  std::optional<Document> got;
  while (!got) {
    auto e = stream->Next();
    ASSERT_TRUE(e.ok());
    got = std::move(*e);
  }
  writer.join();
  EXPECT_EQ(Op(*got), "insert");
}

// updateDescription, applied to the old version with rockdoc's update
// operators ($push with $slice for truncatedArrays, then $set and $unset),
// gives the new version: random documents, random changes.
TEST_F(ChangeStreamTest, UpdateDescriptionReappliedGivesTheNewDocument) {
  Collection c = db().GetCollection("c");
  Collection check = db().GetCollection("check");
  auto stream = c.Watch();
  ASSERT_TRUE(stream.ok());
  std::mt19937 rng(37);
  auto value = [&](int depth, auto&& self) -> std::string {
    switch (rng() % (depth > 2 ? 3 : 5)) {
      case 0:
        return std::to_string(rng() % 5);
      case 1:
        return "\"s" + std::to_string(rng() % 3) + "\"";
      case 2:
        return "null";
      case 3: {
        std::string s = "{";
        for (int i = 0, n = rng() % 4; i < n; ++i) {
          if (i) s += ", ";
          s += "\"f" + std::to_string(i) + "\": " + self(depth + 1, self);
        }
        return s + "}";
      }
      default: {
        std::string s = "[";
        for (int i = 0, n = rng() % 5; i < n; ++i) {
          if (i) s += ", ";
          s += self(depth + 1, self);
        }
        return s + "]";
      }
    }
  };
  for (int round = 0; round < 150; ++round) {
    std::string old_json = "{\"_id\": " + std::to_string(round);
    for (int i = 0; i < 4; ++i) old_json += ", \"f" + std::to_string(i) + "\": " + value(0, value);
    old_json += "}";
    // The new version: some fields rewritten, some dropped, some added.
    std::string new_json = "{\"_id\": " + std::to_string(round);
    for (int i = 0; i < 6; ++i) {
      const int what = rng() % 3;
      if (i >= 4 && what == 0) continue;
      if (what == 2 && i < 4) continue;  // dropped
      new_json += ", \"f" + std::to_string(i) + "\": " + value(0, value);
    }
    new_json += "}";
    Document old_doc = Json(old_json), new_doc = Json(new_json);
    ASSERT_TRUE(c.InsertOne(old_doc).ok());
    ASSERT_TRUE(c.ReplaceOne(Json("{\"_id\": " + std::to_string(round) + "}"), new_doc).ok());
    // A replacement is a replace event; an update of the same change gives
    // the description: run it as a pipeline-free $set of every field and
    // $unset of the rest.
    ASSERT_TRUE(c.DeleteOne(Json("{\"_id\": " + std::to_string(round) + "}")).ok());
    ASSERT_TRUE(c.InsertOne(old_doc).ok());
    BsonBuilder set, unset;
    for (const Element& f : new_doc) {
      if (f.key() != "_id") set.AppendElement(f);
    }
    for (const Element& f : old_doc) {
      if (!new_doc.Get(f.key()).ok()) unset.AppendInt32(f.key(), 1);
    }
    BsonBuilder update;
    Document set_doc = std::move(set).Build(), unset_doc = std::move(unset).Build();
    if (!set_doc.empty()) update.AppendDocument("$set", set_doc);
    if (!unset_doc.empty()) update.AppendDocument("$unset", unset_doc);
    Document update_doc = std::move(update).Build();
    if (update_doc.empty()) continue;
    ASSERT_TRUE(c.UpdateOne(Json("{\"_id\": " + std::to_string(round) + "}"), update_doc).ok());
    auto stored = c.FindOne(Json("{\"_id\": " + std::to_string(round) + "}"));
    ASSERT_TRUE(stored.ok() && *stored);
    // Events: insert, replace, delete, insert, and maybe the update.
    std::vector<Document> events = Drain(*stream);
    ASSERT_GE(events.size(), 4u);
    if (events.size() == 4) continue;  // nothing changed
    const Document& ev = events.back();
    ASSERT_EQ(Op(ev), "update");
    DocumentView desc = ev.Get("updateDescription").Document();
    ASSERT_TRUE(check.InsertOne(old_doc).ok());
    const Document key = Json("{\"_id\": " + std::to_string(round) + "}");
    BsonBuilder truncate;
    truncate.OpenDocument("$push");
    for (const Element& t : desc.Get("truncatedArrays").Array()) {
      DocumentView td = t.Document();
      truncate.OpenDocument(td.Get("field").String());
      truncate.AppendArray("$each", DocumentView());
      truncate.AppendInt32("$slice", td.Get("newSize").Int32());
      truncate.Close();
    }
    truncate.Close();
    Document truncate_doc = std::move(truncate).Build();
    if (!desc.Get("truncatedArrays").Array().empty()) {
      ASSERT_TRUE(check.UpdateOne(key, truncate_doc).ok()) << ToJson(truncate_doc);
    }
    BsonBuilder apply;
    if (!desc.Get("updatedFields").Document().empty()) {
      apply.AppendDocument("$set", desc.Get("updatedFields").Document());
    }
    if (!desc.Get("removedFields").Array().empty()) {
      apply.OpenDocument("$unset");
      for (const Element& r : desc.Get("removedFields").Array()) apply.AppendInt32(r.String(), 1);
      apply.Close();
    }
    Document apply_doc = std::move(apply).Build();
    if (!apply_doc.empty()) {
      auto applied = check.UpdateOne(key, apply_doc);
      ASSERT_TRUE(applied.ok()) << applied.status() << ToJson(apply_doc);
    }
    auto rebuilt = check.FindOne(key);
    ASSERT_TRUE(rebuilt.ok() && *rebuilt);
    EXPECT_EQ(ToJson(**rebuilt), ToJson(**stored))
        << "old " << old_json << "\ndescription " << ToJson(desc);
    ASSERT_TRUE(check.DeleteOne(key).ok());
  }
}

TEST_F(ChangeStreamTest, DropAndRenameEndACollectionsStreamWithInvalidate) {
  Collection c = db().GetCollection("c");
  ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 1})")).ok());
  auto coll_stream = c.Watch();
  auto db_stream = db().Watch();
  auto client_stream = client_->Watch();
  ASSERT_TRUE(coll_stream.ok() && db_stream.ok() && client_stream.ok());
  ASSERT_TRUE(db().DropCollection("c").ok());
  std::vector<Document> events = Drain(*coll_stream);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(Shape(events[0]), R"({"operationType": "drop", "ns": {"db": "test", "coll": "c"}})");
  EXPECT_EQ(Op(events[1]), "invalidate");
  EXPECT_EQ(events[1].Get("clusterTime").Timestamp(), events[0].Get("clusterTime").Timestamp());
  EXPECT_TRUE(coll_stream->closed());
  EXPECT_EQ(ToJson(coll_stream->resume_token()), ToJson(events[1].Get("_id").Document()));
  // Written again: the closed stream sees nothing; startAfter the
  // invalidate sees it, resumeAfter it is refused.
  ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 2})")).ok());
  EXPECT_TRUE(Drain(*coll_stream).empty());
  ChangeStreamOptions start_after;
  start_after.start_after = coll_stream->resume_token();
  auto again = c.Watch({}, start_after);
  ASSERT_TRUE(again.ok()) << again.status();
  events = Drain(*again);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(Op(events[0]), "insert");
  ChangeStreamOptions resume_after;
  resume_after.resume_after = coll_stream->resume_token();
  EXPECT_EQ(c.Watch({}, resume_after).status().code(), ErrorCode::kInvalidResumeToken);

  auto renamed_stream = c.Watch();
  ASSERT_TRUE(renamed_stream.ok());
  ASSERT_TRUE(db().RenameCollection("c", "d").ok());
  events = Drain(*renamed_stream);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(
      Shape(events[0]),
      R"({"operationType": "rename", "ns": {"db": "test", "coll": "c"}, "to": {"db": "test", "coll": "d"}})");
  EXPECT_EQ(Op(events[1]), "invalidate");

  ASSERT_TRUE(db().Drop().ok());
  std::vector<std::string> ops;
  for (const Document& e : Drain(*db_stream)) ops.push_back(Op(e));
  EXPECT_EQ(ops, (std::vector<std::string>{"drop", "insert", "rename", "drop", "dropDatabase",
                                           "invalidate"}));
  EXPECT_TRUE(db_stream->closed());
  ops.clear();
  for (const Document& e : Drain(*client_stream)) ops.push_back(Op(e));
  EXPECT_EQ(ops, (std::vector<std::string>{"drop", "insert", "rename", "drop", "dropDatabase"}));
  EXPECT_FALSE(client_stream->closed());
  // A database with nothing in it is not dropped: no event.
  ASSERT_TRUE(client_->GetDatabase("empty").Drop().ok());
  EXPECT_TRUE(Drain(*client_stream).empty());
}

// The aggregate command with $changeStream (what drivers' watch() sends):
// an awaitData cursor whose replies carry postBatchResumeToken, continued
// by getMore, ended by killCursors.
TEST_F(ChangeStreamTest, TheAggregateCommandOpensAStreamThatGetMoreContinues) {
  auto run = [&](std::string_view db, std::string_view json) {
    return client_->RunCommand(db, Json(json));
  };
  Document opened = run("test", R"({"aggregate": "c", "pipeline": [{"$changeStream": {}},
      {"$match": {"operationType": "insert"}}], "cursor": {}})");
  ASSERT_EQ(opened.Get("ok").NumberAsDouble(), 1) << ToJson(opened);
  DocumentView cursor = opened.Get("cursor").Document();
  EXPECT_TRUE(cursor.Get("firstBatch").Array().empty());
  EXPECT_TRUE(cursor.Get("postBatchResumeToken").Document().Get("_data").IsString());
  EXPECT_EQ(cursor.Get("ns").String(), "test.c");
  const int64_t id = cursor.Get("id").Int64();
  ASSERT_NE(id, 0);
  ASSERT_TRUE(db().GetCollection("c").InsertOne(Json(R"({"_id": 1})")).ok());
  ASSERT_TRUE(db().GetCollection("c").DeleteOne(Json(R"({"_id": 1})")).ok());
  const std::string get_more = "{\"getMore\": {\"$numberLong\": \"" + std::to_string(id) +
                               "\"}, \"collection\": \"c\", \"maxTimeMS\": 60000}";
  Document more = run("test", get_more);
  ASSERT_EQ(more.Get("ok").NumberAsDouble(), 1) << ToJson(more);
  DocumentView next = more.Get("cursor").Document();
  ASSERT_EQ(next.Get("nextBatch").Array().CountFields(), 1u);
  const Document event = Document::AdoptValidated(
      std::string((*next.Get("nextBatch").Array().begin()).Document().bytes()));
  EXPECT_EQ(Op(event), "insert");
  // Past the delete its $match dropped: the token stands after it.
  EXPECT_NE(ToJson(next.Get("postBatchResumeToken").Document()),
            ToJson(event.Get("_id").Document()));
  EXPECT_EQ(next.Get("id").Int64(), id);

  // A getMore waiting on another thread returns with the next insert.
  std::thread waiter([&] {
    Document got = run("test", get_more);
    EXPECT_EQ(got.Get("ok").NumberAsDouble(), 1) << ToJson(got);
    EXPECT_EQ(got.Get("cursor").Document().Get("nextBatch").Array().CountFields(), 1u);
  });
  ASSERT_TRUE(db().GetCollection("c").InsertOne(Json(R"({"_id": 2})")).ok());
  waiter.join();

  // killCursors ends a waiting getMore: Interrupted (11601).
  std::thread killed([&] {
    Document got = run("test", get_more);
    // The probe below held the cursor (CursorInUse, 96): again until this
    // getMore is the one that waits.
    while (got.Get("code").Int32() == 96) got = run("test", get_more);
    EXPECT_EQ(got.Get("code").Int32(), static_cast<int>(ErrorCode::kInterrupted)) << ToJson(got);
  });
  // Once another getMore finds the cursor in use (96), the waiter holds it:
  // a probe that gets there first waits 1 ms and puts it back (and the
  // waiter, finding it in use, tries again).
  const std::string probe = "{\"getMore\": {\"$numberLong\": \"" + std::to_string(id) +
                            "\"}, \"collection\": \"c\", \"maxTimeMS\": 1}";
  while (run("test", probe).Get("code").Int32() != 96) {
  }
  Document k = run("test", "{\"killCursors\": \"c\", \"cursors\": [{\"$numberLong\": \"" +
                               std::to_string(id) + "\"}]}");
  ASSERT_EQ(k.Get("ok").NumberAsDouble(), 1) << ToJson(k);
  EXPECT_EQ(k.Get("cursorsKilled").Array().CountFields(), 1u);
  killed.join();

  // Resume from a token through the command; the database and the cluster.
  Document resumed = run("test",
                         "{\"aggregate\": \"c\", \"pipeline\": [{\"$changeStream\": "
                         "{\"resumeAfter\": " +
                             ToJson(event.Get("_id").Document()) + "}}], \"cursor\": {}}");
  ASSERT_EQ(resumed.Get("ok").NumberAsDouble(), 1) << ToJson(resumed);
  EXPECT_EQ(resumed.Get("cursor").Document().Get("firstBatch").Array().CountFields(), 2u);
  Document whole_db =
      run("test", R"({"aggregate": 1, "pipeline": [{"$changeStream": {}}], "cursor": {}})");
  EXPECT_EQ(whole_db.Get("cursor").Document().Get("ns").String(), "test.$cmd.aggregate");
  Document cluster = run(
      "admin",
      R"({"aggregate": 1, "pipeline": [{"$changeStream": {"allChangesForCluster": true}}], "cursor": {}})");
  EXPECT_EQ(cluster.Get("ok").NumberAsDouble(), 1) << ToJson(cluster);
  EXPECT_EQ(run("admin", R"({"aggregate": 1, "pipeline": [{"$changeStream": {}}], "cursor": {}})")
                .Get("code")
                .Int32(),
            73);
  EXPECT_EQ(
      run("test",
          R"({"aggregate": 1, "pipeline": [{"$changeStream": {"allChangesForCluster": true}}], "cursor": {}})")
          .Get("code")
          .Int32(),
      static_cast<int>(ErrorCode::kInvalidOptions));
  EXPECT_EQ(
      run("test",
          R"({"aggregate": "c", "pipeline": [{"$changeStream": {"bogus": 1}}], "cursor": {}})")
          .Get("code")
          .Int32(),
      40415);
  EXPECT_EQ(
      run("test",
          R"({"aggregate": "c", "pipeline": [{"$changeStream": {}}, {"$group": {"_id": 1}}], "cursor": {}})")
          .Get("code")
          .Int32(),
      static_cast<int>(ErrorCode::kIllegalOperation));
  EXPECT_EQ(
      run("test",
          R"({"aggregate": "c", "pipeline": [{"$match": {}}, {"$changeStream": {}}], "cursor": {}})")
          .Get("code")
          .Int32(),
      40602);
}

}  // namespace
}  // namespace rockdoc

namespace rockdoc {
namespace {

// Pre- and post-images (MongoDB 6.0's changeStreamPreAndPostImages): a
// collection with the option on records, with each update, replace and
// delete event, the document before (and an update's after); streams show
// them as fullDocumentBeforeChange and fullDocument "whenAvailable" /
// "required", null where the collection kept none.
class ChangeStreamImagesTest : public ChangeStreamTest {
 protected:
  static ChangeStreamOptions Images(std::string_view mode) {
    ChangeStreamOptions o;
    o.full_document = std::string(mode);
    o.full_document_before_change = std::string(mode);
    return o;
  }
  Status SetImages(std::string_view coll, bool on) {
    CollModOptions mod;
    mod.change_stream_pre_and_post_images = on;
    return db().CollMod(coll, mod).status();
  }
  // The fields a document event carries, images shown in JSON.
  static std::string ImagesOf(const Document& e) {
    std::string out = Op(e);
    for (const char* f : {"fullDocument", "fullDocumentBeforeChange"}) {
      Element v = e.Get(f);
      out += std::string(" ") + f + "=" +
             (!v.ok()      ? "absent"
              : v.IsNull() ? "null"
                           : ToJson(v.Document()));
    }
    return out;
  }
};

TEST_F(ChangeStreamImagesTest, EventsCarryImagesOnlyForCollectionsThatKeepThem) {
  CreateCollectionOptions with;
  with.change_stream_pre_and_post_images = true;
  ASSERT_TRUE(db().CreateCollection("kept", with).ok());
  auto stream = db().Watch({}, Images("whenAvailable"));
  ASSERT_TRUE(stream.ok()) << stream.status();
  for (const char* name : {"kept", "plain"}) {
    Collection c = db().GetCollection(name);
    ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 1, "a": 1})")).ok());
    ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$inc": {"a": 1}})")).ok());
    ASSERT_TRUE(c.ReplaceOne(Json(R"({"_id": 1})"), Json(R"({"b": 1})")).ok());
    ASSERT_TRUE(c.DeleteOne(Json(R"({"_id": 1})")).ok());
  }
  std::vector<Document> events = Drain(*stream);
  std::vector<std::string> seen;
  for (const Document& e : events) seen.push_back(ImagesOf(e));
  EXPECT_EQ(
      seen,
      (std::vector<std::string>{
          R"(insert fullDocument={"_id": 1, "a": 1} fullDocumentBeforeChange=absent)",
          R"(update fullDocument={"_id": 1, "a": 2} fullDocumentBeforeChange={"_id": 1, "a": 1})",
          R"(replace fullDocument={"_id": 1, "b": 1} fullDocumentBeforeChange={"_id": 1, "a": 2})",
          R"(delete fullDocument=absent fullDocumentBeforeChange={"_id": 1, "b": 1})",
          R"(insert fullDocument={"_id": 1, "a": 1} fullDocumentBeforeChange=absent)",
          "update fullDocument=null fullDocumentBeforeChange=null",
          R"(replace fullDocument={"_id": 1, "b": 1} fullDocumentBeforeChange=null)",
          "delete fullDocument=absent fullDocumentBeforeChange=null",
      }));
  // "off" and "default": no image field at all, as before.
  auto plain = db().Watch({}, ChangeStreamOptions());
  ASSERT_TRUE(plain.ok());
  ASSERT_TRUE(db().GetCollection("kept").InsertOne(Json(R"({"_id": 2})")).ok());
  ASSERT_TRUE(db().GetCollection("kept").DeleteOne(Json(R"({"_id": 2})")).ok());
  std::vector<Document> quiet = Drain(*plain);
  ASSERT_EQ(quiet.size(), 2u);
  EXPECT_EQ(
      Shape(quiet[1]),
      R"({"operationType": "delete", "ns": {"db": "test", "coll": "kept"}, "documentKey": {"_id": 2}})");
}

// A transaction's statements record their images as any write does, in the
// transaction's own batch; an aborted one leaves none.
TEST_F(ChangeStreamImagesTest, ATransactionsWritesCarryTheirImages) {
  CreateCollectionOptions with;
  with.change_stream_pre_and_post_images = true;
  ASSERT_TRUE(db().CreateCollection("c", with).ok());
  ASSERT_TRUE(db().GetCollection("c").InsertOne(Json(R"({"_id": 1, "n": 1})")).ok());
  auto stream = db().GetCollection("c").Watch({}, Images("required"));
  ASSERT_TRUE(stream.ok());
  auto session = client_->StartSession();
  ASSERT_TRUE(session.ok());
  for (bool commit : {false, true}) {
    ASSERT_TRUE(session->StartTransaction().ok());
    Collection c = session->GetDatabase("test").GetCollection("c");
    ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$inc": {"n": 1}})")).ok());
    ASSERT_TRUE(c.DeleteOne(Json(R"({"_id": 1})")).ok());
    ASSERT_TRUE((commit ? session->CommitTransaction() : session->AbortTransaction()).ok());
  }
  std::vector<Document> events = Drain(*stream);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(
      ImagesOf(events[0]),
      R"(update fullDocument={"_id": 1, "n": 2} fullDocumentBeforeChange={"_id": 1, "n": 1})");
  EXPECT_EQ(ImagesOf(events[1]),
            R"(delete fullDocument=absent fullDocumentBeforeChange={"_id": 1, "n": 2})");
  EXPECT_TRUE(events[1].Get("lsid").IsDocument());
}

TEST_F(ChangeStreamImagesTest, RequiredWithoutAnImageIsNoMatchingDocumentAndEndsTheStream) {
  Collection c = db().GetCollection("c");
  ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 1})")).ok());
  for (const char* which : {"pre", "post"}) {
    ChangeStreamOptions o;
    if (std::string_view(which) == "pre") {
      o.full_document_before_change = "required";
    } else {
      o.full_document = "required";
    }
    auto stream = c.Watch({}, o);
    ASSERT_TRUE(stream.ok());
    ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$inc": {"n": 1}})")).ok());
    auto next = stream->TryNext();
    ASSERT_FALSE(next.ok()) << which;
    EXPECT_EQ(next.status().code(), ErrorCode::kNoMatchingDocument);
    EXPECT_EQ(next.status().message().rfind(
                  std::string("Change stream was configured to require a ") + which +
                      "-image for all update, delete and replace "
                      "events, but the " +
                      which + "-image was not found for event: ",
                  0),
              0u)
        << next.status();
    EXPECT_TRUE(stream->closed());
  }
  // With the images kept, required gives them.
  ASSERT_TRUE(SetImages("c", true).ok());
  auto stream = c.Watch({}, Images("required"));
  ASSERT_TRUE(stream.ok());
  ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$set": {"n": 9}})")).ok());
  std::vector<Document> events = Drain(*stream);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(
      ImagesOf(events[0]),
      R"(update fullDocument={"_id": 1, "n": 9} fullDocumentBeforeChange={"_id": 1, "n": 2})");
  ChangeStreamOptions bad;
  bad.full_document_before_change = "sometimes";
  EXPECT_EQ(c.Watch({}, bad).status().code(), ErrorCode::kBadValue);
}

TEST_F(ChangeStreamImagesTest, CollModTurnsThemOnAndOffFromTheNextWriteAndTheCatalogKeepsIt) {
  Collection c = db().GetCollection("c");
  ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 1, "n": 0})")).ok());
  auto stream = c.Watch({}, Images("whenAvailable"));
  ASSERT_TRUE(stream.ok());
  auto options_of = [&]() {
    auto infos = db().ListCollections();
    EXPECT_TRUE(infos.ok());
    for (const auto& info : *infos) {
      if (info.name == "c") return ToJson(info.options);
    }
    return std::string("missing");
  };
  EXPECT_EQ(options_of(), "{}");
  ASSERT_TRUE(SetImages("c", true).ok());
  EXPECT_EQ(options_of(), R"({"changeStreamPreAndPostImages": {"enabled": true}})");
  ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$inc": {"n": 1}})")).ok());
  ASSERT_TRUE(SetImages("c", false).ok());
  EXPECT_EQ(options_of(), "{}");
  ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$inc": {"n": 1}})")).ok());
  std::vector<Document> events = Drain(*stream);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(
      ImagesOf(events[0]),
      R"(update fullDocument={"_id": 1, "n": 1} fullDocumentBeforeChange={"_id": 1, "n": 0})");
  EXPECT_EQ(ImagesOf(events[1]), "update fullDocument=null fullDocumentBeforeChange=null");
  // Persisted: after a restart the collection still keeps them, and the
  // events written before it still hold theirs.
  ASSERT_TRUE(SetImages("c", true).ok());
  Open();
  EXPECT_EQ(options_of(), R"({"changeStreamPreAndPostImages": {"enabled": true}})");
  ChangeStreamOptions resume = Images("whenAvailable");
  resume.start_at_operation_time = events[0].Get("clusterTime").Timestamp();
  auto again = db().GetCollection("c").Watch({}, resume);
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE(db().GetCollection("c").DeleteOne(Json(R"({"_id": 1})")).ok());
  std::vector<Document> replayed = Drain(*again);
  ASSERT_EQ(replayed.size(), 3u);
  EXPECT_EQ(ImagesOf(replayed[0]), ImagesOf(events[0]));
  EXPECT_EQ(ImagesOf(replayed[2]),
            R"(delete fullDocument=absent fullDocumentBeforeChange={"_id": 1, "n": 2})");
}

TEST_F(ChangeStreamImagesTest, TheOptionIsDecodedStrictlyAsMongoDBsIdl) {
  auto error = [&](std::string_view json) {
    Document reply = client_->RunCommand("test", Json(json));
    return std::to_string(static_cast<int64_t>(reply.Get("code").NumberAsDouble())) + " " +
           std::string(reply.Get("errmsg").String());
  };
  EXPECT_EQ(error(R"({"create": "x", "changeStreamPreAndPostImages": true})"),
            "14 BSON field 'create.changeStreamPreAndPostImages' is the wrong type 'bool', "
            "expected type 'object'");
  EXPECT_EQ(error(R"({"create": "x", "changeStreamPreAndPostImages": {}})"),
            "40414 BSON field 'create.changeStreamPreAndPostImages.enabled' is missing but a "
            "required field");
  EXPECT_EQ(error(R"({"create": "x", "changeStreamPreAndPostImages": {"enabled": 1}})"),
            "14 BSON field 'create.changeStreamPreAndPostImages.enabled' is the wrong type 'int', "
            "expected type 'bool'");
  EXPECT_EQ(error(R"({"create": "x", "changeStreamPreAndPostImages": {"enabled": true, "x": 1}})"),
            "40415 BSON field 'create.changeStreamPreAndPostImages.x' is an unknown field.");
  EXPECT_EQ(
      error(R"({"create": "v", "viewOn": "x", "changeStreamPreAndPostImages": {"enabled": true}})")
          .substr(0, 3),
      "72 ");
  ASSERT_TRUE(db().CreateCollection("y").ok());
  EXPECT_EQ(error(R"({"collMod": "y", "changeStreamPreAndPostImages": {"enabled": true, "x": 1}})"),
            "40415 BSON field 'collMod.changeStreamPreAndPostImages.x' is an unknown field.");
  // Not in MongoDB's own databases, nor on a view: InvalidOptions (72).
  for (const char* internal : {"admin", "config", "local"}) {
    Document refused = client_->RunCommand(
        internal, Json(R"({"create": "z", "changeStreamPreAndPostImages": {"enabled": true}})"));
    EXPECT_EQ(refused.Get("code").NumberAsDouble(), 72) << internal << ToJson(refused);
    CollModOptions on;
    on.change_stream_pre_and_post_images = true;
    ASSERT_TRUE(client_->GetDatabase(internal).CreateCollection("z").ok());
    EXPECT_EQ(client_->GetDatabase(internal).CollMod("z", on).status().code(),
              ErrorCode::kInvalidOptions);
  }
  CreateCollectionOptions view;
  view.view_on = "y";
  ASSERT_TRUE(db().CreateCollection("w", view).ok());
  EXPECT_EQ(
      error(R"({"collMod": "w", "changeStreamPreAndPostImages": {"enabled": true}})").substr(0, 3),
      "72 ");
  auto names = db().ListCollectionNames();
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"w", "y"}));  // nothing half-created
}

// showExpandedEvents: the DDL events (create, createIndexes, dropIndexes,
// modify) and the expanded fields, each written with its catalog change;
// a stream without it sees none of them.
TEST_F(ChangeStreamTest, ExpandedEventsAppearOnlyWhenAsked) {
  ChangeStreamOptions expanded;
  expanded.show_expanded_events = true;
  auto full = db().Watch({}, expanded);
  auto plain = db().Watch();
  ASSERT_TRUE(full.ok() && plain.ok());
  Collection c = db().GetCollection("c");
  ASSERT_TRUE(db().CreateCollection("c").ok());
  ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 1})")).ok());
  ASSERT_TRUE(c.CreateIndex(Json(R"({"x": 1})")).ok());
  ASSERT_TRUE(c.DropIndex("x_1").ok());
  CollModOptions mod;
  mod.change_stream_pre_and_post_images = true;
  ASSERT_TRUE(db().CollMod("c", mod).ok());
  ASSERT_TRUE(db().CollMod("c", CollModOptions()).ok());  // a modify event too
  ASSERT_TRUE(db().CreateCollection("d").ok());
  ASSERT_TRUE(db().RenameCollection("c", "d", /*drop_target=*/true).ok());
  CreateCollectionOptions view;
  view.view_on = "d";
  ASSERT_TRUE(db().CreateCollection("v", view).ok());
  CollModOptions redefine;
  redefine.view_on = "d";
  redefine.pipeline = Json(R"({"0": {"$match": {"a": 1}}})");  // an array's bytes
  ASSERT_TRUE(db().CollMod("v", redefine).ok());

  std::vector<Document> events = Drain(*full);
  std::vector<std::string> ops;
  for (const Document& e : events)
    ops.push_back(Op(e) + " " + std::string(e.Get("ns").Document().Get("coll").String()));
  EXPECT_EQ(ops, (std::vector<std::string>{"create c", "insert c", "createIndexes c",
                                           "dropIndexes c", "modify c", "modify c", "create d",
                                           "drop d", "rename c", "create v", "modify v"}));
  std::vector<std::string> plain_ops;
  for (const Document& e : Drain(*plain)) {
    plain_ops.push_back(Op(e));
    for (const char* f : {"collectionUUID", "operationDescription", "stateBeforeChange"}) {
      EXPECT_FALSE(e.Get(f).ok()) << f << " in " << ToJson(e);
    }
  }
  EXPECT_EQ(plain_ops, (std::vector<std::string>{"insert", "drop", "rename"}));

  ASSERT_EQ(events.size(), 11u);
  auto description = [&](size_t i) {
    return ToJson(events[i].Get("operationDescription").Document());
  };
  EXPECT_EQ(description(0), R"({"idIndex": {"v": 2, "key": {"_id": 1}, "name": "_id_"}})");
  EXPECT_EQ(description(2), R"({"indexes": [{"v": 2, "key": {"x": 1}, "name": "x_1"}]})");
  EXPECT_EQ(description(3), R"({"indexes": [{"v": 2, "key": {"x": 1}, "name": "x_1"}]})");
  EXPECT_EQ(description(4), R"({"changeStreamPreAndPostImages": {"enabled": true}})");
  EXPECT_EQ(description(5), "{}");
  EXPECT_EQ(ToJson(events[5]
                       .Get("stateBeforeChange")
                       .Document()
                       .Get("collectionOptions")
                       .Document()
                       .Get("changeStreamPreAndPostImages")
                       .Document()),
            R"({"enabled": true})");
  EXPECT_EQ(description(9), R"({"viewOn": "d", "pipeline": []})");
  EXPECT_FALSE(events[9].Get("collectionUUID").ok());  // a view has none
  EXPECT_EQ(description(10), R"({"viewOn": "d", "pipeline": [{"$match": {"a": 1}}]})");
  EXPECT_EQ(ToJson(events[10].Get("stateBeforeChange").Document()),
            R"({"collectionOptions": {"viewOn": "d", "pipeline": []}})");
  // The rename: `to` as before, and in its description with the UUID of
  // the collection it replaced.
  const Document& rename = events[8];
  EXPECT_EQ(ToJson(rename.Get("to").Document()), R"({"db": "test", "coll": "d"})");
  DocumentView rd = rename.Get("operationDescription").Document();
  EXPECT_EQ(ToJson(rd.Get("to").Document()), R"({"db": "test", "coll": "d"})");
  EXPECT_EQ(rd.Get("dropTarget").Binary().data, events[7].Get("collectionUUID").Binary().data);
  for (size_t i : {0, 1, 2, 3, 4, 8}) {
    EXPECT_EQ(events[i].Get("collectionUUID").Binary().data,
              events[0].Get("collectionUUID").Binary().data)
        << i;
  }
}

// disambiguatedPaths (MongoDB 6.1): under showExpandedEvents, for each
// changed path that a dotted path leaves ambiguous (a field named like an
// array index, or holding a dot), its parts, array indexes as integers;
// {} when none is.
TEST_F(ChangeStreamTest, DisambiguatedPathsNameEachPartOfAnAmbiguousPath) {
  Collection c = db().GetCollection("c");
  ASSERT_TRUE(c.InsertOne(Json(R"({"_id": 1, "a": {"1": 1}, "arr": [{"1": 1}, 5], "p": 1})")).ok());
  ChangeStreamOptions expanded;
  expanded.show_expanded_events = true;
  auto full = c.Watch({}, expanded);
  auto plain = c.Watch();
  ASSERT_TRUE(full.ok() && plain.ok());
  ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 1})"),
                          Json(R"({"$set": {"a.1": 2, "arr.0.1": 2, "arr.1": 6, "p": 2}})"))
                  .ok());
  ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$unset": {"a.1": 1}})")).ok());
  ASSERT_TRUE(c.UpdateOne(Json(R"({"_id": 1})"), Json(R"({"$set": {"p": 3}})")).ok());
  std::vector<Document> events = Drain(*full);
  ASSERT_EQ(events.size(), 3u);
  auto paths = [&](size_t i) {
    return ToJson(
        events[i].Get("updateDescription").Document().Get("disambiguatedPaths").Document());
  };
  EXPECT_EQ(paths(0), R"({"a.1": ["a", "1"], "arr.0.1": ["arr", 0, "1"]})");
  EXPECT_EQ(paths(1), R"({"a.1": ["a", "1"]})");
  EXPECT_EQ(paths(2), "{}");
  EXPECT_TRUE(events[0]
                  .Get("updateDescription")
                  .Document()
                  .Get("disambiguatedPaths")
                  .Document()
                  .Get("arr.0.1")
                  .Array()
                  .Get("1")
                  .IsInt32());
  for (const Document& e : Drain(*plain)) {
    EXPECT_FALSE(e.Get("updateDescription").Document().Get("disambiguatedPaths").ok()) << ToJson(e);
  }
}

}  // namespace
}  // namespace rockdoc
