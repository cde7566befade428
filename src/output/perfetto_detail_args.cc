// File: perfetto_detail_args.cc
// Layer: kairos_output. See perfetto_detail_args.h.
// Threading: pure functions.
#include "output/perfetto_detail_args.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <cmath>
#include <cstdio>

#include "occupancy.h"
#include "json/json_escape.h"
#include "output/json_event_args.h"  // SyncKindName: the same names as the JSON writer

namespace kairos::internal {
namespace {

// Builds one JSON object; every key goes through the shared RFC 8259 escaper.
class ObjectBuilder {
 public:
  explicit ObjectBuilder(std::string* out) : out_(out) { out_->push_back('{'); }
  void Close() { out_->push_back('}'); }
  void Key(const char* key) {
    if (!first_) out_->push_back(',');
    first_ = false;
    AppendJsonString(key, out_);
    out_->push_back(':');
  }
  void Raw(const char* text) { out_->append(text); }
  void U(const char* key, uint64_t v) {
    Key(key);
    out_->append(std::to_string(v));
  }
  void I(const char* key, int64_t v) {
    Key(key);
    out_->append(std::to_string(v));
  }
  void D(const char* key, double v) {
    Key(key);
    if (!std::isfinite(v)) {
      out_->append(std::isnan(v) ? "null" : (v > 0 ? "\"inf\"" : "\"-inf\""));
      return;
    }
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out_->append(buf, r.ptr);
  }
  void S(const char* key, std::string_view v) {
    Key(key);
    AppendJsonString(v, out_);
  }
  void Dim3(const char* key, const uint32_t v[3]) {
    Key(key);
    out_->append("[" + std::to_string(v[0]) + "," + std::to_string(v[1]) + "," +
                 std::to_string(v[2]) + "]");
  }

