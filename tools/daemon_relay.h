// File: daemon_relay.h
// Layer: tools (`kairos daemon`). A local stand-in for the Dynolog daemon: the daemon side of
// the IPC fabric (Unix datagrams, "req"/"ctxt") plus the TCP JSON RPC that `dyno gputrace`
// and `kairos trace` use. One thread, one poll(2) loop: every socket is non-blocking, every
// TCP peer has a deadline and every reply is sent once without retry, so no peer (silent TCP
// client, datagram peer that cannot receive) can stall anyone else.
// Threading: Create() and Run() on one thread; Run() owns everything until the stop fd fires.
#ifndef KAIROS_TOOLS_DAEMON_RELAY_H_
#define KAIROS_TOOLS_DAEMON_RELAY_H_

#include <poll.h>
#include <sys/un.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "daemon_registry.h"
#include "metrics_store.h"
#include "util/log.h"

namespace kairos::tools {

struct RelayOptions {
  std::string endpoint = "dynolog";   // IPC name (KAIROS_DAEMON_ENDPOINT / --endpoint)
  std::string socket_dir;             // KINETO_IPC_SOCKET_DIR / --socket-dir ("" = abstract)
  std::string bind_address = "127.0.0.1";
  int port = 1778;                    // 0 = ephemeral (see rpc_port())
  int rpc_timeout_ms = 5000;          // a TCP peer must finish its request within this
  int64_t stale_ms = 20000;           // forget processes that stopped polling (4 anchor polls)
  bool check_pids = true;             // forget processes whose leaf pid is gone
  int max_connections = 64;
  size_t max_processes = DaemonRegistry::kDefaultMaxEntries;  // registry cap (daemon_registry.h)
  bool verbose = false;               // log every poll
  // `--metrics-port`: serve /metrics (Prometheus text format) on this TCP port (0 = any free
  // one); -1 = no metrics, and no telemetry offer to processes (docs/FLEET.md).
  int metrics_port = -1;
  std::string metrics_address = "127.0.0.1";
  int64_t metrics_interval_secs = 10;  // offered to processes that have no series yet
  size_t metrics_max_series = 4096;
  int max_metrics_connections = 16;
};

struct RelayStats {
  uint64_t polls = 0, configs_sent = 0, reply_failures = 0, invalid_datagrams = 0;
  uint64_t rpc_served = 0, rpc_dropped = 0, rpc_timeouts = 0;
  uint64_t registry_refused = 0;  // polls of new processes refused: the registry was full
  uint64_t telemetry_datagrams = 0, telemetry_offers = 0;
  uint64_t scrapes = 0, http_errors = 0, http_dropped = 0, http_timeouts = 0;
};

class Relay {
 public:
  static absl::StatusOr<std::unique_ptr<Relay>> Create(const RelayOptions& options);
  ~Relay();
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  int rpc_port() const { return rpc_port_; }
  int metrics_port() const { return metrics_port_; }
  std::string ipc_address() const;
  // Serves until `stop_fd` is readable (-1 = forever) or a fatal poll error.
  absl::Status Run(int stop_fd);
  const RelayStats& stats() const { return stats_; }

 private:
  struct Connection {
    int fd = -1;
    int64_t deadline_ms = 0;
    std::string in;    // bytes read so far (length prefix + body)
    std::string out;   // framed reply still to write
    size_t written = 0;
  };
  explicit Relay(const RelayOptions& options);
  absl::Status Open();
  void OnDatagram();
  // A decoded "req" (poll) or "ctxt" datagram: the reply to send, false when it was dropped
  // (counted and logged). A poll also gives the config it delivers and who polled.
  bool OnPoll(std::string_view payload, const std::string& peer, std::string* reply,
              std::optional<std::string>* config, int64_t* job_id, std::vector<int32_t>* pids);
  bool OnContext(std::string_view payload, const std::string& peer, std::string* reply);
  void OnAccept();
  // Returns false when the connection is finished (closed by either side or by us).
  bool OnReadable(Connection& c);
  bool OnWritable(Connection& c);
  void Close(Connection& c, const char* why);
  // /metrics connections: same Connection, a head to read, one response, close.
  void OnMetricsAccept();
  bool OnMetricsReadable(Connection& c);
  std::string MetricsBody() const;
  // Telemetry lines from a process (a "tlm" datagram); `sender`: its kernel-verified pid.
  void OnTelemetry(std::string_view payload, const std::string& peer,
                   std::optional<int64_t> sender);
  // Services one connection list for one poll(2) wake-up (fds from `first`).
  void ServeConnections(std::vector<Connection>& list, const std::vector<pollfd>& fds,
                        size_t first, int64_t now, bool http);

  RelayOptions options_;
  DaemonRegistry registry_;
  int ipc_fd_ = -1;
  int listen_fd_ = -1;
  int rpc_port_ = 0;
  sockaddr_un ipc_addr_{};
  socklen_t ipc_addr_len_ = 0;
  std::vector<char> buffer_;
  std::vector<Connection> connections_;
  int metrics_fd_ = -1;
  int metrics_port_ = 0;
  std::vector<Connection> http_connections_;
  std::unique_ptr<MetricsStore> metrics_;  // null without --metrics-port
  std::map<std::pair<int64_t, int32_t>, std::set<int32_t>> contexts_;  // "ctxt" (vestigial)
  RelayStats stats_;
  // Rate limits of the lines any local process can trigger (log.h), one per kind.
  LogRateLimiter datagram_log_;        // dropped or unanswerable datagrams
  LogRateLimiter connection_log_;      // refused, timed-out or broken RPC connections
  LogRateLimiter rpc_refused_log_;     // RPC requests answered by closing (unparsable, unknown fn)
  LogRateLimiter rpc_log_{30};         // served requests (a person's triggers: a larger burst)
  LogRateLimiter registry_full_log_;   // polls refused by the registry cap
  LogRateLimiter telemetry_log_;       // telemetry lines refused (garbage, strangers, floods)
  LogRateLimiter http_log_;            // /metrics connections refused, timed out or bad
};

}  // namespace kairos::tools

#endif  // KAIROS_TOOLS_DAEMON_RELAY_H_
