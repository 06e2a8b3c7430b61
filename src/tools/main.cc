// The programs' mains: flags decoded from one table per program, then one
// library call (rockdoc/tools.h).
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <iostream>

#include "common/option_table.h"
#include "rockdoc/c.h"
#include "rockdoc/json.h"
#include "tools/flags.h"
#include "tools/formats.h"
#include "tools/streams.h"
#include "rockdoc/advisor.h"
#include "rockdoc/tools.h"
#include "tools/mains.h"

namespace rockdoc::tools {
namespace {

constexpr int kExitFailure = 1;
constexpr int kExitBadOptions = 3;  // mongo-tools' exit status for option errors
constexpr int kExitFindings = 2;    // rockdoc-advise: findings at or above --failOn

using internal::OptionField;

Status String(const Element& e, std::string* out) {
  if (!e.IsString()) return BadValue("expected a value");
  *out = std::string(e.String());
  return Status::OK();
}

// What every program shares.
struct Common {
  std::string dbpath;
  std::string encryption_key_file;  // --encryptionKeyFile: an encrypted directory's key
  bool help = false;
  bool version = false;
  bool quiet = false;
};

StatusOr<Document> ParseQuery(const std::string& text) {
  auto q = FromJson(text);
  if (!q.ok()) {
    return BadValue("error parsing query as Extended JSON: " + std::string(q.status().message()));
  }
  return q;
}

template <typename Config, size_t N>
Status DecodeFlags(const ParsedFlags& parsed, const OptionField<Config> (&table)[N], Config* config) {
  return internal::DecodeValidatedOptions(
      parsed.flags.view(), table, config,
      [](std::string_view name) {
        return BadValue("error parsing command line options: unknown option \"--" +
                        std::string(name) + "\"");
      },
      [](std::string_view name) {
        return Status(ErrorCode::kNotImplemented,
                      "the option --" + std::string(name) + " is not supported by rockdoc");
      });
}

// Opens the database directory; it must exist (a dump of a missing
// directory would otherwise create an empty database).
StatusOr<std::unique_ptr<Client>> OpenClient(const Common& common, bool create) {
  const std::string& dbpath = common.dbpath;
  if (dbpath.empty()) return BadValue("--dbpath is required: the rockdoc database directory");
  ClientOptions options;
  if (!common.encryption_key_file.empty()) {
    ROCKDOC_ASSIGN_OR_RETURN(options.encryption_key,
                             EncryptionKeyFromFile(common.encryption_key_file));
  }
  options.create_if_missing = create;
  options.ttl_monitor_period_ms = 0;  // a tool must not delete documents behind its reader
  // The readers' reads (dump, export, the advisor's) are not the
  // application's workload: they leave the query statistics (the advisor's
  // evidence) as they were. The writers (restore, import) keep the
  // statistics of what they write (document sizes, growth warnings).
  options.collect_statistics = create;
  // The readers (dump, export, the advisor) open read-only, so that they
  // work beside the directory's owner (an application, rockdoc-serve):
  // ClientOptions::read_only.
  options.read_only = !create;
  return Client::Open(dbpath, options);
}

// ---- rockdoc-dump ----

struct DumpConfig {
  Common common;
  DumpOptions options;
  std::string query;
};

// A flag without a value that sets `member` of the program's config.
#define ROCKDOC_TRUE_FLAG(Config, flag, member)     \
  {                                                 \
    flag, [](const Element&, Config* c) {           \
      c->member = true;                             \
      return Status::OK();                          \
    }                                               \
  }

#define ROCKDOC_COMMON_FLAGS(Config)                                                       \
  {"dbpath", [](const Element& e, Config* c) { return String(e, &c->common.dbpath); }},    \
      {"encryptionKeyFile",                                                                \
       [](const Element& e, Config* c) { return String(e, &c->common.encryption_key_file); }}, \
      {"help", [](const Element&, Config* c) { c->common.help = true; return Status::OK(); }}, \
      {"version",                                                                          \
       [](const Element&, Config* c) {                                                     \
         c->common.version = true;                                                         \
         return Status::OK();                                                              \
       }},                                                                                 \
      {"quiet", [](const Element&, Config* c) {                                            \
         c->common.quiet = true;                                                           \
         return Status::OK();                                                              \
       }},                                                                                 \
      {"verbose", nullptr}, {"host", nullptr}, {"port", nullptr}, {"uri", nullptr},        \
      {"username", nullptr}, {"password", nullptr}, {"authenticationDatabase", nullptr},   \
      {"authenticationMechanism", nullptr}, {"ssl", nullptr}, {"tls", nullptr}

const std::vector<FlagSpec> kCommonSpecs = {
    {"dbpath", 0, FlagArity::kRequired, "DIR|the rockdoc database directory"},
    {"encryptionKeyFile", 0, FlagArity::kRequired,
     "FILE|an encrypted directory's key, as mongod's: the base64 of 32 bytes"},
    {"help", 'h', FlagArity::kNone, "|this text"},
    {"version", 0, FlagArity::kNone, "|the version of rockdoc"},
    {"quiet", 0, FlagArity::kNone, "|no log lines"},
    {"verbose", 'v', FlagArity::kOptional},
    {"host", 0, FlagArity::kRequired},
    {"port", 0, FlagArity::kRequired},
    {"uri", 0, FlagArity::kRequired},
    {"username", 'u', FlagArity::kRequired},
    {"password", 'p', FlagArity::kRequired},
    {"authenticationDatabase", 0, FlagArity::kRequired},
    {"authenticationMechanism", 0, FlagArity::kRequired},
    {"ssl", 0, FlagArity::kNone},
    {"tls", 0, FlagArity::kNone},
};

std::vector<FlagSpec> With(std::vector<FlagSpec> more) {
  std::vector<FlagSpec> all = kCommonSpecs;
  all.insert(all.end(), more.begin(), more.end());
  return all;
}

constexpr OptionField<DumpConfig> kDumpFlags[] = {
    ROCKDOC_COMMON_FLAGS(DumpConfig),
    {"db", [](const Element& e, DumpConfig* c) { return String(e, &c->options.ns.db); }},
    {"collection",
     [](const Element& e, DumpConfig* c) { return String(e, &c->options.ns.collection); }},
    {"query", [](const Element& e, DumpConfig* c) { return String(e, &c->query); }},
    {"out", [](const Element& e, DumpConfig* c) { return String(e, &c->options.out); }},
    {"archive",
     [](const Element& e, DumpConfig* c) {
       std::string v;
       ROCKDOC_RETURN_IF_ERROR(String(e, &v));
       c->options.archive = v;
       return Status::OK();
     }},
    ROCKDOC_TRUE_FLAG(DumpConfig, "gzip", options.gzip),
    {"nsInclude",
     [](const Element& e, DumpConfig* c) {
       c->options.ns.include.emplace_back();
       return String(e, &c->options.ns.include.back());
     }},
    {"nsExclude",
     [](const Element& e, DumpConfig* c) {
       c->options.ns.exclude.emplace_back();
       return String(e, &c->options.ns.exclude.back());
     }},
    {"excludeCollection",
     [](const Element& e, DumpConfig* c) {
       std::string v;
       ROCKDOC_RETURN_IF_ERROR(String(e, &v));
       std::string escaped;
       for (char ch : v) {
         if (ch == '*' || ch == '\\') escaped.push_back('\\');
         escaped.push_back(ch);
       }
       c->options.ns.exclude.push_back("*." + escaped);
       return Status::OK();
     }},
    {"excludeCollectionsWithPrefix",
     [](const Element& e, DumpConfig* c) {
       std::string v;
       ROCKDOC_RETURN_IF_ERROR(String(e, &v));
       std::string escaped;
       for (char ch : v) {
         if (ch == '*' || ch == '\\') escaped.push_back('\\');
         escaped.push_back(ch);
       }
       c->options.ns.exclude.push_back("*." + escaped + "*");
       return Status::OK();
     }},
    {"queryFile", nullptr},
    {"readPreference", nullptr},
    {"oplog", nullptr},
    {"dumpDbUsersAndRoles", nullptr},
    {"numParallelCollections", nullptr},
    {"viewsAsCollections", nullptr},
    {"forceTableScan", nullptr},
};

const std::vector<FlagSpec> kDumpSpecs = With({
    {"db", 'd', FlagArity::kRequired, "NAME|the database to dump (default: every database)"},
    {"collection", 'c', FlagArity::kRequired, "NAME|the collection to dump (needs --db)"},
    {"query", 'q', FlagArity::kRequired,
     "JSON|only the documents that match this filter (Extended JSON; needs --collection)"},
    {"out", 'o', FlagArity::kRequired,
     "DIR|the directory to write (default ./dump; - writes one collection to stdout)"},
    {"archive", 0, FlagArity::kOptional,
     "[=FILE]|one archive file instead of a directory (stdout without =FILE)"},
    {"gzip", 0, FlagArity::kNone, "|compress every file (or the archive) with gzip"},
    {"nsInclude", 0, FlagArity::kRequired,
     "PATTERN|dump the namespaces that match (db.collection, * wildcards; repeatable)"},
    {"nsExclude", 0, FlagArity::kRequired, "PATTERN|skip the namespaces that match (repeatable)"},
    {"excludeCollection", 0, FlagArity::kRequired, "NAME|skip this collection (repeatable)"},
    {"excludeCollectionsWithPrefix", 0, FlagArity::kRequired,
     "PREFIX|skip the collections whose names start so (repeatable)"},
    {"queryFile", 0, FlagArity::kRequired},
    {"readPreference", 0, FlagArity::kRequired},
    {"oplog", 0, FlagArity::kNone},
    {"dumpDbUsersAndRoles", 0, FlagArity::kNone},
    {"numParallelCollections", 'j', FlagArity::kRequired},
    {"viewsAsCollections", 0, FlagArity::kNone},
    {"forceTableScan", 0, FlagArity::kNone},
});

// ---- rockdoc-restore ----

struct RestoreConfig {
  Common common;
  RestoreOptions options;
  bool dir_given = false;
  std::vector<std::string> ns_from;  // paired in order into options.renames
  std::vector<std::string> ns_to;
};

constexpr OptionField<RestoreConfig> kRestoreFlags[] = {
    ROCKDOC_COMMON_FLAGS(RestoreConfig),
    {"db", [](const Element& e, RestoreConfig* c) { return String(e, &c->options.ns.db); }},
    {"collection",
     [](const Element& e, RestoreConfig* c) { return String(e, &c->options.ns.collection); }},
    {"dir",
     [](const Element& e, RestoreConfig* c) {
       c->dir_given = true;
       return String(e, &c->options.dir);
     }},
    {"archive",
     [](const Element& e, RestoreConfig* c) {
       std::string v;
       ROCKDOC_RETURN_IF_ERROR(String(e, &v));
       c->options.archive = v;
       return Status::OK();
     }},
    ROCKDOC_TRUE_FLAG(RestoreConfig, "gzip", options.gzip),
    ROCKDOC_TRUE_FLAG(RestoreConfig, "drop", options.drop),
    ROCKDOC_TRUE_FLAG(RestoreConfig, "stopOnError", options.stop_on_error),
    ROCKDOC_TRUE_FLAG(RestoreConfig, "noIndexRestore", options.no_index_restore),
    ROCKDOC_TRUE_FLAG(RestoreConfig, "convertLegacyIndexes", options.convert_legacy_indexes),
    {"maintainInsertionOrder",
     // What the flag asks for is rockdoc-restore's only way: one writer
     // inserting every collection's documents in file order.
     [](const Element&, RestoreConfig*) { return Status::OK(); }},
    {"nsInclude",
     [](const Element& e, RestoreConfig* c) {
       c->options.ns.include.emplace_back();
       return String(e, &c->options.ns.include.back());
     }},
    {"nsExclude",
     [](const Element& e, RestoreConfig* c) {
       c->options.ns.exclude.emplace_back();
       return String(e, &c->options.ns.exclude.back());
     }},
    {"nsFrom",
     [](const Element& e, RestoreConfig* c) {
       c->ns_from.emplace_back();
       return String(e, &c->ns_from.back());
     }},
    {"nsTo",
     [](const Element& e, RestoreConfig* c) {
       c->ns_to.emplace_back();
       return String(e, &c->ns_to.back());
     }},
    {"objcheck", nullptr},
    {"oplogReplay", nullptr},
    {"oplogLimit", nullptr},
    {"oplogFile", nullptr},
    {"restoreDbUsersAndRoles", nullptr},
    {"dryRun", nullptr},
    {"writeConcern", nullptr},
    {"noOptionsRestore", nullptr},
    {"keepIndexVersion", nullptr},
    {"numParallelCollections", nullptr},
    {"numInsertionWorkersPerCollection", nullptr},
    {"bypassDocumentValidation", nullptr},
    ROCKDOC_TRUE_FLAG(RestoreConfig, "preserveUUID", options.preserve_uuid),
    {"fixDottedHashIndex", nullptr},
};

const std::vector<FlagSpec> kRestoreSpecs = With({
    {"db", 'd', FlagArity::kRequired,
     "NAME|restore only this database (or into it, from one database's directory)"},
    {"collection", 'c', FlagArity::kRequired,
     "NAME|restore only this collection (or into it, from one .bson file)"},
    {"dir", 0, FlagArity::kRequired,
     "DIR|the dump directory, a database's directory or one .bson file (- reads stdin)"},
    {"archive", 0, FlagArity::kOptional, "[=FILE]|read an archive file (stdin without =FILE)"},
    {"gzip", 0, FlagArity::kNone, "|the input is gzip-compressed"},
    {"drop", 0, FlagArity::kNone, "|replace each collection instead of adding to it"},
    {"stopOnError", 0, FlagArity::kNone, "|stop at the first document that fails to insert"},
    {"noIndexRestore", 0, FlagArity::kNone, "|do not create the dump's indexes"},
    {"convertLegacyIndexes", 0, FlagArity::kNone,
     "|rewrite index options MongoDB no longer accepts"},
    {"maintainInsertionOrder", 0, FlagArity::kNone,
     "|insert in file order (rockdoc-restore always does)"},
    {"nsInclude", 0, FlagArity::kRequired,
     "PATTERN|restore the namespaces that match (repeatable)"},
    {"nsExclude", 0, FlagArity::kRequired, "PATTERN|skip the namespaces that match (repeatable)"},
    {"nsFrom", 0, FlagArity::kRequired,
     "PATTERN|rename from this namespace pattern (paired with --nsTo, in order)"},
    {"nsTo", 0, FlagArity::kRequired, "PATTERN|rename to this namespace pattern"},
    {"objcheck", 0, FlagArity::kNone},
    {"oplogReplay", 0, FlagArity::kNone},
    {"oplogLimit", 0, FlagArity::kRequired},
    {"oplogFile", 0, FlagArity::kRequired},
    {"restoreDbUsersAndRoles", 0, FlagArity::kNone},
    {"dryRun", 0, FlagArity::kNone},
    {"writeConcern", 0, FlagArity::kRequired},
    {"noOptionsRestore", 0, FlagArity::kNone},
    {"keepIndexVersion", 0, FlagArity::kNone},
    {"numParallelCollections", 'j', FlagArity::kRequired},
    {"numInsertionWorkersPerCollection", 0, FlagArity::kRequired},
    {"bypassDocumentValidation", 0, FlagArity::kNone},
    {"preserveUUID", 0, FlagArity::kNone,
     "|keep the collections' UUIDs from the dump (needs --drop)"},
    {"fixDottedHashIndex", 0, FlagArity::kNone},
});

// ---- rockdoc-export and rockdoc-import ----

std::vector<std::string> SplitFields(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string f = text.substr(start, comma - start);
    while (!f.empty() && f.front() == ' ') f.erase(f.begin());
    while (!f.empty() && f.back() == ' ') f.pop_back();
    if (!f.empty()) out.push_back(f);
    start = comma + 1;
  }
  return out;
}

// --fieldFile: one field name per line.
StatusOr<std::vector<std::string>> ReadFieldFile(const std::string& path) {
  auto in = OpenInput(path, false);
  if (!in.ok()) return in.status();
  ROCKDOC_ASSIGN_OR_RETURN(std::string text, ReadAll(in->get()));
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    std::string f = text.substr(start, nl - start);
    if (!f.empty() && f.back() == '\r') f.pop_back();
    if (!f.empty()) out.push_back(f);
    start = nl + 1;
  }
  return out;
}

