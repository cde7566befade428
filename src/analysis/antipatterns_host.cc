// File: antipatterns_host.cc
// Layer: kairos_analysis (internal). Detectors about the host feeding the GPU: GPU idle
// while the host is busy (data loading / CPU bottleneck, with host CPU and iowait samples),
// excessive synchronisation, a small copy back to the host every step (host-side loss or
// metrics), and long initialisation before the first step.
// Threading: calling thread only.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "analysis/antipatterns.h"
#include "analysis/python_frames.h"

namespace kairos::internal {
namespace {

constexpr uint8_t kCopyDtoH = 2;  // CUpti_ActivityMemcpyKind

std::string Pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", v);
  return buf;
}

void IdleHostBound(const AnalysisContext& ctx, size_t di, Summary* out) {
  const AnalysisOptions& o = *ctx.options;
  const DeviceSummary& d = out->devices[di];
  const DeviceWork& dw = ctx.devices[di];
  if (dw.ops.empty() || d.window_ns <= 0) return;
  const double idle_frac = static_cast<double>(d.idle_ns) / static_cast<double>(d.window_ns);
  const double share = d.idle_ns > 0 ? static_cast<double>(d.idle_host_wait_ns) / static_cast<double>(d.idle_ns) : 0;
  if (idle_frac < o.idle_min_fraction || share < o.host_wait_min_share) return;
  FindingBuilder b(ctx, "gpu_idle_host_bound", "GPU idle while waiting for the host", d.device);
  // Measured from each op's own launch call; "medium" when other causes are a large part.
  b.Impact(d.idle_host_wait_ns, share >= 0.8 ? "high" : "medium");
  std::vector<Interval> waits;
  std::vector<const IdleGap*> by_len;  // the waits that can be an example (their next op)
  const size_t n_waits = static_cast<size_t>(
      std::count_if(dw.gaps.begin(), dw.gaps.end(), [](const IdleGap& g) { return g.host_wait_ns > 0; }));
  waits.reserve(n_waits);  // exact: up to one per GPU op, so no doubling
  by_len.reserve(n_waits);
  for (const IdleGap& g : dw.gaps) {
    if (g.host_wait_ns <= 0) continue;
    waits.push_back({g.start_ns, g.start_ns + g.host_wait_ns});
    if (g.next != nullptr) by_len.push_back(&g);
  }
  // A single long wait (typically start-up before the first launch on a busy host) is set-up
  // time, which long_initialization covers; host-boundness is a recurring pattern.
  if (waits.size() < o.host_wait_min_intervals) return;
  // The longest waits, ties in time order, as a stable sort of them all would give: only the
  // first max_examples are read (sorting every gap was most of this detector's time).
  const size_t k = std::min(by_len.size(), o.max_examples);
  std::partial_sort(by_len.begin(), by_len.begin() + static_cast<std::ptrdiff_t>(k), by_len.end(),
                    [](const IdleGap* a, const IdleGap* c) {
                      return a->host_wait_ns != c->host_wait_ns ? a->host_wait_ns > c->host_wait_ns
                                                                : a < c;  // gaps are in time order
                    });
  for (size_t i = 0; i < k && b.wants_examples(); ++i) b.Example(*by_len[i]->next);
  const double util = CounterMeanIn(ctx, "cpu.util", waits);
  const double iowait = CounterMeanIn(ctx, "cpu.iowait", waits);
  b.Evidence("idle_ns", static_cast<double>(d.idle_ns))
      .Evidence("idle_fraction", idle_frac)
      .Evidence("host_wait_ns", static_cast<double>(d.idle_host_wait_ns))
      .Evidence("host_wait_share_of_idle", share)
      .Evidence("host_wait_intervals", static_cast<double>(waits.size()));
  if (util >= 0) b.Evidence("host_cpu_util_pct_during_waits", util);
  if (iowait >= 0) b.Evidence("host_iowait_pct_during_waits", iowait);
  std::string where = d.host_wait_top_range.empty()
                          ? std::string()
                          : " The host spent most of that time in \"" + d.host_wait_top_range + "\".";
  if (!d.host_wait_top_python.empty())
    where += " In Python: " + d.host_wait_top_python + ".";
  std::string advice;
  if (iowait >= o.iowait_high_pct) {
    advice = "The GPU waits for input while the host waits on storage (iowait " + Pct(iowait) +
             "). Read data faster: cache or pre-shard the data set, use larger files or a faster "
             "format, and prefetch with more DataLoader workers.";
  } else {
    advice = "The GPU waits for the host to prepare and launch the next work (data loading or "
             "other CPU-side work). Use more DataLoader workers, pin_memory=True with "
             "non_blocking copies and prefetching, or move preprocessing onto the GPU.";
  }
  out->findings.push_back(b.Done(advice + where));
}

// The user's Python site (frame and line, with the operator the line ran) with the most time
// among `items` (a host-side event, or a GPU-side one found through its runtime call's
// correlation id, and its time); ns 0 without Python frames or when none ran in user code.
struct TopSite {
  std::string label;  // "train.py:42 in step (aten::item)"
  int64_t ns = 0;
};
TopSite TopPythonSite(const TraceData& data, const std::vector<std::pair<const Event*, int64_t>>& items) {
  TopSite top;
  if (data.python_frames.empty() || items.empty()) return top;
  const PythonFrameIndex frames(data);
  absl::flat_hash_map<uint32_t, const Event*> host_call;  // correlation -> runtime/driver call
  for (size_t t = 0; t < data.tracks.size() && t < data.events_by_track.size(); ++t) {
    if (data.tracks[t].type != TrackType::kThread) continue;
    for (const Event& e : data.events_by_track[t])
      if ((e.kind == EventKind::kRuntime || e.kind == EventKind::kDriver) && e.correlation != 0)
        host_call[e.correlation] = &e;
  }
  std::map<std::string, std::pair<int64_t, std::string>> by_site;  // label -> (ns, op)
  for (const auto& [e, ns] : items) {
    const Event* at = e;
    if (e->track >= data.tracks.size() || data.tracks[e->track].type != TrackType::kThread) {
      auto it = e->correlation != 0 ? host_call.find(e->correlation) : host_call.end();
      at = it != host_call.end() ? it->second : nullptr;
    }
    if (at == nullptr) continue;
    const PythonSite site = frames.UserSiteAt(at->track, at->start_ns);
    if (site.frame == nullptr) continue;
    auto& slot = by_site[PythonSiteLabel(data, site)];
    slot.first += ns;
    if (slot.second.empty() && site.op != nullptr) slot.second = std::string(data.strings.Get(site.op->name));
  }
  for (const auto& [label, v] : by_site) {  // ordered: ties go to the smaller label
    if (v.first <= top.ns) continue;
    top.ns = v.first;
    top.label = label + (v.second.empty() ? "" : " (" + v.second + ")");
  }
  return top;
}

void ExcessiveSync(const AnalysisContext& ctx, Summary* out) {
  const AnalysisOptions& o = *ctx.options;
  const TraceData& data = *ctx.data;
  FindingBuilder b(ctx, "excessive_sync", "Excessive device or stream synchronisation", -1);
  std::vector<const Event*> syncs;
  int64_t ns = 0;
  for (const auto& v : data.events_by_track) {
    for (const Event& e : v) {
      if (e.kind != EventKind::kSync) continue;
      // Stream Wait Event (CUPTI sync type 2) orders two streams on the GPU; the host does
      // not block in it, so it is not the host-side synchronisation this detector is about.
      if (e.detail < data.syncs.size() && data.syncs[e.detail].sync_type == 2) continue;
      const int64_t s = std::max(e.start_ns, ctx.window_start_ns), en = std::min(e.end_ns, ctx.window_end_ns);
      if (en < s) continue;
      ns += en - s;
      syncs.push_back(&e);
    }
  }
  const double frac = ctx.window_ns() > 0 ? static_cast<double>(ns) / static_cast<double>(ctx.window_ns()) : 0;
  if (syncs.size() < o.sync_min_count || frac < o.sync_min_window_fraction) return;
  b.Impact(ns, "high");
  std::stable_sort(syncs.begin(), syncs.end(), [](const Event* a, const Event* c) { return EventBefore(*a, *c); });
  for (const Event* e : syncs) {
    if (!b.wants_examples()) break;
    b.Example(*e);
  }
  b.Evidence("syncs", static_cast<double>(syncs.size()))
      .Evidence("sync_time_ns", static_cast<double>(ns))
      .Evidence("window_fraction", frac);
  if (!ctx.steps.empty()) {
    b.Evidence("syncs_per_step", static_cast<double>(syncs.size()) / static_cast<double>(ctx.steps.size()));
  }
  // With Python stacks: the user's frame that made the syncs (the innermost frame of the
  // user's code running when the host call that waited began).
  // With Python stacks: the user's line that made the syncs (the innermost user frame and line
  // running when the host call that waited began).
  std::vector<std::pair<const Event*, int64_t>> timed;
  for (const Event* e : syncs)
    timed.push_back({e, std::min(e->end_ns, ctx.window_end_ns) - std::max(e->start_ns, ctx.window_start_ns)});
  const TopSite top = TopPythonSite(data, timed);
  std::string where;
  if (top.ns > 0) {
    b.Evidence("top_python_frame_sync_ns", static_cast<double>(top.ns));
    where = " Most of the sync time (" + Pct(100.0 * static_cast<double>(top.ns) /
                                              static_cast<double>(std::max<int64_t>(ns, 1))) +
            ") is in Python " + top.label + ".";
  }
  out->findings.push_back(b.Done(
      "The host blocks on the GPU often (cudaDeviceSynchronize, cudaStreamSynchronize, event "
      "waits, or implicit syncs from .item(), .cpu(), printing tensors), so it cannot queue work "
      "ahead. Remove syncs from the step loop, or sync on one event only when a result is "
      "really needed." + where));
}

void CopyBackEveryStep(const AnalysisContext& ctx, Summary* out) {
  const AnalysisOptions& o = *ctx.options;
  const auto& steps = ctx.steps;
  if (steps.size() < o.copy_back_min_steps) return;
  FindingBuilder b(ctx, "per_step_copy_back", "A small copy back to the host every step", -1);
  std::vector<bool> hit(steps.size(), false);
  uint64_t copies = 0, bytes = 0;
  int64_t blocked_ns = 0;  // from each copy's launch call to the copy's end
  std::vector<std::pair<const Event*, int64_t>> blocked;  // per copy, for its Python site
  for (const DeviceWork& dw : ctx.devices) {
    for (const GpuOp& op : dw.ops) {
      if (op.event->kind != EventKind::kMemcpy || op.event->detail >= ctx.data->memcpys.size()) continue;
      const MemcpyDetail& m = ctx.data->memcpys[op.event->detail];
      if (m.copy_kind != kCopyDtoH || m.bytes > o.copy_back_max_bytes) continue;
      // Attribute to the step whose host side issued it (the launch), else by GPU time.
      int64_t t = op.event->start_ns;
      const Launch* l = op.event->correlation != 0 ? ctx.launches.Find(op.event->correlation) : nullptr;
      const bool launched = l != nullptr;
      if (launched) t = l->start_ns;
      auto it = std::upper_bound(steps.begin(), steps.end(), t,
                                 [](int64_t v, const Step& s) { return v < s.start_ns; });
      if (it == steps.begin()) continue;
      const size_t k = static_cast<size_t>(it - steps.begin()) - 1;
      if (t >= steps[k].end_ns) continue;
      hit[k] = true;
      // The read-back blocks the host until the queued work before it has run.
      const int64_t waited = op.event->end_ns - (launched ? std::min(t, op.event->start_ns) : op.event->start_ns);
      blocked_ns += waited;
      blocked.push_back({op.event, waited});
      ++copies;
      bytes += m.bytes;
      b.Example(*op.event);
    }
  }
  const auto with = static_cast<size_t>(std::count(hit.begin(), hit.end(), true));
  const double frac = static_cast<double>(with) / static_cast<double>(steps.size());
  if (with == 0 || frac < o.copy_back_min_step_fraction) return;
  b.Impact(blocked_ns, with == steps.size() ? "high" : "medium");
  b.Evidence("steps", static_cast<double>(steps.size()))
      .Evidence("steps_with_copy_back", static_cast<double>(with))
      .Evidence("copies", static_cast<double>(copies))
      .Evidence("bytes", static_cast<double>(bytes));
  const TopSite top = TopPythonSite(*ctx.data, blocked);  // with Python stacks: whose line
  std::string where;
  if (top.ns > 0) {
    b.Evidence("top_python_frame_blocked_ns", static_cast<double>(top.ns));
    where = " Most of the blocked time (" +
            Pct(100.0 * static_cast<double>(top.ns) / static_cast<double>(std::max<int64_t>(blocked_ns, 1))) +
            ") is in Python " + top.label + ".";
  }
  out->findings.push_back(b.Done(
      "Almost every step copies a few bytes from the GPU to the host (typically loss.item(), "
      "metric logging or a Python condition on a tensor); each copy waits for all queued GPU "
      "work and stalls the pipeline. Accumulate losses and metrics on the GPU and read them "
      "every N steps." + where));
}

void LongInit(const AnalysisContext& ctx, Summary* out) {
  const AnalysisOptions& o = *ctx.options;
  const StepSummary& s = out->steps;
  if (s.count == 0) return;
  const int64_t init = s.first_step_start_ns - ctx.window_start_ns;
  if (init < o.init_min_ns || static_cast<double>(init) < o.init_step_factor * static_cast<double>(s.median_ns)) return;
  FindingBuilder b(ctx, "long_initialization", "Long initialisation before the first step", -1);
  // Set-up may be one-off and unavoidable; the trace cannot tell.
  b.Impact(init, "medium");
  b.Evidence("init_ns", static_cast<double>(init))
      .Evidence("median_step_ns", static_cast<double>(s.median_ns))
      .Evidence("init_to_step_ratio", s.median_ns > 0 ? static_cast<double>(init) / static_cast<double>(s.median_ns) : 0);
  // With Python stacks: the user's line that took most of it.
  const std::string site = TopUserSiteDuring(*ctx.data, {{ctx.window_start_ns, s.first_step_start_ns}});
  out->findings.push_back(b.Done(
      "The first step starts long after the window opens: set-up (model build, data set "
      "indexing, compilation, first-batch loading) costs several steps' worth of time. Cache "
      "compiled artifacts and indexes, load data lazily, and overlap set-up with the first "
      "batches." + (site.empty() ? std::string() : " Most of the set-up time is in Python " + site + ".")));
}

}  // namespace

void DetectHostAntipatterns(const AnalysisContext& ctx, Summary* summary) {
  for (size_t i = 0; i < ctx.devices.size(); ++i) IdleHostBound(ctx, i, summary);
  ExcessiveSync(ctx, summary);
  CopyBackEveryStep(ctx, summary);
  LongInit(ctx, summary);
  DataLoaderBound(ctx, summary);  // phases.cc
}

void DetectAntipatterns(const AnalysisContext& ctx, Summary* summary) {
  DetectGpuAntipatterns(ctx, summary);
  DetectHostAntipatterns(ctx, summary);
  // Precision first: a pattern that concerns too little of the window is not worth a
  // reader's attention. Largest first, so the report and the verdict lead with it.
  auto& f = summary->findings;
  const double floor = ctx.options->min_window_share;
  f.erase(std::remove_if(f.begin(), f.end(), [floor](const Finding& x) { return x.window_share < floor; }),
          f.end());
  std::stable_sort(f.begin(), f.end(),
                   [](const Finding& a, const Finding& b) { return a.window_share > b.window_share; });
}

}  // namespace kairos::internal
