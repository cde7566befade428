// File: daemon_client.cc
// Layer: kairos_config. Socket handling and the poll loop of the Dynolog IPC client.
// Threading: see daemon_client.h. The socket fd is only read/written by the poller thread
// (or by PollOnce when no thread runs), so it needs no lock.
#include "config/daemon_client.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/thread_name.h"

namespace kairos {
namespace {

using internal::DaemonAddress;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Milliseconds from now to the next multiple of `period_ms` of CLOCK_REALTIME, in (0, period].
int64_t MsToNextTick(int64_t period_ms) {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  const int64_t now_ms = static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
  return period_ms - now_ms % period_ms;
}

// Parent pid from /proc/<pid>/stat: the field after the last ')' (comm may hold spaces and
// parentheses), then the state character, then ppid.
pid_t ParentOf(pid_t pid) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[512];
  const ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  const char* close_paren = strrchr(buf, ')');
  if (close_paren == nullptr) return -1;
  char state = 0;
  int ppid = -1;
  if (sscanf(close_paren + 1, " %c %d", &state, &ppid) != 2) return -1;
  return ppid;
}

}  // namespace

std::vector<int32_t> DaemonClient::PidAncestry(pid_t self) {
  std::vector<int32_t> pids{static_cast<int32_t>(self)};
  pid_t current = self;
  while (pids.size() < static_cast<size_t>(internal::kDaemonMaxPids)) {
    const pid_t parent = ParentOf(current);
    if (parent <= 1) break;  // pid 1 is listed only when it is the process itself
    pids.push_back(static_cast<int32_t>(parent));
    current = parent;
  }
  return pids;
}

