// File: cpu_recorder.h
// Layer: kairos_activity. CPU ranges, marks and iteration boundaries recorded on the
// application's threads (the hot path), and the TraceSource "cpu" that turns them into
// Events on the session's thread.
// Threading: Push/Pop/Start/End/Mark/Step/CurrentCpuRangeId may be called from any thread at
// any time, including before init and in a forked child. Each thread appends to its own
// ThreadRing; nothing on the fast path locks, allocates, makes a syscall or calls virtually.
// First use on a thread, long names and a full ring go to cold out-of-line functions; a
// thread that recorded before is re-armed for each new session by the controller during
// warm-up (ring reset there, its head resident), so its first record in a window takes the
// fast path; a thread that exists at warm-up but never recorded finds a state pre-armed for it and
// claims it with one compare-and-swap (ArmRegisteredThreads). CpuRecorder (the TraceSource)
// runs on the session thread only.
//
// Memory: a ring is address space until used; the ring feeder (ring_feeder.h, a kairos
// thread) makes its pages resident ahead of the writer, so memory grows with use and the
// application's thread takes no page fault. A thread slot (ring) is returned when its
// thread exits: the records it made in the
// open session are copied into a right-sized buffer kept until the flush, and the ring goes
// to a spare list the next new thread takes without allocating. Rings' pages are handed back
// to the kernel between sessions. Range names are interned per thread against a
// process-wide byte budget; names over kMaxNameBytes, and every new name once the budget is
// spent, are stored truncated (prefix + "...") and counted. Every allocation failure on the
// recording path becomes a counted drop, never an exception.
//
// Cost: when no session records, each call is one relaxed load of g_recorder.epoch and a
// predicted branch (measured in bench/range_benchmark.cc). When recording: a TLS load, an
// epoch compare, a pointer-keyed name-cache probe verified with strcmp (names may be
// temporaries), one ReadRawClock(), a 24-byte store and one release store.
#ifndef KAIROS_SRC_ACTIVITY_CPU_RECORDER_H_
#define KAIROS_SRC_ACTIVITY_CPU_RECORDER_H_

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "activity/ring_feeder.h"
#include "activity/thread_ring.h"
#include "util/clock.h"
#include "config/config.h"  // the sources take a Config (trace_source.h only declares it)
#include "model/trace_source.h"

namespace kairos::internal {

struct CpuThreadRegistry;  // cpu_process_state.h
struct ThreadState;        // below

// The Python tracer's line source (kairos_py_line_source, py_line_source.cc): called on the
// recording thread for an operator's or allocation's "Python line"; it reads the thread's
// innermost Python frame without the GIL, and never blocks or allocates.
using PythonLineFn = uint32_t (*)();

// Optional source of thread names set by the program (NVTX nvtxNameOsThread), consulted on
// the session thread when a thread's track is named; returns "" when it has none for `tid`.
// nullptr = none installed.
using ThreadNameLookup = std::string (*)(int64_t tid);

// Optional extra statistics added to the trace at the end of the cpu source's Collect (NVTX
// counters: the cpu source takes part in every session, whenever a source was registered).
using CollectStatsHook = void (*)(TraceData& data);

// The recorder's process-wide part, in one owner (docs/ARCHITECTURE.md "Process state"): the
// hot path reads its first two words on every record, and its slow branch (a thread's first
// record, its exit through a pthread key) reaches the rest without a root; epochs and range
// ids must be unique per process. Constant-initialised (no guard, no destructor at exit:
// threads may still record after static destructors). After fork the child zeroes `epoch`,
// replaces `registry` (CpuRecorderAfterForkChild) and keeps the rest: the counters stay
// unique, the key and the dead state stay valid, the line source's code stays mapped.
struct ProcessRecorder {
  // ---- Hot: one relaxed load per record. Alone on their cache line: the cold counters
  // below are written by threads' slow paths and must not invalidate it.
  // The recording epoch: 0 when no session records; otherwise the id of the recording
  // session. Exposed read-only to C callers through kairos_recording_flag().
  alignas(64) std::atomic<uint32_t> epoch{0};
  // The Python tracer's line source, or nullptr: set when its hook goes in for a stacks
  // window, cleared when it comes out (SetPythonLineSource).
  std::atomic<PythonLineFn> python_line_source{nullptr};

