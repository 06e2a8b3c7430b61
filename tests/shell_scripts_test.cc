// Tests of the rockdoc shell (src/shell/), driven in-process: the shell as
// a program. Opening a database, load and script files, errors and how they
// print, exit and quit, interrupts and maxTimeMS, help and completion,
// names rockdoc lacks, the REPL reading piped input, and RunMain (the
// command line: --eval, files, --json, exit statuses, --salvage, the
// database directory).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/deadline.h"
#include "rockdoc/c.h"
#include "shell_test_fixture.h"

namespace rockdoc::shell {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// ---------------------------------------------------------------- start-up

TEST_F(ShellTest, StartsInTestDatabase) {
  EXPECT_EQ(Show("db"), "test\n");
  EXPECT_EQ(shell_->Prompt(), "test> ");
  EXPECT_EQ(Show("db.getName()"), "test\n");
}

TEST_F(ShellTest, SecondShellOnSameDirectoryIsRefused) {
  ShellOptions options;
  options.db_path = dir_.Sub("db");
  auto second = Shell::Open(options);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), ErrorCode::kDBPathInUse);
}

TEST_F(ShellTest, ShellsOneAfterAnotherReopenTheData) {
  Ok("db.c.insertOne({_id: 1, a: 'kept'})");
  OpenShell(false);  // closes the first shell, opens a new context
  EXPECT_EQ(Show("db.c.findOne()"), "{ _id: 1, a: 'kept' }\n");
}

// ---------------------------------------------------------------- load, help, exit

TEST_F(ShellTest, LoadRunsAFileInTheGlobalScope) {
  std::string path = dir_.Sub("lib.js");
  std::ofstream(path) << "use other\nvar loadedValue = db.getName() + ':' + 41;\n";
  EXPECT_EQ(Show("load('" + path + "')"), "true\n");
  EXPECT_EQ(Show("loadedValue"), "other:41\n");
  EXPECT_EQ(Show("db"), "other\n");
}

TEST_F(ShellTest, HelpAndVersion) {
  EXPECT_THAT(Show("help"), HasSubstr("show collections"));
  EXPECT_THAT(Show("db.help()"), HasSubstr("db.getSiblingDB"));
  EXPECT_THAT(Show("db.c.help()"), HasSubstr("findOneAndUpdate"));
  EXPECT_THAT(Show("db.c.find().help()"), HasSubstr("itcount"));
  EXPECT_EQ(Show("typeof version()"), "string\n");
}

// Issue 33.13: `.help` works as in mongosh (the REPL's commands too), and
// `help`; `.exit` leaves.
TEST_F(ShellTest, DotHelpAndHelp) {
  EXPECT_THAT(Show("help"), HasSubstr("show collections"));
  EXPECT_THAT(Show(".help"), HasSubstr("show collections"));
  EXPECT_THAT(Show(".help"), HasSubstr(".exit"));
  EXPECT_TRUE(ok_) << err();
  Show(".exit");
  EXPECT_TRUE(shell_->exit_requested());
}

TEST_F(ShellTest, ExitAndQuitEndTheShellWithAStatus) {
  EXPECT_FALSE(shell_->exit_requested());
  EXPECT_EQ(Run("print('before'); exit(3); print('after')"), "before\n");
  EXPECT_FALSE(ok_);
  EXPECT_TRUE(shell_->exit_requested());
  EXPECT_EQ(shell_->exit_code(), 3);
  EXPECT_EQ(err(), "");  // not an error: no message
  OpenShell(false);
  Run("try { quit() } catch (e) { print('caught') }");  // uncatchable
  EXPECT_TRUE(shell_->exit_requested());
  EXPECT_EQ(shell_->exit_code(), 0);
  OpenShell(false);
  Show("exit");  // the command form
  EXPECT_TRUE(shell_->exit_requested());
}

