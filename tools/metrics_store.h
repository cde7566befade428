// File: metrics_store.h
// Layer: tools (`kairos daemon --metrics-port`). The agent's table of telemetry series: the
// processes a daemon knows send it one "tlm" datagram per telemetry interval (one JSON line
// per GPU, docs/TELEMETRY.md); the store keeps the latest value of each gauge and the running
// total of each counter per (pid, device), and renders them in Prometheus' text exposition
// format (version 0.0.4) for /metrics. docs/FLEET.md lists the metrics and labels.
// Bounded: at most max_series series (the rest counted, never stored); a series disappears at
// the first sweep after its process exits, or when it has not been updated for two of its
// intervals plus a grace; each process may send at most kMaxLinesPerSecond lines (the rest
// counted). Pure logic: the clock, "is this pid registered" and "is it alive" are
// passed in, so tests need no processes.
// Threading: not thread-safe; owned by the relay's event-loop thread.
#ifndef KAIROS_TOOLS_METRICS_STORE_H_
#define KAIROS_TOOLS_METRICS_STORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace kairos::tools {

struct MetricsStoreOptions {
  std::string host;              // the `host` label of every series (this agent's host name)
  size_t max_series = 4096;      // (pid, device) pairs kept; more are counted as dropped
  int64_t stale_grace_ms = 2000; // a series not updated for 2 intervals + this is dropped
};

// Why a line or a datagram was not taken (the label of kairos_agent_telemetry_rejected_total).
enum class MetricsReject : uint8_t {
  kMalformed = 0,     // not a JSON object with the documented fields and types
  kUnknownProcess,    // the pid is not a process polling this daemon under that job id
  kRateLimited,       // more lines from one process than kMaxLinesPerSecond
  kTooManyLines,      // more lines in one datagram than kMaxLinesPerDatagram
  kPidMismatch,       // the kernel-verified sender already speaks for another pid, or the
                      // pid's series belong to another sender (a forged or colliding pid)
  kCount
};
const char* MetricsRejectName(MetricsReject r);

class MetricsStore {
 public:
  // A process sends one datagram per interval, one line per GPU (its exit adds one for the
  // partial interval): 64 lines a second is 8 GPUs at 8 intervals a second.
  static constexpr int kMaxLinesPerSecond = 64;
  static constexpr size_t kMaxLinesPerDatagram = 64;
  // Series one pid may hold (a process sends one line per GPU it sees, at most a datagram's
  // worth); lines of more devices are counted as dropped series.
  static constexpr size_t kMaxDevicesPerProcess = kMaxLinesPerDatagram;
  // KAIROS_TELEMETRY_INTERVAL_SECS is at most 86400; a longer interval is malformed (it
  // would keep a series alive for days after its sender went quiet).
  static constexpr int64_t kMaxIntervalNs = int64_t{2} * 86400 * 1000000000;
  // (job id, pid) -> the daemon knows this process (it polls under that job id).
  using Known = std::function<bool(int64_t job_id, int64_t pid)>;
  using Alive = std::function<bool(int64_t pid)>;

  explicit MetricsStore(MetricsStoreOptions options) : options_(std::move(options)) {}

  // One "tlm" payload: newline-separated telemetry lines. Lines are taken one by one; a bad
  // line is counted and skipped. Returns the lines taken. `sender` is the sending process as
  // the kernel saw it (SCM_CREDENTIALS, in the agent's pid namespace), when known: one sender
  // speaks for one pid and a pid's series for one sender, so a process forging pids of other
  // live, registered processes holds at most one process's share of the series, never the cap.
  size_t Ingest(std::string_view payload, int64_t now_ms, const Known& known,
                std::optional<int64_t> sender = std::nullopt);
  // Drops series of dead processes (`alive` null: no probe) and stale series. Returns how many.
  size_t Sweep(int64_t now_ms, const Alive& alive);
  // True when a series of `pid` exists (the relay then does not repeat its telemetry offer).
  bool HasPid(int64_t pid) const;
  size_t series() const { return series_.size(); }
  uint64_t lines() const { return lines_; }
  uint64_t dropped_series() const { return dropped_series_; }
  uint64_t rejected(MetricsReject r) const { return rejected_[static_cast<size_t>(r)]; }

  // The exposition text of every series (HELP and TYPE once per metric family, families in a
  // fixed order, series in (pid, device) order). Values that are null in the line are left
  // out of the family (no sample), never written as 0.
  std::string Render() const;

 private:
  struct Series {
    std::optional<int64_t> job_id, rank;
    std::string gpu_uuid;
    std::optional<double> busy, sm, occupancy, tensor, dram, step_time_ms, process_cpu_pct;
    std::optional<int64_t> process_rss_bytes;
    // The GPU's device memory in use (every process's, cuMemGetInfo) and its size (schema 3).
    std::optional<int64_t> gpu_memory_used_bytes, gpu_memory_total_bytes;
    // Running totals since the series appeared (Prometheus counters); null until a line
    // carries the field.
    std::optional<uint64_t> kernels, memcpy_bytes, steps;
    int64_t ts_ns = 0, interval_ns = 0;
    int64_t updated_ms = 0;
  };
  struct Sender {
    int64_t window_start_ms = 0;
    int count = 0;
  };
  bool IngestLine(std::string_view line, int64_t now_ms, const Known& known,
                  std::optional<int64_t> sender);
  // The gates of a well-formed line, in order: a known process, its sender, its rate (each
  // refusal counted).
  bool Admit(int64_t job_id, int64_t pid, int64_t now_ms, const Known& known,
             std::optional<int64_t> sender);
  // Binds `sender` to `pid` on its first line; false when either is bound to another.
  bool ClaimPid(int64_t sender, int64_t pid);
  void ForgetPid(int64_t pid);  // drops the pid's sender pair (it holds no series)
  // Counts a line against `sender`'s per-second budget; false when over it. Counted per line,
  // so a flood of one-line datagrams and one of full datagrams cost the same.
  static bool WithinRate(Sender& sender, int64_t now_ms);
  void Reject(MetricsReject r) { ++rejected_[static_cast<size_t>(r)]; }

  MetricsStoreOptions options_;
  std::map<std::pair<int64_t, uint32_t>, Series> series_;  // (pid, device)
  std::map<int64_t, Sender> senders_;  // per pid rate limit; only pids with series or known
  // Kernel-verified sender <-> the pid it speaks for; an entry lives while the pid has series.
  std::map<int64_t, int64_t> pid_of_sender_, sender_of_pid_;
  uint64_t lines_ = 0, dropped_series_ = 0;
  uint64_t rejected_[static_cast<size_t>(MetricsReject::kCount)] = {};
};

// Prometheus label value escaping (text format 0.0.4): backslash, double quote and line feed
// become \\, \" and \n; a byte that is not part of valid UTF-8 becomes U+FFFD (Prometheus
// fails the whole scrape on one invalid label value); everything else is copied.
std::string EscapeLabelValue(std::string_view value);

}  // namespace kairos::tools

#endif  // KAIROS_TOOLS_METRICS_STORE_H_
