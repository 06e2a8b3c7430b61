#include "storage/spill.h"

#include <rocksdb/sst_file_reader.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/table.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <system_error>
#include <vector>

#include "storage/engine.h"
#include "storage/open_checks.h"
#include "storage/rocks.h"

namespace rockdoc::internal {
namespace {

constexpr char kSpillFolder[] = "_tmp";

// Runs are read once, front to back: no compression (they are short-lived),
// no block cache (nothing is read twice), large blocks.
rocksdb::Options SpillOptions(rocksdb::Env* env) {
  rocksdb::Options o;
  o.env = env;
  o.compression = rocksdb::kNoCompression;
  rocksdb::BlockBasedTableOptions table;
  table.no_block_cache = true;
  table.block_size = 64 << 10;
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return o;
}

// A record's key: its position, big-endian, so the table's order is the
// order of writing.
std::string PositionKey(uint64_t n) {
  std::string key(8, '\0');
  for (int i = 7; i >= 0; --i, n >>= 8) key[i] = static_cast<char>(n & 0xff);
  return key;
}

class EmptySpillReader : public SpillReader {
 public:
  StatusOr<std::optional<std::string_view>> Next() override {
    return std::optional<std::string_view>();
  }
  StatusOr<std::optional<std::string_view>> At(uint64_t) override {
    return std::optional<std::string_view>();
  }
};

class TableSpillReader : public SpillReader {
 public:
  TableSpillReader(rocksdb::Env* env, std::string file)
      : env_(env), file_(std::move(file)), options_(SpillOptions(env)) {}
  ~TableSpillReader() override {
    it_.reset();
    reader_.reset();
    env_->DeleteFile(file_).PermitUncheckedError();
  }

  Status Open() {
    reader_ = std::make_unique<rocksdb::SstFileReader>(options_);
    ROCKDOC_RETURN_IF_ERROR(FromRocks(reader_->Open(file_), "reading a spilled run"));
    rocksdb::ReadOptions ro;
    ro.fill_cache = false;
    ro.readahead_size = size_t{256} << 10;  // per run: a merge reads many at once
    it_.reset(reader_->NewIterator(ro));
    it_->SeekToFirst();
    return Status::OK();
  }

  StatusOr<std::optional<std::string_view>> Next() override {
    if (started_) it_->Next();
    started_ = true;
    if (!it_->Valid()) {
      ROCKDOC_RETURN_IF_ERROR(FromRocks(it_->status(), "reading a spilled run"));
      return std::optional<std::string_view>();
    }
    const rocksdb::Slice v = it_->value();
    return std::optional<std::string_view>(std::string_view(v.data(), v.size()));
  }

  StatusOr<std::optional<std::string_view>> At(uint64_t position) override {
    const std::string key = PositionKey(position);
    if (started_ && it_->Valid() && position > 0 && it_->key() == rocksdb::Slice(PositionKey(position - 1))) {
      it_->Next();  // the next record: a step, not a seek
    } else if (!started_ || !it_->Valid() || it_->key() != rocksdb::Slice(key)) {
      it_->Seek(key);
    }
    started_ = true;
    if (!it_->Valid() || it_->key() != rocksdb::Slice(key)) {
      ROCKDOC_RETURN_IF_ERROR(FromRocks(it_->status(), "reading a spilled run"));
      return std::optional<std::string_view>();
    }
    const rocksdb::Slice v = it_->value();
    return std::optional<std::string_view>(std::string_view(v.data(), v.size()));
  }

 private:
  rocksdb::Env* env_;
  std::string file_;
  rocksdb::Options options_;
  std::unique_ptr<rocksdb::SstFileReader> reader_;
  std::unique_ptr<rocksdb::Iterator> it_;
  bool started_ = false;
};

class TableSpillWriter : public SpillWriter {
 public:
  TableSpillWriter(rocksdb::Env* env, std::string file)
      : env_(env), file_(std::move(file)), options_(SpillOptions(env)) {}
  ~TableSpillWriter() override {
    writer_.reset();
    if (!handed_over_) env_->DeleteFile(file_).PermitUncheckedError();
  }

  Status Open() {
    writer_ = std::make_unique<rocksdb::SstFileWriter>(rocksdb::EnvOptions(options_), options_);
    return FromRocks(writer_->Open(file_), "spilling to " + file_);
  }

  Status Add(std::string_view record) override {
    bytes_ += static_cast<int64_t>(record.size());
    return FromRocks(writer_->Put(PositionKey(count_++), rocksdb::Slice(record.data(), record.size())),
                     "spilling to " + file_);
  }
  int64_t bytes() const override { return bytes_; }

  StatusOr<std::unique_ptr<SpillReader>> Finish() override {
    if (count_ == 0) return std::unique_ptr<SpillReader>(std::make_unique<EmptySpillReader>());
    ROCKDOC_RETURN_IF_ERROR(FromRocks(writer_->Finish(), "spilling to " + file_));
    writer_.reset();
    auto reader = std::make_unique<TableSpillReader>(env_, file_);
    handed_over_ = true;  // the reader deletes the file from now on
    ROCKDOC_RETURN_IF_ERROR(reader->Open());
    return std::unique_ptr<SpillReader>(std::move(reader));
  }

