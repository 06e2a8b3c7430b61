#include "tools/streams.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace rockdoc::tools {
namespace {

Status FileError(const std::string& what, const std::string& name, int err) {
  return Status(ErrorCode::kFileNotOpen, what + " " + name + ": " + std::strerror(err));
}

class FileInput : public InputStream {
 public:
  FileInput(std::string name, FILE* f, bool owned) : InputStream(std::move(name)), f_(f), owned_(owned) {}
  ~FileInput() override {
    if (owned_) std::fclose(f_);
  }
  StatusOr<size_t> Read(char* buf, size_t n) override {
    size_t got = std::fread(buf, 1, n, f_);
    if (got < n && std::ferror(f_)) return FileError("error reading", name_, errno);
    offset_ += got;
    return got;
  }

 private:
  FILE* f_;
  bool owned_;
};

class StringIn : public InputStream {
 public:
  StringIn(std::string_view bytes, std::string name) : InputStream(std::move(name)), bytes_(bytes) {}
  StatusOr<size_t> Read(char* buf, size_t n) override {
    size_t take = std::min(n, bytes_.size() - pos_);
    std::memcpy(buf, bytes_.data() + pos_, take);
    pos_ += take;
    offset_ += take;
    return take;
  }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

// gunzip over another stream: zlib's inflate with gzip framing; after one
// member ends, another may follow (gzip -c a b > c makes such files).
class GunzipIn : public InputStream {
 public:
  explicit GunzipIn(std::unique_ptr<InputStream> in)
      : InputStream(in->name()), in_(std::move(in)), buf_(1 << 16) {
    std::memset(&z_, 0, sizeof(z_));
    ok_ = inflateInit2(&z_, 15 + 16) == Z_OK;
  }
  ~GunzipIn() override { inflateEnd(&z_); }
  StatusOr<size_t> Read(char* out, size_t n) override {
    if (!ok_) return Status(ErrorCode::kInternalError, "zlib: inflateInit failed");
    if (done_ || n == 0) return size_t{0};
    z_.next_out = reinterpret_cast<Bytef*>(out);
    z_.avail_out = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    while (z_.avail_out > 0) {
      if (z_.avail_in == 0) {
        ROCKDOC_ASSIGN_OR_RETURN(size_t got, in_->Read(buf_.data(), buf_.size()));
        if (got == 0) {
          if (member_started_) {
            return Status(ErrorCode::kFailedToParse,
                          name_ + ": gzip stream cut short (unexpected end of file)");
          }
          done_ = true;
          break;
        }
        z_.next_in = reinterpret_cast<Bytef*>(buf_.data());
        z_.avail_in = static_cast<uInt>(got);
      }
      member_started_ = true;
      int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        member_started_ = false;
        inflateReset(&z_);
        continue;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return Status(ErrorCode::kFailedToParse,
                      name_ + ": not valid gzip data (" + (z_.msg ? z_.msg : "zlib error") + ")");
      }
    }
    size_t produced = n - z_.avail_out;
    offset_ += produced;
    return produced;
  }

 private:
  std::unique_ptr<InputStream> in_;
  std::vector<char> buf_;
  z_stream z_;
  bool ok_ = false;
  bool done_ = false;
  bool member_started_ = false;
};

class FileOutput : public OutputStream {
 public:
  FileOutput(std::string name, FILE* f, bool owned) : OutputStream(std::move(name)), f_(f), owned_(owned) {}
  ~FileOutput() override {
    if (f_ != nullptr && owned_) std::fclose(f_);
  }
  Status Write(std::string_view bytes) override {
    if (f_ == nullptr) return Status(ErrorCode::kIllegalOperation, name_ + " is closed");
    if (std::fwrite(bytes.data(), 1, bytes.size(), f_) != bytes.size()) {
      return FileError("error writing", name_, errno);
    }
    written_ += bytes.size();
    return Status::OK();
  }
  Status Close() override {
    if (f_ == nullptr) return Status::OK();
    int rc = owned_ ? std::fclose(f_) : std::fflush(f_);
    f_ = nullptr;
    if (rc != 0) return FileError("error closing", name_, errno);
    return Status::OK();
  }

 private:
  FILE* f_;
  bool owned_;
};

class StringOut : public OutputStream {
 public:
  StringOut(std::string* out, std::string name) : OutputStream(std::move(name)), out_(out) {}
  Status Write(std::string_view bytes) override {
    out_->append(bytes);
    written_ += bytes.size();
    return Status::OK();
  }
  Status Close() override { return Status::OK(); }

