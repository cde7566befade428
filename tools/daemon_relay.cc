// File: daemon_relay.cc
// Layer: tools (`kairos daemon`). The single-threaded event loop of the relay.
// Threading: Run()'s thread only.
#include "daemon_relay.h"

#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "absl/strings/str_cat.h"
#include "config/daemon_protocol.h"
#include "daemon_rpc.h"
#include "metrics_http.h"
#include "util/clock.h"
#include "util/log.h"

namespace kairos::tools {
namespace {

namespace proto = kairos::internal;
constexpr size_t kMaxContexts = 4096;  // bound the vestigial "ctxt" table against floods

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool PidAlive(int32_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

std::string Hostname() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

// Every relay line goes through log.h's WriteLogLine: one line of at most 1 KiB with control
// bytes shown as \xNN, so a request cannot forge a line ("sent the on-demand config ...") or
// send terminal escapes, and a 200 KB function name costs 1 KiB.
void Log(const std::string& line) { WriteLogLine("kairos daemon: ", line); }

// Lines any local process can trigger at will (a datagram, a connection, an RPC request): at
// most a few per minute per kind, then one count, so a flood cannot fill the relay's log
// (log.h; 3 s of bad requests once printed 35k lines).
void LogLimited(LogRateLimiter& limiter, const std::string& line) {
  uint64_t suppressed = 0;
  if (!limiter.Admit(NowMs() * 1000000, &suppressed)) return;
  if (suppressed == 0) {
    Log(line);
  } else {
    WriteLogLine("kairos daemon: ", line, absl::StrCat(" (suppressed ", suppressed, " similar messages)"));
  }
}


// A non-blocking TCP listener on address:port (numeric); *bound_port gets the real port.
absl::StatusOr<int> ListenTcp(const std::string& address, int port, int* bound_port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = getaddrinfo(address.c_str(), service.c_str(), &hints, &res); rc != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad bind address ", address, ": ", gai_strerror(rc)));
  }
  const int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int one = 1;
  if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  const bool ok = fd >= 0 && bind(fd, res->ai_addr, res->ai_addrlen) == 0 && listen(fd, 50) == 0;
  const int err = errno;
  freeaddrinfo(res);
  if (!ok) {
    if (fd >= 0) close(fd);
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", address, ":", port, ": ", strerror(err)));
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  char host[NI_MAXHOST], serv[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<sockaddr*>(&bound), len, host, sizeof(host), serv,
                  sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    *bound_port = atoi(serv);
  }
  return fd;
}

}  // namespace

Relay::Relay(const RelayOptions& options)
    : options_(options),
      registry_(options.stale_ms, options.check_pids ? DaemonRegistry::PidAlive(PidAlive) : nullptr,
                Hostname(), options.max_processes) {}

Relay::~Relay() {
  for (Connection& c : connections_) close(c.fd);
  for (Connection& c : http_connections_) close(c.fd);
  if (listen_fd_ >= 0) close(listen_fd_);
  if (metrics_fd_ >= 0) close(metrics_fd_);
  if (ipc_fd_ >= 0) {
    close(ipc_fd_);
    if (!options_.socket_dir.empty()) unlink(ipc_addr_.sun_path);
  }
}

absl::StatusOr<std::unique_ptr<Relay>> Relay::Create(const RelayOptions& options) {
  std::unique_ptr<Relay> relay(new Relay(options));
  if (absl::Status s = relay->Open(); !s.ok()) return s;
  return relay;
}

std::string Relay::ipc_address() const {
  return proto::DescribeDaemonAddress(ipc_addr_, ipc_addr_len_);
}

absl::Status Relay::Open() {
  absl::StatusOr<proto::DaemonAddress> addr =
      proto::MakeDaemonAddress(options_.endpoint, options_.socket_dir);
  if (!addr.ok()) return addr.status();
  ipc_addr_ = addr->addr;
  ipc_addr_len_ = addr->length;
  ipc_fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (ipc_fd_ < 0) return absl::InternalError(absl::StrCat("socket: ", strerror(errno)));
  // Credentials on every datagram: telemetry is then bound to the process that really sent
  // it (docs/FLEET.md, "What the agent takes"). Without them the agent still works, trusting
  // the pid in the line as Dynolog does.
  const int on = 1;
  if (setsockopt(ipc_fd_, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) != 0)
    Log(absl::StrCat("SO_PASSCRED: ", strerror(errno), "; telemetry pids are not verified"));
  if (!options_.socket_dir.empty()) unlink(ipc_addr_.sun_path);
  if (bind(ipc_fd_, reinterpret_cast<const sockaddr*>(&ipc_addr_), ipc_addr_len_) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot bind IPC endpoint ", ipc_address(), ": ",
                                               strerror(errno),
                                               errno == EADDRINUSE
                                                   ? " (is dynolog or another kairos daemon running?)"
                                                   : ""));
  }
  if (!options_.socket_dir.empty() && !proto::ShareBoundSocketFile(ipc_addr_)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "IPC endpoint ", ipc_address(), " was replaced after bind (shared socket directory?); "
        "refusing to serve it"));
  }
  buffer_.resize(proto::kDaemonHeaderSize + proto::kDaemonMaxPayload + 1);

  absl::StatusOr<int> rpc = ListenTcp(options_.bind_address, options_.port, &rpc_port_);
  if (!rpc.ok()) return rpc.status();
  listen_fd_ = *rpc;
  if (options_.metrics_port >= 0) {
    absl::StatusOr<int> metrics =
        ListenTcp(options_.metrics_address, options_.metrics_port, &metrics_port_);
    if (!metrics.ok()) return metrics.status();
    metrics_fd_ = *metrics;
    MetricsStoreOptions mo;
    mo.host = Hostname();
    mo.max_series = options_.metrics_max_series;
    metrics_ = std::make_unique<MetricsStore>(mo);
  }
  return absl::OkStatus();
}

