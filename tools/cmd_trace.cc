// File: cmd_trace.cc
// Layer: tools. `kairos trace`: the on-demand trigger, a drop-in for `dyno gputrace`. Sends
// the same setKinetOnDemandRequest JSON (dynolog-wire-protocol.md §6.3-§6.5) to `kairos daemon`
// or to a real Dynolog, then prints which processes were triggered and where their traces go.
// Threading: single-threaded CLI.
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include "config/config.h"
#include "daemon_args.h"
#include "daemon_rpc.h"
#include "daemon_trace_path.h"
#include "subcommand.h"
#include "trace_hosts.h"
#include "util/input_file.h"

namespace kairos::tools {
namespace {

constexpr char kUsage[] =
    "usage: kairos trace --log-file PATH [options]\n"
    "\n"
    "Requests an on-demand trace from processes registered with `kairos daemon` or Dynolog\n"
    "(same request as `dyno gputrace`). Each triggered process writes its own file: the pid\n"
    "is inserted before .json / .pt.trace.json in the file name, and a process that knows its\n"
    "rank (RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK) inserts _rank<R>_<pid> instead. An\n"
    "iteration request (--iterations) starts every process of the job at the same iteration:\n"
    "they all poll on the same wall-clock tick and round up from the iteration of that tick.\n"
    "\n"
    "options:\n"
    "  --log-file PATH                 trace file (required; must lie in the process's allowed\n"
    "                                  directory, KINETO_ONDEMAND_TRACE_DIR or the temp dir)\n"
    "  --duration-ms N                 time window length (default 500)\n"
    "  --iterations N                  > 0: trace N iterations instead of a time window\n"
    "  --profile-start-time MS         Unix ms to start at (default 0 = as soon as possible)\n"
    "  --profile-start-iteration-roundup N  start at the next multiple of N (default 1)\n"
    "  --job-id N                      job id (SLURM_JOB_ID/KAIROS_JOB_ID of the job; default 0)\n"
    "  --pids LIST, --pid LIST         comma-separated pids (or ancestor pids); 0 = whole job\n"
    "  --process-limit N               trigger at most N processes (default 3)\n"
    "  --record-shapes --profile-memory --with-stacks --with-flops --with-modules\n"
    "  --warmup-secs N                 kairos extension: append ACTIVITIES_WARMUP_PERIOD_SECS=N\n"
    "                                  (default: not sent; the process's default is 5 s)\n"
    "  --warmup-iterations N           kairos extension, with --iterations: append\n"
    "                                  ACTIVITIES_WARMUP_ITERATIONS=N (default: not sent, 0).\n"
    "                                  1 or more makes the first traced iteration's GPU side\n"
    "                                  complete (docs/ONDEMAND.md)\n"
    "  --fail-on-no-process            exit 1 when no process matched\n"
    "  --hostname HOST                 daemon host (default localhost)\n"
    "  --hosts H1,H2,...               kairos extension: the same request to every host's\n"
    "                                  daemon at once (HOST or HOST:PORT; PORT defaults to\n"
    "                                  --port); prints each host's result, reports the hosts\n"
    "                                  that did not answer within --timeout-ms and carries on\n"
    "                                  with the rest. Exit 0 when at least one host answered\n"
    "  --hostfile FILE                 the same, hosts from FILE (one or more a line, # comments)\n"
    "  --port N                        daemon RPC port (default 1778)\n"
    "  --timeout-ms N                  RPC timeout (default 5000)\n";

void PrintList(const char* label, const std::vector<int64_t>& pids) {
  printf("%s", label);
  for (size_t i = 0; i < pids.size(); ++i) printf("%s%lld", i ? ", " : " ", (long long)pids[i]);
  printf("\n");
}

std::vector<int64_t> IntArray(const JsonValue& reply, const char* key) {
  std::vector<int64_t> out;
  const JsonValue* list = reply.Find(key);
  if (list == nullptr || !list->is_array()) return out;
  for (const JsonValue& v : list->items) {
    int64_t i = 0;
    if (v.AsExactInt(&i)) out.push_back(i);
  }
  return out;
}

// Prints what one daemon's reply says (matched, triggered, where traces go); false when the
// reply is not an on-demand result. *matched: the processes it matched.
bool PrintReply(const std::string& reply, const std::string& log_file, size_t* matched_count) {
  absl::StatusOr<JsonValue> json = ParseRpcJson(reply);
  if (!json.ok() || !json->is_object() || json->Find("processesMatched") == nullptr) {
    fprintf(stderr, "kairos trace: the daemon did not accept the request\n");
    return false;
  }
  const std::vector<int64_t> matched = IntArray(*json, "processesMatched");
  const std::vector<int64_t> triggered = IntArray(*json, "activityProfilersTriggered");
  *matched_count = matched.size();
  if (matched.empty()) {
    printf("No processes were matched, please check --job-id or --pids flags\n");
    return true;
  }
  printf("Matched %zu processes\n", matched.size());
  PrintList("Triggered:", triggered);
  std::vector<int64_t> not_triggered;
  for (int64_t pid : matched) {
    bool t = false;
    for (int64_t p : triggered) t = t || p == pid;
    if (!t) not_triggered.push_back(pid);
  }
  if (!not_triggered.empty()) {
    PrintList("Not triggered (process limit reached or a request already pending):",
              not_triggered);
  }
  if (!triggered.empty()) {
    printf("Trace output files will be written to:\n");
    for (int64_t pid : triggered) {
      printf("    %s\n", PredictOnDemandTracePath(log_file, pid).c_str());
    }
    printf("(a process that knows its rank writes _rank<R>_<pid> instead of _<pid>; it writes to\n"
           " its default path if the requested one is outside its allowed directory or already\n"
           " exists; it logs the file it actually wrote)\n");
  }
  return true;
}

// --hosts / --hostfile: one request to every host at once, a result per host, the
// unreachable listed. Exit 0 when at least one host answered (1 with --fail-on-no-process
// and no process matched anywhere), 1 when none did.
int TraceHostsMain(const std::vector<HostPort>& hosts, const std::string& request,
                   const std::string& log_file, int timeout_ms, bool fail_on_no_process) {
  const std::vector<HostReply> replies = CallHosts(hosts, request, timeout_ms);
  size_t answered = 0, matched_total = 0;
  std::vector<std::string> unreachable;
  for (const HostReply& r : replies) {
    printf("== host %s: ", r.target.Label().c_str());
    if (!r.status.ok()) {
      printf("UNREACHABLE (%s)\n", std::string(r.status.message()).c_str());
      unreachable.push_back(r.target.Label());
      continue;
    }
    printf("\n");
    size_t matched = 0;
    if (!PrintReply(r.reply, log_file, &matched)) {
      unreachable.push_back(r.target.Label());
      continue;
    }
    ++answered;
    matched_total += matched;
  }
  printf("Hosts: %zu answered, %zu unreachable", answered, unreachable.size());
  for (size_t i = 0; i < unreachable.size(); ++i) printf("%s%s", i ? ", " : ": ", unreachable[i].c_str());
  printf("; %zu processes matched\n", matched_total);
  if (answered == 0) return 1;
  return fail_on_no_process && matched_total == 0 ? 1 : 0;
}

// The hosts of --hosts or --hostfile (one of them, and not with --hostname). The file is read
// through the one input-open of the tree: a FIFO or a device is refused, never waited on.
absl::StatusOr<std::vector<HostPort>> HostsOf(const ArgParser& args, int port) {
  if (args.Has("--hostname") || (args.Has("--hosts") && args.Has("--hostfile")))
    return absl::InvalidArgumentError("give one of --hostname, --hosts, --hostfile");
  std::string list = args.Get("--hosts", "");
  if (args.Has("--hostfile")) {
    const std::string path = args.Get("--hostfile", "");
    absl::StatusOr<int> fd = OpenInputFile(path);
    if (!fd.ok()) return absl::InvalidArgumentError("cannot read --hostfile " + std::string(fd.status().message()));
    char buf[65536];
    ssize_t n = 0;
    while ((n = read(*fd, buf, sizeof(buf))) > 0 && list.size() < (64u << 20))
      list.append(buf, static_cast<size_t>(n));
    close(*fd);
    if (n < 0) return absl::InvalidArgumentError("cannot read --hostfile " + path);
  }
  return ParseHostList(list, port);
}

// The options TraceMain uses besides the request's own (GputraceOptions).
struct TraceNumbers {
  int64_t port = 0, timeout_ms = 0, warmup_secs = -1, warmup_iterations = -1;
};

// The numeric options into `o` and `n`. The ranges are the ones a traced process accepts in a
// request (docs/CONFIG.md, "On demand"), so nonsense (--iterations -3, a 10-day window)
// fails here, with the option's name, instead of being sent and rejected later in a log the
// user may not see. Without --iterations the request is a time window (dyno's -1). False
// (the error printed) when one is out of range.
bool ReadTraceNumbers(const ArgParser& args, GputraceOptions* o, TraceNumbers* n) {
  auto duration = args.GetInt("--duration-ms", 500, 0, 3600000);
  auto iterations = args.GetInt("--iterations", -1, 0, 100000);
  auto start_time = args.GetInt("--profile-start-time", 0, 0, INT64_MAX);
  auto roundup = args.GetInt("--profile-start-iteration-roundup", 1, 1, 1000000);
  auto job_id = args.GetInt("--job-id", 0, 0, INT64_MAX);
  auto limit = args.GetInt("--process-limit", 3, 1, 1000000);
  auto port = args.GetInt("--port", kDefaultRpcPort, 1, 65535);
  auto timeout = args.GetInt("--timeout-ms", 5000, 1, 3600000);
  auto warmup = args.GetInt("--warmup-secs", -1, 0, 600);
  auto warmup_iterations = args.GetInt("--warmup-iterations", -1, 0, 100000);
  for (const absl::Status& s : {duration.status(), iterations.status(), start_time.status(),
                                roundup.status(), job_id.status(), limit.status(),
                                port.status(), timeout.status(), warmup.status(),
                                warmup_iterations.status()}) {
    if (!s.ok()) {
      fprintf(stderr, "kairos trace: %s\n", std::string(s.message()).c_str());
      return false;
    }
  }
  // The process refuses a start more than 24 h ahead (docs/CONFIG.md); say so here.
  const int64_t now_ms = static_cast<int64_t>(time(nullptr)) * 1000;
  if (*start_time > now_ms + 24LL * 3600 * 1000) {
    fprintf(stderr,
            "kairos trace: --profile-start-time %lld is more than 24 h in the future\n",
            static_cast<long long>(*start_time));
    return false;
  }
  o->duration_ms = static_cast<uint64_t>(*duration);
  o->iterations = *iterations;
  o->profile_start_time = static_cast<uint64_t>(*start_time);
  o->start_iteration_roundup = static_cast<uint64_t>(*roundup);
  o->job_id = *job_id;
  o->process_limit = static_cast<uint32_t>(*limit);
  *n = TraceNumbers{*port, *timeout, *warmup, *warmup_iterations};
  return true;
}

// Every option into `o` and `n`, checked before anything is sent. False (the error printed)
// when one is missing, out of range, or cannot travel in a request.
bool ReadTraceOptions(const ArgParser& args, GputraceOptions* o, TraceNumbers* n) {
  o->log_file = args.Get("--log-file", "");
  if (o->log_file.empty()) {
    fprintf(stderr, "kairos trace: --log-file is required\n\n%s", kUsage);
    return false;
  }
  // The path travels as the value of an ACTIVITIES_LOG_FILE line of the request's config
  // text: '#' would start a comment there (the file written would be cut at it), '=' would
  // make the line invalid; refuse what the text cannot carry, by name.
  if (const std::string why = ConfigTextValueProblem(o->log_file); !why.empty()) {
    fprintf(stderr, "kairos trace: --log-file %s; a request's config text cannot carry it\n",
            why.c_str());
    return false;
  }
  if (!ReadTraceNumbers(args, o, n)) return false;
  o->pids = args.Get("--pids", args.Get("--pid", "0"));
  // The pid list is pasted into the JSON as dyno does; refuse anything but digits and commas
  // so the request stays valid JSON.
  if (o->pids.empty() || o->pids.find_first_not_of("0123456789, ") != std::string::npos) {
    fprintf(stderr, "kairos trace: --pids must be a comma-separated list of pids\n");
    return false;
  }
  o->record_shapes = args.Has("--record-shapes");
  o->profile_memory = args.Has("--profile-memory");
  o->with_stacks = args.Has("--with-stacks");
  o->with_flops = args.Has("--with-flops");
  o->with_modules = args.Has("--with-modules");
  if (n->warmup_iterations >= 0 && o->iterations <= 0) {
    fprintf(stderr, "kairos trace: --warmup-iterations needs --iterations\n");
    return false;
  }
  if (o->profile_memory && o->iterations > 0) {
    fprintf(stderr, "kairos trace: --profile-memory cannot be combined with --iterations\n");
    return false;
  }
  return true;
}

// The request's config text: dyno's, plus the warm-up lines dyno does not send.
std::string TraceConfigText(const GputraceOptions& o, const TraceNumbers& n) {
  std::string config = BuildGputraceConfig(o);
  // Not a dyno option: dyno's requests always use the process's 5 s default warm-up.
  if (n.warmup_secs >= 0) config += "\nACTIVITIES_WARMUP_PERIOD_SECS=" + std::to_string(n.warmup_secs);
  // Nor this: an iteration request otherwise warms up as its first iteration begins.
  if (n.warmup_iterations >= 0)
    config += "\nACTIVITIES_WARMUP_ITERATIONS=" + std::to_string(n.warmup_iterations);
  return config;
}

// Sends the request to the one daemon at --hostname and prints its reply; the exit status.
int TraceOneHost(const ArgParser& args, const std::string& request, const std::string& log_file,
                 const TraceNumbers& n) {
  const std::string host = args.Get("--hostname", "localhost");
  absl::StatusOr<std::string> reply =
      CallRpc(host, static_cast<int>(n.port), request, static_cast<int>(n.timeout_ms));
  if (!reply.ok()) {
    fprintf(stderr, "kairos trace: %s (is `kairos daemon` or dynolog running?)\n",
            std::string(reply.status().message()).c_str());
    return 1;
  }
  printf("response length = %zu\nresponse = %s\n", reply->size(), reply->c_str());
  size_t matched = 0;
  if (!PrintReply(*reply, log_file, &matched)) return 1;
  if (matched == 0) return args.Has("--fail-on-no-process") ? 1 : 0;
  return 0;
}

int TraceMain(int argc, char** argv) {
  ArgParser args({"--help", "-h", "--record-shapes", "--profile-memory", "--with-stacks",
                  "--with-flops", "--with-modules", "--fail-on-no-process"},
                 {"--log-file", "--duration-ms", "--iterations", "--profile-start-time",
                  "--profile-start-iteration-roundup", "--job-id", "--pids", "--pid",
                  "--process-limit", "--hostname", "--port", "--timeout-ms", "--warmup-secs",
                  "--warmup-iterations", "--hosts", "--hostfile"});
  if (absl::Status s = args.Parse(argc, argv); !s.ok()) {
    fprintf(stderr, "kairos trace: %s\n\n%s", std::string(s.message()).c_str(), kUsage);
    return 2;
  }
  if (args.Has("--help") || args.Has("-h")) {
    fputs(kUsage, stdout);
    return 0;
  }
  GputraceOptions o;
  TraceNumbers n;
  if (!ReadTraceOptions(args, &o, &n)) return 2;
  // Every input checked before anything is sent: a bad host list fails alone.
  std::optional<std::vector<HostPort>> hosts;
  if (args.Has("--hosts") || args.Has("--hostfile")) {
    absl::StatusOr<std::vector<HostPort>> parsed = HostsOf(args, static_cast<int>(n.port));
    if (!parsed.ok()) {
      fprintf(stderr, "kairos trace: %s\n", std::string(parsed.status().message()).c_str());
      return 2;
    }
    hosts = std::move(*parsed);
  }
  const std::string config = TraceConfigText(o, n);
  const std::string request = BuildGputraceRequest(o, config);
  printf("Kineto config = \n%s\n", config.c_str());
  if (hosts.has_value()) {
    return TraceHostsMain(*hosts, request, o.log_file, static_cast<int>(n.timeout_ms),
                          args.Has("--fail-on-no-process"));
  }
  return TraceOneHost(args, request, o.log_file, n);
}

const Subcommand kTrace("trace", "request an on-demand trace (like dyno gputrace)", TraceMain);

}  // namespace
}  // namespace kairos::tools