  // ---- Cold.
  // Every thread state of this process image; nullptr until the first use.
  alignas(64) std::atomic<CpuThreadRegistry*> registry{nullptr};
  // Once per process: creates `exit_key` and `dead`.
  std::once_flag init;
  // A pthread key (not a C++ thread_local destructor) notices thread exit: registering a
  // thread_local destructor allocates and glibc aborts when that fails; pthread_setspecific
  // on one of the first keys does not allocate. Key destructors also run after C++
  // thread_local destructors, so ranges recorded there are kept.
  pthread_key_t exit_key{};
  // What an exiting thread's slot points to: epoch 0 never matches a session.
  ThreadState* dead = nullptr;
  std::atomic<uint32_t> epoch_counter{0};   // ReserveCpuEpoch
  std::atomic<uint32_t> next_id_block{1};   // RefillIdBlock: range ids unique per process
  std::atomic<uint64_t> slow_acquires{0};   // first records that took the slow branch
  std::atomic<uint64_t> prearmed_claims{0};  // ... of which claimed a pre-armed state
  // The collector's hooks (SetCollectorHooks): set by NVTX injection, called on the session
  // thread; nullptr = none.
  std::atomic<ThreadNameLookup> thread_name_lookup{nullptr};
  std::atomic<CollectStatsHook> collect_stats_hook{nullptr};
};
extern ProcessRecorder g_recorder;
// Whether a session records now: the hot path's one relaxed load.
inline bool CpuRecording() { return g_recorder.epoch.load(std::memory_order_relaxed) != 0; }
// Switches recording on with `epoch` at once (the step hook's early start at the warm-up
// boundary, with the epoch the session prepared for its window).
inline void SwitchRecordingOn(uint32_t epoch) {
  g_recorder.epoch.store(epoch, std::memory_order_release);
}
// The epoch as C callers read it (kairos_recording_flag): std::atomic<uint32_t> has the size
// and representation of uint32_t, and a plain volatile read of it is what Perfetto's C ABI
// offers its callers too.
inline const volatile uint32_t* RecordingFlagWord() {
  static_assert(sizeof(g_recorder.epoch) == sizeof(uint32_t), "flag layout");
  return reinterpret_cast<const volatile uint32_t*>(&g_recorder.epoch);
}

// A framework operator's inputs as raw sizes (kairos_op_inputs): input i has ranks[i] sizes,
// one input after another in `sizes`; types[i] is its "Input type" text (unquoted, a string
// that lives as long as the process: only its address is stored, read at collection). Copied into the
// args slots after the op's own (StoreOpInputs) and formatted as "Input Dims" / "Input type"
// text by the collector, so the hot path does no formatting and no interning of shape text.
struct OpInputs {
  uint32_t count = 0;
  const uint32_t* ranks = nullptr;
  const int64_t* sizes = nullptr;
  const char* const* types = nullptr;
};
// Bounds on one op's raw inputs (past them the op is recorded without shapes, counted in
// args_dropped): a few KiB of args slots at most per op.
inline constexpr uint32_t kMaxOpInputs = 256;
inline constexpr uint32_t kMaxOpInputSizes = 1024;

// NVTX-style arguments of a range (copied into CpuArgs of the trace). The strings may be
// temporaries: they are interned like range names.
struct RangeArgs {
  const char* domain = nullptr;    // NVTX domain name; nullptr = none
  const char* category = nullptr;  // category name; nullptr = none
  uint32_t category_id = 0;
  uint32_t color_argb = 0;
  uint8_t has_color = 0;
  uint8_t payload_type = 0;  // 0 none, 1 u64, 2 i64, 3 double, 4 u32, 5 i32, 6 float
  uint64_t payload_bits = 0;
  // Framework operator (kairos_op_push): recorded as a cpu_op with these args. The strings
  // are JSON array text, interned like names.
  uint8_t cpu_op = 0;
  const char* input_dims = nullptr;
  const char* input_types = nullptr;
  int64_t sequence_nr = -1;
  uint64_t fwd_thread_id = 0;
  uint64_t record_function_id = 0;
  int64_t flops = -1;  // "flops" (kairos_op_push_flops); < 0 = none
  const OpInputs* inputs = nullptr;  // raw sizes instead of input_dims / input_types text
  uint32_t py_line = 0;  // "Python line" (PythonLineNow at the op or allocation); 0 = none
};

struct StoredArgs {
  uint32_t domain;
  uint32_t category;
  uint32_t category_id;
  uint32_t color_argb;
  uint8_t has_color;
  uint8_t payload_type;
  uint32_t py_line;  // RangeArgs::py_line (fills padding)
  uint64_t payload_bits;
  // Framework operator fields (see RangeArgs).
  uint8_t cpu_op;
  uint32_t input_dims;
  uint32_t input_types;
  // Raw inputs (OpInputs): 0 = none; else 1 + the number of 8-byte words that fill the slots
  // right after this one: per input its rank, its type text's address, then its sizes (an op
  // with no inputs stores 1: "Input Dims" [] ).
  uint32_t input_words;
  int64_t sequence_nr;
  uint64_t fwd_thread_id;
  uint64_t record_function_id;
  int64_t flops;
};

static_assert(sizeof(StoredArgs) == 80, "input_words fills padding: slots stay 80 bytes");
// Args slots that `words` raw input words occupy after the op's own slot.
inline constexpr uint32_t InputSlots(uint32_t words) {
  return static_cast<uint32_t>((uint64_t{words} * 8 + sizeof(StoredArgs) - 1) / sizeof(StoredArgs));
}

inline constexpr uint32_t kNameCacheSize = 64;   // direct-mapped, keyed by pointer
inline constexpr uint32_t kCachedNameMax = 47;   // longer names always take the cold path
inline constexpr uint32_t kMaxTrackedDepth = 128;
inline constexpr uint32_t kMaxNamesPerThread = 65536;
inline constexpr uint32_t kIdBlock = 1024;
// Longest name stored as given; longer ones are stored as a prefix + "..." (UTF-8 safe).
inline constexpr size_t kMaxNameBytes = 1024;
// Length new names are cut to once the process-wide name budget is spent.
inline constexpr size_t kOverBudgetNameBytes = 32;
// Bytes charged per stored name on top of its text (table and index entries).
inline constexpr size_t kNameEntryOverhead = 64;
// Default process-wide budget for interned range names (all threads).
inline constexpr uint64_t kDefaultNameByteBudget = 8u << 20;

struct NameCacheEntry {
  const char* ptr = nullptr;
  uint32_t id = 0;
  char bytes[kCachedNameMax + 1] = {};
};

// Per-thread recorder state. Hot fields first; the name table is shared with the collector
// under names_mu (cold paths only). `epoch` is written by the owning thread (first record
// in a session) or by the controller (re-arming in warm-up), both under the registry mutex.
struct ThreadState {
  std::atomic<uint32_t> epoch{0};  // session whose data `ring` holds
  uint32_t depth = 0;              // open push ranges (tracked up to kMaxTrackedDepth ids)
  uint32_t next_id = 0, id_limit = 0;
  ThreadRing* ring = nullptr;
  StoredArgs* args = nullptr;
  uint32_t args_capacity = 0;
  std::atomic<uint32_t> args_used{0};  // written by the owner only; read by the ring feeder
  // Framework scopes (op_scope.h, kairos_op_enter/exit), owner thread only: open ones pushed
  // in this session, whether one was entered in it, the framework's id of this thread.
  uint32_t op_depth = 0;
  uint32_t op_entered = 0;
  uint64_t op_thread_key = 0;
  uint32_t stack[kMaxTrackedDepth] = {};
  NameCacheEntry cache[kNameCacheSize];

