// File: event.h
// Layer: kairos_model. The one compact event record every source produces and every
// consumer (writers, analysis) reads. Plain data; no threading of its own.
//
// A record is 40 bytes: kind, flags, an interned name, start/end in Unix-epoch ns on one
// clock, a track, the CUPTI correlation id, the id of the CPU range it is linked to, and
// an index into the kind's side table (kernel launch configuration, memcpy details, ...).
// Side-table rows are de-duplicated by the producer, so a kernel launched a million times
// with one configuration stores that configuration once.
#ifndef KAIROS_SRC_EVENT_H_
#define KAIROS_SRC_EVENT_H_

#include <cstddef>
#include <cstdint>

namespace kairos {

using StringId = uint32_t;  // index into StringTable; 0 is the empty string
inline constexpr uint32_t kNoDetail = 0xFFFFFFFFu;

enum class EventKind : uint8_t {
  kCpuOp = 0,            // cat "cpu_op"
  kUserAnnotation,       // cat "user_annotation" (kairos ranges, NVTX ranges, ProfilerStep#N)
  kGpuUserAnnotation,    // cat "gpu_user_annotation" (CPU range projected onto a stream)
  kKernel,               // cat "kernel"                detail: KernelDetail
  kMemcpy,               // cat "gpu_memcpy"            detail: MemcpyDetail
  kMemset,               // cat "gpu_memset"            detail: MemsetDetail
  kRuntime,              // cat "cuda_runtime"          aux: cbid
  kDriver,               // cat "cuda_driver"           aux: cbid
  kSync,                 // cat "cuda_sync"             detail: SyncDetail
  kCudaEvent,            // cat "cuda_event"            detail: SyncDetail
  kOverhead,             // cat "overhead"
  kInstant,              // cat "cpu_instant_event", ph "i" (kairos_mark, NVTX marks)
  kPythonFunction,       // cat "python_function"       detail: PythonFrame
  kCount
};
inline constexpr size_t kEventKindCount = static_cast<size_t>(EventKind::kCount);

// Kineto category string for each kind, indexed by EventKind.
inline constexpr const char* kEventCategory[kEventKindCount] = {
    "cpu_op",     "user_annotation", "gpu_user_annotation", "kernel",
    "gpu_memcpy", "gpu_memset",      "cuda_runtime",        "cuda_driver",
    "cuda_sync",  "cuda_event",      "overhead",            "cpu_instant_event",
    "python_function"};

enum EventFlags : uint8_t {
  kFlagNone = 0,
  kFlagUnfinished = 1 << 0,  // still open at the window end; end clamped ("finished": false)
  kFlagFlowOut = 1 << 1,     // runtime/driver call with GPU work: writer emits ac2g "s"
  kFlagFlowIn = 1 << 2,      // GPU work whose launch is in the trace: writer emits ac2g "f"
  kFlagBeganBeforeWindow = 1 << 3,  // start clamped to the window start
};

struct Event {
  int64_t start_ns;      // Unix epoch ns
  int64_t end_ns;        // == start_ns for instants
  StringId name;
  uint32_t track;        // index into TraceData::tracks
  uint32_t correlation;  // CUPTI correlation id; 0 = none
  uint32_t external_id;  // CPU events: own range id; GPU/runtime: linked CPU range id; 0 = none
  uint32_t detail;       // row in the kind's side table, or kNoDetail
  EventKind kind;
  uint8_t flags;         // EventFlags
  uint16_t aux;          // runtime/driver: CUPTI cbid; kInstant: kAuxMemory for [memory]; else 0
};
static_assert(sizeof(Event) == 40, "Event must stay 40 bytes");
static_assert(alignof(Event) == 8, "Event alignment");

// An instant whose aux is kAuxMemory is a "[memory]" event (an allocation or free, PyTorch's
// profile_memory format): its detail indexes TraceData::memory, not cpu_args.
inline constexpr uint16_t kAuxMemory = 1;
inline bool IsMemoryEvent(const Event& e) {
  return e.kind == EventKind::kInstant && e.aux == kAuxMemory;
}

// ---- Side tables (referenced by Event::detail) ----

struct KernelDetail {
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t device;
  uint32_t context;
  uint32_t stream;
  uint32_t registers_per_thread;
  uint32_t static_shared_memory;
  uint32_t dynamic_shared_memory;
  uint64_t queued;          // CUPTI queued timestamp converted to Unix ns, 0 if unknown
  uint32_t graph_id;        // 0 = not from a graph
  uint64_t graph_node_id;
  int32_t priority;
  uint32_t channel_id;
  uint8_t channel_type;
  uint8_t shared_memory_config;
};

// CUPTI memcpy kind values (CUpti_ActivityMemcpyKind) and memory kinds
// (CUpti_ActivityMemoryKind) are stored raw; output maps them to names.
struct MemcpyDetail {
  uint64_t bytes;
  uint8_t copy_kind;        // CUpti_ActivityMemcpyKind; 10 = PtoP
  uint8_t src_kind;         // CUpti_ActivityMemoryKind
  uint8_t dst_kind;
  uint8_t channel_type;
  uint32_t device;
  uint32_t context;
  uint32_t stream;
  uint32_t src_device;      // peer-to-peer only
  uint32_t dst_device;
  uint32_t src_context;
  uint32_t dst_context;
  uint32_t graph_id;
  uint64_t graph_node_id;
  uint32_t channel_id;
};

struct MemsetDetail {
  uint64_t bytes;
  uint8_t memory_kind;      // CUpti_ActivityMemoryKind
  uint8_t channel_type;
  uint32_t device;
  uint32_t context;
  uint32_t stream;
  uint32_t graph_id;
  uint64_t graph_node_id;
  uint32_t channel_id;
};

struct SyncDetail {
  uint8_t sync_type;        // CUpti_ActivitySynchronizationType
  uint32_t device;
  uint32_t context;
  uint32_t stream;          // 0xFFFFFFFF = no stream
  uint32_t cuda_event_id;
  int64_t wait_on_stream;   // -1 = unknown
  uint32_t wait_on_event_record_correlation;  // 0 = unknown
};

// One allocation or free: the args of a "[memory]" instant (Kineto's keys "Device Type",
// "Device Id", "Addr", "Bytes", "Total Allocated", "Total Reserved"), one row per event.
// Totals are absolute: the device's baseline at window open plus what the window allocated
// minus what it freed (docs/MEMORY.md).
struct MemoryDetail {
  uint64_t addr;
  int64_t bytes;             // > 0 allocation, < 0 free or release
  int64_t total_allocated;   // on this device after the event
  int64_t total_reserved;
  uint64_t pool;             // CUDA memory pool address; 0 = none
  int32_t device;            // "Device Id": device ordinal; -1 = host
  uint32_t stream;           // 0xFFFFFFFF = none (not written)
  uint8_t device_type;       // "Device Type": c10::DeviceType, 0 = CPU, 1 = CUDA
  uint8_t memory_kind;       // CUpti_ActivityMemoryKind; 0 = unknown (not written)
  uint8_t flags;             // MemoryFlags
  // "Python line": the line the innermost Python frame on the allocating thread was at
  // (PROFILE_WITH_STACK with the kairos tracer); 0 = unknown. Fills padding.
  uint32_t py_line;
};
// Bytes and totals are kept within +-2^50 (1 PiB) wherever they are read from outside (CUPTI,
// a trace file), and sums over them saturate: a hostile trace cannot overflow them.
inline constexpr int64_t kMemoryBytesLimit = int64_t{1} << 50;
inline int64_t ClampMemoryBytes(int64_t v) {
  return v > kMemoryBytesLimit ? kMemoryBytesLimit : v < -kMemoryBytesLimit ? -kMemoryBytesLimit : v;
}
inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? INT64_MAX : INT64_MIN;
}
enum MemoryFlags : uint8_t {
  kMemoryFreeBeforeWindow = 1 << 0,  // frees an address allocated before the window (baseline)
  kMemoryAsync = 1 << 1,             // stream-ordered (cudaMallocAsync / cudaFreeAsync)
  // A framework allocator's event (kairos_memory_event): its totals are the allocator's own,
  // kept as reported (ComputeMemoryTotals computes only CUPTI's).
  kMemoryOwnTotals = 1 << 2,
};
// A framework allocator's event (PyTorch's caching allocator: blocks inside segments it holds)
// rather than CUPTI's record of a driver allocation (the segments themselves): the former
// carries no memory kind, in kairos' own events and in every trace read back. The two views
// of one device are kept apart everywhere (totals, counter tracks, the summary).
inline bool IsAllocatorMemory(const MemoryDetail& m) {
  return (m.flags & kMemoryOwnTotals) != 0 || m.memory_kind == 0;
}