Status ParseType(const Element& e, ExportType* type) {
  std::string v;
  ROCKDOC_RETURN_IF_ERROR(String(e, &v));
  if (v == "json") {
    *type = ExportType::kJson;
  } else if (v == "csv") {
    *type = ExportType::kCsv;
  } else if (v == "tsv") {
    *type = ExportType::kTsv;
  } else {
    return BadValue("unknown type " + v);
  }
  return Status::OK();
}

Status ParseInt(const Element& e, int64_t* out, const char* flag) {
  std::string v;
  ROCKDOC_RETURN_IF_ERROR(String(e, &v));
  char* end = nullptr;
  errno = 0;
  long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0) {
    return BadValue(std::string("invalid value for --") + flag + ": " + v);
  }
  *out = n;
  return Status::OK();
}

struct ExportConfig {
  Common common;
  ExportOptions options;
  std::string query, sort, fields, field_file;
};

constexpr OptionField<ExportConfig> kExportFlags[] = {
    ROCKDOC_COMMON_FLAGS(ExportConfig),
    {"db", [](const Element& e, ExportConfig* c) { return String(e, &c->options.db); }},
    {"collection",
     [](const Element& e, ExportConfig* c) { return String(e, &c->options.collection); }},
    {"fields", [](const Element& e, ExportConfig* c) { return String(e, &c->fields); }},
    {"fieldFile", [](const Element& e, ExportConfig* c) { return String(e, &c->field_file); }},
    {"query", [](const Element& e, ExportConfig* c) { return String(e, &c->query); }},
    {"type", [](const Element& e, ExportConfig* c) { return ParseType(e, &c->options.type); }},
    {"out", [](const Element& e, ExportConfig* c) { return String(e, &c->options.out); }},
    {"jsonFormat",
     [](const Element& e, ExportConfig* c) {
       std::string v;
       ROCKDOC_RETURN_IF_ERROR(String(e, &v));
       if (v == "relaxed") {
         c->options.json_format = JsonFormat::kRelaxed;
       } else if (v == "canonical") {
         c->options.json_format = JsonFormat::kCanonical;
       } else {
         return BadValue("invalid --jsonFormat '" + v + "': choose relaxed or canonical");
       }
       return Status::OK();
     }},
    ROCKDOC_TRUE_FLAG(ExportConfig, "jsonArray", options.json_array),
    ROCKDOC_TRUE_FLAG(ExportConfig, "pretty", options.pretty),
    ROCKDOC_TRUE_FLAG(ExportConfig, "noHeaderLine", options.no_header_line),
    {"sort", [](const Element& e, ExportConfig* c) { return String(e, &c->sort); }},
    {"skip", [](const Element& e, ExportConfig* c) { return ParseInt(e, &c->options.skip, "skip"); }},
    {"limit",
     [](const Element& e, ExportConfig* c) { return ParseInt(e, &c->options.limit, "limit"); }},
    {"queryFile", nullptr},
    {"readPreference", nullptr},
    {"forceTableScan", nullptr},
};

