// File: proc_parse.h
// Layer: kairos_counters. Pure parsers for the /proc files the host sampler reads, and the
// arithmetic that turns two snapshots into rates. Kept free of I/O and clocks so they are
// tested on captured text (test/counters/data/).
// Threading: pure functions; safe from any thread.
#ifndef KAIROS_SRC_COUNTERS_PROC_PARSE_H_
#define KAIROS_SRC_COUNTERS_PROC_PARSE_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace kairos::internal {

// One "cpuN" line of /proc/stat, in USER_HZ ticks.
struct CpuTicks {
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
           steal = 0;
  uint64_t Total() const { return user + nice + system + idle + iowait + irq + softirq + steal; }
  // Busy = everything but idle and iowait (iowait is idle time with I/O pending).
  uint64_t Busy() const { return Total() - idle - iowait; }
};

struct ProcStat {
  CpuTicks all;                // the aggregate "cpu" line
  std::vector<CpuTicks> cores; // "cpu0", "cpu1", ... in file order
  uint64_t context_switches = 0;  // "ctxt"
};

struct MemInfo {
  uint64_t total_bytes = 0;
  uint64_t available_bytes = 0;
};

struct ProcessStat {
  uint64_t utime_ticks = 0;
  uint64_t stime_ticks = 0;
  uint64_t num_threads = 0;
  uint64_t rss_pages = 0;
};

struct IoTotals {
  uint64_t read_bytes = 0;   // disk: bytes read; net: bytes received
  uint64_t write_bytes = 0;  // disk: bytes written; net: bytes sent
};

absl::StatusOr<ProcStat> ParseProcStat(std::string_view text);
absl::StatusOr<MemInfo> ParseMemInfo(std::string_view text);
// /proc/<pid>/stat; the command name may contain spaces and parentheses.
absl::StatusOr<ProcessStat> ParseProcessStat(std::string_view text);
// Sums whole disks only: loop/ram/zram/dm-/md devices and partitions (a name extending an
// earlier listed disk's name, e.g. sda1 after sda) are skipped so no byte counts twice.
absl::StatusOr<IoTotals> ParseDiskStats(std::string_view text);
// Sums every interface except loopback.
absl::StatusOr<IoTotals> ParseNetDev(std::string_view text);

// Percentage of `b - a` ticks that were busy (or iowait); 0 when no ticks elapsed.
double BusyPercent(const CpuTicks& a, const CpuTicks& b);
double IowaitPercent(const CpuTicks& a, const CpuTicks& b);
// (b - a) / seconds, treating a counter that went backwards (reset) as 0.
double RatePerSecond(uint64_t a, uint64_t b, int64_t elapsed_ns);

}  // namespace kairos::internal

#endif  // KAIROS_SRC_COUNTERS_PROC_PARSE_H_
