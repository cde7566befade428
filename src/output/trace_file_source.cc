// File: trace_file_source.cc
// Layer: kairos_output. See trace_file_source.h. The byte sources a trace file is read through
// (plain, gzip, zstd), picked from the file's first bytes; json_reader.cc parses what they
// yield.
// Threading: no shared state.
#include "output/trace_file_source.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "util/input_file.h"

namespace kairos {
namespace {

constexpr size_t kChunk = JsonStreamParser::kChunk;

// ---- Byte sources ----

using Source = JsonByteSource;

class FdSource : public Source {
 public:
  FdSource(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~FdSource() override { close(fd_); }
  absl::StatusOr<size_t> Read(char* buf, size_t cap) override {
    if (!pending_.empty()) {  // the magic-byte probe
      size_t n = std::min(cap, pending_.size());
      memcpy(buf, pending_.data(), n);
      pending_.erase(0, n);
      return n;
    }
    for (;;) {
      ssize_t n = read(fd_, buf, cap);
      if (n >= 0) return static_cast<size_t>(n);
      if (errno != EINTR) return absl::InternalError(absl::StrCat(path_, ": read: ", strerror(errno)));
    }
  }
  std::string pending_;

 private:
  int fd_;
  std::string path_;
};

class GzipSource : public Source {
 public:
  explicit GzipSource(std::unique_ptr<Source> in) : in_(std::move(in)), buf_(new char[kChunk]) {
    memset(&z_, 0, sizeof(z_));
    ok_ = inflateInit2(&z_, 16 + MAX_WBITS) == Z_OK;  // 16: gzip header
  }
  ~GzipSource() override { inflateEnd(&z_); }
  absl::StatusOr<size_t> Read(char* out, size_t cap) override {
    if (!ok_) return absl::InternalError("gzip: inflateInit2 failed");
    z_.next_out = reinterpret_cast<Bytef*>(out);
    z_.avail_out = static_cast<uInt>(cap);
    while (z_.avail_out == cap && !done_) {
      if (z_.avail_in == 0) {
        auto n = in_->Read(buf_.get(), kChunk);
        if (!n.ok()) return n.status();
        if (*n == 0) return absl::DataLossError("gzip: truncated stream");
        z_.next_in = reinterpret_cast<Bytef*>(buf_.get());
        z_.avail_in = static_cast<uInt>(*n);
      }
      int r = inflate(&z_, Z_NO_FLUSH);
      if (r == Z_STREAM_END) {
        done_ = true;
      } else if (r != Z_OK && r != Z_BUF_ERROR) {
        return absl::DataLossError(absl::StrCat("gzip: ", z_.msg ? z_.msg : "corrupt data"));
      }
    }
    return cap - z_.avail_out;
  }

 private:
  std::unique_ptr<Source> in_;
  std::unique_ptr<char[]> buf_;
  z_stream z_;
  bool ok_ = false;
  bool done_ = false;
};

class ZstdSource : public Source {
 public:
  explicit ZstdSource(std::unique_ptr<Source> in)
      : in_(std::move(in)), buf_(new char[kChunk]), dctx_(ZSTD_createDCtx()) {}
  ~ZstdSource() override { ZSTD_freeDCtx(dctx_); }
  absl::StatusOr<size_t> Read(char* out, size_t cap) override {
    if (!dctx_) return absl::ResourceExhaustedError("zstd: cannot create context");
    ZSTD_outBuffer o{out, cap, 0};
    while (o.pos == 0) {
      if (in_pos_ == in_len_) {
        auto n = in_->Read(buf_.get(), kChunk);
        if (!n.ok()) return n.status();
        if (*n == 0) {
          if (last_ret_ != 0) return absl::DataLossError("zstd: truncated stream");
          return size_t{0};
        }
        in_len_ = *n;
        in_pos_ = 0;
      }
      ZSTD_inBuffer i{buf_.get(), in_len_, in_pos_};
      last_ret_ = ZSTD_decompressStream(dctx_, &o, &i);
      in_pos_ = i.pos;
      if (ZSTD_isError(last_ret_)) return absl::DataLossError(absl::StrCat("zstd: ", ZSTD_getErrorName(last_ret_)));
    }
    return o.pos;
  }

 private:
  std::unique_ptr<Source> in_;
  std::unique_ptr<char[]> buf_;
  ZSTD_DCtx* dctx_;
  size_t in_len_ = 0, in_pos_ = 0, last_ret_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Source>> internal::OpenTraceSource(const std::string& path) {
  // Never blocks on a FIFO, never reads a device or directory (input_file.h).
  absl::StatusOr<int> fd = OpenInputFile(path);
  if (!fd.ok()) return fd.status();
  auto raw = std::make_unique<FdSource>(*fd, path);
  char magic[4];
  size_t have = 0;
  while (have < 4) {
    auto n = raw->Read(magic + have, 4 - have);
    if (!n.ok()) return n.status();
    if (*n == 0) break;
    have += *n;
  }
  raw->pending_.assign(magic, have);
  if (have >= 2 && uint8_t(magic[0]) == 0x1f && uint8_t(magic[1]) == 0x8b)
    return std::unique_ptr<Source>(new GzipSource(std::move(raw)));
  if (have == 4 && !memcmp(magic, "\x28\xb5\x2f\xfd", 4))
    return std::unique_ptr<Source>(new ZstdSource(std::move(raw)));
  return std::unique_ptr<Source>(std::move(raw));
}

}  // namespace kairos