const std::vector<FlagSpec> kExportSpecs = With({
    {"db", 'd', FlagArity::kRequired, "NAME|the database (default test)"},
    {"collection", 'c', FlagArity::kRequired, "NAME|the collection to export"},
    {"fields", 'f', FlagArity::kRequired, "A,B|the fields to export (CSV needs them)"},
    {"fieldFile", 0, FlagArity::kRequired, "FILE|the fields to export, one per line"},
    {"query", 'q', FlagArity::kRequired,
     "JSON|only the documents that match this filter (Extended JSON)"},
    {"type", 0, FlagArity::kRequired, "json|csv|tsv|the output format (default json)"},
    {"out", 'o', FlagArity::kRequired, "FILE|the output file (default stdout)"},
    {"jsonFormat", 0, FlagArity::kRequired,
     "relaxed|canonical|the Extended JSON mode (default relaxed)"},
    {"jsonArray", 0, FlagArity::kNone, "|one JSON array instead of a document per line"},
    {"pretty", 0, FlagArity::kNone, "|indented JSON"},
    {"noHeaderLine", 0, FlagArity::kNone, "|CSV/TSV without the line of field names"},
    {"sort", 0, FlagArity::kRequired, "JSON|the order of the documents"},
    {"skip", 0, FlagArity::kRequired, "N|skip the first N documents"},
    {"limit", 0, FlagArity::kRequired, "N|export at most N documents"},
    {"queryFile", 0, FlagArity::kRequired},
    {"readPreference", 0, FlagArity::kRequired},
    {"forceTableScan", 0, FlagArity::kNone},
});

