// File: fleet_agent_benchmark.cc
// Layer: bench. The per-host agent's cost (issue 28, docs/FLEET.md): the real `kairos daemon
// --metrics-port` with 64 processes x 8 GPUs reporting at a 10 s telemetry interval (each
// process also polls every 1 s, as jobs do), replayed as fast as the agent takes it; the
// agent's CPU per simulated 10 s (from /proc/<pid>/stat) and its RSS; one /metrics scrape's
// latency with those 512 series; and the job side: sending one interval's 8 lines to the
// daemon (one datagram) against appending them to the telemetry file (one write), same run.
// Threading: single-threaded except a drain thread for the job-side measurement.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_headline.h"
#include "config/daemon_client.h"
#include "config/daemon_protocol.h"
#include "counters/line_log.h"
#include "spawn_util.h"
#include "temp_dir.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace proto = kairos::internal;

constexpr int kProcesses = 64, kGpus = 8, kPollsPerInterval = 10, kRounds = 100;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

long CpuTicks(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t close = s.rfind(')');
  std::istringstream in(s.substr(close + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && in >> field; ++i) {
    if (i == 14) utime = std::stol(field);
    if (i == 15) stime = std::stol(field);
  }
  return utime + stime;
}

long RssKb(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

std::string Line(int pid, int device) {
  char buf[512];
  snprintf(buf, sizeof(buf),
           "{\"ts_ns\":1790000010000000000,\"host\":\"node17\",\"pid\":%d,\"job_id\":7,\"rank\":%d,"
           "\"device\":%d,\"interval_ns\":10000000000,\"gpu_busy_pct\":71.2,\"sm_active_pct\":58.4,"
           "\"achieved_occupancy_pct\":31.9,\"tensor_active_pct\":22.5,\"dram_throughput_pct\":40.1,"
           "\"kernels\":18231,\"memcpy_bytes\":5368709120,\"steps\":12,\"step_time_ms_p50\":812.4}\n",
           pid, pid % 64, device);
  return buf;
}

struct Proc {
  int fd = -1;
  int pid = 0;
};

void Drain(int fd) {
  char buf[70000];
  while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0) {
  }
}

std::string Get(int port, double* ms) {
  const auto t0 = Clock::now();
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) {
    const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    (void)!send(fd, req, sizeof(req) - 1, 0);
    char buf[65536];
    for (ssize_t n; (n = recv(fd, buf, sizeof(buf), 0)) > 0;) out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  *ms = Ms(Clock::now() - t0);
  return out;
}

}  // namespace

