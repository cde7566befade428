// File: activity_attach_test.cc
// Layer: test (bindings/c + kairos_activity) on the simulator. Runs the unmodified nvcc-built
// act_train under LD_PRELOAD=libkairos.so and under CUDA_INJECTION64_PATH=libkairos.so with
// a duration window configured in the environment, parses the written JSON trace, and checks
// it against what act_train launched (the window covers the whole run and closes at exit).
// Threading: single-threaded; the traced program is a child process.
#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "temp_dir.h"

namespace {

constexpr int kSteps = 7;

using kairos::testing::TempDir;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Returns the trace file written into `dir` ("" if none); the analysis summary written next
// to it (<trace>.summary.json) is not the trace.
std::string FindTrace(const std::string& dir) {
  std::string found;
  int traces = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (EndsWith(name, ".json") && !EndsWith(name, ".summary.json")) {
        found = dir + "/" + name;
        ++traces;
      }
    }
    closedir(d);
  }
  CHECK(traces == 1);
  return found;
}

// Sanitizer builds: libkairos.so needs its sanitizer runtimes loaded first in the
// uninstrumented act_train; returns them space-separated ("" in normal builds).
std::string SanitizerRuntimes() {
  std::string out;
  if (FILE* p = popen("ldd " KAIROS_LIB " | awk '$1 ~ /^lib(a|ub|t)san/ {print $3}'", "r")) {
    char line[512];
    while (std::fgets(line, sizeof(line), p) != nullptr) {
      std::string l(line);
      while (!l.empty() && (l.back() == '\n' || l.back() == ' ')) l.pop_back();
      if (!l.empty()) out += l + " ";
    }
    pclose(p);
  }
  return out;
}

