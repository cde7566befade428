// File: event_args.h
// Layer: kairos_output. THE argument mapping of every event kind: one visitor enumerates an
// event's (key, value) args in the key order of trace-format-kineto-json.md §4, and both
// trace writers consume it (the JSON writer straight into "args", the Perfetto writer as the
// per-row detail text it interns); the readers map args back through the same key table
// (arg_keys below). Display names of memcpy/memset/sync events live here too.
// Threading: an EventArgs is used by one thread (it caches occupancy per kernel row).
#ifndef KAIROS_SRC_OUTPUT_EVENT_ARGS_H_
#define KAIROS_SRC_OUTPUT_EVENT_ARGS_H_

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "model/detail_values.h"
#include "model/event.h"
#include "model/gpu_counters.h"
#include "json/json_writer.h"
#include "model/occupancy.h"
#include "model/trace_data.h"

namespace kairos::internal {

// Kineto's arg keys, spelled once (writers and readers).
namespace arg_keys {
inline constexpr char kExternalId[] = "External id";
inline constexpr char kQueued[] = "queued";
inline constexpr char kDevice[] = "device";
inline constexpr char kContext[] = "context";
inline constexpr char kStream[] = "stream";
inline constexpr char kCorrelation[] = "correlation";
inline constexpr char kRegistersPerThread[] = "registers per thread";
inline constexpr char kSharedMemory[] = "shared memory";
inline constexpr char kBlocksPerSm[] = "blocks per SM";
inline constexpr char kWarpsPerSm[] = "warps per SM";
inline constexpr char kGrid[] = "grid";
inline constexpr char kBlock[] = "block";
inline constexpr char kEstOccupancy[] = "est. achieved occupancy %";
inline constexpr char kGraphId[] = "graph id";
inline constexpr char kGraphNodeId[] = "graph node id";
inline constexpr char kChannel[] = "channel";
inline constexpr char kChannelType[] = "channel_type";
inline constexpr char kFromDevice[] = "fromDevice";
inline constexpr char kInDevice[] = "inDevice";
inline constexpr char kToDevice[] = "toDevice";
inline constexpr char kFromContext[] = "fromContext";
inline constexpr char kInContext[] = "inContext";
inline constexpr char kToContext[] = "toContext";
inline constexpr char kBytes[] = "bytes";
inline constexpr char kBandwidth[] = "memory bandwidth (GB/s)";
inline constexpr char kSyncKind[] = "cuda_sync_kind";
inline constexpr char kWaitOnStream[] = "wait_on_stream";
inline constexpr char kWaitOnEventRecordCorr[] = "wait_on_cuda_event_record_corr_id";
inline constexpr char kWaitOnEventId[] = "wait_on_cuda_event_id";
inline constexpr char kEventId[] = "event_id";
inline constexpr char kCbid[] = "cbid";
inline constexpr char kFinished[] = "finished";
inline constexpr char kDomain[] = "domain";
// PyTorch operator metadata (cpu_op events from the torch bridge; Kineto's key names).
inline constexpr char kRecordFunctionId[] = "Record function id";
inline constexpr char kInputDims[] = "Input Dims";
inline constexpr char kInputType[] = "Input type";
inline constexpr char kFlops[] = "flops";
inline constexpr char kSequenceNumber[] = "Sequence number";
inline constexpr char kFwdThreadId[] = "Fwd thread id";
inline constexpr char kCategory[] = "category";
// python_function events (PyTorch's with_stack key names).
inline constexpr char kPythonId[] = "Python id";
inline constexpr char kPythonParentId[] = "Python parent id";
inline constexpr char kPythonThread[] = "Python thread";
// kairos' own (docs/PYTHON_STACKS.md): the calling frame's line of a python_function, and the
// innermost Python frame's line when a cpu_op or [memory] event began.
inline constexpr char kPythonCallerLine[] = "Python caller line";
inline constexpr char kPythonLine[] = "Python line";
inline constexpr char kColor[] = "color";
inline constexpr char kPayload[] = "payload";
// NCCL operations on their kernels (PyTorch record_param_comms names; HTA reads them).
inline constexpr char kCollectiveName[] = "Collective name";
inline constexpr char kInMsgNelems[] = "In msg nelems";
inline constexpr char kOutMsgNelems[] = "Out msg nelems";
inline constexpr char kDtype[] = "dtype";
inline constexpr char kGroupSize[] = "Group size";
inline constexpr char kProcessGroupRanks[] = "Process Group Ranks";
// "[memory]" events (PyTorch's profile_memory keys, in its order), then kairos' own.
inline constexpr char kDeviceType[] = "Device Type";
inline constexpr char kDeviceId[] = "Device Id";
inline constexpr char kAddr[] = "Addr";
inline constexpr char kMemBytes[] = "Bytes";
inline constexpr char kTotalAllocated[] = "Total Allocated";
inline constexpr char kTotalReserved[] = "Total Reserved";
inline constexpr char kMemoryKind[] = "memory kind";
inline constexpr char kPool[] = "pool";
inline constexpr char kFreedBeforeWindow[] = "allocated before window";
inline constexpr char kAsync[] = "async";
}  // namespace arg_keys

// "HtoD", ..., "PtoP", else "<unknown>" (MemcpyKindValue).
const char* MemcpyKindName(uint8_t kind);
// True when `t` is a plain JSON array of integers, escape-free ASCII strings, or such arrays
// (what the torch bridge writes for "Input Dims" / "Input type"). Only such text is written
// raw; anything else a caller passes through the C ABI is written as a JSON string, so it can
// never make a trace invalid.
bool IsPlainJsonArray(std::string_view t);
// "Pageable", "Device", ... else "Unknown" (MemoryKindValue).
const char* MemoryKindName(uint8_t kind);
// "Event Sync", "Stream Wait Event", "Stream Sync", "Context Sync", else "Unknown Sync".
const char* SyncKindName(uint8_t sync_type);
inline constexpr uint8_t kMemcpyKindCount = kMemcpyPtoP + 1;
inline constexpr uint8_t kMemoryKindCount = kMemoryManagedStatic + 1;

// The event name both writers show: memcpy, memset and sync names derive from the detail
// row ("Memcpy HtoD (Pageable -> Device)"), a kernel named "kernel" shows as "Kernel".
// `scratch` backs the returned view when the name is derived.
std::string_view DisplayName(const TraceData& data, const Event& e, std::string* scratch);
// A key equal for two events exactly when their DisplayName is equal (given one TraceData):
// the StringId for plain names, a value >= 2^32 for derived ones. Keys name interning.
uint64_t DisplayNameKey(const TraceData& data, const Event& e);
// Which side table `kind` indexes (0 = none); keys the per-row interning of detail args.
uint32_t DetailTableOf(EventKind kind);
// The same for one event: "[memory]" instants index their own table (8; 7 is python_function's:
// sharing it made the Perfetto writer give a [memory] event a Python frame's cached args).
inline uint32_t DetailTableOf(const Event& e) { return IsMemoryEvent(e) ? 8 : DetailTableOf(e.kind); }

enum class ArgScope : uint8_t {
  kEvent,      // all of an event's args: the JSON writer's "args" object
  kDetailRow,  // only what the side-table row decides (no External id, correlation,
               // bandwidth or finished): the Perfetto writer interns this once per row
};

// A sink receives each arg as it is enumerated. Keys are the arg_keys literals (no escaping
// needed); string values are client data and must be escaped by the sink.
//   void Uint(const char* key, uint64_t v);   void Int(const char* key, int64_t v);
//   void Double(const char* key, double v);    void Str(const char* key, std::string_view v);
//   void Dim3(const char* key, const uint32_t v[3]);
//   void Literal(const char* key, std::string_view json);  // "false", "null", "\"inf\"", [[2, 3]]
class EventArgs {
 public:
  explicit EventArgs(const TraceData& data);