  // Cold.
  std::unique_ptr<ThreadRing> ring_storage;  // args live in its aux area
  std::mutex names_mu;
  std::deque<std::string> names;  // [0] = ""; deque: the index's views stay valid
  absl::flat_hash_map<std::string_view, uint32_t> name_index;
  uint64_t name_bytes = 0;  // charged to the process-wide budget (released with the state)
  int64_t tid = 0;
  std::string thread_name;
  uint64_t generation = 0;
  bool holds_slot = false;  // counts against KAIROS_MAX_THREADS (registry mutex)
  // Pre-armed in warm-up for a thread that exists but never recorded, and not yet claimed
  // (controller only, registry mutex). Such a state has no owner: tid 0, no name.
  bool prearmed_unclaimed = false;
  // False from the claim of a pre-armed state until its new owner has written tid and
  // thread_name (release); the controller reads them only after an acquire load of true.
  std::atomic<bool> owner_known{true};
  std::atomic<bool> exited{false};
  std::atomic<uint64_t> names_dropped{0};
  std::atomic<uint64_t> names_truncated{0};
  std::atomic<uint64_t> args_dropped{0};
};

// The calling thread's state; nullptr before first use. Initial-exec TLS: one
// %fs-relative load, no __tls_get_addr call, even inside libkairos.so.
extern thread_local ThreadState* t_thread_state __attribute__((tls_model("initial-exec")));

// Cold paths (out of line).
ThreadState* AcquireThreadStateSlow(uint32_t epoch);
uint32_t InternNameSlow(ThreadState* s, const char* name);
uint32_t StoreArgsSlow(ThreadState* s, const RangeArgs& args);
// The end of StoreArgsSlow (op_inputs.cc): sets a.input_words for `in` (nullptr: none), writes
// its words into the slots after `a` (slot `used`), and publishes args_used = used + 1 + those
// slots. Inputs past the bounds, or past the slots not kept for the ranges the ring can still
// take, are left out and counted in args_dropped.
void StoreOpInputsAndPublish(ThreadState* s, StoredArgs& a, const OpInputs* in, uint32_t used);
void RefillIdBlock(ThreadState* s);

// Returns the calling thread's state ready for `epoch`, or nullptr (drop silently).
inline ThreadState* ThreadStateFor(uint32_t epoch) {
  ThreadState* s = t_thread_state;
  // Acquire (a plain load on x86): the controller may have re-armed this state for `epoch`
  // (reset ring, depth, args) and published it with a release store.
  if (__builtin_expect(s != nullptr && s->epoch.load(std::memory_order_acquire) == epoch, 1))
    return s;
  return AcquireThreadStateSlow(epoch);
}

inline uint32_t LookupName(ThreadState* s, const char* name) {
  if (name == nullptr) return 0;
  NameCacheEntry& e = s->cache[(reinterpret_cast<uintptr_t>(name) >> 4) & (kNameCacheSize - 1)];
  // The pointer alone is not enough: a caller may pass a reused stack buffer.
  if (e.ptr == name && std::strcmp(e.bytes, name) == 0) return e.id;
  return InternNameSlow(s, name);
}

inline uint32_t NextRangeId(ThreadState* s) {
  if (__builtin_expect(s->next_id == s->id_limit, 0)) RefillIdBlock(s);
  return s->next_id++;
}

inline void AppendRecord(ThreadState* s, RecordType type, uint32_t name, uint32_t id,
                         uint32_t args) {
  RingRecord r;
  r.raw_time = ReadRawClock();
  r.name = name;
  r.id = id;
  r.args = args;
  r.type = type;
  r.pad[0] = r.pad[1] = r.pad[2] = 0;
  s->ring->Append(r);
}

// ---- Hot path ----

inline void PushRange(const char* name, const RangeArgs* args = nullptr) {
  // Relaxed: a stale value only moves a record across a window edge, which the collector
  // clamps by timestamp anyway.
  const uint32_t epoch = g_recorder.epoch.load(std::memory_order_relaxed);
  if (__builtin_expect(epoch == 0, 1)) return;
  ThreadState* s = ThreadStateFor(epoch);
  if (s == nullptr) return;
  const uint32_t id = NextRangeId(s);
  if (s->depth < kMaxTrackedDepth) s->stack[s->depth] = id;
  ++s->depth;
  AppendRecord(s, RecordType::kPush, LookupName(s, name), id,
               args ? StoreArgsSlow(s, *args) : 0);
}

inline void PopRange() {
  const uint32_t epoch = g_recorder.epoch.load(std::memory_order_relaxed);
  if (__builtin_expect(epoch == 0, 1)) return;
  ThreadState* s = ThreadStateFor(epoch);
  if (s == nullptr) return;
  if (s->depth > 0) --s->depth;
  AppendRecord(s, RecordType::kPop, 0, 0, 0);
}

// Cross-thread range: returns an id for EndRange (0 when not recording; EndRange(0) is a
// no-op).
inline uint32_t StartRange(const char* name, const RangeArgs* args = nullptr) {
  const uint32_t epoch = g_recorder.epoch.load(std::memory_order_relaxed);
  if (__builtin_expect(epoch == 0, 1)) return 0;
  ThreadState* s = ThreadStateFor(epoch);
  if (s == nullptr) return 0;
  const uint32_t id = NextRangeId(s);
  AppendRecord(s, RecordType::kStart, LookupName(s, name), id,
               args ? StoreArgsSlow(s, *args) : 0);
  return id;
}

inline void EndRange(uint32_t id) {
  if (id == 0) return;
  const uint32_t epoch = g_recorder.epoch.load(std::memory_order_relaxed);
  if (__builtin_expect(epoch == 0, 1)) return;
  ThreadState* s = ThreadStateFor(epoch);
  if (s == nullptr) return;
  AppendRecord(s, RecordType::kEnd, 0, id, 0);
}

inline void Mark(const char* name, const RangeArgs* args = nullptr) {
  const uint32_t epoch = g_recorder.epoch.load(std::memory_order_relaxed);
  if (__builtin_expect(epoch == 0, 1)) return;
  ThreadState* s = ThreadStateFor(epoch);
  if (s == nullptr) return;
  AppendRecord(s, RecordType::kMark, LookupName(s, name), 0, args ? StoreArgsSlow(s, *args) : 0);
}

// Records the boundary where iteration `iteration` begins (called by the step hooks with
// the raw time they already read).
inline void RecordStep(int64_t iteration, uint64_t raw_time) {
  const uint32_t epoch = g_recorder.epoch.load(std::memory_order_relaxed);
  if (__builtin_expect(epoch == 0, 1)) return;
  ThreadState* s = ThreadStateFor(epoch);
  if (s == nullptr) return;
  RingRecord r{raw_time, 0, static_cast<uint32_t>(iteration), 0, RecordType::kStep, {0, 0, 0}};
  s->ring->Append(r);
}

// ---- Python frames (the python tracer, PROFILE_WITH_STACK; docs/PYTHON_STACKS.md) ----
// A Python frame entered on the calling thread: `name` is a process-wide id from
// InternPythonName (0: the name table was full; written "<python name dropped>"). Python
// frames are their own records, not push ranges: they do not move the range stack that
// CurrentCpuRangeId and CUPTI correlation read, and a Python stack out of step with the op
// ranges (a frame left by an exception while a C scope stays open) cannot unbalance them.
// Cost: the disabled check, the thread's state and one 24-byte record; no name lookup.
// `caller_line`: the line of the calling frame that made the call (0 = unknown), kept in the
// record's id.
inline void PyCall(uint32_t name, uint32_t caller_line = 0) {
  const uint32_t epoch = g_recorder.epoch.load(std::memory_order_relaxed);
  if (__builtin_expect(epoch == 0, 1)) return;
  ThreadState* s = ThreadStateFor(epoch);
  if (s == nullptr) return;
  AppendRecord(s, RecordType::kPyCall, name, caller_line, 0);
}
void SetPythonLineSource(PythonLineFn fn);
// The calling thread's Python line now, or 0 (no tracer attached, or no frame).
inline uint32_t PythonLineNow() {
  const PythonLineFn fn = g_recorder.python_line_source.load(std::memory_order_relaxed);
  return fn != nullptr ? fn() : 0;
}
// The innermost Python frame entered on the calling thread was left.
inline void PyReturn() {
  const uint32_t epoch = g_recorder.epoch.load(std::memory_order_relaxed);
  if (__builtin_expect(epoch == 0, 1)) return;
  ThreadState* s = ThreadStateFor(epoch);
  if (s == nullptr) return;
  AppendRecord(s, RecordType::kPyReturn, 0, 0, 0);
}
// ---- Framework allocator events (kairos_memory_event; docs/MEMORY.md "PyTorch") ----
// One allocation (bytes > 0) or free (bytes < 0) as the framework's caching allocator
// reports it, with its own totals after the event. Stored in an args slot (the args area is
// made resident ahead of the writer like the ring): payload_bits = address, sequence_nr =
// bytes, flops = total allocated, record_function_id = total reserved, category_id = device
// type, color_argb = device id. The collector reads it back with the same mapping
// (Collector::EmitMemory); no name, no lookup. The slot is written here field by field, not
// through a RangeArgs and StoreArgsSlow: a PyTorch op reports two of these (its result's
// allocation, an input's free), and the generic path (building the RangeArgs, its name
// lookups and input bookkeeping) was about 190 instructions per event (docs/PERFORMANCE.md,
// "PyTorch allocator events").
inline void RecordMemory(uint64_t addr, int64_t bytes, int64_t total_allocated,
                         int64_t total_reserved, int32_t device_type, int32_t device_id) {
  const uint32_t epoch = g_recorder.epoch.load(std::memory_order_relaxed);
  if (__builtin_expect(epoch == 0, 1)) return;
  ThreadState* s = ThreadStateFor(epoch);
  if (s == nullptr) return;
  // Relaxed: only this thread writes args_used (as in StoreArgsSlow).
  const uint32_t used = s->args_used.load(std::memory_order_relaxed);
  if (__builtin_expect(used >= s->args_capacity, 0)) {
    // Counted in args_dropped: an event without its values is no event.
    s->args_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  StoredArgs& a = s->args[used];
  a.domain = 0;
  a.category = 0;
  a.category_id = static_cast<uint32_t>(device_type);
  a.color_argb = static_cast<uint32_t>(device_id);
  a.has_color = 0;
  a.payload_type = 0;
  a.py_line = PythonLineNow();
  a.payload_bits = addr;
  a.cpu_op = 0;
  a.input_dims = 0;
  a.input_types = 0;
  a.input_words = 0;
  a.sequence_nr = bytes;
  a.fwd_thread_id = 0;
  a.record_function_id = static_cast<uint64_t>(total_reserved);
  a.flops = total_allocated;
  s->args_used.store(used + 1, std::memory_order_relaxed);
  AppendRecord(s, RecordType::kMemory, 0, 0, used + 1);
}

// Interns a Python frame name ("file.py(12): fn", or "nn.Module: Linear_0") in the
// process-wide table and returns its id (>= 1), or 0 when the table is full
// (kMaxPythonNames names or kMaxPythonNameBytes bytes; the caller counts it). Cold: once per
// code object (the tracer caches the id); takes the table's mutex. Names longer than
// kMaxNameBytes are cut like range names. Ids stay valid for the life of the process image
// (a forked child starts a new table: the tracer re-interns after fork).
uint32_t InternPythonName(std::string_view name);
inline constexpr uint32_t kMaxPythonNames = 1u << 20;
inline constexpr uint64_t kMaxPythonNameBytes = 16u << 20;
// Calls fn(id, name) for each id in `ids` under the table's mutex (the collector).
void ForEachPythonName(const std::vector<uint32_t>& ids,
                       const std::function<void(uint32_t, std::string_view)>& fn);

// Id of the innermost open push range on the calling thread (0 if none or not recording).
// Equals Event::external_id of that range's event. Beyond kMaxTrackedDepth nested ranges it
// returns the id at depth kMaxTrackedDepth. Cost: the disabled check plus two loads.
inline uint32_t CurrentCpuRangeId() {
  const uint32_t epoch = g_recorder.epoch.load(std::memory_order_relaxed);
  if (epoch == 0) return 0;
  ThreadState* s = t_thread_state;
  if (s == nullptr || s->epoch.load(std::memory_order_relaxed) != epoch || s->depth == 0)
    return 0;
  const uint32_t d = s->depth < kMaxTrackedDepth ? s->depth : kMaxTrackedDepth;
  return s->stack[d - 1];
}

// ---- Session side ----

struct CpuRecorderOptions {
  size_t ring_records = 0;  // 0 = from Config::cpu_buffer_kb_per_thread
  int64_t max_threads = 0;  // 0 = from Config::max_threads
  uint64_t name_byte_budget = 0;  // 0 = kDefaultNameByteBudget
};

// The "cpu" TraceSource. One instance per session object (the process root); StartWarmup
// assigns a new epoch. Besides the TraceSource calls, the session sets the exact raw-clock
// window and the converter before Collect (SetWindow), so edges are compared on raw values.
class CpuRecorder : public TraceSource {
 public:
  explicit CpuRecorder(CpuRecorderOptions options = {}) : options_(options) {}
  const char* name() const override { return "cpu"; }
  absl::Status StartWarmup(const Config& config) override;
  void StartRecording(int64_t window_start_ns) override;
  void StopRecording(int64_t window_end_ns) override;
  void Collect(TraceData& data) override;
  void Reset() override;

  // Raw window [start_raw, end_raw] and the converter Collect uses. start_is_step_boundary:
  // the window starts exactly at an iteration boundary (iteration windows), so the
  // ProfilerStep running at the start is not flagged as begun-before-window.
  void SetWindow(uint64_t start_raw, uint64_t end_raw, const ClockConverter& clock,
                 bool start_is_step_boundary);
  // Enables recording immediately (iteration windows record during warm-up so ranges that
  // straddle the first boundary are kept).
  void EnableNow();
  // Called when a request is accepted (any thread): sizes the rings for `config` and
  // reserves the epoch the next StartWarmup will use, so the step hook can switch recording
  // on at the exact warm-up boundary (g_recorder.epoch.store(epoch)) before the controller wakes.
  uint32_t Prepare(const Config& config);
  uint32_t epoch() const { return epoch_; }

 private:
  CpuRecorderOptions options_;
  uint32_t epoch_ = 0;
  std::atomic<uint32_t> next_epoch_{0};
  uint64_t start_raw_ = 0, end_raw_ = ~0ull;
  ClockConverter clock_;
  bool start_is_step_boundary_ = false;
  bool python_stacks_ = false;  // PROFILE_WITH_STACK: Collect says so when no frame came
  bool python_modules_ = false;  // PROFILE_WITH_MODULES: not implemented, Collect says so
  bool memory_on_ = false;  // PROFILE_PROFILE_MEMORY: framework allocator events kept
  // What Collect needs from the window's config (StartWarmup).
  void TakeCollectFlags(const Config& config) {
    python_stacks_ = config.with_stack;
    python_modules_ = config.with_modules;
    memory_on_ = config.profile_memory;
  }
  RingFeeder feeder_;  // runs from StartWarmup to StopRecording

 public:
  const RingFeeder& feeder() const { return feeder_; }
};

// Ring size and thread cap for threads that start recording in the next epoch (set by
// CpuRecorder::StartWarmup), and the name budget (0 = keep the current one).
void ConfigureRings(size_t ring_records, int64_t max_threads, uint64_t name_byte_budget = 0);

// Arms every live registered thread for `epoch` on the calling (controller) thread: ring
// allocated or reset with its first kArmedHeadBytes resident, depth and args cleared,
// thread name read. Threads that
// record in the window then never take the slow path. Then pre-arms one state per thread of
// the process that exists now but never recorded (from /proc/self/task, the caller
// excluded; at most kMaxPreArmed and half the free KAIROS_MAX_THREADS slots): its first record claims one with a
// single compare-and-swap, without the registry mutex, an allocation or a page fault (the
// first kPreArmedPrefaultBytes of its ring are resident, kFirstClaimHeadBytes for the first
// state claimed, the ring feeder makes the rest
// resident ahead of it; from its next window on it is a registered thread). The states belong
// to no thread in particular: any first record in the window, also of a thread created after
// warm-up, claims the next one while any is left. Returns the number of registered threads
// armed.
size_t ArmRegisteredThreads(uint32_t epoch);
inline constexpr size_t kMaxPreArmed = 256;
inline constexpr size_t kPreArmedPrefaultBytes = 64u << 10;
// The head of the first state offered (ready[0], the window's first new writer's), made
// resident in warm-up on the session thread: the ring's first 2 MiB, the one chunk the
// feeder populates as small pages (thread_ring.h). Enough for 0.84 ms of a writer streaming
// 2.5 GB/s (the floor of long_window_benchmark), within which the feeder, passing every
// 0.1 ms as the window opens (RingFeeder::Hurry), has seen it and made the next chunks
// resident as huge pages. One per process and window; returned after it when unclaimed.
inline constexpr size_t kFirstClaimHeadBytes = 2u << 20;
// Records of a registered (re-armed) thread's ring made resident in warm-up, and kept
// resident between windows; the ring feeder makes the rest resident ahead of the writer.
inline constexpr size_t kArmedHeadBytes = 256u << 10;

// One pass of the ring feeder (ring_feeder.h) over the rings recording in `epoch`, at
// steady-clock time `now_ns`: measures each writer's rate since the previous pass and makes
// the pages it reaches within kFeedLeadNs resident (at least kFeedMinLeadBytes ahead of a
// ring that has records), and at least what the ring's previous window used; at most
// kFeedChunkBytes per pass, all rings together (a 2 MiB huge chunk once begun is finished,
// ThreadRing::MakeResident); a writer found past the populated part is fed from the end of
// its 2 MiB chunk (ThreadRing::SkipPastWriter). Takes the registry
// mutex for the pass. Any kairos thread; never the application's.
// A ring seen with records for the first time in a window gets its writer's rate from its
// own timestamps (first record to now, through `clock`) at once, not one pass later.
FeedPass FeedRings(uint32_t epoch, int64_t now_ns, const FeedClock& clock = {});

// Switches recording off if `epoch` is the one recording (a cancelled armed request).
void DisableEpoch(uint32_t epoch);

// After fork, in the child: forget every thread state of the parent (they are leaked, not
// freed: their mutexes may have been held by threads that no longer exist).
void CpuRecorderAfterForkChild();

// A thread's name (its comm) read from procfs; "" when the thread is gone.
std::string ThreadNameOf(int64_t tid);

// The collector's two hooks, held by the recorder's process part (activity's collector may
// not depend on NVTX): set once when NVTX attaches, kept after fork (plain functions).
void SetCollectorHooks(ThreadNameLookup lookup, CollectStatsHook stats);
ThreadNameLookup CollectorThreadNameLookup();
CollectStatsHook CollectorStatsHook();

// For tests: number of registered thread states; bytes of interned names (all threads).
size_t RegisteredThreadCount();
uint64_t NameBytesInUse();
// For tests: how many times a record took the locked slow path to get its thread's state;
// how many first records claimed a pre-armed state; how many states are pre-armed and
// unclaimed now.
uint64_t SlowAcquiresForTest();
uint64_t PreArmedClaimsForTest();
size_t PreArmedUnclaimedForTest();

// Records dropped because a thread's recorder state could not be allocated since the last
// call (the collector reports them in cpu_dropped and cpu_alloc_failures).
uint64_t TakeAllocFailures();

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_CPU_RECORDER_H_
