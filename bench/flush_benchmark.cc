// File: flush_benchmark.cc
// Layer: benchmark. Stop+write of a 200k-kernel window (issue 18 item 2): kairos' flush path
// against a libkineto-like baseline doing the same work on the same CUPTI buffers, in the
// same run. Results: docs/PERFORMANCE.md ("Flush"). Usage: flush_benchmark [launches
// (default 200000)] [dir (default /tmp)] [kairos|baseline (one side only, for perf record)].
//
// The work, from records already in memory to a closed JSON file:
//   kairos    CuptiConverter::ConvertBuffer over every buffer, DropAfter, the API-callback
//             links (AddExternal), MergeIntoTraceData (correlation, flows, tracks),
//             SortTracks, EmitSummary (the analysis), WriteTraceFile (JSON, summary inside
//             the trace and next to it) — what AssembleAndWrite + CuptiSource::Collect do.
//   baseline  what libkineto's CuptiActivityProfiler does at stop (processTraceInternal):
//             logs each CPU op (GenericTraceActivity-like objects holding std::string
//             names and a metadata map) and maps correlation -> CPU op; walks each buffer
//             record by record through an out-of-line next-record call; per record builds a
//             heap-allocated activity wrapper, looks up the linked CPU op through two
//             unordered_maps, records the (device, stream) resource, and formats the Chrome
//             JSON of the event (kernel names demangled with abi::__cxa_demangle for each
//             event, as GpuActivity<Kernel>::name() does; kernel occupancy computed per
//             event; ac2g flow start/end events) into an std::ofstream; then the trace
//             metadata. No sort and no summary (libkineto does neither).
// Both sides start from the same in-memory records: the CUPTI buffers (per launch one 40 B
// runtime record, one 216 B kernel record; every 8th launch one 96 B memcpy) and one
// cpu_op per launch (kairos: Events in TraceData; baseline: activity objects), and end with
// the file closed. Time is per-thread CPU time (the build machine is shared by many agents;
// wall time is printed too) and the best of `kReps` repetitions. The ".2t.json" row passes the
// JSON's bytes to write(2) on a second thread, kairos-write: its CPU time is counted (process
// CPU time); wall time shows what the second core buys.
// Threading: the benchmark's thread, plus kairos-write inside the ".2t.json" flushes.
#include <cxxabi.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#if defined(KAIROS_HAVE_CUPTI)
#include "activity/correlation.h"
#include "activity/cupti_convert.h"
#include "analysis/emit_summary.h"
#include "bench_clock.h"
#include "bench_headline.h"
#include "cupti_bench_buffers.h"
#include "output/output_options.h"
#include "output/writer.h"
#include "model/trace_data.h"

namespace {

constexpr int64_t kT0 = 1'790'000'000'000'000'000LL;
constexpr int64_t kPid = 4242;
constexpr int kReps = 3;
// Mangled names as PyTorch's kernels have them (all valid manglings; the demangled forms are
// 70-170 characters).
const char* kKernelNames[4] = {
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_",
    "_Z6matmulPfS_S_i", "_ZN7cutlass6KernelINS_4gemm6kernel4GemmIfEEEEvNT_6ParamsE",
    "_ZN2at6native12_GLOBAL__N_120softmax_warp_forwardIfffLi10ELb0ELb0EEEvPT0_PKT_iiiPKbib"};
const char* kOpNames[4] = {"aten::fill_", "aten::mm", "aten::addmm", "aten::softmax"};

long ProcStatusKb(const char* key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) return atol(line.c_str() + strlen(key));
  return -1;
}

CUptiResult Name(CUpti_CallbackDomain, uint32_t, const char** name) {
  *name = "cudaLaunchKernel";
  return CUPTI_SUCCESS;
}

struct Buffers {
  std::vector<std::vector<uint64_t>> storage;
  std::vector<size_t> valid;
  size_t launches = 0;
};