  // Enumerates `e`'s args into `sink`. Returns false (enumerating nothing) when `scope` is
  // kDetailRow and the event has no valid detail row.
  template <typename Sink>
  bool Visit(const Event& e, ArgScope scope, Sink& sink);
  // Only the measured PM-sampling means of kernel `e` (part of Visit's kEvent scope); false,
  // writing nothing, when it has none.
  template <typename Sink>
  bool VisitMeasured(const Event& e, Sink& s) const {
    if (e.kind != EventKind::kKernel || e.correlation == 0 || data_.kernel_counters.empty()) return false;
    const KernelCounters* kc = FindKernelCounters(data_, e.correlation);
    if (kc == nullptr) return false;
    if (kc->sm_active_pct >= 0) s.Double(kArgSmActive, kc->sm_active_pct);
    if (kc->occupancy_pct >= 0) s.Double(kArgOccupancy, kc->occupancy_pct);
    s.Uint(kArgPmSamples, kc->samples);
    return true;
  }
  // Only the NCCL operation args of kernel `e` (part of Visit's kEvent scope); false, writing
  // nothing, when `e` carried no operation. The Perfetto writer interns their text.
  template <typename Sink>
  bool VisitCollective(const Event& e, Sink& sink) const {
    if (e.kind != EventKind::kKernel || e.correlation == 0 || data_.collectives.empty()) return false;
    const CollectiveRecord* c = data_.FindCollective(e.correlation);
    if (c == nullptr) return false;
    Collective(*c, sink);
    return true;
  }

