// File: host_sampler_test.cc
// Layer: tests for kairos_counters. The sampler driven by an injected clock and captured
// /proc text (no sleeping): exact values, exact sample counts for a window and interval,
// warm-up discarding, bounds and the off switch; one smoke run on the real /proc + thread.
// Threading: test thread drives Tick(); the last case runs the real sampling thread.
#include "counters/host_sampler.h"

#include <map>
#include <string>

#include <catch2/catch.hpp>

#include "util/clock.h"
#include "counters/test_data.h"

namespace kairos {
namespace {

using kairos::testing::LoadProcSample;
constexpr int64_t kMs = 1000000;

// Serves snapshot "a" or "b" of each file depending on phase.
class FakeProc : public ProcReader {
 public:
  FakeProc() {
    a_["/proc/stat"] = LoadProcSample("proc_stat_a.txt");
    b_["/proc/stat"] = LoadProcSample("proc_stat_b.txt");
    a_["/proc/meminfo"] = b_["/proc/meminfo"] = LoadProcSample("meminfo.txt");
    a_["/proc/self/stat"] = LoadProcSample("self_stat.txt");
    // 5 more user and 1 more system tick than snapshot a.
    b_["/proc/self/stat"] =
        "6910 (my (odd) proc) R 6904 6904 3011 0 -1 4194304 100 0 0 0 155 51 0 0 20 0 7 0 "
        "46968 3133440 365 18446744073709551615";
    a_["/proc/diskstats"] = b_["/proc/diskstats"] = LoadProcSample("diskstats.txt");
    a_["/proc/net/dev"] = b_["/proc/net/dev"] = LoadProcSample("net_dev.txt");
  }
  bool Read(const std::string& path, std::string* out) override {
    const auto& m = phase == 0 ? a_ : b_;
    auto it = m.find(path);
    if (it == m.end() || missing == path) return false;
    *out = it->second;
    return true;
  }
  int phase = 0;
  std::string missing;