int main() {
  using kairos::bench::Better;
  using kairos::bench::Headline;
  const std::string cli = KAIROS_CLI_PATH;
  const std::string endpoint = "kairos-bench-fleet-" + std::to_string(getpid());
  const kairos::testing::TempDir temp("kairos-fleet-bench-");  // removed on every return
  const std::string dir = temp.path(), port_file = dir + "/mport";
  const pid_t daemon = fork();
  if (daemon == 0) {
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2);
    execl(cli.c_str(), cli.c_str(), "daemon", "--port", "0", "--endpoint", endpoint.c_str(),
          "--metrics-port", "0", "--metrics-port-file", port_file.c_str(), "--no-pid-check",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  int metrics_port = 0;
  for (int i = 0; i < 200 && metrics_port == 0; ++i) {
    std::ifstream f(port_file);
    f >> metrics_port;
    if (metrics_port == 0) usleep(20000);
  }
  if (metrics_port == 0) {
    fprintf(stderr, "fleet_agent_benchmark: the daemon did not start\n");
    kill(daemon, SIGKILL);
    return 1;
  }
  auto daemon_addr = proto::MakeDaemonAddress(endpoint, "");
  std::vector<Proc> procs(kProcesses);
  for (int i = 0; i < kProcesses; ++i) {
    procs[i].fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    procs[i].pid = 100000 + i;  // made up: the daemon runs with --no-pid-check
    auto self = proto::MakeDaemonAddress(endpoint + "-p" + std::to_string(i), "");
    bind(procs[i].fd, reinterpret_cast<const sockaddr*>(&self->addr), self->length);
  }
  auto send_to_daemon = [&](int fd, const std::string& bytes) {
    return sendto(fd, bytes.data(), bytes.size(), 0,
                  reinterpret_cast<const sockaddr*>(&daemon_addr->addr), daemon_addr->length) ==
           static_cast<ssize_t>(bytes.size());
  };
  std::vector<std::string> polls(kProcesses), telemetry(kProcesses);
  for (int i = 0; i < kProcesses; ++i) {
    proto::DaemonRequest r;
    r.job_id = 7;
    r.pids = {procs[i].pid};
    polls[i] = proto::EncodeDaemonRequest(r);
    std::string lines;
    for (int g = 0; g < kGpus; ++g) lines += Line(procs[i].pid, g);
    telemetry[i] = proto::EncodeDaemonTelemetry(lines);
  }
  // Register everyone, then one interval of lines so every series exists.
  for (int i = 0; i < kProcesses; ++i) send_to_daemon(procs[i].fd, polls[i]);
  usleep(200000);
  for (int i = 0; i < kProcesses; ++i) {
    Drain(procs[i].fd);
    send_to_daemon(procs[i].fd, telemetry[i]);
  }
  usleep(200000);
  double ms = 0;
  const std::string first = Get(metrics_port, &ms);
  const size_t series = static_cast<size_t>(std::count(first.begin(), first.end(), '\n'));

  // kRounds simulated 10 s intervals: every process polls 10 times and sends its lines once;
  // one scrape per interval. Paced per process so no socket queue overflows (each send waits
  // for its reply), which also makes this the agent's work, not the kernel dropping it.
  const long ticks0 = CpuTicks(daemon);
  const auto t0 = Clock::now();
  uint64_t polls_answered = 0;
  for (int round = 0; round < kRounds; ++round) {
    for (int p = 0; p < kPollsPerInterval; ++p) {
      for (int i = 0; i < kProcesses; ++i) send_to_daemon(procs[i].fd, polls[i]);
      for (int i = 0; i < kProcesses; ++i) {
        pollfd pfd{procs[i].fd, POLLIN, 0};
        if (poll(&pfd, 1, 1000) > 0) ++polls_answered;
        Drain(procs[i].fd);
      }
    }
    for (int i = 0; i < kProcesses; ++i) send_to_daemon(procs[i].fd, telemetry[i]);
    (void)Get(metrics_port, &ms);
  }
  const double wall_ms = Ms(Clock::now() - t0);
  const long ticks = CpuTicks(daemon) - ticks0;
  const double cpu_ms_per_interval = 1000.0 * static_cast<double>(ticks) / sysconf(_SC_CLK_TCK) / kRounds;
  const long rss_kb = RssKb(daemon);

  std::vector<double> scrape_ms;
  size_t body = 0;
  for (int i = 0; i < 50; ++i) {
    body = Get(metrics_port, &ms).size();
    scrape_ms.push_back(ms);
  }
  std::sort(scrape_ms.begin(), scrape_ms.end());
  const std::string last = Get(metrics_port, &ms);
  const size_t at = last.find("\nkairos_agent_series{host=");
  const bool all_series = at != std::string::npos &&
                          last.substr(at, last.find('\n', at + 1) - at).find("} 512") != std::string::npos;
  kill(daemon, SIGTERM);
  waitpid(daemon, nullptr, 0);
  for (Proc& p : procs) close(p.fd);

  // Job side: one interval's 8 lines to the daemon (one datagram from the poll socket) vs.
  // appended to the telemetry file (one write), 20000 times each, same run.
  const std::string sink_name = endpoint + "-sink";
  auto sink_addr = proto::MakeDaemonAddress(sink_name, "");
  const int sink = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  bind(sink, reinterpret_cast<const sockaddr*>(&sink_addr->addr), sink_addr->length);
  std::atomic<bool> stop{false};
  std::thread drain([&] {
    char buf[70000];
    while (!stop.load()) {
      pollfd pfd{sink, POLLIN, 0};
      if (poll(&pfd, 1, 50) > 0) Drain(sink);
    }
    (void)buf;
  });
  struct NullHandler : kairos::TraceRequestHandler {
    bool Busy() const override { return false; }
    absl::Status OnTraceRequest(const kairos::Config&, uint64_t, std::string*) override {
      return absl::OkStatus();
    }
  } handler;
  kairos::DaemonClientOptions o;
  o.endpoint = sink_name;
  auto client = kairos::DaemonClient::Create(
      o, &handler, [](std::string_view, std::string*) -> absl::StatusOr<kairos::Config> { return kairos::Config(); });
  std::string lines;
  for (int g = 0; g < kGpus; ++g) lines += Line(4242, g);
  // A Unix datagram queue holds net.unix.max_dgram_qlen (10) datagrams: sends are timed in
  // batches of 8, with the drain thread given time to empty the queue between batches
  // (untimed), as a job sends one datagram per interval.
  constexpr int kSends = 20000, kBatch = 8;
  int failures = 0;
  Clock::duration send_time{};
  for (int i = 0; i < kSends; i += kBatch) {
    const auto b0 = Clock::now();
    for (int j = 0; j < kBatch; ++j) failures += (*client)->SendTelemetry(lines) ? 0 : 1;
    send_time += Clock::now() - b0;
    usleep(1000);
  }
  const double send_us = 1000.0 * Ms(send_time) / kSends;
  kairos::LineLog log;
  const std::string file = dir + "/telemetry.jsonl";
  (void)log.Open(file, 0);
  const auto s0 = Clock::now();
  for (int i = 0; i < kSends; ++i) log.Append(lines, kGpus);
  const double file_us = 1000.0 * Ms(Clock::now() - s0) / kSends;
  stop.store(true);
  drain.join();
  close(sink);

  printf("fleet agent: %d processes x %d GPUs, 10 s interval, 1 s polls, %d intervals replayed in %.0f ms\n",
         kProcesses, kGpus, kRounds, wall_ms);
  printf("  polls answered %llu of %d; lines in /metrics after the first interval: %zu; all 512 series: %s\n",
         static_cast<unsigned long long>(polls_answered), kRounds * kPollsPerInterval * kProcesses,
         series, all_series ? "yes" : "NO");
  printf("  agent CPU per 10 s interval: %.2f ms = %.4f%% of one core; RSS %ld KiB\n",
         cpu_ms_per_interval, cpu_ms_per_interval / 100.0, rss_kb);
  printf("  /metrics scrape (512 series, %zu bytes): median %.2f ms, max %.2f ms over 50\n", body,
         scrape_ms[scrape_ms.size() / 2], scrape_ms.back());
  printf("  job side, one interval's %d lines (%zu bytes): to the daemon %.2f us, to the file %.2f us "
         "(ratio %.2f; %d sends refused)\n",
         kGpus, lines.size(), send_us, file_us, send_us / file_us, failures);
  Headline("fleet_agent", "agent_cpu_pct_of_core_64x8", cpu_ms_per_interval / 100.0, Better::kLower, "pct");
  Headline("fleet_agent", "agent_rss_kib_64x8", static_cast<double>(rss_kb), Better::kLower, "KiB");
  Headline("fleet_agent", "scrape_median_ms_512_series", scrape_ms[scrape_ms.size() / 2], Better::kLower, "ms");
  Headline("fleet_agent", "job_send_vs_file_ratio", send_us / file_us, Better::kLower, "ratio");
  return all_series ? 0 : 1;
}
