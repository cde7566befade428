// File: json_reader_trace.cc
// Layer: kairos_output. The TraceData side of json_reader.h: maps Kineto trace events and
// args back to Event kinds, tracks, side-table rows and flow flags (ReadKinetoJsonTrace,
// ApplyKinetoArgs, shared with the Perfetto reader). The streaming parser is json_reader.cc,
// the side-table rows detail_rows.cc.
// Threading: no shared state.
#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "util/checked_time.h"
#include "model/detail_values.h"
#include "model/flops.h"
#include "output/event_args.h"
#include "output/json_reader.h"

namespace kairos {
// ---- Kineto JSON -> TraceData ----

bool internal::KindFromCategory(std::string_view cat, EventKind* kind) {
  // The names as string_views once: comparing with the const char* table took a strlen per
  // kind per event (4% of `kairos summarize`).
  static const std::array<std::string_view, kEventKindCount> kNames = [] {
    std::array<std::string_view, kEventKindCount> names;
    for (size_t i = 0; i < kEventKindCount; ++i) names[i] = kEventCategory[i];
    return names;
  }();
  for (size_t i = 0; i < kEventKindCount; ++i) {
    if (cat == kNames[i]) {
      *kind = static_cast<EventKind>(i);
      return true;
    }
  }
  // Legacy (2021 TensorBoard-plugin) vocabulary and PyTorch-only categories.
  static constexpr std::pair<const char*, EventKind> kLegacy[] = {
      {"Operator", EventKind::kCpuOp},
      {"Runtime", EventKind::kRuntime},      {"Kernel", EventKind::kKernel},
      {"Memcpy", EventKind::kMemcpy},        {"Memset", EventKind::kMemset},
      {"cpu_instant_event", EventKind::kInstant}};
  for (const auto& [name, k] : kLegacy) {
    if (cat == name) {
      *kind = k;
      return true;
    }
  }
  return false;
}

namespace {

uint8_t IndexOfName(std::string_view name, const char* (*namer)(uint8_t), uint8_t count) {
  for (uint8_t i = 0; i < count; ++i)
    if (name == namer(i)) return i;
  return 0;
}

uint32_t StreamArg(const JsonValue* v) {
  if (!v) return 0;
  int64_t s = v->AsInt();
  return s < 0 ? kNoStream : static_cast<uint32_t>(s);
}

uint32_t U32(const JsonValue& args, const char* key) {
  const JsonValue* v = args.Find(key);
  return v ? static_cast<uint32_t>(v->AsUint()) : 0;
}

// The graph and channel keys kernels, memcpys and memsets share (event_args.h).
template <typename Detail>
void ReadGraphAndChannel(const JsonValue& args, Detail* d) {
  namespace arg_keys = internal::arg_keys;
  d->graph_id = U32(args, arg_keys::kGraphId);
  if (const JsonValue* v = args.Find(arg_keys::kGraphNodeId)) d->graph_node_id = v->AsUint();
  d->channel_id = U32(args, arg_keys::kChannel);
  d->channel_type = static_cast<uint8_t>(U32(args, arg_keys::kChannelType));
}

// What memcpy and memset args share after their device/context keys.
template <typename Detail>
void ReadTransferTail(const JsonValue& args, Detail* d) {
  d->stream = StreamArg(args.Find(internal::arg_keys::kStream));
  if (const JsonValue* v = args.Find(internal::arg_keys::kBytes)) d->bytes = v->AsUint();
  ReadGraphAndChannel(args, d);
}

// An NCCL kernel's operation (docs/OUTPUT.md, "Collective kernels"), keyed by its correlation
// id; the readers sort TraceData::collectives once all events are in.
void ReadCollective(const JsonValue& args, const Event& e, TraceData& data) {
  namespace arg_keys = internal::arg_keys;
  const JsonValue* name = args.Find(arg_keys::kCollectiveName);
  if (name == nullptr || !name->is_string() || e.correlation == 0) return;
  CollectiveRecord c;
  c.correlation = e.correlation;
  bool coalesced = false;
  c.func = CollectiveFuncFromTraceName(name->text, &coalesced);
  if (coalesced) c.coalesced = 2;  // a group; how many operations the trace does not say
  if (const JsonValue* v = args.Find(arg_keys::kDtype); v != nullptr && v->is_string())
    c.dtype = CollectiveDtypeFromTraceName(v->text);
  if (const JsonValue* v = args.Find(arg_keys::kInMsgNelems)) c.in_nelems = v->AsUint();
  if (const JsonValue* v = args.Find(arg_keys::kOutMsgNelems)) c.out_nelems = v->AsUint();
  if (const JsonValue* v = args.Find(arg_keys::kGroupSize)) c.comm_size = static_cast<int32_t>(v->AsInt(0));
  data.collectives.push_back(c);
}

}  // namespace

namespace {
// A cpu_op's FLOPs (docs/FLOPS.md): its "flops" arg, else computed from its "Input Dims" (and
// "Concrete Inputs" for convolutions) when the operator has a shape formula, so PyTorch's own
// traces get FLOPs too; kept with "Input type" (the op's dtype, for MFU). Only for such
// operators (bounded). The analysis read (kairos summarize) keeps the count and the types; a
// plain read keeps PyTorch's args as written too, a computed count marked so writers leave it
// out (a converted trace gains no arg). An op with a "Python line" (docs/PYTHON_STACKS.md) gets
// a row for it with or without FLOPs. True when a row was stored.
bool ReadOpFlops(const JsonValue& args, std::string_view name, TraceData& data, Event& e,
                 internal::DetailRows& rows) {
  namespace arg_keys = internal::arg_keys;
  const JsonValue* fl = args.Find(arg_keys::kFlops);
  const JsonValue* dims = args.Find(arg_keys::kInputDims);
  const flops::ShapeRule rule = flops::ShapeRuleOf(name);
  const uint32_t py_line = U32(args, arg_keys::kPythonLine);
  int64_t flops = -1;
  bool computed = false;
  if (fl != nullptr && fl->is_number()) {
    flops = fl->AsInt(-1);
  } else if (rule != flops::ShapeRule::kNone && dims != nullptr && dims->is_array()) {
    flops::Shapes shapes;
    for (const JsonValue& in : dims->items) {
      shapes.emplace_back();
      if (!in.is_array()) continue;
      for (const JsonValue& d : in.items) shapes.back().push_back(d.AsInt(-1));
    }
    flops = flops::FromShapes(rule, shapes);
    const JsonValue* concrete = args.Find("Concrete Inputs");
    if (flops < 0 && concrete != nullptr && concrete->is_array()) {
      std::vector<std::string_view> texts;
      for (const JsonValue& c : concrete->items)
        texts.push_back(c.is_string() ? std::string_view(c.text) : std::string_view());
      flops = flops::FromConcrete(rule, shapes, texts);
    }
    computed = true;
  } else if (py_line == 0) {
    return false;
  }
  if (flops < 0 && py_line == 0 && rows.for_analysis()) return false;
  CpuArgs a{};
  a.cpu_op = 1;
  a.sequence_nr = -1;
  a.flops = flops;
  a.flops_computed = computed ? 1 : 0;
  a.py_line = py_line;
  const JsonValue* v;
  if ((v = args.Find(arg_keys::kInputType)) && v->is_array())
    a.input_types = data.strings.Intern(v->ToJson());
  if (!rows.for_analysis()) {
    if (dims != nullptr && dims->is_array()) a.input_dims = data.strings.Intern(dims->ToJson());
    if ((v = args.Find(arg_keys::kRecordFunctionId))) a.record_function_id = v->AsUint();
    if ((v = args.Find(arg_keys::kSequenceNumber)) && v->is_number()) {
      a.sequence_nr = v->AsInt(-1);
      if (const JsonValue* t = args.Find(arg_keys::kFwdThreadId)) a.fwd_thread_id = t->AsUint();
    }
  }
  e.detail = static_cast<uint32_t>(data.cpu_args.size());
  data.cpu_args.push_back(a);
  return true;
}
}  // namespace

namespace {
namespace arg_keys = internal::arg_keys;

// The keys every kind may carry: ids that link events, the CUPTI callback id, "finished".
void ReadCommonArgs(const JsonValue& args, Event& e) {
  const JsonValue* v;
  if ((v = args.Find(arg_keys::kExternalId)) || (v = args.Find("external id")))
    e.external_id = static_cast<uint32_t>(v->AsUint());
  if ((v = args.Find(arg_keys::kCorrelation))) e.correlation = static_cast<uint32_t>(v->AsUint());
  if ((v = args.Find(arg_keys::kCbid))) e.aux = static_cast<uint16_t>(v->AsUint());
  if ((v = args.Find(arg_keys::kFinished)) && v->type == JsonValue::Type::kBool && !v->boolean)
    e.flags |= kFlagUnfinished;
}

void ReadKernelArgs(const JsonValue& args, TraceData& data, Event& e, internal::DetailRows& rows) {
  ReadCollective(args, e, data);
  if (!args.Find(arg_keys::kGrid) && !args.Find(arg_keys::kDevice)) return;
  KernelDetail k;
  memset(&k, 0, sizeof(k));
  const JsonValue* grid = args.Find(arg_keys::kGrid);
  const JsonValue* block = args.Find(arg_keys::kBlock);
  for (int i = 0; i < 3; ++i) {
    k.grid[i] = grid && i < int(grid->items.size()) ? uint32_t(grid->items[i].AsUint()) : 1;
    k.block[i] = block && i < int(block->items.size()) ? uint32_t(block->items[i].AsUint()) : 1;
  }
  k.device = U32(args, arg_keys::kDevice);
  k.context = U32(args, arg_keys::kContext);
  k.stream = StreamArg(args.Find(arg_keys::kStream));
  k.registers_per_thread = U32(args, arg_keys::kRegistersPerThread);
  k.static_shared_memory = U32(args, arg_keys::kSharedMemory);  // JSON has only the sum
  if (const JsonValue* v = args.Find(arg_keys::kQueued)) k.queued = v->AsUint();
  ReadGraphAndChannel(args, &k);
  e.detail = rows.Add(k, data.kernels);
}

void ReadMemcpyArgs(const JsonValue& args, std::string_view name, TraceData& data, Event& e,
                    internal::DetailRows& rows) {
  using internal::MemoryKindName;
  using internal::kMemoryKindCount;
  MemcpyDetail m;
  memset(&m, 0, sizeof(m));
  // "Memcpy <kind> (<src> -> <dst>)"
  size_t open = name.find(" ("), arrow = name.find(" -> "), close = name.rfind(')');
  if (name.substr(0, 7) == "Memcpy " && open != std::string_view::npos &&
      arrow != std::string_view::npos && close != std::string_view::npos && arrow > open) {
    m.copy_kind = IndexOfName(name.substr(7, open - 7), internal::MemcpyKindName,
                              internal::kMemcpyKindCount);
    m.src_kind = IndexOfName(name.substr(open + 2, arrow - open - 2), MemoryKindName, kMemoryKindCount);
    m.dst_kind = IndexOfName(name.substr(arrow + 4, close - arrow - 4), MemoryKindName, kMemoryKindCount);
  }
  if (args.Find(arg_keys::kFromDevice)) {
    m.copy_kind = kMemcpyPtoP;
    m.src_device = U32(args, arg_keys::kFromDevice);
    m.device = U32(args, arg_keys::kInDevice);
    m.dst_device = U32(args, arg_keys::kToDevice);
    m.src_context = U32(args, arg_keys::kFromContext);
    m.context = U32(args, arg_keys::kInContext);
    m.dst_context = U32(args, arg_keys::kToContext);
  } else {
    m.device = U32(args, arg_keys::kDevice);
    m.context = U32(args, arg_keys::kContext);
  }
  ReadTransferTail(args, &m);
  e.detail = rows.Add(m, data.memcpys);
}

void ReadMemsetArgs(const JsonValue& args, std::string_view name, TraceData& data, Event& e,
                    internal::DetailRows& rows) {
  MemsetDetail m;
  memset(&m, 0, sizeof(m));
  size_t open = name.find('('), close = name.rfind(')');
  if (open != std::string_view::npos && close != std::string_view::npos && close > open)
    m.memory_kind = IndexOfName(name.substr(open + 1, close - open - 1), internal::MemoryKindName,
                                internal::kMemoryKindCount);
  m.device = U32(args, arg_keys::kDevice);
  m.context = U32(args, arg_keys::kContext);
  ReadTransferTail(args, &m);
  e.detail = rows.Add(m, data.memsets);
}

// A synchronization (what it waited on) or a CUDA event record (which event).
void ReadSyncArgs(const JsonValue& args, std::string_view name, TraceData& data, Event& e,
                  internal::DetailRows& rows) {
  if (!args.Find(arg_keys::kDevice) && !args.Find(arg_keys::kStream)) return;
  SyncDetail sd;
  memset(&sd, 0, sizeof(sd));
  sd.wait_on_stream = -1;
  if (e.kind == EventKind::kSync) {
    const JsonValue* v = args.Find(arg_keys::kSyncKind);
    std::string_view kind_name = v ? std::string_view(v->text) : name;
    for (uint8_t t = kSyncEvent; t <= kSyncContext; ++t)
      if (kind_name == internal::SyncKindName(t)) sd.sync_type = t;
    if ((v = args.Find(arg_keys::kWaitOnStream))) sd.wait_on_stream = v->AsInt(-1);
    // -1 (unknown, libkineto's and kairos' spelling) is the event model's 0.
    if ((v = args.Find(arg_keys::kWaitOnEventRecordCorr)) && v->AsInt(0) > 0)
      sd.wait_on_event_record_correlation = static_cast<uint32_t>(v->AsUint());
    sd.cuda_event_id = U32(args, arg_keys::kWaitOnEventId);
  } else {
    sd.cuda_event_id = U32(args, arg_keys::kEventId);
  }
  sd.device = U32(args, arg_keys::kDevice);
  sd.context = U32(args, arg_keys::kContext);
  sd.stream = StreamArg(args.Find(arg_keys::kStream));
  e.detail = rows.Add(sd, data.syncs);
}

bool TrueArg(const JsonValue& args, const char* key) {
  const JsonValue* v = args.Find(key);
  return v && v->type == JsonValue::Type::kBool && v->boolean;
}

// PyTorch's profile_memory event, or kairos' (docs/MEMORY.md); the analysis reads it.
void ReadMemoryEvent(const JsonValue& args, TraceData& data, Event& e) {
  MemoryDetail m;
  memset(&m, 0, sizeof(m));
  m.stream = kNoStream;
  m.py_line = U32(args, arg_keys::kPythonLine);
  const JsonValue* v;
  if ((v = args.Find(arg_keys::kDeviceType))) m.device_type = static_cast<uint8_t>(v->AsInt(0));
  if ((v = args.Find(arg_keys::kDeviceId))) m.device = static_cast<int32_t>(v->AsInt(-1));
  if ((v = args.Find(arg_keys::kAddr))) m.addr = v->AsUint();
  m.bytes = ClampMemoryBytes(args.Find(arg_keys::kMemBytes)->AsInt(0));
  if ((v = args.Find(arg_keys::kTotalAllocated))) m.total_allocated = ClampMemoryBytes(v->AsInt(0));
  if ((v = args.Find(arg_keys::kTotalReserved))) m.total_reserved = ClampMemoryBytes(v->AsInt(0));
  if ((v = args.Find(arg_keys::kMemoryKind)))
    m.memory_kind = IndexOfName(v->text, internal::MemoryKindName, internal::kMemoryKindCount);
  if ((v = args.Find(arg_keys::kStream))) m.stream = StreamArg(v);
  if ((v = args.Find(arg_keys::kPool))) m.pool = v->AsUint();
  if (TrueArg(args, arg_keys::kAsync)) m.flags |= kMemoryAsync;
  if (TrueArg(args, arg_keys::kFreedBeforeWindow)) m.flags |= kMemoryFreeBeforeWindow;
  e.aux = kAuxMemory;
  e.detail = static_cast<uint32_t>(data.memory.size());
  data.memory.push_back(m);
}

// An NVTX payload keeps its JSON number's type: a fraction or exponent is a double, a minus
// sign an int64, anything else a uint64.
void ReadPayload(const JsonValue& payload, CpuArgs& a) {
  const std::string& t = payload.text;
  if (t.find_first_of(".eE") != std::string::npos) {
    double d = payload.AsDouble();
    a.payload_type = kPayloadDouble;
    memcpy(&a.payload_bits, &d, 8);
  } else if (!t.empty() && t[0] == '-') {
    a.payload_type = kPayloadI64;
    a.payload_bits = static_cast<uint64_t>(payload.AsInt());
  } else {
    a.payload_type = kPayloadU64;
    a.payload_bits = payload.AsUint();
  }
}

// An annotation's NVTX attributes (domain, category, color, payload), when it has any.
void ReadAnnotationArgs(const JsonValue& args, TraceData& data, Event& e) {
  const JsonValue* dom = args.Find(arg_keys::kDomain);
  const JsonValue* cat = args.Find(arg_keys::kCategory);
  const JsonValue* color = args.Find(arg_keys::kColor);
  const JsonValue* payload = args.Find(arg_keys::kPayload);
  if (!dom && !cat && !color && !payload) return;
  CpuArgs a{};
  if (dom) a.domain = data.strings.Intern(dom->text);
  if (cat && cat->is_string()) a.category = data.strings.Intern(cat->text);
  if (cat && cat->is_number()) a.category_id = static_cast<uint32_t>(cat->AsUint());
  if (color && color->text.size() == 7 && color->text[0] == '#') {
    a.has_color = 1;
    a.color_argb = 0xFF000000u | static_cast<uint32_t>(strtoul(color->text.c_str() + 1, nullptr, 16));
  }
  if (payload && payload->is_number()) ReadPayload(*payload, a);
  e.detail = static_cast<uint32_t>(data.cpu_args.size());
  data.cpu_args.push_back(a);
}

void ReadHostArgs(const JsonValue& args, std::string_view name, TraceData& data, Event& e,
                  internal::DetailRows& rows) {
  if (e.kind == EventKind::kCpuOp && ReadOpFlops(args, name, data, e, rows)) return;
  if (e.kind == EventKind::kInstant && name == "[memory]" && args.Find(arg_keys::kMemBytes)) {
    ReadMemoryEvent(args, data, e);
    return;
  }
  if (rows.for_analysis()) return;  // the analysis reads no other CpuArgs
  ReadAnnotationArgs(args, data, e);
}

}  // namespace

void internal::ApplyKinetoArgs(const JsonValue& args, std::string_view name, TraceData& data,
                               Event& e, DetailRows& rows) {
  if (args.type != JsonValue::Type::kObject) return;
  ReadCommonArgs(args, e);
  switch (e.kind) {
    case EventKind::kKernel: return ReadKernelArgs(args, data, e, rows);
    case EventKind::kMemcpy: return ReadMemcpyArgs(args, name, data, e, rows);
    case EventKind::kMemset: return ReadMemsetArgs(args, name, data, e, rows);
    case EventKind::kSync:
    case EventKind::kCudaEvent: return ReadSyncArgs(args, name, data, e, rows);
    case EventKind::kCpuOp:
    case EventKind::kUserAnnotation:
    case EventKind::kInstant: return ReadHostArgs(args, name, data, e, rows);
    case EventKind::kPythonFunction: {
      // PyTorch's with_stack args; a frame without "Python parent id" is a root.
      PythonFrame f{U32(args, arg_keys::kPythonId), U32(args, arg_keys::kPythonParentId),
                    U32(args, arg_keys::kPythonThread), U32(args, arg_keys::kPythonCallerLine)};
      e.detail = static_cast<uint32_t>(data.python_frames.size());
      data.python_frames.push_back(f);
      return;
    }
    default: return;
  }
}

namespace {

bool IsCpuKind(EventKind k) {
  return k == EventKind::kCpuOp || k == EventKind::kUserAnnotation || k == EventKind::kRuntime ||
         k == EventKind::kDriver || k == EventKind::kInstant || k == EventKind::kPythonFunction;
}

// Builds a TraceData from the callback stream; the per-track vectors are sorted at the end.
class TraceBuilder {
 public:
  explicit TraceBuilder(const TraceReadOptions& options) : rows_(options) {}
  KinetoJsonCallbacks Callbacks() {
    KinetoJsonCallbacks cb;
    cb.on_metadata = [this](std::string_view k, const JsonValue& v) { OnMetadata(k, v); };
    cb.on_event = [this](const KinetoEvent& ev) { OnEvent(ev); };
    return cb;
  }
  TraceData Finish();

