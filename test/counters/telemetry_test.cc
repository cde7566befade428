// File: telemetry_test.cc
// Layer: tests for kairos_counters. Telemetry lines: exactly the documented fields in order
// (nulls where unknown), the aggregate of one interval (time-weighted, occupancy weighted by
// SM activity), steps from the iteration counter, pausing for a trace window and being fed
// its samples. A fake PM platform and an injected clock; no thread, no sleeping.
// Threading: test thread only.
#include "counters/telemetry.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>

#include <catch2/catch.hpp>

#include "model/gpu_counters.h"
#include "temp_dir.h"

namespace kairos {
namespace {

constexpr int64_t kMs = 1000000;
constexpr int64_t kS = 1000 * kMs;

struct Fake {
  std::map<uint32_t, std::vector<PmSample>> pending;
  int running = 0;
};

class FakeSampler : public PmSampler {
 public:
  explicit FakeSampler(Fake* f) : f_(f) {}
  absl::Status Start(uint32_t device, const std::vector<std::string>& metrics, int64_t) override {
    CHECK(metrics == TelemetryMetrics());
    device_ = device;
    ++f_->running;
    return absl::OkStatus();
  }
  absl::Status Poll(std::vector<PmSample>* out, bool*) override {
    for (const PmSample& s : f_->pending[device_]) out->push_back(s);
    f_->pending[device_].clear();
    return absl::OkStatus();
  }
  void Stop() override { --f_->running; }

 private:
  Fake* f_;
  uint32_t device_ = 0;
};

class FakePlatform : public PmPlatform {
 public:
  explicit FakePlatform(Fake* f) : f_(f) {}
  int DeviceCount() override { return 2; }
  GpuIdentity Identity(int device) override {
    return {"GPU-00000000-0000-0000-0000-00000000000" + std::to_string(device), "Fake \"H100\""};
  }
  std::unique_ptr<PmSampler> Open() override { return std::make_unique<FakeSampler>(f_); }