// `preload`: what goes into LD_PRELOAD after the sanitizer runtimes; `attach_env`: more
// VAR=value words.
// `expect_trace` false: the program records nothing of its own (no GPU activity without a
// driver, no ranges), so kairos writes no file at all (docs/ARCHITECTURE-core.md).
nlohmann::json RunTraced(const std::string& preload, const std::string& attach_env,
                         std::string* stderr_text, bool expect_trace = true) {
  const TempDir temp("kairos_attach_");
  const std::string& dir = temp.path();
  const std::string libs = SanitizerRuntimes() + preload;
  const std::string cmd =
      "env LD_LIBRARY_PATH=" KAIROS_SIM_LIB_DIR " KAIROS_SIM_KERNEL_TIMES=act_=5 "
      "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 " +
      (libs.empty() ? std::string() : "'LD_PRELOAD=" + libs + "' ") + attach_env +
      " 'KAIROS_CONFIG_TEXT=ACTIVITIES_WARMUP_PERIOD_SECS=0;ACTIVITIES_DURATION_MSECS=60000;"
      "ACTIVITIES_LOG_FILE=" + dir + "/trace.json' " ACT_TRAIN " " + std::to_string(kSteps) +
      " > " + dir + "/stdout.txt 2> " + dir + "/stderr.txt";
  const int rc = std::system(cmd.c_str());
  std::ifstream err(dir + "/stderr.txt");
  *stderr_text = std::string(std::istreambuf_iterator<char>(err), {});
  INFO(cmd << "\nstderr: " << *stderr_text);
  REQUIRE(rc == 0);
  if (!expect_trace) {
    int files = 0;
    if (DIR* d = opendir(dir.c_str())) {
      while (dirent* e = readdir(d)) files += EndsWith(e->d_name, ".json") ? 1 : 0;
      closedir(d);
    }
    CHECK(files == 0);
    return nlohmann::json();
  }
  const std::string path = FindTrace(dir);
  REQUIRE(!path.empty());
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

void CheckTrace(const nlohmann::json& trace) {
  std::map<std::string, int> by_cat;
  int launches = 0, launches_with_flow = 0, graph_kernels = 0;
  std::set<long long> flow_starts, flow_ends;
  for (const auto& e : trace.at("traceEvents")) {
    const std::string ph = e.value("ph", "");
    if (ph == "s" && e.value("cat", "") == "ac2g") flow_starts.insert(e.at("id").get<long long>());
    if (ph == "f" && e.value("cat", "") == "ac2g") flow_ends.insert(e.at("id").get<long long>());
    if (ph != "X") continue;
    const std::string cat = e.at("cat");
    ++by_cat[cat];
    if (cat == "cuda_runtime" && e.at("name") == "cudaLaunchKernel") ++launches;
    if (cat == "kernel" && e.at("args").value("graph id", 0) != 0) ++graph_kernels;
  }
  for (const auto& e : trace.at("traceEvents")) {
    if (e.value("ph", "") == "X" && e.value("cat", "") == "cuda_runtime" &&
        e.at("name") == "cudaLaunchKernel" &&
        flow_starts.count(e.at("args").at("correlation").get<long long>()) != 0) {
      ++launches_with_flow;
    }
  }
  CHECK(by_cat["kernel"] == 3 * kSteps + 2);
  CHECK(by_cat["gpu_memcpy"] == kSteps);
  CHECK(by_cat["gpu_memset"] == kSteps);
  CHECK(launches == 3 * kSteps + 2);  // the 2 captured launches run only inside the graph
  CHECK(launches_with_flow == 3 * kSteps);
  CHECK(graph_kernels == 2);
  CHECK(flow_starts == flow_ends);  // no orphan flow ends or starts
  CHECK(trace.at("kairos_stats").at("cupti_uncorrelated") == 0);
  CHECK(trace.at("kairos_stats").at("cupti_dropped") == 0);
  CHECK_FALSE(trace.contains("gpu_data_missing_reason"));
  REQUIRE(trace.contains("deviceProperties"));
  CHECK(trace.at("deviceProperties").size() == 1);
}

TEST_CASE("LD_PRELOAD=libkairos.so traces an unmodified CUDA program", "[attach]") {
  std::string err;
  const nlohmann::json trace = RunTraced(KAIROS_LIB, "", &err);
  CheckTrace(trace);
}

TEST_CASE("CUDA_INJECTION64_PATH=libkairos.so traces an unmodified CUDA program", "[attach]") {
  std::string err;
  const nlohmann::json trace = RunTraced("", "CUDA_INJECTION64_PATH=" KAIROS_LIB, &err);
  CheckTrace(trace);
}

TEST_CASE("real libcupti without a driver: one warning, and no empty trace", "[attach]") {
  // act_train records no range of its own and, without a driver, no GPU activity: nothing
  // of its own in the window, so no trace and no summary (the warning says why GPU data is
  // missing). The CPU-only trace with the reason is covered by capi_preload, whose program
  // records a range.
  std::string err;
  RunTraced(KAIROS_LIB, "KAIROS_CUPTI_LIBRARY=" KAIROS_REAL_CUPTI, &err, /*expect_trace=*/false);
  const std::string reason =
      "CUPTI cuptiSubscribe failed: CUPTI_ERROR_UNKNOWN (999) (no NVIDIA driver or GPU?); GPU "
      "activity disabled, CPU trace continues";
  CHECK(err.find("kairos: warning: " + reason + "\n") != std::string::npos);
}

// ---- Memory recording (docs/MEMORY.md) on mem_train's known allocation pattern ----

struct MemRun {
  std::unique_ptr<TempDir> dir;  // holds `path` (tests read it again); removed with the MemRun
  nlohmann::json trace, summary;
  std::string path;
};

// Runs mem_train `mode` (8 steps) with a window over iterations 2-5 and `memory_key` added
// to the config ("" = memory recording off); returns the trace and its summary.
MemRun RunMem(const std::string& mode, const std::string& memory_key,
              const std::string& extra_env = "") {
  MemRun r;
  r.dir = std::make_unique<TempDir>("kairos_attach_");
  const std::string& dir = r.dir->path();
  const std::string libs = SanitizerRuntimes() + KAIROS_LIB;
  const std::string cmd =
      "env LD_LIBRARY_PATH=" KAIROS_SIM_LIB_DIR " ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 " +
      extra_env + " 'LD_PRELOAD=" + libs + "' 'KAIROS_CONFIG_TEXT=ACTIVITIES_WARMUP_PERIOD_SECS=0;"
      "PROFILE_START_ITERATION=2;ACTIVITIES_ITERATIONS=4;" + memory_key +
      "ACTIVITIES_LOG_FILE=" + dir + "/trace.json' " MEM_TRAIN " " + mode + " 8 > " + dir +
      "/stdout.txt 2> " + dir + "/stderr.txt";
  INFO(cmd);
  REQUIRE(std::system(cmd.c_str()) == 0);
  const std::string path = FindTrace(dir);
  REQUIRE(!path.empty());
  r.path = path;
  std::ifstream in(path);
  r.trace = nlohmann::json::parse(in);
  std::ifstream sin(path.substr(0, path.size() - 5) + ".summary.json");
  r.summary = nlohmann::json::parse(sin);
  return r;
}

std::vector<nlohmann::json> MemoryEvents(const nlohmann::json& trace) {
  std::vector<nlohmann::json> out;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.value("name", "") == "[memory]") out.push_back(e);
  }
  return out;
}

