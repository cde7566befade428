// File: reference_trace.cc
// Layer: test (output_perfetto). See reference_trace.h.
// Threading: n/a.
#include "output_perfetto/reference_trace.h"

#include <string>

namespace kairos::testing {
namespace {

Event Ev(EventKind kind, StringId name, int64_t start, int64_t end, uint32_t track) {
  Event e{};
  e.start_ns = start;
  e.end_ns = end;
  e.name = name;
  e.track = track;
  e.detail = kNoDetail;
  e.kind = kind;
  return e;
}

}  // namespace

TraceData BuildReferenceTrace(int bulk_ranges) {
  TraceData d;
  d.pid = 4242;
  d.process_name = "train.py";
  d.host_name = "node-1";
  d.base_time_ns = kRefBase;
  d.window_start_ns = kRefT0;
  d.window_end_ns = kRefT0 + 50000000;
  d.trace_name = "/tmp/ref.json";
  d.trace_id = "run-7";
  d.distributed.rank = 3;
  d.distributed.world_size = 8;
  d.distributed.backend = "nccl";
  d.metadata.push_back({"PT_PROFILER_JOB_NAME", "job \"q\" \x01 \xc3\xa9"});
  d.metadata_json.push_back({"custom", "{\"a\":[1,2]}"});
  d.config_text = "ACTIVITIES_ENABLED=true";
  d.stats["cupti_dropped"] = 3;
  d.warnings.push_back("no \"GPU\" here");

  DeviceInfo dev;
  dev.id = 0;
  dev.name = "NVIDIA H100";
  dev.total_global_mem = 84943110144ULL;
  dev.compute_major = 9;
  dev.max_threads_per_block = 1024;
  dev.max_threads_per_multiprocessor = 2048;
  dev.regs_per_block = 65536;
  dev.warp_size = 32;
  dev.shared_mem_per_block = 49152;
  dev.num_sms = 132;
  dev.regs_per_multiprocessor = 65536;
  dev.shared_mem_per_block_optin = 232448;
  dev.shared_mem_per_multiprocessor = 233472;
  dev.max_blocks_per_multiprocessor = 32;
  d.devices.push_back(dev);

  const uint32_t main_t = d.AddTrack({TrackType::kThread, 4242, 4242, 0, 0, "main"});
  const uint32_t worker = d.AddTrack({TrackType::kThread, 4242, 4250, 0, 0, ""});
  const uint32_t s7 = d.AddTrack({TrackType::kGpuStream, 0, 7, 0, 7, ""});
  const uint32_t s13 = d.AddTrack({TrackType::kGpuStream, 0, 13, 0, 13, ""});
  const uint32_t sync7 =
      d.AddTrack({TrackType::kGpuStreamSync, 0, 7 + kStreamSyncTidOffset, 0, 7, ""});
  const uint32_t devrow = d.AddTrack({TrackType::kGpuDevice, 0, kDeviceRowTid, 0, 0, ""});
  const uint32_t ovh = d.AddTrack({TrackType::kOverhead, -1, 0, 0, 0, ""});
  StringTable& s = d.strings;
  auto add = [&](const Event& e) { d.events_by_track[e.track].push_back(e); };
  const int64_t t = kRefT0;

  Event step = Ev(EventKind::kUserAnnotation, s.Intern("ProfilerStep#1"), t, t + 18000, main_t);
  step.external_id = 1;
  add(step);
  Event mm = Ev(EventKind::kCpuOp, s.Intern("aten::mm"), t + 100, t + 5000, main_t);
  mm.external_id = 2;
  add(mm);
  CpuArgs nv{};
  nv.domain = s.Intern("NCCL");
  nv.category = s.Intern("comm");
  nv.color_argb = 0xFF12AB34;
  nv.has_color = 1;
  nv.payload_type = 3;
  double payload = 2.5;
  memcpy(&nv.payload_bits, &payload, 8);
  d.cpu_args.push_back(nv);
  Event nvtx = Ev(EventKind::kUserAnnotation, s.Intern("nccl:all_reduce"), t + 6000, t + 7000, main_t);
  nvtx.detail = 0;
  add(nvtx);
  Event launch = Ev(EventKind::kRuntime, s.Intern("cudaLaunchKernel"), t + 200, t + 1200, main_t);
  launch.correlation = 10;
  launch.external_id = 2;
  launch.aux = 211;
  launch.flags = kFlagFlowOut;
  add(launch);
  Event copy = Ev(EventKind::kRuntime, s.Intern("cudaMemcpyAsync"), t + 1300, t + 1900, main_t);
  copy.correlation = 11;
  copy.external_id = 2;
  copy.aux = 51;
  copy.flags = kFlagFlowOut;
  add(copy);
  Event drv = Ev(EventKind::kDriver, s.Intern("cuLaunchKernel"), t + 2000, t + 2500, main_t);
  drv.correlation = 12;
  drv.aux = 307;
  add(drv);
  Event mem = Ev(EventKind::kInstant, s.Intern("[memory]"), t + 5500, t + 5500, main_t);
  add(mem);
  Event tail = Ev(EventKind::kUserAnnotation, s.Intern("tail"), t + 19000, t + 50000000, main_t);
  tail.flags = kFlagUnfinished;
  tail.external_id = 9;
  add(tail);

  Event quoted = Ev(EventKind::kCpuOp, s.Intern("op \"\xc3\xbc\"\n"), t + 50, t + 70, worker);
  add(quoted);
  const char* bulk_names[] = {"fwd", "bwd", "optim", "zero_grad", "load"};
  for (int i = 0; i < bulk_ranges; ++i) {
    Event b = Ev(EventKind::kUserAnnotation, s.Intern(bulk_names[i % 5]), t + 100000 + i * 1000,
                 t + 100000 + i * 1000 + 500 + (i % 7), worker);
    add(b);
  }

  KernelDetail k{};
  k.grid[0] = 4096; k.grid[1] = 1; k.grid[2] = 1;
  k.block[0] = 128; k.block[1] = 1; k.block[2] = 1;
  k.device = 0; k.context = 1; k.stream = 7;
  k.registers_per_thread = 31;
  k.static_shared_memory = 1024;
  k.dynamic_shared_memory = 0;
  d.kernels.push_back(k);
  KernelDetail k2 = k;
  k2.grid[0] = 8; k2.block[0] = 256; k2.stream = 13;
  k2.graph_id = 5; k2.graph_node_id = 77; k2.channel_id = 3; k2.channel_type = 1;
  d.kernels.push_back(k2);

  Event ga = Ev(EventKind::kGpuUserAnnotation, s.Intern("ProfilerStep#1"), t + 1299, t + 9001, s7);
  ga.external_id = 1;
  add(ga);
  Event kern = Ev(EventKind::kKernel, s.Intern("void gemm<float>(float*, int)"), t + 1300, t + 4000, s7);
  kern.correlation = 10;
  kern.external_id = 2;
  kern.detail = 0;
  kern.flags = kFlagFlowIn;
  add(kern);
  MemcpyDetail mc{};
  mc.bytes = 131072; mc.copy_kind = 1; mc.src_kind = 1; mc.dst_kind = 3;
  mc.device = 0; mc.context = 1; mc.stream = 7;
  d.memcpys.push_back(mc);
  MemcpyDetail p2p = mc;
  p2p.copy_kind = 10; p2p.src_kind = 3; p2p.dst_kind = 3; p2p.src_device = 0; p2p.dst_device = 1;
  p2p.src_context = 1; p2p.dst_context = 2; p2p.stream = 13;
  d.memcpys.push_back(p2p);
  Event cp = Ev(EventKind::kMemcpy, s.Intern("memcpy"), t + 4100, t + 5100, s7);
  cp.correlation = 11;
  cp.external_id = 2;
  cp.detail = 0;
  cp.flags = kFlagFlowIn;
  add(cp);
  Event kern0 = Ev(EventKind::kKernel, s.Intern("kernel"), t + 5200, t + 5300, s13);
  kern0.correlation = 12;
  kern0.detail = 1;
  add(kern0);
  Event pp = Ev(EventKind::kMemcpy, s.Intern("memcpy"), t + 5400, t + 5400, s13);  // 0 ns
  pp.correlation = 13;
  pp.detail = 1;
  add(pp);
  MemsetDetail ms{};
  ms.bytes = 8; ms.memory_kind = 3; ms.device = 0; ms.context = 1; ms.stream = 13;
  d.memsets.push_back(ms);
  Event mset = Ev(EventKind::kMemset, s.Intern("memset"), t + 6000, t + 6864, s13);
  mset.correlation = 14;
  mset.detail = 0;
  add(mset);

  SyncDetail ss{};
  ss.sync_type = 3; ss.device = 0; ss.context = 1; ss.stream = 7; ss.wait_on_stream = -1;
  d.syncs.push_back(ss);
  SyncDetail cs{};
  cs.sync_type = 4; cs.device = 0; cs.context = 1; cs.stream = 0xFFFFFFFFu; cs.wait_on_stream = -1;
  d.syncs.push_back(cs);
  SyncDetail we{};
  we.sync_type = 2; we.device = 0; we.context = 1; we.stream = 7; we.cuda_event_id = 4;
  we.wait_on_stream = 13; we.wait_on_event_record_correlation = 12;
  d.syncs.push_back(we);
  Event sy = Ev(EventKind::kSync, s.Intern("Stream Sync"), t + 4000, t + 4100, sync7);
  sy.correlation = 15;
  sy.detail = 0;
  add(sy);
  Event cx = Ev(EventKind::kSync, s.Intern("Context Sync"), t + 8000, t + 8500, devrow);
  cx.correlation = 16;
  cx.detail = 1;
  add(cx);
  Event wait = Ev(EventKind::kSync, s.Intern("Stream Wait Event"), t + 9000, t + 9000, s7);
  wait.correlation = 17;
  wait.detail = 2;
  add(wait);
  Event ce = Ev(EventKind::kCudaEvent, 0, t + 9100, t + 9101, devrow);
  ce.correlation = 18;
  ce.detail = 1;
  add(ce);
  Event oh = Ev(EventKind::kOverhead, s.Intern("Buffer Flush"), t + 10000, t + 12000, ovh);
  add(oh);

  d.counter_tracks.push_back({"cpu.util", "%", "Host CPU"});
  d.counter_tracks.push_back({"mem.used", "bytes", ""});
  for (int i = 0; i < 5; ++i) {
    d.counter_samples.push_back({t + i * 100000, 10.5 * i, 0});
    d.counter_samples.push_back({t + i * 100000 + 1, 1e9 + i, 1});
  }
  d.SortTracks();
  return d;
}

}  // namespace kairos::testing
