// File: daemon_registry.h
// Layer: tools (`kairos daemon`). The relay's table of traced processes and its matching of
// on-demand requests, with Dynolog's semantics (dynolog-wire-protocol.md §3.1, §5):
// one entry per (job id, pid-ancestry set), process_limit and "busy" counting, a config
// handed out once. Deviations (docs/ONDEMAND.md): job ids are 64-bit end to end, a config is
// cleared only after its reply was sent, and dead processes are forgotten at once.
// Threading: not thread-safe; owned by the relay's single event-loop thread. Pure logic: the
// clock and the "is this pid alive" probe are injected, so tests need no processes.
#ifndef KAIROS_TOOLS_DAEMON_REGISTRY_H_
#define KAIROS_TOOLS_DAEMON_REGISTRY_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kairos::tools {

struct OnDemandResult {
  std::vector<int32_t> processes_matched;    // leaf pids, in match order
  std::vector<int32_t> profilers_triggered;  // leaf pids that got the config
  int32_t profilers_busy = 0;                // matched, under the limit, config already pending
};

class DaemonRegistry {
 public:
  using PidAlive = std::function<bool(int32_t pid)>;
  // Any local process can register by sending polls, so the table is bounded twice. At most
  // this many entries (a host runs a few hundred traced processes at most; a flood of fake
  // polls with new job ids grew the relay by 60-88 MB in 10 s):
  static constexpr size_t kDefaultMaxEntries = 4096;
  // And an entry lives at most this long after it registered, however often it polls, unless
  // a config waits for it: polls naming a live pid that is not theirs (pid 1) could otherwise
  // keep entries forever. A real process registers again with its next poll (1 s later).
  static constexpr int64_t kDefaultMaxAgeMs = 3600 * 1000;
  // `stale_ms`: an entry whose last poll is older than this is dropped (Dynolog: 60-120 s).
  // `pid_alive`: nullptr disables the probe (e.g. processes in another pid namespace).
  DaemonRegistry(int64_t stale_ms, PidAlive pid_alive, std::string hostname,
                 size_t max_entries = kDefaultMaxEntries, int64_t max_age_ms = kDefaultMaxAgeMs);

  // A "req" poll from a process. Registers or refreshes it. If `type` has the activities bit
  // and a config is pending, returns the reply text (config + "\n"); the caller sends it and
  // then calls ConfigDelivered(), so a reply that could not be sent keeps the config pending.
  // A new process while the table is full (after a sweep) is not registered: counted in
  // refused(), and nullopt is returned.
  std::optional<std::string> OnPoll(int64_t job_id, const std::vector<int32_t>& pids,
                                    int32_t type, int64_t now_ms);
  void ConfigDelivered(int64_t job_id, const std::vector<int32_t>& pids);

  // setKinetOnDemandRequest. `pids` empty or exactly {0} = every process of the job; else an
  // entry matches when any pid of its ancestry set is requested. `now_unix_s` seeds trace ids.
  OnDemandResult Request(int64_t job_id, const std::vector<int32_t>& pids,
                         const std::string& config, int64_t process_limit, int64_t now_ms,
                         int64_t now_unix_s, int64_t now_unix_ms = 0);

  // Drops stale entries, entries whose leaf pid no longer exists and entries past the age
  // limit with no config pending. Returns how many.
  size_t Sweep(int64_t now_ms);
  size_t size() const { return entries_; }
  // True when a process with this leaf pid polls under this job id (telemetry is taken only
  // from processes the daemon knows).
  bool Knows(int64_t job_id, int32_t leaf_pid) const;
  size_t max_entries() const { return max_entries_; }
  // Polls of new processes refused because the table was full.
  uint64_t refused() const { return refused_; }

  // The text the process receives: "\n    " + config + "\n    REQUEST_TRACE_ID=" + id
  // (the reply adds "\n"), and the anchor's trace id: decimal std::hash of
  // "<hostname>:<leaf pid>:<unix seconds>". An iteration request (one that sets
  // PROFILE_START_ITERATION or its round-up) also gets "\n    KAIROS_REQUEST_TIME_MS=" +
  // `now_unix_ms` (a kairos extension, when > 0): every rank of the job plans its window from
  // the iteration it was in at that one instant. Time requests are sent as Dynolog sends them.
  static std::string PendingText(const std::string& config, const std::string& trace_id,
                                 int64_t now_unix_ms = 0);
  std::string TraceId(int32_t leaf_pid, int64_t now_unix_s) const;

 private:
  struct Entry {
    int32_t leaf_pid = 0;
    int64_t registered_ms = 0;
    int64_t last_poll_ms = 0;
    std::optional<std::string> pending;  // full text without the final "\n"
  };
  using PidSet = std::set<int32_t>;
  Entry* Find(int64_t job_id, const std::vector<int32_t>& pids);

  int64_t stale_ms_;
  PidAlive pid_alive_;
  std::string hostname_;
  size_t max_entries_;
  int64_t max_age_ms_;
  size_t entries_ = 0;
  uint64_t refused_ = 0;
  // Ordered maps: entries are visited in std::set<int32_t> order, as in Dynolog, so
  // process_limit picks the same processes.
  std::map<int64_t, std::map<PidSet, Entry>> jobs_;
};

}  // namespace kairos::tools

#endif  // KAIROS_TOOLS_DAEMON_REGISTRY_H_