// Issue 33.14: what Tab offers, as mongosh completes.
TEST_F(ShellTest, CompletionOffersCollectionsMethodsAndOperators) {
  Ok("db.books.insertOne({_id: 1}); db.bookings.insertOne({_id: 1}); db.users.insertOne({_id: 1})");
  using ::testing::Contains;
  using ::testing::ElementsAre;
  using ::testing::Not;
  // db.<TAB>: collection names and database methods.
  EXPECT_THAT(shell_->Complete("db.boo"), ElementsAre("db.bookings", "db.books"));
  auto db_all = shell_->Complete("db.");
  EXPECT_THAT(db_all, Contains("db.users"));
  EXPECT_THAT(db_all, Contains("db.getCollectionNames"));
  EXPECT_THAT(db_all, Not(Contains("db._run")));
  EXPECT_THAT(shell_->Complete("db.getColl"),
              ElementsAre("db.getCollection", "db.getCollectionInfos", "db.getCollectionNames"));
  // db.coll.<TAB>: collection methods; after find(...) the cursor's.
  EXPECT_THAT(shell_->Complete("db.books.insertM"), ElementsAre("db.books.insertMany"));
  EXPECT_THAT(shell_->Complete("db.books.find({a: 1}).so"),
              ElementsAre("db.books.find({a: 1}).sort"));
  EXPECT_THAT(shell_->Complete("db.books.aggregate([]).to"),
              ElementsAre("db.books.aggregate([]).toArray"));
  EXPECT_THAT(shell_->Complete("db.books.aggregate([]).so"), ElementsAre());  // no sort there
  // $ in a filter: query operators; in an update's second argument: update
  // operators; at a pipeline's top level: stages; inside a stage:
  // expression operators and accumulators.
  EXPECT_THAT(shell_->Complete("db.books.find({year: {$gt"),
              ElementsAre("db.books.find({year: {$gt", "db.books.find({year: {$gte"));
  EXPECT_THAT(shell_->Complete("db.books.find({'year': {\"$exi"),
              ElementsAre("db.books.find({'year': {\"$exists"));
  EXPECT_THAT(shell_->Complete("db.books.updateOne({_id: 1}, {$in"),
              ElementsAre("db.books.updateOne({_id: 1}, {$inc"));
  EXPECT_THAT(shell_->Complete("db.books.updateOne({_id: {$in"),
              ElementsAre("db.books.updateOne({_id: {$in"));
  EXPECT_THAT(shell_->Complete("db.books.aggregate([{$match: {}}, {$gro"),
              ElementsAre("db.books.aggregate([{$match: {}}, {$group"));
  EXPECT_THAT(shell_->Complete("db.books.aggregate([{$group: {_id: null, n: {$ad"),
              ElementsAre("db.books.aggregate([{$group: {_id: null, n: {$add",
                          "db.books.aggregate([{$group: {_id: null, n: {$addToSet"));
  // Commands and globals at the start; `show` and `use` arguments.
  EXPECT_THAT(shell_->Complete("sh"), Contains("show"));
  EXPECT_THAT(shell_->Complete("Object"), Contains("ObjectId"));
  EXPECT_THAT(shell_->Complete("show coll"), ElementsAre("show collections"));
  EXPECT_THAT(shell_->Complete("use te"), ElementsAre("use test"));
  // Nothing fits: nothing offered, and nothing ran.
  EXPECT_THAT(shell_->Complete("db.books.nosuch"), ElementsAre());
  EXPECT_THAT(shell_->Complete("1 + 2 +"), ElementsAre());
}

// ---------------------------------------------------------------- errors

TEST_F(ShellTest, EngineErrorsAreCatchableWithCodeAndName) {
  Ok("db.c.insertOne({_id: 1})");
  EXPECT_EQ(
      Show(R"js(
      try { db.c.insertOne({_id: 1}) }
      catch (e) { [e instanceof MongoServerError, e instanceof Error, e.code === 11000, e.codeName, e.message] })js"),
      "[\n  true,\n  true,\n  true,\n  'DuplicateKey',\n"
      "  'E11000 duplicate key error collection: test.c index: _id_ dup key: { _id: 1 }'\n]\n");
  // With MongoDB's details of a duplicate key (issue 33 #7).
  EXPECT_EQ(Show("try { db.c.insertOne({_id: 1}) } catch (e) { [e.keyPattern, e.keyValue] }"),
            "[ { _id: 1 }, { _id: 1 } ]\n");
  Ok("db.c.createIndex({u: 1}, {unique: true}); db.c.insertMany([{_id: 3, u: 1}, {_id: 4, u: 2}])");
  EXPECT_EQ(Show("try { db.c.findOneAndUpdate({_id: 4}, {$set: {u: 1}}) } "
                 "catch (e) { [e.code, e.keyPattern, e.keyValue] }"),
            "[ 11000, { u: 1 }, { u: 1 } ]\n");
}

