// rockdoc/advisor.h: the schema advisor. It examines a database's
// collections and reports the schema-design anti-patterns it finds in them,
// each backed by measurements, as MongoDB's hosted schema advice and
// Compass' performance insights do against a live server, but offline, on
// a rockdoc directory. Link `rockdoc::tools` (find_package(rockdoc)); the
// program is `rockdoc-advise DIR`.
//
// Findings (rule ids), from the documents and the catalog:
//   large-array          an array path holding 250 or more documents,
//                        ObjectIds or strings in some document (Compass'
//                        rule); critical from 10,000. Also a path that
//                        writes have grown to 250 elements or more by the
//                        growth statistics (Collection::GrowthStats), when
//                        the sample does not show it (evidence `source:
//                        "growth statistics"`), unless the sample saw it
//                        hold mostly numbers
//   bloated-documents    the 90th percentile document is 1 MiB or more;
//                        critical when the largest reaches 8 MiB (half the
//                        16 MiB limit)
//   redundant-index      an index whose key pattern is a prefix of another
//                        index's (same fields, order and directions), and
//                        that adds nothing of its own (not unique, partial,
//                        sparse, TTL or hidden)
//   unused-index         an index no query has used ($indexStats' ops 0)
//                        in the `unused_index_days` since it was created
//                        (the counts survive restarts)
//   too-many-indexes     more than 10 indexes on a collection, its _id
//                        index counted (10 or more besides _id)
//   too-many-collections 10,000 or more collections in a database
// and from the query statistics ($queryStats: kept by the engine, per
// query shape, persisted at close; read before the advisor reads anything):
//   inefficient-query    a find, count, distinct or $match-led pipeline
//                        shape that examined 100 or more documents (or
//                        index keys) per document returned, 1,000 or more
//                        in all; the evidence suggests an index by the
//                        equality-sort-range rule
//   case-insensitive-regex  shapes with a $regex of option i (no rockdoc
//                        index serves them)
//   large-documents-read-narrowly  documents of 16 KiB or more at the
//                        median whose finds, half of them or more, project
//                        at most 5 fields (the subset pattern)
//   separated-data       reads of one collection followed, in half of the
//                        cases or more and 10 times or more, by a read of
//                        another: application-level joins (an _id read of
//                        it just after a query on the first, on the same
//                        thread) and $lookup runs
// The advisor's own reads of a collection (a lone $sample, or an empty
// pipeline with `full`) are left out of that evidence; rockdoc-advise
// opens its client with statistics off, so it records nothing.
// Each finding quotes its rule of thumb, gives the evidence as numbers, a
// severity and the remedy, with the lab scenario (rockdoc-lab) that
// measures that trade-off. The large-array and bloated-documents findings'
// evidence includes what the store recorded of the writes when statistics
// are on (GrowthStatistics, from memory: no extra read): `inWrites`
// {count, p50AtMost, p90AtMost, max} (the path's lengths in writes) or
// `allDocuments` {count, p50AtMost, p90AtMost, maxAtMost} (every document's
// size; power-of-two bounds), and the collection's `growthWarnings`.
//
// Documents are examined by a uniform random sample of `sample_size` per
// collection ($sample: the collection is read once, `sample_size` documents
// are kept), or all of them with `full`.
//
// Thread safety: each call is independent; a Client may be shared.
#ifndef ROCKDOC_ADVISOR_H_
#define ROCKDOC_ADVISOR_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "rockdoc/client.h"
#include "rockdoc/document.h"
#include "rockdoc/status.h"

namespace rockdoc::advisor {

enum class Severity { kInfo = 0, kWarning = 1, kCritical = 2 };
// "info", "warning", "critical"; and back (BadValue for another name).
const char* SeverityName(Severity s);
StatusOr<Severity> ParseSeverity(std::string_view name);

struct Finding {
  std::string rule;        // the rule id ("large-array", ...)
  Severity severity = Severity::kWarning;
  std::string ns;          // "db.collection", or "db" for a database's finding
  std::string summary;     // one line: what was found, with its numbers
  std::string rule_of_thumb;  // the rule of thumb it breaks, one line
  Document evidence;       // the measurements ({path, p50, p90, max, ...})
  std::string remedy;      // what to do, one or two sentences
  std::string lab_scenario;  // the rockdoc-lab scenario that measures it ("" if none)
};

struct AdviseOptions {
  // Databases to examine; empty: every database.
  std::vector<std::string> dbs;
  // Only this collection of them (db.c.advise()); empty: every one. The
  // database-wide findings (too many collections) need it empty.
  std::string collection;
  // Documents examined per collection, chosen at random ($sample).
  int64_t sample_size = 1000;
  // Every document instead of a sample.
  bool full = false;
  // An index with no use for this many days is unused (0: any index
  // without a use; BadValue when negative; past 36,500, as 36,500).
  int64_t unused_index_days = 7;
  // Progress lines per collection (to `progress`), when not null.
  std::ostream* progress = nullptr;
};

struct AdviseReport {
  std::vector<Finding> findings;  // most severe first, then by namespace
  int64_t databases = 0;
  int64_t collections = 0;
  int64_t documents_examined = 0;
  // Whether any finding is at or above `at_least`.
  bool Any(Severity at_least) const;
};

// Examines the databases `options` names.
StatusOr<AdviseReport> Advise(const Client& client, const AdviseOptions& options);

// The report for people: one block per finding.
std::string FormatText(const AdviseReport& report);
// The report for tools: {databases, collections, documentsExamined,
// findings: [{rule, severity, ns, summary, ruleOfThumb, evidence, remedy,
// labScenario}]}.
Document ToDocument(const AdviseReport& report);

}  // namespace rockdoc::advisor

#endif  // ROCKDOC_ADVISOR_H_
