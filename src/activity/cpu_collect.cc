// File: cpu_collect.cc
// Layer: kairos_activity. CpuRecorder::Collect: turns every thread's ring records of the
// finished session into Events (user_annotation ranges, instants, ProfilerStep#N), clamped
// to the raw window, with exact loss statistics.
// Threading: session thread only, under the registry mutex (see cpu_recorder.cc).
#include <unistd.h>

#include <algorithm>
#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "activity/cpu_recorder.h"
#include "activity/op_inputs.h"

namespace kairos::internal {

// Access to the registry lives in cpu_recorder.cc; this visitor keeps the lock there.
void ForEachThreadStateLocked(const std::function<void(ThreadState&)>& fn);

namespace {

struct OpenRange {
  uint64_t start;
  uint32_t name;  // StringId in the trace
  uint32_t id;
  uint32_t detail;
};

// A Python frame entered on a thread and not yet left (kPyCall). `seq` orders frames by entry
// across the trace; ids are made dense (1..N, PyTorch's "Python id") once all are known.
struct OpenFrame {
  uint64_t start;
  uint32_t name;  // process-wide Python name id (InternPythonName)
  uint32_t seq;
  uint32_t parent_seq;  // 0 = a root frame
  uint32_t caller_line;  // the record's id: the calling frame's line (0 = unknown)
};

// An emitted python_function event whose id, parent and name Finish fills in.
struct EmittedFrame {
  uint32_t seq, parent_seq, thread, track;
  size_t index;  // in events_by_track[track]
  uint32_t name;
  uint32_t caller_line;
};

struct StepMark {
  uint64_t raw;
  int64_t iteration;
  uint32_t track;
};

struct StartedRange {
  uint64_t start;
  uint32_t name;
  uint32_t track;
  uint32_t detail;
};

// One thread's state while its ring is replayed (Collector::AddThread).
struct ThreadReplay {
  uint32_t track = 0;
  std::vector<StringId> names;    // thread-local name ids -> trace StringIds
  std::vector<OpenRange> stack;   // open ranges
  std::vector<OpenFrame> frames;  // this thread's Python stack
  uint32_t python_thread = UINT32_MAX;
};

class Collector {
 public:
  Collector(TraceData& data, uint64_t start_raw, uint64_t end_raw, const ClockConverter& clock)
      : data_(data), start_raw_(start_raw), end_raw_(end_raw), clock_(clock) {}

  void AddThread(ThreadState& s);
  void Finish(bool start_is_step_boundary);
  bool memory_on = false;  // PROFILE_PROFILE_MEMORY: keep framework allocator events

 private:
  // Emits [start, end] clamped to the window; drops it if entirely outside.
  void EmitRange(uint32_t track, uint64_t start, uint64_t end, bool open, uint32_t name,
                 uint32_t id, uint32_t detail, uint8_t extra_flags = 0);
  uint32_t NextId();
  bool CountThread(ThreadState& s, size_t n);
  uint32_t AddThreadTrack(ThreadState& s);
  void Replay(ThreadState& s, const RingRecord& r, ThreadReplay& t);
  // An event [start, end] (end = the window's when `open`) clamped to the window, flagged,
  // with Unix times; false when it lies wholly outside.
  bool Clip(uint64_t start, uint64_t end, bool open, Event* e);
  // Emits one Python frame left at `end` (or still open at the window end).
  void EmitFrame(uint32_t track, uint32_t thread, const OpenFrame& f, uint64_t end, bool open);
  // Dense ids, parents and names of the python_function events (after every thread).
  void FinishFrames();
  // An instant (kairos_mark) at `raw` in the window.
  void EmitMark(uint32_t track, uint64_t raw, uint32_t name, uint32_t detail) {
    Event e{};
    e.start_ns = e.end_ns = clock_.ToUnixNs(raw);
    e.name = name;
    e.track = track;
    e.detail = detail;
    e.kind = EventKind::kInstant;
    data_.events_by_track[track].push_back(e);
  }
  // A framework allocator's event (kMemory) as a "[memory]" instant under range `external_id`.
  void EmitMemory(uint32_t track, const RingRecord& r, const ThreadState& s, uint32_t external_id);