TEST_F(ShellTest, UncaughtErrorsPrintOneLineAndTheShellGoesOn) {
  Ok("db.c.insertOne({_id: 1})");
  EXPECT_EQ(Show("db.c.insertOne({_id: 1})"), "");
  EXPECT_FALSE(ok_);
  EXPECT_EQ(err(),
            "MongoServerError[DuplicateKey]: E11000 duplicate key error collection: test.c "
            "index: _id_ dup key: { _id: 1 }\n");
  EXPECT_EQ(Show("1 + 1"), "2\n");
  EXPECT_TRUE(ok_);
  Show("notDefined + 1");
  EXPECT_EQ(err(), "ReferenceError: notDefined is not defined\n");
  Show("throw 'plain'");
  EXPECT_EQ(err(), "Uncaught 'plain'\n");
  Show("throw new Error('custom')");
  EXPECT_EQ(err(), "Error: custom\n");
}

TEST_F(ShellTest, SyntaxErrorsGiveThePosition) {
  Show("let a = 1;\nlet b = ;");
  EXPECT_FALSE(ok_);
  EXPECT_EQ(err(), "SyntaxError: expected expression, got ';' @ <test>:2:9\n");
  EXPECT_TRUE(shell_->IsCompleteEntry("let b = ;"));  // complete, even if wrong
  EXPECT_FALSE(shell_->IsCompleteEntry("function f() {"));
  EXPECT_FALSE(shell_->IsCompleteEntry("db.c.find({"));
  EXPECT_TRUE(shell_->IsCompleteEntry("use library"));
}

TEST_F(ShellTest, RuntimeErrorsInFilesGiveThePosition) {
  std::string path = dir_.Sub("bad.js");
  std::ofstream(path) << "print('one')\nnoSuchFunction()\nprint('never')\n";
  out_.str("");
  EXPECT_FALSE(shell_->RunFile(path));
  EXPECT_EQ(out_.str(), "one\n");
  EXPECT_EQ(err_.str(), "ReferenceError: noSuchFunction is not defined @ " + path + ":2:1\n");
  EXPECT_FALSE(shell_->RunFile(dir_.Sub("missing.js")));
  EXPECT_THAT(err_.str(), HasSubstr("cannot read " + dir_.Sub("missing.js")));
}

TEST_F(ShellTest, LoadErrors) {
  EXPECT_EQ(Show("try { load('/nonexistent/x.js') } catch (e) { [e.code, e.codeName] }"),
            "[ 38, 'FileNotOpen' ]\n");
  std::string path = dir_.Sub("throws.js");
  std::ofstream(path) << "throw new Error('from file')\n";
  EXPECT_EQ(Show("try { load('" + path + "') } catch (e) { e.message }"), "from file\n");
}

// Issue 33.15: an uncaught mongosh error prints its code once, as mongosh
// prints it (the message holds "[COMMON-10001]"; no "[BadValue]" too).
TEST_F(ShellTest, MongoshErrorsPrintTheirCodeOnce) {
  Show("ISODate('2024-02-30')");
  EXPECT_FALSE(ok_);
  EXPECT_EQ(err(),
            "MongoshInvalidInputError: [COMMON-10001] \"2024-02-30\" is not a valid ISODate\n");
  EXPECT_EQ(Show("try { ISODate('2024-02-30') } catch (e) { [e.code, e.codeName] }"),
            "[ 2, 'BadValue' ]\n");
  Show("db.c.insertOne({_id: 1}); db.c.insertOne({_id: 1})");  // server errors keep theirs
  EXPECT_THAT(err(), StartsWith("MongoServerError[DuplicateKey]: E11000"));
}

