// File: host_sampler.h
// Layer: kairos_counters. The "host" TraceSource: samples per-core CPU utilisation and
// iowait, process CPU time, thread count and RSS, system memory, disk and network bytes and
// context switches from /proc at Config::host_metrics_interval_ms, and hands them to the
// trace as counter tracks that line up with the CPU and GPU rows.
// Threading: one background thread of its own samples between StartWarmup and
// StopRecording; every TraceSource method runs on the controller thread. State shared with
// the sampling thread is guarded by mu_.
#ifndef KAIROS_SRC_COUNTERS_HOST_SAMPLER_H_
#define KAIROS_SRC_COUNTERS_HOST_SAMPLER_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "counters/proc_parse.h"
#include "config/config.h"  // the sources take a Config (trace_source.h only declares it)
#include "model/trace_source.h"

namespace kairos {

// Reads one /proc file; injected so tests replay captured text.
class ProcReader {
 public:
  virtual ~ProcReader() = default;
  // Returns false when the file cannot be read.
  virtual bool Read(const std::string& path, std::string* out) = 0;
};

struct HostSamplerOptions {
  std::function<int64_t()> clock;  // Unix ns; empty = UnixNowNs
  ProcReader* reader = nullptr;    // not owned; nullptr = the real /proc
  bool run_thread = true;          // false: the caller drives Tick() (tests, benchmarks)
  // Bound on stored values per session (one value = one counter sample, 16 bytes). At the
  // default 100 ms interval and 2 x 64 cores + 11 metrics this holds ~2 hours.
  size_t max_values = size_t{1} << 20;
  int64_t ticks_per_second = 0;    // USER_HZ; 0 = sysconf(_SC_CLK_TCK)
  int64_t page_size = 0;           // 0 = sysconf(_SC_PAGESIZE)
};

// Counter track names the analysis looks up (docs/SUMMARY.md lists every track).
inline constexpr const char* kHostCpuUtilTrack = "cpu.util";
inline constexpr const char* kHostCpuIowaitTrack = "cpu.iowait";
inline constexpr const char* kHostProcessCpuTrack = "process.cpu";

class HostSampler : public TraceSource {
 public:
  explicit HostSampler(HostSamplerOptions options = {});
  ~HostSampler() override;
  HostSampler(const HostSampler&) = delete;
  HostSampler& operator=(const HostSampler&) = delete;

  const char* name() const override { return "host"; }
  absl::Status StartWarmup(const Config& config) override;
  void StartRecording(int64_t window_start_ns) override;
  void StopRecording(int64_t window_end_ns) override;
  void Collect(TraceData& data) override;
  void Reset() override;

  // Takes a sample if one is due at `now_ns` (Unix ns); returns whether it did. Called by
  // the sampling thread; tests call it directly with run_thread = false.
  bool Tick(int64_t now_ns);

 private:
  struct Snapshot {
    int64_t ts_ns = 0;
    bool has_stat = false, has_mem = false, has_proc = false, has_disk = false,
         has_net = false;
    internal::ProcStat stat;
    internal::MemInfo mem;
    internal::ProcessStat proc;
    internal::IoTotals disk, net;
  };
  struct Value {
    int64_t ts_ns;
    double value;
    uint32_t metric;
  };

  Snapshot Read(int64_t now_ns);
  void SampleLocked(int64_t now_ns);
  void Emit(int64_t ts_ns, uint32_t metric, double value);
  void EnsureMetricsLocked(size_t cores);
  void StopThread();
  void ThreadMain();
  int64_t Now() const;

  HostSamplerOptions options_;
  // The real /proc reader when none is injected: the sampler's own (it lives as long as the
  // sampler's thread that reads through it), not a process-wide one.
  std::unique_ptr<ProcReader> own_reader_;
  ProcReader* reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
  bool stop_ = false;           // guarded by mu_
  bool enabled_ = false;        // guarded by mu_
  bool recording_ = false;      // guarded by mu_
  int64_t interval_ns_ = 0;     // guarded by mu_
  int64_t next_due_ns_ = 0;     // guarded by mu_
  int64_t window_start_ns_ = 0, window_end_ns_ = 0;
  bool have_prev_ = false;      // guarded by mu_
  Snapshot prev_;               // guarded by mu_
  std::vector<CounterTrack> metrics_;  // guarded by mu_
  size_t metric_cores_ = 0;     // cores covered by metrics_
  std::vector<Value> values_;   // guarded by mu_
  uint64_t dropped_ = 0, missed_ticks_ = 0, read_errors_ = 0;  // guarded by mu_
};

}  // namespace kairos

#endif  // KAIROS_SRC_COUNTERS_HOST_SAMPLER_H_