struct ImportConfig {
  Common common;
  ImportOptions options;
  std::string fields, field_file, upsert_fields;
  bool file_given = false;
};

constexpr OptionField<ImportConfig> kImportFlags[] = {
    ROCKDOC_COMMON_FLAGS(ImportConfig),
    {"db", [](const Element& e, ImportConfig* c) { return String(e, &c->options.db); }},
    {"collection",
     [](const Element& e, ImportConfig* c) { return String(e, &c->options.collection); }},
    {"file",
     [](const Element& e, ImportConfig* c) {
       c->file_given = true;
       return String(e, &c->options.file);
     }},
    {"fields", [](const Element& e, ImportConfig* c) { return String(e, &c->fields); }},
    {"fieldFile", [](const Element& e, ImportConfig* c) { return String(e, &c->field_file); }},
    {"type", [](const Element& e, ImportConfig* c) { return ParseType(e, &c->options.type); }},
    ROCKDOC_TRUE_FLAG(ImportConfig, "headerline", options.header_line),
    ROCKDOC_TRUE_FLAG(ImportConfig, "jsonArray", options.json_array),
    ROCKDOC_TRUE_FLAG(ImportConfig, "columnsHaveTypes", options.columns_have_types),
    ROCKDOC_TRUE_FLAG(ImportConfig, "ignoreBlanks", options.ignore_blanks),
    ROCKDOC_TRUE_FLAG(ImportConfig, "drop", options.drop),
    ROCKDOC_TRUE_FLAG(ImportConfig, "stopOnError", options.stop_on_error),
    ROCKDOC_TRUE_FLAG(ImportConfig, "maintainInsertionOrder", options.maintain_insertion_order),
    {"parseGrace",
     [](const Element& e, ImportConfig* c) {
       std::string v;
       ROCKDOC_RETURN_IF_ERROR(String(e, &v));
       if (v == "autoCast") {
         c->options.parse_grace = ParseGrace::kAutoCast;
       } else if (v == "skipField") {
         c->options.parse_grace = ParseGrace::kSkipField;
       } else if (v == "skipRow") {
         c->options.parse_grace = ParseGrace::kSkipRow;
       } else if (v == "stop") {
         c->options.parse_grace = ParseGrace::kStop;
       } else {
         return BadValue("invalid --parseGrace '" + v + "'");
       }
       return Status::OK();
     }},
    {"mode",
     [](const Element& e, ImportConfig* c) {
       std::string v;
       ROCKDOC_RETURN_IF_ERROR(String(e, &v));
       if (v == "insert") {
         c->options.mode = ImportMode::kInsert;
       } else if (v == "upsert") {
         c->options.mode = ImportMode::kUpsert;
       } else if (v == "merge") {
         c->options.mode = ImportMode::kMerge;
       } else if (v == "delete") {
         c->options.mode = ImportMode::kDelete;
       } else {
         return BadValue("invalid --mode '" + v + "': choose insert, upsert, merge or delete");
       }
       return Status::OK();
     }},
    {"upsertFields", [](const Element& e, ImportConfig* c) { return String(e, &c->upsert_fields); }},
    {"numInsertionWorkers", nullptr},
    {"writeConcern", nullptr},
    {"bypassDocumentValidation", nullptr},
    ROCKDOC_TRUE_FLAG(ImportConfig, "legacy", options.legacy),
    {"useArrayIndexFields", nullptr},
    {"upsert", nullptr},
};

