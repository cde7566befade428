// File: abuse_cli_test.cc
// Layer: test (abuse, ctest label "abuse"). `kairos trace` refuses nonsense values before
// anything is sent: each case asserts exit status 2 and the exact message naming the option.
// Threading: single-threaded; runs the real CLI binary.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

namespace {

struct Run {
  int status = -1;
  std::string output;
};

Run Trace(const std::string& args) {
  // No daemon is contacted: every case fails validation first (port 1 would refuse anyway).
  const std::string cmd =
      std::string(KAIROS_CLI) + " trace --port 1 --timeout-ms 100 " + args + " 2>&1";
  Run r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), p)) > 0;) r.output.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
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

}  // namespace
