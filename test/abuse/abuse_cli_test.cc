// File: abuse_cli_test.cc
// Layer: test (abuse, ctest label "abuse"). `kairos trace` refuses nonsense values before
// anything is sent: each case asserts exit status 2 and the exact message naming the option.
// The trace readers (summarize, convert, merge, report) refuse a FIFO named as input or found
// in a scanned directory at once, with one line, instead of blocking forever.
// Threading: single-threaded; runs the real CLI binary.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "temp_dir.h"

namespace {

using kairos::testing::TempDir;

struct Run {
  int status = -1;
  std::string output;
};

// Runs `cmd` through the shell and collects what it prints (as redirected in `cmd`).
Run Shell(const std::string& cmd) {
  Run r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), p)) > 0;) r.output.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

Run Trace(const std::string& args) {
  // No daemon is contacted: every case fails validation first (port 1 would refuse anyway).
  return Shell(std::string(KAIROS_CLI) + " trace --port 1 --timeout-ms 100 " + args + " 2>&1");
}

// `kairos ARGS` under a 20 s timeout (a reader that blocks on a FIFO shows as exit status
// 124, not as a hung test); the result holds its stderr only.
Run Cli(const std::string& args) {
  return Shell("timeout -k 2 20 " + std::string(KAIROS_CLI) + " " + args + " 2>&1 >/dev/null");
}

TEST_CASE("kairos trace rejects nonsense values by option name", "[abuse]") {
  struct Case {
    std::string args;
    std::string message;
  } cases[] = {
      {"--log-file /tmp/t.json --iterations -3",
       "kairos trace: --iterations \"-3\" is not an integer in [0, 100000]\n"},
      {"--log-file /tmp/t.json --duration-ms 99999999999",
       "kairos trace: --duration-ms \"99999999999\" is not an integer in [0, 3600000]\n"},
      {"--log-file /tmp/t.json --duration-ms 12abc",
       "kairos trace: --duration-ms \"12abc\" is not an integer in [0, 3600000]\n"},
      {"--log-file /tmp/t.json --iterations 99999999999999999999999",
       "kairos trace: --iterations \"99999999999999999999999\" is not an integer in [0, "
       "100000]\n"},
      {"--log-file /tmp/t.json --profile-start-iteration-roundup 0",
       "kairos trace: --profile-start-iteration-roundup \"0\" is not an integer in [1, "
       "1000000]\n"},
      {"--log-file /tmp/t.json --process-limit 0",
       "kairos trace: --process-limit \"0\" is not an integer in [1, 1000000]\n"},
      {"--log-file /tmp/t.json --warmup-secs 100000",
       "kairos trace: --warmup-secs \"100000\" is not an integer in [0, 600]\n"},
      {"--log-file /tmp/t.json --iterations 5 --warmup-iterations 100001",
       "kairos trace: --warmup-iterations \"100001\" is not an integer in [0, 100000]\n"},
      {"--log-file /tmp/t.json --warmup-iterations 2",
       "kairos trace: --warmup-iterations needs --iterations\n"},
      {"--log-file /tmp/t.json --profile-start-time 9223372036854775807",
       "kairos trace: --profile-start-time 9223372036854775807 is more than 24 h in the "
       "future\n"},
      {"--log-file \"$(printf '/tmp/a\\001b.json')\"",
       "kairos trace: --log-file contains the control character \\x01; a request's config "
       "text cannot carry it\n"},
      // '#' would start a comment in the request's config text: the job would write /tmp/a.
      {"--log-file '/tmp/a#1.json'",
       "kairos trace: --log-file contains '#' (a comment starts there); a request's config "
       "text cannot carry it\n"},
      {"--log-file '/tmp/a=1.json'",
       "kairos trace: --log-file contains '=' (a config line has exactly one); a request's "
       "config text cannot carry it\n"},
      {"--log-file '/tmp/a.json '",
       "kairos trace: --log-file has leading or trailing blanks (they are trimmed); a "
       "request's config text cannot carry it\n"},
      {"--log-file /tmp/t.json --pids '1;rm'",
       "kairos trace: --pids must be a comma-separated list of pids\n"},
  };
  for (const Case& c : cases) {
    INFO(c.args);
    const Run r = Trace(c.args);
    CHECK(r.status == 2);
    CHECK(r.output == c.message);
  }
}