const std::vector<FlagSpec> kImportSpecs = With({
    {"db", 'd', FlagArity::kRequired, "NAME|the database (default test)"},
    {"collection", 'c', FlagArity::kRequired, "NAME|the collection (default: the file's name)"},
    {"file", 0, FlagArity::kRequired, "FILE|the input file (default stdin)"},
    {"fields", 'f', FlagArity::kRequired, "A,B|the CSV/TSV field names, in column order"},
    {"fieldFile", 0, FlagArity::kRequired, "FILE|the CSV/TSV field names, one per line"},
    {"type", 0, FlagArity::kRequired, "json|csv|tsv|the input format (default json)"},
    {"headerline", 0, FlagArity::kNone, "|the first CSV/TSV line names the fields"},
    {"jsonArray", 0, FlagArity::kNone, "|the input is one JSON array"},
    {"columnsHaveTypes", 0, FlagArity::kNone,
     "|CSV/TSV field names carry types: name.int32(), name.decimal(), ..."},
    {"ignoreBlanks", 0, FlagArity::kNone, "|leave out the fields of empty CSV/TSV cells"},
    {"drop", 0, FlagArity::kNone, "|drop the collection first"},
    {"stopOnError", 0, FlagArity::kNone, "|stop at the first document that fails"},
    {"maintainInsertionOrder", 0, FlagArity::kNone,
     "|insert in input order, one failure at a time"},
    {"parseGrace", 0, FlagArity::kRequired,
     "autoCast|skipField|skipRow|stop|what a typed cell that does not parse does"},
    {"mode", 0, FlagArity::kRequired,
     "insert|upsert|merge|delete|how documents are written (default insert)"},
    {"upsertFields", 0, FlagArity::kRequired,
     "A,B|the fields that match documents for --mode upsert, merge, delete"},
    {"numInsertionWorkers", 'j', FlagArity::kRequired},
    {"writeConcern", 0, FlagArity::kRequired},
    {"bypassDocumentValidation", 0, FlagArity::kNone},
    {"legacy", 0, FlagArity::kNone, "|the input is Extended JSON v1 (the legacy shell's)"},
    {"useArrayIndexFields", 0, FlagArity::kNone},
    {"upsert", 0, FlagArity::kNone},
});

