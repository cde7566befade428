// File: bench_clock.h
// Layer: bench. The one thread-CPU clock the in-process benchmarks time with: the development
// VM is shared and oversubscribed, so wall time would measure the scheduler, while a thread's
// CPU time measures its work (both sides of every ratio are timed the same way).
// Threading: reads the calling thread's clock.
#ifndef KAIROS_BENCH_BENCH_CLOCK_H_
#define KAIROS_BENCH_BENCH_CLOCK_H_

#include <time.h>

namespace kairos::bench {

inline double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Every thread of the process: a benchmark whose code under test hands work to a helper
// thread (the JSON flush's kairos-write) charges it with this.
inline double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace kairos::bench

#endif  // KAIROS_BENCH_BENCH_CLOCK_H_
