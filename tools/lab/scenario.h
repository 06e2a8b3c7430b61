// tools/lab/scenario.h: scenario files and the interpreter of their
// operations. The file format is described in tools/lab/README.md.
#ifndef ROCKDOC_TOOLS_LAB_SCENARIO_H_
#define ROCKDOC_TOOLS_LAB_SCENARIO_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "eval.h"
#include "rockdoc/client.h"
#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc::lab {

// A list of operations and, optionally, an expression evaluated after them
// whose value is the "answer" (compared across variants).
struct OpList {
  std::vector<Document> ops;  // each {"op": "...", ...}
  Document answer;            // {"v": <expression>} or empty when none
  bool has_answer() const { return !answer.empty(); }
};

// Which database a variant runs on. SQLite variants are the reference a
// rockdoc variant is compared with ("mirrors"); their operations are SQL.
enum class EngineKind { kRockdoc, kSqlite };

struct Variant {
  std::string name;
  std::string description;
  EngineKind engine = EngineKind::kRockdoc;
  std::string mirrors;  // sqlite: the rockdoc variant running the same workload
  // Error codes with which setup may fail at a size (the variant cannot hold
  // that much, e.g. 10334 or 2 for a document over 16 MiB): the row is then
  // reported as failed instead of ending the run.
  std::vector<int32_t> setup_may_fail;
  // When positive, larger sizes are not run for this variant (reported as
  // such): for a reference too slow to run there in reasonable time.
  int64_t max_size = 0;
  OpList setup;
  OpList read;
  OpList write;
  OpList dump;  // reads all the logical data back, for the invariant checks
  // Optional: what a concurrent reader checks between the operations of one
  // write (its answer is true when the state it sees is whole). Atomicity
  // measured: a write of several operations that is not one transaction
  // shows its intermediate states to this reader.
  OpList observe;
};

// How much to run: one per mode (full, quick, test).
struct Profile {
  std::vector<int64_t> sizes;
  int repetitions = 3;
  int read_ops = 100;   // read operations per repetition
  int write_ops = 100;  // write operations per repetition
  Document params;      // overrides of the scenario's params
  // The block cache every rockdoc variant opens with (and SQLite's page
  // cache), in bytes; 0 is rockdoc's default (half the memory). A profile
  // sets it to measure data larger than the cache (a working set that does
  // not fit) without datasets the size of half the machine's memory.
  int64_t block_cache_bytes = 0;
};

// A separate experiment on one variant: run `step` again and again until it
// fails, then report (see README, "limit").
struct LimitStep {
  std::string title;
  std::string variant;  // whose setup the step starts from
  // What the step builds, shown in the report instead of the variant's name
  // when that differs ("messages embedded in the host"); may be empty.
  std::string label;
  int64_t size = 0;
  std::string collection;
  Document target_filter;  // the watched document
  std::vector<Document> step;
  Document measure;        // {"v": <expression>} over $$doc, the last good document
  int64_t max_steps = 100000;
  int32_t expect_code = 0;
};

// One expectation of a rule of thumb, checked at every size in [from, to]:
// `variant` should win `metric` ("reads", "writes", "disk", "queries",
// "bytes written", "bytes read", "atomic" (with the variants' "observe"),
// or a mix "1000:1") among the rockdoc variants.
struct Claim {
  std::string variant;
  // Who makes the claim: a seed document (the file name in ../shared/seeds,
  // "001_4c317fc5a6fe9993.txt") and its words, verbatim; or, with `source`
  // empty, the lab's own (no source says it). In the scenario file:
  // "source": {"seed": FILE, "quote": TEXT} or "source": "lab".
  std::string source;
  std::string quote;
  // Variants that count as the claimed one's ("or": the same join run by
  // the server, say): the claim agrees when any of them wins.
  std::vector<std::string> alike;
  // When not empty, the claim is judged among these variants (and the
  // claimed ones) only: a rule about one side of a model is not judged by a
  // variant that changes the other side.
  std::vector<std::string> against;
  std::string metric;
  int64_t from = 0;
  int64_t to = INT64_MAX;
};

// "source 001_4c317fc5a6fe9993.txt: \"...\"" or "the lab's own claim".
std::string SourceText(const Claim& c);