// Parses and decodes; on --help/--version or an error prints and returns
// the exit status to use.
template <typename Config, size_t N>
std::optional<int> Prepare(const char* program, std::string_view synopsis, int argc,
                           const char* const* argv, const std::vector<FlagSpec>& specs,
                           const OptionField<Config> (&table)[N], Config* config,
                           std::vector<std::string>* positional, std::ostream& err) {
  auto parsed = ParseFlags(argc, argv, specs);
  Status st = parsed.ok() ? DecodeFlags(*parsed, table, config) : parsed.status();
  if (!st.ok()) {
    err << program << ": " << st.message() << "\ntry '" << program
        << " --help' for more information\n";
    return kExitBadOptions;
  }
  // On stdout, as mongo-tools, the shell, rockdoc-serve and rockdoc-lab.
  if (config->common.help) {
    std::cout << "Usage: " << program << " " << synopsis << "\n"
              << "Flags (mongo-tools' names; a flag's value follows it or an '='; the other "
                 "flags of mongo-tools are refused as not supported):\n"
              << FlagHelp(specs);
    return 0;
  }
  if (config->common.version) {
    std::cout << program << " version: " << rockdoc_version() << "\n";
    return 0;
  }
  *positional = parsed->positional;
  return std::nullopt;
}

}  // namespace

// The end every program shares: the log and the progress lines set as
// mongo-tools set them (progress only on a terminal), the directory opened,
// the operation run (`run` returns the exit code, or a failure to report).
template <typename ToolOptions, typename Run>
int RunTool(const char* program, const Common& common, ToolOptions* options, bool create,
            std::ostream& err, const Run& run) {
  if (!common.quiet) options->log = &err;
  if (!common.quiet && isatty(STDERR_FILENO)) options->progress.out = &err;
  auto client = OpenClient(common, create);
  if (!client.ok()) {
    err << program << ": Failed: " << client.status() << "\n";
    return kExitFailure;
  }
  StatusOr<int> exit = run(**client);
  if (!exit.ok()) {
    err << LogTimestamp() << "\tFailed: " << exit.status() << "\n";
    return kExitFailure;
  }
  return *exit;
}

