// File: daemon_client.h
// Layer: kairos_config. The in-process Dynolog IPC client: polls the daemon (or `kairos
// daemon`) with "req" on its own thread and hands each received on-demand config to a
// TraceRequestHandler. It knows nothing of sessions: the session implements the handler.
// Threading: one private poller thread per started client. Start/Stop/PollOnce are called by
// the owner (never concurrently with each other); stats() and the handler calls are
// thread-safe. Nothing here ever blocks the application's threads.
//
// Differences from the anchor (dynolog-wire-protocol.md §8), all deliberate:
//  - one non-blocking send per poll, no retry backoff (#1);
//  - the socket is watched all the time, so a late reply is taken when it arrives, never read
//    one poll late (#2); every datagram is validated and must come from the daemon's address;
//  - the pid list is recomputed whenever the parent pid changes (#10); the endpoint is created once per client
//    with RAII buffers (#7, #8); a config that fails to parse is rejected whole (#9).
#ifndef KAIROS_SRC_CONFIG_DAEMON_CLIENT_H_
#define KAIROS_SRC_CONFIG_DAEMON_CLIENT_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "config/config.h"
#include "config/daemon_protocol.h"

namespace kairos {

// Implemented by the session. Both methods are called on the daemon client thread.
class TraceRequestHandler {
 public:
  virtual ~TraceRequestHandler() = default;
  // True while a trace is pending or recording: polls then carry type 0 so the daemon keeps
  // a new request pending instead of handing it to a process that would refuse it.
  virtual bool Busy() const = 0;
  // A validated on-demand config (already parsed with ConfigSource::kDaemon and path-checked).
  // Returns OK when the trace was scheduled; an error (e.g. "profiler busy") rejects it and is
  // logged with `message`. `message` may carry where the trace will be written. Must not block
  // for long: it runs between polls. `poll_raw` is the raw clock (ReadRawClock) of the poll
  // that fetched the request: every process of a job polls on the same wall-clock tick, so an
  // iteration window planned from the iteration current at that instant (not at arrival,
  // which the daemon's reply latency and scheduling delay) starts at the same step on every rank.
  virtual absl::Status OnTraceRequest(const Config& config, uint64_t poll_raw,
                                      std::string* message) = 0;
};

// Turns the daemon's config text into a Config, or rejects it. `note` receives a one-line
// remark to log (e.g. "log file outside the allowed directory; using <path>"). The default
// one is MakeDaemonConfigPreparer() in daemon_config.h.
using DaemonConfigPreparer =
    std::function<absl::StatusOr<Config>(std::string_view text, std::string* note)>;

struct DaemonClientOptions {
  std::string endpoint = internal::kDaemonDefaultEndpoint;  // KAIROS_DAEMON_ENDPOINT
  std::string socket_dir;        // KINETO_IPC_SOCKET_DIR ("" = abstract names)
  int64_t job_id = 0;            // SLURM_JOB_ID / KAIROS_JOB_ID, sent as-is (64-bit)
  int64_t poll_ms = 1000;        // KAIROS_DAEMON_POLL_MS (anchor: 5000)
  std::string client_name;       // "" = "dynoconfigclient" + random UUIDv4
  // Asked on each tick until it first says yes: before that nothing is sent, so the daemon
  // does not know the process (a launcher or shell tool that merely inherited LD_PRELOAD
  // never takes a trigger slot). Null: poll from the start. Must not block.
  std::function<bool()> ready;
  // A kairos daemon that serves metrics offers to collect telemetry ("tlm", every N s) in
  // reply to a poll: called on the poller thread with N, at most once per client (the first
  // offer; later ones are ignored). Null: offers are counted and ignored.
  std::function<void(int64_t interval_secs)> on_telemetry_offer;
};

struct DaemonClientStats {
  uint64_t polls = 0;              // "req" datagrams handed to the kernel
  uint64_t send_failures = 0;      // sends refused (daemon absent, queue full)
  uint64_t replies = 0;            // valid "req" replies (empty or not)
  uint64_t configs_received = 0;   // non-empty replies
  uint64_t configs_accepted = 0;   // handler said OK
  uint64_t configs_rejected = 0;   // parse error, path refusal or handler error
  uint64_t invalid_datagrams = 0;  // failed validation, oversized or from a stranger
  uint64_t telemetry_offers = 0;   // "tlm" offers received from the daemon
  uint64_t telemetry_sent = 0;     // "tlm" datagrams handed to the kernel
  uint64_t telemetry_send_failures = 0;  // refused (daemon gone, queue full, too large)
  int last_send_errno = 0;         // 0 after a successful send
};

class DaemonClient {
 public:
  // Creates and binds the endpoint (abstract '\0'+name+'\0', or <socket_dir>/<name>). The
  // handler and preparer must outlive the client. Fails (with a one-line message) when the
  // socket cannot be created or bound; the caller logs it and runs without the daemon.
  static absl::StatusOr<std::unique_ptr<DaemonClient>> Create(DaemonClientOptions options,
                                                             TraceRequestHandler* handler,
                                                             DaemonConfigPreparer preparer);
  ~DaemonClient();  // Stop()s; removes the socket file in filesystem mode.
  DaemonClient(const DaemonClient&) = delete;
  DaemonClient& operator=(const DaemonClient&) = delete;

