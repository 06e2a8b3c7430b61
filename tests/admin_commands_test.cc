// The commands admin tools call (issue 39), in process (Client::RunCommand):
// currentOp and $currentOp list the commands in flight, killOp ends one
// through maxTimeMS's interrupt points with Interrupted (11601), serverStatus'
// sections, top, getLog, connectionStatus, getParameter / setParameter and
// listCommands derived from the command table.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "common/deadline.h"
#include "rockdoc/client.h"
#include "rockdoc/json.h"
#include "test_util.h"

namespace rockdoc {
namespace {

using test::Json;
using ::testing::HasSubstr;

class AdminCommandsTest : public test::ClientTest {
 protected:
  Document Run(std::string_view json, std::string_view db = "admin") {
    return client_->RunCommand(db, Json(json));
  }
  Document Ok(std::string_view json, std::string_view db = "admin") {
    Document r = Run(json, db);
    EXPECT_EQ(r.Get("ok").NumberAsDouble(), 1.0) << json << " -> " << ToJson(r);
    return r;
  }
  // "<code>: <errmsg>" of a command that must fail.
  std::string Error(std::string_view json, std::string_view db = "admin") {
    Document r = Run(json, db);
    EXPECT_EQ(r.Get("ok").NumberAsDouble(), 0.0) << json << " -> " << ToJson(r);
    return std::to_string(r.Get("code").Int32()) + ": " + std::string(r.Get("errmsg").String());
  }
  int64_t Counter(std::string_view name) {
    return Ok(R"({"serverStatus": 1})").Get("opcounters").Document().Get(name).Int64();
  }
};

TEST_F(AdminCommandsTest, OpcountersCountDocumentsStatementsAndCommands) {
  const int64_t insert = Counter("insert"), query = Counter("query"), update = Counter("update"),
                remove = Counter("delete"), getmore = Counter("getmore"),
                command = Counter("command");
  Ok(R"({"insert": "c", "documents": [{"_id": 1}, {"_id": 2}, {"_id": 3}]})", "test");
  Document found = Ok(R"({"find": "c", "batchSize": 1})", "test");
  const int64_t id = found.Get("cursor").Document().Get("id").Int64();
  Ok(R"({"getMore": )" + std::to_string(id) + R"(, "collection": "c"})", "test");
  Ok(R"({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"x": 1}}},
                                    {"q": {"_id": 2}, "u": {"$set": {"x": 1}}}]})",
     "test");
  Ok(R"({"delete": "c", "deletes": [{"q": {"_id": 3}, "limit": 1}]})", "test");
  Ok(R"({"count": "c"})", "test");
  EXPECT_EQ(Counter("insert") - insert, 3);
  EXPECT_EQ(Counter("query") - query, 1);
  EXPECT_EQ(Counter("update") - update, 2);
  EXPECT_EQ(Counter("delete") - remove, 1);
  EXPECT_EQ(Counter("getmore") - getmore, 1);
  // count, and the six serverStatus calls above (the last one is running).
  EXPECT_EQ(Counter("command") - command, 1 + 6);
}

TEST_F(AdminCommandsTest, ServerStatusHasTheSectionsToolsRead) {
  Document s = Ok(R"({"serverStatus": 1})");
  for (const char* section : {"host", "version", "process", "pid", "uptime", "uptimeMillis",
                              "uptimeEstimate", "localTime", "connections", "opcounters", "mem",
                              "globalLock", "network", "rocksdb", "storageEngine",
                              "logicalSessionRecordCache"}) {
    EXPECT_TRUE(s.Get(section).ok()) << section;
  }
  // In process: no connections, and this command is the one active client.
  EXPECT_EQ(s.Get("connections").Document().Get("current").NumberAsDouble(), 0);
  const DocumentView active = s.Get("globalLock").Document().Get("activeClients").Document();
  EXPECT_EQ(active.Get("total").NumberAsDouble(), 1);
  EXPECT_EQ(active.Get("readers").NumberAsDouble(), 1);
  const DocumentView mem = s.Get("mem").Document();
  EXPECT_EQ(mem.Get("bits").Int32(), 64);
  EXPECT_GT(mem.Get("resident").NumberAsDouble(), 0);
  EXPECT_GE(mem.Get("virtual").NumberAsDouble(), mem.Get("resident").NumberAsDouble());
  EXPECT_TRUE(s.Get("rocksdb").Document().Get("recordCache").IsDocument());
  // A section switched off is left out, as mongod's; one rockdoc lacks adds nothing.
  Document some = Ok(R"({"serverStatus": 1, "mem": 0, "connections": false, "repl": 1})");
  EXPECT_FALSE(some.Get("mem").ok());
  EXPECT_FALSE(some.Get("connections").ok());
  EXPECT_FALSE(some.Get("repl").ok());
  EXPECT_TRUE(some.Get("opcounters").ok());
  EXPECT_THAT(Error(R"({"serverStatus": 1, "mem": "x"})"), HasSubstr("14: "));
}