int DumpMain(int argc, const char* const* argv, std::ostream& err) {
  DumpConfig config;
  std::vector<std::string> positional;
  if (auto exit = Prepare("rockdoc-dump", "--dbpath DIR [flags]", argc, argv, kDumpSpecs,
                          kDumpFlags, &config, &positional, err)) {
    return *exit;
  }
  if (!positional.empty()) {
    err << "rockdoc-dump: error parsing positional arguments: unexpected \"" << positional[0]
        << "\"\n";
    return kExitBadOptions;
  }
  if (!config.query.empty()) {
    auto q = ParseQuery(config.query);
    if (!q.ok()) {
      err << "rockdoc-dump: " << q.status().message() << "\n";
      return kExitBadOptions;
    }
    config.options.query = *std::move(q);
  }
  return RunTool("rockdoc-dump", config.common, &config.options, /*create=*/false, err,
                 [&](const Client& client) -> StatusOr<int> {
                   ROCKDOC_RETURN_IF_ERROR(Dump(client, config.options).status());
                   return 0;
                 });
}

int RestoreMain(int argc, const char* const* argv, std::ostream& err) {
  RestoreConfig config;
  std::vector<std::string> positional;
  if (auto exit = Prepare("rockdoc-restore", "--dbpath DIR [flags] [DUMP_DIR | FILE.bson]", argc,
                          argv, kRestoreSpecs, kRestoreFlags, &config, &positional, err)) {
    return *exit;
  }
  if (positional.size() > 1 || (positional.size() == 1 && config.dir_given)) {
    err << "rockdoc-restore: error parsing positional arguments: provide only one file or "
           "directory\n";
    return kExitBadOptions;
  }
  if (positional.size() == 1) config.options.dir = positional[0];
  if (config.ns_from.size() != config.ns_to.size()) {
    err << "rockdoc-restore: error parsing options: --nsFrom and --nsTo arguments must be "
           "specified an equal number of times\n";
    return kExitBadOptions;
  }
  for (size_t i = 0; i < config.ns_from.size(); ++i) {
    config.options.renames.push_back({config.ns_from[i], config.ns_to[i]});
  }
  return RunTool("rockdoc-restore", config.common, &config.options, /*create=*/true, err,
                 [&](const Client& client) -> StatusOr<int> {
                   ROCKDOC_RETURN_IF_ERROR(Restore(client, config.options).status());
                   return 0;
                 });
}

}  // namespace rockdoc::tools

