// File: bench_trace.h
// Layer: bench. Pieces of the synthetic training traces that analysis_benchmark and
// report_benchmark build (each its own workload shape): the time base, a wall clock in
// seconds, a GPU's DeviceInfo, and the host thread and GPU stream tracks.
// Threading: single-threaded.
#ifndef KAIROS_BENCH_BENCH_TRACE_H_
#define KAIROS_BENCH_BENCH_TRACE_H_

#include <chrono>
#include <cstdint>

#include "model/trace_data.h"

namespace kairos::bench {

// 2026-10-01 in Unix ns: the traces' window start.
inline constexpr int64_t kBase = 1790857026000000000LL;

inline double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A GPU with the limits occupancy needs (A100-like with 108 SMs, H100-like with 132).
inline DeviceInfo BenchDevice(uint32_t id, int32_t num_sms, uint64_t shared_mem_per_mp,
                              uint64_t shared_mem_per_block_optin = 0) {
  DeviceInfo dev;
  dev.id = id;
  dev.num_sms = num_sms;
  dev.max_threads_per_multiprocessor = 2048;
  dev.max_threads_per_block = 1024;
  dev.regs_per_multiprocessor = 65536;
  if (shared_mem_per_block_optin != 0) dev.regs_per_block = 65536;
  dev.warp_size = 32;
  dev.shared_mem_per_multiprocessor = shared_mem_per_mp;
  dev.shared_mem_per_block_optin = shared_mem_per_block_optin;
  dev.max_blocks_per_multiprocessor = 32;
  return dev;
}

// The host thread (pid = tid = d->pid) and GPU stream `stream` tracks.
inline uint32_t AddHostTrack(TraceData* d) {
  Track th;
  th.pid = d->pid;
  th.tid = d->pid;
  return d->AddTrack(th);
}

inline uint32_t AddStreamTrack(TraceData* d, uint32_t stream) {
  Track t;
  t.type = TrackType::kGpuStream;
  t.pid = 0;
  t.tid = stream;
  t.stream = stream;
  return d->AddTrack(t);
}

}  // namespace kairos::bench

#endif  // KAIROS_BENCH_BENCH_TRACE_H_