// Launch i: cpu_op [t, t+4000) on the main thread, its cudaLaunchKernel [t+500, t+3500),
// the kernel at t+5000 on stream 7 + i % 4; launch i runs at t = kT0 + 10 us * i.
Buffers Fill(size_t launches) {
  constexpr size_t kBufferBytes = 4u << 20;
  Buffers b;
  b.launches = launches;
  size_t off = kBufferBytes, records = 0;
  uint8_t* base = nullptr;
  for (uint32_t i = 0; i < launches; ++i) {
    const uint32_t corr = i + 1;
    const uint64_t t = static_cast<uint64_t>(kT0) + uint64_t{i} * 10000;
    kairos::bench::LaunchRecords r = kairos::bench::BaseLaunch(corr);
    r.api.start = t + 500;
    r.api.end = t + 3500;
    r.api.processId = kPid;
    r.api.threadId = kPid;
    r.kernel.start = t + 5000;
    r.kernel.end = t + 9000 + (i % 13) * 7;
    r.kernel.deviceId = 0;
    r.kernel.streamId = 7 + i % 4;
    r.kernel.gridX = 128u << (i % 3);
    r.kernel.staticSharedMemory = 1024;
    r.kernel.name = kKernelNames[i % 4];
    r.memcpy.start = t + 9500;
    r.memcpy.end = t + 9900;
    r.memcpy.deviceId = 0;
    r.memcpy.correlationId = corr;
    if (base == nullptr || !kairos::bench::AppendLaunch(r, base, kBufferBytes, &off, &records)) {
      if (base) b.valid.push_back(off);
      b.storage.emplace_back(kBufferBytes / 8, 0);
      base = reinterpret_cast<uint8_t*>(b.storage.back().data());
      off = 0;
      kairos::bench::AppendLaunch(r, base, kBufferBytes, &off, &records);
    }
  }
  if (base) b.valid.push_back(off);
  return b;
}

kairos::DeviceInfo Device() {
  kairos::DeviceInfo d;
  d.id = 0;
  d.name = "NVIDIA H100 80GB HBM3";
  d.total_global_mem = 85ull << 30;
  d.compute_major = 9;
  d.num_sms = 132;
  d.warp_size = 32;
  d.max_threads_per_block = 1024;
  d.max_threads_per_multiprocessor = 2048;
  d.regs_per_block = 65536;
  d.regs_per_multiprocessor = 65536;
  d.shared_mem_per_block = 49152;
  d.shared_mem_per_multiprocessor = 233472;
  d.shared_mem_per_block_optin = 232448;
  d.max_blocks_per_multiprocessor = 32;
  return d;
}

// The CPU side as the CPU source's Collect leaves it: one track, one cpu_op per launch
// (External id = launch index + 1), a ProfilerStep range every 100 launches.
kairos::TraceData CpuData(size_t launches) {
  using namespace kairos;
  TraceData d;
  d.pid = kPid;
  d.process_name = "python";
  d.host_name = "node-1";
  d.window_start_ns = kT0;
  d.window_end_ns = kT0 + int64_t(launches) * 10000 + 100000;
  d.devices.push_back(Device());
  uint32_t t = d.AddTrack({TrackType::kThread, kPid, kPid, 0, 0, "python"});
  StringId ops[4];
  for (int i = 0; i < 4; ++i) ops[i] = d.strings.Intern(kOpNames[i]);
  StringId step = d.strings.Intern("ProfilerStep#");
  d.events_by_track[t].reserve(launches + launches / 100 + 1);
  for (uint32_t i = 0; i < launches; ++i) {
    const int64_t ts = kT0 + int64_t(i) * 10000;
    if (i % 100 == 0)
      d.events_by_track[t].push_back(
          {ts, ts + 100 * 10000 - 100, step, t, 0, 0, kNoDetail, EventKind::kUserAnnotation, 0, 0});
    d.events_by_track[t].push_back({ts + 50, ts + 4000, ops[i % 4], t, 0, i + 1, kNoDetail, EventKind::kCpuOp, 0, 0});
  }
  return d;
}

// cpu: CPU time of every thread of the process (the kairos JSON flush hands write(2) and
// compression to kairos-write, pipelined_sink.h; the baseline is one thread, so there it
// equals its thread's time); thread_cpu: the flushing thread's alone.
struct Timing {
  double cpu = 0, wall = 0;
  size_t bytes = 0;
  double thread_cpu = 0;
};

size_t FileSize(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  return f ? static_cast<size_t>(f.tellg()) : 0;
}

