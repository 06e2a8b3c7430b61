// rockdoc/tools.h: moving data between rockdoc and MongoDB in mongo-tools'
// formats: dump and restore (mongodump's directory layout and archive
// format, optionally gzipped), export and import (mongoexport's and
// mongoimport's JSON, CSV and TSV), as library calls over the public API.
// The rockdoc-dump, -restore, -export and -import programs are these calls
// behind mongo-tools' flags. Link the library `rockdoc::tools`
// (find_package(rockdoc)), built with the programs.
//
// The formats are mongo-tools' own, so a rockdoc dump restores into MongoDB
// with mongorestore and a mongodump of a deployment restores into rockdoc:
//   <out>/<db>/<collection>.bson           the documents, concatenated BSON
//   <out>/<db>/<collection>.metadata.json  {options?, indexes, uuid,
//                                           collectionName, type?} as
//                                           single-line canonical Extended JSON
//   <out>/prelude.json                     {"ServerVersion", "ToolVersion"}
// Collection file names are escaped as mongodump escapes them
// (CollectionFileName in tools/formats.h); with gzip every file gets ".gz".
//
// Consistency: a dump reads every collection from one snapshot (a snapshot
// session), so writers may go on while it runs.
//
// Safety of restore: every selected collection's files are read and
// validated whole (every document, the metadata, a view's definition,
// --preserveUUID's UUID) before anything changes, so a damaged file late in
// a dump fails the restore before the first collection is touched; then the documents and indexes are built into a temporary
// collection that replaces the target by a rename. A failure at any point
// leaves the target as it was (with drop, the old collection is dropped only
// by the rename that puts its complete replacement in place).
//
// Thread safety: each call is independent; a Client may be shared.
#ifndef ROCKDOC_TOOLS_H_
#define ROCKDOC_TOOLS_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "rockdoc/client.h"
#include "rockdoc/document.h"
#include "rockdoc/json.h"
#include "rockdoc/status.h"