TEST_F(ShellTest, MongoshNamesRockdocLacksSayNotSupported) {
  Ok("db.c.insertOne({_id: 1})");
  const std::pair<const char*, const char*> kCalls[] = {
      {"db.c.mapReduce()", "Collection.mapReduce"},
      {"db.c.latencyStats()", "Collection.latencyStats"},
      {"db.c.initializeOrderedBulkOp()", "Collection.initializeOrderedBulkOp"},
      {"db.getLogComponents()", "Database.getLogComponents"},
      {"db.createUser({user: 'u'})", "Database.createUser"},
      {"db.getMongo().getURI()", "Mongo.getURI"},
      {"db.c.find().tailable()", "Cursor.tailable"},
      {"rs.status()", "rs.status"},
      {"sh.status()", "sh.status"},
      {"connect('mongodb://x')", "connect"},
  };
  for (const auto& [call, what] : kCalls) {
    EXPECT_EQ(
        Show(std::string("try { ") + call + " } catch (e) { [e.name, e.codeName, e.message] }"),
        std::string("[\n  'MongoshUnimplementedError',\n  'NotImplemented',\n  '") + what +
            " is not supported by rockdoc'\n]\n")
        << call;
    EXPECT_EQ(Show(std::string("try { ") + call + " } catch (e) { e.code }"),
              CodeLine(ErrorCode::kNotImplemented))
        << call;
  }
  // A mongosh method name is a method, not the sub-collection "c.totalSize";
  // other names still are sub-collections, as in MongoDB.
  EXPECT_EQ(Show("typeof db.c.latencyStats"), "function\n");
  EXPECT_EQ(Show("typeof db.runCommand"), "function\n");
  EXPECT_EQ(Show("db.a.b.getFullName()"), "test.a.b\n");
  Ok("db.a.b.insertOne({_id: 7})");
  EXPECT_EQ(Show("db.a.b.find().toArray()"), "[ { _id: 7 } ]\n");
  EXPECT_EQ(Coll("a.b").EstimatedDocumentCount().value(), 1);
  // What rockdoc has of them works.
  EXPECT_EQ(Show("db.getMongo().getDBNames()"), "[ 'admin', 'config', 'local', 'test' ]\n");
  EXPECT_EQ(Show("db.getMongo().getDB('test').c.countDocuments({})"), "1\n");
  EXPECT_EQ(Show("db.c.isCapped()"), "false\n");
  EXPECT_EQ(Show("db.c.getIndices().length"), "1\n");
}

// ------------------------------------------------ interrupts and time limits

