// File: memory.cc
// Layer: kairos_analysis (internal). Where the memory went, from the "[memory]" instants
// (CUPTI's allocations and frees, or PyTorch's allocator events): per (Device Type, Device
// Id) the peak and when it happened (step, CPU range), the allocations the window made and
// did not free (by allocating site), growth per step, and the findings memory_headroom,
// oom_risk, alloc_in_step_loop, leak_suspect and fragmentation (docs/MEMORY.md).
// Threading: calling thread only.
#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/analysis_context.h"
#include "analysis/antipatterns.h"
#include "analysis/python_frames.h"

namespace kairos::internal {
namespace {

// One memory event with what the analysis needs beside its row.
struct MemRef {
  const Event* event;
  const MemoryDetail* row;
  StringId site;  // innermost enclosing CPU range, else the API call; 0 = unknown
  int64_t call_ns;  // duration of the enclosing API call with its correlation id; 0 = unknown
  uint64_t python = 0;  // PythonSiteKey of the user's frame and line that allocated; 0 = none
};

// The memory events of every track, each with its allocating site: the track's events come
// sorted by (start asc, end desc), so a stack of the ranges still open at an instant holds
// exactly the ranges that enclose it.
std::vector<MemRef> CollectMemoryEvents(const AnalysisContext& ctx) {
  const TraceData& data = *ctx.data;
  std::vector<MemRef> out;
  out.reserve(data.memory.size());
  std::vector<const Event*> open;
  // With Python stacks: the user's frame and line active at each event (same thread, by time).
  std::optional<PythonFrameIndex> frames;
  if (!data.python_frames.empty()) frames.emplace(data);
  for (const auto& track : data.events_by_track) {
    open.clear();
    for (const Event& e : track) {
      while (!open.empty() && open.back()->end_ns < e.start_ns) open.pop_back();
      if (IsMemoryEvent(e)) {
        if (e.detail >= data.memory.size()) continue;
        StringId site = 0;
        int64_t call_ns = 0;
        for (auto it = open.rbegin(); it != open.rend(); ++it) {
          const Event& r = **it;
          if (call_ns == 0 && e.correlation != 0 && r.correlation == e.correlation &&
              (r.kind == EventKind::kRuntime || r.kind == EventKind::kDriver)) {
            call_ns = r.end_ns - r.start_ns;
          }
          if (IsCpuRange(r.kind) && !ctx.IsStepName(r.name)) {
            site = r.name;
            break;
          }
          if (site == 0 && (r.kind == EventKind::kRuntime || r.kind == EventKind::kDriver)) site = r.name;
        }
        const uint64_t python =
            frames ? PythonSiteKey(frames->UserSiteAt(e.track, e.start_ns, data.memory[e.detail].py_line)) : 0;
        out.push_back({&e, &data.memory[e.detail], site, call_ns, python});
        continue;
      }
      if ((IsCpuRange(e.kind) || e.kind == EventKind::kRuntime || e.kind == EventKind::kDriver) &&
          e.end_ns > e.start_ns) {
        open.push_back(&e);
      }
    }
  }
  // Each track's events are in time order already: one track (the usual case) needs no sort.
  const auto earlier = [](const MemRef& a, const MemRef& b) { return a.event->start_ns < b.event->start_ns; };
  if (!std::is_sorted(out.begin(), out.end(), earlier)) std::stable_sort(out.begin(), out.end(), earlier);
  return out;
}

// A cudaMalloc/cudaFree-like call as CUPTI reports it (it carries a memory kind; a caching
// allocator's events do not), not stream-ordered and not from a pool: it synchronises the
// device with the host.
bool IsSyncDriverAllocation(const MemoryDetail& d) {
  return d.device_type == 1 && d.memory_kind != 0 && !(d.flags & kMemoryAsync) && d.pool == 0;
}

// Index of the complete step holding `ts`, or -1.
int64_t StepIndexAt(const AnalysisContext& ctx, int64_t ts) {
  auto it = std::upper_bound(ctx.steps.begin(), ctx.steps.end(), ts,
                             [](int64_t t, const Step& s) { return t < s.start_ns; });
  if (it == ctx.steps.begin()) return -1;
  --it;
  return ts <= it->end_ns ? it - ctx.steps.begin() : -1;
}

std::string SiteName(const AnalysisContext& ctx, StringId site) {
  return site == 0 ? std::string("(unknown)") : std::string(ctx.data->strings.Get(site));
}

void Summarise(const AnalysisContext& ctx, const std::vector<const MemRef*>& refs, MemorySummary* m) {
  const MemoryDetail& first = *refs.front()->row;
  m->device = first.device;
  m->device_type = first.device_type;
  m->allocator = IsAllocatorMemory(first);
  m->start_allocated = SaturatingAdd(first.total_allocated, -first.bytes);
  m->peak_allocated = m->start_allocated;
  m->peak_reserved = SaturatingAdd(first.total_reserved, -first.bytes);
  m->peak_ts_ns = refs.front()->event->start_ns;
  if (m->device_type == 1 && m->device >= 0) {
    if (const DeviceInfo* d = ctx.Device(static_cast<uint32_t>(m->device))) m->device_total_bytes = d->total_global_mem;
  }
  // Window allocations still live: (address) -> the allocation. Bounded by the events.
  absl::flat_hash_map<uint64_t, const MemRef*> live;
  std::vector<int64_t> growth(ctx.steps.size(), 0);
  std::vector<uint8_t> step_has_event(ctx.steps.size(), 0);
  const MemRef* peak = refs.front();
  for (const MemRef* r : refs) {
    const MemoryDetail& d = *r->row;
    const int64_t step = StepIndexAt(ctx, r->event->start_ns);
    if (step >= 0) {
      growth[static_cast<size_t>(step)] = SaturatingAdd(growth[static_cast<size_t>(step)], d.bytes);
      step_has_event[static_cast<size_t>(step)] = 1;
      if (IsSyncDriverAllocation(d)) ++m->sync_alloc_calls_in_steps;
    }
    if (d.bytes >= 0) {
      ++m->allocs;
      m->allocated_bytes = SaturatingAdd(m->allocated_bytes, d.bytes);
      live[d.addr] = r;
    } else {
      ++m->frees;
      m->freed_bytes = SaturatingAdd(m->freed_bytes, -d.bytes);
      if (d.flags & kMemoryFreeBeforeWindow) ++m->frees_before_window;
      live.erase(d.addr);
    }
    if (d.total_allocated > m->peak_allocated) {
      m->peak_allocated = d.total_allocated;
      peak = r;
    }
    m->peak_reserved = std::max(m->peak_reserved, d.total_reserved);
    m->end_allocated = d.total_allocated;
  }
  m->peak_ts_ns = peak->event->start_ns;
  const int64_t peak_step = StepIndexAt(ctx, m->peak_ts_ns);
  m->peak_step = peak_step >= 0 ? ctx.steps[static_cast<size_t>(peak_step)].number : -1;
  m->peak_site = SiteName(ctx, peak->site);
  m->peak_python = PythonSiteKeyLabel(*ctx.data, peak->python);
  if (m->device_total_bytes > 0) {
    m->peak_share = static_cast<double>(m->peak_allocated) / static_cast<double>(m->device_total_bytes);
  }
  // A site is the allocating op or range and, with Python stacks, the user's line.
  std::map<std::pair<StringId, uint64_t>, MemorySite> sites;
  for (const auto& [addr, r] : live) {
    ++m->not_freed_count;
    m->not_freed_bytes = SaturatingAdd(m->not_freed_bytes, r->row->bytes);
    MemorySite& s = sites[{r->site, r->python}];
    ++s.count;
    s.bytes = SaturatingAdd(s.bytes, r->row->bytes);
  }
  for (auto& [key, s] : sites) {
    s.name = SiteName(ctx, key.first);
    s.python = PythonSiteKeyLabel(*ctx.data, key.second);
    m->not_freed_sites.push_back(std::move(s));
  }
  std::stable_sort(m->not_freed_sites.begin(), m->not_freed_sites.end(),
                   [](const MemorySite& a, const MemorySite& b) { return a.bytes > b.bytes; });
  if (m->not_freed_sites.size() > ctx.options->memory_top_sites) m->not_freed_sites.resize(ctx.options->memory_top_sites);
  for (size_t i = 0; i < ctx.steps.size(); ++i) {
    if (step_has_event[i]) m->step_growth.emplace_back(ctx.steps[i].number, growth[i]);
  }
}

std::string Mib(double bytes) {
  char b[48];
  std::snprintf(b, sizeof b, "%.1f MiB", bytes / (1 << 20));
  return b;
}

// oom_risk or memory_headroom: the peak against the device's memory.
void CapacityFindings(const AnalysisContext& ctx, const MemorySummary& m, Summary* summary) {
  const AnalysisOptions& o = *ctx.options;
  const int64_t device = m.device_type == 1 ? m.device : -1;
  char buf[512];
  if (m.device_type == 1 && m.peak_share >= 0) {
    const double total = static_cast<double>(m.device_total_bytes);
    if (m.peak_share >= o.memory_oom_min_share) {
      FindingBuilder f(ctx, "oom_risk", "Peak device memory near the device's capacity", device);
      f.Evidence("peak_allocated_bytes", static_cast<double>(m.peak_allocated))
          .Evidence("device_total_bytes", total)
          .Evidence("peak_pct", 100.0 * m.peak_share)
          .Impact(0, m.peak_share >= 0.97 ? "high" : "medium");
      std::snprintf(buf, sizeof buf,
                    "The peak (%s of %s, step %lld, in \"%s\") leaves %.1f%% of the device: a "
                    "longer sequence or a fragmentation spike will run out of memory. Reduce the "
                    "batch, checkpoint activations, or shard optimizer state.",
                    Mib(static_cast<double>(m.peak_allocated)).c_str(), Mib(total).c_str(),
                    static_cast<long long>(m.peak_step), m.peak_site.c_str(), 100.0 * (1.0 - m.peak_share));
      summary->findings.push_back(f.Done(buf));
    } else if (m.peak_share < o.memory_headroom_max_share) {
      // What scales with the batch is what the window allocates on top of what it started
      // with (weights and optimizer state were there before): the batch can grow by the room
      // left under 90% of the device divided by that.
      const double transient = static_cast<double>(m.peak_allocated) - static_cast<double>(m.start_allocated);
      const double room = 0.9 * total - static_cast<double>(m.start_allocated);
      const double factor = transient > 0 && room > 0 ? room / transient : 0.0;
      FindingBuilder f(ctx, "memory_headroom", "Peak device memory well below the device's capacity", device);
      f.Evidence("peak_allocated_bytes", static_cast<double>(m.peak_allocated))
          .Evidence("device_total_bytes", total)
          .Evidence("peak_pct", 100.0 * m.peak_share)
          .Evidence("batch_growth_factor", factor)
          .Impact(0, "medium");
      std::snprintf(buf, sizeof buf,
                    "The peak uses %.1f%% of the device (%s of %s). What the window allocated on top "
                    "of its start (%s) would fit about %.0f times under 90%% of the device: a "
                    "larger batch (or fewer devices) would use it.",
                    100.0 * m.peak_share, Mib(static_cast<double>(m.peak_allocated)).c_str(),
                    Mib(total).c_str(), Mib(transient).c_str(), factor);
      summary->findings.push_back(f.Done(buf));
    }
  }
}

// leak_suspect (growth every step) and alloc_in_step_loop (synchronising allocations in every step).
void StepFindings(const AnalysisContext& ctx, const MemorySummary& m, const std::vector<const MemRef*>& refs, Summary* summary) {
  const AnalysisOptions& o = *ctx.options;
  const int64_t device = m.device_type == 1 ? m.device : -1;
  char buf[512];
  const size_t steps = m.step_growth.size();
  if (steps >= o.memory_min_steps) {
    bool grows = m.not_freed_bytes > 0;
    int64_t min_growth = INT64_MAX, max_growth = INT64_MIN, sum = 0;
    for (const auto& [n, g] : m.step_growth) {
      grows = grows && g > 0;
      min_growth = std::min(min_growth, g);
      max_growth = std::max(max_growth, g);
      sum = SaturatingAdd(sum, g);
    }
    if (grows) {
      FindingBuilder f(ctx, "leak_suspect", "Allocated memory grows every step", device);
      f.Evidence("steps", static_cast<double>(steps))
          .Evidence("mean_growth_per_step_bytes", static_cast<double>(sum) / static_cast<double>(steps))
          .Evidence("not_freed_bytes", static_cast<double>(m.not_freed_bytes))
          .Evidence("not_freed_count", static_cast<double>(m.not_freed_count))
          .Impact(0, min_growth == max_growth ? "high" : "medium");
      for (const MemRef* r : refs) {
        if (!f.wants_examples()) break;
        if (r->row->bytes > 0 && StepIndexAt(ctx, r->event->start_ns) >= 0) f.Example(*r->event);
      }
      // "aten::empty", and with Python stacks the user's line: "aten::empty" at train.py:42 in step
      std::string site = "\"" + (m.not_freed_sites.empty() ? std::string("(unknown)") : m.not_freed_sites.front().name) + "\"";
      if (!m.not_freed_sites.empty() && !m.not_freed_sites.front().python.empty())
        site += " at " + m.not_freed_sites.front().python;
      std::snprintf(buf, sizeof buf,
                    "Each of %zu steps left %s more allocated than it started with; %llu "
                    "allocations (%s) made in the window were never freed, most from %s. Look "
                    "for tensors kept across steps (a list of losses, a cache, a graph kept alive).",
                    steps, Mib(static_cast<double>(sum) / static_cast<double>(steps)).c_str(),
                    static_cast<unsigned long long>(m.not_freed_count),
                    Mib(static_cast<double>(m.not_freed_bytes)).c_str(), site.c_str());
      summary->findings.push_back(f.Done(buf));
    }
    // cudaMalloc/cudaFree in every step: each synchronises the device with the host.
    if (m.device_type == 1) {
      size_t steps_with = 0;
      int64_t call_ns = 0;
      FindingBuilder f(ctx, "alloc_in_step_loop", "cudaMalloc/cudaFree inside the step loop", device);
      std::vector<uint8_t> seen(ctx.steps.size(), 0);
      for (const MemRef* r : refs) {
        if (!IsSyncDriverAllocation(*r->row)) continue;
        const int64_t s = StepIndexAt(ctx, r->event->start_ns);
        if (s < 0) continue;
        if (!seen[static_cast<size_t>(s)]) ++steps_with;
        seen[static_cast<size_t>(s)] = 1;
        call_ns = SaturatingAdd(call_ns, r->call_ns);
        if (f.wants_examples()) f.Example(*r->event);
      }
      if (steps_with == steps) {
        f.Evidence("steps", static_cast<double>(steps))
            .Evidence("calls", static_cast<double>(m.sync_alloc_calls_in_steps))
            .Evidence("calls_per_step", static_cast<double>(m.sync_alloc_calls_in_steps) / static_cast<double>(steps))
            .Impact(call_ns, "high");
        summary->findings.push_back(f.Done(
            "Every step allocates and frees device memory with cudaMalloc/cudaFree, which "
            "synchronise the device with the host. Allocate once before the loop and reuse the "
            "buffers, or use the caching allocator or a stream-ordered pool "
            "(cudaMallocAsync/cudaFreeAsync)."));
      }
    }
  }
}

// fragmentation: reserved far above allocated (caching allocators only: CUPTI's totals are equal).
void FragmentationFinding(const AnalysisContext& ctx, const MemorySummary& m, const std::vector<const MemRef*>& refs, Summary* summary) {
  const AnalysisOptions& o = *ctx.options;
  const int64_t device = m.device_type == 1 ? m.device : -1;
  // Reserved far above allocated (caching allocators only: CUPTI's totals are equal).
  if (m.peak_reserved > 0) {
    const MemRef* at = nullptr;
    for (const MemRef* r : refs) {
      if (r->row->total_reserved == m.peak_reserved) {
        at = r;
        break;
      }
    }
    const int64_t gap = at ? SaturatingAdd(at->row->total_reserved, -at->row->total_allocated) : 0;
    if (at && gap >= o.fragmentation_min_bytes &&
        static_cast<double>(gap) >= o.fragmentation_min_share * static_cast<double>(m.peak_reserved)) {
      FindingBuilder f(ctx, "fragmentation", "Reserved memory far above allocated", device);
      f.Evidence("peak_reserved_bytes", static_cast<double>(m.peak_reserved))
          .Evidence("allocated_at_peak_reserved_bytes", static_cast<double>(at->row->total_allocated))
          .Evidence("unused_reserved_pct", 100.0 * static_cast<double>(gap) / static_cast<double>(m.peak_reserved))
          .Impact(0, "medium");
      f.Example(*at->event);
      summary->findings.push_back(f.Done(
          "The allocator holds much more than is allocated: freed blocks of sizes that do not "
          "fit later requests. With PyTorch try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, "
          "or allocate the largest buffers first and reuse them."));
    }
  }
}

// `both`: the device has CUPTI's and an allocator's events. Each finding then comes from the
// view that sees it: capacity from CUPTI's (the driver's segments, on top of the baseline of
// everything on the device), leaks and fragmentation from the allocator's (its blocks), so one
// device never gets the same finding twice.
void Findings(const AnalysisContext& ctx, const MemorySummary& m, const std::vector<const MemRef*>& refs,
              bool both, Summary* summary) {
  if (!(both && m.allocator)) CapacityFindings(ctx, m, summary);
  if (!(both && !m.allocator)) StepFindings(ctx, m, refs, summary);
  FragmentationFinding(ctx, m, refs, summary);
}

}  // namespace

void ComputeMemory(const AnalysisContext& ctx, Summary* summary) {
  if (ctx.data->memory.empty()) return;
  const std::vector<MemRef> all = CollectMemoryEvents(ctx);
  // (CUDA first, device, allocator's events) -> events.
  std::map<std::tuple<int, int32_t, bool>, std::vector<const MemRef*>> by_device;
  for (const MemRef& r : all)
    by_device[{r.row->device_type == 1 ? 0 : 1, r.row->device, IsAllocatorMemory(*r.row)}].push_back(&r);
  // Bounded output: a read trace whose events name thousands of devices would otherwise give
  // a summary (and a report) entry for each; the rest are counted.
  while (by_device.size() > kMaxMemoryDevices) {
    auto last = std::prev(by_device.end());
    ++summary->memory_devices_left_out;
    summary->memory_events_left_out += last->second.size();
    by_device.erase(last);
  }
  for (const auto& [key, refs] : by_device) {
    const auto [type, device, allocator] = key;
    const bool both = by_device.count({type, device, !allocator}) != 0;
    MemorySummary m;
    Summarise(ctx, refs, &m);
    Findings(ctx, m, refs, both, summary);
    summary->memory.push_back(std::move(m));
  }
}

}  // namespace kairos::internal