// Args of CPU ranges that came from NVTX (or carried user payloads).
struct CpuArgs {
  StringId domain;          // 0 = none
  StringId category;        // 0 = none
  uint32_t category_id;
  uint32_t color_argb;      // valid when has_color
  uint8_t has_color;
  uint8_t payload_type;     // 0 none, 1 u64, 2 i64, 3 double, 4 u32, 5 i32, 6 float
  uint64_t payload_bits;    // raw payload value bits
  // Framework operators (the torch bridge, kairos_op_push): the range is a cpu_op event with
  // PyTorch's client metadata. input_dims / input_types hold JSON array text.
  uint8_t cpu_op;           // 1: EventKind::kCpuOp with the fields below
  StringId input_dims;      // "Input Dims", e.g. [[2, 3], [3, 4]]; 0 = none
  StringId input_types;     // "Input type", e.g. ["float", "float"]; 0 = none
  int64_t sequence_nr;      // "Sequence number" (with "Fwd thread id") when >= 0
  uint64_t fwd_thread_id;
  uint64_t record_function_id;
  // "flops": the operator's floating-point operations (PROFILE_WITH_FLOPS, the torch
  // bridge's formulas, docs/FLOPS.md); < 0 = none.
  int64_t flops = -1;
  // 1: `flops` was computed from a read trace's shapes (not written by the trace: writers
  // leave it out so a converted trace gains no arg).
  uint8_t flops_computed = 0;
  // "Python line": the line the innermost Python frame on the op's thread was at when the op
  // began (PROFILE_WITH_STACK with the kairos tracer; docs/PYTHON_STACKS.md); 0 = unknown.
  uint32_t py_line = 0;
};

// A Python frame (python_function event, PROFILE_WITH_STACK): PyTorch's "Python id" (unique in
// the trace, 1-based), "Python parent id" (the enclosing Python frame's id; 0 = none, written
// absent) and "Python thread" (the thread's index among the trace's Python threads).
struct PythonFrame {
  uint32_t id;
  uint32_t parent_id;
  uint32_t thread;
  // "Python caller line" (kairos): the line of the parent frame at which this frame was
  // called; 0 = unknown (a root, a frame entered before the window, a trace from elsewhere).
  uint32_t caller_line = 0;
};

}  // namespace kairos

#endif  // KAIROS_SRC_EVENT_H_