struct RuleOfThumb {
  std::string text;  // "favor embedding"
  std::vector<Claim> claims;
};

struct Scenario {
  std::string name;
  std::string title;
  std::string description;
  std::string size_label = "size";
  Document params;
  Document read_let;   // variables computed for each read operation from $$op
  Document write_let;  // same for writes
  Profile full, quick, test;
  std::vector<Variant> variants;
  std::vector<LimitStep> limits;
  // Read:write mixes whose throughput is reported, from the measured rates:
  // (r + w) / (r / reads_per_sec + w / writes_per_sec).
  std::vector<std::pair<int64_t, int64_t>> mixes;
  std::vector<RuleOfThumb> rules;
  std::string source_path;
};

enum class Mode { kFull, kQuick, kTest };
const char* ModeName(Mode mode);
const Profile& ProfileFor(const Scenario& s, Mode mode);

// Parses one scenario file's text.
StatusOr<Scenario> ParseScenario(std::string_view json);
StatusOr<Scenario> LoadScenarioFile(const std::string& path);
// Every *.json in `dir`, sorted by name.
StatusOr<std::vector<Scenario>> LoadScenarioDir(const std::string& dir);
// The directory of the bundled scenarios (the source tree's, then the
// installed copy), or "" when neither exists.
std::string DefaultScenarioDir();

// Figures the explain of each query adds up to.
struct ExplainTotals {
  int64_t queries = 0;  // query commands sent (find, count, aggregate)
  int64_t keys_examined = 0;
  int64_t docs_examined = 0;
};

// Runs operations against one database; results are bound into the
// environment under the operation's "as" name. The engine-neutral operations
// (let, forEach) live here, the rest in one subclass per engine.
class Executor {
 public:
  virtual ~Executor() = default;
  // When set, every query also runs an executionStats explain (not timed).
  void set_explain(ExplainTotals* totals) { explain_ = totals; }

  Status Run(const std::vector<Document>& ops, Env& env);
  Status RunOne(DocumentView op, Env& env);
  // Runs `list` and evaluates its answer (null when it has none).
  StatusOr<Value> RunForAnswer(const OpList& list, Env& env);

 protected:
  virtual Status RunEngineOp(const std::string& name, DocumentView op, Env& env) = 0;
  // {"op": "transaction", "do": [ops]}: runs `body` as one multi-document
  // transaction (retried on transient errors, as the drivers' helper).
  // Engines without transactions refuse it.
  virtual Status RunTransaction(const std::vector<Document>& body, Env& env);
  // Binds `v` to the operation's "as" name, when it has one.
  static void Bind(DocumentView op, Env& env, Value v);
  static Status WithContext(const Status& st, DocumentView op);

  ExplainTotals* explain_ = nullptr;
};

// rockdoc's operations (insertOne, find, updateMany, ...) on database `db`,
// run as MongoDB's database commands (Client::RunCommand), as a driver
// runs them: an operation's fields become the command's (renamed where the
// lab's names are mongosh's: filter is q for an update statement, ...), so
// the command layer decodes them once and refuses what it does not know.
// A transaction is a logical session's (lsid, txnNumber, autocommit).
class RockdocExecutor : public Executor {
 public:
  RockdocExecutor(const Client* client, std::string db);
  ~RockdocExecutor() override;

 protected:
  Status RunEngineOp(const std::string& name, DocumentView op, Env& env) override;
  Status RunTransaction(const std::vector<Document>& body, Env& env) override;

 private:
  // Runs `cmd` on the database (in the open transaction, if any). A failed
  // command, or its first write error, is the Status.
  StatusOr<Document> Command(const Document& cmd, std::string_view db = {});
  // The documents of a command cursor's reply, read to the end.
  StatusOr<std::vector<Document>> Drain(const Document& reply);
  // Adds the executionStats of `command`'s explain to the totals.
  Status Explain(const Document& command);

  const Client* client_;
  std::string db_;
  std::string lsid_;         // the executor's logical session (16 bytes of a UUID)
  bool session_used_ = false;
  int64_t txn_number_ = 0;
  bool in_txn_ = false;      // a transaction is open
  bool txn_started_ = false;  // and its first command has run
};

}  // namespace rockdoc::lab

#endif  // ROCKDOC_TOOLS_LAB_SCENARIO_H_
