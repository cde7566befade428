// File: cupti_bench_buffers.h
// Layer: bench. The one builder of hand-made CUDA 13 CUPTI activity buffers that
// cupti_convert_benchmark and flush_benchmark convert: per launch one RUNTIME record (40 B)
// and one CONCURRENT_KERNEL record (216 B), and for every 8th correlation id one MEMCPY
// record (96 B), all zeroed first as CUPTI leaves unused fields. A benchmark fills in what
// is its own (timestamps, threads, streams, grid, names) on the records BaseLaunch returns,
// so each keeps exactly the records, and therefore the baselines, it had.
// Threading: single-threaded.
#ifndef KAIROS_BENCH_CUPTI_BENCH_BUFFERS_H_
#define KAIROS_BENCH_CUPTI_BENCH_BUFFERS_H_

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace kairos::bench {

template <typename T>
T ZeroRecord() {
  T v;
  std::memset(&v, 0, sizeof(T));
  return v;
}

struct LaunchRecords {
  CUpti_ActivityAPI api;
  CUpti_ActivityKernel10 kernel;
  bool has_memcpy;  // correlation id % 8 == 0
  CUpti_ActivityMemcpy6 memcpy;

  size_t Bytes() const { return sizeof(api) + sizeof(kernel) + (has_memcpy ? sizeof(memcpy) : 0); }
};

// The fields every launch shares: cudaLaunchKernel (cbid 211) with correlation id `corr`,
// a 256-thread 1-D block kernel with 32 registers in context 1, and (every 8th launch) a
// 1 MiB pageable-to-device copy on stream 7. Correlation of the copy is left to the caller.
inline LaunchRecords BaseLaunch(uint32_t corr) {
  LaunchRecords r;
  r.api = ZeroRecord<CUpti_ActivityAPI>();
  r.api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  r.api.cbid = 211;
  r.api.correlationId = corr;
  r.kernel = ZeroRecord<CUpti_ActivityKernel10>();
  r.kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  r.kernel.contextId = 1;
  r.kernel.gridY = r.kernel.gridZ = r.kernel.blockY = r.kernel.blockZ = 1;
  r.kernel.blockX = 256;
  r.kernel.registersPerThread = 32;
  r.kernel.correlationId = corr;
  r.has_memcpy = corr % 8 == 0;
  r.memcpy = ZeroRecord<CUpti_ActivityMemcpy6>();
  r.memcpy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  r.memcpy.copyKind = 1;
  r.memcpy.srcKind = 1;
  r.memcpy.dstKind = 3;
  r.memcpy.bytes = 1 << 20;
  r.memcpy.streamId = 7;
  r.memcpy.contextId = 1;
  return r;
}

// Appends the launch's records at base + *off; returns false (writing nothing) when they do
// not fit in `capacity` bytes. Returns the number of records through *records.
inline bool AppendLaunch(const LaunchRecords& r, uint8_t* base, size_t capacity, size_t* off,
                         size_t* records) {
  if (*off + r.Bytes() > capacity) return false;
  std::memcpy(base + *off, &r.api, sizeof(r.api));
  *off += sizeof(r.api);
  std::memcpy(base + *off, &r.kernel, sizeof(r.kernel));
  *off += sizeof(r.kernel);
  *records += 2;
  if (r.has_memcpy) {
    std::memcpy(base + *off, &r.memcpy, sizeof(r.memcpy));
    *off += sizeof(r.memcpy);
    *records += 1;
  }
  return true;
}

}  // namespace kairos::bench

#endif  // KAIROS_BENCH_CUPTI_BENCH_BUFFERS_H_