// ---- kairos ----
Timing RunKairos(const Buffers& b, const std::string& path, size_t* events, long* peak_kb,
                 long* held_kb, bool write_thread = false) {
  using namespace kairos;
  const long rss_start = ProcStatusKb("VmRSS:");
  TraceData data = CpuData(b.launches);
  internal::CuptiConverter c(Name, b.launches * 3);
  c.SetWindow(0, INT64_MAX);
  std::ofstream("/proc/self/clear_refs") << "5";  // VmHWM := current RSS
  const long rss0 = ProcStatusKb("VmRSS:");
  *held_kb = rss0 - rss_start;  // what the window's CPU ops hold before the flush
  auto w0 = std::chrono::steady_clock::now();
  const double pc0 = kairos::bench::ProcessCpuSeconds();
  const double c0 = kairos::bench::ThreadCpuSeconds();
  for (size_t i = 0; i < b.storage.size(); ++i)
    c.ConvertBuffer(reinterpret_cast<const uint8_t*>(b.storage[i].data()), b.valid[i]);
  const double p_convert = kairos::bench::ThreadCpuSeconds();
  c.DropAfter(data.window_end_ns);
  for (uint32_t i = 0; i < b.launches; ++i) c.AddExternal(i + 1, i + 1);
  internal::MergeIntoTraceData(c, data);
  const double p_merge = kairos::bench::ThreadCpuSeconds();
  data.SortTracks();
  data.base_time_ns = kT0;
  const double p_sort = kairos::bench::ThreadCpuSeconds();
  OutputOptions out;
  out.path = path;
  out.write_thread = write_thread;
  EmitOptions eo;
  out.summary_json = EmitSummary(data, eo);
  data.metadata_json.emplace_back("kairos_summary", out.summary_json);
  const double p_summary = kairos::bench::ThreadCpuSeconds();
  const double pw0 = kairos::bench::ProcessCpuSeconds();
  const auto ww0 = std::chrono::steady_clock::now();
  absl::Status st = WriteTraceFile(data, out);
  const double c1 = kairos::bench::ThreadCpuSeconds();
  const double pc1 = kairos::bench::ProcessCpuSeconds();
  auto w1 = std::chrono::steady_clock::now();
  std::printf("  kairos phases (ms CPU): convert %.1f, correlate+merge %.1f, sort %.1f, summary %.1f, "
              "write %.1f (this thread; all threads %.1f, wall %.1f)\n", (p_convert - c0) * 1e3,
              (p_merge - p_convert) * 1e3, (p_sort - p_merge) * 1e3, (p_summary - p_sort) * 1e3,
              (c1 - p_summary) * 1e3, (pc1 - pw0) * 1e3,
              std::chrono::duration<double>(w1 - ww0).count() * 1e3);
  if (!st.ok()) fprintf(stderr, "kairos write failed: %s\n", std::string(st.message()).c_str());
  *events = data.EventCount();
  *peak_kb = ProcStatusKb("VmHWM:") - rss0;
  return {pc1 - pc0, std::chrono::duration<double>(w1 - w0).count(), FileSize(path), c1 - c0};
}

// ---- libkineto-like baseline ----
namespace kineto_like {

// GenericTraceActivity: what PyTorch hands libkineto for each CPU op.
struct CpuActivity {
  int64_t start_us_ns, end_ns;
  int64_t id;
  int64_t tid;
  std::string name;
  std::unordered_map<std::string, std::string> metadata;
};

// The per-record wrapper libkineto allocates (RuntimeActivity / GpuActivity<T>).
struct Wrapper {
  virtual ~Wrapper() = default;
  const void* raw;
  const CpuActivity* linked;
  Wrapper(const void* r, const CpuActivity* l) : raw(r), linked(l) {}
};

// cuptiActivityGetNextRecord: an out-of-line call per record.
__attribute__((noinline)) const uint8_t* NextRecord(const uint8_t* buf, size_t valid, size_t* off) {
  if (*off >= valid) return nullptr;
  const auto* rec = reinterpret_cast<const CUpti_Activity*>(buf + *off);
  size_t size = 0;
  switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_RUNTIME: size = sizeof(CUpti_ActivityAPI); break;
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: size = sizeof(CUpti_ActivityKernel10); break;
    case CUPTI_ACTIVITY_KIND_MEMCPY: size = sizeof(CUpti_ActivityMemcpy6); break;
    default: return nullptr;
  }
  const uint8_t* r = buf + *off;
  *off += size;
  return r;
}

std::string Demangle(const char* name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || d == nullptr) return name;
  std::string s(d);
  std::free(d);
  return s;
}

