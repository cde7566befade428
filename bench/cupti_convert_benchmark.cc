// File: cupti_convert_benchmark.cc
// Layer: benchmark. CUPTI buffer -> kairos event conversion throughput on hand-built CUDA 13
// buffers shaped like a training loop (per launch: one runtime record + one kernel record;
// every 8th launch also a memcpy), against a baseline of memcpy'ing the same bytes in the
// same run. Also reports the memory each buffered GPU event costs after conversion.
// Threading: single thread (conversion runs on one kairos worker in the library).
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#if defined(KAIROS_HAVE_CUPTI)
#include "activity/cupti_convert.h"
#include "bench_clock.h"
#include "bench_headline.h"
#include "cupti_bench_buffers.h"
#include "activity/correlation.h"
#include "analysis/summary.h"
#include "model/memory_totals.h"

namespace {

using kairos::bench::Better;
using kairos::bench::Headline;

CUptiResult Name(CUpti_CallbackDomain, uint32_t, const char** name) {
  *name = "cudaLaunchKernel_v7000";
  return CUPTI_SUCCESS;
}

// Fills `buf` with launches until the next one does not fit; returns the number of records
// and the valid size.
size_t Fill(std::vector<uint64_t>& storage, size_t bytes, size_t* valid) {
  storage.assign(bytes / 8, 0);
  auto* base = reinterpret_cast<uint8_t*>(storage.data());
  static const char* kNames[4] = {"_Z6matmulPfS_S_i", "_Z4reluPf", "_Z7softmaxPfi",
                                  "_Z4stepv"};
  size_t off = 0, records = 0;
  uint64_t t = 1'700'000'000'000'000'000ull;
  for (uint32_t corr = 1;; ++corr) {
    kairos::bench::LaunchRecords r = kairos::bench::BaseLaunch(corr);
    r.api.start = t;
    r.api.end = t + 3000;
    r.api.threadId = 1000 + corr % 4;
    r.kernel.start = t + 5000;
    r.kernel.end = t + 9000;
    r.kernel.streamId = 7 + corr % 2;
    r.kernel.gridX = 128 << (corr % 3);
    r.kernel.name = kNames[corr % 4];
    r.memcpy.start = t + 10000;
    r.memcpy.end = t + 20000;
    r.memcpy.runtimeCorrelationId = corr;
    if (!kairos::bench::AppendLaunch(r, base, bytes, &off, &records)) break;
    t += 10000;
  }
  *valid = off;
  return records;
}

// Memory recording (docs/MEMORY.md): `pairs` cudaMalloc/cudaFree calls on one thread, each
// call with its MEMORY2 record when `memory` (else the calls alone: the same run without
// memory recording). Returns the buffer (records in CUPTI's 8-byte-aligned layout).
std::vector<uint64_t> AllocBuffer(size_t pairs, bool memory, size_t* valid) {
  std::vector<uint64_t> out;
  const size_t per_pair = 2 * sizeof(CUpti_ActivityAPI) + (memory ? 2 * sizeof(CUpti_ActivityMemory4) : 0);
  out.assign(pairs * per_pair / 8 + 1, 0);
  auto* base = reinterpret_cast<uint8_t*>(out.data());
  size_t off = 0;
  uint64_t t = 1'700'000'000'000'000'000ull;
  uint32_t corr = 1;
  auto add = [&](const void* rec, size_t size) {
    std::memcpy(base + off, rec, size);
    off += size;
  };
  for (size_t i = 0; i < pairs; ++i) {
    for (int op = 0; op < 2; ++op, ++corr, t += 2000) {
      CUpti_ActivityAPI a;
      std::memset(&a, 0, sizeof(a));
      a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
      a.cbid = op == 0 ? CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020 : CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020;
      a.start = t;
      a.end = t + 1000;
      a.threadId = 1000;
      a.correlationId = corr;
      add(&a, sizeof(a));
      if (!memory) continue;
      CUpti_ActivityMemory4 m;
      std::memset(&m, 0, sizeof(m));
      m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
      m.memoryOperationType = op == 0 ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
                                      : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
      m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
      m.correlationId = corr;
      m.address = 0x7f0000000000ull + (i % 4096) * 0x100000;  // addresses reused, as allocators do
      m.bytes = 1 << 20;
      m.timestamp = t + 500;
      m.streamId = 7;
      add(&m, sizeof(m));
    }
  }
  *valid = off;
  return out;
}

CUptiResult ApiName(CUpti_CallbackDomain, uint32_t cbid, const char** name) {
  *name = cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020 ? "cudaMalloc_v3020" : "cudaFree_v3020";
  return CUPTI_SUCCESS;
}

// Conversion, merge, totals and the analysis of a window of `pairs` allocation/free pairs;
// thread CPU seconds, best of `reps`.
double ProcessWindow(size_t pairs, bool memory, int reps, size_t* memory_events) {
  size_t valid = 0;
  const std::vector<uint64_t> buf = AllocBuffer(pairs, memory, &valid);
  double best = 1e30;
  for (int rep = 0; rep < reps; ++rep) {
    kairos::internal::CuptiConverter c(ApiName, pairs * 8);
    kairos::TraceData data;
    data.pid = 1;
    const double t0 = kairos::bench::ThreadCpuSeconds();
    c.ConvertBuffer(reinterpret_cast<const uint8_t*>(buf.data()), valid);
    kairos::internal::MergeIntoTraceData(c, data);
    data.SortTracks();
    if (memory) {
      kairos::ComputeMemoryTotals(data, {{0, 1ull << 30, 80ull << 30}}, pairs * 8);
      kairos::AddMemoryCounters(data);
    }
    const kairos::Summary s = kairos::Analyze(data);
    const double t1 = kairos::bench::ThreadCpuSeconds();
    asm volatile("" : : "r"(&s) : "memory");
    best = std::min(best, t1 - t0);
    *memory_events = data.memory.size();
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  // `cupti_convert_benchmark convert`: the conversion part only (for profiling it).
  const bool convert_only = argc > 1 && std::strcmp(argv[1], "convert") == 0;
  constexpr size_t kBufferBytes = 4u << 20;  // kairos' default CUPTI buffer
  constexpr int kBuffers = 48;               // about 1.6 M records per repetition
  constexpr int kReps = 5;
  std::vector<uint64_t> storage;
  size_t valid = 0;
  const size_t records = Fill(storage, kBufferBytes, &valid);
  const auto* buffer = reinterpret_cast<const uint8_t*>(storage.data());
  std::vector<uint8_t> sink(valid);

  // Two conversions of the same buffers per repetition: "cold", every page of the event store
  // first touched by the conversion itself; and as the library runs it, the store made
  // resident ahead of each buffer by PrepareStore(), which the conversion worker calls while
  // it waits for the next buffer (timed separately: its cost per event is printed).
  double best_convert = 1e30, best_cold = 1e30, best_copy = 1e30, best_prepare = 1e30;
  size_t events = 0, kernel_rows = 0, memcpy_rows = 0, strings = 0, capacity = 0;
  for (int rep = 0; rep < kReps; ++rep) {
    {
      kairos::internal::CuptiConverter c(Name, records * kBuffers);
      const double t0 = kairos::bench::ThreadCpuSeconds();
      for (int i = 0; i < kBuffers; ++i) c.ConvertBuffer(buffer, valid);
      best_cold = std::min(best_cold, kairos::bench::ThreadCpuSeconds() - t0);
    }
    kairos::internal::CuptiConverter c(Name, records * kBuffers);
    double convert = 0, prepare = 0;
    for (int i = 0; i < kBuffers; ++i) {
      const double t0 = kairos::bench::ThreadCpuSeconds();
      c.PrepareStore();
      const double t1 = kairos::bench::ThreadCpuSeconds();
      c.ConvertBuffer(buffer, valid);
      const double t2 = kairos::bench::ThreadCpuSeconds();
      prepare += t1 - t0;
      convert += t2 - t1;
    }
    const double t1 = kairos::bench::ThreadCpuSeconds();
    for (int i = 0; i < kBuffers; ++i) {
      std::memcpy(sink.data(), buffer, valid);
      asm volatile("" : : "r"(sink.data()) : "memory");
    }
    const double t2 = kairos::bench::ThreadCpuSeconds();
    best_convert = std::min(best_convert, convert);
    best_prepare = std::min(best_prepare, prepare);
    best_copy = std::min(best_copy, t2 - t1);
    events = c.events().size();
    capacity = c.events().capacity();
    kernel_rows = c.kernels().size();
    memcpy_rows = c.memcpys().size();
    strings = c.strings().size();
  }
  const double total = static_cast<double>(records) * kBuffers;
  const double rate = total / best_convert;
  std::printf("cupti_convert: %zu records/buffer x %d buffers, best of %d (thread CPU time)\n",
              records, kBuffers, kReps);
  std::printf("  baseline memcpy:   %8.2f ms (%.1f GB/s)\n", best_copy * 1e3,
              valid * kBuffers / best_copy / 1e9);
  std::printf("  convert:           %8.2f ms = %.1f M records/s per core (target >= 30), store "
              "made resident ahead by the worker's idle hook\n",
              best_convert * 1e3, rate / 1e6);
  std::printf("  ratio convert/memcpy: %.2f\n", best_convert / best_copy);
  std::printf("  store made resident ahead (idle hook): %8.2f ms = %.1f ns per event\n",
              best_prepare * 1e3, best_prepare / static_cast<double>(events) * 1e9);
  std::printf("  convert, cold store (first touch while converting): %8.2f ms = %.1f M records/s\n",
              best_cold * 1e3, total / best_cold / 1e6);
  Headline("cupti_convert_benchmark", "convert_records_per_s", rate / 1e6, Better::kHigher, "M/s",
           30);
  Headline("cupti_convert_benchmark", "convert_cold_records_per_s", total / best_cold / 1e6,
           Better::kHigher, "M/s");
  Headline("cupti_convert_benchmark", "store_prepare_ns_per_event",
           best_prepare / static_cast<double>(events) * 1e9, Better::kLower, "ns");
  Headline("cupti_convert_benchmark", "convert_vs_memcpy", best_convert / best_copy, Better::kLower,
           "x");
  const double bytes_per_event =
      (static_cast<double>(capacity) * sizeof(kairos::Event) +
       kernel_rows * sizeof(kairos::KernelDetail) + memcpy_rows * sizeof(kairos::MemcpyDetail)) /
      static_cast<double>(events);
  std::printf("  memory per buffered GPU event: %.1f bytes (%zu events, %zu kernel rows, "
              "%zu memcpy rows, %zu strings)\n",
              bytes_per_event, events, kernel_rows, memcpy_rows, strings);
  Headline("cupti_convert_benchmark", "bytes_per_buffered_event", bytes_per_event, Better::kLower,
           "B");
  std::printf("  raw CUPTI bytes per record: %.1f\n", static_cast<double>(valid) / records);

  if (convert_only) return 0;
  // A window with 1 M allocations (and 1 M frees): everything kairos does with them off the
  // application thread (convert, join with their calls, totals, counter tracks, analysis),
  // against the same window's calls without memory recording, same run.
  constexpr size_t kPairs = 1'000'000;
  size_t mem_events = 0, none = 0;
  const double with_memory = ProcessWindow(kPairs, true, 3, &mem_events);
  const double without = ProcessWindow(kPairs, false, 3, &none);
  std::printf("memory: %zu allocations + %zu frees (%zu [memory] events), best of 3:\n", kPairs,
              kPairs, mem_events);
  std::printf("  without memory recording: %8.1f ms (the 2 M cudaMalloc/cudaFree calls)\n", without * 1e3);
  std::printf("  with memory recording:    %8.1f ms = %.0f ns per allocation or free added\n",
              with_memory * 1e3, (with_memory - without) / (2.0 * kPairs) * 1e9);
  std::printf("  ratio: %.2f\n", with_memory / without);
  Headline("cupti_convert_benchmark", "memory_1m_allocs_vs_without", with_memory / without, Better::kLower, "x");
  Headline("cupti_convert_benchmark", "memory_ns_per_event", (with_memory - without) / (2.0 * kPairs) * 1e9,
           Better::kLower, "ns");
  return 0;
}

#else
int main() {
  std::printf("cupti_convert: skipped (built without the CUDA toolkit)\n");
  return 0;
}
#endif
