// File: trace_fixture.h
// Layer: tests (output). A hand-built TraceData covering every event kind the JSON writer
// formats; the expected values in json_writer_test.cc are computed by hand from it.
// Threading: single-threaded tests.
#ifndef KAIROS_TEST_OUTPUT_TRACE_FIXTURE_H_
#define KAIROS_TEST_OUTPUT_TRACE_FIXTURE_H_

#include <cmath>
#include <limits>

#include "json_test_util.h"
#include "model/trace_data.h"

namespace kairos {
namespace testing {

inline constexpr int64_t kBase = 1790857026000000000LL;

inline DeviceInfo H100(uint32_t id) {
  DeviceInfo d;
  d.id = id;
  d.name = "NVIDIA H100 80GB HBM3";
  d.total_global_mem = 85045460992ULL;
  d.compute_major = 9;
  d.compute_minor = 0;
  d.max_threads_per_block = 1024;
  d.max_threads_per_multiprocessor = 2048;
  d.regs_per_block = 65536;
  d.warp_size = 32;
  d.shared_mem_per_block = 49152;
  d.num_sms = 132;
  d.regs_per_multiprocessor = 65536;
  d.shared_mem_per_block_optin = 232448;
  d.shared_mem_per_multiprocessor = 233472;
  d.max_blocks_per_multiprocessor = 32;
  return d;
}

// Minimal CPU-only trace: one thread, one range of 1234567 ns starting 1000 ns after base.
inline void BuildCpuOnly(TraceData* d) {
  d->pid = 4242;
  d->process_name = "train.py";
  d->host_name = "node-1";
  d->base_time_ns = kBase;
  d->window_start_ns = kBase + 500;
  d->window_end_ns = kBase + 5000000;
  d->trace_name = "/tmp/out.json";
  Track t;
  t.type = TrackType::kThread;
  t.pid = 4242;
  t.tid = 4242;
  t.name = "main";
  const uint32_t tr = d->AddTrack(t);
  Event e = MakeEvent(EventKind::kUserAnnotation, kBase + 1000, kBase + 1000 + 1234567,
                      d->strings.Intern("ProfilerStep#0"), tr);
  e.external_id = 1;
  d->events_by_track[tr].push_back(e);
}

struct FullTraceIds {
  uint32_t main, worker, stream7, sync7, device0, overhead, stream13, idle;
};

inline FullTraceIds BuildFull(TraceData* d) {
  d->pid = 4242;
  d->process_name = "train.py";
  d->host_name = "node-1";
  d->base_time_ns = kBase;
  d->window_start_ns = kBase + 1000;
  d->window_end_ns = kBase + 10000000;
  d->trace_name = "/tmp/full.json";
  d->trace_id = "req-7";
  d->distributed.rank = 3;
  d->distributed.world_size = 8;
  d->distributed.backend = "nccl";
  d->config_text = "ACTIVITIES_DURATION_MSECS=500\nKAIROS_OUTPUT_FORMAT=json";
  d->stats["cupti_dropped"] = 4;
  d->stats["buffer_overflow"] = 0;
  d->warnings.push_back("GPU 1 \"missing\"");
  d->devices.push_back(H100(0));
  d->devices.push_back(H100(1));

  FullTraceIds ids{};
  auto add = [&](TrackType type, int64_t pid, int64_t tid, uint32_t dev, uint32_t stream,
                 const char* name) {
    Track t;
    t.type = type;
    t.pid = pid;
    t.tid = tid;
    t.device = dev;
    t.stream = stream;
    t.name = name;
    return d->AddTrack(t);
  };
  ids.main = add(TrackType::kThread, 4242, 4242, 0, 0, "main");
  ids.worker = add(TrackType::kThread, 4242, 4243, 0, 0, "");
  ids.stream7 = add(TrackType::kGpuStream, 0, 7, 0, 7, "");
  ids.sync7 = add(TrackType::kGpuStreamSync, 0, 7 + kStreamSyncTidOffset, 0, 7, "");
  ids.device0 = add(TrackType::kGpuDevice, 0, kDeviceRowTid, 0, 0, "");
  ids.overhead = add(TrackType::kOverhead, -1, 0, 0, 0, "");
  ids.stream13 = add(TrackType::kGpuStream, 1, 13, 1, 13, "");
  ids.idle = add(TrackType::kThread, 4242, 5000, 0, 0, "idle");  // no events: no rows

  auto S = [&](const char* s) { return d->strings.Intern(s); };
  auto push = [&](uint32_t track, Event e) {
    e.track = track;
    d->events_by_track[track].push_back(e);
  };

  // CPU side.
  CpuArgs ca{};
  ca.domain = S("dom");
  ca.category = S("cat\"x");
  ca.color_argb = 0xFF12AB34u;
  ca.has_color = 1;
  ca.payload_type = 2;
  ca.payload_bits = static_cast<uint64_t>(int64_t{-5});
  d->cpu_args.push_back(ca);

  Event step = MakeEvent(EventKind::kUserAnnotation, kBase + 2000, kBase + 900000,
                         S("ProfilerStep#1"), 0);
  step.external_id = 1;
  push(ids.main, step);
  Event mm = MakeEvent(EventKind::kCpuOp, kBase + 3000, kBase + 50000, S("aten::mm"), 0);
  mm.external_id = 2;
  push(ids.main, mm);
  Event launch = MakeEvent(EventKind::kRuntime, kBase + 4000, kBase + 9000,
                           S("cudaLaunchKernel"), 0);
  launch.correlation = 100;
  launch.external_id = 2;
  launch.aux = 211;
  launch.flags = kFlagFlowOut;
  push(ids.main, launch);
  Event copy = MakeEvent(EventKind::kRuntime, kBase + 10000, kBase + 12000,
                         S("cudaMemcpyAsync"), 0);
  copy.correlation = 101;
  copy.external_id = 2;
  copy.aux = 41;
  copy.flags = kFlagFlowOut;
  push(ids.main, copy);
  Event lonely = MakeEvent(EventKind::kDriver, kBase + 13000, kBase + 13500,
                           S("cuLaunchKernel"), 0);
  lonely.correlation = 102;  // no GPU work in the trace: no flow
  lonely.aux = 307;
  lonely.flags = kFlagFlowOut;
  push(ids.main, lonely);
  Event mark = MakeEvent(EventKind::kInstant, kBase + 60000, kBase + 60000, S("mark"), 0);
  mark.detail = 0;
  push(ids.main, mark);
  Event open = MakeEvent(EventKind::kUserAnnotation, kBase + 800000, kBase + 10000000,
                         S("open range"), 0);
  open.external_id = 3;
  open.flags = kFlagUnfinished;
  push(ids.main, open);
  push(ids.worker, MakeEvent(EventKind::kCpuOp, kBase + 5000, kBase + 6000, S("worker op"), 0));

  // GPU side.
  KernelDetail k{};
  k.grid[0] = 264;
  k.grid[1] = k.grid[2] = 1;
  k.block[0] = 128;
  k.block[1] = k.block[2] = 1;
  k.device = 0;
  k.context = 1;
  k.stream = 7;
  k.registers_per_thread = 32;
  k.static_shared_memory = 1024;
  k.dynamic_shared_memory = 2048;
  d->kernels.push_back(k);
  KernelDetail k2 = k;
  k2.device = 5;  // no DeviceInfo: blocks per SM unknown
  k2.graph_id = 3;
  k2.graph_node_id = 77;
  d->kernels.push_back(k2);
  Event gemm = MakeEvent(EventKind::kKernel, kBase + 20000, kBase + 30500, S("gemm"), 0);
  gemm.correlation = 100;
  gemm.external_id = 2;
  gemm.detail = 0;
  gemm.flags = kFlagFlowIn;
  push(ids.stream7, gemm);

  MemcpyDetail m{};
  m.bytes = 1000000;
  m.copy_kind = 1;
  m.src_kind = 1;
  m.dst_kind = 3;
  m.device = 0;
  m.context = 1;
  m.stream = 7;
  d->memcpys.push_back(m);
  MemcpyDetail p2p{};
  p2p.bytes = 4096;
  p2p.copy_kind = 10;
  p2p.src_kind = 3;
  p2p.dst_kind = 3;
  p2p.device = 1;
  p2p.context = 2;
  p2p.stream = 13;
  p2p.src_device = 0;
  p2p.dst_device = 1;
  p2p.src_context = 1;
  p2p.dst_context = 2;
  p2p.graph_id = 3;
  p2p.graph_node_id = 77;
  p2p.channel_id = 5;
  p2p.channel_type = 2;
  d->memcpys.push_back(p2p);
  Event h2d = MakeEvent(EventKind::kMemcpy, kBase + 40000, kBase + 41000, 0, 0);
  h2d.correlation = 101;
  h2d.external_id = 2;
  h2d.detail = 0;
  h2d.flags = kFlagFlowIn;
  push(ids.stream7, h2d);

  MemsetDetail ms{};
  ms.bytes = 8;
  ms.memory_kind = 3;
  ms.device = 0;
  ms.context = 1;
  ms.stream = 7;
  d->memsets.push_back(ms);
  Event memset = MakeEvent(EventKind::kMemset, kBase + 42000, kBase + 42000, 0, 0);
  memset.correlation = 103;  // launch not in the trace: no flow
  memset.detail = 0;
  memset.flags = kFlagFlowIn;
  push(ids.stream7, memset);
  Event k_named_kernel = MakeEvent(EventKind::kKernel, kBase + 50000, kBase + 51000,
                                   S("kernel"), 0);
  k_named_kernel.correlation = 104;
  k_named_kernel.detail = 1;
  push(ids.stream7, k_named_kernel);

  SyncDetail ss{};
  ss.sync_type = 3;
  ss.device = 0;
  ss.context = 1;
  ss.stream = 7;
  ss.wait_on_stream = -1;
  d->syncs.push_back(ss);  // 0: Stream Sync
  SyncDetail cs = ss;
  cs.sync_type = 4;
  cs.stream = 0xFFFFFFFFu;
  d->syncs.push_back(cs);  // 1: Context Sync, no stream
  SyncDetail es = ss;
  es.sync_type = 1;
  es.stream = 0xFFFFFFFFu;
  es.wait_on_stream = 7;
  es.wait_on_event_record_correlation = 99;
  es.cuda_event_id = 9;
  d->syncs.push_back(es);  // 2: Event Sync
  SyncDetail ev = ss;
  ev.sync_type = 0;
  ev.cuda_event_id = 9;
  d->syncs.push_back(ev);  // 3: cudaEvent record
  Event stream_sync = MakeEvent(EventKind::kSync, kBase + 45000, kBase + 46000, 0, 0);
  stream_sync.correlation = 105;
  stream_sync.detail = 0;
  push(ids.sync7, stream_sync);
  Event ctx_sync = MakeEvent(EventKind::kSync, kBase + 47000, kBase + 48000, 0, 0);
  ctx_sync.correlation = 106;
  ctx_sync.detail = 1;
  push(ids.device0, ctx_sync);
  Event ev_sync = MakeEvent(EventKind::kSync, kBase + 48200, kBase + 48400, 0, 0);
  ev_sync.correlation = 107;
  ev_sync.detail = 2;
  push(ids.device0, ev_sync);
  Event cuda_event = MakeEvent(EventKind::kCudaEvent, kBase + 48500, kBase + 48501, 0, 0);
  cuda_event.correlation = 108;
  cuda_event.detail = 3;
  push(ids.stream7, cuda_event);

  push(ids.overhead, MakeEvent(EventKind::kOverhead, kBase + 70000, kBase + 71000,
                               S("Buffer Flush"), 0));
  Event peer = MakeEvent(EventKind::kMemcpy, kBase + 80000, kBase + 80500, 0, 0);
  peer.correlation = 109;
  peer.detail = 1;
  push(ids.stream13, peer);

  d->counter_tracks.push_back({"cpu.util", "%", ""});
  d->counter_tracks.push_back({"mem.used", "bytes", "Host Memory"});
  d->counter_samples.push_back({kBase + 1500, 12.5, 0});
  d->counter_samples.push_back({kBase + 30500, 1e9, 1});
  d->counter_samples.push_back({kBase + 9000000, std::numeric_limits<double>::quiet_NaN(), 0});
  d->SortTracks();
  return ids;
}

}  // namespace testing
}  // namespace kairos

#endif  // KAIROS_TEST_OUTPUT_TRACE_FIXTURE_H_