std::set<std::string> FindingIds(const nlohmann::json& summary) {
  std::set<std::string> ids;
  for (const auto& f : summary.at("findings")) ids.insert(f.at("id").get<std::string>());
  return ids;
}

constexpr int64_t kMiB = 1 << 20;
constexpr int64_t kWeights = 64 * kMiB;

TEST_CASE("memory: a leak of 256 KiB per step, exact totals, peak and leaked bytes", "[memory]") {
  const MemRun r = RunMem("leak", "PROFILE_PROFILE_MEMORY=true;");
  const auto events = MemoryEvents(r.trace);
  // 4 window steps x (1 MiB alloc, 256 KiB alloc, 1 MiB free); the 1 MiB pre-loop buffer is
  // freed after the window.
  REQUIRE(events.size() == 12);
  // Baseline: the weights, the 1 MiB buffer and the two 256 KiB leaks of steps 0 and 1.
  const int64_t baseline = kWeights + kMiB + 2 * 256 * 1024;
  REQUIRE(r.trace.at("memory_baseline").size() == 1);
  CHECK(r.trace.at("memory_baseline")[0].at("bytes_in_use") == baseline);
  CHECK(r.trace.at("memory_baseline")[0].at("device_total_bytes") == int64_t{80} << 30);
  int64_t expect = baseline;
  std::set<long long> thread_ids;
  for (size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    INFO(e.dump());
    CHECK(e.at("ph") == "i");
    CHECK(e.at("cat") == "cpu_instant_event");
    CHECK(e.at("s") == "t");
    const auto& a = e.at("args");
    const int64_t bytes = i % 3 == 0 ? kMiB : i % 3 == 1 ? 256 * 1024 : -kMiB;
    expect += bytes;
    CHECK(a.at("Device Type") == 1);
    CHECK(a.at("Device Id") == 0);
    CHECK(a.at("Bytes") == bytes);
    CHECK(a.at("Total Allocated") == expect);
    CHECK(a.at("Total Reserved") == expect);
    CHECK(a.at("memory kind") == "Device");
    CHECK(a.at("External id").get<int64_t>() > 0);  // the "leaky_step" range
    thread_ids.insert(e.at("tid").get<long long>());
  }
  CHECK(thread_ids.size() == 1);
  // PyTorch's six keys in its order (after the External id every linked event starts with).
  std::ifstream in(r.path);
  const auto ordered = nlohmann::ordered_json::parse(in);
  for (const auto& e : ordered.at("traceEvents")) {
    if (e.value("name", "") != "[memory]") continue;
    auto it = e.at("args").begin();
    CHECK(it.key() == "External id");
    for (const char* k : {"Device Type", "Device Id", "Addr", "Bytes", "Total Allocated", "Total Reserved"}) {
      ++it;
      CHECK(it.key() == k);
    }
  }
  CHECK(r.trace.at("kairos_stats").at("memory_events") == 12);
  CHECK(r.trace.at("kairos_stats").at("memory_frees_before_window") == 0);
  CHECK(r.trace.at("kairos_stats").at("memory_without_call") == 0);
  // One counter track per device and total.
  int allocated_samples = 0;
  for (const auto& e : r.trace.at("traceEvents")) {
    if (e.value("ph", "") == "C" && e.value("name", "") == "GPU memory allocated") {
      CHECK(e.at("pid") == 0);
      ++allocated_samples;
    }
  }
  CHECK(allocated_samples == 12);

  REQUIRE(r.summary.at("memory").size() == 1);
  const auto& m = r.summary.at("memory")[0];
  CHECK(m.at("device") == 0);
  CHECK(m.at("allocs") == 8);
  CHECK(m.at("frees") == 4);
  CHECK(m.at("start_allocated_bytes") == baseline);
  CHECK(m.at("peak_allocated_bytes") == baseline + 4 * 256 * 1024 + kMiB);
  CHECK(m.at("peak_step") == 5);
  CHECK(m.at("peak_site") == "leaky_step");
  CHECK(m.at("not_freed_count") == 4);
  CHECK(m.at("not_freed_bytes") == 4 * 256 * 1024);
  REQUIRE(m.at("not_freed_sites").size() == 1);
  CHECK(m.at("not_freed_sites")[0].at("name") == "leaky_step");
  REQUIRE(m.at("step_growth_bytes").size() == 4);
  for (const auto& g : m.at("step_growth_bytes")) CHECK(g.at("bytes") == 256 * 1024);
  const auto ids = FindingIds(r.summary);
  CHECK(ids.count("leak_suspect") == 1);
  CHECK(ids.count("alloc_in_step_loop") == 1);  // cudaMalloc/cudaFree of the activations
  CHECK(ids.count("memory_headroom") == 1);     // 67.5 MiB of 80 GiB
  CHECK(ids.count("oom_risk") == 0);
  CHECK(ids.count("fragmentation") == 0);
}