 private:
  void OnMetadata(std::string_view key, const JsonValue& v);
  void OnEvent(const KinetoEvent& ev);
  void OnMetadataEvent(const KinetoEvent& ev, int64_t pid, int64_t tid);
  void OnCounterEvent(const KinetoEvent& ev, int64_t pid);
  uint32_t TrackOfEvent(EventKind kind, int64_t pid, int64_t tid);
  uint32_t TrackFor(TrackType type, int64_t pid, int64_t tid, uint32_t device, uint32_t stream) {
    auto key = std::make_tuple(static_cast<int>(type), pid, tid);
    auto it = tracks_.find(key);
    if (it != tracks_.end()) return it->second;
    Track t;
    t.type = type;
    t.pid = pid;
    t.tid = tid;
    t.device = device;
    t.stream = stream;
    uint32_t idx = data_.AddTrack(std::move(t));
    tracks_.emplace(key, idx);
    return idx;
  }
  void Unmapped() { data_.AddStat("json_reader.unmapped", 1); }

  TraceData data_;
  internal::DetailRows rows_;
  bool have_pid_ = false;
  bool have_window_start_ = false;
  std::map<std::tuple<int, int64_t, int64_t>, uint32_t> tracks_;
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names_;
  std::map<std::string, uint32_t> counter_tracks_;
  absl::flat_hash_set<uint64_t> flow_out_, flow_in_;
};

void TraceBuilder::OnMetadata(std::string_view key, const JsonValue& v) {
  if (key == "schemaVersion" || key == "displayTimeUnit") return;
  if (key == "baseTimeNanoseconds") { data_.base_time_ns = v.AsInt(); return; }
  if (key == "traceName") { data_.trace_name = v.text; return; }
  if (key == "trace_id") { data_.trace_id = v.text; return; }
  if (key == "host_name") { data_.host_name = v.text; return; }
  if (key == "kairos_config") { data_.config_text = v.text; return; }
  if (key == "kairos_stats") {
    for (const auto& [k, s] : v.members) data_.stats[k] = s.AsUint();
    return;
  }
  if (key == "kairos_warnings") {
    for (const JsonValue& w : v.items) data_.warnings.push_back(w.text);
    return;
  }
  if (key == "distributedInfo") {
    if (const JsonValue* r = v.Find("rank")) data_.distributed.rank = r->AsInt();
    if (const JsonValue* w = v.Find("world_size")) data_.distributed.world_size = w->AsInt(1);
    if (const JsonValue* l = v.Find("local_rank")) data_.distributed.local_rank = l->AsInt();
    if (const JsonValue* b = v.Find("backend")) data_.distributed.backend = b->text;
    return;
  }
  if (key == "deviceProperties") {
    for (const JsonValue& o : v.items) {
      DeviceInfo d;
      auto get = [&](const char* k) { const JsonValue* x = o.Find(k); return x ? x->AsInt() : 0; };
      d.id = static_cast<uint32_t>(get("id"));
      if (const JsonValue* n = o.Find("name")) d.name = n->text;
      d.total_global_mem = static_cast<uint64_t>(get("totalGlobalMem"));
      d.compute_major = int32_t(get("computeMajor"));
      d.compute_minor = int32_t(get("computeMinor"));
      d.max_threads_per_block = int32_t(get("maxThreadsPerBlock"));
      d.max_threads_per_multiprocessor = int32_t(get("maxThreadsPerMultiprocessor"));
      d.regs_per_block = int32_t(get("regsPerBlock"));
      d.warp_size = int32_t(get("warpSize"));
      d.shared_mem_per_block = static_cast<uint64_t>(get("sharedMemPerBlock"));
      d.num_sms = int32_t(get("numSms"));
      d.regs_per_multiprocessor = int32_t(get("regsPerMultiprocessor"));
      d.shared_mem_per_block_optin = static_cast<uint64_t>(get("sharedMemPerBlockOptin"));
      d.shared_mem_per_multiprocessor = static_cast<uint64_t>(get("sharedMemPerMultiprocessor"));
      d.max_blocks_per_multiprocessor = int32_t(get("maxBlocksPerMultiprocessor"));
      data_.devices.push_back(std::move(d));
    }
    return;
  }
  if (v.is_string()) {
    data_.metadata.emplace_back(std::string(key), v.text);
  } else {
    data_.metadata_json.emplace_back(std::string(key), v.ToJson());
  }
}

// A metadata event: the window's start, the CPU process, process and thread names.
void TraceBuilder::OnMetadataEvent(const KinetoEvent& ev, int64_t pid, int64_t tid) {
  if (!have_window_start_ && ev.has_ts) {
    data_.window_start_ns = ev.ts_ns;
    have_window_start_ = true;
  }
  const JsonValue* a = ev.args.Find("name");
  const JsonValue* labels = ev.args.Find("labels");
  if (ev.name == "process_labels" && labels && labels->text == "CPU" && !have_pid_) {
    data_.pid = pid;
    have_pid_ = true;
  } else if (ev.name == "process_name" && a && (!have_pid_ || pid == data_.pid) &&
             data_.process_name.empty()) {
    data_.process_name = a->text;
  } else if (ev.name == "thread_name" && a) {
    thread_names_[{pid, tid}] = a->text;
  }
}

void TraceBuilder::OnCounterEvent(const KinetoEvent& ev, int64_t pid) {
  // A GPU counter (PM sampling) has the device ordinal as its pid, so one metric name
  // appears once per GPU: the track key includes the pid.
  // CUPTI metric names have "__" (sm__cycles_active...); host counters do not.
  const bool gpu = ev.pid.is_number() && pid != data_.pid && pid >= 0 && pid < 4096 &&
                   ev.name.find("__") != std::string::npos;
  const std::string key = gpu ? ev.name + "\x1f" + std::to_string(pid) : ev.name;
  auto [it, inserted] = counter_tracks_.try_emplace(key, uint32_t(data_.counter_tracks.size()));
  const auto& members = ev.args.members;
  if (inserted) {
    CounterTrack c;
    c.name = ev.name;
    if (!members.empty() && members[0].first != "value") c.unit = members[0].first;
    if (ev.pid.is_string()) c.group = ev.pid.text;
    if (gpu) {
      c.device = static_cast<int32_t>(pid);
      c.group = "GPU " + std::to_string(pid);
    }
    data_.counter_tracks.push_back(std::move(c));
  }
  if (!members.empty()) data_.counter_samples.push_back({ev.ts_ns, members[0].second.AsDouble(), it->second});
}

// The track an event of this kind on (pid, tid) belongs to: a host thread, the overhead row,
// a GPU's device row, a stream's sync row or a stream.
uint32_t TraceBuilder::TrackOfEvent(EventKind kind, int64_t pid, int64_t tid) {
  if (IsCpuKind(kind)) return TrackFor(TrackType::kThread, pid, tid, 0, 0);
  if (kind == EventKind::kOverhead) return TrackFor(TrackType::kOverhead, pid, tid, 0, 0);
  if (tid == kDeviceRowTid) return TrackFor(TrackType::kGpuDevice, pid, tid, uint32_t(pid), 0);
  if (tid >= kStreamSyncTidOffset && (kind == EventKind::kSync || kind == EventKind::kCudaEvent))
    return TrackFor(TrackType::kGpuStreamSync, pid, tid, uint32_t(pid), uint32_t(tid - kStreamSyncTidOffset));
  return TrackFor(TrackType::kGpuStream, pid, tid, uint32_t(pid), uint32_t(tid));
}

void TraceBuilder::OnEvent(const KinetoEvent& ev) {
  // The phase as one byte (0 for anything but one character): std::string == "X" is a strlen
  // and a compare call, several per event.
  const char ph = ev.ph.size() == 1 ? ev.ph[0] : '\0';
  const int64_t pid = ev.pid.AsInt();
  const int64_t tid = ev.tid.AsInt();
  if (ph == 'M') return OnMetadataEvent(ev, pid, tid);
  if (ph == 's' || ph == 'f') {
    if (ev.cat == "ac2g" || ev.cat == "async")
      (ph == 's' ? flow_out_ : flow_in_).insert(ev.id.AsUint());
    return;
  }
  if (ph == 'C') return OnCounterEvent(ev, pid);
  if (ph == 'i' && ev.name == "Record Window End") {
    data_.window_end_ns = ev.ts_ns;
    return;
  }
  EventKind kind;
  if ((ph != 'X' && ph != 'i') || !ev.pid.is_number() || !internal::KindFromCategory(ev.cat, &kind)) {
    Unmapped();  // spans ("Trace"), iteration markers, unknown phases and categories
    return;
  }
  if (ph == 'i') kind = EventKind::kInstant;
  if (!have_pid_ && IsCpuKind(kind)) {
    data_.pid = pid;
    have_pid_ = true;
  }
  Event e;
  memset(&e, 0, sizeof(e));
  e.kind = kind;
  e.track = TrackOfEvent(kind, pid, tid);
  e.detail = kNoDetail;
  e.start_ns = ev.ts_ns;
  // ts + dur fits (the reader refuses an event whose end does not); a negative dur is
  // clamped to 0 and counted, as an end before its start would mislead every consumer.
  e.end_ns = ev.ts_ns;
  if (ph == 'X' && ev.dur_ns < 0) data_.AddStat("json_reader.negative_dur", 1);
  if (ph == 'X' && ev.dur_ns > 0 && !AddNs(ev.ts_ns, ev.dur_ns, &e.end_ns)) e.end_ns = ev.ts_ns;
  e.name = data_.strings.Intern(ev.name);
  internal::ApplyKinetoArgs(ev.args, ev.name, data_, e, rows_);
  data_.events_by_track[e.track].push_back(e);
}

TraceData TraceBuilder::Finish() {
  for (size_t i = 0; i < data_.tracks.size(); ++i) {
    Track& t = data_.tracks[i];
    if (t.type == TrackType::kThread) {
      auto it = thread_names_.find({t.pid, t.tid});
      if (it != thread_names_.end()) {
        // "thread <tid> (<name>)" -> "<name>"
        const std::string& n = it->second;
        size_t open = n.find(" (");
        if (n.rfind("thread ", 0) == 0 && open != std::string::npos && n.back() == ')')
          t.name = n.substr(open + 2, n.size() - open - 3);
        else if (n.rfind("thread ", 0) != 0)
          t.name = n;
      }
    }
    for (Event& e : data_.events_by_track[i]) {
      if (!e.correlation) continue;
      if ((e.kind == EventKind::kRuntime || e.kind == EventKind::kDriver) && flow_out_.count(e.correlation))
        e.flags |= kFlagFlowOut;
      else if (!IsCpuKind(e.kind) && flow_in_.count(e.correlation))
        e.flags |= kFlagFlowIn;
    }
  }
  std::stable_sort(data_.counter_samples.begin(), data_.counter_samples.end(),
                   [](const CounterSample& a, const CounterSample& b) { return a.ts_ns < b.ts_ns; });
  data_.SortTracks();
  SortCollectives(data_);
  return std::move(data_);
}

}  // namespace

absl::StatusOr<TraceData> ReadKinetoJsonTrace(const std::string& path, const TraceReadOptions& options) {
  TraceBuilder b(options);
  absl::Status st = ReadKinetoJsonFile(path, b.Callbacks());
  if (!st.ok()) return st;
  return b.Finish();
}

absl::StatusOr<TraceData> ReadKinetoJsonTraceText(std::string_view text, const TraceReadOptions& options) {
  TraceBuilder b(options);
  absl::Status st = ReadKinetoJsonText(text, b.Callbacks());
  if (!st.ok()) return st;
  return b.Finish();
}

}  // namespace kairos