absl::Status Relay::Run(int stop_fd) {
  int64_t next_sweep = NowMs() + 1000;
  std::vector<pollfd> fds;
  while (true) {
    fds.clear();
    fds.push_back({ipc_fd_, POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    fds.push_back({stop_fd, POLLIN, 0});
    fds.push_back({metrics_fd_, POLLIN, 0});  // -1 without --metrics-port: poll skips it
    int64_t wake = next_sweep;
    for (const std::vector<Connection>* list : {&connections_, &http_connections_}) {
      for (const Connection& c : *list) {
        fds.push_back({c.fd, static_cast<short>(c.out.empty() ? POLLIN : POLLOUT), 0});
        wake = std::min(wake, c.deadline_ms);
      }
    }
    const int timeout = static_cast<int>(std::max<int64_t>(0, wake - NowMs()));
    if (poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) {
      return absl::InternalError(absl::StrCat("poll: ", strerror(errno)));
    }
    // Datagrams already queued are served even when stop is requested in the same wake-up.
    if (fds[0].revents & POLLIN) OnDatagram();
    if (fds[2].revents & POLLIN) return absl::OkStatus();
    // Connections first (their pollfd indexes are only valid before accept adds more).
    const int64_t now = NowMs();
    const size_t rpc_count = connections_.size();
    ServeConnections(connections_, fds, 4, now, /*http=*/false);
    ServeConnections(http_connections_, fds, 4 + rpc_count, now, /*http=*/true);
    if (fds[1].revents & POLLIN) OnAccept();
    if (fds[3].revents & POLLIN) OnMetricsAccept();
    if (now >= next_sweep) {
      const size_t removed = registry_.Sweep(now);
      if (removed > 0 && options_.verbose) Log(absl::StrCat("forgot ", removed, " process(es)"));
      // A series of an exited process goes at the first sweep after its exit (<= 1 s).
      if (metrics_) metrics_->Sweep(now, options_.check_pids ? [](int64_t pid) {
          return PidAlive(static_cast<int32_t>(pid)); } : MetricsStore::Alive());
      next_sweep = now + 1000;
    }
  }
}

void Relay::ServeConnections(std::vector<Connection>& list, const std::vector<pollfd>& fds,
                             size_t first, int64_t now, bool http) {
  std::vector<Connection> alive;
  for (size_t i = 0; i < list.size(); ++i) {
    Connection& c = list[i];
    const short ev = fds[first + i].revents;
    bool keep = true;
    if (ev & (POLLERR | POLLHUP | POLLNVAL) && !(ev & POLLIN)) {
      Close(c, nullptr);
      keep = false;
    } else if (ev & POLLIN) {
      keep = http ? OnMetricsReadable(c) : OnReadable(c);
    } else if (ev & POLLOUT) {
      keep = OnWritable(c);
    }
    if (keep && now >= c.deadline_ms) {
      if (http) {
        // A scraper that does not send its request, or does not read its response, in time.
        ++stats_.http_timeouts;
        LogLimited(http_log_, "metrics client did not complete its exchange in time; closed");
        close(c.fd);
        c.fd = -1;
      } else {
        ++stats_.rpc_timeouts;
        Close(c, "rpc peer did not complete its request in time; closed");
      }
      keep = false;
    }
    if (keep) alive.push_back(std::move(c));
  }
  list = std::move(alive);
}

void Relay::OnMetricsAccept() {
  while (true) {
    const int fd = accept4(metrics_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    if (static_cast<int>(http_connections_.size()) >= options_.max_metrics_connections) {
      // Full. Refusing the newcomer would let a few idle connections (slowloris) hold every
      // slot and keep Prometheus out for good; instead the oldest connection that has not yet
      // sent a whole request makes room (a real scraper sends its request with the connect,
      // and is answered in the loop's next turn). Only when every slot is writing a response
      // is the newcomer refused.
      auto oldest = http_connections_.end();
      for (auto it = http_connections_.begin(); it != http_connections_.end(); ++it) {
        if (it->out.empty() && (oldest == http_connections_.end() || it->deadline_ms < oldest->deadline_ms))
          oldest = it;
      }
      ++stats_.http_dropped;
      if (oldest == http_connections_.end()) {
        LogLimited(http_log_, "too many metrics connections; refused one");
        close(fd);
        continue;
      }
      LogLimited(http_log_, "too many metrics connections; closed the oldest idle one");
      close(oldest->fd);
      http_connections_.erase(oldest);
    }
    Connection c;
    c.fd = fd;
    c.deadline_ms = NowMs() + options_.rpc_timeout_ms;
    http_connections_.push_back(std::move(c));
  }
}

bool Relay::OnMetricsReadable(Connection& c) {
  char chunk[4096];
  while (true) {
    const ssize_t n = recv(c.fd, chunk, sizeof(chunk), MSG_DONTWAIT);
    if (n == 0) {
      close(c.fd);
      c.fd = -1;
      return false;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) return true;
      close(c.fd);
      c.fd = -1;
      return false;
    }
    // Never more than the head limit plus one chunk in memory, whatever the peer sends.
    c.in.append(chunk, static_cast<size_t>(n));
    const HttpRequestVerdict v = ParseHttpRequest(c.in);
    if (v.kind == HttpRequestVerdict::kIncomplete) continue;
    c.in.clear();
    c.in.shrink_to_fit();
    if (v.kind == HttpRequestVerdict::kError) {
      ++stats_.http_errors;
      LogLimited(http_log_, absl::StrCat("metrics request answered ", v.status));
      c.out = HttpResponse(v.status, "text/plain; charset=utf-8", "", false);
    } else {
      ++stats_.scrapes;
      c.out = HttpResponse(200, kMetricsContentType, MetricsBody(), v.head_only);
    }
    return OnWritable(c);
  }
}

std::string Relay::MetricsBody() const {
  std::string out = metrics_->Render();
  auto family = [&out](const char* name, const char* type, const char* help) {
    absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
  };
  const std::string host = absl::StrCat("{host=\"", EscapeLabelValue(Hostname()), "\"");
  family("kairos_agent_processes", "gauge", "Processes polling this daemon.");
  absl::StrAppend(&out, "kairos_agent_processes", host, "} ", registry_.size(), "\n");
  family("kairos_agent_series", "gauge", "(pid, device) series this agent holds.");
  absl::StrAppend(&out, "kairos_agent_series", host, "} ", metrics_->series(), "\n");
  family("kairos_agent_series_dropped_total", "counter",
         "Telemetry lines not stored because the series cap was reached.");
  absl::StrAppend(&out, "kairos_agent_series_dropped_total", host, "} ",
                  metrics_->dropped_series(), "\n");
  family("kairos_agent_telemetry_lines_total", "counter", "Telemetry lines taken.");
  absl::StrAppend(&out, "kairos_agent_telemetry_lines_total", host, "} ", metrics_->lines(), "\n");
  family("kairos_agent_telemetry_rejected_total", "counter",
         "Telemetry lines or datagrams refused, by reason.");
  for (size_t r = 0; r < static_cast<size_t>(MetricsReject::kCount); ++r) {
    absl::StrAppend(&out, "kairos_agent_telemetry_rejected_total", host, ",reason=\"",
                    MetricsRejectName(static_cast<MetricsReject>(r)), "\"} ",
                    metrics_->rejected(static_cast<MetricsReject>(r)), "\n");
  }
  family("kairos_agent_scrapes_total", "counter", "/metrics requests answered 200.");
  absl::StrAppend(&out, "kairos_agent_scrapes_total", host, "} ", stats_.scrapes, "\n");
  return out;
}

void Relay::OnTelemetry(std::string_view payload, const std::string& peer,
                        std::optional<int64_t> sender) {
  ++stats_.telemetry_datagrams;
  if (!metrics_) {
    ++stats_.invalid_datagrams;
    LogLimited(datagram_log_, absl::StrCat("dropped telemetry from ", peer, ": no --metrics-port"));
    return;
  }
  const uint64_t rejected_before = [&] {
    uint64_t n = 0;
    for (size_t r = 0; r < static_cast<size_t>(MetricsReject::kCount); ++r)
      n += metrics_->rejected(static_cast<MetricsReject>(r));
    return n;
  }();
  metrics_->Ingest(payload, NowMs(), [this](int64_t job_id, int64_t pid) {
    return pid <= INT32_MAX && registry_.Knows(job_id, static_cast<int32_t>(pid));
  }, sender);
  uint64_t rejected_after = 0;
  for (size_t r = 0; r < static_cast<size_t>(MetricsReject::kCount); ++r)
    rejected_after += metrics_->rejected(static_cast<MetricsReject>(r));
  if (rejected_after != rejected_before) {
    LogLimited(telemetry_log_, absl::StrCat("refused ", rejected_after - rejected_before,
                                            " telemetry line(s) from ", peer,
                                            " (malformed, unknown process or flood; counted)"));
  }
}

bool Relay::OnPoll(std::string_view payload, const std::string& peer, std::string* reply,
                   std::optional<std::string>* config, int64_t* job_id, std::vector<int32_t>* pids) {
  absl::StatusOr<proto::DaemonRequest> request = proto::DecodeDaemonRequest(payload);
  if (!request.ok()) {
    ++stats_.invalid_datagrams;
    LogLimited(datagram_log_, absl::StrCat("dropped a \"req\" from ", peer, ": ", request.status().message()));
    return false;
  }
  ++stats_.polls;
  *job_id = request->job_id;
  *pids = request->pids;
  const uint64_t refused = registry_.refused();
  *config = registry_.OnPoll(*job_id, *pids, request->type, NowMs());
  if (registry_.refused() != refused) {
    ++stats_.registry_refused;
    LogLimited(registry_full_log_, absl::StrCat("process table full (", registry_.max_entries(),
                                                " processes); refused a poll from ", peer, " job ", *job_id));
  }
  *reply = proto::EncodeDaemonConfigReply(config->value_or(""));
  if (options_.verbose) {
    Log(absl::StrCat("poll from ", peer, " job ", *job_id, " pid ", (*pids)[0], " type ",
                     request->type, *config ? " -> config" : ""));
  }
  return true;
}

bool Relay::OnContext(std::string_view payload, const std::string& peer, std::string* reply) {
  absl::StatusOr<proto::DaemonContext> ctxt = proto::DecodeDaemonContext(payload);
  if (!ctxt.ok()) {
    ++stats_.invalid_datagrams;
    LogLimited(datagram_log_, absl::StrCat("dropped a \"ctxt\" from ", peer, ": ", ctxt.status().message()));
    return false;
  }
  const auto key = std::make_pair(ctxt->job_id, ctxt->gpu);
  int32_t count = -1;
  if (contexts_.count(key) != 0 || contexts_.size() < kMaxContexts) {
    auto& set = contexts_[key];
    set.insert(ctxt->pid);
    count = static_cast<int32_t>(set.size());
  }
  *reply = proto::EncodeDaemonContextReply(count);
  return true;
}

namespace {

// recvfrom plus the sender's credentials, which the kernel attaches to every datagram once
// SO_PASSCRED is set (the sender need not send them; Dynolog's clients do not). The pid is
// in this daemon's pid namespace; 0 (a sender in a namespace this one cannot see) is unknown.
ssize_t ReceiveDatagram(int fd, std::vector<char>& buffer, sockaddr_un* from,
                        socklen_t* from_len, std::optional<int64_t>* sender) {
  iovec iov{buffer.data(), buffer.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
  msghdr msg{};
  msg.msg_name = from;
  msg.msg_namelen = *from_len;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  const ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_TRUNC);
  if (n < 0) return n;
  *from_len = msg.msg_namelen;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_CREDENTIALS ||
        c->cmsg_len < CMSG_LEN(sizeof(ucred)))
      continue;
    ucred cred;
    memcpy(&cred, CMSG_DATA(c), sizeof(cred));
    if (cred.pid > 0) *sender = cred.pid;
  }
  return n;
}

}  // namespace

