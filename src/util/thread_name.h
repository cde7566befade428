// File: thread_name.h
// Layer: kairos_util. Names kairos' own threads "kairos-<role>" (Linux comm, at most 15
// bytes), so that `top -H`, `ps -L`, perf, py-spy and gdb show which threads in a job are the
// profiler's, and so the overhead benchmark can charge CPU time to kairos by thread
// (bench/pm_sampling_overhead_benchmark.cc). docs/ARCHITECTURE.md lists the names.
// A new thread starts with its creator's name: until a kairos thread's first line has run, and
// for good in threads another library starts from a kairos thread (CUPTI's own workers, when
// kairos' runner is the first to enable CUPTI activity), the name says kairos-<creator's role>.
// Threading: names the calling thread; call first thing in the thread's body.
#ifndef KAIROS_SRC_THREAD_NAME_H_
#define KAIROS_SRC_THREAD_NAME_H_

namespace kairos {

// Every kairos thread name starts with this; a thread's role follows (longer names are cut).
inline constexpr const char* kThreadNamePrefix = "kairos-";

// Sets the calling thread's name to kThreadNamePrefix + role. Failure (never expected on
// Linux) is ignored: a name is a convenience.
void NameThisThread(const char* role);

}  // namespace kairos

#endif  // KAIROS_SRC_THREAD_NAME_H_