// Appends like fmt::format("{}", v) into the event text.
struct Text {
  std::string s;
  Text& operator<<(std::string_view v) {
    s.append(v);
    return *this;
  }
  Text& operator<<(int64_t v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof(buf), v);
    s.append(buf, r.ptr);
    return *this;
  }
  Text& operator<<(double v) {
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof(buf), v);
    s.append(buf, r.ptr);
    return *this;
  }
  // libkineto's ts/dur: microseconds with a 3-digit ns fraction.
  Text& Us(int64_t ns) {
    *this << ns / 1000;
    char f[4] = {'.', char('0' + ns % 1000 / 100), char('0' + ns % 100 / 10), char('0' + ns % 10)};
    s.append(f, 4);
    return *this;
  }
};

struct Profiler {
  std::ofstream out;
  std::unordered_map<int64_t, const CpuActivity*> activity_map;  // external id -> CPU op
  std::unordered_map<int64_t, int64_t> cpu_correlation_map;      // correlation -> external id
  std::vector<std::unique_ptr<Wrapper>> wrappers;
  std::map<std::pair<int64_t, int64_t>, std::string> resources;  // (device, stream) -> name
  kairos::DeviceInfo dev = Device();

  void Event(const char* ph, const char* cat, std::string_view name, int64_t pid, int64_t tid,
             int64_t ts, int64_t dur, const std::string& args) {
    Text t;
    t << "\n  {\n    \"ph\": \"" << std::string_view(ph) << "\", \"cat\": \"" << std::string_view(cat)
      << "\", \"name\": \"" << name << "\", \"pid\": " << pid << ", \"tid\": " << tid
      << ",\n    \"ts\": ";
    t.Us(ts - kT0);
    t << ", \"dur\": ";
    t.Us(dur);
    t << ",\n    \"args\": {\n" << std::string_view(args) << "\n    }\n  },";
    out << t.s;
  }
  void Flow(const char* ph, int64_t id, int64_t pid, int64_t tid, int64_t ts) {
    Text t;
    t << "\n  {\n    \"ph\": \"" << std::string_view(ph) << "\", \"id\": " << id
      << ", \"pid\": " << pid << ", \"tid\": " << tid << ", \"ts\": ";
    t.Us(ts - kT0);
    t << ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"" << (ph[0] == 'f' ? ", \"bp\": \"e\"" : "") << "\n  },";
    out << t.s;
  }
  const CpuActivity* Linked(int64_t correlation) {
    auto it = cpu_correlation_map.find(correlation);
    if (it == cpu_correlation_map.end()) return nullptr;
    auto a = activity_map.find(it->second);
    return a == activity_map.end() ? nullptr : a->second;
  }
  void Cpu(const CpuActivity& a) {
    activity_map[a.id] = &a;
    std::string args;
    for (const auto& [k, v] : a.metadata) {
      if (!args.empty()) args += ",\n";
      args += "      \"" + k + "\": " + v;
    }
    Event("X", "cpu_op", a.name, kPid, a.tid, a.start_us_ns, a.end_ns - a.start_us_ns, args);
  }
  void Runtime(const CUpti_ActivityAPI& r) {
    const CpuActivity* linked = Linked(r.correlationId);
    wrappers.push_back(std::make_unique<Wrapper>(&r, linked));
    Text args;
    args << "      \"cbid\": " << int64_t{r.cbid} << ", \"correlation\": " << int64_t{r.correlationId};
    if (linked) args << ",\n      \"External id\": " << linked->id;
    Event("X", "cuda_runtime", "cudaLaunchKernel", r.processId, r.threadId, int64_t(r.start),
          int64_t(r.end - r.start), args.s);
    Flow("s", r.correlationId, r.processId, r.threadId, int64_t(r.start));
  }
  void Kernel(const CUpti_ActivityKernel10& k) {
    const CpuActivity* linked = Linked(k.correlationId);
    wrappers.push_back(std::make_unique<Wrapper>(&k, linked));
    resources.try_emplace({k.deviceId, k.streamId}, "stream " + std::to_string(k.streamId));
    const std::string name = Demangle(k.name);
    const double blocks = double(k.gridX) * k.gridY * k.gridZ;
    const int64_t threads = int64_t{k.blockX} * k.blockY * k.blockZ;
    const double warps = blocks * ((threads + dev.warp_size - 1) / dev.warp_size);
    // Occupancy limits: threads, registers, shared memory, blocks per SM.
    int64_t by_threads = dev.max_threads_per_multiprocessor / std::max<int64_t>(threads, 1);
    int64_t by_regs = dev.regs_per_multiprocessor / std::max<int64_t>(int64_t{k.registersPerThread} * threads, 1);
    int64_t smem = int64_t{k.staticSharedMemory} + k.dynamicSharedMemory;
    int64_t by_smem = smem ? int64_t(dev.shared_mem_per_multiprocessor) / smem : 1 << 30;
    int64_t active = std::min({by_threads, by_regs, by_smem, int64_t{dev.max_blocks_per_multiprocessor}});
    double occupancy = 100.0 * double(active * threads) / dev.max_threads_per_multiprocessor;
    Text args;
    args << "      \"queued\": " << int64_t{0} << ", \"device\": " << int64_t{k.deviceId}
         << ", \"context\": " << int64_t{k.contextId} << ",\n      \"stream\": " << int64_t{k.streamId}
         << ", \"correlation\": " << int64_t{k.correlationId};
    if (linked) args << ", \"External id\": " << linked->id;
    args << ",\n      \"registers per thread\": " << int64_t{k.registersPerThread}
         << ",\n      \"shared memory\": " << smem << ",\n      \"blocks per SM\": " << blocks / dev.num_sms
         << ",\n      \"warps per SM\": " << warps / dev.num_sms << ",\n      \"grid\": [" << int64_t{k.gridX}
         << ", " << int64_t{k.gridY} << ", " << int64_t{k.gridZ} << "],\n      \"block\": ["
         << int64_t{k.blockX} << ", " << int64_t{k.blockY} << ", " << int64_t{k.blockZ}
         << "],\n      \"est. achieved occupancy %\": " << int64_t(occupancy);
    Event("X", "kernel", name, k.deviceId, k.streamId, int64_t(k.start), int64_t(k.end - k.start), args.s);
    Flow("f", k.correlationId, k.deviceId, k.streamId, int64_t(k.start));
  }
  void Memcpy(const CUpti_ActivityMemcpy6& m) {
    const CpuActivity* linked = Linked(m.correlationId);
    wrappers.push_back(std::make_unique<Wrapper>(&m, linked));
    resources.try_emplace({m.deviceId, m.streamId}, "stream " + std::to_string(m.streamId));
    std::string name = "Memcpy HtoD (Pageable -> Device)";
    Text args;
    args << "      \"device\": " << int64_t{m.deviceId} << ", \"context\": " << int64_t{m.contextId}
         << ",\n      \"stream\": " << int64_t{m.streamId} << ", \"correlation\": " << int64_t{m.correlationId}
         << ",\n      \"bytes\": " << int64_t(m.bytes) << ", \"memory bandwidth (GB/s)\": "
         << double(m.bytes) / double(std::max<uint64_t>(m.end - m.start, 1));
    Event("X", "gpu_memcpy", name, m.deviceId, m.streamId, int64_t(m.start), int64_t(m.end - m.start), args.s);
  }
};

}  // namespace kineto_like

