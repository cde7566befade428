// File: test/sim/tests/samples/samples_test.cc
// Layer: simulator tests, kernel execution end to end: the sample-style programs of this
//        folder run unmodified on the substitutes.
//        [run]: with KAIROS_SIM_EXEC_KERNELS=1 each passes its own result check (on the fast
//        path and on the reference interpreter, KAIROS_SIM_EXEC_ENGINE=reference); without it
//        each fails that check (so the checks can fail); the interpreter's limits (an
//        unsupported instruction, an illegal address, a kernel that never ends) give one
//        warning each and leave the program running.
//        [attach]: the same programs with LD_PRELOAD=libkairos.so pass their checks and give
//        a trace in which every kernel is correlated to its launch by exactly one flow.
// Threading: single-threaded; the programs are child processes.
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "../trace_dir.h"
#include "temp_dir.h"

namespace {

struct Sample {
  const char* name;
  int kernels;  // launches the program makes
};

// Each program's own kernel launches, counted from its source.
const Sample kSamples[] = {
    {"vector_add", 1},          // one launch
    {"async_api", 1},           // one launch
    {"simple_streams", 13},     // 1 non-streamed + 3 reps x 4 streams
    {"simple_multi_copy", 12},  // 3 rounds x 4 streams
    {"simple_hyperq", 17},      // 8 streams x 2 spin kernels + the sum
    {"ptx_subset", 5},          // int ops, reverse, double, memory, read counter
};

struct Result {
  int rc = -1;
  std::string output;
};

using kairos::testing::TempDir;

// Runs `program` and returns its exit status and output (kept in a temp directory that is
// removed before returning).
Result Run(const std::string& program, const std::string& env) {
  Result r;
  const TempDir temp("kairos_simsamples_");
  const std::string& dir = temp.path();
  const std::string cmd = "env LD_LIBRARY_PATH=" KSIM_LIB_DIR " " + env + " " SAMPLE_DIR "/" + program + " > " +
                          dir + "/out.txt 2>&1";
  const int status = std::system(cmd.c_str());
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream out(dir + "/out.txt");
  r.output.assign(std::istreambuf_iterator<char>(out), {});
  return r;
}

bool Contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

nlohmann::json ReadTrace(const std::string& dir) {
  const std::string path = ksim_test::TracePathIn(dir);
  std::ifstream in(path);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("sample-style programs pass their own result checks when kernels execute", "[run]") {
  for (const Sample& s : kSamples) {
    const Result r = Run(s.name, "KAIROS_SIM_EXEC_KERNELS=1");
    INFO(s.name << ":\n" << r.output);
    CHECK(r.rc == 0);
    CHECK(Contains(r.output, std::string(s.name) + ": PASSED"));
    CHECK_FALSE(Contains(r.output, "not executed"));  // every kernel ran
    CHECK_FALSE(Contains(r.output, "stopped"));
  }
}

TEST_CASE("the reference interpreter passes the same checks", "[run]") {
  for (const Sample& s : kSamples) {
    const Result r = Run(s.name, "KAIROS_SIM_EXEC_KERNELS=1 KAIROS_SIM_EXEC_ENGINE=reference");
    INFO(s.name << ":\n" << r.output);
    CHECK(r.rc == 0);
    CHECK(Contains(r.output, std::string(s.name) + ": PASSED"));
  }
}

TEST_CASE("without kernel execution the same checks fail", "[run]") {
  for (const Sample& s : kSamples) {
    const Result r = Run(s.name, "");
    INFO(s.name << ":\n" << r.output);
    CHECK(r.rc == 1);
    CHECK(Contains(r.output, std::string(s.name) + ": FAILED"));
  }
}

TEST_CASE("an unsupported instruction: one warning naming it, the kernel does not run", "[run]") {
  const Result r = Run("ptx_subset --unsupported", "KAIROS_SIM_EXEC_KERNELS=1");
  INFO(r.output);
  CHECK(r.rc == 0);
  CHECK(Count(r.output, "kernel _Z13subsetShufflePi: not executed: unsupported instruction shfl.sync.down.b32") == 1);
}

TEST_CASE("an illegal address stops that kernel only; the process goes on", "[run]") {
  const Result r = Run("ptx_subset --fault", "KAIROS_SIM_EXEC_KERNELS=1");
  INFO(r.output);
  CHECK(r.rc == 0);
  CHECK(Count(r.output, "kernel _Z11subsetStorePi: stopped: illegal address") == 1);
}

TEST_CASE("a kernel that never ends stops at the instruction cap", "[run]") {
  const Result r = Run("ptx_subset --loop", "KAIROS_SIM_EXEC_KERNELS=1 KAIROS_SIM_EXEC_MAX_INSTRUCTIONS=200000");
  INFO(r.output);
  CHECK(r.rc == 0);
  CHECK(Count(r.output, "kernel _Z13subsetForeverPi: stopped: instruction cap reached") == 1);
}

TEST_CASE("with kairos preloaded: checks pass and every kernel is correlated to its launch", "[attach]") {
  for (const Sample& s : kSamples) {
    const TempDir temp("kairos_simsamples_");
    const std::string& dir = temp.path();
    const std::string env = "KAIROS_SIM_EXEC_KERNELS=1 LD_PRELOAD=" KAIROS_LIB
                            " 'KAIROS_CONFIG_TEXT=ACTIVITIES_WARMUP_PERIOD_SECS=0;ACTIVITIES_DURATION_MSECS=600000;"
                            "ACTIVITIES_LOG_FILE=" +
                            dir + "/trace.json'";
    const Result r = Run(s.name, env);
    INFO(s.name << ":\n" << r.output);
    REQUIRE(r.rc == 0);
    CHECK(Contains(r.output, std::string(s.name) + ": PASSED"));
    const nlohmann::json trace = ReadTrace(dir);
    std::multiset<long long> starts, ends;
    for (const auto& e : trace.at("traceEvents")) {
      if (e.value("cat", "") != "ac2g") continue;
      if (e.value("ph", "") == "s") starts.insert(e.at("id").get<long long>());
      if (e.value("ph", "") == "f") ends.insert(e.at("id").get<long long>());
    }
    int kernels = 0, with_flow = 0;
    for (const auto& e : trace.at("traceEvents")) {
      if (e.value("ph", "") != "X" || e.value("cat", "") != "kernel") continue;
      ++kernels;
      if (ends.count(e.at("args").at("correlation").get<long long>()) == 1) ++with_flow;
    }
    CHECK(kernels == s.kernels);
    CHECK(with_flow == s.kernels);
    for (long long id : starts) CHECK(starts.count(id) == 1);
    CHECK(starts == ends);
    CHECK(trace.at("kairos_stats").at("cupti_uncorrelated") == 0);
    CHECK(trace.at("kairos_stats").at("cupti_dropped") == 0);
  }
}