 private:
  std::string* out_;
  bool first_ = true;
};

const DeviceInfo* FindDevice(const TraceData& data, uint32_t id) {
  for (const DeviceInfo& d : data.devices)
    if (d.id == id) return &d;
  return nullptr;
}

void KernelArgs(const TraceData& data, const KernelDetail& k, ObjectBuilder& o) {
  o.U("queued", k.queued);
  o.U("device", k.device);
  o.U("context", k.context);
  o.U("stream", k.stream);
  o.U("registers per thread", k.registers_per_thread);
  uint64_t smem = uint64_t{k.static_shared_memory} + k.dynamic_shared_memory;
  o.U("shared memory", smem);
  double blocks = double(uint64_t{k.grid[0]} * k.grid[1] * k.grid[2]);
  uint64_t threads = uint64_t{k.block[0]} * k.block[1] * k.block[2];
  const DeviceInfo* dev = FindDevice(data, k.device);
  uint32_t warp = dev && dev->warp_size > 0 ? dev->warp_size : 32;
  double warps_per_block = double((threads + warp - 1) / warp);
  if (dev && dev->num_sms > 0) {
    double blocks_per_sm = blocks / dev->num_sms;
    o.D("blocks per SM", blocks_per_sm);
    o.D("warps per SM", blocks_per_sm * warps_per_block);
  } else {
    o.Key("blocks per SM");  // Kineto's spelling for an unknown SM count (JSON writer too)
    o.Raw("\"inf\"");
    o.Key("warps per SM");
    o.Raw("null");
  }
  o.Dim3("grid", k.grid);
  o.Dim3("block", k.block);
  if (dev && dev->num_sms > 0) {
    OccupancyResult occ = ComputeOccupancy(
        *dev, static_cast<uint32_t>(std::min<uint64_t>(threads, UINT32_MAX)),
        k.registers_per_thread, smem);
    o.I("est. achieved occupancy %", EstimatedAchievedOccupancyPercent(occ, blocks / dev->num_sms));
  }
  if (k.graph_id) {
    o.U("graph id", k.graph_id);
    o.U("graph node id", k.graph_node_id);
  }
  if (k.channel_type) {
    o.U("channel", k.channel_id);
    o.U("channel_type", k.channel_type);
  }
}

void MemcpyArgs(const MemcpyDetail& m, ObjectBuilder& o) {
  if (m.copy_kind == 10) {  // peer-to-peer: CUPTI MEMCPY2 fields
    o.U("fromDevice", m.src_device);
    o.U("inDevice", m.device);
    o.U("toDevice", m.dst_device);
    o.U("fromContext", m.src_context);
    o.U("inContext", m.context);
    o.U("toContext", m.dst_context);
  } else {
    o.U("device", m.device);
    o.U("context", m.context);
  }
  o.U("stream", m.stream);
  o.U("bytes", m.bytes);
  if (m.graph_id) {
    o.U("graph id", m.graph_id);
    o.U("graph node id", m.graph_node_id);
  }
  if (m.channel_type) {
    o.U("channel", m.channel_id);
    o.U("channel_type", m.channel_type);
  }
}

void MemsetArgs(const MemsetDetail& m, ObjectBuilder& o) {
  o.U("device", m.device);
  o.U("context", m.context);
  o.U("stream", m.stream);
  o.U("bytes", m.bytes);
  if (m.graph_id) {
    o.U("graph id", m.graph_id);
    o.U("graph node id", m.graph_node_id);
  }
  if (m.channel_type) {
    o.U("channel", m.channel_id);
    o.U("channel_type", m.channel_type);
  }
}

void SyncArgs(const Event& e, const SyncDetail& s, ObjectBuilder& o) {
  int64_t stream = s.stream == 0xFFFFFFFFu ? -1 : int64_t{s.stream};
  if (e.kind == EventKind::kCudaEvent) {
    o.U("event_id", s.cuda_event_id);
  } else {
    o.S("cuda_sync_kind", SyncKindName(s.sync_type));
    if (s.sync_type == 1 || s.sync_type == 2) {  // Event Sync, Stream Wait Event
      o.I("wait_on_stream", s.wait_on_stream);
      o.U("wait_on_cuda_event_record_corr_id", s.wait_on_event_record_correlation);
      o.U("wait_on_cuda_event_id", s.cuda_event_id);
    }
  }
  o.I("stream", stream);
  o.U("device", s.device);
  o.U("context", s.context);
}

void CpuArgsJson(const TraceData& data, const CpuArgs& a, ObjectBuilder& o) {
  if (a.domain) o.S("domain", data.strings.Get(a.domain));
  if (a.category) o.S("category", data.strings.Get(a.category));
  else if (a.category_id) o.U("category", a.category_id);
  if (a.has_color) {
    char buf[8];
    snprintf(buf, sizeof(buf), "#%06x", a.color_argb & 0xFFFFFFu);
    o.S("color", buf);
  }
  switch (a.payload_type) {
    case 1: o.U("payload", a.payload_bits); break;
    case 2: o.I("payload", static_cast<int64_t>(a.payload_bits)); break;
    case 3: {
      double d;
      memcpy(&d, &a.payload_bits, 8);
      o.D("payload", d);
      break;
    }
    case 4: o.U("payload", static_cast<uint32_t>(a.payload_bits)); break;
    case 5: o.I("payload", static_cast<int32_t>(a.payload_bits)); break;
    case 6: {
      float f;
      uint32_t b = static_cast<uint32_t>(a.payload_bits);
      memcpy(&f, &b, 4);
      o.D("payload", f);
      break;
    }
    default: break;
  }
}

}  // namespace

uint64_t DisplayNameKey(const TraceData& data, const Event& e) {
  switch (e.kind) {
    case EventKind::kMemcpy:
      if (e.detail < data.memcpys.size()) {
        const MemcpyDetail& m = data.memcpys[e.detail];
        return (1ull << 32) | (uint64_t{m.copy_kind} << 16) | (uint64_t{m.src_kind} << 8) | m.dst_kind;
      }
      break;
    case EventKind::kMemset:
      if (e.detail < data.memsets.size()) return (2ull << 32) | data.memsets[e.detail].memory_kind;
      break;
    case EventKind::kSync:
      if (e.detail < data.syncs.size()) return (3ull << 32) | data.syncs[e.detail].sync_type;
      break;
    case EventKind::kCudaEvent:
      if (e.name == 0) return 4ull << 32;
      break;
    case EventKind::kKernel:
      if (data.strings.Get(e.name) == "kernel") return 5ull << 32;
      break;
    default: break;
  }
  return e.name;
}

std::string_view DisplayName(const TraceData& data, const Event& e, std::string* scratch) {
  uint64_t key = DisplayNameKey(data, e);
  if (key == e.name) return data.strings.Get(e.name);
  char buf[96];
  switch (key >> 32) {
    case 1: {
      const MemcpyDetail& m = data.memcpys[e.detail];
      snprintf(buf, sizeof(buf), "Memcpy %s (%s -> %s)", MemcpyKindName(m.copy_kind),
               MemoryKindName(m.src_kind), MemoryKindName(m.dst_kind));
      break;
    }
    case 2:
      snprintf(buf, sizeof(buf), "Memset (%s)", MemoryKindName(data.memsets[e.detail].memory_kind));
      break;
    case 3: snprintf(buf, sizeof(buf), "%s", SyncKindName(data.syncs[e.detail].sync_type)); break;
    case 4: snprintf(buf, sizeof(buf), "cudaEvent"); break;
    default: snprintf(buf, sizeof(buf), "Kernel"); break;
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
    case EventKind::kCudaEvent: return 6;  // same rows as kSync, different args
    case EventKind::kCpuOp:
    case EventKind::kUserAnnotation:
    case EventKind::kInstant: return 5;
    default: return 0;
  }
}

bool AppendDetailArgsJson(const TraceData& data, const Event& e, std::string* out) {
  if (e.detail == kNoDetail) return false;
  size_t row = e.detail;
  ObjectBuilder o(out);
  switch (DetailTableOf(e.kind)) {
    case 1:
      if (row >= data.kernels.size()) break;
      KernelArgs(data, data.kernels[row], o);
      o.Close();
      return true;
    case 2:
      if (row >= data.memcpys.size()) break;
      MemcpyArgs(data.memcpys[row], o);
      o.Close();
      return true;
    case 3:
      if (row >= data.memsets.size()) break;
      MemsetArgs(data.memsets[row], o);
      o.Close();
      return true;
    case 4:
    case 6:
      if (row >= data.syncs.size()) break;
      SyncArgs(e, data.syncs[row], o);
      o.Close();
      return true;
    case 5:
      if (row >= data.cpu_args.size()) break;
      CpuArgsJson(data, data.cpu_args[row], o);
      o.Close();
      return true;
    default: break;
  }
  out->pop_back();  // the '{' the builder opened
  return false;
}

}  // namespace kairos::internal