TEST_CASE("trace readers refuse a FIFO at once instead of blocking", "[abuse]") {
  const TempDir temp("kairos_abuse_fifo_");
  const std::string& dir = temp.path();
  // One regular rank trace and a FIFO named like the next rank's trace; nothing ever opens
  // the FIFO for writing, so a blocking open for reading would never return.
  std::ofstream(dir + "/job.rank0.json")
      << R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1000,)"
      << R"("dur":10,"args":{"device":0,"stream":7,"correlation":1}}]})";
  const std::string fifo = dir + "/job.rank1.json";
  const std::string pf_fifo = dir + "/fifo.pftrace";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  REQUIRE(mkfifo(pf_fifo.c_str(), 0600) == 0);
  const std::string refused = ": is a FIFO, not a regular file; refusing to read it\n";
  struct Case {
    std::string args;
    int status;
    std::string stderr_text;
  } cases[] = {
      {"summarize " + fifo, 1, "kairos summarize: " + fifo + refused},
      {"summarize " + pf_fifo, 1, "kairos summarize: " + pf_fifo + refused},
      // The directory scan skips the FIFO with one line and summarises the regular trace.
      {"summarize " + dir, 0,
       "kairos summarize: skipping " + pf_fifo + refused + "kairos summarize: skipping " + fifo + refused},
      {"convert " + fifo + " " + dir + "/out.json", 1,
       "kairos convert: cannot read " + fifo + ": " + fifo + refused},
      {"convert " + pf_fifo + " " + dir + "/out.json", 1,
       "kairos convert: cannot read " + pf_fifo + ": " + pf_fifo + refused},
      {"merge -o " + dir + "/m.json " + dir + "/job.rank0.json " + fifo, 1,
       "kairos merge: " + fifo + refused},
      {"merge -o " + dir + "/m.pftrace " + pf_fifo, 1, "kairos merge: " + pf_fifo + refused},
      {"report -o " + dir + "/r.html " + fifo, 1, "kairos report: " + fifo + refused},
      // A host list is an input too (it used to be fopen()ed and waited on forever).
      {"trace --log-file " + dir + "/t.json --hostfile " + fifo, 2,
       "kairos trace: cannot read --hostfile " + fifo + refused},
  };
  for (const Case& c : cases) {
    INFO(c.args);
    const Run r = Cli(c.args);
    CHECK(r.status == c.status);
    CHECK(r.output == c.stderr_text);
  }
  // A FIFO alone in a directory: no trace to summarise is an error, not an empty summary.
  const std::string lone = dir + "/lone";
  REQUIRE(mkdir(lone.c_str(), 0700) == 0);
  REQUIRE(mkfifo((lone + "/t.json").c_str(), 0600) == 0);
  const Run r = Cli("summarize " + lone);
  CHECK(r.status == 1);
  CHECK(r.output == "kairos summarize: skipping " + lone + "/t.json" + refused +
                        "kairos summarize: no trace files in " + lone + "\n");
}

TEST_CASE("summarize refuses kernels whose end does not fit 64-bit ns instead of losing them", "[abuse]") {
  const TempDir temp("kairos_abuse_ts_");
  const std::string& dir = temp.path();
  // Five kernels starting just below INT64_MAX ns: ts fits, ts + dur does not. The old reader
  // wrapped their ends below their starts and summarize said "No GPU work", exit 0.
  std::string events;
  for (int i = 0; i < 5; ++i) {
    events += std::string(i ? "," : "") + R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":)" +
              "9223372036854775." + std::to_string(100 + i) + R"(,"dur":10,"args":{"device":0,"stream":7}})";
  }
  std::ofstream(dir + "/t.json") << R"({"traceEvents":[)" << events << "]}";
  const Run r = Cli("summarize " + dir + "/t.json");
  CHECK(r.status == 1);
  CHECK(r.output == "kairos summarize: " + dir +
                        "/t.json: JSON: \"ts\" + \"dur\" (9223372036854775100 + 10000 ns) does not fit a 64-bit ns "
                        "time (event ending at byte 134)\n");
}

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

TEST_CASE("kairos daemon --port-file goes through the hardened writer", "[abuse]") {
  const TempDir temp("kairos_abuse_portfile_");
  const std::string& dir = temp.path();
  const std::string victim = dir + "/victim";
  std::ofstream(victim) << "precious";
  // Its own IPC endpoint; SIGINT after 2 s stops a daemon that started (exit 0).
  const std::string daemon = "timeout --preserve-status -s INT -k 2 2 " + std::string(KAIROS_CLI) +
                             " daemon --port 0 --endpoint kairos_abuse_pf_" + std::to_string(getpid()) +
                             " --port-file ";
  // A symlink planted at F: refused, the file it points to untouched. The old fopen + rename
  // replaced the link (and a link at F.tmp made fopen write through it).
  const std::string link = dir + "/port.link";
  REQUIRE(symlink(victim.c_str(), link.c_str()) == 0);
  Run r = Shell(daemon + link + " 2>&1");
  CHECK(r.status == 1);
  CHECK(r.output == "kairos daemon: cannot write --port-file: refusing to write port file '" + link +
                        "': the path is a symbolic link\n");
  // A FIFO at F: refused at once, still a FIFO (the old rename replaced it).
  const std::string fifo = dir + "/port.fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  r = Shell(daemon + fifo + " 2>&1");
  CHECK(r.status == 1);
  CHECK(r.output == "kairos daemon: cannot write --port-file: refusing to write port file '" + fifo +
                        "': it exists and is not a regular file (a FIFO, device, socket or directory is never "
                        "replaced)\n");
  struct stat st;
  REQUIRE(lstat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  // A symlink planted at the old fixed temp name F.tmp is never used: F gets the port.
  const std::string port = dir + "/port";
  REQUIRE(symlink(victim.c_str(), (port + ".tmp").c_str()) == 0);
  r = Shell(daemon + port + " 2>/dev/null");
  CHECK(r.status == 0);
  const std::string number = Slurp(port);
  CHECK(number.size() >= 2);
  CHECK(number.back() == '\n');
  CHECK(number.find_first_not_of("0123456789\n") == std::string::npos);
  CHECK(Slurp(victim) == "precious");
}

TEST_CASE("CLI refusals name what they refuse to write", "[abuse]") {
  const TempDir temp("kairos_abuse_what_");
  const std::string& dir = temp.path();
  std::ofstream(dir + "/t.json")
      << R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1000,"dur":10,)"
      << R"("args":{"device":0,"stream":7}}]})";
  const std::string nonreg = ": it exists and is not a regular file (a FIFO, device, socket or directory is never "
                             "replaced)\n";
  Run r = Cli("report -o /dev/null " + dir + "/t.json");
  CHECK(r.status == 1);
  CHECK(r.output == "kairos report: refusing to write report '/dev/null'" + nonreg);
  r = Cli("summarize --out /dev/null " + dir + "/t.json");
  CHECK(r.status == 1);
  CHECK(r.output == "kairos summarize: cannot write /dev/null: refusing to write summary '/dev/null'" + nonreg);
}

}  // namespace