  TraceData& data_;
  uint64_t start_raw_, end_raw_;
  const ClockConverter& clock_;
  std::vector<StepMark> steps_;
  absl::flat_hash_map<uint32_t, StartedRange> started_;
  absl::flat_hash_map<uint32_t, uint64_t> ended_;
  uint64_t dropped_ = 0, unmatched_pops_ = 0, unmatched_ends_ = 0, unfinished_ = 0;
  uint64_t names_dropped_ = 0, names_truncated_ = 0, args_dropped_ = 0, threads_ = 0;
  uint64_t kept_ = 0;  // records read from the rings
  std::vector<EmittedFrame> frames_;
  uint32_t frame_seq_ = 0, python_threads_ = 0;
  uint64_t python_unmatched_returns_ = 0, python_unfinished_ = 0, python_unnamed_ = 0;
  uint64_t memory_events_ = 0;  // framework allocator events kept

 public:
  uint64_t alloc_failures = 0;  // set before Finish
  uint32_t next_id_ = 0, id_limit_ = 0;
};

uint32_t Collector::NextId() {
  if (next_id_ == id_limit_) {
    ThreadState tmp;
    RefillIdBlock(&tmp);
    next_id_ = tmp.next_id;
    id_limit_ = tmp.id_limit;
  }
  return next_id_++;
}

void Collector::EmitMemory(uint32_t track, const RingRecord& r, const ThreadState& s,
                           uint32_t external_id) {
  if (!memory_on || r.raw_time < start_raw_ || r.raw_time > end_raw_) return;
  if (r.args == 0 || r.args > s.args_capacity) return;
  const StoredArgs& a = s.args[r.args - 1];  // the mapping of RecordMemory
  MemoryDetail m{};
  m.addr = a.payload_bits;
  m.bytes = ClampMemoryBytes(a.sequence_nr);
  m.total_allocated = ClampMemoryBytes(a.flops);
  m.total_reserved = ClampMemoryBytes(static_cast<int64_t>(a.record_function_id));
  m.device_type = static_cast<uint8_t>(a.category_id);
  m.device = static_cast<int32_t>(a.color_argb);
  m.stream = 0xFFFFFFFFu;
  // The allocator's own totals: memory_totals.cc keeps them as given (CUPTI's are computed).
  m.flags = kMemoryOwnTotals;
  m.py_line = a.py_line;
  Event e{};
  e.start_ns = e.end_ns = clock_.ToUnixNs(r.raw_time);
  e.name = data_.strings.Intern("[memory]");
  e.track = track;
  e.external_id = external_id;
  e.detail = static_cast<uint32_t>(data_.memory.size());
  e.kind = EventKind::kInstant;
  e.aux = kAuxMemory;
  data_.memory.push_back(m);
  data_.events_by_track[track].push_back(e);
  ++memory_events_;
}

bool Collector::Clip(uint64_t start, uint64_t end, bool open, Event* e) {
  if (open) end = end_raw_;
  if (end < start_raw_ || start > end_raw_) return false;
  if (start < start_raw_) {
    start = start_raw_;
    e->flags |= kFlagBeganBeforeWindow;
  }
  if (open || end > end_raw_) {
    end = end_raw_;
    e->flags |= kFlagUnfinished;
  }
  e->start_ns = clock_.ToUnixNs(start);
  e->end_ns = std::max(e->start_ns, clock_.ToUnixNs(end));
  return true;
}

void Collector::EmitRange(uint32_t track, uint64_t start, uint64_t end, bool open,
                          uint32_t name, uint32_t id, uint32_t detail, uint8_t extra_flags) {
  Event e{};
  e.flags = extra_flags;
  if (!Clip(start, end, open, &e)) return;
  if (e.flags & kFlagUnfinished) ++unfinished_;
  e.name = name;
  e.track = track;
  e.external_id = id;
  e.detail = detail;
  // Framework operators (kairos_op_push) are cpu_op; every other range is user_annotation.
  e.kind = detail < data_.cpu_args.size() && data_.cpu_args[detail].cpu_op ? EventKind::kCpuOp
                                                                           : EventKind::kUserAnnotation;
  data_.events_by_track[track].push_back(e);
}

void Collector::EmitFrame(uint32_t track, uint32_t thread, const OpenFrame& f, uint64_t end,
                          bool open) {
  Event e{};
  if (!Clip(f.start, end, open, &e)) return;
  if (e.flags & kFlagUnfinished) ++python_unfinished_;
  e.track = track;
  e.detail = kNoDetail;  // FinishFrames
  e.kind = EventKind::kPythonFunction;
  std::vector<Event>& v = data_.events_by_track[track];
  frames_.push_back({f.seq, f.parent_seq, thread, track, v.size(), f.name, f.caller_line});
  v.push_back(e);
}

void Collector::FinishFrames() {
  if (frames_.empty()) return;
  // Entry order: a parent was entered before its children, so it gets the smaller id.
  std::sort(frames_.begin(), frames_.end(),
            [](const EmittedFrame& a, const EmittedFrame& b) { return a.seq < b.seq; });
  auto id_of = [&](uint32_t seq) -> uint32_t {
    if (seq == 0) return 0;
    auto it = std::lower_bound(frames_.begin(), frames_.end(), seq,
                               [](const EmittedFrame& f, uint32_t s) { return f.seq < s; });
    return it != frames_.end() && it->seq == seq ? static_cast<uint32_t>(it - frames_.begin()) + 1
                                                 : 0;
  };
  std::vector<uint32_t> ids;
  const size_t base = data_.python_frames.size();
  data_.python_frames.reserve(base + frames_.size());
  for (size_t i = 0; i < frames_.size(); ++i) {
    const EmittedFrame& f = frames_[i];
    // A frame's parent overlaps the window whenever the frame does, so it was emitted too.
    data_.python_frames.push_back(
        {static_cast<uint32_t>(i + 1), id_of(f.parent_seq), f.thread, f.caller_line});
    data_.events_by_track[f.track][f.index].detail = static_cast<uint32_t>(base + i);
    if (f.name == 0) ++python_unnamed_;
    ids.push_back(f.name);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  absl::flat_hash_map<uint32_t, StringId> names;
  ForEachPythonName(ids, [&](uint32_t id, std::string_view text) {
    names[id] = data_.strings.Intern(id == 0 || text.empty() ? std::string_view("<python name dropped>")
                                                           : text);
  });
  for (const EmittedFrame& f : frames_) data_.events_by_track[f.track][f.index].name = names[f.name];
}

// "Input Dims" / "Input type" of an op stored with raw inputs (kairos_op_push_inputs), formatted
// here on the session thread. Slots past what the thread published are not read.
void RawInputsText(ThreadState& s, uint32_t slot, TraceData& data, CpuArgs* c) {
  const StoredArgs& a = s.args[slot - 1];
  const uint32_t words = a.input_words - 1;
  if (uint64_t{slot} + InputSlots(words) > s.args_used.load(std::memory_order_relaxed)) return;
  std::string dims, types;
  if (!FormatOpInputs(reinterpret_cast<const uint64_t*>(&a + 1), words, &dims, &types)) return;
  c->input_dims = data.strings.Intern(dims);
  c->input_types = data.strings.Intern(types);
}

// The CpuArgs of args slot `slot` (1-based; 0 = none) of thread `s`, appended to
// data.cpu_args; returns its index, or kNoDetail. `names` maps the thread's name ids.
uint32_t StoreDetail(ThreadState& s, uint32_t slot, const std::vector<StringId>& names,
                     TraceData& data) {
  if (slot == 0 || slot > s.args_capacity) return kNoDetail;
  auto name_of = [&](uint32_t local) -> StringId {
    return local < names.size() ? names[local] : 0;
  };
  const StoredArgs& a = s.args[slot - 1];
  CpuArgs c{};
  c.domain = name_of(a.domain);
  c.category = name_of(a.category);
  c.category_id = a.category_id;
  c.color_argb = a.color_argb;
  c.has_color = a.has_color;
  c.payload_type = a.payload_type;
  c.payload_bits = a.payload_bits;
  c.cpu_op = a.cpu_op;
  c.input_dims = name_of(a.input_dims);
  c.input_types = name_of(a.input_types);
  if (a.cpu_op && a.input_words > 0) RawInputsText(s, slot, data, &c);
  c.sequence_nr = a.sequence_nr;
  c.fwd_thread_id = a.fwd_thread_id;
  c.record_function_id = a.record_function_id;
  c.flops = a.flops;
  c.py_line = a.py_line;
  data.cpu_args.push_back(c);
  return static_cast<uint32_t>(data.cpu_args.size() - 1);
}

// Adds the thread's ring to the tallies; false when it holds no record to read. Threads
// armed in warm-up that recorded nothing are not counted.
bool Collector::CountThread(ThreadState& s, size_t n) {
  ThreadRing& ring = *s.ring;
  if (n == 0 && ring.dropped() == 0) return false;
  ++threads_;
  kept_ += n;
  dropped_ += ring.dropped();
  names_dropped_ += s.names_dropped.load(std::memory_order_relaxed);
  names_truncated_ += s.names_truncated.load(std::memory_order_relaxed);
  args_dropped_ += s.args_dropped.load(std::memory_order_relaxed);
  return n != 0;
}

// The thread's track, named by the thread itself, the OS or the collector's name lookup
// (NVTX's names win).
uint32_t Collector::AddThreadTrack(ThreadState& s) {
  Track t;
  t.type = TrackType::kThread;
  t.pid = getpid();
  t.tid = s.tid;
  // A thread that claimed a pre-armed state names itself only at exit: a live one is named
  // here, off its path.
  t.name = !s.thread_name.empty() || s.exited.load(std::memory_order_acquire)
               ? s.thread_name
               : ThreadNameOf(s.tid);
  if (ThreadNameLookup lookup = CollectorThreadNameLookup()) {
    std::string named = lookup(s.tid);
    if (!named.empty()) t.name = std::move(named);
  }
  return data_.AddTrack(std::move(t));
}

// One ring record, in the thread's order: ranges and Python frames are matched on the
// thread's stacks, started ranges and steps kept for Finish.
void Collector::Replay(ThreadState& s, const RingRecord& r, ThreadReplay& t) {
  auto name_of = [&](uint32_t local) -> StringId {
    return local < t.names.size() ? t.names[local] : 0;
  };
  auto detail_of = [&](uint32_t slot) { return StoreDetail(s, slot, t.names, data_); };
  const bool in_window = r.raw_time >= start_raw_ && r.raw_time <= end_raw_;
  switch (r.type) {
    case RecordType::kPush:
      t.stack.push_back({r.raw_time, name_of(r.name), r.id, detail_of(r.args)});
      break;
    case RecordType::kPop:
      if (t.stack.empty()) {
        if (in_window) ++unmatched_pops_;
        break;
      }
      EmitRange(t.track, t.stack.back().start, r.raw_time, false, t.stack.back().name,
                t.stack.back().id, t.stack.back().detail);
      t.stack.pop_back();
      break;
    case RecordType::kStart:
      started_[r.id] = StartedRange{r.raw_time, name_of(r.name), t.track, detail_of(r.args)};
      break;
    case RecordType::kEnd:
      ended_[r.id] = r.raw_time;
      break;
    case RecordType::kMark:  // args are read only for a mark in the window
      if (in_window) EmitMark(t.track, r.raw_time, name_of(r.name), detail_of(r.args));
      break;
    case RecordType::kMemory:
      EmitMemory(t.track, r, s, t.stack.empty() ? 0 : t.stack.back().id);
      break;
    case RecordType::kStep:
      steps_.push_back({r.raw_time, static_cast<int64_t>(r.id), t.track});
      break;
    case RecordType::kPyCall:
      if (t.python_thread == UINT32_MAX) t.python_thread = python_threads_++;
      t.frames.push_back(
          {r.raw_time, r.name, ++frame_seq_, t.frames.empty() ? 0 : t.frames.back().seq, r.id});
      break;
    case RecordType::kPyReturn:
      if (t.frames.empty()) {
        if (in_window) ++python_unmatched_returns_;
        break;
      }
      EmitFrame(t.track, t.python_thread, t.frames.back(), r.raw_time, false);
      t.frames.pop_back();
      break;
    default:
      break;
  }
}

void Collector::AddThread(ThreadState& s) {
  ThreadRing& ring = *s.ring;
  const size_t n = ring.size();  // acquire: records [0, n) are complete
  if (!CountThread(s, n)) return;
  ThreadReplay t;
  t.track = AddThreadTrack(s);
  {  // Thread-local name ids -> trace StringIds (interned lazily).
    std::lock_guard<std::mutex> lock(s.names_mu);
    t.names.reserve(s.names.size());
    for (const std::string& str : s.names) t.names.push_back(data_.strings.Intern(str));
  }
  for (size_t i = 0; i < n; ++i) Replay(s, ring.at(i), t);
  // Pushed but never popped before the window closed.
  for (const OpenRange& o : t.stack) EmitRange(t.track, o.start, 0, true, o.name, o.id, o.detail);
  for (const OpenFrame& f : t.frames) EmitFrame(t.track, t.python_thread, f, 0, true);
}

void Collector::Finish(bool start_is_step_boundary) {
  for (const auto& [id, sr] : started_) {
    auto it = ended_.find(id);
    const bool open = it == ended_.end();
    EmitRange(sr.track, sr.start, open ? 0 : it->second, open, sr.name, id, sr.detail);
  }
  for (const auto& [id, raw] : ended_) {
    if (started_.find(id) == started_.end() && raw >= start_raw_ && raw <= end_raw_)
      ++unmatched_ends_;
  }

  // ProfilerStep#N: iteration N runs from the boundary where it begins to the next one.
  std::stable_sort(steps_.begin(), steps_.end(),
                   [](const StepMark& a, const StepMark& b) { return a.raw < b.raw; });
  std::vector<StepMark> in;
  for (const StepMark& m : steps_)
    if (m.raw >= start_raw_ && m.raw <= end_raw_) in.push_back(m);
  if (!in.empty()) {
    auto step_name = [&](int64_t it) {
      return data_.strings.Intern(absl::StrCat("ProfilerStep#", it));
    };
    if (in.front().raw > start_raw_ && in.front().iteration >= 1) {
      EmitRange(in.front().track, start_raw_, in.front().raw, false,
                step_name(in.front().iteration - 1), NextId(), kNoDetail,
                start_is_step_boundary ? 0 : kFlagBeganBeforeWindow);
    }
    for (size_t i = 0; i < in.size(); ++i) {
      if (in[i].raw >= end_raw_) break;  // a boundary at the window end opens nothing
      const bool last = i + 1 == in.size();
      EmitRange(in[i].track, in[i].raw, last ? 0 : in[i + 1].raw, last,
                step_name(in[i].iteration), NextId(), kNoDetail);
    }
  }

  data_.AddStat("cpu_dropped", dropped_ + alloc_failures);
  // A loss is said in words too: a reader of the trace (or its summary) should not have to
  // know which stat to look at to learn that most of a thread's window is missing.
  if (const uint64_t lost = dropped_ + alloc_failures; lost > 0) {
    const uint64_t all = lost + kept_;
    data_.warnings.push_back(absl::StrCat(
        "cpu: ", lost, " of ", all, " range records dropped (",
        absl::StrFormat("%.1f", 100.0 * static_cast<double>(lost) / static_cast<double>(all)),
        "%): a thread's ring was full (KAIROS_CPU_BUFFER_KB_PER_THREAD) or it was over "
        "KAIROS_MAX_THREADS; the trace misses them (cpu_dropped)"));
  }
  data_.AddStat("cpu_alloc_failures", alloc_failures);
  data_.AddStat("cpu_names_truncated", names_truncated_);
  data_.AddStat("cpu_unmatched_pops", unmatched_pops_);
  data_.AddStat("cpu_unmatched_range_ends", unmatched_ends_);
  data_.AddStat("cpu_unfinished_ranges", unfinished_);
  data_.AddStat("cpu_names_dropped", names_dropped_);
  data_.AddStat("cpu_args_dropped", args_dropped_);
  data_.AddStat("cpu_threads", threads_);
  FinishFrames();
  // Python stacks (PROFILE_WITH_STACK): written only when the tracer recorded something, so
  // traces without it keep their stats.
  if (memory_on) data_.AddStat("framework_memory_events", memory_events_);
  if (!frames_.empty() || python_unmatched_returns_ > 0) {
    data_.AddStat("python_frames", frames_.size());
    data_.AddStat("python_threads", python_threads_);
    data_.AddStat("python_unfinished_frames", python_unfinished_);
    data_.AddStat("python_unmatched_returns", python_unmatched_returns_);
    data_.AddStat("python_names_dropped", python_unnamed_);
  }
}

}  // namespace

void CpuRecorder::Collect(TraceData& data) {
  Collector c(data, start_raw_, end_raw_, clock_);
  c.memory_on = memory_on_;
  ForEachThreadStateLocked([&](ThreadState& s) {
    if (s.epoch.load(std::memory_order_acquire) == epoch_ && s.ring != nullptr) c.AddThread(s);
  });
  c.alloc_failures = TakeAllocFailures();
  c.Finish(start_is_step_boundary_);
  if (python_stacks_ && data.stats.find("python_frames") == data.stats.end()) {
    data.warnings.push_back(
        "PROFILE_WITH_STACK=true but no Python frame was recorded: Python stacks come from the "
        "kairos Python package's tracer (python3 -m kairos run, kairos.profile(with_stack=True)), "
        "which was not attached in this process or saw no Python code run in the window");
  }
  if (python_modules_ && !python_stacks_) {
    data.warnings.push_back(
        "PROFILE_WITH_MODULES=true without PROFILE_WITH_STACK=true: no nn.Module scopes "
        "recorded (they are the Python tracer's names for Module._call_impl frames, recorded "
        "with the stacks)");
  }
  if (CollectStatsHook hook = CollectorStatsHook()) hook(data);
}

}  // namespace kairos::internal
