// File: json_event_args.cc
// Layer: kairos_output (internal to the JSON writer). Per-kind names and args; see
// json_event_args.h and docs/OUTPUT.md.
// Threading: one thread per formatter.
#include "output/json_event_args.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>

#include "occupancy.h"

namespace kairos {
namespace internal {
namespace {

constexpr uint32_t kNoStream = 0xFFFFFFFFu;

// The stream arg: CUPTI's "no stream" value is written -1 (HTA reads -1 as "not a GPU row").
void StreamValue(uint32_t stream, JsonOut& out) {
  if (stream == kNoStream) {
    out.Raw("-1");
  } else {
    out.Uint(stream);
  }
}

void GraphAndChannel(uint32_t graph_id, uint64_t graph_node_id, uint32_t channel_id,
                     uint8_t channel_type, ArgsOut& args) {
  if (graph_id != 0) {
    args.Key("graph id").Uint(graph_id);
    args.Key("graph node id").Uint(graph_node_id);
  }
  if (channel_type != 0) {
    args.Key("channel").Uint(channel_id);
    args.Key("channel_type").Uint(channel_type);
  }
}

void Bandwidth(const Event& e, uint64_t bytes, ArgsOut& args) {
  const int64_t dur = e.end_ns - e.start_ns;
  // bytes per ns == GB/s; a zero duration has no meaningful bandwidth, so the key is omitted.
  if (dur > 0) args.Key("memory bandwidth (GB/s)").Double(static_cast<double>(bytes) / dur);
}

}  // namespace

const char* MemcpyKindName(uint8_t kind) {
  static constexpr const char* kNames[] = {"<unknown>", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                           "AtoD",      "DtoA", "DtoD", "HtoH", "PtoP"};
  return kind < sizeof(kNames) / sizeof(kNames[0]) ? kNames[kind] : "<unknown>";
}

const char* MemoryKindName(uint8_t kind) {
  static constexpr const char* kNames[] = {"Unknown", "Pageable", "Pinned",        "Device",
                                           "Array",   "Managed",  "Device Static", "Managed Static"};
  return kind < sizeof(kNames) / sizeof(kNames[0]) ? kNames[kind] : "Unknown";
}

namespace {
// "Input Dims" / "Input type" arrive as JSON text from a framework bridge through the C ABI.
// They are written raw only when they are a plain array of integers, strings without
// escapes, or such arrays (what the torch bridge produces); anything else is written as a
// JSON string, so a caller can never make the trace invalid.
bool IsPlainJsonArray(std::string_view t) {
  int depth = 0;
  bool in_string = false;
  if (t.empty() || t.front() != '[') return false;
  for (char c : t) {
    if (in_string) {
      if (c == '"') in_string = false;
      else if (c == '\\' || static_cast<unsigned char>(c) < 0x20 ||
               static_cast<unsigned char>(c) >= 0x80)
        return false;
      continue;
    }
    switch (c) {
      case '[': if (++depth > 8) return false; break;
      case ']': if (--depth < 0) return false; break;
      case '"': in_string = true; break;
      case ',': case ' ': case '-': break;
      default: if (c < '0' || c > '9') return false;
    }
  }
  return depth == 0 && !in_string && t.back() == ']';
}

void JsonArrayText(std::string_view t, JsonOut& out) {
  if (IsPlainJsonArray(t)) out.Raw(t);
  else out.Str(t);
}
}  // namespace

const char* SyncKindName(uint8_t sync_type) {
  switch (sync_type) {
    case 1: return "Event Sync";
    case 2: return "Stream Wait Event";
    case 3: return "Stream Sync";
    case 4: return "Context Sync";
    default: return "Unknown Sync";
  }
}

JsonEventFormatter::JsonEventFormatter(const TraceData& data)
    : data_(data), occupancy_pct_(data.kernels.size(), -1) {
  for (const DeviceInfo& d : data.devices) {
    if (d.id > 4096) continue;  // a corrupt ordinal must not make us allocate gigabytes
    if (devices_by_id_.size() <= d.id) devices_by_id_.resize(d.id + 1, nullptr);
    devices_by_id_[d.id] = &d;
  }
}

void JsonEventFormatter::WriteName(const Event& e, JsonOut& out) const {
  switch (e.kind) {
    case EventKind::kMemcpy:
      if (e.detail < data_.memcpys.size()) {
        const MemcpyDetail& m = data_.memcpys[e.detail];
        char name[96];
        std::snprintf(name, sizeof(name), "Memcpy %s (%s -> %s)", MemcpyKindName(m.copy_kind),
                      MemoryKindName(m.src_kind), MemoryKindName(m.dst_kind));
        out.Str(name);
        return;
      }
      break;
    case EventKind::kMemset:
      if (e.detail < data_.memsets.size()) {
        char name[64];
        std::snprintf(name, sizeof(name), "Memset (%s)",
                      MemoryKindName(data_.memsets[e.detail].memory_kind));
        out.Str(name);
        return;
      }
      break;
    case EventKind::kSync:
      if (e.detail < data_.syncs.size()) {
        out.Str(SyncKindName(data_.syncs[e.detail].sync_type));
        return;
      }
      break;
    case EventKind::kCudaEvent:
      if (e.name == 0) {
        out.Str("cudaEvent");
        return;
      }
      break;
    case EventKind::kKernel: {
      const std::string_view name = data_.strings.Get(e.name);
      out.Str(name == "kernel" ? "Kernel" : name);
      return;
    }
    default:
      break;
  }
  out.Str(data_.strings.Get(e.name));
}

void JsonEventFormatter::WriteArgs(const Event& e, JsonOut& out) {
  ArgsOut args(out);
  if (e.external_id != 0) args.Key("External id").Uint(e.external_id);
  switch (e.kind) {
    case EventKind::kCpuOp:
    case EventKind::kUserAnnotation:
    case EventKind::kInstant:
      CpuArgsOf(e, args);
      break;
    case EventKind::kKernel: KernelArgs(e, args); break;
    case EventKind::kMemcpy: MemcpyArgs(e, args); break;
    case EventKind::kMemset: MemsetArgs(e, args); break;
    case EventKind::kSync: SyncArgs(e, args); break;
    case EventKind::kCudaEvent: CudaEventArgs(e, args); break;
    case EventKind::kRuntime:
    case EventKind::kDriver:
      args.Key("cbid").Uint(e.aux);
      args.Key("correlation").Uint(e.correlation);
      break;
    case EventKind::kGpuUserAnnotation:
    case EventKind::kOverhead:
    case EventKind::kCount:
      break;
  }
  if (e.flags & kFlagUnfinished) args.Key("finished").Raw("false");
  args.Close();
}

void JsonEventFormatter::CpuArgsOf(const Event& e, ArgsOut& args) const {
  if (e.detail >= data_.cpu_args.size()) return;
  const CpuArgs& a = data_.cpu_args[e.detail];
  if (a.cpu_op) {
    // PyTorch's cpu_op client metadata, in Kineto's key order (trace-format-kineto-json.md).
    args.Key("Record function id").Uint(a.record_function_id);
    if (a.input_dims != 0) JsonArrayText(data_.strings.Get(a.input_dims), args.Key("Input Dims"));
    if (a.input_types != 0) JsonArrayText(data_.strings.Get(a.input_types), args.Key("Input type"));
    if (a.sequence_nr >= 0) {
      args.Key("Sequence number").Int(a.sequence_nr);
      args.Key("Fwd thread id").Uint(a.fwd_thread_id);
    }
    return;
  }
  if (a.domain != 0) args.Key("domain").Str(data_.strings.Get(a.domain));
  if (a.category != 0) {
    args.Key("category").Str(data_.strings.Get(a.category));
  } else if (a.category_id != 0) {
    args.Key("category").Uint(a.category_id);
  }
  if (a.has_color) {
    static constexpr char kHex[] = "0123456789abcdef";
    char color[8] = {'#'};
    for (int i = 0; i < 6; ++i) color[1 + i] = kHex[(a.color_argb >> (20 - 4 * i)) & 0xF];
    args.Key("color").Str(std::string_view(color, 7));
  }
  const uint64_t bits = a.payload_bits;
  switch (a.payload_type) {
    case 1: args.Key("payload").Uint(bits); break;
    case 2: args.Key("payload").Int(static_cast<int64_t>(bits)); break;
    case 3: {
      double d;
      std::memcpy(&d, &bits, sizeof(d));
      args.Key("payload").Double(d);
      break;
    }
    case 4: args.Key("payload").Uint(static_cast<uint32_t>(bits)); break;
    case 5: args.Key("payload").Int(static_cast<int32_t>(static_cast<uint32_t>(bits))); break;
    case 6: {
      float f;
      const uint32_t lo = static_cast<uint32_t>(bits);
      std::memcpy(&f, &lo, sizeof(f));
      args.Key("payload").Double(f);
      break;
    }
    default: break;
  }
}

void JsonEventFormatter::KernelArgs(const Event& e, ArgsOut& args) {
  if (e.detail >= data_.kernels.size()) {
    args.Key("correlation").Uint(e.correlation);
    return;
  }
  const KernelDetail& k = data_.kernels[e.detail];
  JsonOut& out = args.Key("queued");
  out.Uint(k.queued);
  args.Key("device").Uint(k.device);
  args.Key("context").Uint(k.context);
  args.Key("stream").Uint(k.stream);
  args.Key("correlation").Uint(e.correlation);
  args.Key("registers per thread").Uint(k.registers_per_thread);
  args.Key("shared memory")
      .Uint(static_cast<uint64_t>(k.static_shared_memory) + k.dynamic_shared_memory);
  const uint64_t blocks = static_cast<uint64_t>(k.grid[0]) * k.grid[1] * k.grid[2];
  const uint64_t threads = static_cast<uint64_t>(k.block[0]) * k.block[1] * k.block[2];
  const DeviceInfo* dev = Device(k.device);
  const int32_t warp_size = dev && dev->warp_size > 0 ? dev->warp_size : 32;
  const double warps_per_block = static_cast<double>((threads + warp_size - 1) / warp_size);
  if (dev && dev->num_sms > 0) {
    const double blocks_per_sm = static_cast<double>(blocks) / dev->num_sms;
    args.Key("blocks per SM").Double(blocks_per_sm);
    args.Key("warps per SM").Double(blocks_per_sm * warps_per_block);
  } else {
    // Kineto's compatibility spelling for an unknown SM count; the only non-finite value
    // written as a string (trace-format-kineto-json.md §9).
    args.Key("blocks per SM").Raw("\"inf\"");
    args.Key("warps per SM").Raw("null");
  }
  out.Raw(",\"grid\":[");
  out.Uint(k.grid[0]);
  out.Char(',');
  out.Uint(k.grid[1]);
  out.Char(',');
  out.Uint(k.grid[2]);
  out.Raw("],\"block\":[");
  out.Uint(k.block[0]);
  out.Char(',');
  out.Uint(k.block[1]);
  out.Char(',');
  out.Uint(k.block[2]);
  out.Char(']');
  if (dev && dev->num_sms > 0) {
    int32_t& pct = occupancy_pct_[e.detail];
    if (pct < 0) {
      const OccupancyResult occ = ComputeOccupancy(
          *dev, static_cast<uint32_t>(std::min<uint64_t>(threads, UINT32_MAX)),
          k.registers_per_thread,
          static_cast<uint64_t>(k.static_shared_memory) + k.dynamic_shared_memory);
      pct = EstimatedAchievedOccupancyPercent(occ, static_cast<double>(blocks) / dev->num_sms);
    }
    args.Key("est. achieved occupancy %").Int(pct);
  }
  GraphAndChannel(k.graph_id, k.graph_node_id, k.channel_id, k.channel_type, args);
}

void JsonEventFormatter::MemcpyArgs(const Event& e, ArgsOut& args) const {
  if (e.detail >= data_.memcpys.size()) {
    args.Key("correlation").Uint(e.correlation);
    return;
  }
  const MemcpyDetail& m = data_.memcpys[e.detail];
  if (m.copy_kind == kMemcpyKindPtoP) {
    args.Key("fromDevice").Uint(m.src_device);
    args.Key("inDevice").Uint(m.device);
    args.Key("toDevice").Uint(m.dst_device);
    args.Key("fromContext").Uint(m.src_context);
    args.Key("inContext").Uint(m.context);
    args.Key("toContext").Uint(m.dst_context);
  } else {
    args.Key("device").Uint(m.device);
    args.Key("context").Uint(m.context);
  }
  StreamValue(m.stream, args.Key("stream"));
  args.Key("correlation").Uint(e.correlation);
  args.Key("bytes").Uint(m.bytes);
  Bandwidth(e, m.bytes, args);
  GraphAndChannel(m.graph_id, m.graph_node_id, m.channel_id, m.channel_type, args);
}

void JsonEventFormatter::MemsetArgs(const Event& e, ArgsOut& args) const {
  if (e.detail >= data_.memsets.size()) {
    args.Key("correlation").Uint(e.correlation);
    return;
  }
  const MemsetDetail& m = data_.memsets[e.detail];
  args.Key("device").Uint(m.device);
  args.Key("context").Uint(m.context);
  StreamValue(m.stream, args.Key("stream"));
  args.Key("correlation").Uint(e.correlation);
  args.Key("bytes").Uint(m.bytes);
  Bandwidth(e, m.bytes, args);
  GraphAndChannel(m.graph_id, m.graph_node_id, m.channel_id, m.channel_type, args);
}

void JsonEventFormatter::SyncArgs(const Event& e, ArgsOut& args) const {
  if (e.detail >= data_.syncs.size()) {
    args.Key("correlation").Uint(e.correlation);
    return;
  }
  const SyncDetail& s = data_.syncs[e.detail];
  args.Key("cuda_sync_kind").Str(SyncKindName(s.sync_type));
  if (s.sync_type == kSyncEvent || s.sync_type == kSyncStreamWaitEvent) {
    args.Key("wait_on_stream").Int(s.wait_on_stream);
    args.Key("wait_on_cuda_event_record_corr_id").Uint(s.wait_on_event_record_correlation);
    args.Key("wait_on_cuda_event_id").Uint(s.cuda_event_id);
  }
  StreamValue(s.stream, args.Key("stream"));
  args.Key("correlation").Uint(e.correlation);
  args.Key("device").Uint(s.device);
  args.Key("context").Uint(s.context);
}

void JsonEventFormatter::CudaEventArgs(const Event& e, ArgsOut& args) const {
  if (e.detail >= data_.syncs.size()) {
    args.Key("correlation").Uint(e.correlation);
    return;
  }
  const SyncDetail& s = data_.syncs[e.detail];
  args.Key("event_id").Uint(s.cuda_event_id);
  StreamValue(s.stream, args.Key("stream"));
  args.Key("correlation").Uint(e.correlation);
  args.Key("device").Uint(s.device);
  args.Key("context").Uint(s.context);
}

}  // namespace internal
}  // namespace kairos
