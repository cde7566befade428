// File: python_frames.cc — see python_frames.h.
// Layer: kairos_analysis (internal).
#include "analysis/python_frames.h"

#include <algorithm>

namespace kairos::internal {

bool IsUserPythonFrame(std::string_view name) {
  static constexpr std::string_view kLibrary[] = {"/site-packages/", "/dist-packages/",
                                                  "<frozen ", "/lib/python3", "/lib64/python3"};
  for (std::string_view lib : kLibrary)
    if (name.find(lib) != std::string_view::npos) return false;
  return !name.empty();
}

std::string PythonFrameLabel(std::string_view name) {
  const size_t sep = name.rfind("): ");
  if (sep == std::string_view::npos) return std::string(name);
  const size_t open = name.rfind('(', sep);
  if (open == std::string_view::npos) return std::string(name);
  std::string_view file = name.substr(0, open);
  if (const size_t slash = file.rfind('/'); slash != std::string_view::npos)
    file = file.substr(slash + 1);
  return std::string(name.substr(sep + 3)) + " (" + std::string(file) + ":" +
         std::string(name.substr(open + 1, sep - open - 1)) + ")";
}

PythonFrameIndex::PythonFrameIndex(const TraceData& data) : data_(data) {
  for (size_t t = 0; t < data.tracks.size() && t < data.events_by_track.size(); ++t) {
    for (const Event& e : data.events_by_track[t]) {
      if (e.kind == EventKind::kCpuOp) ops_[static_cast<uint32_t>(t)].push_back(&e);
      if (e.kind != EventKind::kPythonFunction || e.detail >= data.python_frames.size()) continue;
      by_track_[static_cast<uint32_t>(t)].push_back(&e);  // events are in start order
      by_id_[data.python_frames[e.detail].id] = &e;
    }
  }
  cache_.assign(data.strings.size(), 0);
  if (by_track_.empty()) ops_.clear();  // no frames: no site is ever asked for
}

bool PythonFrameIndex::IsUser(const Event& e) const {
  uint8_t& u = cache_[e.name < cache_.size() ? e.name : 0];
  if (u == 0) u = IsUserPythonFrame(data_.strings.Get(e.name)) ? 1 : 2;
  return u == 1;
}

const Event* PythonFrameIndex::OutermostOp(uint32_t track, int64_t after_ns, int64_t t_ns) const {
  auto it = ops_.find(track);
  if (it == ops_.end()) return nullptr;
  const std::vector<const Event*>& v = it->second;
  auto pos = std::upper_bound(v.begin(), v.end(), t_ns,
                              [](int64_t t, const Event* e) { return t < e->start_ns; });
  // Ops nest: the enclosing one that began first is the outermost. Bounded walk back (an op
  // opened long before, past thousands of later ones, is not looked for).
  const Event* best = nullptr;
  for (size_t n = 0; pos != v.begin() && n < 4096; ++n) {
    const Event* e = *--pos;
    if (e->start_ns < after_ns) break;
    if (e->end_ns >= t_ns) best = e;
  }
  return best;
}

PythonSite PythonFrameIndex::UserSiteAt(uint32_t track, int64_t t_ns, uint32_t own_line) const {
  PythonSite site;
  const Event* inner = Innermost(track, t_ns);
  const Event* child = nullptr;  // the frame below `e` on the way from `inner`
  size_t guard = 0;
  for (const Event* e = inner; e != nullptr && guard++ < 100000;) {
    if (IsUser(*e)) {
      site.frame = e;
      break;
    }
    child = e;
    const uint32_t parent = data_.python_frames[e->detail].parent_id;
    auto p = parent != 0 ? by_id_.find(parent) : by_id_.end();
    e = p != by_id_.end() ? p->second : nullptr;
  }
  if (inner != nullptr) site.op = OutermostOp(track, inner->start_ns, t_ns);
  if (site.frame == nullptr) return site;
  if (child != nullptr) {
    site.line = data_.python_frames[child->detail].caller_line;
  } else if (own_line != 0) {
    site.line = own_line;
  } else if (site.op != nullptr && site.op->detail < data_.cpu_args.size()) {
    site.line = data_.cpu_args[site.op->detail].py_line;
  }
  return site;
}

std::string PythonSiteKeyLabel(const TraceData& data, uint64_t key) {
  if (key == 0) return std::string();
  Event frame{};
  frame.name = static_cast<StringId>(key >> 32);
  return PythonSiteLabel(data, PythonSite{&frame, static_cast<uint32_t>(key), nullptr});
}

std::string PythonSiteLabel(const TraceData& data, const PythonSite& site) {
  if (site.frame == nullptr) return std::string();
  const std::string_view name = data.strings.Get(site.frame->name);
  if (site.line == 0) return PythonFrameLabel(name);
  const size_t sep = name.rfind("): ");
  const size_t open = sep == std::string_view::npos ? sep : name.rfind('(', sep);
  if (open == std::string_view::npos) return PythonFrameLabel(name);
  std::string_view file = name.substr(0, open);
  if (const size_t slash = file.rfind('/'); slash != std::string_view::npos) file = file.substr(slash + 1);
  return std::string(file) + ":" + std::to_string(site.line) + " in " + std::string(name.substr(sep + 3));
}

const Event* PythonFrameIndex::Innermost(uint32_t track, int64_t t_ns, bool user_only) const {
  auto it = by_track_.find(track);
  if (it == by_track_.end()) return nullptr;
  const std::vector<const Event*>& v = it->second;
  // The last frame that started at or before t. The innermost frame running at t is it or
  // one of its ancestors (a frame open when a later one started encloses it).
  auto pos = std::upper_bound(v.begin(), v.end(), t_ns,
                              [](int64_t t, const Event* e) { return t < e->start_ns; });
  if (pos == v.begin()) return nullptr;
  const Event* e = *(pos - 1);
  size_t guard = 0;
  while (e != nullptr && guard++ < v.size()) {
    if (e->start_ns <= t_ns && t_ns <= e->end_ns) {
      if (!user_only || IsUser(*e)) return e;
    }
    const uint32_t parent = data_.python_frames[e->detail].parent_id;
    auto p = parent != 0 ? by_id_.find(parent) : by_id_.end();
    e = p != by_id_.end() ? p->second : nullptr;
  }
  return nullptr;
}

namespace {

// Per python_frames row: the GPU time (clipped to the window) of the ops whose launch call
// began inside that frame or a frame under it. Each op goes to the innermost frame running at
// its launch (by correlation id), then every frame's sum is added to its parent in
// descending id order (a child's id is larger than its parent's): O(ops + frames).
std::vector<int64_t> GpuUnderFrames(const AnalysisContext& ctx) {
  const TraceData& data = *ctx.data;
  std::vector<int64_t> sum(data.python_frames.size(), 0);
  bool any = false;
  for (const DeviceWork& dw : ctx.devices) any |= !dw.ops.empty();
  if (!any) return sum;
  absl::flat_hash_map<uint32_t, const Event*> launch;  // correlation -> runtime/driver call
  for (size_t t = 0; t < data.tracks.size() && t < data.events_by_track.size(); ++t) {
    if (data.tracks[t].type != TrackType::kThread) continue;
    for (const Event& e : data.events_by_track[t]) {
      if ((e.kind == EventKind::kRuntime || e.kind == EventKind::kDriver) && e.correlation != 0)
        launch.emplace(e.correlation, &e);
    }
  }
  if (launch.empty()) return sum;
  const PythonFrameIndex index(data);
  for (const DeviceWork& dw : ctx.devices) {
    for (const GpuOp& op : dw.ops) {
      auto it = launch.find(op.event->correlation);
      if (it == launch.end()) continue;
      const Event* f = index.Innermost(it->second->track, it->second->start_ns);
      if (f != nullptr) sum[f->detail] += std::max<int64_t>(0, ctx.End(op) - ctx.Start(op));
    }
  }
  std::vector<uint32_t> rows(data.python_frames.size());
  for (uint32_t r = 0; r < rows.size(); ++r) rows[r] = r;
  std::sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) {
    return data.python_frames[a].id > data.python_frames[b].id;
  });
  for (uint32_t r : rows) {
    const uint32_t parent = data.python_frames[r].parent_id;
    const Event* p = parent != 0 ? index.ById(parent) : nullptr;
    if (p != nullptr && p->detail < sum.size() && p->detail != r) sum[p->detail] += sum[r];
  }
  return sum;
}

}  // namespace