std::string DaemonClient::RandomUuid() {
  uint8_t b[16];
  if (getrandom(b, sizeof(b), GRND_NONBLOCK) != static_cast<ssize_t>(sizeof(b))) {
    std::random_device rd;  // entropy pool not ready yet: still unique enough for a name
    for (auto& byte : b) byte = static_cast<uint8_t>(rd());
  }
  b[6] = static_cast<uint8_t>((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = static_cast<uint8_t>((b[8] & 0x3f) | 0x80);  // RFC 4122 variant
  char out[37];
  snprintf(out, sizeof(out),
           "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
           b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
           b[15]);
  return out;
}

DaemonClient::DaemonClient(DaemonClientOptions options, TraceRequestHandler* handler,
                           DaemonConfigPreparer preparer)
    : options_(std::move(options)),
      handler_(handler),
      preparer_(std::move(preparer)),
      owner_pid_(getpid()) {}

absl::StatusOr<std::unique_ptr<DaemonClient>> DaemonClient::Create(
    DaemonClientOptions options, TraceRequestHandler* handler, DaemonConfigPreparer preparer) {
  if (handler == nullptr || !preparer) {
    return absl::InvalidArgumentError("daemon client needs a handler and a config preparer");
  }
  if (options.poll_ms < 1) options.poll_ms = 1;
  std::unique_ptr<DaemonClient> client(
      new DaemonClient(std::move(options), handler, std::move(preparer)));
  absl::Status status = client->Open();
  if (!status.ok()) return status;
  return client;
}

absl::Status DaemonClient::Open() {
  name_ = options_.client_name.empty() ? internal::kDaemonClientNamePrefix + RandomUuid()
                                       : options_.client_name;
  // A socket path holds 107 bytes, and the anchor's name (prefix + UUID, 52 bytes) leaves only
  // 55 for KINETO_IPC_SOCKET_DIR: a job directory nested a little deeper would lose the daemon
  // altogether. The daemon replies to whatever address sent the poll, so a shorter name with
  // 60 random bits works the same; take it only when the long one does not fit.
  if (options_.client_name.empty() && !options_.socket_dir.empty() &&
      !internal::MakeDaemonAddress(name_, options_.socket_dir).ok()) {
    std::string hex = RandomUuid();
    hex.erase(std::remove(hex.begin(), hex.end(), '-'), hex.end());
    name_ = "dyno" + hex.substr(0, 16);  // 60 random bits (one nibble is the UUID version)
  }
  absl::StatusOr<DaemonAddress> self = internal::MakeDaemonAddress(name_, options_.socket_dir);
  if (!self.ok()) return self.status();
  absl::StatusOr<DaemonAddress> daemon =
      internal::MakeDaemonAddress(options_.endpoint, options_.socket_dir);
  if (!daemon.ok()) return daemon.status();
  self_ = *self;
  daemon_ = *daemon;
  fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return absl::InternalError(absl::StrCat("daemon client socket: ", strerror(errno)));
  if (!options_.socket_dir.empty()) unlink(self_.addr.sun_path);
  if (bind(fd_, reinterpret_cast<const sockaddr*>(&self_.addr), self_.length) != 0) {
    const int err = errno;
    return absl::UnavailableError(
        absl::StrCat("daemon client cannot bind ",
                     internal::DescribeDaemonAddress(self_.addr, self_.length), ": ",
                     strerror(err)));
  }
  // The daemon may run as another user; it must be able to reply (anchor does the same).
  if (!options_.socket_dir.empty() && !internal::ShareBoundSocketFile(self_.addr)) {
    KAIROS_LOG_WARNING("daemon client: %s is no longer this process's socket after bind; a "
                       "daemon of another user cannot reply",
                       internal::DescribeDaemonAddress(self_.addr, self_.length).c_str());
  }
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return absl::InternalError(absl::StrCat("eventfd: ", strerror(errno)));
  buffer_.resize(internal::kDaemonHeaderSize + internal::kDaemonMaxPayload + 1);
  return absl::OkStatus();
}

DaemonClient::~DaemonClient() {
  Stop();
  const bool in_owner = getpid() == owner_pid_;
  if (fd_ >= 0) {
    close(fd_);
    // A forked child must not remove the parent's socket file.
    if (in_owner && !options_.socket_dir.empty()) unlink(self_.addr.sun_path);
  }
  if (wake_fd_ >= 0) close(wake_fd_);
}

void DaemonClient::RemoveSocketFile() {
  if (getpid() == owner_pid_ && !options_.socket_dir.empty()) unlink(self_.addr.sun_path);
}

absl::Status DaemonClient::Start() {
  if (thread_ != nullptr) return absl::FailedPreconditionError("daemon client already started");
  if (fd_ < 0) return absl::FailedPreconditionError("daemon client socket is closed");
  thread_ = std::make_unique<std::thread>([this] { Run(); });
  return absl::OkStatus();
}

void DaemonClient::Stop() {
  if (getpid() != owner_pid_) {
    // Forked child: the poller thread was not copied. Leak its handle (joining or destroying
    // it would abort) and drop the inherited socket, which is still bound to the parent's name.
    (void)thread_.release();
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
    return;
  }
  if (thread_ == nullptr) return;
  const uint64_t one = 1;
  if (write(wake_fd_, &one, sizeof(one)) < 0) {
    KAIROS_LOG_WARNING("daemon client: cannot wake the poller thread: %s", strerror(errno));
  }
  thread_->join();
  thread_.reset();
}

void DaemonClient::Run() {
  NameThisThread("daemon");
  int64_t next_poll = NowMs();
  while (true) {
    const int64_t now = NowMs();
    if (now >= next_poll) {
      DrainSocket();  // replies of earlier polls: configs are still handled, empties dropped
      if (!ready_ && (!options_.ready || options_.ready())) ready_ = true;
      if (ready_) SendRequest();
      // The next tick is the next multiple of poll_ms on the wall clock (see Start), reached
      // by a wait on the steady clock; after a long stall missed ticks are skipped, never
      // burst. A wall-clock step changes one wait, never more than poll_ms.
      next_poll = now + MsToNextTick(options_.poll_ms);
    }
    pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    const int64_t wait = std::max<int64_t>(0, next_poll - NowMs());
    const int ready = poll(fds, 2, static_cast<int>(std::min<int64_t>(wait, 1 << 30)));
    if (ready < 0 && errno != EINTR) {
      KAIROS_LOG_ERROR("daemon client: poll failed (%s); stopping the daemon client",
                       strerror(errno));
      return;
    }
    if (fds[1].revents & POLLIN) return;
    if (fds[0].revents & POLLIN) DrainSocket();
  }
}

bool DaemonClient::SendRequest() {
  internal::DaemonRequest request;
  request.type =
      handler_->Busy() ? internal::kDaemonRequestBusy : internal::kDaemonRequestActivities;
  request.job_id = options_.job_id;
  // Re-read /proc only when our own parent changed (re-parenting, or a forked child): the
  // /proc walk costs ~100x the rest of the poll (bench/daemon_benchmark.cc).
  const pid_t self = getpid(), parent = getppid();
  if (pids_.empty() || self != pids_for_self_ || parent != pids_for_parent_) {
    pids_ = PidAncestry(self);
    pids_for_self_ = self;
    pids_for_parent_ = parent;
  }
  request.pids = pids_;
  last_poll_raw_ = ReadRawClock();
  const std::string bytes = internal::EncodeDaemonRequest(request);
  const ssize_t sent = sendto(fd_, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                              reinterpret_cast<const sockaddr*>(&daemon_.addr), daemon_.length);
  if (sent != static_cast<ssize_t>(bytes.size())) {
    const int err = sent < 0 ? errno : EMSGSIZE;
    last_send_errno_.store(err, std::memory_order_relaxed);
    send_failures_.fetch_add(1, std::memory_order_relaxed);
    if (daemon_reachable_) {
      // Logged on the transition only: an absent daemon is the normal case, not an error.
      KAIROS_LOG_INFO("daemon client: no daemon at %s (%s); will retry every %lld ms",
                      internal::DescribeDaemonAddress(daemon_.addr, daemon_.length).c_str(),
                      strerror(err), static_cast<long long>(options_.poll_ms));
      daemon_reachable_ = false;
    }
    return false;
  }
  if (!daemon_reachable_) {
    KAIROS_LOG_INFO("daemon client: daemon at %s is reachable",
                    internal::DescribeDaemonAddress(daemon_.addr, daemon_.length).c_str());
    daemon_reachable_ = true;
  }
  last_send_errno_.store(0, std::memory_order_relaxed);
  polls_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool DaemonClient::PollOnce(int reply_timeout_ms) {
  if (fd_ < 0 || thread_ != nullptr) return false;
  DrainSocket();
  if (!SendRequest()) return false;
  if (reply_timeout_ms <= 0) return true;
  const int64_t deadline = NowMs() + reply_timeout_ms;
  while (true) {
    const int64_t left = deadline - NowMs();
    if (left <= 0) return true;
    pollfd fds[1] = {{fd_, POLLIN, 0}};
    if (poll(fds, 1, static_cast<int>(left)) > 0 && DrainSocket()) return true;
  }
}

bool DaemonClient::DrainSocket() {
  bool got_reply = false;
  while (true) {
    sockaddr_un from{};
    socklen_t from_len = sizeof(from);
    // MSG_TRUNC makes recvfrom return the real datagram length, so an oversized datagram is
    // detected (and dropped) instead of being silently cut to the buffer size.
    const ssize_t n =
        recvfrom(fd_, buffer_.data(), buffer_.size(), MSG_DONTWAIT | MSG_TRUNC,
                 reinterpret_cast<sockaddr*>(&from), &from_len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return got_reply;  // EAGAIN: queue empty
    }
    if (static_cast<size_t>(n) > buffer_.size()) {
      invalid_datagrams_.fetch_add(1, std::memory_order_relaxed);
      KAIROS_LOG_WARNING_LIMITED("daemon client: dropped a %zd-byte datagram (limit %zu)", n,
                         buffer_.size() - 1);
      continue;
    }
    const uint64_t replies_before = replies_.load(std::memory_order_relaxed);
    HandleDatagram(std::string_view(buffer_.data(), static_cast<size_t>(n)), from, from_len);
    if (replies_.load(std::memory_order_relaxed) != replies_before) got_reply = true;
  }
}

bool DaemonClient::FromDaemon(const sockaddr_un& from, socklen_t from_len) const {
  return from_len == daemon_.length &&
         memcmp(from.sun_path, daemon_.addr.sun_path, from_len - sizeof(sa_family_t)) == 0;
}

void DaemonClient::HandleDatagram(std::string_view bytes, const sockaddr_un& from,
                                  socklen_t from_len) {
  if (!FromDaemon(from, from_len)) {
    invalid_datagrams_.fetch_add(1, std::memory_order_relaxed);
    KAIROS_LOG_WARNING_LIMITED("daemon client: ignored a datagram from %s (not the daemon)",
                       internal::DescribeDaemonAddress(from, from_len).c_str());
    return;
  }
  absl::StatusOr<internal::DaemonDatagram> datagram = internal::DecodeDaemonDatagram(bytes);
  std::string why;
  if (datagram.ok() && datagram->kind == internal::DaemonMessageKind::kTelemetry) {
    absl::StatusOr<int64_t> interval = internal::ParseDaemonTelemetryOffer(datagram->payload);
    if (interval.ok()) {
      // The first offer decides; a daemon restarted with another interval does not restart
      // telemetry (it runs for the life of the process).
      if (telemetry_offers_.fetch_add(1, std::memory_order_relaxed) == 0 &&
          options_.on_telemetry_offer)
        options_.on_telemetry_offer(*interval);
      return;
    }
    why = std::string(interval.status().message());
  } else if (!datagram.ok()) {
    why = std::string(datagram.status().message());
  } else if (datagram->kind != internal::DaemonMessageKind::kRequest) {
    why = "unexpected \"ctxt\" message";
  }
  if (!why.empty()) {
    invalid_datagrams_.fetch_add(1, std::memory_order_relaxed);
    KAIROS_LOG_WARNING_LIMITED("daemon client: ignored an invalid datagram: %s", why.c_str());
    return;
  }
  replies_.fetch_add(1, std::memory_order_relaxed);
  if (!datagram->payload.empty()) HandleConfig(datagram->payload);
}

void DaemonClient::HandleConfig(std::string_view text) {
  configs_received_.fetch_add(1, std::memory_order_relaxed);
  std::string note;
  absl::StatusOr<Config> config = preparer_(text, &note);
  if (!config.ok()) {
    configs_rejected_.fetch_add(1, std::memory_order_relaxed);
    KAIROS_LOG_WARNING_LIMITED("daemon client: rejected the on-demand config: %s",
                       std::string(config.status().message()).c_str());
    return;
  }
  if (!note.empty()) KAIROS_LOG_WARNING_LIMITED("daemon client: %s", note.c_str());
  std::string message;
  // The poll this reply answers (0 before the first poll: the handler then plans from now).
  absl::Status status = handler_->OnTraceRequest(*config, last_poll_raw_, &message);
  if (!status.ok()) {
    configs_rejected_.fetch_add(1, std::memory_order_relaxed);
    KAIROS_LOG_WARNING_LIMITED("daemon client: on-demand trace (trace id %s) not started: %s",
                       config->request_trace_id.empty() ? "none"
                                                        : config->request_trace_id.c_str(),
                       std::string(status.message()).c_str());
    return;
  }
  configs_accepted_.fetch_add(1, std::memory_order_relaxed);
  KAIROS_LOG_INFO("daemon client: on-demand trace accepted (trace id %s)%s%s",
                  config->request_trace_id.empty() ? "none" : config->request_trace_id.c_str(),
                  message.empty() ? "" : ": ", message.c_str());
}

bool DaemonClient::SendTelemetry(std::string_view lines) {
  if (fd_ < 0 || getpid() != owner_pid_ || lines.size() > internal::kDaemonMaxPayload) {
    telemetry_send_failures_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  const std::string bytes = internal::EncodeDaemonTelemetry(lines);
  // sendto on a datagram socket is atomic per datagram, so this thread and the poller share
  // the socket without a lock; MSG_DONTWAIT: a daemon that stopped reading costs one failure.
  const ssize_t sent = sendto(fd_, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
                              reinterpret_cast<const sockaddr*>(&daemon_.addr), daemon_.length);
  if (sent != static_cast<ssize_t>(bytes.size())) {
    telemetry_send_failures_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  telemetry_sent_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

DaemonClientStats DaemonClient::stats() const {
  DaemonClientStats s;
  s.polls = polls_.load(std::memory_order_relaxed);
  s.send_failures = send_failures_.load(std::memory_order_relaxed);
  s.replies = replies_.load(std::memory_order_relaxed);
  s.configs_received = configs_received_.load(std::memory_order_relaxed);
  s.configs_accepted = configs_accepted_.load(std::memory_order_relaxed);
  s.configs_rejected = configs_rejected_.load(std::memory_order_relaxed);
  s.invalid_datagrams = invalid_datagrams_.load(std::memory_order_relaxed);
  s.last_send_errno = last_send_errno_.load(std::memory_order_relaxed);
  s.telemetry_offers = telemetry_offers_.load(std::memory_order_relaxed);
  s.telemetry_sent = telemetry_sent_.load(std::memory_order_relaxed);
  s.telemetry_send_failures = telemetry_send_failures_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace kairos
