// File: activity_sim_test.cc
// Layer: test (kairos_activity) on the CUDA/CUPTI simulator. An nvcc-built workload runs
// against the substitute libcudart/libcupti (LD_LIBRARY_PATH, set by ctest) while the "cuda"
// TraceSource records it; the counts are what the program launched inside the window.
// Fault knobs of the simulator are set per ctest entry (see CMakeLists.txt), one tag each.
// Threading: single test thread; CUPTI's worker delivers buffers concurrently.
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <algorithm>
#include <string>

#include <catch2/catch.hpp>

#include "activity/cupti_source.h"
#include "util/clock.h"

extern "C" int ActLaunch(float* x, int n, cudaStream_t stream);
extern "C" int ActGraph(float* x, int n, int nodes, cudaStream_t stream);

namespace kairos::internal {
namespace {

uint32_t g_range = 0;
uint32_t CurrentRange() { return g_range; }

struct Counts {
  size_t kernels = 0, memcpys = 0, memsets = 0, launches = 0, launch_flow_out = 0;
  size_t kernel_flow_in = 0, kernels_in_range = 0, calls_in_range = 0, graph_kernels = 0;
  size_t graph_flow_in = 0;
};

Counts Count(const TraceData& d) {
  Counts c;
  uint32_t graph_corr = 0;
  for (const auto& track : d.events_by_track) {
    for (const Event& e : track) {
      if (e.kind == EventKind::kRuntime && d.strings.Get(e.name) == "cudaGraphLaunch") {
        graph_corr = e.correlation;
      }
    }
  }
  for (const auto& track : d.events_by_track) {
    for (const Event& e : track) {
      switch (e.kind) {
        case EventKind::kKernel:
          ++c.kernels;
          c.kernel_flow_in += (e.flags & kFlagFlowIn) != 0;
          c.kernels_in_range += e.external_id == 77;
          if (d.kernels[e.detail].graph_id != 0) {
            ++c.graph_kernels;
            c.graph_flow_in += e.correlation == graph_corr && (e.flags & kFlagFlowIn) != 0;
          }
          break;
        case EventKind::kMemcpy: ++c.memcpys; break;
        case EventKind::kMemset: ++c.memsets; break;
        case EventKind::kRuntime:
          if (d.strings.Get(e.name) == "cudaLaunchKernel") {
            ++c.launches;
            c.launch_flow_out += (e.flags & kFlagFlowOut) != 0;
            c.calls_in_range += e.external_id == 77;
          }
          break;
        default: break;
      }
    }
  }
  return c;
}

uint64_t Stat(const TraceData& d, const char* key) {
  auto it = d.stats.find(key);
  return it == d.stats.end() ? ~0ull : it->second;
}

std::string Meta(const TraceData& d, const std::string& key) {
  for (const auto& [k, v] : d.metadata) {
    if (k == key) return v;
  }
  return "<absent>";
}

CuptiSourceOptions Options() {
  CuptiSourceOptions o;  // library "" = the libcupti the process has (the simulator's)
  o.buffer_size = 64 << 10;
  o.buffer_count = 8;
  o.current_range_id = CurrentRange;
  return o;
}

constexpr int kN = 1 << 12;

// The workload: 4 launches inside CPU range 77, 6 outside, 2 copies, 1 memset, and a
// 3-kernel graph launched once. Returns false if the device stopped.
bool Workload(float* d, float* h, cudaStream_t s) {
  bool ok = true;
  ok &= cudaMemcpyAsync(d, h, kN * sizeof(float), cudaMemcpyHostToDevice, s) == cudaSuccess;
  ok &= cudaMemsetAsync(d, 0, kN * sizeof(float), s) == cudaSuccess;
  g_range = 77;
  for (int i = 0; i < 4; ++i) ok &= ActLaunch(d, kN, s) == 0;
  g_range = 0;
  for (int i = 0; i < 6; ++i) ok &= ActLaunch(d, kN, s) == 0;
  ok &= ActGraph(d, kN, 3, s) == 0;
  ok &= cudaMemcpyAsync(h, d, kN * sizeof(float), cudaMemcpyDeviceToHost, s) == cudaSuccess;
  ok &= cudaStreamSynchronize(s) == cudaSuccess;
  return ok;
}

TraceData RunSession(CuptiSource& source, bool* workload_ok) {
  float* d = nullptr;
  float* h = nullptr;
  cudaStream_t s = nullptr;
  cudaMalloc(reinterpret_cast<void**>(&d), kN * sizeof(float));
  cudaMallocHost(reinterpret_cast<void**>(&h), kN * sizeof(float));
  cudaStreamCreate(&s);
  REQUIRE(source.StartWarmup(Config()).ok());
  for (int i = 0; i < 3; ++i) ActLaunch(d, kN, s);  // warm-up work: discarded
  cudaStreamSynchronize(s);
  source.StartRecording(UnixNowNs());
  *workload_ok = Workload(d, h, s);
  // The window closes 1 ms after the workload returned: the simulator maps GPU times into
  // the CUPTI timebase with a fitted line (tens of ns off), and work finished before the
  // window's end must count.
  source.StopRecording(UnixNowNs() + 1000000);
  TraceData data;
  data.pid = 1;
  source.Collect(data);
  source.Reset();
  return data;
}

TEST_CASE("sim: counts equal what the program launched in the window", "[sim][reorder]") {
  CuptiSource source(Options());
  bool ok = false;
  TraceData data = RunSession(source, &ok);
  REQUIRE(ok);
  REQUIRE(source.missing_reason().empty());
  const Counts c = Count(data);
  CHECK(c.kernels == 13);
  CHECK(c.launches == 13);          // incl. the 3 captured into the graph (no GPU work)
  CHECK(c.launch_flow_out == 10);
  CHECK(c.kernel_flow_in == 13);       // 10 launches + 3 graph nodes via cudaGraphLaunch
  CHECK(c.kernels_in_range == 4);
  CHECK(c.calls_in_range == 4);
  CHECK(c.graph_kernels == 3);
  CHECK(c.graph_flow_in == 3);
  CHECK(c.memcpys == 2);
  CHECK(c.memsets == 1);
  CHECK(Stat(data, "cupti_uncorrelated") == 0);
  CHECK(Stat(data, "cupti_dropped") == 0);
  CHECK(Stat(data, "cupti_buffers_refused") == 0);
  REQUIRE(data.devices.size() == 1);
  CHECK(data.devices[0].num_sms > 0);
}

TEST_CASE("sim: another subscriber", "[.subscriber]") {
  CuptiSource source(Options());
  bool ok = false;
  TraceData data = RunSession(source, &ok);
  CHECK(ok);
  const std::string reason =
      "another CUPTI subscriber is active (CUPTI for nsys); GPU activity disabled, CPU trace "
      "continues";
  CHECK(source.missing_reason() == reason);
  CHECK(Meta(data, "gpu_data_missing_reason") == reason);
  CHECK(data.EventCount() == 0);
}

TEST_CASE("sim: a failing CUPTI call", "[.fail]") {
  CuptiSource source(Options());
  bool ok = false;
  TraceData data = RunSession(source, &ok);
  CHECK(ok);
  const std::string reason =
      "CUPTI cuptiActivityEnable(CONCURRENT_KERNEL) failed: CUPTI_ERROR_UNKNOWN (999) (no "
      "NVIDIA driver or GPU?); GPU activity disabled, CPU trace continues";
  CHECK(source.missing_reason() == reason);
  CHECK(Meta(data, "gpu_data_missing_reason") == reason);
  CHECK(data.EventCount() == 0);
}

TEST_CASE("sim: withheld buffers are counted as drops", "[.withhold]") {
  CuptiSource source(Options());
  bool ok = false;
  TraceData data = RunSession(source, &ok);
  CHECK(ok);
  CHECK(source.missing_reason().empty());
  CHECK(data.EventCount() == 0);
  // Every record of the window was dropped by CUPTI; the count is in the stats.
  const uint64_t dropped = Stat(data, "cupti_dropped");
  INFO("dropped " << dropped);
  CHECK(dropped >= 13 + 2 + 1 + 10);
  const std::string said = "cuda: GPU records lost: " + std::to_string(dropped) +
                           " dropped by CUPTI, 0 buffers refused, 0 over the event store; raise "
                           "ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB (cupti_dropped, "
                           "cupti_buffers_refused, cupti_event_store_full)";
  CHECK(std::count(data.warnings.begin(), data.warnings.end(), said) == 1);
}

TEST_CASE("sim: the device stops mid-window", "[.stop]") {
  CuptiSource source(Options());
  bool ok = true;
  TraceData data = RunSession(source, &ok);
  CHECK_FALSE(ok);
  // Whatever ran before the device stopped is in the trace; the failing launches are still
  // recorded as calls (with no GPU work); nothing crashes or hangs.
  const Counts c = Count(data);
  CHECK(c.launches <= 13);
  CHECK(c.kernels <= c.launches);
  CHECK(c.kernel_flow_in == c.kernels);
  CHECK(Stat(data, "cupti_uncorrelated") == 0);
}

}  // namespace
}  // namespace kairos::internal