void ComputePythonFunctions(const AnalysisContext& ctx, Summary* summary) {
  const TraceData& data = *ctx.data;
  if (data.python_frames.empty()) return;
  const std::vector<int64_t> gpu = GpuUnderFrames(ctx);  // per python_frames row, inclusive
  struct Totals {
    int64_t total = 0, self = 0, gpu = 0;
    uint64_t calls = 0;
  };
  absl::flat_hash_map<StringId, Totals> by_name;
  struct Open {
    int64_t end_ns;
    StringId name;
  };
  std::vector<Open> stack;
  absl::flat_hash_map<StringId, int> depth;  // open frames per name: recursion counted once
  for (size_t t = 0; t < data.tracks.size() && t < data.events_by_track.size(); ++t) {
    stack.clear();
    depth.clear();
    for (const Event& e : data.events_by_track[t]) {
      if (e.kind != EventKind::kPythonFunction) continue;
      while (!stack.empty() && stack.back().end_ns <= e.start_ns) {
        --depth[stack.back().name];
        stack.pop_back();
      }
      const int64_t s = std::max(e.start_ns, ctx.window_start_ns);
      const int64_t en = std::min(e.end_ns, ctx.window_end_ns);
      const int64_t d = en > s ? en - s : 0;
      Totals& tot = by_name[e.name];
      ++tot.calls;
      tot.self += d;
      if (depth[e.name] == 0) {
        tot.total += d;
        if (e.detail < gpu.size()) tot.gpu += gpu[e.detail];
      }
      if (!stack.empty()) by_name[stack.back().name].self -= d;
      stack.push_back({e.end_ns, e.name});
      ++depth[e.name];
    }
  }
  std::vector<std::pair<StringId, Totals>> rows(by_name.begin(), by_name.end());
  auto order = [&](const std::pair<StringId, Totals>& a, const std::pair<StringId, Totals>& b) {
    if (a.second.total != b.second.total) return a.second.total > b.second.total;
    return data.strings.Get(a.first) < data.strings.Get(b.first);
  };
  const size_t n = std::min(ctx.options->top_n, rows.size());
  std::partial_sort(rows.begin(), rows.begin() + n, rows.end(), order);
  for (size_t i = 0; i < n; ++i) {
    PythonFunctionStat p;
    p.name = std::string(data.strings.Get(rows[i].first));
    p.calls = rows[i].second.calls;
    p.total_ns = rows[i].second.total;
    p.self_ns = std::max<int64_t>(0, rows[i].second.self);
    p.gpu_ns = rows[i].second.gpu;
    summary->top_python_functions.push_back(std::move(p));
  }
}

}  // namespace kairos::internal