Timing RunBaseline(const Buffers& b, const std::string& path, long* peak_kb, long* held_kb) {
  using namespace kineto_like;
  const long rss_start = ProcStatusKb("VmRSS:");
  // Untimed: the CPU ops as PyTorch hands them over.
  std::vector<CpuActivity> ops(b.launches);
  for (uint32_t i = 0; i < b.launches; ++i) {
    const int64_t ts = kT0 + int64_t(i) * 10000;
    ops[i] = {ts + 50, ts + 4000, int64_t{i} + 1, kPid, kOpNames[i % 4], {}};
    ops[i].metadata["External id"] = std::to_string(i + 1);
    ops[i].metadata["Record function id"] = "0";
  }
  std::ofstream("/proc/self/clear_refs") << "5";  // VmHWM := current RSS, as for kairos
  const long rss0 = ProcStatusKb("VmRSS:");
  *held_kb = rss0 - rss_start;
  auto w0 = std::chrono::steady_clock::now();
  const double c0 = kairos::bench::ThreadCpuSeconds();
  {
    Profiler p;
    p.out.open(path);
    p.out << "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [],\n  \"traceEvents\": [";
    for (uint32_t i = 0; i < b.launches; ++i) p.cpu_correlation_map[i + 1] = i + 1;  // the same links
    for (const CpuActivity& a : ops) p.Cpu(a);
    for (size_t i = 0; i < b.storage.size(); ++i) {
      const auto* buf = reinterpret_cast<const uint8_t*>(b.storage[i].data());
      size_t off = 0;
      while (const uint8_t* r = NextRecord(buf, b.valid[i], &off)) {
        switch (reinterpret_cast<const CUpti_Activity*>(r)->kind) {
          case CUPTI_ACTIVITY_KIND_RUNTIME: p.Runtime(*reinterpret_cast<const CUpti_ActivityAPI*>(r)); break;
          case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
            p.Kernel(*reinterpret_cast<const CUpti_ActivityKernel10*>(r));
            break;
          case CUPTI_ACTIVITY_KIND_MEMCPY: p.Memcpy(*reinterpret_cast<const CUpti_ActivityMemcpy6*>(r)); break;
          default: break;
        }
      }
    }
    for (const auto& [key, name] : p.resources)
      p.out << "\n  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": " << key.first << ", \"tid\": "
            << key.second << ", \"args\": {\"name\": \"" << name << "\"}},";
    p.out << "\n  {\"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\", \"pid\": \"\", \"tid\": \"\", "
             "\"ts\": 0}\n],\n  \"traceName\": \"" << path << "\"\n}\n";
    p.out.close();
  }
  const double c1 = kairos::bench::ThreadCpuSeconds();
  auto w1 = std::chrono::steady_clock::now();
  *peak_kb = ProcStatusKb("VmHWM:") - rss0;
  return {c1 - c0, std::chrono::duration<double>(w1 - w0).count(), FileSize(path), c1 - c0};
}

}  // namespace

