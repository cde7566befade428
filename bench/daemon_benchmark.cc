// File: daemon_benchmark.cc
// Layer: bench. Cost of one daemon poll (daemon absent / present) and the latency from an
// on-demand request becoming pending at the daemon to the recording window being open, with
// zero warm-up. Prints ratios against baselines measured in the same run: a bare getppid()
// syscall for the poll cost, the poll period for the trigger latency.
// Threading: the benchmark thread plus a fake-daemon thread for the "present" cases.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "bench_headline.h"
#include "config/daemon_client.h"
#include "config/daemon_config.h"
#include "config/daemon_protocol.h"
#include "session/controller.h"
#include "temp_dir.h"

namespace kairos {
namespace {

using Clock = std::chrono::steady_clock;

double Us(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

class IdleHandler : public TraceRequestHandler {
 public:
  bool Busy() const override { return false; }
  absl::Status OnTraceRequest(const Config&, uint64_t, std::string*) override {
    return absl::OkStatus();
  }
};

class ProfilerHandler : public TraceRequestHandler {
 public:
  bool Busy() const override { return SessionController::Get().state() != SessionState::kIdle; }
  absl::Status OnTraceRequest(const Config& c, uint64_t, std::string*) override {
    return SessionController::Get().RequestTrace(c, ConfigSource::kDaemon);
  }
};

// Answers every "req" with an empty reply, or with `pending` once it is set.
class FakeDaemon {
 public:
  explicit FakeDaemon(const std::string& name) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    auto addr = internal::MakeDaemonAddress(name, "");
    bind(fd_, reinterpret_cast<const sockaddr*>(&addr->addr), addr->length);
    thread_ = std::thread([this] { Loop(); });
  }
  ~FakeDaemon() {
    stop_ = true;
    thread_.join();
    close(fd_);
  }
  void SetPending(const std::string& text) {
    std::lock_guard<std::mutex> lock(mu_);
    pending_ = text;
  }

 private:
  void Loop() {
    std::vector<char> buf(70000);
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      sockaddr_un from{};
      socklen_t len = sizeof(from);
      if (recvfrom(fd_, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from), &len) < 0)
        continue;
      std::string text;
      {
        std::lock_guard<std::mutex> lock(mu_);
        text.swap(pending_);
      }
      const std::string reply = internal::EncodeDaemonConfigReply(text);
      sendto(fd_, reply.data(), reply.size(), MSG_DONTWAIT,
             reinterpret_cast<const sockaddr*>(&from), len);
    }
  }
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::string pending_;
  std::thread thread_;
};

double BaselineSyscallUs(int n) {
  const auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    volatile pid_t p = getppid();
    (void)p;
  }
  return Us(Clock::now() - t0) / n;
}

double PollUs(DaemonClient& client, int n, int reply_timeout_ms) {
  const auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) client.PollOnce(reply_timeout_ms);
  return Us(Clock::now() - t0) / n;
}

double PidAncestryUs(int n) {
  const auto t0 = Clock::now();
  size_t total = 0;
  for (int i = 0; i < n; ++i) total += DaemonClient::PidAncestry(getpid()).size();
  asm volatile("" : : "r"(total) : "memory");
  return Us(Clock::now() - t0) / n;
}