void Relay::OnDatagram() {
  // Bounded per wake-up so a datagram flood cannot starve the RPC side.
  for (int budget = 256; budget > 0; --budget) {
    sockaddr_un from{};
    socklen_t from_len = sizeof(from);
    std::optional<int64_t> sender;
    const ssize_t n = ReceiveDatagram(ipc_fd_, buffer_, &from, &from_len, &sender);
    if (n < 0) return;
    const std::string peer = proto::DescribeDaemonAddress(from, from_len);
    if (static_cast<size_t>(n) > buffer_.size()) {
      ++stats_.invalid_datagrams;
      LogLimited(datagram_log_, absl::StrCat("dropped an oversized datagram (", n, " bytes) from ", peer));
      continue;
    }
    const std::string_view bytes(buffer_.data(), static_cast<size_t>(n));
    absl::StatusOr<proto::DaemonDatagram> datagram = proto::DecodeDaemonDatagram(bytes);
    if (!datagram.ok()) {
      ++stats_.invalid_datagrams;
      LogLimited(datagram_log_, absl::StrCat("dropped a datagram from ", peer, ": ", datagram.status().message()));
      continue;
    }
    if (from_len <= static_cast<socklen_t>(sizeof(sa_family_t))) {
      ++stats_.invalid_datagrams;
      LogLimited(datagram_log_, "dropped a datagram from an unbound socket (no address to reply to)");
      continue;
    }
    std::string reply;
    std::optional<std::string> config;
    int64_t job_id = 0;
    std::vector<int32_t> pids;
    if (datagram->kind == proto::DaemonMessageKind::kTelemetry) {
      OnTelemetry(datagram->payload, peer, sender);  // no reply: one datagram per interval, fire and forget
      continue;
    }
    const bool answered = datagram->kind == proto::DaemonMessageKind::kRequest
                              ? OnPoll(datagram->payload, peer, &reply, &config, &job_id, &pids)
                              : OnContext(datagram->payload, peer, &reply);
    if (!answered) continue;
    // Reply to the exact address the peer sent from (so a peer bound without the trailing
    // NUL is still answered), once, without blocking: a peer that cannot receive costs one
    // failed send, never a stall, and its config stays pending for its next poll.
    const ssize_t sent = sendto(ipc_fd_, reply.data(), reply.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                                reinterpret_cast<const sockaddr*>(&from), from_len);
    if (sent != static_cast<ssize_t>(reply.size())) {
      ++stats_.reply_failures;
      LogLimited(datagram_log_, absl::StrCat("could not reply to ", peer, ": ", strerror(errno),
                       config ? " (its config stays pending)" : ""));
      continue;
    }
    // Serving metrics: offer telemetry collection to a process that sends none yet (the
    // client takes the first offer, ignores the rest; Dynolog never sends one).
    if (metrics_ && datagram->kind == proto::DaemonMessageKind::kRequest && !pids.empty() &&
        !metrics_->HasPid(pids[0]) && registry_.Knows(job_id, pids[0])) {
      const std::string offer = proto::EncodeDaemonTelemetry(
          proto::DaemonTelemetryOffer(options_.metrics_interval_secs));
      if (sendto(ipc_fd_, offer.data(), offer.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                 reinterpret_cast<const sockaddr*>(&from), from_len) ==
          static_cast<ssize_t>(offer.size()))
        ++stats_.telemetry_offers;
    }
    if (config) {
      registry_.ConfigDelivered(job_id, pids);
      ++stats_.configs_sent;
      Log(absl::StrCat("sent the on-demand config to pid ", pids[0], " (job ", job_id, ")"));
    }
  }
}

