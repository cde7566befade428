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

}  // namespace

int main() {
  constexpr size_t kBufferBytes = 4u << 20;  // kairos' default CUPTI buffer
  constexpr int kBuffers = 48;               // about 1.6 M records per repetition
  constexpr int kReps = 5;
  std::vector<uint64_t> storage;
  size_t valid = 0;
  const size_t records = Fill(storage, kBufferBytes, &valid);
  const auto* buffer = reinterpret_cast<const uint8_t*>(storage.data());
  std::vector<uint8_t> sink(valid);

  double best_convert = 1e30, best_copy = 1e30;
  size_t events = 0, kernel_rows = 0, memcpy_rows = 0, strings = 0, capacity = 0;
  for (int rep = 0; rep < kReps; ++rep) {
    kairos::internal::CuptiConverter c(Name, records * kBuffers);
    c.Reserve();
    const double t0 = kairos::bench::ThreadCpuSeconds();
    for (int i = 0; i < kBuffers; ++i) c.ConvertBuffer(buffer, valid);
    const double t1 = kairos::bench::ThreadCpuSeconds();
    for (int i = 0; i < kBuffers; ++i) {
      std::memcpy(sink.data(), buffer, valid);
      asm volatile("" : : "r"(sink.data()) : "memory");
    }
    const double t2 = kairos::bench::ThreadCpuSeconds();
    best_convert = std::min(best_convert, t1 - t0);
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
  std::printf("  convert:           %8.2f ms = %.1f M records/s per core (target >= 30)\n",
              best_convert * 1e3, rate / 1e6);
  std::printf("  ratio convert/memcpy: %.2f\n", best_convert / best_copy);
  Headline("cupti_convert_benchmark", "convert_records_per_s", rate / 1e6, Better::kHigher, "M/s",
           30);
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
  return 0;
}

#else
int main() {
  std::printf("cupti_convert: skipped (built without the CUDA toolkit)\n");
  return 0;
}
#endif