  // Starts the poller thread: first poll at once, then on every multiple of poll_ms of the
  // wall clock (CLOCK_REALTIME), so all processes of a host poll at the same instants and a
  // job-wide request reaches every rank on the same tick.
  absl::Status Start();
  // Wakes and joins the poller thread (bounded: it never sleeps in a send). In a forked child
  // (getpid() differs from the creator) the parent's thread does not exist: it is abandoned,
  // not joined, and the inherited socket is closed so the child never reads the parent's
  // replies.
  void Stop();
  // Removes this process's socket file (filesystem mode; never a forked child's inherited
  // one) without stopping the poller: for exit, where the client is never destroyed and a
  // join could wait on a request being handled. A later reply to the gone path is dropped
  // by the kernel. Does not block.
  void RemoveSocketFile();

  // One synchronous poll for tests and benchmarks, without the thread: drains what is
  // queued (handling configs), sends one "req" and, if `reply_timeout_ms` > 0, waits up to
  // that long for the "req" reply and handles it. Returns false if the send was refused.
  bool PollOnce(int reply_timeout_ms);

  // Sends one interval's telemetry lines to the daemon as a "tlm" datagram from this
  // client's socket (the channel the polls use: no new port), once, without blocking; a
  // failure is counted, never retried. Any thread (the telemetry writer's); never from a
  // forked child. False when refused or over kDaemonMaxPayload.
  bool SendTelemetry(std::string_view lines);

  DaemonClientStats stats() const;
  // The exact address this client is bound to (for tests: trailing NUL included).
  const internal::DaemonAddress& bound_address() const { return self_; }
  const std::string& client_name() const { return name_; }

  // Own pid then ancestors (at most 10), stopping before pid 1; [1] when we are pid 1.
  // Reads /proc/<pid>/stat.
  static std::vector<int32_t> PidAncestry(pid_t self);
  // Random lower-case UUIDv4 text (36 chars).
  static std::string RandomUuid();

 private:
  DaemonClient(DaemonClientOptions options, TraceRequestHandler* handler,
               DaemonConfigPreparer preparer);
  absl::Status Open();
  void Run();
  bool SendRequest();
  // Reads every queued datagram; returns true if a "req" reply was among them.
  bool DrainSocket();
  void HandleDatagram(std::string_view bytes, const sockaddr_un& from, socklen_t from_len);
  void HandleConfig(std::string_view text);
  bool FromDaemon(const sockaddr_un& from, socklen_t from_len) const;

  const DaemonClientOptions options_;
  TraceRequestHandler* const handler_;
  const DaemonConfigPreparer preparer_;
  const pid_t owner_pid_;
  std::string name_;
  internal::DaemonAddress self_;
  internal::DaemonAddress daemon_;
  int fd_ = -1;
  int wake_fd_ = -1;  // eventfd: Stop() wakes the poller's poll(2)
  std::vector<char> buffer_;  // one receive buffer, header + max payload + 1 (detects oversize)
  std::unique_ptr<std::thread> thread_;
  bool daemon_reachable_ = true;  // poller thread only: logs transitions once each
  std::vector<int32_t> pids_;     // poller thread only: cached ancestry...
  pid_t pids_for_self_ = 0;       // ...valid while getpid() and getppid() are unchanged
  pid_t pids_for_parent_ = 0;
  uint64_t last_poll_raw_ = 0;    // poller thread only: ReadRawClock() of the latest poll sent
  bool ready_ = false;            // poller thread only: options_.ready said yes once

  // Counters only, read by stats(): no other data is published through them, so relaxed
  // increments and loads are enough.

  std::atomic<uint64_t> polls_{0}, send_failures_{0}, replies_{0}, configs_received_{0},
      configs_accepted_{0}, configs_rejected_{0}, invalid_datagrams_{0}, telemetry_offers_{0},
      telemetry_sent_{0}, telemetry_send_failures_{0};
  std::atomic<int> last_send_errno_{0};
};

}  // namespace kairos

#endif  // KAIROS_SRC_CONFIG_DAEMON_CLIENT_H_