TEST_F(AdminCommandsTest, RecordCacheCountersShowItsHits) {
  Ok(R"({"insert": "c", "documents": [{"_id": 1}]})", "test");
  const Document before = Ok(R"({"serverStatus": 1})");  // the views below point into it
  const DocumentView cache0 = before.Get("rocksdb").Document().Get("recordCache").Document();
  if (!cache0.Get("enabled").Bool()) GTEST_SKIP() << "the record cache is off in these options";
  const int64_t hits = cache0.Get("hits").Int64(), misses = cache0.Get("misses").Int64();
  for (int i = 0; i < 3; ++i) Ok(R"({"find": "c", "filter": {"_id": 1}})", "test");
  Document after = Ok(R"({"serverStatus": 1})");
  const DocumentView cache = after.Get("rocksdb").Document().Get("recordCache").Document();
  // Three point reads of one _id: the cache answered some, missed at most one.
  EXPECT_EQ(cache.Get("hits").Int64() + cache.Get("misses").Int64() - hits - misses, 3);
  EXPECT_GE(cache.Get("hits").Int64() - hits, 2);
}

TEST_F(AdminCommandsTest, CurrentOpListsItselfInProcess) {
  Document r = Ok(R"({"currentOp": 1})");
  std::vector<Document> ops;
  for (Element op : r.Get("inprog").Array()) {
    ops.emplace_back(Document::AdoptValidated(std::string(op.Document().bytes())));
  }
  ASSERT_EQ(ops.size(), 1u) << ToJson(r);
  EXPECT_EQ(ops[0].Get("desc").String(), "rockdoc");
  EXPECT_FALSE(ops[0].Get("connectionId").ok());
  EXPECT_EQ(ops[0].Get("op").String(), "command");
  EXPECT_EQ(ops[0].Get("ns").String(), "admin.$cmd");
  EXPECT_EQ(ops[0].Get("command").Document().Get("currentOp").Int32(), 1);
  EXPECT_TRUE(ops[0].Get("active").Bool());
  // The other fields are a filter; $all is idle connections, which rockdoc does not list.
  EXPECT_EQ(Ok(R"({"currentOp": 1, "op": "query"})").Get("inprog").Array().empty(), true);
  EXPECT_THAT(Error(R"({"currentOp": 1, "$all": true})"), HasSubstr("238: "));
  EXPECT_EQ(Ok(R"({"currentOp": 1, "$ownOps": true})").Get("inprog").Array().empty(), false);
  EXPECT_THAT(Error(R"({"currentOp": 1})", "test"), HasSubstr("13: "));
  // The stage: in admin with {aggregate: 1} only, its options from a table.
  Document staged = Ok(R"({"aggregate": 1, "pipeline": [{"$currentOp": {"allUsers": true}},
                           {"$project": {"_id": 0, "ns": 1}}], "cursor": {}})");
  EXPECT_EQ(ToJson(staged.Get("cursor").Document().Get("firstBatch").Array()),
            R"({"0": {"ns": "admin.$cmd.aggregate"}})");
  EXPECT_EQ(Error(R"({"aggregate": 1, "pipeline": [{"$currentOp": {"nope": true}}], "cursor": {}})"),
            "9: Unrecognized option 'nope' in $currentOp stage.");
  EXPECT_EQ(Error(R"({"aggregate": 1, "pipeline": [{"$currentOp": {"localOps": 1}}], "cursor": {}})"),
            "9: The 'localOps' parameter of the $currentOp stage must be a boolean value, but "
            "found: int");
  EXPECT_EQ(Error(R"({"aggregate": 1, "pipeline": [{"$currentOp": {}}], "cursor": {}})", "test"),
            "73: $currentOp must be run against the 'admin' database with {aggregate: 1}");
  EXPECT_EQ(Error(R"({"aggregate": "c", "pipeline": [{"$currentOp": {}}], "cursor": {}})", "admin"),
            "73: $currentOp must be run against the 'admin' database with {aggregate: 1}");
  EXPECT_EQ(Error(R"({"aggregate": "c", "pipeline": [{"$match": {}}, {"$currentOp": {}}], "cursor": {}})"),
            "40602: $currentOp is only valid as the first stage in a pipeline");
}