 private:
  std::string* out_;
};

class GzipOut : public OutputStream {
 public:
  explicit GzipOut(std::unique_ptr<OutputStream> out)
      : OutputStream(out->name()), out_(std::move(out)), buf_(1 << 16) {
    std::memset(&z_, 0, sizeof(z_));
    ok_ = deflateInit2(&z_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
  }
  ~GzipOut() override { deflateEnd(&z_); }
  Status Write(std::string_view bytes) override {
    written_ += bytes.size();
    return Deflate(bytes, Z_NO_FLUSH);
  }
  Status Close() override {
    if (closed_) return Status::OK();
    closed_ = true;
    ROCKDOC_RETURN_IF_ERROR(Deflate({}, Z_FINISH));
    return out_->Close();
  }

 private:
  Status Deflate(std::string_view in, int flush) {
    if (!ok_) return Status(ErrorCode::kInternalError, "zlib: deflateInit failed");
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z_.avail_in = static_cast<uInt>(in.size());
    while (true) {
      z_.next_out = reinterpret_cast<Bytef*>(buf_.data());
      z_.avail_out = static_cast<uInt>(buf_.size());
      int rc = deflate(&z_, flush);
      if (rc == Z_STREAM_ERROR) return Status(ErrorCode::kInternalError, "zlib: deflate failed");
      size_t have = buf_.size() - z_.avail_out;
      if (have > 0) ROCKDOC_RETURN_IF_ERROR(out_->Write(std::string_view(buf_.data(), have)));
      if (flush == Z_FINISH ? rc == Z_STREAM_END : (z_.avail_in == 0 && z_.avail_out != 0)) break;
    }
    return Status::OK();
  }
  std::unique_ptr<OutputStream> out_;
  std::vector<char> buf_;
  z_stream z_;
  bool ok_ = false;
  bool closed_ = false;
};

}  // namespace

Status InputStream::ReadFull(char* buf, size_t n, size_t* got) {
  *got = 0;
  while (*got < n) {
    ROCKDOC_ASSIGN_OR_RETURN(size_t r, Read(buf + *got, n - *got));
    if (r == 0) break;
    *got += r;
  }
  return Status::OK();
}

bool ByteReader::Fill() {
  if (!status_.ok()) return false;
  size_t got = 0;
  // ReadFull: a short read only at the end, so that SkipBom sees 3 bytes.
  status_ = in_->ReadFull(buf_.data(), buf_.size(), &got);
  pos_ = 0;
  end_ = status_.ok() ? got : 0;
  return end_ > 0;
}

void ByteReader::SkipBom() {
  if (pos_ == end_ && !Fill()) return;
  if (end_ - pos_ >= 3 && std::memcmp(buf_.data() + pos_, "\xEF\xBB\xBF", 3) == 0) pos_ += 3;
}

StatusOr<std::unique_ptr<InputStream>> OpenInput(const std::string& path, bool gzip) {
  std::unique_ptr<InputStream> in;
  if (path.empty() || path == "-") {
    in = std::make_unique<FileInput>("stdin", stdin, false);
  } else {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      return Status(ErrorCode::kFileNotOpen, "error opening " + path + ": is a directory");
    }
    FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) return FileError("error opening", path, errno);
    in = std::make_unique<FileInput>(path, f, true);
  }
  if (gzip) return GunzipInput(std::move(in));
  return in;
}

std::unique_ptr<InputStream> GunzipInput(std::unique_ptr<InputStream> in) {
  return std::make_unique<GunzipIn>(std::move(in));
}

StatusOr<std::unique_ptr<OutputStream>> OpenOutput(const std::string& path, bool gzip) {
  std::unique_ptr<OutputStream> out;
  if (path.empty() || path == "-") {
    out = std::make_unique<FileOutput>("stdout", stdout, false);
  } else {
    std::filesystem::path p(path);
    std::error_code ec;
    if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
    if (ec) {
      return Status(ErrorCode::kFileNotOpen,
                    "error creating directory " + p.parent_path().string() + ": " + ec.message());
    }
    FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) return FileError("error creating", path, errno);
    out = std::make_unique<FileOutput>(path, f, true);
  }
  if (gzip) return std::unique_ptr<OutputStream>(std::make_unique<GzipOut>(std::move(out)));
  return out;
}

std::unique_ptr<OutputStream> StringOutput(std::string* out, std::string name) {
  return std::make_unique<StringOut>(out, std::move(name));
}

std::unique_ptr<InputStream> StringInput(std::string_view bytes, std::string name) {
  return std::make_unique<StringIn>(bytes, std::move(name));
}

StatusOr<std::string> ReadAll(InputStream* in) {
  std::string out;
  char buf[1 << 16];
  while (true) {
    ROCKDOC_ASSIGN_OR_RETURN(size_t n, in->Read(buf, sizeof(buf)));
    if (n == 0) break;
    out.append(buf, n);
  }
  return out;
}

}  // namespace rockdoc::tools