int main(int argc, char** argv) {
  const size_t launches = argc > 1 ? strtoull(argv[1], nullptr, 10) : 200000;
  const std::string dir = argc > 2 ? argv[2] : "/tmp";
  const std::string only = argc > 3 ? argv[3] : "";
  const std::string kpath = dir + "/kairos_flush_bench." + std::to_string(getpid()) + ".json";
  const std::string bpath = dir + "/kineto_like_flush_bench." + std::to_string(getpid()) + ".json";
  const Buffers b = Fill(launches);
  Timing best_k{1e30, 1e30, 0}, best_b{1e30, 1e30, 0};
  double best_k_wall = 1e30, best_b_wall = 1e30;  // best of the repetitions by wall time
  size_t events = 0;
  long peak_kb = 0, base_peak_kb = 0, held_kb = 0, base_held_kb = 0;
  for (int rep = 0; rep < kReps; ++rep) {
    long peak = 0, held = 0;
    Timing k = only == "baseline" ? Timing{1e30, 1e30, 0} : RunKairos(b, kpath, &events, &peak, &held);
    if (rep == 0) peak_kb = peak, held_kb = held;  // later repetitions reuse memory the allocator kept
    long base_peak = 0, base_held = 0;
    Timing base = only == "kairos" ? Timing{1e30, 1e30, 0} : RunBaseline(b, bpath, &base_peak, &base_held);
    if (rep == 0) base_peak_kb = base_peak, base_held_kb = base_held;
    if (k.cpu < best_k.cpu) best_k = k;
    if (base.cpu < best_b.cpu) best_b = base;
    best_k_wall = std::min(best_k_wall, k.wall);
    best_b_wall = std::min(best_b_wall, base.wall);
  }
  std::remove(kpath.c_str());
  std::remove(kairos::SummaryPathFor(kpath).c_str());
  std::remove(bpath.c_str());
  // The same flush to the other formats (issue 29 item 3: where the JSON's bytes are the
  // limit, the smaller outputs measured beside it): Perfetto protobuf and JSON + zstd level 1.
  struct Other {
    const char* ext;
    const char* metric;
    bool write_thread = false;
    Timing best{1e30, 1e30, 0};
    double best_wall = 1e30;
  };
  // ".2t.json": the same JSON flush with kairos-write on (OutputOptions::write_thread, what
  // `kairos convert` uses): write(2) on a second thread.
  Other others[] = {{".pftrace", "kineto_like_vs_kairos_pftrace"},
                    {".json.zst", "kineto_like_vs_kairos_json_zst"},
                    {".2t.json", "kineto_like_vs_kairos_json_two_threads", true}};
  if (only.empty()) {
    for (Other& o : others) {
      const std::string path = dir + "/kairos_flush_bench." + std::to_string(getpid()) + o.ext;
      for (int rep = 0; rep < kReps; ++rep) {
        size_t ev = 0;
        long pk = 0;
        long hk = 0;
        const Timing t = RunKairos(b, path, &ev, &pk, &hk, o.write_thread);
        if (t.cpu < o.best.cpu) o.best = t;
        o.best_wall = std::min(o.best_wall, t.wall);
      }
      std::remove(path.c_str());
      std::remove(kairos::SummaryPathFor(path).c_str());
    }
  }
  std::printf("flush: %zu launches (%zu kernels, %zu memcpys, %zu CUPTI buffers), best of %d, CPU time of all threads\n",
              launches, launches, launches / 8, b.storage.size(), kReps);
  std::printf("  kairos stop+write:  %8.1f ms CPU, all threads (flushing thread %.1f; best wall %.1f ms), %zu events, "
              "%.1f MB JSON, flush peak +%.1f MiB RSS (the events alone: %.1f MiB)\n",
              best_k.cpu * 1e3, best_k.thread_cpu * 1e3, best_k_wall * 1e3, events, best_k.bytes / 1e6, peak_kb / 1024.0,
              events * sizeof(kairos::Event) / 1048576.0);
  std::printf("  libkineto-like:     %8.1f ms CPU (best wall %.1f ms), %.1f MB JSON, flush peak +%.1f MiB RSS\n",
              best_b.cpu * 1e3, best_b_wall * 1e3, best_b.bytes / 1e6, base_peak_kb / 1024.0);
  // Item 2 of issue 29: the window's memory beside the flush's. The CUPTI buffers are the
  // same bytes on both sides and not counted; "held" is what the window's 200k CPU ops occupy
  // before the flush (kairos: Events; libkineto-like: activity objects with strings and a
  // metadata map), first repetition only (later ones reuse what the allocator kept).
  std::printf("  memory (first repetition): CPU ops held before the flush: kairos %.1f MiB, "
              "libkineto-like %.1f MiB; held + flush peak: kairos %.1f MiB, libkineto-like %.1f MiB\n",
              held_kb / 1024.0, base_held_kb / 1024.0, (held_kb + peak_kb) / 1024.0,
              (base_held_kb + base_peak_kb) / 1024.0);
  if (base_held_kb + base_peak_kb > 0) {
    kairos::bench::Headline("flush_benchmark", "window_memory_vs_kineto_like",
                            static_cast<double>(held_kb + peak_kb) /
                                static_cast<double>(base_held_kb + base_peak_kb),
                            kairos::bench::Better::kLower, "x", 1);
  }
  std::printf("  ratio baseline/kairos: %.2fx CPU, all threads (target >= 8x); %.2fx wall\n",
              best_b.cpu / best_k.cpu, best_b_wall / best_k_wall);
  kairos::bench::Headline("flush_benchmark", "kineto_like_vs_kairos", best_b.cpu / best_k.cpu,
                          kairos::bench::Better::kHigher, "x", 8);
  // Wall time: what the second core buys (the machine's load makes it noisier than CPU time).
  kairos::bench::Headline("flush_benchmark", "kineto_like_vs_kairos_wall", best_b_wall / best_k_wall,
                          kairos::bench::Better::kHigher, "x");
  for (const Other& o : others) {
    if (o.best.bytes == 0) continue;
    std::printf("  kairos stop+write to %-9s %8.1f ms CPU, %.1f MB: %.2fx the libkineto-like JSON (wall %.2fx)\n",
                o.ext, o.best.cpu * 1e3, o.best.bytes / 1e6, best_b.cpu / o.best.cpu, best_b_wall / o.best_wall);
    kairos::bench::Headline("flush_benchmark", o.metric, best_b.cpu / o.best.cpu,
                            kairos::bench::Better::kHigher, "x");
  }
  kairos::bench::Headline("flush_benchmark", "flush_rss_growth_vs_events",
                          peak_kb / 1024.0 / (events * sizeof(kairos::Event) / 1048576.0),
                          kairos::bench::Better::kLower, "x");
  return 0;
}

#else
int main() {
  std::printf("flush: skipped (built without the CUDA toolkit)\n");
  return 0;
}
#endif
