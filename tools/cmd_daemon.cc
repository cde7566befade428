// File: cmd_daemon.cc
// Layer: tools. `kairos daemon`: runs the local relay (daemon_relay.h) in the foreground
// until SIGINT/SIGTERM. Stands in for Dynolog on machines without it: processes with
// KINETO_USE_DAEMON register over IPC, `kairos trace` or `dyno gputrace` trigger them over TCP.
// Threading: single-threaded (the relay's event loop); the signal handler only writes a byte.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "config/env.h"
#include "daemon_args.h"
#include "daemon_relay.h"
#include "output/writer.h"
#include "subcommand.h"

namespace kairos::tools {
namespace {

constexpr char kUsage[] =
    "usage: kairos daemon [options]\n"
    "\n"
    "Local stand-in for the Dynolog daemon: processes started with KINETO_USE_DAEMON=1\n"
    "(or KAIROS_USE_DAEMON=1) register over the IPC fabric; `kairos trace` or\n"
    "`dyno gputrace` request on-demand traces over TCP. Runs until Ctrl-C.\n"
    "\n"
    "options:\n"
    "  --port N           RPC port (default 1778, dyno's default; 0 = pick a free one)\n"
    "  --bind ADDR        RPC bind address (default 127.0.0.1; the RPC is unauthenticated)\n"
    "  --port-file PATH   write the RPC port number to PATH once listening\n"
    "  --endpoint NAME    IPC endpoint name (default $KAIROS_DAEMON_ENDPOINT, else dynolog)\n"
    "  --socket-dir DIR   filesystem sockets in DIR (default $KINETO_IPC_SOCKET_DIR, else\n"
    "                     abstract names)\n"
    "  --rpc-timeout-ms N close an RPC connection that has not sent its request in N ms\n"
    "                     (default 5000)\n"
    "  --stale-ms N       forget a process that has not polled for N ms (default 20000)\n"
    "  --no-pid-check     do not forget processes whose pid has exited (use when traced\n"
    "                     processes live in another pid namespace)\n"
    "  --verbose          log every poll\n"
    "  --metrics-port P   serve /metrics (Prometheus text format) on TCP port P (0 = any\n"
    "                     free port): the telemetry of the processes polling this daemon\n"
    "                     (docs/FLEET.md); they start sending it when offered\n"
    "  --metrics-address A  bind /metrics to A (default 127.0.0.1; 0.0.0.0 to expose it)\n"
    "  --metrics-port-file PATH  write the metrics port number to PATH once listening\n"
    "  --metrics-interval-secs N  telemetry interval offered to processes (default 10)\n"
    "  --metrics-max-series N  most (pid, device) series kept (default 4096; more counted)\n";

int g_stop_pipe[2] = {-1, -1};

void OnSignal(int) {
  const char byte = 1;
  // Async-signal-safe; a full pipe already means "stop".
  (void)!write(g_stop_pipe[1], &byte, 1);
}

// The relay's options from the command line and the environment; the first bad value is the
// error (exit status 2).
absl::StatusOr<RelayOptions> OptionsFrom(const ArgParser& args) {
  RelayOptions options;
  const EnvSettings env = DecodeProcessEnv();  // once per command
  options.endpoint = args.Get("--endpoint", env.daemon_endpoint.empty() ? "dynolog"
                                                                         : env.daemon_endpoint);
  options.socket_dir = args.Get("--socket-dir", env.ipc_socket_dir);
  options.bind_address = args.Get("--bind", "127.0.0.1");
  options.check_pids = !args.Has("--no-pid-check");
  options.verbose = args.Has("--verbose");
  absl::StatusOr<int64_t> port = args.GetInt("--port", 1778, 0, 65535);
  absl::StatusOr<int64_t> timeout = args.GetInt("--rpc-timeout-ms", 5000, 1, 3600000);
  absl::StatusOr<int64_t> stale = args.GetInt("--stale-ms", 20000, 1, 86400000);
  absl::StatusOr<int64_t> metrics_port = args.GetInt("--metrics-port", -1, 0, 65535);
  absl::StatusOr<int64_t> metrics_interval = args.GetInt("--metrics-interval-secs", 10, 1, 86400);
  absl::StatusOr<int64_t> metrics_series = args.GetInt("--metrics-max-series", 4096, 1, 1 << 20);
  for (const absl::Status& s : {port.status(), timeout.status(), stale.status(),
                                metrics_port.status(), metrics_interval.status(),
                                metrics_series.status()}) {
    if (!s.ok()) return s;
  }
  options.port = static_cast<int>(*port);
  options.rpc_timeout_ms = static_cast<int>(*timeout);
  options.stale_ms = *stale;
  options.metrics_port = static_cast<int>(*metrics_port);
  options.metrics_address = args.Get("--metrics-address", "127.0.0.1");
  options.metrics_interval_secs = *metrics_interval;
  options.metrics_max_series = static_cast<size_t>(*metrics_series);
  if (options.metrics_port < 0 && (args.Has("--metrics-address") || args.Has("--metrics-port-file")))
    return absl::InvalidArgumentError("--metrics-address and --metrics-port-file need --metrics-port");
  return options;

}

// --port-file and --metrics-port-file, through the hardened atomic writer every kairos file
// goes through (output/file_sink.h): a random O_EXCL temp name and a rename, so a reader never
// sees a partial number, and no symlink followed or FIFO/device replaced. A fixed "<F>.tmp"
// opened with fopen followed a planted symlink and the rename replaced a FIFO at F.
bool WritePortFiles(const ArgParser& args, const Relay& relay) {
  const std::string port_file = args.Get("--port-file", "");
  if (!port_file.empty()) {
    const absl::Status st =
        WriteTextFile(port_file, std::to_string(relay.rpc_port()) + "\n", "", "port file");
    if (!st.ok()) {
      fprintf(stderr, "kairos daemon: cannot write --port-file: %s\n", std::string(st.message()).c_str());
      return false;
    }
  }
  const std::string metrics_port_file = args.Get("--metrics-port-file", "");
  if (!metrics_port_file.empty()) {
    const absl::Status st = WriteTextFile(
        metrics_port_file, std::to_string(relay.metrics_port()) + "\n", "", "port file");
    if (!st.ok()) {
      fprintf(stderr, "kairos daemon: cannot write --metrics-port-file: %s\n", std::string(st.message()).c_str());
      return false;
    }
  }
  return true;
}

int DaemonMain(int argc, char** argv) {
  ArgParser args({"--help", "-h", "--no-pid-check", "--verbose"},
                 {"--port", "--bind", "--port-file", "--endpoint", "--socket-dir",
                  "--rpc-timeout-ms", "--stale-ms", "--metrics-port", "--metrics-address",
                  "--metrics-port-file", "--metrics-interval-secs", "--metrics-max-series"});
  if (absl::Status s = args.Parse(argc, argv); !s.ok()) {
    fprintf(stderr, "kairos daemon: %s\n\n%s", std::string(s.message()).c_str(), kUsage);
    return 2;
  }
  if (args.Has("--help") || args.Has("-h")) {
    fputs(kUsage, stdout);
    return 0;
  }
  absl::StatusOr<RelayOptions> parsed = OptionsFrom(args);
  if (!parsed.ok()) {
    fprintf(stderr, "kairos daemon: %s\n", std::string(parsed.status().message()).c_str());
    return 2;
  }
  const RelayOptions& options = *parsed;
  absl::StatusOr<std::unique_ptr<Relay>> relay = Relay::Create(options);
  if (!relay.ok()) {
    fprintf(stderr, "kairos daemon: %s\n", std::string(relay.status().message()).c_str());
    return 1;
  }
  if (pipe2(g_stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    perror("kairos daemon: pipe");
    return 1;
  }
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  if (!WritePortFiles(args, **relay)) return 1;
  if (options.metrics_port >= 0) {
    fprintf(stderr, "kairos daemon: serving metrics on http://%s:%d/metrics (telemetry every %lld s)\n",
            options.metrics_address.c_str(), (*relay)->metrics_port(),
            static_cast<long long>(options.metrics_interval_secs));
  }
  fprintf(stderr, "kairos daemon: listening: ipc %s, rpc %s:%d (Ctrl-C to stop)\n",
          (*relay)->ipc_address().c_str(), options.bind_address.c_str(), (*relay)->rpc_port());
  const absl::Status status = (*relay)->Run(g_stop_pipe[0]);
  const RelayStats& st = (*relay)->stats();
  fprintf(stderr,
          "kairos daemon: stopped: %llu polls, %llu configs sent, %llu reply failures, "
          "%llu invalid datagrams, %llu rpc served, %llu rpc dropped, %llu rpc timeouts, "
          "%llu polls refused (process table full), %llu telemetry datagrams, %llu scrapes\n",
          (unsigned long long)st.polls, (unsigned long long)st.configs_sent,
          (unsigned long long)st.reply_failures, (unsigned long long)st.invalid_datagrams,
          (unsigned long long)st.rpc_served, (unsigned long long)st.rpc_dropped,
          (unsigned long long)st.rpc_timeouts, (unsigned long long)st.registry_refused,
          (unsigned long long)st.telemetry_datagrams, (unsigned long long)st.scrapes);
  if (!status.ok()) {
    fprintf(stderr, "kairos daemon: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}

const Subcommand kDaemon("daemon", "run a local on-demand relay (Dynolog-compatible)",
                         DaemonMain);

}  // namespace
}  // namespace kairos::tools
