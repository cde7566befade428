// File: test/sim/src/sim_common.h
// Layer: CUDA/CUPTI simulator (test infrastructure; never linked into kairos).
// Threading: every helper here is thread-safe.
//
// Small helpers shared by the substitute libcudart.so.13 and libcupti.so.13:
// the simulator's one clock (CLOCK_MONOTONIC ns; every simulated GPU time is on
// it), absolute sleeps, environment parsing and the verbose diagnostics switch.
#ifndef KAIROS_TEST_SIM_SRC_SIM_COMMON_H_
#define KAIROS_TEST_SIM_SRC_SIM_COMMON_H_

#include <cstdint>
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

namespace kairos::sim {

inline uint64_t MonoNowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

inline uint64_t RealtimeNowNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Blocks the calling thread until the monotonic clock reaches `deadline_ns`.
// This is what makes simulated GPU work cost real wall-clock time at syncs.
// Long waits sleep (minus a margin for wake-up latency); the rest yields in a
// loop so short GPU work is not rounded up to the scheduler's granularity.
inline void SleepUntilMono(uint64_t deadline_ns) {
  constexpr uint64_t kSpinMarginNs = 200000;
  uint64_t now = MonoNowNs();
  if (deadline_ns > now + kSpinMarginNs) {
    uint64_t wake = deadline_ns - kSpinMarginNs;
    timespec ts;
    ts.tv_sec = static_cast<time_t>(wake / 1000000000ull);
    ts.tv_nsec = static_cast<long>(wake % 1000000000ull);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
    }
  }
  while (MonoNowNs() < deadline_ns) sched_yield();
}

inline const char* EnvOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : fallback;
}

inline long long EnvInt(const char* name, long long fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  long long parsed = std::strtoll(v, &end, 10);
  return (end != nullptr && *end == '\0') ? parsed : fallback;
}

// KAIROS_SIM_VERBOSE=1 turns on one-line diagnostics on stderr for every API
// misuse the simulator detects (the error code is returned either way).
inline bool Verbose() {
  static const bool verbose = EnvInt("KAIROS_SIM_VERBOSE", 0) != 0;
  return verbose;
}

}  // namespace kairos::sim

#define KSIM_DIAG(...)                              \
  do {                                              \
    if (::kairos::sim::Verbose()) {                 \
      std::fprintf(stderr, "[kairos-sim] " __VA_ARGS__); \
      std::fputc('\n', stderr);                     \
    }                                               \
  } while (0)

#endif  // KAIROS_TEST_SIM_SRC_SIM_COMMON_H_