 private:
  template <typename Sink> void Kernel(const Event& e, const KernelDetail& k, bool full, Sink& s);
  // A kernel's args that depend on its detail row alone, in two runs around the launch's
  // correlation (Kineto's order): its place (queued, device, context, stream), then its
  // shape (registers through graph and channel). Kernel() hands each run to the sink's
  // RowArgs, which may replay text it kept for the row instead of formatting it again.
  // The runs' numbers for RowArgs (a sink keeping text keeps RowTextCache::kParts per row).
  static constexpr int kKernelPlacePart = 0, kKernelShapePart = 1;
  template <typename Sink> static void KernelPlace(const KernelDetail& k, Sink& s);
  template <typename Sink> void KernelShape(uint32_t row, const KernelDetail& k, Sink& s);
  template <typename Sink> void Memcpy(const Event& e, const MemcpyDetail& m, bool full, Sink& s);
  template <typename Sink> void Memset(const Event& e, const MemsetDetail& m, bool full, Sink& s);
  // The args memcpy and memset share after their device/context keys.
  template <typename Sink, typename Detail>
  static void TransferTail(const Event& e, const Detail& d, bool full, Sink& s);
  template <typename Sink> void Sync(const Event& e, const SyncDetail& d, bool full, Sink& s);
  template <typename Sink> void Cpu(const CpuArgs& a, Sink& s) const;
  template <typename Sink>
  static void Memory(const Event& e, const MemoryDetail& m, bool full, Sink& s);
  template <typename Sink> void Collective(const CollectiveRecord& c, Sink& s) const;
  template <typename Sink> static void Stream(uint32_t stream, Sink& s);
  template <typename Sink> static void Bandwidth(const Event& e, uint64_t bytes, Sink& s);
  template <typename Sink>
  static void GraphAndChannel(uint32_t graph_id, uint64_t graph_node_id, uint32_t channel_id,
                              uint8_t channel_type, Sink& s);
  const DeviceInfo* Device(uint32_t id) const {
    return id < devices_by_id_.size() ? devices_by_id_[id] : nullptr;
  }
  // Kineto's "est. achieved occupancy %" of kernel row `row`, computed once per row.
  int32_t OccupancyPercent(uint32_t row, const KernelDetail& k, const DeviceInfo& dev);

