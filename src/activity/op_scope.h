// File: op_scope.h
// Layer: kairos_activity. Framework operator scopes (kairos_op_enter / kairos_op_exit, the
// torch bridge's hot path): a cpu_op push range plus the per-thread nesting count a framework
// callback needs, kept in the recorder's own thread state. Before, the bridge kept that count
// in a thread_local of its own: the bridge is dlopen()ed, so each callback paid a dynamic TLS
// lookup (__tls_get_addr) on top of kairos' own (initial-exec) one, and re-read the recording
// flag and its own epoch; now a callback is one call that reaches one thread state.
// Threading: the recording thread only (the fields used are owner-only, reset by
// ResetForSession under the registry mutex while the owner is not recording into the state).
// Cost: PushRange's (cpu_recorder.h) plus two owner-only counters; the op's args are written
// straight into their slot (StoreOpArgs), without a RangeArgs and its name lookups.
#ifndef KAIROS_SRC_ACTIVITY_OP_SCOPE_H_
#define KAIROS_SRC_ACTIVITY_OP_SCOPE_H_

#include <cstdint>

#include "activity/cpu_recorder.h"

namespace kairos::internal {

// Nesting past this is not recorded (a runaway recursion of scopes), as ranges past the
// ring's capacity are not.
inline constexpr uint32_t kMaxOpDepth = 1u << 20;

// A framework operator's client metadata (kairos_op_args without the text forms).
struct OpMeta {
  int64_t sequence_nr = -1;
  uint64_t fwd_thread_id = 0;
  uint64_t record_function_id = 0;
  int64_t flops = -1;
};

// An op's raw inputs already in the words they are stored as (StoredArgs::input_words: per
// input its rank, its type text's address, its sizes), so the hot path copies one block
// without looking at them; the collector checks their structure (FormatOpInputs). Bounded by
// kMaxOpInputWords (what OpInputs' own bounds allow).
struct PackedInputs {
  const uint64_t* words = nullptr;
  uint32_t count = 0;
};
inline constexpr uint32_t kMaxOpInputWords = 2 * kMaxOpInputs + kMaxOpInputSizes;

// An op's inputs written by the framework straight into kairos' args area
// (kairos_op_enter_captured): `fn(ctx, words, room)` writes at most `room` words in the layout
// of PackedInputs and returns how many, or any count over `room` to leave the inputs out
// (counted in args_dropped). Called once, on the recording thread, before anything of the op
// is published; it must not throw or call into kairos. Saves the framework's own copy of the
// words and kairos' block copy of them (docs/PERFORMANCE.md, torch bridge).
struct OpCapture {
  uint32_t (*fn)(void* ctx, uint64_t* words, uint32_t room);
  void* ctx;
};

// Args slots after slot `used` that raw inputs may take: one slot stays free for each range
// the ring can still take (two records each), so raw inputs never leave a later op without
// its own args before the ring itself is full.
inline uint32_t SpareInputSlots(const ThreadState* s, uint32_t used) {
  const size_t reserve = s->ring != nullptr ? (s->ring->capacity() - s->ring->size()) / 2 : 0;
  const size_t free = s->args_capacity - used - 1;
  return static_cast<uint32_t>(free > reserve ? free - reserve : 0);
}

// The op's own slot (slot `used`, below args_capacity) as StoreArgsSlow writes it for a
// RangeArgs with cpu_op = 1 and no NVTX fields or text: those fields are zero
// (LookupName(nullptr) is 0) without looking anything up. No inputs yet.
inline StoredArgs& WriteOpSlot(ThreadState* s, const OpMeta& m, uint32_t used) {
  StoredArgs& a = s->args[used];
  a.domain = 0;
  a.category = 0;
  a.category_id = 0;
  a.color_argb = 0;
  a.has_color = 0;
  a.payload_type = 0;
  a.py_line = PythonLineNow();  // as api::OpArgs: the Python line that led to the op (stacks on)
  a.payload_bits = 0;
  a.cpu_op = 1;
  a.input_dims = 0;
  a.input_types = 0;
  a.input_words = 0;
  a.sequence_nr = m.sequence_nr;
  a.fwd_thread_id = m.fwd_thread_id;
  a.record_function_id = m.record_function_id;
  a.flops = m.flops;
  return a;
}

// Publishes the op's slot and the `slots` after it; returns the slot for the push record.
// Relaxed, as in StoreArgsSlow: only this thread writes args_used.
inline uint32_t PublishOpSlot(ThreadState* s, uint32_t used, uint32_t slots) {
  s->args_used.store(used + 1 + slots, std::memory_order_relaxed);
  return used + 1;
}

// Writes an op's args slot (cpu_op, `m`, raw inputs `in` or nullptr) and publishes it; returns
// the slot for the push record (0: the args area is full, counted in args_dropped). Stores
// what StoreArgsSlow stores for the same op given as RangeArgs with the same inputs as
// OpInputs (op_inputs.cc).
uint32_t StoreOpArgs(ThreadState* s, const OpMeta& m, const PackedInputs* in);

// The same with the inputs written by `c` (room: the spare slots, at most kMaxOpInputWords).
// Always inlined (GCC keeps a plain inline out of line here), unlike StoreOpArgs: it is the
// torch bridge's path for every op with shapes, where the call, its saved registers and the
// OpMeta copy were about 18 of kairos' ~294 instructions per op over the floor of the work
// (docs/PERFORMANCE.md, session 17).
inline __attribute__((always_inline)) uint32_t StoreOpArgsCaptured(ThreadState* s,
                                                                   const OpMeta& m,
                                                                   const OpCapture& c) {
  const uint32_t used = s->args_used.load(std::memory_order_relaxed);
  if (__builtin_expect(used >= s->args_capacity, 0)) {
    s->args_dropped.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  StoredArgs& a = WriteOpSlot(s, m, used);
  // The room: the spare slots after this one, as words, within kMaxOpInputWords. The capture
  // writes there before anything is published (args_used, the push record), so the collector
  // never reads a word half written.
  const uint64_t spare_words = uint64_t{SpareInputSlots(s, used)} * (sizeof(StoredArgs) / 8);
  const auto room =
      static_cast<uint32_t>(spare_words < kMaxOpInputWords ? spare_words : kMaxOpInputWords);
  const uint32_t words = c.fn(c.ctx, reinterpret_cast<uint64_t*>(&a + 1), room);
  uint32_t slots = 0;
  if (__builtin_expect(words <= room, 1)) {
    slots = InputSlots(words);
    a.input_words = words + 1;
  } else {
    s->args_dropped.fetch_add(1, std::memory_order_relaxed);
  }
  return PublishOpSlot(s, used, slots);
}

// Opens a scope on the calling thread: a push range named `name` whose args slot `store(s)`
// writes (0: none). `thread_key` (non-zero) is the framework's id of this thread: ExitOp
// compares with it. Returns 1 when this is the thread's first scope of the session (the
// caller sets up its per-thread state for the window then), else 0; 0 when nothing records.
template <typename StoreArgs>
inline int EnterScope(const char* name, StoreArgs&& store, uint64_t thread_key) {
  const uint32_t epoch = g_recorder.epoch.load(std::memory_order_relaxed);
  if (__builtin_expect(epoch == 0, 0)) return 0;
  ThreadState* s = ThreadStateFor(epoch);
  if (s == nullptr) return 0;
  const int first = s->op_entered == 0 ? 1 : 0;
  s->op_entered = 1;
  if (s->op_depth >= kMaxOpDepth) return first;
  ++s->op_depth;
  if (thread_key != 0) s->op_thread_key = thread_key;
  const uint32_t id = NextRangeId(s);
  if (s->depth < kMaxTrackedDepth) s->stack[s->depth] = id;
  ++s->depth;
  // The args first: the record's time is read after them, so a capture is not in the op.
  const uint32_t args = store(s);
  AppendRecord(s, RecordType::kPush, LookupName(s, name), id, args);
  return first;
}

// A scope as a cpu_op with `m` and `in` when `m` is not null, a plain range (a framework's
// user scope) when it is.
inline int EnterOp(const char* name, const OpMeta* m, const PackedInputs* in, uint64_t thread_key) {
  return EnterScope(
      name, [m, in](ThreadState* s) { return m != nullptr ? StoreOpArgs(s, *m, in) : 0u; },
      thread_key);
}

// A cpu_op with `m` whose inputs `c` writes in place.
inline int EnterOpCaptured(const char* name, const OpMeta& m, const OpCapture& c,
                           uint64_t thread_key) {
  return EnterScope(
      name, [&m, &c](ThreadState* s) { return StoreOpArgsCaptured(s, m, c); }, thread_key);
}

// Closes the innermost scope EnterOp opened on the calling thread in this session. Nothing
// happens when there is none (the scope began before the window, or in an earlier one), or
// when `thread_key` is non-zero and is not this thread's (an asynchronous scope that ends on
// another thread: its range stays open on the thread that opened it, written unfinished,
// rather than closing an unrelated range here). Never acquires a thread state.
inline void ExitOp(uint64_t thread_key) {
  const uint32_t epoch = g_recorder.epoch.load(std::memory_order_relaxed);
  if (__builtin_expect(epoch == 0, 0)) return;
  ThreadState* s = t_thread_state;
  if (s == nullptr || s->epoch.load(std::memory_order_acquire) != epoch || s->op_depth == 0)
    return;
  if (thread_key != 0 && thread_key != s->op_thread_key) return;
  --s->op_depth;
  if (s->depth > 0) --s->depth;
  AppendRecord(s, RecordType::kPop, 0, 0, 0);
}

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_OP_SCOPE_H_
