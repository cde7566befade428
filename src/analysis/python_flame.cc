// File: python_flame.cc — ComputePythonFlame (python_frames.h): the Python call tree of the
// report's flame graph.
// Layer: kairos_analysis (internal).
// Threading: calling thread only.
#include <algorithm>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "analysis/python_frames.h"

namespace kairos::internal {
namespace {

// Nodes held while building, before pruning: bounds memory for traces with huge, varied call
// trees (each node is a few dozen bytes; the report keeps far fewer).
constexpr size_t kMaxBuildNodes = 50000;

struct BuildNode {
  StringId name = 0;
  int32_t parent = -1;
  uint32_t depth = 0;
  int64_t total_ns = 0;
  uint64_t calls = 0;
};

// The merged tree: node 0 is the root; a frame's node is (its caller's node, its name).
std::vector<BuildNode> BuildTree(const AnalysisContext& ctx, uint64_t* cut) {
  const TraceData& data = *ctx.data;
  std::vector<BuildNode> nodes(1);
  absl::flat_hash_map<uint64_t, int32_t> index;  // (parent << 32 | name) -> node
  struct Open {
    int64_t end_ns;
    int32_t node;  // -1: a frame past the node cap (its callees go uncounted too)
  };
  std::vector<Open> stack;
  for (size_t t = 0; t < data.tracks.size() && t < data.events_by_track.size(); ++t) {
    stack.clear();
    for (const Event& e : data.events_by_track[t]) {
      if (e.kind != EventKind::kPythonFunction) continue;
      while (!stack.empty() && stack.back().end_ns <= e.start_ns) stack.pop_back();
      const int32_t parent = stack.empty() ? 0 : stack.back().node;
      int32_t node = -1;
      if (parent >= 0) {
        const uint64_t key = (static_cast<uint64_t>(parent) << 32) | e.name;
        auto it = index.find(key);
        if (it != index.end()) {
          node = it->second;
        } else if (nodes.size() < kMaxBuildNodes) {
          node = static_cast<int32_t>(nodes.size());
          nodes.push_back({e.name, parent, nodes[static_cast<size_t>(parent)].depth + 1, 0, 0});
          index.emplace(key, node);
        }
      }
      if (node < 0) {
        ++*cut;
      } else {
        const int64_t s = std::max(e.start_ns, ctx.window_start_ns);
        const int64_t en = std::min(e.end_ns, ctx.window_end_ns);
        BuildNode& n = nodes[static_cast<size_t>(node)];
        n.total_ns += en > s ? en - s : 0;
        ++n.calls;
        if (n.depth == 1) nodes[0].total_ns += en > s ? en - s : 0;
      }
      stack.push_back({e.end_ns, node});
    }
  }
  return nodes;
}

}  // namespace

void ComputePythonFlame(const AnalysisContext& ctx, Summary* summary) {
  const size_t max_nodes = ctx.options->python_flame_nodes;
  if (max_nodes == 0 || ctx.data->python_frames.empty()) return;
  const std::vector<BuildNode> nodes = BuildTree(ctx, &summary->python_flame_cut);
  if (nodes[0].total_ns <= 0) return;
  // Keep the largest nodes above the share floor. A node's total never exceeds its parent's
  // and a parent is built before its children, so ordering by (total desc, index asc) keeps
  // every kept node's parent.
  const double floor = ctx.options->python_flame_min_share * static_cast<double>(nodes[0].total_ns);
  std::vector<int32_t> order(nodes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return nodes[static_cast<size_t>(a)].total_ns > nodes[static_cast<size_t>(b)].total_ns;
  });
  std::vector<uint8_t> kept(nodes.size(), 0);
  size_t n_kept = 0;
  for (int32_t i : order) {
    if (n_kept == max_nodes) break;
    const BuildNode& n = nodes[static_cast<size_t>(i)];
    if (i != 0 && static_cast<double>(n.total_ns) < floor) break;
    if (i != 0 && !kept[static_cast<size_t>(n.parent)]) continue;  // an equal-total ancestor cut
    kept[static_cast<size_t>(i)] = 1;
    ++n_kept;
  }
  // Depth-first, children by time (largest first, then by name), so a renderer lays out each
  // row left to right in one pass.
  std::vector<std::vector<int32_t>> children(nodes.size());
  for (size_t i = 1; i < nodes.size(); ++i) {
    if (kept[i]) children[static_cast<size_t>(nodes[i].parent)].push_back(static_cast<int32_t>(i));
  }
  const TraceData& data = *ctx.data;
  std::vector<std::pair<int32_t, int32_t>> todo = {{0, -1}};  // (build node, output parent)
  while (!todo.empty()) {
    const auto [i, out_parent] = todo.back();
    todo.pop_back();
    const BuildNode& b = nodes[static_cast<size_t>(i)];
    PythonFlameNode f;
    if (i != 0) {
      f.name = std::string(data.strings.Get(b.name));
      f.label = PythonFrameLabel(f.name);
      f.user = IsUserPythonFrame(f.name);
    }
    f.parent = out_parent;
    f.depth = b.depth;
    f.total_ns = b.total_ns;
    f.calls = b.calls;
    const int32_t me = static_cast<int32_t>(summary->python_flame.size());
    summary->python_flame.push_back(std::move(f));
    std::vector<int32_t>& kids = children[static_cast<size_t>(i)];
    std::sort(kids.begin(), kids.end(), [&](int32_t a, int32_t c) {
      const BuildNode& x = nodes[static_cast<size_t>(a)];
      const BuildNode& y = nodes[static_cast<size_t>(c)];
      if (x.total_ns != y.total_ns) return x.total_ns > y.total_ns;
      return data.strings.Get(x.name) < data.strings.Get(y.name);
    });
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) todo.push_back({*it, me});
  }
}

}  // namespace kairos::internal