  const TraceData& data_;
  std::vector<const DeviceInfo*> devices_by_id_;
  std::vector<int32_t> occupancy_pct_;  // per kernel row; -1 = not yet computed
};

// A sink that writes the args as one compact JSON object with THE writer (the Perfetto
// writer's per-row detail text).
class JsonObjectArgsSink {
 public:
  explicit JsonObjectArgsSink(JsonWriter& w) : w_(w) { w_.BeginObject(); }
  void Uint(const char* key, uint64_t v) { w_.Key(key).Uint(v); }
  void Int(const char* key, int64_t v) { w_.Key(key).Int(v); }
  void Double(const char* key, double v) { w_.Key(key).Double(v); }
  void Str(const char* key, std::string_view v) { w_.Key(key).String(v); }
  void Literal(const char* key, std::string_view json) { w_.Key(key).RawValue(json); }
  void Dim3(const char* key, const uint32_t v[3]) {
    w_.Key(key).BeginArray().Uint(v[0]).Uint(v[1]).Uint(v[2]).EndArray();
  }
  // Row-constant args (EventArgs::Kernel): formatted each time here.
  template <typename Fn> void RowArgs(uint32_t /*row*/, int /*part*/, Fn&& fn) { fn(*this); }
  void Close() { w_.EndObject(); }