// A command over 1 KB shows as MongoDB's {$truncated, comment} in the
// currentOp command (and with truncateOps); $currentOp shows it whole up to
// 16 KB, what an operation keeps of its command.
TEST_F(AdminCommandsTest, CurrentOpTruncatesLargeCommands) {
  const std::string big(2000, 'x');
  Document r = Ok(R"({"currentOp": 1, "comment": "mine", "x": {"$ne": ")" + big + R"("}})");
  const DocumentView command =
      (*r.Get("inprog").Array().begin()).Document().Get("command").Document();
  EXPECT_EQ(command.Get("comment").String(), "mine");
  EXPECT_THAT(std::string(command.Get("$truncated").String()),
              ::testing::StartsWith(R"({"currentOp": 1, "comment": "mine"})"));
  auto staged = [&](const std::string& text, bool truncate) {
    Document reply = Ok(R"({"aggregate": 1, "cursor": {}, "pipeline": [{"$currentOp": {"truncateOps": )" +
                        std::string(truncate ? "true" : "false") + R"(}},
                        {"$match": {"x": {"$ne": ")" + text + R"("}}}]})");
    const DocumentView first = reply.Get("cursor").Document().Get("firstBatch").Document();
    return Document::AdoptValidated(
        std::string((*first.begin()).Document().Get("command").Document().bytes()));
  };
  EXPECT_TRUE(staged(big, false).Get("pipeline").ok());
  EXPECT_TRUE(staged(big, true).Get("$truncated").ok());
  EXPECT_TRUE(staged(std::string(20000, 'y'), false).Get("$truncated").ok());
}

