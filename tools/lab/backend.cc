#include "backend.h"

#include <absl/strings/str_cat.h>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "rockdoc/client.h"
#include "rockdoc/json.h"

namespace rockdoc::lab {
namespace {

constexpr char kDb[] = "lab";

// ---- rockdoc ----

class RockdocBackend : public Backend {
 public:
  RockdocBackend(std::string dir, int64_t cache_bytes)
      : dir_(std::move(dir)), cache_bytes_(cache_bytes) {}

  Status Open(bool record_statistics = true) {
    ClientOptions options;
    options.collect_statistics = record_statistics;
    // The lab measures documents and indexes, as on a standalone mongod: a
    // replica set's oplog (rockdoc's change log) is a cost of its own.
    options.change_log = false;
    // And what they read from storage: the record cache (issue 36) would
    // serve the repeated point reads of a run from memory, leaving "bytes
    // read per read" at 0 and comparing a cache of decoded documents with
    // SQLite's page cache. Both engines read through their block/page cache.
    options.record_cache_bytes = 0;
    if (cache_bytes_ > 0) options.block_cache_bytes = static_cast<size_t>(cache_bytes_);
    ROCKDOC_ASSIGN_OR_RETURN(client_, Client::Open(dir_, options));
    exec_ = std::make_unique<RockdocExecutor>(client_.get(), kDb);
    return Status::OK();
  }

  EngineKind engine() const override { return EngineKind::kRockdoc; }
  Executor& executor() override { return *exec_; }

  Status Reopen() override {
    ROCKDOC_RETURN_IF_ERROR(Close());
    return Open();
  }
  Status ForgetQueries() override { return client_->ClearQueryStats(); }
  Status ReopenUnrecorded() override {
    ROCKDOC_RETURN_IF_ERROR(Close());
    return Open(/*record_statistics=*/false);
  }

  Status Close() override {
    exec_.reset();
    if (client_ == nullptr) return Status::OK();
    // Close flushes the memtables: what follows reads SST files, and
    // live_sst_bytes then counts everything written.
    Status st = client_->Close();
    client_.reset();
    return st;
  }

  IoCounters Io() const override {
    const StorageStats s = client_->GetStorageStats();
    IoCounters io;
    io.known = true;
    io.bytes_read = s.bytes_read;
    io.bytes_written = s.bytes_written;
    io.wal_bytes = s.wal_bytes;
    return io;
  }

  StatusOr<DocSizes> Sizes() override {
    Database db = client_->GetDatabase(kDb);
    ROCKDOC_ASSIGN_OR_RETURN(std::vector<std::string> names, db.ListCollectionNames());
    DocSizes sizes;
    uint64_t total = 0;
    for (const std::string& name : names) {
      ROCKDOC_ASSIGN_OR_RETURN(Cursor cursor, db.GetCollection(name).Find(Document()));
      while (cursor.Next()) {
        const auto sz = static_cast<int64_t>(cursor.document().size());
        total += sz;
        sizes.max_bytes = std::max(sizes.max_bytes, sz);
        sizes.documents++;
      }
      ROCKDOC_RETURN_IF_ERROR(cursor.status());
    }
    sizes.avg_bytes = sizes.documents > 0 ? static_cast<double>(total) / sizes.documents : 0;
    return sizes;
  }

  StatusOr<uint64_t> DiskBytes() override { return client_->GetStorageStats().live_sst_bytes; }
  Status Compact() override { return client_->Compact(); }

 private:
  std::string dir_;
  int64_t cache_bytes_;  // 0: the default
  std::unique_ptr<Client> client_;
  std::unique_ptr<RockdocExecutor> exec_;
};

// ---- SQLite ----

Status SqliteError(sqlite3* db, std::string_view what) {
  return BadValue(absl::StrCat("sqlite: ", std::string(what), ": ", sqlite3_errmsg(db)));
}

class SqliteExecutor : public Executor {
 public:
  explicit SqliteExecutor(sqlite3* db) : db_(db) {}
  ~SqliteExecutor() override {
    for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
  }

 protected:
  Status RunEngineOp(const std::string& name, DocumentView op, Env& env) override {
    if (name != "sql") {
      return WithContext(BadValue("a sqlite variant runs \"sql\" operations, not \"" + name + "\""),
                         op);
    }
    return WithContext(RunSql(op, env), op);
  }