void Relay::OnAccept() {
  while (true) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    if (static_cast<int>(connections_.size()) >= options_.max_connections) {
      ++stats_.rpc_dropped;
      LogLimited(connection_log_, "too many rpc connections; refused one");
      close(fd);
      continue;
    }
    Connection c;
    c.fd = fd;
    c.deadline_ms = NowMs() + options_.rpc_timeout_ms;
    connections_.push_back(std::move(c));
  }
}

bool Relay::OnReadable(Connection& c) {
  char chunk[4096];
  while (true) {
    const ssize_t n = recv(c.fd, chunk, sizeof(chunk), MSG_DONTWAIT);
    if (n == 0) {
      Close(c, c.in.empty() ? nullptr : "rpc peer closed before sending a whole request");
      return false;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) return true;
      Close(c, nullptr);
      return false;
    }
    c.in.append(chunk, static_cast<size_t>(n));
    if (c.in.size() < 4) continue;
    int32_t length = 0;
    memcpy(&length, c.in.data(), 4);
    if (length <= 0 || length > kMaxRpcMessage) {
      ++stats_.rpc_dropped;
      Close(c, "rpc request with an invalid length prefix; closed");
      return false;
    }
    if (c.in.size() < 4 + static_cast<size_t>(length)) continue;
    std::string log_line;
    std::optional<std::string> reply =
        HandleRpcRequest(std::string_view(c.in).substr(4, length), registry_, NowMs(),
                         static_cast<int64_t>(time(nullptr)), &log_line,
                         UnixNowNs() / 1000000);
    LogLimited(reply ? rpc_log_ : rpc_refused_log_, log_line);
    if (!reply) {
      ++stats_.rpc_dropped;
      Close(c, nullptr);  // Dynolog closes without a reply; so do we
      return false;
    }
    ++stats_.rpc_served;
    const int32_t out_len = static_cast<int32_t>(reply->size());
    c.out.assign(reinterpret_cast<const char*>(&out_len), 4);
    c.out += *reply;
    return OnWritable(c);
  }
}

bool Relay::OnWritable(Connection& c) {
  while (c.written < c.out.size()) {
    const ssize_t n = send(c.fd, c.out.data() + c.written, c.out.size() - c.written,
                           MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) return true;
      Close(c, "rpc peer went away before reading its reply");
      return false;
    }
    c.written += static_cast<size_t>(n);
  }
  Close(c, nullptr);  // one request per connection
  return false;
}

void Relay::Close(Connection& c, const char* why) {
  if (why != nullptr) LogLimited(connection_log_, why);
  close(c.fd);
  c.fd = -1;
}

}  // namespace kairos::tools
