// tools/streams.h: byte streams for the tools: files, stdin/stdout, and
// gzip (zlib) over either, with every failure a Status naming the file.
//
// Readers report the offset of what they return, so that a tool can say
// where in a file (in its uncompressed bytes) bad input begins.
//
// Thread safety: a stream is used by one thread at a time.
#ifndef ROCKDOC_TOOLS_STREAMS_H_
#define ROCKDOC_TOOLS_STREAMS_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rockdoc/status.h"

namespace rockdoc::tools {

class InputStream {
 public:
  virtual ~InputStream() = default;
  // Reads up to `n` bytes into `buf`; 0 at the end. Errors name the file.
  virtual StatusOr<size_t> Read(char* buf, size_t n) = 0;
  // What error messages call the stream ("dump/test/foo.bson", "stdin").
  const std::string& name() const { return name_; }

  // Reads exactly `n` bytes, or fewer only at the end (*got says how many).
  Status ReadFull(char* buf, size_t n, size_t* got);
  // Bytes returned so far (of the uncompressed stream).
  uint64_t offset() const { return offset_; }

 protected:
  explicit InputStream(std::string name) : name_(std::move(name)) {}
  std::string name_;
  uint64_t offset_ = 0;
};

class OutputStream {
 public:
  virtual ~OutputStream() = default;
  virtual Status Write(std::string_view bytes) = 0;
  // Flushes and closes; the first error of any write or of closing. A
  // stream destroyed without Close discards nothing already written but
  // reports nothing either.
  virtual Status Close() = 0;
  const std::string& name() const { return name_; }
  uint64_t bytes_written() const { return written_; }

 protected:
  explicit OutputStream(std::string name) : name_(std::move(name)) {}
  std::string name_;
  uint64_t written_ = 0;
};

// An input stream read a byte at a time, through a buffer: for the text
// formats' parsers, which hold one record at a time, never the whole input.
class ByteReader {
 public:
  explicit ByteReader(InputStream* in, size_t buffer_size = 1 << 16)
      : in_(in), buf_(buffer_size) {}
  // The next byte, consumed; -1 at the end of the stream or after a read
  // error (then status() says which).
  int Get() {
    if (pos_ == end_ && !Fill()) return -1;
    return static_cast<unsigned char>(buf_[pos_++]);
  }
  // The next byte, not consumed; -1 as Get.
  int Peek() {
    if (pos_ == end_ && !Fill()) return -1;
    return static_cast<unsigned char>(buf_[pos_]);
  }
  // The buffered bytes not yet consumed, refilled when none are left;
  // empty at the end (or after an error). For parsers that scan a run of
  // bytes at a time, with Consume.
  std::string_view Available() {
    if (pos_ == end_ && !Fill()) return {};
    return {buf_.data() + pos_, end_ - pos_};
  }
  // Consumes `n` bytes of those Available returned.
  void Consume(size_t n) { pos_ += n; }
  // Skips a UTF-8 byte order mark; call before the first Get.
  void SkipBom();
  const Status& status() const { return status_; }

 private:
  bool Fill();
  InputStream* in_;
  std::vector<char> buf_;
  size_t pos_ = 0;
  size_t end_ = 0;
  Status status_;
};

// Opens `path` for reading ("-" or "": stdin). With `gzip`, the bytes are
// gunzipped (one or more gzip members, as gzip writes them); a file that is
// not gzip is an error naming it.
StatusOr<std::unique_ptr<InputStream>> OpenInput(const std::string& path, bool gzip);
// Wraps another stream with gunzip.
std::unique_ptr<InputStream> GunzipInput(std::unique_ptr<InputStream> in);
// Creates (truncates) `path` for writing ("-" or "": stdout), gzipped with
// `gzip`. Parent directories are created.
StatusOr<std::unique_ptr<OutputStream>> OpenOutput(const std::string& path, bool gzip);
// An output stream into a string (for tests and in-memory buffers).
std::unique_ptr<OutputStream> StringOutput(std::string* out, std::string name = "<memory>");
// An input stream over bytes the caller keeps alive.
std::unique_ptr<InputStream> StringInput(std::string_view bytes, std::string name = "<memory>");

// Reads a whole stream.
StatusOr<std::string> ReadAll(InputStream* in);

}  // namespace rockdoc::tools

#endif  // ROCKDOC_TOOLS_STREAMS_H_