namespace rockdoc::tools {

int ExportMain(int argc, const char* const* argv, std::ostream& err) {
  ExportConfig config;
  std::vector<std::string> positional;
  if (auto exit = Prepare("rockdoc-export", "--dbpath DIR --collection NAME [flags]", argc, argv,
                          kExportSpecs, kExportFlags, &config, &positional, err)) {
    return *exit;
  }
  auto bad = [&](const std::string& message) {
    err << "rockdoc-export: " << message << "\n";
    return kExitBadOptions;
  };
  if (!positional.empty()) return bad("unexpected positional argument \"" + positional[0] + "\"");
  if (!config.fields.empty() && !config.field_file.empty()) {
    return bad("cannot use both --fields and --fieldFile");
  }
  config.options.fields = SplitFields(config.fields);
  if (!config.field_file.empty()) {
    auto f = ReadFieldFile(config.field_file);
    if (!f.ok()) return bad(std::string(f.status().message()));
    config.options.fields = *f;
  }
  for (auto [text, target] : {std::pair{&config.query, &config.options.query},
                              std::pair{&config.sort, &config.options.sort}}) {
    if (text->empty()) continue;
    auto q = ParseQuery(*text);
    if (!q.ok()) return bad(std::string(q.status().message()));
    *target = *std::move(q);
  }
  return RunTool("rockdoc-export", config.common, &config.options, /*create=*/false, err,
                 [&](const Client& client) -> StatusOr<int> {
                   ROCKDOC_RETURN_IF_ERROR(Export(client, config.options).status());
                   return 0;
                 });
}

int ImportMain(int argc, const char* const* argv, std::ostream& err) {
  ImportConfig config;
  std::vector<std::string> positional;
  if (auto exit = Prepare("rockdoc-import", "--dbpath DIR [flags] [FILE]", argc, argv, kImportSpecs,
                          kImportFlags, &config, &positional, err)) {
    return *exit;
  }
  auto bad = [&](const std::string& message) {
    err << "rockdoc-import: " << message << "\n";
    return kExitBadOptions;
  };
  if (positional.size() > 1 || (positional.size() == 1 && config.file_given)) {
    return bad("error parsing positional arguments: provide only one file name");
  }
  if (positional.size() == 1) config.options.file = positional[0];
  if (!config.fields.empty() && !config.field_file.empty()) {
    return bad("incompatible options: --fields and --fieldFile");
  }
  if ((!config.fields.empty() || !config.field_file.empty()) && config.options.header_line) {
    return bad("incompatible options: --fields/--fieldFile and --headerline");
  }
  config.options.fields = SplitFields(config.fields);
  if (!config.field_file.empty()) {
    auto f = ReadFieldFile(config.field_file);
    if (!f.ok()) return bad(std::string(f.status().message()));
    config.options.fields = *f;
  }
  config.options.upsert_fields = SplitFields(config.upsert_fields);
  if (config.options.collection.empty() && !config.options.file.empty() &&
      config.options.file != "-") {
    // mongoimport's default collection: the file's base name.
    std::string base = config.options.file.substr(config.options.file.find_last_of('/') + 1);
    config.options.collection = base.substr(0, base.find('.'));
  }
  if (config.options.db.empty()) config.options.db = "test";
  return RunTool("rockdoc-import", config.common, &config.options, /*create=*/true, err,
                 [&](const Client& client) -> StatusOr<int> {
                   ROCKDOC_ASSIGN_OR_RETURN(ImportReport report, Import(client, config.options));
                   return report.failed > 0 && config.options.stop_on_error ? kExitFailure : 0;
                 });
}

// ---- rockdoc-advise ----

namespace {

struct AdviseConfig {
  Common common;
  advisor::AdviseOptions options;
  bool json = false;
  std::string fail_on = "warning";
};

constexpr OptionField<AdviseConfig> kAdviseFlags[] = {
    ROCKDOC_COMMON_FLAGS(AdviseConfig),
    {"db",
     [](const Element& e, AdviseConfig* c) {
       c->options.dbs.emplace_back();
       return String(e, &c->options.dbs.back());
     }},
    ROCKDOC_TRUE_FLAG(AdviseConfig, "json", json),
    ROCKDOC_TRUE_FLAG(AdviseConfig, "full", options.full),
    {"sample", [](const Element& e, AdviseConfig* c) { return ParseInt(e, &c->options.sample_size, "sample"); }},
    {"failOn", [](const Element& e, AdviseConfig* c) { return String(e, &c->fail_on); }},
    {"unusedIndexDays",
     [](const Element& e, AdviseConfig* c) {
       ROCKDOC_RETURN_IF_ERROR(ParseInt(e, &c->options.unused_index_days, "unusedIndexDays"));
       if (c->options.unused_index_days < 0) return BadValue("--unusedIndexDays must be 0 or more");
       return Status::OK();
     }},
};

const std::vector<FlagSpec> kAdviseSpecs = With({
    {"db", 'd', FlagArity::kRequired,
     "NAME|advise on this database only (repeatable; default every database)"},
    {"json", 0, FlagArity::kNone, "|the report as one JSON document"},
    {"full", 0, FlagArity::kNone, "|examine every document instead of a sample"},
    {"sample", 0, FlagArity::kRequired, "N|documents sampled per collection (default 1000)"},
    {"failOn", 0, FlagArity::kRequired,
     "info|warning|critical|the exit status is 2 when a finding is this severe (default warning)"},
    {"unusedIndexDays", 0, FlagArity::kRequired,
     "N|an index no query used for N days is unused (default 7; 0: any unused)"},
});

}  // namespace

int AdviseMain(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  AdviseConfig config;
  std::vector<std::string> positional;
  if (auto exit = Prepare("rockdoc-advise", "DIR [flags]  (or --dbpath DIR)", argc, argv,
                          kAdviseSpecs, kAdviseFlags, &config, &positional, err)) {
    return *exit;
  }
  if (positional.size() > 1 || (positional.size() == 1 && !config.common.dbpath.empty())) {
    err << "rockdoc-advise: give the database directory once (DIR or --dbpath)\n";
    return kExitBadOptions;
  }
  if (positional.size() == 1) config.common.dbpath = positional[0];
  auto fail_on = advisor::ParseSeverity(config.fail_on);
  if (!fail_on.ok()) {
    err << "rockdoc-advise: --failOn: " << fail_on.status().message() << "\n";
    return kExitBadOptions;
  }
  if (!config.common.quiet && isatty(STDERR_FILENO)) config.options.progress = &err;
  auto client = OpenClient(config.common, /*create=*/false);
  if (!client.ok()) {
    err << "rockdoc-advise: Failed: " << client.status() << "\n";
    return kExitFailure;
  }
  auto report = advisor::Advise(**client, config.options);
  if (!report.ok()) {
    err << "rockdoc-advise: Failed: " << report.status() << "\n";
    return kExitFailure;
  }
  out << (config.json ? ToJson(advisor::ToDocument(*report), JsonFormat::kRelaxed) + "\n"
                      : advisor::FormatText(*report));
  return report->Any(*fail_on) ? kExitFindings : 0;
}

}  // namespace rockdoc::tools