TEST_CASE("memory: a cudaMalloc/cudaFree churn loop fires alloc_in_step_loop, a pre-window free is counted",
          "[memory]") {
  const MemRun r = RunMem("churn", "ACTIVITY_TYPES=kernel,cuda_runtime,memory;");
  const auto events = MemoryEvents(r.trace);
  REQUIRE(events.size() == 4 * 8 + 1);
  int before_window = 0;
  for (const auto& e : events) {
    if (e.at("args").value("allocated before window", false)) {
      ++before_window;
      CHECK(e.at("args").at("Bytes") == -kMiB);
    }
  }
  CHECK(before_window == 1);
  CHECK(r.trace.at("kairos_stats").at("memory_frees_before_window") == 1);
  const auto& m = r.summary.at("memory")[0];
  CHECK(m.at("start_allocated_bytes") == kWeights + kMiB);
  CHECK(m.at("peak_allocated_bytes") == kWeights + kMiB + 2 * kMiB);
  CHECK(m.at("end_allocated_bytes") == kWeights);  // the 1 MiB pre-window buffer freed
  CHECK(m.at("not_freed_count") == 0);
  CHECK(m.at("frees_before_window") == 1);
  const auto ids = FindingIds(r.summary);
  CHECK(ids.count("alloc_in_step_loop") == 1);
  CHECK(ids.count("leak_suspect") == 0);
  for (const auto& f : r.summary.at("findings")) {
    if (f.at("id") == "alloc_in_step_loop") CHECK(f.at("evidence").at("calls") == 4 * 8 + 1);
  }
}

TEST_CASE("memory: stream-ordered allocations on two streams do not fire alloc_in_step_loop", "[memory]") {
  const MemRun r = RunMem("pooled", "PROFILE_PROFILE_MEMORY=true;");
  const auto events = MemoryEvents(r.trace);
  REQUIRE(events.size() == 4 * 4 + 1);
  std::set<int64_t> streams;
  for (const auto& e : events) {
    const auto& a = e.at("args");
    if (!a.value("async", false)) continue;
    streams.insert(a.at("stream").get<int64_t>());
    CHECK(a.at("pool").get<uint64_t>() != 0);
  }
  CHECK(streams.size() == 2);
  const auto& m = r.summary.at("memory")[0];
  CHECK(m.at("peak_allocated_bytes") == kWeights + kMiB + 2 * kMiB);
  CHECK(m.at("not_freed_count") == 0);
  const auto ids = FindingIds(r.summary);
  CHECK(ids.count("alloc_in_step_loop") == 0);
  CHECK(ids.count("leak_suspect") == 0);
}

TEST_CASE("memory: without PROFILE_PROFILE_MEMORY nothing of memory is recorded", "[memory]") {
  const MemRun r = RunMem("leak", "");
  CHECK(MemoryEvents(r.trace).empty());
  CHECK_FALSE(r.trace.contains("memory_baseline"));
  CHECK_FALSE(r.trace.at("kairos_stats").contains("memory_events"));
  CHECK(r.summary.at("memory").empty());
}

}  // namespace

// ---- Linking launches to the CPU range around them (docs/ACTIVITY.md) ----

TEST_CASE("links: launches right after the window's start boundary carry their range's External id",
          "[attach]") {
  // An iteration window starts at the step boundary; the session thread opens it later (on an
  // H100 running a PyTorch loop, 2.9 ms later: a whole first step of kernels came without
  // their ops' External ids). Here every flush at open takes 100 ms, so the window is recorded
  // for 5 steps (20 ms each) before the session thread has opened it. Each step's one kernel is
  // launched inside the step's "leaky_step" range: every kernel of the window must carry that
  // range's External id.
  const MemRun r = RunMem("leak", "", "KAIROS_SIM_CUPTI_FLUSH_DELAY_MS=100");
  std::set<long long> range_ids;
  std::vector<long long> kernel_ids;
  for (const auto& e : r.trace.at("traceEvents")) {
    if (e.value("ph", "") != "X") continue;
    const std::string cat = e.value("cat", "");
    if (cat == "user_annotation" && e.value("name", "") == "leaky_step")
      range_ids.insert(e.at("args").at("External id").get<long long>());
    if (cat == "kernel") kernel_ids.push_back(e.at("args").value("External id", 0LL));
  }
  INFO(r.path);
  CHECK(range_ids.size() == 4);
  REQUIRE(kernel_ids.size() == 4);
  for (long long id : kernel_ids) CHECK(range_ids.count(id) == 1);
}
