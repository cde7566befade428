// File: compress_sinks.cc
// Layer: kairos_output. zstd and gzip streaming sinks; see compress_sinks.h.
// Threading: one thread at a time.
#include "output/compress_sinks.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <climits>

#include "absl/strings/str_cat.h"

namespace kairos {

// ---- ZstdSink ----

ZstdSink::ZstdSink(ByteSink& next, int level) : next_(next), cctx_(ZSTD_createCCtx()) {
  out_.resize(ZSTD_CStreamOutSize());
  if (cctx_ == nullptr) {
    status_ = absl::ResourceExhaustedError("zstd: cannot allocate a compression context");
    return;
  }
  level = std::clamp(level, ZSTD_minCLevel(), ZSTD_maxCLevel());
  const size_t rc =
      ZSTD_CCtx_setParameter(static_cast<ZSTD_CCtx*>(cctx_), ZSTD_c_compressionLevel, level);
  if (ZSTD_isError(rc)) {
    status_ = absl::InternalError(absl::StrCat("zstd: cannot set level ", level, ": ",
                                               ZSTD_getErrorName(rc)));
  }
}

ZstdSink::~ZstdSink() { ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(cctx_)); }

absl::Status ZstdSink::Pump(const void* data, size_t size, bool end) {
  ZSTD_inBuffer in{data, size, 0};
  auto* cctx = static_cast<ZSTD_CCtx*>(cctx_);
  while (true) {
    ZSTD_outBuffer out{out_.data(), out_.size(), 0};
    const size_t remaining =
        ZSTD_compressStream2(cctx, &out, &in, end ? ZSTD_e_end : ZSTD_e_continue);
    if (ZSTD_isError(remaining)) {
      status_ = absl::InternalError(
          absl::StrCat("zstd compression failed: ", ZSTD_getErrorName(remaining)));
      return status_;
    }
    if (out.pos > 0) {
      absl::Status s = next_.Write(out_.data(), out.pos);
      if (!s.ok()) {
        status_ = s;
        return s;
      }
    }
    const bool done = end ? remaining == 0 : in.pos == in.size;
    if (done) return absl::OkStatus();
  }
}

absl::Status ZstdSink::Write(const void* data, size_t size) {
  if (!status_.ok()) return status_;
  if (finished_) return absl::FailedPreconditionError("zstd sink: write after Finish");
  if (size == 0) return absl::OkStatus();
  return Pump(data, size, false);
}

absl::Status ZstdSink::Finish() {
  if (!status_.ok()) return status_;
  if (finished_) return absl::FailedPreconditionError("zstd sink: Finish called twice");
  finished_ = true;
  absl::Status s = Pump(nullptr, 0, true);
  if (!s.ok()) return s;
  return next_.Finish();
}

// ---- GzipSink ----

struct GzipSink::ZStream {
  z_stream zs{};
  bool initialized = false;
};

GzipSink::GzipSink(ByteSink& next, int level) : next_(next), zs_(new ZStream) {
  out_.resize(64 * 1024);
  level = std::clamp(level, 1, 9);
  // windowBits 15 + 16 selects the gzip wrapper instead of zlib's.
  const int rc = deflateInit2(&zs_->zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  if (rc != Z_OK) {
    status_ = absl::ResourceExhaustedError(absl::StrCat("gzip: deflateInit2 failed (", rc, ")"));
    return;
  }
  zs_->initialized = true;
}

GzipSink::~GzipSink() {
  if (zs_->initialized) deflateEnd(&zs_->zs);
}

absl::Status GzipSink::Pump(const void* data, size_t size, bool end) {
  z_stream& zs = zs_->zs;
  const char* p = static_cast<const char*>(data);
  // zlib counts in uInt; feed large inputs in slices.
  do {
    const size_t slice = std::min<size_t>(size, UINT_MAX / 2);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(p));
    zs.avail_in = static_cast<uInt>(slice);
    p += slice;
    size -= slice;
    const int flush = end && size == 0 ? Z_FINISH : Z_NO_FLUSH;
    while (true) {
      zs.next_out = reinterpret_cast<Bytef*>(out_.data());
      zs.avail_out = static_cast<uInt>(out_.size());
      const int rc = deflate(&zs, flush);
      if (rc == Z_STREAM_ERROR) {
        status_ = absl::InternalError("gzip compression failed (Z_STREAM_ERROR)");
        return status_;
      }
      const size_t produced = out_.size() - zs.avail_out;
      if (produced > 0) {
        absl::Status s = next_.Write(out_.data(), produced);
        if (!s.ok()) {
          status_ = s;
          return s;
        }
      }
      if (flush == Z_FINISH ? rc == Z_STREAM_END : (zs.avail_in == 0 && zs.avail_out != 0)) break;
    }
  } while (size > 0);
  return absl::OkStatus();
}

absl::Status GzipSink::Write(const void* data, size_t size) {
  if (!status_.ok()) return status_;
  if (finished_) return absl::FailedPreconditionError("gzip sink: write after Finish");
  if (size == 0) return absl::OkStatus();
  return Pump(data, size, false);
}

absl::Status GzipSink::Finish() {
  if (!status_.ok()) return status_;
  if (finished_) return absl::FailedPreconditionError("gzip sink: Finish called twice");
  finished_ = true;
  absl::Status s = Pump(nullptr, 0, true);
  if (!s.ok()) return s;
  return next_.Finish();
}

}  // namespace kairos
