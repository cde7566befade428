// File: range_benchmark.cc
// Layer: bench. Cost of one range (push + pop) against a baseline measured in the same run:
// a bare per-thread ring push of two 24-byte records with two TSC reads (the floor any
// recorder pays). Prints ns per range and ratios; targets: recording <= 1.3x the floor,
// disabled <= 1.5 ns. Measures the disabled path inline (statically linked), through
// libkairos.so (dlsym'd pointer = the PLT's indirect call) and with the exported flag
// checked inline (kairos_recording_flag), plus recording through libkairos.so.
// Threading: single-threaded.
#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "activity/cpu_recorder.h"
#include "kairos_so.h"
#include "bench_headline.h"
#include "util/clock.h"
#include "temp_dir.h"

namespace {

using kairos::bench::Better;
using kairos::bench::Headline;
using kairos::internal::RingRecord;
constexpr int kRanges = 16384;  // per batch: 32768 records, fits the recorder ring below
constexpr int kReps = 15;

inline void Barrier() { asm volatile("" ::: "memory"); }

// The floor: a thread-local array, two TSC reads, two record stores, index bumps.
struct BareRing {
  RingRecord r[2 * kRanges];
  size_t n = 0;
};
thread_local BareRing t_bare;

__attribute__((noinline)) void BarePush(const char* name) {
  BareRing& b = t_bare;
  RingRecord& rec = b.r[b.n & (2 * kRanges - 1)];
  rec.raw_time = kairos::ReadRawClock();
  rec.name = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(name));
  rec.id = 1;
  rec.args = 0;
  rec.type = kairos::internal::RecordType::kPush;
  ++b.n;
  Barrier();
}
__attribute__((noinline)) void BarePop() {
  BareRing& b = t_bare;
  RingRecord& rec = b.r[b.n & (2 * kRanges - 1)];
  rec.raw_time = kairos::ReadRawClock();
  rec.name = 0;
  rec.id = 0;
  rec.args = 0;
  rec.type = kairos::internal::RecordType::kPop;
  ++b.n;
  Barrier();
}

// Same call shape for the recorder: one non-inlined function per operation, like the C ABI.
__attribute__((noinline)) void KairosPush(const char* name) { kairos::internal::PushRange(name); }
__attribute__((noinline)) void KairosPop() { kairos::internal::PopRange(); }

template <typename F>
double NsPerRange(F&& batch, int ranges = kRanges, int reps = kReps) {
  double best = 1e30;
  for (int rep = 0; rep < reps; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    batch();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count() / ranges);
  }
  return best;
}

// `range_benchmark --instr N` (bench/instruction_count_benchmark.py counts the instructions
// inside these two under callgrind): N push+pop pairs while a window records, statically
// linked and through libkairos.so (the shim, the core), so the hot path's instructions per
// range are a deterministic headline beside this benchmark's noisy ratios.
__attribute__((noinline)) void InstrRangesStatic(const char* name, int n) {
  for (int i = 0; i < n; ++i) {
    KairosPush(name);
    KairosPop();
  }
}
__attribute__((noinline)) void InstrRangesThroughSo(void (*push)(const char*), void (*pop)(),
                                                    const char* name, int n) {
  for (int i = 0; i < n; ++i) {
    push(name);
    pop();
  }
}