 private:
  Status RunSql(DocumentView op, Env& env) {
    Element sql_e = op.Get("sql");
    if (sql_e.type() != BsonType::kString) return BadValue("\"sql\" must be a string");
    const std::string sql(sql_e.String());
    const Element params = op.Get("params");
    const Element rows = op.Get("rows");
    if (!params.ok() && !rows.ok() && !op.Get("as").ok()) {
      // A script: several statements, no parameters, no result.
      char* error = nullptr;
      if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
        Status st = BadValue(absl::StrCat("sqlite: ", error != nullptr ? error : "error"));
        sqlite3_free(error);
        return st;
      }
      return Status::OK();
    }
    ROCKDOC_ASSIGN_OR_RETURN(sqlite3_stmt * stmt, Prepare(sql));
    std::set<std::string, std::less<>> json_columns;
    if (Element j = op.Get("json"); j.type() == BsonType::kArray) {
      for (const Element& c : j.Array()) {
        if (c.type() == BsonType::kString) json_columns.emplace(c.String());
      }
    }
    if (!rows.ok()) {
      ROCKDOC_RETURN_IF_ERROR(BindParams(stmt, params, env));
      BsonBuilder out;
      out.OpenArray("v");
      ROCKDOC_RETURN_IF_ERROR(Step(stmt, json_columns, &out));
      out.Close();
      Document d = std::move(out).Build();
      Bind(op, env, Value::FromElement(d.Get("v")));
      return Status::OK();
    }
    // Once per row, in one transaction (as insertMany batches).
    const std::string row_var = op.Get("rowAs").type() == BsonType::kString
                                    ? std::string(op.Get("rowAs").String())
                                    : "this";
    ROCKDOC_RETURN_IF_ERROR(Exec("BEGIN"));
    Status st = ForEachItem(rows, env, [&](const Element& row) -> Status {
      Env inner(&env);
      inner.Set(row_var, Value::FromElement(row));
      ROCKDOC_RETURN_IF_ERROR(BindParams(stmt, params, inner));
      return Step(stmt, json_columns, nullptr);
    });
    if (!st.ok()) {
      Exec("ROLLBACK").IgnoreError();
      return st;
    }
    return Exec("COMMIT");
  }

  Status Exec(const char* sql) {
    if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
      return SqliteError(db_, sql);
    }
    return Status::OK();
  }

  StatusOr<sqlite3_stmt*> Prepare(const std::string& sql) {
    auto it = statements_.find(sql);
    if (it != statements_.end()) return it->second;
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr) !=
        SQLITE_OK) {
      return SqliteError(db_, sql);
    }
    statements_.emplace(sql, stmt);
    return stmt;
  }

  Status BindParams(sqlite3_stmt* stmt, const Element& params, const Env& env) {
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    if (!params.ok()) return Status::OK();
    if (params.type() != BsonType::kArray) return BadValue("\"params\" must be an array");
    int i = 1;
    for (const Element& p : params.Array()) {
      ROCKDOC_ASSIGN_OR_RETURN(Value v, Fill(p, env));
      const Element e = v.element();
      int rc = SQLITE_OK;
      int64_t n = 0;
      switch (e.type()) {
        case BsonType::kInt32:
        case BsonType::kInt64:
          e.ExactInt64(&n);
          rc = sqlite3_bind_int64(stmt, i, n);
          break;
        case BsonType::kDouble: rc = sqlite3_bind_double(stmt, i, e.Double()); break;
        case BsonType::kBool: rc = sqlite3_bind_int(stmt, i, e.Bool() ? 1 : 0); break;
        case BsonType::kNull: rc = sqlite3_bind_null(stmt, i); break;
        case BsonType::kString: {
          const std::string_view s = e.String();
          rc = sqlite3_bind_text(stmt, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
          break;
        }
        default: {
          const std::string json = ValueToJson(e, JsonFormat::kRelaxed);
          rc = sqlite3_bind_text(stmt, i, json.data(), static_cast<int>(json.size()),
                                 SQLITE_TRANSIENT);
        }
      }
      if (rc != SQLITE_OK) return SqliteError(db_, "bind");
      ++i;
    }
    return Status::OK();
  }

  // Steps `stmt` to the end, appending each row as a document to `out`.
  Status Step(sqlite3_stmt* stmt, const std::set<std::string, std::less<>>& json_columns,
              BsonBuilder* out) {
    for (;;) {
      const int rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) {
        Status st = SqliteError(db_, sqlite3_sql(stmt));
        sqlite3_reset(stmt);
        return st;
      }
      if (out == nullptr) continue;
      out->OpenDocument("");
      for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
        const std::string_view name = sqlite3_column_name(stmt, c);
        switch (sqlite3_column_type(stmt, c)) {
          case SQLITE_INTEGER: {
            const int64_t n = sqlite3_column_int64(stmt, c);
            // int32 when it fits, as JSON numbers parse.
            if (n >= INT32_MIN && n <= INT32_MAX) {
              out->AppendInt32(name, static_cast<int32_t>(n));
            } else {
              out->AppendInt64(name, n);
            }
            break;
          }
          case SQLITE_FLOAT: out->AppendDouble(name, sqlite3_column_double(stmt, c)); break;
          case SQLITE_NULL: out->AppendNull(name); break;
          default: {
            const std::string_view text(
                reinterpret_cast<const char*>(sqlite3_column_text(stmt, c)),
                static_cast<size_t>(sqlite3_column_bytes(stmt, c)));
            if (json_columns.count(name) == 0) {
              out->AppendString(name, text);
              break;
            }
            // Any JSON value: parse it as the value of a one-field document.
            StatusOr<Document> parsed = FromJson("{\"v\": " + std::string(text) + "}");
            if (!parsed.ok()) {
              sqlite3_reset(stmt);
              return parsed.status().WithContext("column " + std::string(name));
            }
            out->AppendElementAs(name, parsed->Get("v"));
          }
        }
      }
      out->Close();
    }
    sqlite3_reset(stmt);
    return Status::OK();
  }

  sqlite3* db_;
  std::map<std::string, sqlite3_stmt*, std::less<>> statements_;
};