namespace rockdoc::tools {

// Progress lines while a call runs (documents and bytes done, rate, ETA),
// as mongo-tools print them on a terminal; off unless `out` is set.
struct ProgressOptions {
  // Where progress lines go; null: none.
  std::ostream* out = nullptr;
  // Time between lines.
  std::chrono::milliseconds interval{1000};
};

// Which namespaces a dump or restore takes: --db, --collection,
// --nsInclude and --nsExclude (patterns "db.coll" where '*' matches any
// run of characters, as mongo-tools' namespace patterns; '\' escapes).
struct NamespaceFilter {
  std::string db;
  std::string collection;
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  bool Matches(std::string_view db_name, std::string_view coll_name) const;
};

// --nsFrom/--nsTo: a restore writes what `from` matches under the name
// `to` makes of it. Patterns as NamespaceFilter's ('*' any run, '\'
// escapes), plus variables: "$name$" in `from` matches any run of
// characters (the shortest that lets the rest match), and in `to` stands
// for what it matched; every variable of `to` must be one of `from`.
//   from "sales.$coll$", to "archive.2026_$coll$": sales.orders -> archive.2026_orders
struct NamespaceRename {
  std::string from;
  std::string to;
};
// The namespace "db.coll" becomes under the first rename whose `from`
// matches it; `ns` itself when none does. BadValue for a malformed pattern
// (an unclosed '$', a variable of `to` that `from` lacks).
StatusOr<std::string> RenamedNamespace(const std::vector<NamespaceRename>& renames,
                                       std::string_view ns);

struct DumpOptions {
  NamespaceFilter ns;
  // A find filter (only with a collection), as --query.
  Document query;
  // Directory output (--out): "dump" by default; "-" writes one
  // collection's documents (ns.collection required) to stdout.
  std::string out = "dump";
  // Archive output (--archive[=FILE]): set to write one archive instead of
  // a directory; "" or "-" is stdout.
  std::optional<std::string> archive;
  bool gzip = false;
  // Log lines (mongo-tools' "<time>\twriting db.coll to ..."); null: none.
  std::ostream* log = nullptr;
  // Progress lines while it runs; off by default.
  ProgressOptions progress;
};

struct DumpReport {
  int64_t collections = 0;
  int64_t documents = 0;
  int64_t bytes = 0;  // BSON bytes of the documents written
};

// Dumps the databases and collections `options.ns` selects (every database
// by default) from one snapshot.
StatusOr<DumpReport> Dump(const Client& client, const DumpOptions& options);

struct RestoreOptions {
  NamespaceFilter ns;
  // The dump directory (--dir or the positional argument): "dump" by
  // default. It may also be a database's directory (with ns.db) or one
  // .bson file (with ns.db and ns.collection, or the file's base name), or
  // "-": one collection's documents on stdin (ns.db and ns.collection).
  std::string dir = "dump";
  std::optional<std::string> archive;
  bool gzip = false;
  // Drop each collection before restoring it (--drop); see "Safety" above.
  bool drop = false;
  // Stop at the first document that fails to insert (--stopOnError);
  // otherwise such documents (duplicate _id, validation) are counted.
  bool stop_on_error = false;
  // Do not restore indexes (--noIndexRestore).
  bool no_index_restore = false;
  // Rewrite legacy index specifications (v:1, key values such as true or
  // "", options MongoDB no longer knows) as mongorestore's
  // --convertLegacyIndexes does; without it they are errors.
  bool convert_legacy_indexes = false;
  // Give each restored collection the UUID its metadata names
  // (--preserveUUID; needs `drop`), instead of a new one.
  bool preserve_uuid = false;
  // --nsFrom/--nsTo pairs, applied after `ns` selects by the dump's names.
  std::vector<NamespaceRename> renames;
  std::ostream* log = nullptr;
  // Progress lines while it runs; off by default.
  ProgressOptions progress;
};

struct RestoreReport {
  int64_t collections = 0;
  int64_t documents_restored = 0;
  int64_t documents_failed = 0;
  // One line per failed document or collection ("test.foo: E11000 ...").
  std::vector<std::string> failures;
};

// Restores what a dump holds. A file that is unreadable or malformed
// anywhere in it is returned, naming the file and position, before any
// collection changes. An error found only while building a collection (an
// index that cannot be built, options rockdoc does not support) leaves that
// collection unchanged, and collections restored before it stay restored,
// as with mongorestore. The oplog of a mongodump --oplog dump is skipped (it
// would be replayed only with --oplogReplay, which rockdoc does not support).
StatusOr<RestoreReport> Restore(const Client& client, const RestoreOptions& options);

enum class ExportType { kJson, kCsv, kTsv };

struct ExportOptions {
  std::string db;
  std::string collection;
  // --query, --fields (a projection for JSON, the columns for CSV),
  // --sort, --skip, --limit.
  Document query;
  std::vector<std::string> fields;
  Document sort;
  int64_t skip = 0;
  int64_t limit = 0;
  ExportType type = ExportType::kJson;
  JsonFormat json_format = JsonFormat::kRelaxed;  // --jsonFormat
  bool json_array = false;                        // --jsonArray
  bool pretty = false;                            // --pretty
  bool no_header_line = false;                    // --noHeaderLine (CSV)
  // --out: "" or "-" is stdout.
  std::string out;
  std::ostream* log = nullptr;
  // Progress lines while it runs; off by default.
  ProgressOptions progress;
};

// Exports one collection as mongoexport does: JSON lines (relaxed Extended
// JSON v2 by default), a JSON array, or CSV/TSV with mongoexport's value
// formatting. Reads one snapshot. Returns the number of documents.
StatusOr<int64_t> Export(const Client& client, const ExportOptions& options);

enum class ImportMode { kInsert, kUpsert, kMerge, kDelete };
enum class ParseGrace { kAutoCast, kSkipField, kSkipRow, kStop };

struct ImportOptions {
  std::string db;
  std::string collection;
  // --file: "" or "-" is stdin.
  std::string file;
  ExportType type = ExportType::kJson;
  bool json_array = false;
  // --legacy: Extended JSON v1 as the mongo shell writes it (ObjectId("..."),
  // ISODate(...), NumberLong(...), /regex/, single quotes, unquoted keys).
  bool legacy = false;
  // CSV/TSV columns: --fields / --fieldFile, or --headerline.
  std::vector<std::string> fields;
  bool header_line = false;
  bool columns_have_types = false;
  ParseGrace parse_grace = ParseGrace::kStop;
  bool ignore_blanks = false;
  ImportMode mode = ImportMode::kInsert;
  std::vector<std::string> upsert_fields;  // default: _id
  bool drop = false;
  bool stop_on_error = false;
  bool maintain_insertion_order = false;
  std::ostream* log = nullptr;
  // Progress lines while it runs; off by default.
  ProgressOptions progress;
};

struct ImportReport {
  int64_t imported = 0;
  int64_t failed = 0;
  // "file:line: reason", one per failed document.
  std::vector<std::string> failures;
};

// Imports JSON (Extended JSON v2, and the v1 forms mongoimport reads) as a
// stream of documents separated by white space or as one array, or CSV/TSV,
// into one collection. Input that cannot be parsed is an error naming the
// file and line before anything is written: the whole input is parsed
// first, into a temporary file ($TMPDIR), so memory holds one record (a
// document's JSON text, at most 128 MiB, and its converted copies) and one
// batch, never the input. Documents that fail to write
// (duplicate _id, validation) are counted, or stop the import with
// stop_on_error.
StatusOr<ImportReport> Import(const Client& client, const ImportOptions& options);

}  // namespace rockdoc::tools

#endif  // ROCKDOC_TOOLS_H_