int CountMode(int n) {
  const char* name = "forward";
  kairos::internal::CpuRecorder rec(
      kairos::internal::CpuRecorderOptions{4 * static_cast<size_t>(n), 8});
  (void)rec.StartWarmup(kairos::Config{});
  rec.StartRecording(0);
  KairosPush(name);  // the thread's first record: the cold path, not counted
  KairosPop();
  InstrRangesStatic(name, n);
  rec.StopRecording(0);
  rec.Reset();
  kairos::bench::KairosSo so;
  if (!so.Load()) {
    std::fprintf(stderr, "range_benchmark --instr: libkairos.so missing\n");
    return 1;
  }
  // The session's trace (named with the pid) and summary go here, removed on return.
  const kairos::testing::TempDir temp("kairos_bench_");
  const std::string& tmpl = temp.path();
  // A buffer that holds every range, so none is dropped (a drop is a shorter path).
  const std::string cfg = std::string("ACTIVITIES_LOG_FILE=") + tmpl +
                          "/bench.json\nKAIROS_CPU_BUFFER_KB_PER_THREAD=" +
                          std::to_string(static_cast<size_t>(n) * 2 * 24 / 1024 + 1024) +
                          "\nKAIROS_SUMMARY=off";
  so.init(cfg.c_str());
  const int rc = so.start() == 0 ? 0 : 1;
  if (rc == 0) {
    so.push(name);
    so.pop();
    InstrRangesThroughSo(so.push, so.pop, name, n);
    so.stop();
    so.flush();
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--instr") return CountMode(std::atoi(argv[2]));
  const char* name = "forward";
  const double bare = NsPerRange([&] {
    for (int i = 0; i < kRanges; ++i) {
      BarePush(name);
      BarePop();
    }
  });

  // Recording, statically linked: a fresh session per batch so the ring never fills.
  kairos::internal::CpuRecorder rec(kairos::internal::CpuRecorderOptions{4 * kRanges, 8});
  double recording = 1e30;
  for (int rep = 0; rep < kReps; ++rep) {
    (void)rec.StartWarmup(kairos::Config{});
    rec.StartRecording(0);
    KairosPush(name);  // first use on this thread per session: the cold path, not timed
    KairosPop();
    recording = std::min(recording, NsPerRange(
                                        [&] {
                                          for (int i = 0; i < kRanges; ++i) {
                                            KairosPush(name);
                                            KairosPop();
                                          }
                                        },
                                        kRanges, 1));
    rec.StopRecording(0);
    rec.Reset();
  }

  const double disabled_inline = NsPerRange([&] {
    for (int i = 0; i < kRanges; ++i) {
      kairos::internal::PushRange(name);
      Barrier();
      kairos::internal::PopRange();
      Barrier();
    }
  });

  std::printf("range_benchmark (ns per range = push + pop; best of %d x %d)\n", kReps, kRanges);
  std::printf("  baseline: bare ring, 2 TSC reads     %7.2f ns\n", bare);
  std::printf("  kairos recording (static)            %7.2f ns   ratio %.2fx (target <= 1.30x)\n",
              recording, recording / bare);
  std::printf("  kairos disabled, inline check        %7.2f ns   (target <= 1.5 ns)\n",
              disabled_inline);
  Headline("range_benchmark", "recording_static_vs_bare_ring", recording / bare, Better::kLower,
           "x", 1.3);
  Headline("range_benchmark", "disabled_inline_ns", disabled_inline, Better::kLower, "ns", 1.5);

  kairos::bench::KairosSo so;
  if (!so.Load()) {
    std::printf("  libkairos.so: %s: PLT numbers skipped\n", so.error.c_str());
    return 0;
  }
  auto push = so.push;
  auto pop = so.pop;
  auto init = so.init;
  auto start = so.start;
  auto stop = so.stop;
  auto flush = so.flush;
  const volatile uint32_t* flag = so.recording_flag();
  const double disabled_plt = NsPerRange([&] {
    for (int i = 0; i < kRanges; ++i) {
      push(name);
      pop();
    }
  });
  const double disabled_flag = NsPerRange([&] {
    for (int i = 0; i < kRanges; ++i) {
      if (*flag) push(name);
      Barrier();
      if (*flag) pop();
      Barrier();
    }
  });
  std::printf("  kairos disabled, call via libkairos.so %5.2f ns   (target <= 1.5 ns)\n",
              disabled_plt);
  std::printf("  kairos disabled, inline flag check   %7.2f ns   (target <= 1.5 ns)\n",
              disabled_flag);
  Headline("range_benchmark", "disabled_plt_call_ns", disabled_plt, Better::kLower, "ns", 1.5);
  Headline("range_benchmark", "disabled_inline_flag_ns", disabled_flag, Better::kLower, "ns", 1.5);

  {
    // The sessions' traces and summaries: removed when `temp` goes (a benchmark leaves nothing).
    const kairos::testing::TempDir temp("kairos_bench_");
    const std::string& tmpl = temp.path();
    const std::string cfg = std::string("ACTIVITIES_LOG_FILE=") + tmpl + "/bench.json";
    init(cfg.c_str());
    // The same core called without the shim (its table, as the shim itself calls it): what the
    // shim's flag test and indirect call add, in the same sessions.
    const kairos::bench::KairosCoreDirect core = kairos::bench::KairosCoreDirect::Find();
    double so_recording = 1e30, core_recording = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
      if (start() != 0) break;
      push(name);  // cold path per session
      pop();
      so_recording = std::min(so_recording, NsPerRange([&] {
        for (int i = 0; i < kRanges / 4; ++i) {
          push(name);
          pop();
        }
      }, kRanges / 4, 1));
      if (core.push != nullptr) {
        core_recording = std::min(core_recording, NsPerRange([&] {
          for (int i = 0; i < kRanges / 4; ++i) {
            core.push(name);
            core.pop();
          }
        }, kRanges / 4, 1));
      }
      stop();
      flush();
    }
    std::printf("  kairos recording via libkairos.so    %7.2f ns   ratio %.2fx\n", so_recording,
                so_recording / bare);
    Headline("range_benchmark", "recording_so_vs_bare_ring", so_recording / bare, Better::kLower,
             "x", 1.3);
    if (core.push != nullptr) {
      std::printf("  same, libkairos_core.so without the shim %5.2f ns   ratio %.2fx (the shim "
                  "adds %.2f ns)\n", core_recording, core_recording / bare,
                  so_recording - core_recording);
    }
  }
  return 0;
}