 private:
  Fake* f_;
};

// gr busy, SM active, occupancy, tensor, DRAM: TelemetryMetrics() order.
PmSample S(int64_t start, int64_t len, std::vector<double> v) {
  return PmSample{start, start + len, std::move(v)};
}

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

TEST_CASE("TelemetryLine: exactly the documented fields, null where unknown") {
  TelemetryRecord r;
  r.ts_ns = 5;
  r.host = "h\"1";
  r.pid = 42;
  r.rank = 3;
  r.device = 1;
  r.interval_ns = 10;
  r.sm_active_pct = 50;
  r.steps = 7;
  CHECK(TelemetryLine(r) ==
        "{\"schema_version\":3,\"ts_ns\":5,\"host\":\"h\\\"1\",\"pid\":42,\"job_id\":null,\"rank\":3,"
        "\"device\":1,\"gpu_uuid\":null,\"gpu_name\":null,\"interval_ns\":10,\"gpu_busy_pct\":null,\"sm_active_pct\":50,"
        "\"achieved_occupancy_pct\":null,\"tensor_active_pct\":null,"
        "\"dram_throughput_pct\":null,\"kernels\":null,\"memcpy_bytes\":null,\"steps\":7,"
        "\"step_time_ms_p50\":null,\"process_cpu_pct\":null,\"process_rss_bytes\":null,"
        "\"gpu_memory_used_bytes\":null,\"gpu_memory_total_bytes\":null}");
  // After lines were lost (a full disk), the next line says how many, as its last field.
  r.lines_lost = 4;
  const std::string line = TelemetryLine(r);
  const std::string tail = "\"gpu_memory_total_bytes\":null,\"lines_lost\":4}";
  REQUIRE(line.size() > tail.size());
  CHECK(line.substr(line.size() - tail.size()) == tail);
}

TEST_CASE("Telemetry: one line per GPU per interval with the interval's aggregate") {
  const std::string path = "telemetry_test_" + std::to_string(getpid()) + ".jsonl";
  std::remove(path.c_str());
  Fake fake;
  int64_t now = 100 * kS;
  int64_t iterations = 10;
  Telemetry t;
  TelemetryOptions o;
  o.interval_ns = 10 * kS;
  o.path = path;
  o.host = "node1";
  o.pid = 7;
  o.job_id = 99;
  o.platform = [&fake] { return std::make_unique<FakePlatform>(&fake); };
  o.iterations = [&iterations] { return iterations; };
  o.clock = [&now] { return now; };
  o.run_thread = false;
  // The process: 150 ticks of CPU (1.5 s at USER_HZ 100) in the first interval, 1000 pages
  // resident, then 40 ticks and 2000 pages.
  uint64_t cpu_ticks = 500, rss_pages = 1000;
  o.read_proc_self_stat = [&cpu_ticks, &rss_pages](std::string* text) {
    *text = "7 (tele test) S 1 1 1 0 -1 0 0 0 0 0 " + std::to_string(cpu_ticks - 100) + " 100 0 0 20 0 3 0 " +
            "100 1000000 " + std::to_string(rss_pages) + " 0\n";
    return true;
  };
  REQUIRE(t.Start(o).ok());
  CHECK(fake.running == 2);
  cpu_ticks += 150;
  // GPU 0: 6 s at SM 100% / occupancy 40%, 4 s at SM 0% (occupancy meaningless: 0 weight).
  fake.pending[0] = {S(100 * kS, 6 * kS, {90, 100, 40, 10, 30}), S(106 * kS, 4 * kS, {0, 0, 0, 0, 5})};
  iterations = 25;
  now = 110 * kS;
  t.Tick(now);
  cpu_ticks += 40;
  rss_pages = 2000;
  // A trace window takes the counters: ours stop, the window's samples are fed in.
  t.Pause();
  CHECK(fake.running == 0);
  t.Feed(1, {kPmSmActive}, {S(110 * kS, 10 * kS, {25})});
  now = 120 * kS;
  t.Tick(now);
  t.Resume();
  CHECK(fake.running == 2);
  const auto lines = ReadLines(path);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] ==
        "{\"schema_version\":3,\"ts_ns\":110000000000,\"host\":\"node1\",\"pid\":7,\"job_id\":99,"
        "\"rank\":null,\"device\":0,\"gpu_uuid\":\"GPU-00000000-0000-0000-0000-000000000000\","
        "\"gpu_name\":\"Fake \\\"H100\\\"\",\"interval_ns\":10000000000,\"gpu_busy_pct\":54,\"sm_active_pct\":60,"
        "\"achieved_occupancy_pct\":40,\"tensor_active_pct\":6,\"dram_throughput_pct\":20,"
        "\"kernels\":null,\"memcpy_bytes\":null,\"steps\":15,\"step_time_ms_p50\":null,"
        "\"process_cpu_pct\":15,\"process_rss_bytes\":" + std::to_string(1000 * sysconf(_SC_PAGESIZE)) +
        ",\"gpu_memory_used_bytes\":null,\"gpu_memory_total_bytes\":null}");
  CHECK(lines[1].find("\"device\":1,") != std::string::npos);
  // The process fields are the process's: the same on every GPU's line.
  CHECK(lines[1].find("\"process_cpu_pct\":15,") != std::string::npos);
  CHECK(lines[3].find("\"process_cpu_pct\":4,\"process_rss_bytes\":" +
                      std::to_string(2000 * sysconf(_SC_PAGESIZE)) + ",") != std::string::npos);
  CHECK(lines[1].find("\"sm_active_pct\":null") != std::string::npos);
  CHECK(lines[3].find("\"device\":1,") != std::string::npos);
  CHECK(lines[3].find("\"sm_active_pct\":25,") != std::string::npos);
  CHECK(lines[3].find("\"steps\":0,") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("Telemetry: step_time_ms_p50 is the median of the interval's step times") {
  const std::string path = "telemetry_steps_" + std::to_string(getpid()) + ".jsonl";
  std::remove(path.c_str());
  int64_t now = 100 * kS;
  int64_t iterations = 10;
  Telemetry t;
  TelemetryOptions o;
  o.interval_ns = 10 * kS;
  o.path = path;
  o.iterations = [&iterations] { return iterations; };
  o.clock = [&now] { return now; };
  o.step_ns_per_tick = 1.0;  // the stamps below are in ns
  o.run_thread = false;
  std::atomic<TelemetryStepRing*> slot{nullptr};  // the session's StepState::telemetry
  o.step_slot = &slot;
  REQUIRE(t.Start(o).ok());
  // Steps 11..25; step n takes 10 * (n - 10) ms (10 .. 150 ms). The hook stamps each step.
  int64_t stamp = 1 * kS;
  TelemetryNoteStep(slot.load(), 10, static_cast<uint64_t>(stamp));
  for (int64_t n = 11; n <= 25; ++n) {
    stamp += 10 * (n - 10) * kMs;
    TelemetryNoteStep(slot.load(), n, static_cast<uint64_t>(stamp));
  }
  iterations = 25;
  now = 110 * kS;
  t.Tick(now);
  // Steps 11..24 are timed (the newest step, 25, may still be stamping when the interval
  // ends: it is timed in the next one): 10 .. 140 ms, lower median 70 ms.
  // Next interval: steps 26..30 of 5 ms each; timed 25..29: 150, 5, 5, 5, 5 -> 5 ms.
  for (int64_t n = 26; n <= 30; ++n) {
    stamp += 5 * kMs;
    TelemetryNoteStep(slot.load(), n, static_cast<uint64_t>(stamp));
  }
  iterations = 30;
  now = 120 * kS;
  t.Tick(now);
  // No step in the third interval: steps 0, time unknown.
  now = 130 * kS;
  t.Tick(now);
  const auto lines = ReadLines(path);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].find("\"steps\":15,\"step_time_ms_p50\":70,") != std::string::npos);
  CHECK(lines[1].find("\"steps\":5,\"step_time_ms_p50\":5,") != std::string::npos);
  CHECK(lines[2].find("\"steps\":0,\"step_time_ms_p50\":null,") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("MedianStepMs: overwritten, unset and out-of-order stamps are skipped") {
  auto ring = std::make_unique<TelemetryStepRing>();
  // Stamps 1..4 at 0, 1, 3, 6 ms; step 5's stamp never arrived (0).
  for (int64_t n = 1; n <= 4; ++n) ring->raw[n].store(static_cast<uint64_t>((n - 1) * n / 2 * kMs + 1));
  auto m = MedianStepMs(*ring, 1, 5, 1.0);  // steps 2, 3, 4 (1, 2, 3 ms); step 5 unknown
  REQUIRE(m.has_value());
  CHECK(*m == Approx(2.0));
  CHECK_FALSE(MedianStepMs(*ring, 4, 5, 1.0).has_value());
  // More steps than the ring holds: only the newest kTelemetryStepRing - 1 are timed.
  const int64_t last = 3 * static_cast<int64_t>(kTelemetryStepRing);
  ring = std::make_unique<TelemetryStepRing>();
  TelemetryNoteStep(nullptr, 1, 5);  // no writer runs: nothing stored anywhere
  CHECK(ring->raw[1].load() == 0);
  for (int64_t n = 1; n <= last; ++n)
    TelemetryNoteStep(ring.get(), n, static_cast<uint64_t>(n * 2 * kMs));
  m = MedianStepMs(*ring, 0, last, 1.0);
  REQUIRE(m.has_value());
  CHECK(*m == Approx(2.0));
}

TEST_CASE("Telemetry: the step ring is the writer's, published while it runs") {
  std::atomic<TelemetryStepRing*> slot{nullptr};  // the session's StepState::telemetry in a process
  const std::string path = "telemetry_ring_" + std::to_string(getpid()) + ".jsonl";
  std::remove(path.c_str());
  {
    Telemetry t;
    TelemetryOptions o;
    o.interval_ns = 10 * kS;
    o.path = path;
    o.iterations = [] { return int64_t{0}; };
    o.run_thread = false;
    o.step_slot = &slot;
    REQUIRE(t.Start(o).ok());
    TelemetryStepRing* ring = slot.load();
    REQUIRE(ring != nullptr);
    TelemetryNoteStep(slot.load(), 3, 42);
    CHECK(ring->raw[3].load() == 42);
  }
  CHECK(slot.load() == nullptr);  // unpublished before the ring was freed
  std::remove(path.c_str());
}

TEST_CASE("Telemetry: kernels and memcpy_bytes from the activity totals, at whole-ms edges") {
  const std::string path = "telemetry_activity_" + std::to_string(getpid()) + ".jsonl";
  std::remove(path.c_str());
  Fake fake;
  int64_t now = 100 * kS + 123456;  // not whole ms: interval edges are rounded down
  std::vector<std::pair<uint32_t, int64_t>> takes;
  Telemetry t;
  TelemetryOptions o;
  o.interval_ns = kS;
  o.path = path;
  o.platform = [&fake] { return std::make_unique<FakePlatform>(&fake); };
  o.clock = [&now] { return now; };
  o.activity_start = [](std::string*) { return true; };
  o.activity_take = [&takes](uint32_t device, int64_t end_ns) {
    takes.emplace_back(device, end_ns);
    // Counting stops for good after the first interval (CUPTI could not resume it).
    return TelemetryActivity{10 + device, 1000 * (device + 1), 1999 * kMs / 2, takes.size() <= 2};
  };
  o.run_thread = false;
  REQUIRE(t.Start(o).ok());
  // GPU 0 is PM-sampled (gpu_busy from gr__cycles_active); GPU 1 is not (from the records).
  fake.pending[0] = {S(100 * kS, 1999 * kMs, {90, 80, 40, 0, 0})};
  now = 101 * kS + 999 * kMs + 999;
  t.Tick(now);
  REQUIRE(takes.size() == 2);
  CHECK(takes[0] == std::make_pair(0u, 101 * kS + 999 * kMs));
  CHECK(takes[1] == std::make_pair(1u, 101 * kS + 999 * kMs));
  const auto lines = ReadLines(path);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].rfind("{\"schema_version\":3,\"ts_ns\":101999000000,", 0) == 0);
  CHECK(lines[0].find("\"interval_ns\":1999000000,") != std::string::npos);  // 100.000 s .. 101.999 s
  CHECK(lines[0].find("\"kernels\":10,\"memcpy_bytes\":1000,") != std::string::npos);
  CHECK(lines[1].find("\"kernels\":11,\"memcpy_bytes\":2000,") != std::string::npos);
  CHECK(lines[0].find("\"gpu_busy_pct\":90,") != std::string::npos);
  CHECK(lines[1].find("\"gpu_busy_pct\":50,\"sm_active_pct\":null,") != std::string::npos);
  // Process exit: the partial interval since the last edge gets its lines, once.
  now += 500 * kMs;
  t.Finish();
  t.Finish();
  const auto all = ReadLines(path);
  REQUIRE(all.size() == 4);
  CHECK(all[2].rfind("{\"schema_version\":3,\"ts_ns\":102499000000,", 0) == 0);
  CHECK(all[2].find("\"interval_ns\":500000000,") != std::string::npos);
  CHECK(all[2].find("\"kernels\":null,\"memcpy_bytes\":null,") != std::string::npos);
  CHECK(takes.size() == 4);
  std::remove(path.c_str());
}

