// File: compress_sinks.h
// Layer: kairos_output. Streaming compressors that wrap another ByteSink: ZstdSink (.zst)
// and GzipSink (.gz, the only compressed form HTA reads). Memory is bounded by the
// compressor's window plus one output buffer, whatever the trace size.
// Threading: one thread at a time (ByteSink contract).
#ifndef KAIROS_SRC_OUTPUT_COMPRESS_SINKS_H_
#define KAIROS_SRC_OUTPUT_COMPRESS_SINKS_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "output/sink.h"

namespace kairos {

// Compresses into one zstd frame. `next` must outlive the sink; Finish() ends the frame and
// then calls next.Finish(). Levels outside zstd's range are clamped.
class ZstdSink : public ByteSink {
 public:
  ZstdSink(ByteSink& next, int level);
  ~ZstdSink() override;
  ZstdSink(const ZstdSink&) = delete;
  ZstdSink& operator=(const ZstdSink&) = delete;

  absl::Status Write(const void* data, size_t size) override;
  absl::Status Finish() override;

 private:
  absl::Status Pump(const void* data, size_t size, bool end);

  ByteSink& next_;
  void* cctx_;  // ZSTD_CCtx*, kept opaque so zstd.h stays out of this header
  std::vector<char> out_;
  absl::Status status_;
  bool finished_ = false;
};

// Compresses into a gzip member (RFC 1952) with zlib. Level 1 by default: trace writing runs
// while the job trains, and JSON compresses well even at the fastest level.
class GzipSink : public ByteSink {
 public:
  GzipSink(ByteSink& next, int level = 1);
  ~GzipSink() override;
  GzipSink(const GzipSink&) = delete;
  GzipSink& operator=(const GzipSink&) = delete;

  absl::Status Write(const void* data, size_t size) override;
  absl::Status Finish() override;

 private:
  absl::Status Pump(const void* data, size_t size, bool end);

  ByteSink& next_;
  struct ZStream;
  std::unique_ptr<ZStream> zs_;
  std::vector<char> out_;
  absl::Status status_;
  bool finished_ = false;
};

}  // namespace kairos

#endif  // KAIROS_SRC_OUTPUT_COMPRESS_SINKS_H_
