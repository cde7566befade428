// File: event_args.cc
// Layer: kairos_output. Names and the non-template parts of EventArgs; see event_args.h.
// Threading: one thread per EventArgs; the free functions are pure.
#include "output/event_args.h"

#include <cstdio>

namespace kairos::internal {

const char* MemcpyKindName(uint8_t kind) {
  static constexpr const char* kNames[kMemcpyKindCount] = {
      "<unknown>", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
  return kind < kMemcpyKindCount ? kNames[kind] : "<unknown>";
}

const char* MemoryKindName(uint8_t kind) {
  static constexpr const char* kNames[kMemoryKindCount] = {
      "Unknown", "Pageable", "Pinned", "Device", "Array", "Managed", "Device Static",
      "Managed Static"};
  return kind < kMemoryKindCount ? kNames[kind] : "Unknown";
}

const char* SyncKindName(uint8_t sync_type) {
  switch (sync_type) {
    case kSyncEvent: return "Event Sync";
    case kSyncStreamWaitEvent: return "Stream Wait Event";
    case kSyncStream: return "Stream Sync";
    case kSyncContext: return "Context Sync";
    default: return "Unknown Sync";
  }
}

namespace {
// DisplayNameKey's tags for derived names (the high 32 bits).
enum DerivedName : uint64_t { kPlain = 0, kMemcpyName, kMemsetName, kSyncName, kCudaEventName,
                              kKernelCapitalised };
constexpr uint64_t Tag(DerivedName d) { return static_cast<uint64_t>(d) << 32; }
}  // namespace

uint64_t DisplayNameKey(const TraceData& data, const Event& e) {
  switch (e.kind) {
    case EventKind::kMemcpy:
      if (e.detail < data.memcpys.size()) {
        const MemcpyDetail& m = data.memcpys[e.detail];
        return Tag(kMemcpyName) | (uint64_t{m.copy_kind} << 16) | (uint64_t{m.src_kind} << 8) |
               m.dst_kind;
      }
      break;
    case EventKind::kMemset:
      if (e.detail < data.memsets.size()) return Tag(kMemsetName) | data.memsets[e.detail].memory_kind;
      break;
    case EventKind::kSync:
      if (e.detail < data.syncs.size()) return Tag(kSyncName) | data.syncs[e.detail].sync_type;
      break;
    case EventKind::kCudaEvent:
      if (e.name == 0) return Tag(kCudaEventName);
      break;
    case EventKind::kKernel:
      // Kineto writes a kernel literally named "kernel" as "Kernel".
      if (data.strings.Get(e.name) == "kernel") return Tag(kKernelCapitalised);
      break;
    default: break;
  }
  return e.name;
}

std::string_view DisplayName(const TraceData& data, const Event& e, std::string* scratch) {
  const uint64_t key = DisplayNameKey(data, e);
  if (key == e.name) return data.strings.Get(e.name);
  char buf[96];
  switch (static_cast<DerivedName>(key >> 32)) {
    case kMemcpyName: {
      const MemcpyDetail& m = data.memcpys[e.detail];
      std::snprintf(buf, sizeof(buf), "Memcpy %s (%s -> %s)", MemcpyKindName(m.copy_kind),
                    MemoryKindName(m.src_kind), MemoryKindName(m.dst_kind));
      break;
    }
    case kMemsetName:
      std::snprintf(buf, sizeof(buf), "Memset (%s)",
                    MemoryKindName(data.memsets[e.detail].memory_kind));
      break;
    case kSyncName: return SyncKindName(data.syncs[e.detail].sync_type);
    case kCudaEventName: return "cudaEvent";
    default: return "Kernel";
  }
  *scratch = buf;
  return *scratch;
}

uint32_t DetailTableOf(EventKind kind) {
  switch (kind) {
    case EventKind::kKernel: return 1;
    case EventKind::kMemcpy: return 2;
    case EventKind::kMemset: return 3;
    case EventKind::kSync: return 4;
    case EventKind::kCpuOp:
    case EventKind::kUserAnnotation:
    case EventKind::kInstant: return 5;
    case EventKind::kCudaEvent: return 6;  // same rows as kSync, different args
    case EventKind::kPythonFunction: return 7;
    default: return 0;
  }
}

EventArgs::EventArgs(const TraceData& data) : data_(data), occupancy_pct_(data.kernels.size(), -1) {
  for (const DeviceInfo& d : data.devices) {
    if (d.id > 4096) continue;  // a corrupt ordinal must not make us allocate gigabytes
    if (devices_by_id_.size() <= d.id) devices_by_id_.resize(d.id + 1, nullptr);
    devices_by_id_[d.id] = &d;
  }
}

int32_t EventArgs::OccupancyPercent(uint32_t row, const KernelDetail& k, const DeviceInfo& dev) {
  int32_t& pct = occupancy_pct_[row];
  if (pct < 0) {
    const uint64_t blocks = static_cast<uint64_t>(k.grid[0]) * k.grid[1] * k.grid[2];
    const uint64_t threads = static_cast<uint64_t>(k.block[0]) * k.block[1] * k.block[2];
    const OccupancyResult occ = ComputeOccupancy(
        dev, static_cast<uint32_t>(std::min<uint64_t>(threads, UINT32_MAX)),
        k.registers_per_thread,
        static_cast<uint64_t>(k.static_shared_memory) + k.dynamic_shared_memory);
    pct = EstimatedAchievedOccupancyPercent(occ, static_cast<double>(blocks) / dev.num_sms);
  }
  return pct;
}

bool IsPlainJsonArray(std::string_view t) {
  if (t.empty() || t.front() != '[' || t.back() != ']') return false;
  int depth = 0;
  bool in_string = false;
  for (char c : t) {
    const auto u = static_cast<unsigned char>(c);
    if (in_string) {
      if (c == '"') {
        in_string = false;
      } else if (c == '\\' || u < 0x20 || u >= 0x80) {
        return false;
      }
      continue;
    }
    switch (c) {
      case '[':
        if (++depth > 8) return false;
        break;
      case ']':
        if (--depth < 0) return false;
        break;
      case '"': in_string = true; break;
      case ',': case ' ': case '-': break;
      default:
        if (c < '0' || c > '9') return false;
    }
  }
  return depth == 0 && !in_string;
}

}  // namespace kairos::internal