 private:
  std::map<std::string, std::string> a_, b_;
};

struct Harness {
  explicit Harness(size_t max_values = size_t{1} << 20) {
    HostSamplerOptions o;
    o.clock = [this] { return now; };
    o.reader = &proc;
    o.run_thread = false;
    o.max_values = max_values;
    o.ticks_per_second = 100;
    o.page_size = 4096;
    sampler = std::make_unique<HostSampler>(o);
  }
  int64_t now = 1700000000000000000;
  FakeProc proc;
  std::unique_ptr<HostSampler> sampler;
};

std::map<std::string, std::vector<CounterSample>> ByName(const TraceData& d) {
  std::map<std::string, std::vector<CounterSample>> out;
  for (const auto& s : d.counter_samples) out[d.counter_tracks[s.track].name].push_back(s);
  return out;
}

TEST_CASE("HostSampler turns two snapshots into exact rates and gauges") {
  Harness h;
  Config config;
  config.host_metrics_interval_ms = 100;
  REQUIRE(h.sampler->StartWarmup(config).ok());
  h.proc.phase = 1;
  h.now += 100 * kMs;
  const int64_t ws = h.now;
  h.sampler->StartRecording(ws);
  h.sampler->StopRecording(ws);  // the window-start sample already sits at the end
  TraceData data;
  h.sampler->Collect(data);
  REQUIRE(data.counter_tracks.size() == 15);  // 11 fixed + 2 cores x 2
  REQUIRE(data.counter_samples.size() == 15);
  auto by = ByName(data);
  CHECK(by["cpu.util"][0].value == Approx(30.0));
  CHECK(by["cpu.util"][0].ts_ns == ws);
  CHECK(by["cpu.iowait"][0].value == Approx(10.0));
  CHECK(by["cpu.context_switches"][0].value == Approx(5000.0));
  CHECK(by["process.cpu"][0].value == Approx(60.0));  // 6 ticks of 10 ms in 100 ms
  CHECK(by["process.threads"][0].value == 7.0);
  CHECK(by["process.rss"][0].value == 365.0 * 4096);
  CHECK(by["mem.used"][0].value == (24684084.0 - 24324832.0) * 1024);
  CHECK(by["disk.read"][0].value == 0.0);
  CHECK(by["net.tx"][0].value == 0.0);
  CHECK(by["cpu.util.core0"][0].value == Approx(60.0));
  CHECK(by["cpu.iowait.core0"][0].value == Approx(20.0));
  CHECK(by["cpu.util.core1"][0].value == 0.0);
  CHECK(data.counter_tracks[0].unit == "%");
  CHECK(data.counter_tracks[0].group == "Host CPU");
  CHECK(data.stats.at("host_counter_samples") == 15);
}

TEST_CASE("HostSampler keeps one sample per interval inside the window, none from warm-up") {
  Harness h;
  Config config;
  config.host_metrics_interval_ms = 100;
  REQUIRE(h.sampler->StartWarmup(config).ok());
  const int64_t t0 = h.now;
  int warmup_samples = 0;
  for (; h.now < t0 + 250 * kMs; h.now += 10 * kMs) warmup_samples += h.sampler->Tick(h.now);
  CHECK(warmup_samples == 2);  // t0+100, t0+200: taken, then discarded
  const int64_t ws = h.now;
  h.sampler->StartRecording(ws);
  const int64_t we = ws + 1050 * kMs;
  for (; h.now < we; h.now += 10 * kMs) h.sampler->Tick(h.now);
  h.sampler->StopRecording(we);
  TraceData data;
  h.sampler->Collect(data);
  auto by = ByName(data);
  REQUIRE(by.size() == 15);
  // ws, ws+100 ms, ..., ws+1000 ms, and the closing sample at ws+1050 ms.
  for (const auto& [name, samples] : by) {
    INFO(name);
    CHECK(samples.size() == 12);
    CHECK(samples.front().ts_ns == ws);
    CHECK(samples[5].ts_ns == ws + 500 * kMs);
    CHECK(samples.back().ts_ns == we);
  }
  CHECK(data.counter_samples.size() == 180);
  CHECK(data.stats.at("host_counter_samples") == 180);
  CHECK(data.stats.count("host_sampler_missed_ticks") == 0);
}

TEST_CASE("HostSampler counts missed ticks and drops values past its bound") {
  Harness h(/*max_values=*/20);
  Config config;
  config.host_metrics_interval_ms = 100;
  REQUIRE(h.sampler->StartWarmup(config).ok());
  h.now += 100 * kMs;
  h.sampler->StartRecording(h.now);  // 15 values stored
  h.now += 350 * kMs;  // a stalled thread: ticks at +100 and +200 missed, +300 taken late
  CHECK(h.sampler->Tick(h.now));
  CHECK(!h.sampler->Tick(h.now + 10 * kMs));
  h.sampler->StopRecording(h.now);
  TraceData data;
  h.sampler->Collect(data);
  CHECK(data.counter_samples.size() == 20);
  CHECK(data.stats.at("host_counter_samples_dropped") == 10);
  CHECK(data.stats.at("host_sampler_missed_ticks") == 2);
}

TEST_CASE("HostSampler stamps a sample taken just after the window end at the end") {
  Harness h;
  Config config;
  config.host_metrics_interval_ms = 100;
  REQUIRE(h.sampler->StartWarmup(config).ok());
  const int64_t ws = h.now + 100 * kMs;
  h.sampler->StartRecording(ws);
  CHECK(h.sampler->Tick(ws + 100 * kMs));
  CHECK(h.sampler->Tick(ws + 200 * kMs));  // the thread raced past the window end
  CHECK(h.sampler->Tick(ws + 300 * kMs));
  h.sampler->StopRecording(ws + 150 * kMs);
  TraceData data;
  h.sampler->Collect(data);
  auto by = ByName(data);
  REQUIRE(by["cpu.util"].size() == 3);
  CHECK(by["cpu.util"][1].ts_ns == ws + 100 * kMs);
  CHECK(by["cpu.util"][2].ts_ns == ws + 150 * kMs);
  CHECK(data.counter_samples.size() == 45);
}

TEST_CASE("HostSampler: a window shorter than the interval has its true CPU, nothing past its end") {
  Harness h;
  Config config;
  config.host_metrics_interval_ms = 100;
  REQUIRE(h.sampler->StartWarmup(config).ok());
  h.now += 1 * kMs;  // a short warm-up: no clock tick elapsed before the window opens
  const int64_t ws = h.now;
  h.sampler->StartRecording(ws);
  h.proc.phase = 1;
  // The window was asked to close at ws + 40 ms; the sampler hears of it 10 ms later.
  h.sampler->StopRecording(ws + 50 * kMs);
  TraceData data;
  data.window_start_ns = ws;
  data.window_end_ns = ws + 40 * kMs;
  h.sampler->Collect(data);
  auto by = ByName(data);
  // Not a 0% sample at the window start (no tick elapsed), but the window's own interval.
  REQUIRE(by["cpu.util"].size() == 1);
  CHECK(by["cpu.util"][0].ts_ns == data.window_end_ns);
  CHECK(by["cpu.util"][0].value == Approx(30.0));
  REQUIRE(by["process.cpu"].size() == 1);
  CHECK(by["process.cpu"][0].value > 0.0);
  for (const CounterSample& c : data.counter_samples) {
    CHECK(c.ts_ns >= data.window_start_ns);
    CHECK(c.ts_ns <= data.window_end_ns);
  }
}

TEST_CASE("HostSampler is off at interval 0 and sits out without /proc/stat") {
  Harness h;
  Config config;
  config.host_metrics_interval_ms = 0;
  REQUIRE(h.sampler->StartWarmup(config).ok());
  h.sampler->StartRecording(h.now);
  CHECK(!h.sampler->Tick(h.now + 500 * kMs));
  h.sampler->StopRecording(h.now + 500 * kMs);
  TraceData data;
  h.sampler->Collect(data);
  CHECK(data.counter_tracks.empty());
  CHECK(data.counter_samples.empty());

  Harness broken;
  broken.proc.missing = "/proc/stat";
  config.host_metrics_interval_ms = 100;
  auto st = broken.sampler->StartWarmup(config);
  CHECK(st.code() == absl::StatusCode::kUnavailable);
  CHECK(st.message() == "host metrics: cannot read /proc/stat; host counters off");
}

TEST_CASE("HostSampler merges its samples into counters other sources added") {
  Harness h;
  Config config;
  config.host_metrics_interval_ms = 100;
  REQUIRE(h.sampler->StartWarmup(config).ok());
  const int64_t ws = h.now + 100 * kMs;
  h.sampler->StartRecording(ws);
  h.sampler->StopRecording(ws + 50 * kMs);
  TraceData data;
  data.counter_tracks.push_back({"gpu.power", "W", "GPU"});
  data.counter_samples.push_back({ws + 10 * kMs, 250.0, 0});
  h.sampler->Collect(data);
  REQUIRE(data.counter_samples.size() == 31);
  for (size_t i = 1; i < data.counter_samples.size(); ++i) {
    CHECK(data.counter_samples[i - 1].ts_ns <= data.counter_samples[i].ts_ns);
  }
  CHECK(data.counter_samples[15].track == 0);  // between the two host samples
}

TEST_CASE("HostSampler runs its own thread against the real /proc") {
  HostSampler sampler;
  Config config;
  config.host_metrics_interval_ms = 1;
  REQUIRE(sampler.StartWarmup(config).ok());
  const int64_t ws = UnixNowNs();
  sampler.StartRecording(ws);
  const int64_t we = UnixNowNs() + 1;
  sampler.StopRecording(we);
  TraceData data;
  sampler.Collect(data);
  auto by = ByName(data);
  // The window is far shorter than one clock tick: utilisation appears only if the interval
  // before the window-start sample spanned a tick (a slow warm-up on a loaded machine); the
  // exact rule is tested with the fake clock above.
  for (const auto& s : by["cpu.util"]) {
    CHECK(s.value >= 0.0);
    CHECK(s.value <= 100.0);
  }
  for (const CounterSample& s : data.counter_samples) {
    CHECK(s.ts_ns >= ws);
    CHECK(s.ts_ns <= we);
  }
  REQUIRE(by.count("process.threads") == 1);
  CHECK(by["process.threads"].front().value >= 2.0);  // this thread and the sampler's
  sampler.Reset();
}

}  // namespace
}  // namespace kairos