// From "config pending at the daemon" to "window open", polling every poll_ms, zero warm-up.
double TriggerLatencyMs(int64_t poll_ms, const std::string& name, const std::string& dir,
                        int trials) {
  FakeDaemon daemon(name);
  ProfilerHandler handler;
  DaemonClientOptions o;
  o.endpoint = name;
  o.poll_ms = poll_ms;
  auto client = DaemonClient::Create(o, &handler, MakeDaemonConfigPreparer());
  if (!client.ok() || !(*client)->Start().ok()) return -1;
  double total = 0;
  for (int t = 0; t < trials; ++t) {
    // Stagger the request against the poll phase so the mean covers the whole interval.
    std::this_thread::sleep_for(std::chrono::milliseconds(poll_ms * (t % 4) / 4 + 1));
    const auto t0 = Clock::now();
    daemon.SetPending("\n    ACTIVITIES_LOG_FILE=" + dir + "/t" + std::to_string(poll_ms) + "_" +
                      std::to_string(t) +
                      ".json\nACTIVITIES_DURATION_MSECS=20\n"
                      "ACTIVITIES_WARMUP_PERIOD_SECS=0\n    REQUEST_TRACE_ID=1\n");
    while (SessionController::Get().state() != SessionState::kRecording) {
      std::this_thread::yield();
      if (Us(Clock::now() - t0) > 10e6) return -1;
    }
    total += Us(Clock::now() - t0) / 1000.0;
    while (SessionController::Get().state() != SessionState::kIdle) std::this_thread::yield();
  }
  (*client)->Stop();
  return total / trials;
}

}  // namespace
}  // namespace kairos

int main() {
  using namespace kairos;
  SetLogLevel(LogLevel::kError);
  const std::string base = "kairos-bench-" + std::to_string(getpid());
  constexpr int kN = 20000;
  const double syscall_us = BaselineSyscallUs(kN);
  printf("daemon_benchmark (baseline: one getppid() syscall = %.3f us)\n", syscall_us);

  IdleHandler idle;
  DaemonClientOptions absent_options;
  absent_options.endpoint = base + "-absent";
  auto absent = DaemonClient::Create(absent_options, &idle, MakeDaemonConfigPreparer());
  if (!absent.ok()) return 1;
  const double absent_us = PollUs(**absent, kN, 0);
  const double ancestry_us = PidAncestryUs(kN);
  printf("  pid ancestry (/proc reads)        %8.2f us  (%6.1fx syscall)\n", ancestry_us,
         ancestry_us / syscall_us);
  printf("  poll, daemon absent               %8.2f us  (%6.1fx syscall)\n", absent_us,
         absent_us / syscall_us);
  bench::Headline("daemon_benchmark", "poll_absent_vs_syscall", absent_us / syscall_us,
                  bench::Better::kLower, "x");

  {
    FakeDaemon daemon(base + "-present");
    DaemonClientOptions o;
    o.endpoint = base + "-present";
    auto present = DaemonClient::Create(o, &idle, MakeDaemonConfigPreparer());
    if (!present.ok()) return 1;
    const double send_us = PollUs(**present, 2000, 0);
    const double rtt_us = PollUs(**present, 2000, 1000);
    printf("  poll, daemon present (send only)  %8.2f us  (%6.1fx syscall)\n", send_us,
           send_us / syscall_us);
    printf("  poll, daemon present (round trip) %8.2f us  (%6.1fx syscall)\n", rtt_us,
           rtt_us / syscall_us);
    bench::Headline("daemon_benchmark", "poll_send_vs_syscall", send_us / syscall_us,
                    bench::Better::kLower, "x");
    bench::Headline("daemon_benchmark", "poll_round_trip_vs_syscall", rtt_us / syscall_us,
                    bench::Better::kLower, "x");
    const double per_s_pct = absent_us / 1e6 * 100.0;
    printf("  cpu share at 1 poll/s (absent)    %8.5f %%\n", per_s_pct);
  }
  // Traces go to a scratch directory inside the default allowed directory (the temp dir,
  // TMPDIR or /tmp), removed with its traces when main returns.
  const testing::TempDir temp("kairos-bench-");
  const std::string& dir = temp.path();
  for (int64_t poll_ms : {50, 1000}) {
    const double ms =
        TriggerLatencyMs(poll_ms, base + "-trig" + std::to_string(poll_ms), dir, 8);
    printf("  request -> window open, poll %4lld ms: %8.1f ms  (%.2fx poll period)\n",
           static_cast<long long>(poll_ms), ms, ms / poll_ms);
    bench::Headline("daemon_benchmark",
                    poll_ms == 50 ? "request_to_open_vs_poll_50ms" : "request_to_open_vs_poll_1s",
                    ms / static_cast<double>(poll_ms), bench::Better::kLower, "x");
  }
  return 0;
}