TEST_CASE("Telemetry: no activity totals when CUPTI refuses them: null, one warning") {
  const std::string path = "telemetry_noact_" + std::to_string(getpid()) + ".jsonl";
  std::remove(path.c_str());
  int64_t now = 100 * kS;
  bool taken = false;
  Telemetry t;
  TelemetryOptions o;
  o.interval_ns = kS;
  o.path = path;
  o.clock = [&now] { return now; };
  o.activity_start = [](std::string* why) {
    *why = "no CUPTI";
    return false;
  };
  o.activity_take = [&taken](uint32_t, int64_t) {
    taken = true;
    return TelemetryActivity{};
  };
  o.run_thread = false;
  REQUIRE(t.Start(o).ok());
  now += kS;
  t.Tick(now);
  CHECK_FALSE(taken);
  const auto lines = ReadLines(path);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("\"kernels\":null,\"memcpy_bytes\":null,") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("Telemetry waits for a training process: no file, no samplers until ready") {
  // A launcher or shell tool under LD_PRELOAD is never ready: it must leave no file (a script
  // of 50 commands left 52 files and 52 warnings).
  const std::string path = "telemetry_ready_" + std::to_string(getpid()) + ".jsonl";
  std::remove(path.c_str());
  Fake fake;
  int64_t now = 100 * kS;
  bool ready = false;
  int platforms = 0;
  Telemetry t;
  TelemetryOptions o;
  o.interval_ns = 10 * kS;
  o.path = path;
  o.platform = [&] {
    ++platforms;
    return std::make_unique<FakePlatform>(&fake);
  };
  o.clock = [&now] { return now; };
  o.ready = [&ready] { return ready; };
  o.run_thread = false;
  REQUIRE(t.Start(o).ok());
  CHECK(t.running());
  now = 110 * kS;
  t.Tick(now);
  CHECK(access(path.c_str(), F_OK) != 0);
  CHECK(platforms == 0);
  CHECK(fake.running == 0);
  // It steps (or loads CUDA, or joins NCCL): the next tick begins, the interval after it
  // writes its lines, measured from the beginning.
  ready = true;
  now = 115 * kS;
  t.Tick(now);
  CHECK(platforms == 1);
  CHECK(fake.running == 2);
  CHECK(ReadLines(path).empty());
  now = 125 * kS;
  t.Tick(now);
  const auto lines = ReadLines(path);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].find("\"ts_ns\":125000000000,") != std::string::npos);
  CHECK(lines[0].find("\"interval_ns\":10000000000,") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("Telemetry that never became ready writes nothing at exit") {
  const std::string path = "telemetry_never_" + std::to_string(getpid()) + ".jsonl";
  std::remove(path.c_str());
  Telemetry t;
  TelemetryOptions o;
  o.interval_ns = kS;
  o.path = path;
  o.ready = [] { return false; };
  REQUIRE(t.Start(o).ok());  // with its thread: it looks again every 200 ms
  t.Finish();
  CHECK(access(path.c_str(), F_OK) != 0);
}

TEST_CASE("Telemetry: an unwritable file is one error and no thread") {
  Telemetry t;
  TelemetryOptions o;
  o.interval_ns = kS;
  o.path = "/nonexistent-dir/x.jsonl";
  o.run_thread = false;
  absl::Status s = t.Start(o);
  CHECK(std::string(s.message()) ==
        "telemetry: cannot open '/nonexistent-dir/x.jsonl': No such file or directory; telemetry off");
  CHECK_FALSE(t.running());
}

TEST_CASE("Telemetry: a symlink or FIFO at the file's name is refused, not followed or blocked on") {
  const testing::TempDir temp("kairos-telemetry-");
  const std::string& dir = temp.path();
  // A symlink planted at the (predictable) name: O_NOFOLLOW, the target is never created.
  REQUIRE(symlink((dir + "/victim").c_str(), (dir + "/t.jsonl").c_str()) == 0);
  Telemetry t;
  TelemetryOptions o;
  o.interval_ns = kS;
  o.path = dir + "/t.jsonl";
  o.run_thread = false;
  absl::Status s = t.Start(o);
  CHECK(std::string(s.message()) == "telemetry: '" + dir + "/t.jsonl' is not a regular file; telemetry off");
  CHECK(access((dir + "/victim").c_str(), F_OK) != 0);
  CHECK_FALSE(t.running());
  // A FIFO with a reader (so a plain open would succeed): refused as not a regular file.
  REQUIRE(mkfifo((dir + "/f.jsonl").c_str(), 0600) == 0);
  const int reader = open((dir + "/f.jsonl").c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(reader >= 0);
  Telemetry t2;
  o.path = dir + "/f.jsonl";
  s = t2.Start(o);
  CHECK(std::string(s.message()) == "telemetry: '" + dir + "/f.jsonl' is not a regular file; telemetry off");
  CHECK_FALSE(t2.running());
  close(reader);
}

TEST_CASE("Telemetry: device memory per GPU at each edge, null where no context, none at exit") {
  const std::string path = "telemetry_memory_" + std::to_string(getpid()) + ".jsonl";
  std::remove(path.c_str());
  Fake fake;
  int64_t now = 100 * kS;
  int queries = 0;
  // GPU 1 has the process's primary context, GPU 0 does not (QueryMemoryInUse lists only
  // GPUs with one); a device the platform does not list is ignored.
  std::vector<MemoryBaseline> memory = {{1, 3u << 20, 80ull << 30}, {7, 1, 2}};
  Telemetry t;
  TelemetryOptions o;
  o.interval_ns = kS;
  o.path = path;
  o.platform = [&fake] { return std::make_unique<FakePlatform>(&fake); };
  o.clock = [&now] { return now; };
  o.device_memory = [&] {
    ++queries;
    return memory;
  };
  o.run_thread = false;
  REQUIRE(t.Start(o).ok());
  CHECK(queries == 0);  // read at interval edges only
  now = 101 * kS;
  t.Tick(now);
  CHECK(queries == 1);  // once per interval, for every GPU
  memory = {{0, 5, 10}, {1, (3u << 20) + 4096, 80ull << 30}};
  now = 102 * kS;
  t.Tick(now);
  CHECK(queries == 2);
  now += 300 * kMs;
  t.Finish();
  CHECK(queries == 2);  // the exit line does not call the driver
  const auto lines = ReadLines(path);
  REQUIRE(lines.size() == 6);
  const std::string none = "\"gpu_memory_used_bytes\":null,\"gpu_memory_total_bytes\":null}";
  auto ends_with = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  CHECK(lines[0].find("\"device\":0,") != std::string::npos);
  CHECK(ends_with(lines[0], none));
  CHECK(ends_with(lines[1], "\"gpu_memory_used_bytes\":3145728,\"gpu_memory_total_bytes\":85899345920}"));
  CHECK(ends_with(lines[2], "\"gpu_memory_used_bytes\":5,\"gpu_memory_total_bytes\":10}"));
  CHECK(ends_with(lines[3], "\"gpu_memory_used_bytes\":3149824,\"gpu_memory_total_bytes\":85899345920}"));
  CHECK(lines[4].find("\"interval_ns\":300000000,") != std::string::npos);
  CHECK(ends_with(lines[4], none));
  CHECK(ends_with(lines[5], none));
  std::remove(path.c_str());
}
}  // namespace
}  // namespace kairos