 private:
  rocksdb::Env* env_;
  std::string file_;
  rocksdb::Options options_;
  std::unique_ptr<rocksdb::SstFileWriter> writer_;
  uint64_t count_ = 0;
  int64_t bytes_ = 0;
  bool handed_over_ = false;
};

// A new file name in the engine's _tmp/ folder (created when missing).
StatusOr<std::string> NewTempFile(const Engine& engine, std::string_view kind,
                                  std::string_view extension) {
  static std::atomic<uint64_t> files{0};
  rocksdb::Env* env = engine.rocks().env.get();
  // A read-only engine writes nothing into the database directory: its
  // spills go to its own directory (storage/rocks.h), removed at close.
  const std::string folder =
      (engine.read_only() ? engine.rocks().secondary_dir : engine.path()) + "/" + kSpillFolder;
  ROCKDOC_RETURN_IF_ERROR(FromRocks(env->CreateDirIfMissing(folder), "creating " + folder));
  return folder + "/" + std::string(kind) + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(files.fetch_add(1)) + std::string(extension);
}

// A file of a bulk load holds at most this much: compactions later work on
// pieces of a sensible size.
constexpr uint64_t kBulkLoadFileBytes = uint64_t{256} << 20;

class TableBulkLoad : public BulkLoad {
 public:
  explicit TableBulkLoad(const Engine& engine)
      : engine_(engine),
        options_(engine.rocks().base->GetOptions(engine.rocks().data_cf)) {}
  ~TableBulkLoad() override {
    writer_.reset();
    // After a successful ingestion RocksDB has removed these links already.
    for (const std::string& file : files_) {
      engine_.rocks().env->DeleteFile(file).PermitUncheckedError();
    }
  }

  Status Add(std::string_view key, std::string_view value) override {
    if (finished_) return Status(ErrorCode::kInternalError, "bulk load: Add after Finish");
    if (writer_ == nullptr) ROCKDOC_RETURN_IF_ERROR(OpenFile());
    ROCKDOC_RETURN_IF_ERROR(FromRocks(
        writer_->Put(rocksdb::Slice(key.data(), key.size()), rocksdb::Slice(value.data(), value.size())),
        "bulk load into " + files_.back()));
    if (writer_->FileSize() >= kBulkLoadFileBytes) ROCKDOC_RETURN_IF_ERROR(CloseFile());
    return Status::OK();
  }

  Status Finish() override {
    if (finished_) return Status(ErrorCode::kInternalError, "bulk load: Finish twice");
    finished_ = true;
    if (writer_ != nullptr) ROCKDOC_RETURN_IF_ERROR(CloseFile());
    if (files_.empty()) return Status::OK();
    ROCKDOC_RETURN_IF_ERROR(engine_.CheckWritable("a bulk load"));
    Engine::CacheInvalidation invalidation(engine_);
    rocksdb::IngestExternalFileOptions ingest;
    ingest.move_files = true;  // hard links: the bytes are written once
    return FromRocks(engine_.rocks().db->IngestExternalFile(engine_.rocks().data_cf, files_, ingest),
                     "ingesting a bulk load");
  }

 private:
  Status OpenFile() {
    ROCKDOC_ASSIGN_OR_RETURN(std::string file, NewTempFile(engine_, "load", ".sst"));
    files_.push_back(std::move(file));
    writer_ = std::make_unique<rocksdb::SstFileWriter>(rocksdb::EnvOptions(options_), options_);
    return FromRocks(writer_->Open(files_.back()), "bulk load into " + files_.back());
  }
  Status CloseFile() {  // Finish syncs the file
    Status s = FromRocks(writer_->Finish(), "bulk load into " + files_.back());
    writer_.reset();
    return s;
  }

  const Engine& engine_;
  rocksdb::Options options_;
  std::unique_ptr<rocksdb::SstFileWriter> writer_;
  std::vector<std::string> files_;
  bool finished_ = false;
};

}  // namespace

StatusOr<std::unique_ptr<BulkLoad>> NewBulkLoad(const Engine& engine) {
  return std::unique_ptr<BulkLoad>(std::make_unique<TableBulkLoad>(engine));
}

StatusOr<std::unique_ptr<SpillWriter>> NewSpillRun(const Engine& engine) {
  rocksdb::Env* env = engine.rocks().env.get();
  ROCKDOC_ASSIGN_OR_RETURN(std::string file, NewTempFile(engine, "run", ".spill"));
  auto writer = std::make_unique<TableSpillWriter>(env, file);
  ROCKDOC_RETURN_IF_ERROR(writer->Open());
  return std::unique_ptr<SpillWriter>(std::move(writer));
}

Status RemoveSpillFolder(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path folder = std::filesystem::path(path) / kSpillFolder;
  std::filesystem::remove_all(folder, ec);
  if (ec) return FileError("remove the spill folder", folder.string(), ec.value());
  return Status::OK();
}

}  // namespace rockdoc::internal