 private:
  JsonWriter& w_;
};

// ---- The mapping (templates: each sink gets its own inlined copy) ----

template <typename Sink>
bool EventArgs::Visit(const Event& e, ArgScope scope, Sink& s) {
  const bool full = scope == ArgScope::kEvent;
  const uint32_t row = e.detail;
  if (full && e.external_id != 0) s.Uint(arg_keys::kExternalId, e.external_id);
  bool has_row = false;
  switch (e.kind) {
    case EventKind::kCpuOp:
    case EventKind::kUserAnnotation:
    case EventKind::kInstant:
      if (IsMemoryEvent(e)) {
        if ((has_row = row < data_.memory.size())) Memory(e, data_.memory[row], full, s);
        break;
      }
      if ((has_row = row < data_.cpu_args.size())) Cpu(data_.cpu_args[row], s);
      break;
    case EventKind::kKernel:
      if ((has_row = row < data_.kernels.size())) Kernel(e, data_.kernels[row], full, s);
      break;
    case EventKind::kMemcpy:
      if ((has_row = row < data_.memcpys.size())) Memcpy(e, data_.memcpys[row], full, s);
      break;
    case EventKind::kMemset:
      if ((has_row = row < data_.memsets.size())) Memset(e, data_.memsets[row], full, s);
      break;
    case EventKind::kSync:
    case EventKind::kCudaEvent:
      if ((has_row = row < data_.syncs.size())) Sync(e, data_.syncs[row], full, s);
      break;
    case EventKind::kRuntime:
    case EventKind::kDriver:
      if (full) {
        s.Uint(arg_keys::kCbid, e.aux);
        s.Uint(arg_keys::kCorrelation, e.correlation);
      }
      break;
    case EventKind::kPythonFunction:
      if ((has_row = row < data_.python_frames.size())) {
        // PyTorch writes "Python parent id" only for a frame with a Python parent.
        const PythonFrame& f = data_.python_frames[row];
        s.Uint(arg_keys::kPythonId, f.id);
        if (f.parent_id != 0) s.Uint(arg_keys::kPythonParentId, f.parent_id);
        s.Uint(arg_keys::kPythonThread, f.thread);
        if (f.caller_line != 0) s.Uint(arg_keys::kPythonCallerLine, f.caller_line);
      }
      break;
    case EventKind::kGpuUserAnnotation:
    case EventKind::kOverhead:
    case EventKind::kCount:
      break;
  }
  if (!full) return has_row;
  // A GPU record whose row is missing still links to its launch.
  if (!has_row && DetailTableOf(e.kind) != 0 && DetailTableOf(e.kind) != DetailTableOf(EventKind::kCpuOp))
    s.Uint(arg_keys::kCorrelation, e.correlation);
  if (e.flags & kFlagUnfinished) s.Literal(arg_keys::kFinished, "false");
  return true;
}

template <typename Sink>
void EventArgs::Stream(uint32_t stream, Sink& s) {
  // CUPTI's "no stream" is written -1 (HTA reads -1 as "not a GPU row").
  if (stream == kNoStream) {
    s.Int(arg_keys::kStream, -1);
  } else {
    s.Uint(arg_keys::kStream, stream);
  }
}

template <typename Sink>
void EventArgs::Bandwidth(const Event& e, uint64_t bytes, Sink& s) {
  const int64_t dur = e.end_ns - e.start_ns;
  // bytes per ns == GB/s; a zero duration has no meaningful bandwidth, so the key is omitted.
  if (dur > 0) s.Double(arg_keys::kBandwidth, static_cast<double>(bytes) / dur);
}

template <typename Sink>
void EventArgs::GraphAndChannel(uint32_t graph_id, uint64_t graph_node_id, uint32_t channel_id,
                                uint8_t channel_type, Sink& s) {
  // Always written, 0 when not in a graph (Kineto parity: HTA groups by graph id).
  s.Uint(arg_keys::kGraphId, graph_id);
  s.Uint(arg_keys::kGraphNodeId, graph_node_id);
  if (channel_type != 0) {
    s.Uint(arg_keys::kChannel, channel_id);
    s.Uint(arg_keys::kChannelType, channel_type);
  }
}

template <typename Sink>
void EventArgs::Kernel(const Event& e, const KernelDetail& k, bool full, Sink& s) {
  const uint32_t row = e.detail;
  s.RowArgs(row, kKernelPlacePart, [&k](auto& out) { KernelPlace(k, out); });
  if (full) s.Uint(arg_keys::kCorrelation, e.correlation);
  s.RowArgs(row, kKernelShapePart, [this, row, &k](auto& out) { KernelShape(row, k, out); });
  // Measured PM-sampling means of this launch (per event, so not part of a detail row).
  if (full) VisitMeasured(e, s);
  if (full && !data_.collectives.empty() && e.correlation != 0) {
    if (const CollectiveRecord* c = data_.FindCollective(e.correlation)) Collective(*c, s);
  }
}

template <typename Sink>
void EventArgs::KernelPlace(const KernelDetail& k, Sink& s) {
  s.Uint(arg_keys::kQueued, k.queued);
  s.Uint(arg_keys::kDevice, k.device);
  s.Uint(arg_keys::kContext, k.context);
  s.Uint(arg_keys::kStream, k.stream);
}

template <typename Sink>
void EventArgs::KernelShape(uint32_t row, const KernelDetail& k, Sink& s) {
  s.Uint(arg_keys::kRegistersPerThread, k.registers_per_thread);
  const uint64_t smem = static_cast<uint64_t>(k.static_shared_memory) + k.dynamic_shared_memory;
  s.Uint(arg_keys::kSharedMemory, smem);
  const uint64_t blocks = static_cast<uint64_t>(k.grid[0]) * k.grid[1] * k.grid[2];
  const uint64_t threads = static_cast<uint64_t>(k.block[0]) * k.block[1] * k.block[2];
  const DeviceInfo* dev = Device(k.device);
  const int32_t warp_size = dev && dev->warp_size > 0 ? dev->warp_size : 32;
  const double warps_per_block = static_cast<double>((threads + warp_size - 1) / warp_size);
  if (dev && dev->num_sms > 0) {
    const double blocks_per_sm = static_cast<double>(blocks) / dev->num_sms;
    s.Double(arg_keys::kBlocksPerSm, blocks_per_sm);
    s.Double(arg_keys::kWarpsPerSm, blocks_per_sm * warps_per_block);
  } else {
    // Kineto's compatibility spelling for an unknown SM count; the only non-finite value
    // written as a string (trace-format-kineto-json.md §9).
    s.Literal(arg_keys::kBlocksPerSm, "\"inf\"");
    s.Literal(arg_keys::kWarpsPerSm, "null");
  }
  s.Dim3(arg_keys::kGrid, k.grid);
  s.Dim3(arg_keys::kBlock, k.block);
  if (dev && dev->num_sms > 0) s.Int(arg_keys::kEstOccupancy, OccupancyPercent(row, k, *dev));
  GraphAndChannel(k.graph_id, k.graph_node_id, k.channel_id, k.channel_type, s);
}

template <typename Sink>
void EventArgs::Collective(const CollectiveRecord& c, Sink& s) const {
  s.Str(arg_keys::kCollectiveName, CollectiveTraceName(c.func, c.coalesced));
  s.Uint(arg_keys::kInMsgNelems, c.in_nelems);
  s.Uint(arg_keys::kOutMsgNelems, c.out_nelems);
  if (c.dtype != CollectiveDtype::kUnknown) s.Str(arg_keys::kDtype, CollectiveDtypeTraceName(c.dtype));
  s.Int(arg_keys::kGroupSize, c.comm_size);
  // NCCL tells a communicator's size, not its members' global ranks: the list is known only
  // for one that spans the whole job.
  if (c.comm_size > 1 && c.comm_size == data_.distributed.world_size) {
    s.Str(arg_keys::kProcessGroupRanks, AllRanksJson(c.comm_size));
  }
}

template <typename Sink, typename Detail>
void EventArgs::TransferTail(const Event& e, const Detail& d, bool full, Sink& s) {
  Stream(d.stream, s);
  if (full) s.Uint(arg_keys::kCorrelation, e.correlation);
  s.Uint(arg_keys::kBytes, d.bytes);
  if (full) Bandwidth(e, d.bytes, s);
  GraphAndChannel(d.graph_id, d.graph_node_id, d.channel_id, d.channel_type, s);
}

template <typename Sink>
void EventArgs::Memcpy(const Event& e, const MemcpyDetail& m, bool full, Sink& s) {
  if (m.copy_kind == kMemcpyPtoP) {  // CUPTI MEMCPY2 fields
    s.Uint(arg_keys::kFromDevice, m.src_device);
    s.Uint(arg_keys::kInDevice, m.device);
    s.Uint(arg_keys::kToDevice, m.dst_device);
    s.Uint(arg_keys::kFromContext, m.src_context);
    s.Uint(arg_keys::kInContext, m.context);
    s.Uint(arg_keys::kToContext, m.dst_context);
  } else {
    s.Uint(arg_keys::kDevice, m.device);
    s.Uint(arg_keys::kContext, m.context);
  }
  TransferTail(e, m, full, s);
}

template <typename Sink>
void EventArgs::Memset(const Event& e, const MemsetDetail& m, bool full, Sink& s) {
  s.Uint(arg_keys::kDevice, m.device);
  s.Uint(arg_keys::kContext, m.context);
  TransferTail(e, m, full, s);
}

template <typename Sink>
void EventArgs::Sync(const Event& e, const SyncDetail& d, bool full, Sink& s) {
  if (e.kind == EventKind::kCudaEvent) {
    s.Uint(arg_keys::kEventId, d.cuda_event_id);
  } else {
    s.Str(arg_keys::kSyncKind, SyncKindName(d.sync_type));
    if (d.sync_type == kSyncEvent || d.sync_type == kSyncStreamWaitEvent) {
      s.Int(arg_keys::kWaitOnStream, d.wait_on_stream);
      // Unknown (no CUDA_EVENT record of the waited-on event) is -1, as libkineto writes it
      // and as HTA defaults it; CUPTI correlation ids start at 1, so 0 only means unknown.
      if (d.wait_on_event_record_correlation == 0) {
        s.Int(arg_keys::kWaitOnEventRecordCorr, -1);
      } else {
        s.Uint(arg_keys::kWaitOnEventRecordCorr, d.wait_on_event_record_correlation);
      }
      s.Uint(arg_keys::kWaitOnEventId, d.cuda_event_id);
    }
  }
  Stream(d.stream, s);
  if (full) s.Uint(arg_keys::kCorrelation, e.correlation);
  s.Uint(arg_keys::kDevice, d.device);
  s.Uint(arg_keys::kContext, d.context);
}

template <typename Sink>
void EventArgs::Memory(const Event& e, const MemoryDetail& m, bool full, Sink& s) {
  // PyTorch's six keys first, in its order: tools that read PyTorch traces read these.
  s.Int(arg_keys::kDeviceType, m.device_type);
  s.Int(arg_keys::kDeviceId, m.device);
  s.Uint(arg_keys::kAddr, m.addr);
  s.Int(arg_keys::kMemBytes, m.bytes);
  s.Int(arg_keys::kTotalAllocated, m.total_allocated);
  s.Int(arg_keys::kTotalReserved, m.total_reserved);
  if (m.memory_kind != 0) s.Str(arg_keys::kMemoryKind, MemoryKindName(m.memory_kind));
  if (m.stream != kNoStream) s.Uint(arg_keys::kStream, m.stream);
  if (m.pool != 0) s.Uint(arg_keys::kPool, m.pool);
  if (m.flags & kMemoryAsync) s.Literal(arg_keys::kAsync, "true");
  if (m.flags & kMemoryFreeBeforeWindow) s.Literal(arg_keys::kFreedBeforeWindow, "true");
  if (m.py_line != 0) s.Uint(arg_keys::kPythonLine, m.py_line);
  if (full && e.correlation != 0) s.Uint(arg_keys::kCorrelation, e.correlation);
}

template <typename Sink>
void EventArgs::Cpu(const CpuArgs& a, Sink& s) const {
  if (a.cpu_op) {  // PyTorch's cpu_op metadata, in Kineto's key order
    s.Uint(arg_keys::kRecordFunctionId, a.record_function_id);
    const auto json_text = [&](const char* key, StringId id) {
      if (id == 0) return;
      const std::string_view t = data_.strings.Get(id);
      if (IsPlainJsonArray(t)) {
        s.Literal(key, t);
      } else {
        s.Str(key, t);
      }
    };
    json_text(arg_keys::kInputDims, a.input_dims);
    json_text(arg_keys::kInputType, a.input_types);
    if (a.sequence_nr >= 0) {
      s.Int(arg_keys::kSequenceNumber, a.sequence_nr);
      s.Uint(arg_keys::kFwdThreadId, a.fwd_thread_id);
    }
    if (a.flops >= 0 && a.flops_computed == 0) s.Int(arg_keys::kFlops, a.flops);
    if (a.py_line != 0) s.Uint(arg_keys::kPythonLine, a.py_line);
    return;
  }
  if (a.domain != 0) s.Str(arg_keys::kDomain, data_.strings.Get(a.domain));
  if (a.category != 0) {
    s.Str(arg_keys::kCategory, data_.strings.Get(a.category));
  } else if (a.category_id != 0) {
    s.Uint(arg_keys::kCategory, a.category_id);
  }
  if (a.has_color) {
    static constexpr char kHex[] = "0123456789abcdef";
    char color[8] = {'#'};
    for (int i = 0; i < 6; ++i) color[1 + i] = kHex[(a.color_argb >> (20 - 4 * i)) & 0xF];
    s.Str(arg_keys::kColor, std::string_view(color, 7));
  }
  const uint64_t bits = a.payload_bits;
  switch (a.payload_type) {
    case kPayloadU64: s.Uint(arg_keys::kPayload, bits); break;
    case kPayloadI64: s.Int(arg_keys::kPayload, static_cast<int64_t>(bits)); break;
    case kPayloadDouble: {
      double d;
      std::memcpy(&d, &bits, sizeof(d));
      s.Double(arg_keys::kPayload, d);
      break;
    }
    case kPayloadU32: s.Uint(arg_keys::kPayload, static_cast<uint32_t>(bits)); break;
    case kPayloadI32:
      s.Int(arg_keys::kPayload, static_cast<int32_t>(static_cast<uint32_t>(bits)));
      break;
    case kPayloadFloat: {
      float f;
      const uint32_t lo = static_cast<uint32_t>(bits);
      std::memcpy(&f, &lo, sizeof(f));
      s.Double(arg_keys::kPayload, f);
      break;
    }
    default: break;
  }
}

}  // namespace kairos::internal

#endif  // KAIROS_SRC_OUTPUT_EVENT_ARGS_H_