// A statement started when it starts: an interrupt requested before that is
// dropped (Evaluate clears it), so the interrupter asks again until the
// statement has ended, instead of guessing when it is running.
void InterruptUntil(Shell* shell, const std::atomic<bool>& done) {
  while (!done.load()) {
    shell->RequestInterrupt();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

TEST_F(ShellTest, InterruptStopsTheRunningStatement) {
  std::atomic<bool> done{false};
  std::thread interrupter([&] { InterruptUntil(shell_.get(), done); });
  Show("let spins = 0; while (true) { spins++ }");
  done = true;
  interrupter.join();
  EXPECT_FALSE(ok_);
  EXPECT_EQ(err(), "Interrupted: the statement was stopped\n");
  EXPECT_FALSE(shell_->exit_requested());
  EXPECT_EQ(Show("typeof spins"), "number\n");  // the shell goes on, with the statement's state
  // A native wait is interruptible too (it would otherwise end after a minute, ok).
  std::atomic<bool> slept{false};
  std::thread again([&] { InterruptUntil(shell_.get(), slept); });
  Show("sleep(60000)");
  slept = true;
  again.join();
  EXPECT_FALSE(ok_);
  EXPECT_EQ(err(), "Interrupted: the statement was stopped\n");
}

// maxTimeMS reaches every operation that takes it (issue 11 #10), through a
// test clock that advances 1 ms at every read, so that expiry does not
// depend on the machine's speed.
int64_t MillisecondPerReadClock() {
  static std::atomic<int64_t> now{1};
  return now.fetch_add(1000000);
}

TEST_F(ShellTest, MaxTimeMSReachesEveryOperation) {
  Ok("db.c.insertMany(Array.from({length: 3000}, (_, i) => ({_id: i, a: i % 10})))");
  const std::string expiring[] = {
      "db.c.find({x: 1}).maxTimeMS(LIMIT).toArray()",
      "db.c.find({x: 1}, {}, {maxTimeMS: LIMIT}).toArray()",
      "db.c.findOne({x: 1}, {}, {maxTimeMS: LIMIT})",
      "db.c.countDocuments({x: 1}, {maxTimeMS: LIMIT})",
      "db.c.distinct('a', {x: 1}, {maxTimeMS: LIMIT})",
      "db.c.updateOne({x: 1}, {$set: {y: 1}}, {maxTimeMS: LIMIT})",
      "db.c.updateMany({x: 1}, {$set: {y: 1}}, {maxTimeMS: LIMIT})",
      "db.c.deleteOne({x: 1}, {maxTimeMS: LIMIT})",
      "db.c.deleteMany({x: 1}, {maxTimeMS: LIMIT})",
      "db.c.findOneAndUpdate({x: 1}, {$set: {y: 1}}, {maxTimeMS: LIMIT})",
      "db.c.findOneAndReplace({x: 1}, {y: 1}, {maxTimeMS: LIMIT})",
      "db.c.findOneAndDelete({x: 1}, {maxTimeMS: LIMIT})",
  };
  auto with_limit = [](std::string code, std::string_view limit) {
    return code.replace(code.find("LIMIT"), 5, limit);
  };
  internal::SetClockForTesting(&MillisecondPerReadClock);
  for (const std::string& code : expiring) {
    EXPECT_EQ(
        Show("try { " + with_limit(code, "5") + "; 'no error' } catch (e) { [e.code, e.message] }"),
        "[ 50, 'operation exceeded time limit' ]\n")
        << code;
  }
  internal::SetClockForTesting(nullptr);
  for (const std::string& code : expiring) Ok(with_limit(code, "600000"));
  EXPECT_EQ(Show("db.c.find({a: 1}).maxTimeMS(600000).itcount()"), "300\n");
}

// ---------------------------------------------------------------- REPL input

TEST_F(ShellTest, PipedReplRunsEntriesWithoutPrompts) {
  std::istringstream in(
      "db.c.insertOne({_id: 1})\n"
      "function twice(x) {\n"
      "  return 2 * x\n"
      "}\n"
      "\n"
      "twice(21)\n"
      "use other\n"
      "db\n"
      "oops(\n");
  ReplOptions options;
  options.in = &in;
  out_.str("");
  err_.str("");
  int status = RunRepl(*shell_, options);
  EXPECT_EQ(out_.str(), "{ acknowledged: true, insertedId: 1 }\n42\nswitched to db other\nother\n");
  EXPECT_THAT(err_.str(), StartsWith("SyntaxError: "));  // the unfinished last entry
  EXPECT_EQ(status, 1);
}

TEST_F(ShellTest, PipedReplStopsAtExit) {
  std::istringstream in("print(1)\nexit(4)\nprint(2)\n");
  ReplOptions options;
  options.in = &in;
  out_.str("");
  EXPECT_EQ(RunRepl(*shell_, options), 4);
  EXPECT_EQ(out_.str(), "1\n");
}

// ---------------------------------------------------------------- RunMain

class RunMainTest : public ::testing::Test {
 protected:
  int Main(std::vector<std::string> args) {
    args.insert(args.begin(), "rockdoc");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    int status = RunMain(static_cast<int>(argv.size()), argv.data());
    out_ = testing::internal::GetCapturedStdout();
    err_ = testing::internal::GetCapturedStderr();
    return status;
  }
  test::ScratchDir dir_;
  std::string out_, err_;
};

TEST_F(RunMainTest, EvalAndFilesRunInOrder) {
  std::string db = dir_.Sub("db");
  std::string script = dir_.Sub("s.js");
  std::ofstream(script) << "print('file sees', db.c.countDocuments())\ndb.c.find()  // not shown\n";
  EXPECT_EQ(Main({"--db", db, "--quiet", "--eval", "db.c.insertOne({_id: 1})", "--eval",
                  "db.c.findOne()", script}),
            0);
  EXPECT_EQ(out_, "{ acknowledged: true, insertedId: 1 }\n{ _id: 1 }\nfile sees 1\n");
  EXPECT_EQ(err_, "");
}

// Issue 33.1: as mongosh, a pipeline that writes ($out, $merge) runs when
// aggregate() is called, whether or not its cursor is ever read.
TEST_F(RunMainTest, ScriptsRunOutAndMergeWithoutReadingTheCursor) {
  std::string db = dir_.Sub("db");
  std::string script = dir_.Sub("s.js");
  std::ofstream(script)
      << "db.a.insertMany([{_id: 1}, {_id: 2}, {_id: 3}])\n"
         "var r = db.a.aggregate([{$out: 'b'}])\n"
         "db.a.aggregate([{$match: {_id: {$gt: 1}}}, {$merge: {into: 'm'}}])\n"
         "db.getSiblingDB('test').aggregate([{$documents: [{x: 1}]}, {$out: 'd'}])\n"
         "db.a.aggregate([{$match: {_id: 1}}])  // reads nothing, writes nothing\n"
         "print('done')\n";
  EXPECT_EQ(Main({"--db", db, "--quiet", script}), 0) << err_;
  EXPECT_EQ(out_, "done\n");
  EXPECT_EQ(Main({"--db", db, "--quiet", "--eval",
                  "[db.b.countDocuments(), db.m.countDocuments(), db.d.countDocuments()]"}),
            0)
      << err_;
  EXPECT_EQ(out_, "[ 3, 2, 1 ]\n");
}

TEST_F(RunMainTest, JsonFlag) {
  EXPECT_EQ(Main({"--db=" + dir_.Sub("db"), "--json", "--eval",
                  "db.c.insertMany([{_id: 1}, {_id: 2}]); db.c.find()"}),
            0);
  EXPECT_EQ(out_, "{\"_id\": 1}\n{\"_id\": 2}\n");
}

TEST_F(RunMainTest, ExitStatusIsNonZeroWhenAScriptThrows) {
  std::string script = dir_.Sub("bad.js");
  std::ofstream(script) << "throw new Error('boom')\n";
  EXPECT_EQ(Main({"--db", dir_.Sub("db"), script, "--eval", "print('not reached')"}), 1);
  EXPECT_EQ(err_, "Error: boom @ " + script + ":1:7\n");
  EXPECT_EQ(Main({"--db", dir_.Sub("db"), "--eval",
                  "db.c.insertOne({_id: 1}); db.c.insertOne({_id: 1})"}),
            1);
  EXPECT_THAT(err_, StartsWith("MongoServerError[DuplicateKey]"));
  EXPECT_EQ(Main({"--db", dir_.Sub("db"), "--eval", "quit(7)"}), 7);
  EXPECT_EQ(Main({"--db", dir_.Sub("db"), "--bogus"}), 2);
  EXPECT_THAT(err_, HasSubstr("unknown option \"--bogus\""));
}

// Issue 11 #4: salvage is an explicit operation of its own, reachable from
// the command line; a refused open says how to reach it.
TEST_F(RunMainTest, SalvageKeepsWhatIsBeforeTheDamage) {
  std::string live = dir_.Sub("live"), image = dir_.Sub("image");
  auto insert = [](const std::string& dir, int from, bool copy_to, const std::string& to) {
    ClientOptions o;
    o.sync = true;
    auto client = Client::Open(dir, o);
    ASSERT_TRUE(client.ok()) << client.status();
    Collection c = (*client)->GetDatabase("test").GetCollection("c");
    for (int i = from; i < from + 50; ++i) {
      ASSERT_TRUE(c.InsertOne(test::Json("{\"_id\": " + std::to_string(i) + "}")).ok());
    }
    // A crash image: the directory as a kill would leave it.
    if (copy_to) std::filesystem::copy(dir, to, std::filesystem::copy_options::recursive);
  };
  insert(live, 0, false, "");  // closed cleanly: these 50 are in table files
  insert(live, 50, true, image);
  EXPECT_EQ(Main({"--db", live, "--salvage"}), 0);
  EXPECT_THAT(out_, HasSubstr("needed no salvage")) << out_ << err_;
  // The live log, holding the last 50 inserts, is lost.
  for (const auto& e : std::filesystem::directory_iterator(image)) {
    if (e.path().extension() == ".log") std::filesystem::remove(e.path());
  }
  EXPECT_EQ(Main({"--db", image, "--quiet", "--eval", "db.c.countDocuments()"}), 1);
  EXPECT_THAT(err_, HasSubstr("DataCorruptionDetected"));
  EXPECT_THAT(err_, HasSubstr("--salvage"));
  EXPECT_EQ(Main({"--db", image, "--salvage"}), 0) << err_;
  EXPECT_THAT(out_, HasSubstr("found: ")) << out_;
  EXPECT_EQ(Main({"--db", image, "--quiet", "--eval",
                  "print(db.c.countDocuments(), db.c.validate().valid)"}),
            0)
      << err_;
  EXPECT_EQ(out_, "50 true\n");
  EXPECT_EQ(Main({"--salvage"}), 2);
  EXPECT_THAT(err_, HasSubstr("--salvage takes --dbpath DIR"));
}

// Issue 33.13: `rockdoc DIR` opens (or creates) DIR, as sqlite3 FILE and
// mongosh's address argument; --dbpath is mongod's name for it (--db an
// alias); a second directory is an error; --version and --help print on
// stdout and exit 0.
TEST_F(RunMainTest, APositionalDirectoryIsTheDatabase) {
  auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir_.path());
  std::string script = dir_.Sub("count.js");
  std::ofstream(script) << "print('count', db.c.countDocuments())\n";
  int first = Main({"fresh", "--quiet", "--eval", "db.c.insertOne({_id: 1}).insertedId"});
  std::string first_out = out_;
  int second = Main({script, dir_.Sub("fresh")});  // either order
  std::string second_out = out_;
  int third = Main({"--dbpath", dir_.Sub("fresh"), "--eval", "db.c.countDocuments()"});
  std::string third_out = out_;
  int twice = Main({"fresh", "other"});
  std::string twice_err = err_;
  std::filesystem::current_path(cwd);
  EXPECT_EQ(first, 0) << err_;
  EXPECT_EQ(first_out, "1\n");
  EXPECT_EQ(second, 0);
  EXPECT_EQ(second_out, "count 1\n");
  EXPECT_EQ(third, 0);
  EXPECT_EQ(third_out, "1\n");
  EXPECT_EQ(twice, 2);
  EXPECT_THAT(twice_err,
              HasSubstr("other is neither a script (FILE.js) nor the database directory"));
  EXPECT_TRUE(std::filesystem::is_directory(dir_.Sub("fresh")));
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("rockdoc-data")));
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("other")));

  EXPECT_EQ(Main({"--version"}), 0);
  EXPECT_EQ(out_, std::string("rockdoc version: ") + rockdoc_version() + "\n");
  EXPECT_EQ(Main({"--help"}), 0);
  EXPECT_THAT(out_, HasSubstr("  --dbpath DIR "));
  EXPECT_THAT(out_, HasSubstr("  --version "));
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("rockdoc-data")));
}

TEST_F(RunMainTest, DefaultDirectoryIsRockdocData) {
  auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir_.path());
  int status = Main({"--eval", "db.c.insertOne({_id: 1}).insertedId"});
  std::filesystem::current_path(cwd);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(out_, "1\n");
  EXPECT_TRUE(std::filesystem::is_directory(dir_.Sub("rockdoc-data")));
}

}  // namespace
}  // namespace rockdoc::shell
