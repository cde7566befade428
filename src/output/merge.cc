// File: merge.cc
// Layer: kairos_output. MergeTraces (merge.h): scan every input for its rank, host and
// collective ends, align the clocks, then write the merged Kineto JSON by streaming each
// input a second time (merge_perfetto.cc writes the Perfetto form).
// Threading: a call runs on the calling thread.
#include "output/merge.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <utility>

#include "util/checked_time.h"
#include "json/json_writer.h"
#include "output/compress_sinks.h"
#include "output/file_sink.h"
#include "output/json_reader.h"
#include "output/json_writer.h"
#include "output/merge_internal.h"
#include "util/rank_name.h"

namespace kairos {
namespace {

bool EndsWith(const std::string& s, const char* suffix) {
  const size_t n = std::char_traits<char>::length(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool IsPerfettoPath(const std::string& p) {
  return EndsWith(p, ".pftrace") || EndsWith(p, ".pftrace.zst") || EndsWith(p, ".perfetto-trace") ||
         EndsWith(p, ".perfetto-trace.zst");
}

bool ParseStep(std::string_view name, int64_t* step) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (name.substr(0, kPrefix.size()) != kPrefix || name.size() == kPrefix.size()) return false;
  int64_t v = 0;
  for (char c : name.substr(kPrefix.size())) {
    if (c < '0' || c > '9' || v > (INT64_MAX - 9) / 10) return false;
    v = v * 10 + (c - '0');
  }
  *step = v;
  return true;
}

struct StepRange {
  int64_t start, end, step;
};

// Places every collective in the step whose CPU range holds its launch (or its start), so
// instances match by step number even when the ranks' traces begin at different steps.
void AssignSteps(std::vector<StepRange> steps, const std::vector<int64_t>& launch_ns,
                 std::vector<MergeCollective>& collectives) {
  std::sort(steps.begin(), steps.end(), [](const StepRange& a, const StepRange& b) { return a.start < b.start; });
  for (size_t i = 0; i < collectives.size(); ++i) {
    auto it = std::upper_bound(steps.begin(), steps.end(), launch_ns[i],
                               [](int64_t t, const StepRange& r) { return t < r.start; });
    if (it != steps.begin() && launch_ns[i] < std::prev(it)->end) collectives[i].step = std::prev(it)->step;
  }
}

// Pass 1 over a JSON input: rank, host, first timestamp, collective ends and their steps.
absl::Status ScanJson(MergeRankInfo& info) {
  KinetoJsonCallbacks cb;
  bool have_rank = false;
  std::vector<StepRange> steps;
  std::unordered_map<uint64_t, int64_t> launches;  // correlation -> launch call start
  std::vector<uint64_t> correlations;
  std::vector<int64_t> starts;
  cb.on_metadata = [&](std::string_view key, const JsonValue& v) {
    if (key == "distributedInfo" && v.is_object()) {
      if (const JsonValue* r = v.Find("rank")) {
        info.rank = r->AsInt(-1);
        have_rank = info.rank >= 0;
      }
    } else if (key == "host_name" && v.is_string()) {
      info.host = v.text;
    }
  };
  cb.on_event = [&](const KinetoEvent& ev) {
    if (ev.has_ts) info.min_ts_ns = std::min(info.min_ts_ns, ev.ts_ns);
    if (!ev.has_ts || !ev.has_dur) return;
    const JsonValue* corr = ev.args.is_object() ? ev.args.Find("correlation") : nullptr;
    int64_t step = 0;
    if (ev.cat == "user_annotation" && ParseStep(ev.name, &step)) {
      steps.push_back({ev.ts_ns, ev.ts_ns + ev.dur_ns, step});
      return;
    }
    if (ev.cat == "cuda_runtime" || ev.cat == "cuda_driver") {
      if (corr != nullptr) launches[corr->AsUint()] = ev.ts_ns;
      return;
    }
    if (ev.cat != "kernel") return;
    const JsonValue* pg = ev.args.is_object() ? ev.args.Find("Process Group Ranks") : nullptr;
    const bool named = ev.args.is_object() && ev.args.Find("Collective name") != nullptr;
    if (!named && !IsCollectiveKernelName(ev.name)) return;
    MergeCollective c;
    c.name = ev.name;
    if (pg != nullptr) c.group = pg->is_string() ? pg->text : pg->ToJson();
    c.end_ns = ev.ts_ns + ev.dur_ns;
    info.collectives.push_back(std::move(c));
    correlations.push_back(corr != nullptr ? corr->AsUint() : 0);
    starts.push_back(ev.ts_ns);
  };
  absl::Status st = ReadKinetoJsonFile(info.path, cb);
  if (!have_rank) info.rank = RankFromFileName(info.path);
  for (size_t i = 0; i < starts.size(); ++i) {
    auto it = correlations[i] != 0 ? launches.find(correlations[i]) : launches.end();
    if (it != launches.end()) starts[i] = it->second;
  }
  AssignSteps(std::move(steps), starts, info.collectives);
  return st;
}

// Pass 1 over a Perfetto input (through TraceData; the trace carries no communicator).
absl::Status ScanPerfetto(MergeRankInfo& info, const MergeOptions& o) {
  if (!o.read_perfetto) return absl::InvalidArgumentError(info.path + ": Perfetto inputs need a Perfetto reader");
  absl::StatusOr<TraceData> data = o.read_perfetto(info.path);
  if (!data.ok()) return data.status();
  info.host = data->host_name;
  info.rank = data->distributed.world_size > 1 || !data->distributed.backend.empty() ? data->distributed.rank
                                                                                     : RankFromFileName(info.path);
  std::vector<StepRange> steps;
  std::unordered_map<uint32_t, int64_t> launches;
  struct Found {
    int64_t start;
    uint32_t correlation;
    MergeCollective c;
  };
  std::vector<Found> found;
  for (size_t t = 0; t < data->tracks.size(); ++t) {
    for (const Event& e : data->events_by_track[t]) {
      info.min_ts_ns = std::min(info.min_ts_ns, e.start_ns);
      const std::string_view name = data->strings.Get(e.name);
      int64_t step = 0;
      if (e.kind == EventKind::kUserAnnotation && ParseStep(name, &step)) {
        steps.push_back({e.start_ns, e.end_ns, step});
      } else if ((e.kind == EventKind::kRuntime || e.kind == EventKind::kDriver) && e.correlation != 0) {
        launches[e.correlation] = e.start_ns;
      } else if (e.kind == EventKind::kKernel && IsCollectiveKernelName(name)) {
        MergeCollective c;
        c.name = std::string(name);
        c.end_ns = e.end_ns;
        found.push_back({e.start_ns, e.correlation, std::move(c)});
      }
    }
  }
  // File order of a JSON trace is by start time; do the same across the streams.
  std::stable_sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return a.start < b.start; });
  std::vector<int64_t> starts;
  for (Found& f : found) {
    auto it = f.correlation != 0 ? launches.find(f.correlation) : launches.end();
    starts.push_back(it != launches.end() ? it->second : f.start);
    info.collectives.push_back(std::move(f.c));
  }
  AssignSteps(std::move(steps), starts, info.collectives);
  return absl::OkStatus();
}

int64_t LowerMedian(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

// The k-th instance of each (name, communicator, step): (key, k) -> end.
std::map<std::pair<std::string, uint64_t>, int64_t> Instances(const MergeRankInfo& r) {
  std::map<std::pair<std::string, uint64_t>, int64_t> out;
  std::map<std::string, uint64_t> next;
  for (const MergeCollective& c : r.collectives) {
    const std::string key = c.name + "|" + c.group + "|" + std::to_string(c.step);
    out[{key, next[key]++}] = c.end_ns;
  }
  return out;
}

// Streams one JSON input into `w` with its pids, ids and timestamps rewritten.
class JsonMergeWriter {
 public:
  JsonMergeWriter(ByteSink& sink, int64_t out_base) : sink_(sink), out_base_(out_base) {}

  absl::Status Rank(const MergeRankInfo& info, uint64_t* events) {
    rank_ = info.rank;
    shift_ = info.shift_ns;
    dropped_ = 0;
    pid_index_.clear();
    original_pids_.clear();
    named_pids_.clear();
    KinetoJsonCallbacks cb;
    absl::Status write_status;
    cb.on_event = [&](const KinetoEvent& ev) {
      if (!write_status.ok()) return;
      if (!Event1(ev)) {
        ++dropped_;
        return;
      }
      ++*events;
      if (buf_.size() >= (1u << 20)) write_status = Flush();
    };
    absl::Status st = ReadKinetoJsonFile(info.path, cb);
    if (!st.ok()) return st;
    if (!write_status.ok()) return write_status;
    // Processes the input never named still say which rank they belong to.
    for (size_t i = 0; i < original_pids_.size(); ++i) {
      const int64_t pid = rank_ * kMergePidStride + static_cast<int64_t>(i);
      if (named_pids_.count(pid) != 0) continue;
      Sep();
      buf_.Raw("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
      buf_.Int(pid);
      buf_.Raw(",\"tid\":0,\"args\":{\"name\":");
      buf_.Str("rank " + std::to_string(rank_) + ": process " + std::to_string(original_pids_[i]));
      buf_.Raw("}}");
      ++*events;
    }
    return Flush();
  }

  absl::Status Raw(std::string_view s) {
    buf_.Raw(s);
    return Flush();
  }
  // Events of the last Rank() left out: their shifted time does not fit 64-bit ns.
  uint64_t dropped() const { return dropped_; }

 private:
  void Sep() {
    if (!first_) buf_.Raw(",\n");
    first_ = false;
  }

  // False (nothing written) when the event's shifted time does not fit 64-bit ns.
  bool Event1(const KinetoEvent& ev) {
    int64_t ts = 0;
    if (ev.has_ts && !(AddNs(ev.ts_ns, shift_, &ts) && SubNs(ts, out_base_, &ts))) return false;
    Sep();
    buf_.Char('{');
    bool first_member = true;
    const bool flow = ev.ph == "s" || ev.ph == "f" || ev.ph == "t";
    const bool meta = ev.ph == "M";
    for (const auto& [key, value] : ev.raw->members) {
      if (!first_member) buf_.Char(',');
      first_member = false;
      buf_.Str(key);
      buf_.Char(':');
      if (key == "pid") {
        Pid(value);
      } else if (key == "ts" && ev.has_ts) {
        char b[32];
        buf_.Raw(std::string_view(b, internal::FormatMicros(ts, b)));
      } else if (key == "id" && flow && value.is_number()) {
        // Correlation ids restart in every process: keep each rank's flows apart.
        buf_.Uint(static_cast<uint64_t>(rank_) * (uint64_t{1} << 32) + value.AsUint());
      } else if (key == "args" && meta && value.is_object()) {
        MetaArgs(ev, value);
      } else {
        buf_.Raw(value.ToJson());
      }
    }
    buf_.Char('}');
    if (meta && ev.name == "process_name" && ev.pid.is_number()) named_pids_.insert(NewPid(ev.pid.AsInt()));
    return true;
  }

  // The rank's pids numbered in order of first appearance; past the stride (never in
  // practice) the last number is shared rather than spilling into the next rank's block.
  int64_t NewPid(int64_t pid) {
    auto [it, added] = pid_index_.emplace(pid, static_cast<int64_t>(original_pids_.size()));
    if (added) {
      if (it->second >= kMergePidStride) it->second = kMergePidStride - 1;
      else original_pids_.push_back(pid);
    }
    return rank_ * kMergePidStride + it->second;
  }

  void Pid(const JsonValue& v) {
    if (v.is_number()) {
      buf_.Int(NewPid(v.AsInt()));
    } else if (v.is_string()) {
      buf_.Str("rank " + std::to_string(rank_) + (v.text.empty() ? "" : " " + v.text));
    } else {
      buf_.Raw(v.ToJson());
    }
  }

  // process_name / process_labels / process_sort_index say which rank a process is.
  void MetaArgs(const KinetoEvent& ev, const JsonValue& args) {
    const std::string prefix = "rank " + std::to_string(rank_);
    buf_.Char('{');
    bool first = true;
    for (const auto& [k, v] : args.members) {
      if (!first) buf_.Char(',');
      first = false;
      buf_.Str(k);
      buf_.Char(':');
      if (ev.name == "process_name" && k == "name" && v.is_string()) {
        buf_.Str(prefix + ": " + v.text);
      } else if (ev.name == "process_labels" && k == "labels" && v.is_string()) {
        buf_.Str(prefix + ", " + v.text);
      } else if (ev.name == "process_sort_index" && k == "sort_index" && v.is_number()) {
        // Ranks in order, each rank's processes together in their own order.
        buf_.Int(rank_ * 100000 + std::min<int64_t>(std::max<int64_t>(v.AsInt(), 0), 99999));
      } else {
        buf_.Raw(v.ToJson());
      }
    }
    buf_.Char('}');
  }

  absl::Status Flush() {
    absl::Status st = sink_.Write(buf_.data(), buf_.size());
    buf_.Clear();
    return st;
  }

  ByteSink& sink_;
  const int64_t out_base_;
  int64_t rank_ = 0, shift_ = 0;
  uint64_t dropped_ = 0;
  bool first_ = true;
  JsonBuffer buf_{1 << 21};
  std::map<int64_t, int64_t> pid_index_;  // original pid -> index in the rank's block
  std::vector<int64_t> original_pids_;    // by index
  std::set<int64_t> named_pids_;
};

absl::Status WriteJson(const MergeOptions& o, const std::vector<MergeRankInfo>& ranks, uint64_t* events,
                       std::vector<std::string>* warnings) {
  absl::StatusOr<std::unique_ptr<AtomicFileSink>> file = AtomicFileSink::Create(o.out_path);
  if (!file.ok()) return file.status();
  std::unique_ptr<ByteSink> compressor;
  ByteSink* sink = file->get();
  if (EndsWith(o.out_path, ".zst")) {
    compressor = std::make_unique<ZstdSink>(**file, o.zstd_level);
    sink = compressor.get();
  } else if (EndsWith(o.out_path, ".gz")) {
    compressor = std::make_unique<GzipSink>(**file);
    sink = compressor.get();
  }
  int64_t out_base = INT64_MAX;
  for (const MergeRankInfo& r : ranks) {
    int64_t first;  // a rank whose shifted start does not fit has its events dropped below
    if (r.min_ts_ns != INT64_MAX && AddNs(r.min_ts_ns, r.shift_ns, &first)) out_base = std::min(out_base, first);
  }
  if (out_base == INT64_MAX) out_base = 0;
  JsonWriter head;
  head.BeginObject().Key("schemaVersion").Int(1).Key("baseTimeNanoseconds").Int(out_base);
  head.Key("kairos_merge").BeginObject().Key("ranks").BeginArray();
  for (const MergeRankInfo& r : ranks) {
    head.BeginObject().Key("rank").Int(r.rank).Key("source").String(r.path).Key("host").String(r.host);
    head.Key("pid_offset").Int(r.rank * kMergePidStride).Key("clock_shift_ns").Int(r.shift_ns);
    head.Key("aligned_on_collectives").Uint(r.aligned_on).EndObject();
  }
  head.EndArray().EndObject();
  JsonMergeWriter w(*sink, out_base);
  absl::Status st = w.Raw(head.view().substr(0, head.size()));
  if (st.ok()) st = w.Raw(",\"traceEvents\":[\n");
  for (const MergeRankInfo& r : ranks) {
    if (st.ok()) st = w.Rank(r, events);
    if (w.dropped() != 0) warnings->push_back(internal::DroppedWarning(r, w.dropped()));
  }
  if (st.ok()) st = w.Raw("\n]}\n");
  if (st.ok()) st = sink->Finish();
  return st;
}

}  // namespace

std::string internal::DroppedWarning(const MergeRankInfo& rank, uint64_t dropped) {
  return "rank " + std::to_string(rank.rank) + ": " + std::to_string(dropped) +
         " events dropped: shifted by " + std::to_string(rank.shift_ns) +
         " ns their time does not fit a 64-bit ns time";
}

bool IsCollectiveKernelName(std::string_view name) {
  const std::string l = Lower(name);
  return l.find("nccl") != std::string::npos || l.find("rccl") != std::string::npos;
}

void AlignClocks(std::vector<MergeRankInfo>& ranks, std::vector<std::string>* warnings) {
  if (ranks.empty()) return;
  // A rank without a host name may be anywhere: it is aligned on its own.
  auto host_of = [](const MergeRankInfo& r) { return r.host.empty() ? "#rank" + std::to_string(r.rank) : r.host; };
  size_t ref = 0;
  for (size_t i = 1; i < ranks.size(); ++i) {
    if (ranks[i].rank < ranks[ref].rank) ref = i;
  }
  const std::string ref_host = host_of(ranks[ref]);
  const auto ref_instances = Instances(ranks[ref]);
  std::map<std::string, std::vector<int64_t>> diffs;
  std::map<std::string, uint64_t> unfit;  // host -> instances whose difference does not fit
  std::set<std::string> hosts;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const std::string h = host_of(ranks[i]);
    hosts.insert(h);
    if (h == ref_host) continue;
    for (const auto& [key, end] : Instances(ranks[i])) {
      auto it = ref_instances.find(key);
      if (it == ref_instances.end()) continue;
      // Checked: ends from hostile traces (near INT64_MAX on one rank, negative on another)
      // once wrapped into a clock_shift_ns of the wrong sign.
      int64_t diff;
      if (SubNs(it->second, end, &diff)) {
        diffs[h].push_back(diff);
      } else {
        ++unfit[h];
      }
    }
  }
  for (const auto& [h, n] : unfit) {
    warnings->push_back("host " + h + ": " + std::to_string(n) +
                        " collective instances ignored for the clock shift: their end differs from "
                        "the reference's by more than a 64-bit ns time holds");
  }
  for (MergeRankInfo& r : ranks) {
    const std::string h = host_of(r);
    r.shift_ns = 0;
    r.aligned_on = 0;
    if (h == ref_host) continue;
    auto it = diffs.find(h);
    if (it == diffs.end() || it->second.empty()) {
      warnings->push_back("rank " + std::to_string(r.rank) + " (host " + r.host +
                          ") shares no collective with rank " + std::to_string(ranks[ref].rank) +
                          ": its clock is not shifted");
      continue;
    }
    r.shift_ns = LowerMedian(it->second);
    r.aligned_on = it->second.size();
  }
}

absl::StatusOr<MergeResult> MergeTraces(const std::vector<std::string>& inputs, const MergeOptions& o) {
  if (inputs.empty()) return absl::InvalidArgumentError("no input traces");
  MergeResult result;
  bool any_perfetto = false;
  for (const std::string& path : inputs) {
    MergeRankInfo info;
    info.path = path;
    info.perfetto = IsPerfettoPath(path);
    any_perfetto |= info.perfetto;
    absl::Status st = info.perfetto ? ScanPerfetto(info, o) : ScanJson(info);
    if (!st.ok()) return st;
    result.ranks.push_back(std::move(info));
  }
  // Perfetto inputs carry no communicator: match on the kernel name alone everywhere.
  if (any_perfetto) {
    for (MergeRankInfo& r : result.ranks) {
      for (MergeCollective& c : r.collectives) c.group.clear();
    }
  }
  // Ranks: their own, else the file name's, else the first free number; never twice.
  std::set<int64_t> used;
  for (MergeRankInfo& r : result.ranks) {
    if (r.rank >= 0 && !used.insert(r.rank).second) {
      result.warnings.push_back(r.path + ": rank " + std::to_string(r.rank) + " given twice");
      r.rank = -1;
    }
  }
  for (MergeRankInfo& r : result.ranks) {
    if (r.rank >= 0) continue;
    int64_t k = 0;
    while (used.count(k) != 0) ++k;
    r.rank = k;
    used.insert(k);
  }
  std::stable_sort(result.ranks.begin(), result.ranks.end(),
                   [](const MergeRankInfo& a, const MergeRankInfo& b) { return a.rank < b.rank; });
  AlignClocks(result.ranks, &result.warnings);
  const bool to_perfetto = IsPerfettoPath(o.out_path);
  absl::Status st;
  if (to_perfetto) {
    st = internal::WriteMergedPerfetto(o, result.ranks, &result.events, &result.warnings);
  } else {
    if (any_perfetto) {
      return absl::InvalidArgumentError("merging into Kineto JSON needs JSON inputs; write .pftrace instead");
    }
    st = WriteJson(o, result.ranks, &result.events, &result.warnings);
  }
  if (!st.ok()) return st;
  return result;
}

}  // namespace kairos