class SqliteBackend : public Backend {
 public:
  SqliteBackend(const std::string& dir, int64_t cache_bytes)
      : path_(dir + "/lab.sqlite"),
        cache_bytes_(cache_bytes > 0 ? static_cast<size_t>(cache_bytes)
                                     : ClientOptions().block_cache_bytes) {}
  ~SqliteBackend() override { Close().IgnoreError(); }

  Status Open() {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
    if (sqlite3_open(path_.c_str(), &db_) != SQLITE_OK) {
      Status st = SqliteError(db_, "open " + path_);
      sqlite3_close(db_);
      db_ = nullptr;
      return st;
    }
    // The durability of rockdoc's default (a write-ahead log, not synced on
    // every commit) and a page cache of the size of rockdoc's block cache.
    const std::string pragmas = absl::StrCat(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -",
        std::max<size_t>(1, cache_bytes_ / 1024), ";");
    if (sqlite3_exec(db_, pragmas.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
      return SqliteError(db_, "pragmas");
    }
    exec_ = std::make_unique<SqliteExecutor>(db_);
    return Status::OK();
  }

  EngineKind engine() const override { return EngineKind::kSqlite; }
  Executor& executor() override { return *exec_; }

  Status Reopen() override {
    ROCKDOC_RETURN_IF_ERROR(Close());
    return Open();
  }

  Status Close() override {
    exec_.reset();  // finalizes the statements
    if (db_ == nullptr) return Status::OK();
    // The last connection's close checkpoints the WAL into the database file.
    const int rc = sqlite3_close(db_);
    Status st = rc == SQLITE_OK ? Status::OK() : SqliteError(db_, "close");
    db_ = nullptr;
    return st;
  }

  IoCounters Io() const override { return IoCounters(); }

  StatusOr<DocSizes> Sizes() override {
    // The JSON text of every `doc` column.
    std::vector<std::string> tables;
    sqlite3_stmt* stmt = nullptr;
    const char* list =
        "SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) c "
        "WHERE m.type = 'table' AND c.name = 'doc'";
    if (sqlite3_prepare_v2(db_, list, -1, &stmt, nullptr) != SQLITE_OK) {
      return SqliteError(db_, "list tables");
    }
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      tables.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)));
    }
    sqlite3_finalize(stmt);
    DocSizes sizes;
    double total = 0;
    for (const std::string& t : tables) {
      const std::string q =
          absl::StrCat("SELECT count(*), total(length(doc)), max(length(doc)) FROM \"", t, "\"");
      if (sqlite3_prepare_v2(db_, q.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
        return SqliteError(db_, q);
      }
      if (sqlite3_step(stmt) == SQLITE_ROW) {
        sizes.documents += sqlite3_column_int64(stmt, 0);
        total += sqlite3_column_double(stmt, 1);
        sizes.max_bytes = std::max<int64_t>(sizes.max_bytes, sqlite3_column_int64(stmt, 2));
      }
      sqlite3_finalize(stmt);
    }
    sizes.avg_bytes = sizes.documents > 0 ? total / sizes.documents : 0;
    return sizes;
  }

  StatusOr<uint64_t> DiskBytes() override {
    uint64_t bytes = 0;
    for (const char* suffix : {"", "-wal"}) {
      std::error_code ec;
      const auto n = std::filesystem::file_size(path_ + suffix, ec);
      if (!ec) bytes += n;
    }
    return bytes;
  }

  Status Compact() override {
    if (sqlite3_exec(db_, "VACUUM; PRAGMA wal_checkpoint(TRUNCATE);", nullptr, nullptr,
                     nullptr) != SQLITE_OK) {
      return SqliteError(db_, "vacuum");
    }
    return Status::OK();
  }

 private:
  std::string path_;
  size_t cache_bytes_;
  sqlite3* db_ = nullptr;
  std::unique_ptr<SqliteExecutor> exec_;
};

}  // namespace

StatusOr<std::unique_ptr<Backend>> Backend::Open(EngineKind engine, const std::string& dir,
                                                 int64_t cache_bytes) {
  if (engine == EngineKind::kSqlite) {
    auto b = std::make_unique<SqliteBackend>(dir, cache_bytes);
    ROCKDOC_RETURN_IF_ERROR(b->Open());
    return std::unique_ptr<Backend>(std::move(b));
  }
  auto b = std::make_unique<RockdocBackend>(dir, cache_bytes);
  ROCKDOC_RETURN_IF_ERROR(b->Open());
  return std::unique_ptr<Backend>(std::move(b));
}

}  // namespace rockdoc::lab
