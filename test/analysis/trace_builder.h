// File: trace_builder.h
// Layer: tests for kairos_analysis. Builds small TraceData by hand (threads, streams,
// kernels with their launches, copies, steps, syncs, counters) so every expected number in
// the analysis tests can be computed on paper.
// Threading: test thread only.
#ifndef KAIROS_TEST_ANALYSIS_TRACE_BUILDER_H_
#define KAIROS_TEST_ANALYSIS_TRACE_BUILDER_H_

#include <string>

#include "model/trace_data.h"

namespace kairos::testing {

class TraceBuilder {
 public:
  TraceBuilder(int64_t window_start_ns, int64_t window_end_ns) {
    data_.window_start_ns = window_start_ns;
    data_.window_end_ns = window_end_ns;
    data_.base_time_ns = window_start_ns;
  }

  // An A100-like device: 108 SMs, 2048 threads and 32 blocks per SM, 64 K registers.
  DeviceInfo& Device(uint32_t id, int32_t num_sms = 108) {
    DeviceInfo d;
    d.id = id;
    d.name = "Test GPU";
    d.compute_major = 8;
    d.max_threads_per_block = 1024;
    d.max_threads_per_multiprocessor = 2048;
    d.regs_per_block = 65536;
    d.regs_per_multiprocessor = 65536;
    d.warp_size = 32;
    d.shared_mem_per_block = 49152;
    d.shared_mem_per_block_optin = 166912;
    d.shared_mem_per_multiprocessor = 167936;
    d.max_blocks_per_multiprocessor = 32;
    d.num_sms = num_sms;
    data_.devices.push_back(d);
    return data_.devices.back();
  }
  // An H100 SXM-like device: 132 SMs, 228 KiB shared memory per SM (227 KiB per block).
  DeviceInfo& HopperDevice(uint32_t id) {
    DeviceInfo& d = Device(id, 132);
    d.name = "Test H100";
    d.compute_major = 9;
    d.shared_mem_per_block_optin = 232448;
    d.shared_mem_per_multiprocessor = 233472;
    return d;
  }
  uint32_t Thread(int64_t tid = 1) {
    Track t;
    t.type = TrackType::kThread;
    t.pid = 100;
    t.tid = tid;
    return data_.AddTrack(t);
  }
  uint32_t Stream(uint32_t device, uint32_t stream) {
    Track t;
    t.type = TrackType::kGpuStream;
    t.pid = device;
    t.tid = stream;
    t.device = device;
    t.stream = stream;
    return data_.AddTrack(t);
  }
  uint32_t DeviceRow(uint32_t device) {
    Track t;
    t.type = TrackType::kGpuDevice;
    t.pid = device;
    t.tid = kDeviceRowTid;
    t.device = device;
    return data_.AddTrack(t);
  }

  Event& Add(uint32_t track, EventKind kind, const std::string& name, int64_t s, int64_t e,
             uint32_t correlation = 0, uint32_t detail = kNoDetail) {
    Event ev{};
    ev.start_ns = s;
    ev.end_ns = e;
    ev.name = data_.strings.Intern(name);
    ev.track = track;
    ev.correlation = correlation;
    ev.detail = detail;
    ev.kind = kind;
    data_.events_by_track[track].push_back(ev);
    return data_.events_by_track[track].back();
  }
  void Launch(uint32_t thread, int64_t s, int64_t e, uint32_t correlation,
              const std::string& name = "cudaLaunchKernel") {
    Add(thread, EventKind::kRuntime, name, s, e, correlation);
  }
  void Kernel(uint32_t stream, const std::string& name, int64_t s, int64_t e, uint32_t correlation,
              uint32_t grid = 1024, uint32_t block = 256, uint32_t regs = 32, uint32_t smem = 0) {
    KernelDetail k{};
    k.grid[0] = grid;
    k.grid[1] = k.grid[2] = 1;
    k.block[0] = block;
    k.block[1] = k.block[2] = 1;
    k.registers_per_thread = regs;
    k.dynamic_shared_memory = smem;
    k.device = data_.tracks[stream].device;
    k.stream = data_.tracks[stream].stream;
    data_.kernels.push_back(k);
    Add(stream, EventKind::kKernel, name, s, e, correlation, static_cast<uint32_t>(data_.kernels.size() - 1));
  }
  // copy_kind: 1 HtoD, 2 DtoH; memory kinds: 1 pageable, 2 pinned, 3 device.
  void Memcpy(uint32_t stream, int64_t s, int64_t e, uint32_t correlation, uint64_t bytes,
              uint8_t copy_kind = 1, uint8_t src_kind = 2, uint8_t dst_kind = 3) {
    MemcpyDetail m{};
    m.bytes = bytes;
    m.copy_kind = copy_kind;
    m.src_kind = src_kind;
    m.dst_kind = dst_kind;
    m.device = data_.tracks[stream].device;
    data_.memcpys.push_back(m);
    // Named as the CUPTI converter and the JSON writer name them, so traces round-trip.
    const char* kinds[] = {"Unknown", "Pageable", "Pinned", "Device"};
    const std::string name = std::string(copy_kind == 2 ? "Memcpy DtoH (" : "Memcpy HtoD (") +
                             kinds[src_kind & 3] + " -> " + kinds[dst_kind & 3] + ")";
    Add(stream, EventKind::kMemcpy, name, s, e, correlation,
        static_cast<uint32_t>(data_.memcpys.size() - 1));
  }
  void Memset(uint32_t stream, int64_t s, int64_t e, uint32_t correlation, uint64_t bytes) {
    MemsetDetail m{};
    m.bytes = bytes;
    data_.memsets.push_back(m);
    Add(stream, EventKind::kMemset, "Memset (Device)", s, e, correlation,
        static_cast<uint32_t>(data_.memsets.size() - 1));
  }
  void Range(uint32_t thread, const std::string& name, int64_t s, int64_t e) {
    Add(thread, EventKind::kUserAnnotation, name, s, e);
  }
  void Step(uint32_t thread, int64_t n, int64_t s, int64_t e) {
    Range(thread, "ProfilerStep#" + std::to_string(n), s, e);
  }
  void Sync(uint32_t track, int64_t s, int64_t e) {
    Add(track, EventKind::kSync, "cudaDeviceSynchronize", s, e);
  }
  // A GPU-side "Stream Wait Event" (CUPTI sync type 2) on a stream-sync row.
  void StreamWaitEvent(uint32_t track, int64_t s, int64_t e) {
    SyncDetail d{};
    d.sync_type = 2;
    d.stream = 7;
    d.wait_on_stream = 9;
    data_.syncs.push_back(d);
    Add(track, EventKind::kSync, "Stream Wait Event", s, e, 0,
        static_cast<uint32_t>(data_.syncs.size() - 1));
  }
  void Counter(const std::string& name, int64_t ts, double value) {
    uint32_t id = 0;
    while (id < data_.counter_tracks.size() && data_.counter_tracks[id].name != name) ++id;
    if (id == data_.counter_tracks.size()) data_.counter_tracks.push_back({name, "%", "Host CPU"});
    data_.counter_samples.push_back({ts, value, id});
  }
  TraceData& Done() {
    data_.SortTracks();
    return data_;
  }
  TraceData& data() { return data_; }

 private:
  TraceData data_;
};

}  // namespace kairos::testing

#endif  // KAIROS_TEST_ANALYSIS_TRACE_BUILDER_H_