// killOp of a getMore that waits for writes (an awaitData cursor on a
// capped collection, waiting up to 10 minutes): the test waits for the
// operation to show in currentOp (the event), kills it, and the getMore
// fails with Interrupted; its cursor is gone.
TEST_F(AdminCommandsTest, KillOpEndsAWaitingGetMore) {
  Ok(R"({"create": "capped", "capped": true, "size": 100000})", "test");
  Ok(R"({"insert": "capped", "documents": [{"_id": 1}]})", "test");
  Document found = Ok(R"({"find": "capped", "tailable": true, "awaitData": true})", "test");
  const int64_t id = found.Get("cursor").Document().Get("id").Int64();
  ASSERT_NE(id, 0);
  Document get_more_reply;
  std::thread waiter([&] {
    get_more_reply = Run(R"({"getMore": )" + std::to_string(id) +
                             R"(, "collection": "capped", "maxTimeMS": 600000})",
                         "test");
  });
  int32_t opid = 0;
  for (int i = 0; opid == 0 && i < 60000; ++i) {
    Document ops = Ok(R"({"currentOp": 1, "op": "getmore"})");
    for (Element op : ops.Get("inprog").Array()) opid = op.Document().Get("opid").Int32();
    if (opid == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_NE(opid, 0) << "the getMore never showed in currentOp";
  Document killed = Ok(R"({"killOp": 1, "op": )" + std::to_string(opid) + "}");
  EXPECT_EQ(killed.Get("info").String(), "attempting to kill op");
  waiter.join();
  EXPECT_EQ(get_more_reply.Get("code").Int32(), 11601) << ToJson(get_more_reply);
  EXPECT_EQ(get_more_reply.Get("codeName").String(), "Interrupted");
  EXPECT_THAT(Error(R"({"getMore": )" + std::to_string(id) + R"(, "collection": "capped"})", "test"),
              HasSubstr("43: "));
  EXPECT_THAT(Error(R"({"killOp": 1})"), HasSubstr("9: BSON field 'killOp.op' is missing"));
  EXPECT_THAT(Error(R"({"killOp": 1, "op": "x"})"), HasSubstr("14: "));
  EXPECT_THAT(Error(R"({"killOp": 1, "op": 1, "bogus": 1})"), HasSubstr("40415: "));
}

// The interrupt flag killOp sets is read at maxTimeMS's interrupt points:
// a scan, a write loop and a pipeline on a thread whose operation is
// killed fail with Interrupted, without any time limit set.
TEST_F(AdminCommandsTest, AKilledOperationStopsAtTheInterruptPoints) {
  std::string docs;
  for (int i = 0; i < 2000; ++i) docs += (i ? ", " : "") + std::string(R"({"a": )") + std::to_string(i) + "}";
  Ok(R"({"insert": "c", "documents": [)" + docs + "]}", "test");
  std::atomic<bool> killed{true};
  internal::InterruptScope scope(&killed);
  EXPECT_EQ(internal::Deadline().Check().code(), ErrorCode::kInterrupted);
  Collection c = db().GetCollection("c");
  auto cursor = c.Find(Json(R"({"a": {"$gte": 0}})"));
  ASSERT_TRUE(cursor.ok());
  while (cursor->Next()) {
  }
  EXPECT_EQ(cursor->status().code(), ErrorCode::kInterrupted);
  EXPECT_EQ(c.UpdateMany(Json("{}"), Json(R"({"$set": {"b": 1}})")).status().code(),
            ErrorCode::kInterrupted);
  const Document pipeline = Json(R"({"p": [{"$group": {"_id": "$a"}}]})");
  auto agg = c.Aggregate(pipeline.Get("p").Array());
  if (agg.ok()) {
    while (agg->Next()) {
    }
    EXPECT_EQ(agg->status().code(), ErrorCode::kInterrupted);
  } else {
    EXPECT_EQ(agg.status().code(), ErrorCode::kInterrupted);
  }
  killed = false;  // the same thread, no longer killed: the scan runs to its end
  auto again = c.Find(Json("{}"));
  int n = 0;
  while (again->Next()) ++n;
  EXPECT_TRUE(again->status().ok());
  EXPECT_EQ(n, 2000);
}

TEST_F(AdminCommandsTest, TopTimesAndCountsPerNamespace) {
  Ok(R"({"insert": "t", "documents": [{"_id": 1}, {"_id": 2}]})", "test");
  Ok(R"({"find": "t"})", "test");
  Ok(R"({"find": "t", "filter": {"_id": 2}})", "test");
  Ok(R"({"count": "t"})", "test");
  Document top = Ok(R"({"top": 1})");
  const DocumentView totals = top.Get("totals").Document();
  EXPECT_EQ(totals.Get("note").String(), "all times in microseconds");
  const DocumentView t = totals.Get("test.t").Document();
  auto count = [&](const char* column) { return t.Get(column).Document().Get("count").Int64(); };
  EXPECT_EQ(count("insert"), 1);
  EXPECT_EQ(count("queries"), 2);
  EXPECT_EQ(count("commands"), 1);
  EXPECT_EQ(count("writeLock"), 1);
  EXPECT_EQ(count("readLock"), 3);
  EXPECT_EQ(count("total"), 4);
  EXPECT_GE(t.Get("total").Document().Get("time").Int64(),
            t.Get("insert").Document().Get("time").Int64());
  EXPECT_THAT(Error(R"({"top": 1})", "test"), HasSubstr("13: "));
}

TEST_F(AdminCommandsTest, GetLogNamesItsLogs) {
  EXPECT_EQ(ToJson(Ok(R"({"getLog": "*"})").Get("names").Array()),
            R"({"0": "global", "1": "startupWarnings"})");
  Document global = Ok(R"({"getLog": "global"})");
  EXPECT_TRUE(global.Get("log").type() == BsonType::kArray);
  EXPECT_GE(global.Get("totalLinesWritten").NumberAsDouble(), 0);
  EXPECT_EQ(Error(R"({"getLog": "other"})"), "96: No log named 'other'");
  EXPECT_EQ(Error(R"({"getLog": 1})"), "14: Argument to getLog must be of type String; found int");
}

TEST_F(AdminCommandsTest, ConnectionStatusInProcessHasNoUser) {
  Document s = Ok(R"({"connectionStatus": 1, "showPrivileges": true})", "test");
  const DocumentView auth = s.Get("authInfo").Document();
  EXPECT_TRUE(auth.Get("authenticatedUsers").Array().empty());
  EXPECT_TRUE(auth.Get("authenticatedUserRoles").Array().empty());
  EXPECT_TRUE(auth.Get("authenticatedUserPrivileges").Array().empty());
  EXPECT_THAT(Error(R"({"connectionStatus": 1, "bogus": 1})", "test"), HasSubstr("40415: "));
}

TEST_F(AdminCommandsTest, SetParameterChangesWhatGetParameterShows) {
  EXPECT_EQ(Ok(R"({"getParameter": 1, "cursorTimeoutMillis": 1})").Get("cursorTimeoutMillis").Int64(),
            600000);
  Document was = Ok(R"({"setParameter": 1, "cursorTimeoutMillis": 1000})");
  EXPECT_EQ(was.Get("was").Int64(), 600000);
  EXPECT_EQ(Ok(R"({"getParameter": 1, "cursorTimeoutMillis": 1})").Get("cursorTimeoutMillis").Int64(),
            1000);
  Document details = Ok(R"({"getParameter": {"showDetails": true}, "cursorTimeoutMillis": 1,
                            "ttlMonitorSleepSecs": 1})");
  EXPECT_TRUE(details.Get("cursorTimeoutMillis").Document().Get("settableAtRuntime").Bool());
  EXPECT_FALSE(details.Get("ttlMonitorSleepSecs").Document().Get("settableAtRuntime").Bool());
  EXPECT_EQ(Error(R"({"setParameter": 1, "nope": 1})"),
            "72: attempted to set unrecognized parameter [nope], use help:true to see options ");
  EXPECT_EQ(Error(R"({"setParameter": 1, "ttlMonitorSleepSecs": 5})"),
            "20: not allowed to change [ttlMonitorSleepSecs] at runtime");
  EXPECT_EQ(Error(R"({"setParameter": 1, "cursorTimeoutMillis": 5, "ttlMonitorSleepSecs": 5})"),
            "20: Only one parameter can be set per setParameter command");
  EXPECT_EQ(Error(R"({"setParameter": 1})"),
            "72: no option found to set, use help:true to see options ");
  EXPECT_THAT(Error(R"({"setParameter": 1, "cursorTimeoutMillis": -1})"), HasSubstr("2: "));
  EXPECT_THAT(Error(R"({"setParameter": 1, "cursorTimeoutMillis": 5})", "test"), HasSubstr("13: "));
}

// listCommands is the command table: every name the dispatcher runs is
// listed, and each listed name runs (never CommandNotFound).
TEST_F(AdminCommandsTest, ListCommandsIsTheCommandTable) {
  Document commands = Ok(R"({"listCommands": 1})");
  int n = 0;
  for (Element c : commands.Get("commands").Document()) {
    ++n;
    Document r = Run("{\"" + std::string(c.key()) + "\": 1}");
    EXPECT_NE(r.Get("code").ok() ? r.Get("code").Int32() : 0, 59) << c.key();
  }
  EXPECT_GE(n, 45);
  for (const char* name : {"currentOp", "killOp", "top", "getLog", "setParameter", "connectionStatus"}) {
    EXPECT_TRUE(commands.Get("commands").Document().Get(name).ok()) << name;
  }
  EXPECT_TRUE(commands.Get("commands").Document().Get("killOp").Document().Get("adminOnly").Bool());
  EXPECT_FALSE(commands.Get("commands").Document().Get("connectionStatus").Document().Get("requiresAuth").Bool());
}

}  // namespace
}  // namespace rockdoc
