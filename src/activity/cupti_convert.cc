// File: cupti_convert.cc
// Layer: kairos_activity (CUDA builds only). CUPTI record -> Event conversion.
// Threading: see cupti_convert.h.
#include "activity/cupti_convert.h"

#include <absl/container/flat_hash_set.h>

#include <algorithm>
#include <string>

#include "activity/cupti_cbids.h"

namespace kairos::internal {
namespace {

constexpr StringId kUnresolved = 0xFFFFFFFFu;
constexpr uint32_t kMaxCbid = 1024;  // runtime SIZE is 523, driver 807 in CUDA 13.0
constexpr uint32_t kNoValue = 0xFFFFFFFFu;  // CUPTI_SYNCHRONIZATION_INVALID_VALUE

static_assert(sizeof(CUpti_ActivityKernel10) == 216, "Kernel10 layout");
static_assert(sizeof(CUpti_ActivityMemcpy6) == 96, "Memcpy6 layout");
static_assert(sizeof(CUpti_ActivityMemcpyPtoP4) == 96, "MemcpyPtoP4 layout");
static_assert(sizeof(CUpti_ActivityMemset4) == 88, "Memset4 layout");
static_assert(sizeof(CUpti_ActivityAPI) == 40, "ActivityAPI layout");
static_assert(sizeof(CUpti_ActivitySynchronization2) == 56, "Synchronization2 layout");
static_assert(sizeof(CUpti_ActivityExternalCorrelation) == 24, "ExternalCorrelation layout");
static_assert(sizeof(CUpti_ActivityOverhead3) == 56, "Overhead3 layout");
static_assert(sizeof(CUpti_ActivityCudaEvent2) == 56, "CudaEvent2 layout");
static_assert(sizeof(CUpti_ActivityMemory4) == 128, "Memory4 layout");

const char* const kCopyKindNames[] = {"<unknown>", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                      "AtoD",      "DtoA", "DtoD", "HtoH", "PtoP"};
const char* const kMemoryKindNames[] = {"Unknown", "Pageable", "Pinned",        "Device",
                                        "Array",   "Managed",  "Device Static", "Managed Static"};

const char* OverheadName(uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "Driver Compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "Buffer Flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "Instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "Resource";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
      return "Runtime Triggered Module Loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: return "Lazy Function Loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL: return "Command Buffer Full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST: return "Activity Buffer Request";
    default: return "Unknown";
  }
}

const char* SyncName(uint32_t type) {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return "Event Sync";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return "Stream Wait Event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return "Stream Sync";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return "Context Sync";
    default: return "Unknown Sync";
  }
}

template <typename T>
T Zeroed() {
  T v;
  std::memset(&v, 0, sizeof(T));  // padding must compare equal in DetailTable
  return v;
}

}  // namespace

size_t CuptiRecordSize(uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_CONTEXT: return sizeof(CUpti_ActivityContext3);
    case CUPTI_ACTIVITY_KIND_NAME: return sizeof(CUpti_ActivityName);
    case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_MARKER_DATA: return sizeof(CUpti_ActivityMarkerData2);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_CDP_KERNEL: return sizeof(CUpti_ActivityCdpKernel);
    case CUPTI_ACTIVITY_KIND_PREEMPTION: return sizeof(CUpti_ActivityPreemption);
    case CUPTI_ACTIVITY_KIND_ENVIRONMENT: return sizeof(CUpti_ActivityEnvironment);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER:
      return sizeof(CUpti_ActivityUnifiedMemoryCounter3);
    case CUPTI_ACTIVITY_KIND_FUNCTION: return sizeof(CUpti_ActivityFunction);
    case CUPTI_ACTIVITY_KIND_MODULE: return sizeof(CUpti_ActivityModule);
    case CUPTI_ACTIVITY_KIND_DEVICE_ATTRIBUTE: return sizeof(CUpti_ActivityDeviceAttribute);
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: return sizeof(CUpti_ActivityCudaEvent2);
    case CUPTI_ACTIVITY_KIND_STREAM: return sizeof(CUpti_ActivityStream);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
      return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_NVLINK: return sizeof(CUpti_ActivityNvLink4);
    case CUPTI_ACTIVITY_KIND_PCIE: return sizeof(CUpti_ActivityPcie);
    case CUPTI_ACTIVITY_KIND_MEMORY: return sizeof(CUpti_ActivityMemory);
    case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: return sizeof(CUpti_ActivityMemoryPool3);
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: return sizeof(CUpti_ActivityGraphTrace2);
    case CUPTI_ACTIVITY_KIND_JIT: return sizeof(CUpti_ActivityJit2);
    case CUPTI_ACTIVITY_KIND_DEVICE_GRAPH_TRACE: return sizeof(CUpti_ActivityDeviceGraphTrace);
    case CUPTI_ACTIVITY_KIND_MEM_DECOMPRESS: return sizeof(CUpti_ActivityMemDecompress);
    case CUPTI_ACTIVITY_KIND_CONFIDENTIAL_COMPUTE_ROTATION:
      return sizeof(CUpti_ActivityConfidentialComputeRotation);
    default: return 0;
  }
}

uint64_t CountCuptiRecords(const uint8_t* buffer, size_t valid_size) {
  uint64_t n = 0;
  ForEachCuptiRecord(buffer, valid_size, [&n](uint32_t, const uint8_t*) { ++n; });
  return n;
}

CuptiConverter::CuptiConverter(CallbackNameFn callback_name, size_t max_events)
    : callback_name_(callback_name), max_events_(max_events) {
  events_.SetBound(max_events);
  Clear();
}

size_t CuptiConverter::PrepareStore() {
  const size_t lead = std::min(std::max(last_buffer_events_, EventChunks::kChunkEvents / 4),
                               max_events_ - std::min(max_events_, events_.size()));
  return events_.MakeReadyAhead(lead);
}

void CuptiConverter::Clear() {
  events_.clear();
  tracks_.clear();
  for (auto& m : track_index_) m.clear();
  for (TrackSlot& t : track_cache_) t = TrackSlot();
  for (NameSlot& n : kernel_cache_) n = NameSlot();
  last_context_ = 0xFFFFFFFFu;
  strings_ = StringTable();
  runtime_names_.assign(kMaxCbid, kUnresolved);
  driver_names_.assign(kMaxCbid, kUnresolved);
  kernel_names_.clear();
  memcpy_names_.assign(11 * 8 * 8, kUnresolved);
  memset_names_.assign(8, kUnresolved);
  kernels_.Clear();
  memcpys_.Clear();
  memsets_.Clear();
  syncs_.Clear();
  memory_.clear();
  external_.clear();
  context_device_.clear();
  event_records_.clear();
  waits_.clear();
  stats_ = ConvertStats();
}

uint32_t CuptiConverter::Track(TrackType type, uint32_t device, uint32_t id, bool by_context) {
  const int map = static_cast<int>(type) + (by_context ? 5 : 0);
  const uint64_t key = (static_cast<uint64_t>(device) << 32) | id;
  TrackSlot& slot = track_cache_[(key ^ (key >> 29) ^ static_cast<uint64_t>(map)) & 15];
  if (slot.key == key && slot.map == map) return slot.track;
  auto [it, inserted] =
      track_index_[map].try_emplace(key, static_cast<uint32_t>(tracks_.size()));
  if (inserted) tracks_.push_back(LocalTrack{type, device, id, by_context});
  slot = TrackSlot{key, map, it->second};
  return it->second;
}

StringId CuptiConverter::ApiName(bool runtime, uint32_t cbid) {
  std::vector<StringId>& cache = runtime ? runtime_names_ : driver_names_;
  if (cbid < kMaxCbid && cache[cbid] != kUnresolved) return cache[cbid];
  const char* name = nullptr;
  const CUpti_CallbackDomain domain =
      runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
  StringId id;
  if (callback_name_ != nullptr && callback_name_(domain, cbid, &name) == CUPTI_SUCCESS &&
      name != nullptr) {
    id = strings_.Intern(DisplayApiName(name));
  } else {
    id = strings_.Intern((runtime ? "cudaRuntimeApi#" : "cuDriverApi#") + std::to_string(cbid));
  }
  if (cbid < kMaxCbid) cache[cbid] = id;
  return id;
}

StringId CuptiConverter::KernelName(const char* mangled) {
  NameSlot& slot = kernel_cache_[(reinterpret_cast<uintptr_t>(mangled) >> 3) & 15];
  if (slot.ptr == mangled && mangled != nullptr) return slot.id;
  StringId id;
  auto it = kernel_names_.find(mangled);
  if (it != kernel_names_.end()) {
    id = it->second;
  } else {
    id = strings_.Intern(mangled == nullptr ? std::string_view("<unknown kernel>")
                                            : demangler_.Get(mangled));
    kernel_names_.emplace(mangled, id);
  }
  slot = NameSlot{mangled, id};
  return id;
}

StringId CuptiConverter::MemcpyName(uint8_t copy_kind, uint8_t src, uint8_t dst) {
  const uint8_t k = copy_kind <= 10 ? copy_kind : 0;
  const uint8_t s = src < 8 ? src : 0;
  const uint8_t d = dst < 8 ? dst : 0;
  StringId& slot = memcpy_names_[(k * 8 + s) * 8 + d];
  if (slot == kUnresolved) {
    slot = strings_.Intern(std::string("Memcpy ") + kCopyKindNames[k] + " (" +
                           kMemoryKindNames[s] + " -> " + kMemoryKindNames[d] + ")");
  }
  return slot;
}

StringId CuptiConverter::MemsetName(uint16_t memory_kind) {
  const uint16_t m = memory_kind < 8 ? memory_kind : 0;
  if (memset_names_[m] == kUnresolved) {
    memset_names_[m] = strings_.Intern(std::string("Memset (") + kMemoryKindNames[m] + ")");
  }
  return memset_names_[m];
}

bool CuptiConverter::Keep(uint64_t start, uint64_t end) {
  if (start == 0 || end == 0 || end < start) {
    ++stats_.bad_timestamp;
    return false;
  }
  // Apart, because the two mean different things: a record that began before the window was
  // warm-up's (also when CUPTI's buffer that held it came after the window opened, held back
  // by a running kernel), one that ends after it is the window's loss.
  if (static_cast<int64_t>(start) < window_start_) {
    ++stats_.before_window;
    return false;
  }
  if (static_cast<int64_t>(end) > window_end_) {
    ++stats_.out_of_range;
    return false;
  }
  if (events_.size() >= max_events_ || (events_.size() == events_.capacity() && !events_.Grow())) {
    ++stats_.store_full;
    return false;
  }
  return true;
}

Event* CuptiConverter::Append() {
  ++stats_.events;
  Event* e = events_.Append();  // Keep() made room
  e->detail = kNoDetail;
  e->flags = kFlagNone;
  e->aux = 0;
  e->external_id = 0;
  return e;
}

void CuptiConverter::ConvertBuffer(const uint8_t* buffer, size_t valid_size) {
  auto convert = [this](uint32_t kind, const uint8_t* p) {
    ++stats_.records;
    switch (kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: OnKernel(p); break;
      case CUPTI_ACTIVITY_KIND_MEMCPY: OnMemcpy(p); break;
      case CUPTI_ACTIVITY_KIND_MEMCPY2: OnMemcpyP2P(p); break;
      case CUPTI_ACTIVITY_KIND_MEMSET: OnMemset(p); break;
      case CUPTI_ACTIVITY_KIND_RUNTIME: OnApi(p, true); break;
      case CUPTI_ACTIVITY_KIND_DRIVER: OnApi(p, false); break;
      case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: OnSync(p); break;
      case CUPTI_ACTIVITY_KIND_CUDA_EVENT: OnCudaEvent(p); break;
      case CUPTI_ACTIVITY_KIND_OVERHEAD: OnOverhead(p); break;
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: OnExternalCorrelation(p); break;
      case CUPTI_ACTIVITY_KIND_MEMORY2: OnMemory(p); break;
      // Pool creation/trim: the allocations in the pool come as MEMORY2 records, which carry
      // the pool's address; the pool's own records add no event.
      case CUPTI_ACTIVITY_KIND_MEMORY_POOL: ++stats_.memory_pool_records; break;
      default: ++stats_.unknown_kind; break;
    }
  };
  // Normally a no-op: the worker's idle hook made the pages resident already. When buffers
  // come back to back it did not get to, and one populate per chunk here still costs a third
  // less than taking the chunk's 160 page faults one by one.
  PrepareStore();
  const size_t before = events_.size();
  if (ForEachCuptiRecord(buffer, valid_size, convert) != valid_size) ++stats_.truncated_buffers;
  last_buffer_events_ = events_.size() - before;
}

void CuptiConverter::OnKernel(const uint8_t* p) {
  const auto* r = reinterpret_cast<const CUpti_ActivityKernel10*>(p);
  NoteContext(r->contextId, r->deviceId);
  if (!Keep(r->start, r->end)) return;
  KernelDetail d = Zeroed<KernelDetail>();
  d.grid[0] = static_cast<uint32_t>(r->gridX);
  d.grid[1] = static_cast<uint32_t>(r->gridY);
  d.grid[2] = static_cast<uint32_t>(r->gridZ);
  d.block[0] = static_cast<uint32_t>(r->blockX);
  d.block[1] = static_cast<uint32_t>(r->blockY);
  d.block[2] = static_cast<uint32_t>(r->blockZ);
  d.device = r->deviceId;
  d.context = r->contextId;
  d.stream = r->streamId;
  d.registers_per_thread = r->registersPerThread;
  d.static_shared_memory = static_cast<uint32_t>(r->staticSharedMemory);
  d.dynamic_shared_memory = static_cast<uint32_t>(r->dynamicSharedMemory);
  d.queued = r->queued;  // 0 unless latency timestamps are enabled
  d.graph_id = r->graphId;
  d.graph_node_id = r->graphNodeId;
  d.priority = 0;  // Kernel10 has no priority (CUDA >= 13.1 only)
  d.channel_id = r->channelID;
  d.channel_type = static_cast<uint8_t>(r->channelType);
  d.shared_memory_config = r->sharedMemoryConfig;
  Event* e = Append();
  e->kind = EventKind::kKernel;
  e->start_ns = static_cast<int64_t>(r->start);
  e->end_ns = static_cast<int64_t>(r->end);
  e->name = KernelName(r->name);
  e->track = Track(TrackType::kGpuStream, r->deviceId, r->streamId, false);
  e->correlation = r->correlationId;
  e->detail = kernels_.Intern(d);
}

namespace {
// Fields Memcpy6 and MemcpyPtoP4 share; the peer ids default to the copy's own device and
// context and are overwritten for peer-to-peer copies.
template <typename Record>
MemcpyDetail CommonMemcpyDetail(const Record* r) {
  MemcpyDetail d = Zeroed<MemcpyDetail>();
  d.bytes = r->bytes;
  d.copy_kind = r->copyKind;
  d.src_kind = r->srcKind;
  d.dst_kind = r->dstKind;
  d.channel_type = static_cast<uint8_t>(r->channelType);
  d.device = d.src_device = d.dst_device = r->deviceId;
  d.context = d.src_context = d.dst_context = r->contextId;
  d.stream = r->streamId;
  d.graph_id = r->graphId;
  d.graph_node_id = r->graphNodeId;
  d.channel_id = r->channelID;
  return d;
}
}  // namespace

void CuptiConverter::AppendMemcpy(const MemcpyDetail& d, uint64_t start, uint64_t end,
                                  uint32_t correlation) {
  Event* e = Append();
  e->kind = EventKind::kMemcpy;
  e->start_ns = static_cast<int64_t>(start);
  e->end_ns = static_cast<int64_t>(end);
  e->name = MemcpyName(d.copy_kind, d.src_kind, d.dst_kind);
  e->track = Track(TrackType::kGpuStream, d.device, d.stream, false);
  e->correlation = correlation;
  e->detail = memcpys_.Intern(d);
}

void CuptiConverter::OnMemcpy(const uint8_t* p) {
  const auto* r = reinterpret_cast<const CUpti_ActivityMemcpy6*>(p);
  NoteContext(r->contextId, r->deviceId);
  if (!Keep(r->start, r->end)) return;
  // The runtime call's id when the copy came through the runtime; the driver's otherwise.
  AppendMemcpy(CommonMemcpyDetail(r), r->start, r->end,
               r->runtimeCorrelationId != 0 ? r->runtimeCorrelationId : r->correlationId);
}

void CuptiConverter::OnMemcpyP2P(const uint8_t* p) {
  const auto* r = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(p);
  NoteContext(r->contextId, r->deviceId);
  if (!Keep(r->start, r->end)) return;
  MemcpyDetail d = CommonMemcpyDetail(r);
  d.src_device = r->srcDeviceId;
  d.dst_device = r->dstDeviceId;
  d.src_context = r->srcContextId;
  d.dst_context = r->dstContextId;
  AppendMemcpy(d, r->start, r->end, r->correlationId);
}

void CuptiConverter::OnMemset(const uint8_t* p) {
  const auto* r = reinterpret_cast<const CUpti_ActivityMemset4*>(p);
  NoteContext(r->contextId, r->deviceId);
  if (!Keep(r->start, r->end)) return;
  MemsetDetail d = Zeroed<MemsetDetail>();
  d.bytes = r->bytes;
  d.memory_kind = static_cast<uint8_t>(r->memoryKind);
  d.channel_type = static_cast<uint8_t>(r->channelType);
  d.device = r->deviceId;
  d.context = r->contextId;
  d.stream = r->streamId;
  d.graph_id = r->graphId;
  d.graph_node_id = r->graphNodeId;
  d.channel_id = r->channelID;
  Event* e = Append();
  e->kind = EventKind::kMemset;
  e->start_ns = static_cast<int64_t>(r->start);
  e->end_ns = static_cast<int64_t>(r->end);
  e->name = MemsetName(r->memoryKind);
  e->track = Track(TrackType::kGpuStream, r->deviceId, r->streamId, false);
  e->correlation = r->correlationId;
  e->detail = memsets_.Intern(d);
}

void CuptiConverter::OnApi(const uint8_t* p, bool runtime) {
  const auto* r = reinterpret_cast<const CUpti_ActivityAPI*>(p);
  if (runtime ? IsFilteredRuntimeCbid(r->cbid) : !IsKeptDriverCbid(r->cbid)) {
    ++stats_.filtered_api;
    return;
  }
  if (!Keep(r->start, r->end)) return;
  Event* e = Append();
  e->kind = runtime ? EventKind::kRuntime : EventKind::kDriver;
  e->start_ns = static_cast<int64_t>(r->start);
  e->end_ns = static_cast<int64_t>(r->end);
  e->name = ApiName(runtime, r->cbid);
  e->track = Track(TrackType::kThread, 0, r->threadId, false);
  e->correlation = r->correlationId;
  e->aux = static_cast<uint16_t>(r->cbid);
}

void CuptiConverter::OnSync(const uint8_t* p) {
  const auto* r = reinterpret_cast<const CUpti_ActivitySynchronization2*>(p);
  if (!Keep(r->start, r->end)) return;
  SyncDetail d = Zeroed<SyncDetail>();
  d.sync_type = static_cast<uint8_t>(r->type);
  d.device = kNoValue;  // filled from the context in Finalize()
  d.context = r->contextId;
  d.stream = r->streamId;
  d.cuda_event_id = r->cudaEventId;
  d.wait_on_stream = -1;
  d.wait_on_event_record_correlation = 0;
  const bool no_stream = r->streamId == kNoValue;
  const bool stream_sync = r->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  const TrackType type = no_stream     ? TrackType::kGpuDevice
                         : stream_sync ? TrackType::kGpuStreamSync
                                       : TrackType::kGpuStream;
  Event* e = Append();
  e->kind = EventKind::kSync;
  e->start_ns = static_cast<int64_t>(r->start);
  e->end_ns = static_cast<int64_t>(r->end);
  e->name = strings_.Intern(SyncName(r->type));
  e->track = Track(type, r->contextId, no_stream ? 0 : r->streamId, true);
  e->correlation = r->correlationId;
  e->detail = syncs_.Intern(d);
  if ((r->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE ||
       r->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT) &&
      r->cudaEventSyncId != 0) {
    waits_.emplace_back(static_cast<uint32_t>(events_.size() - 1), r->cudaEventSyncId);
  }
}

void CuptiConverter::OnCudaEvent(const uint8_t* p) {
  const auto* r = reinterpret_cast<const CUpti_ActivityCudaEvent2*>(p);
  NoteContext(r->contextId, r->deviceId);
  if (r->cudaEventSyncId != 0) {
    event_records_.insert_or_assign(r->cudaEventSyncId,
                                    EventRecordInfo{r->streamId, r->correlationId});
  }
  // Shown as a 1 ns slice at the device timestamp.
  if (!Keep(r->deviceTimestamp, r->deviceTimestamp + 1)) return;
  SyncDetail d = Zeroed<SyncDetail>();
  d.device = r->deviceId;
  d.context = r->contextId;
  d.stream = r->streamId;
  d.cuda_event_id = r->eventId;
  d.wait_on_stream = -1;
  Event* e = Append();
  e->kind = EventKind::kCudaEvent;
  e->start_ns = static_cast<int64_t>(r->deviceTimestamp);
  e->end_ns = e->start_ns + 1;
  e->name = strings_.Intern("cudaEvent");
  e->track = Track(TrackType::kGpuStream, r->deviceId, r->streamId, false);
  e->correlation = r->correlationId;
  e->detail = syncs_.Intern(d);
}

void CuptiConverter::OnOverhead(const uint8_t* p) {
  const auto* r = reinterpret_cast<const CUpti_ActivityOverhead3*>(p);
  if (!Keep(r->start, r->end)) return;
  Event* e = Append();
  e->kind = EventKind::kOverhead;
  e->start_ns = static_cast<int64_t>(r->start);
  e->end_ns = static_cast<int64_t>(r->end);
  e->name = strings_.Intern(OverheadName(r->overheadKind));
  e->track = Track(TrackType::kOverhead, 0, 0, false);
  e->correlation = 0;
}

void CuptiConverter::OnExternalCorrelation(const uint8_t* p) {
  const auto* r = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(p);
  ++stats_.external_correlations;
  if (external_.size() >= max_events_) {
    ++stats_.store_full;
    return;
  }
  // The innermost id wins when several kinds are pushed: records arrive outermost first.
  external_.insert_or_assign(r->correlationId, r->externalId);
}

void CuptiConverter::OnMemory(const uint8_t* p) {
  const auto* r = reinterpret_cast<const CUpti_ActivityMemory4*>(p);
  ++stats_.memory_records;
  const bool alloc = r->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  if (!alloc && r->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) {
    ++stats_.memory_bad_op;
    return;
  }
  if (!Keep(r->timestamp, r->timestamp)) return;
  MemoryDetail d = Zeroed<MemoryDetail>();
  d.addr = r->address;
  const int64_t bytes = static_cast<int64_t>(std::min<uint64_t>(r->bytes, kMemoryBytesLimit));
  d.bytes = alloc ? bytes : -bytes;
  // Pageable and pinned memory is host memory (PyTorch's Device Type CPU, Device Id -1);
  // device, managed and array memory counts against the device.
  const bool host = r->memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE ||
                    r->memoryKind == CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  d.device_type = host ? 0 : 1;
  d.device = host ? -1 : static_cast<int32_t>(r->deviceId);
  d.memory_kind = static_cast<uint8_t>(r->memoryKind);
  d.stream = r->isAsync ? r->streamId : kNoValue;
  d.pool = r->memoryPoolConfig.memoryPoolType != CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID
               ? r->memoryPoolConfig.address
               : 0;
  if (r->isAsync) d.flags |= kMemoryAsync;
  if (!host) NoteContext(r->contextId, r->deviceId);
  Event* e = Append();
  e->kind = EventKind::kInstant;
  e->aux = kAuxMemory;
  e->start_ns = static_cast<int64_t>(r->timestamp);
  e->end_ns = e->start_ns;
  e->name = strings_.Intern("[memory]");
  e->track = kUnresolvedTrack;
  e->correlation = r->correlationId;
  e->detail = static_cast<uint32_t>(memory_.size());
  memory_.push_back(d);
}

template <typename Pred>
void CuptiConverter::DropEvents(Pred drop) {
  std::vector<uint32_t> remap(waits_.empty() ? 0 : events_.size(), kUnresolved);
  size_t kept = 0;
  for (size_t i = 0; i < events_.size(); ++i) {
    if (drop(events_[i])) continue;
    if (!remap.empty()) remap[i] = static_cast<uint32_t>(kept);
    events_[kept++] = events_[i];
  }
  const size_t dropped = events_.size() - kept;
  stats_.out_of_range += dropped;
  stats_.events -= dropped;
  events_.Truncate(kept);
  size_t w = 0;
  for (const auto& [index, sync_id] : waits_) {
    if (remap[index] != kUnresolved) waits_[w++] = {remap[index], sync_id};
  }
  waits_.resize(w);
}

void CuptiConverter::DropAfter(int64_t end_ns) {
  DropEvents([end_ns](const Event& e) { return e.end_ns > end_ns; });
}

void CuptiConverter::DropLaunchedAfter(int64_t edge_ns) {
  // Host-timed records: the calls, and the memory operations (instants stamped when the
  // call made them). An allocation's call record can be gone already (DropAfter: the call
  // ended after the flush began) while its memory record remains, so both are tested here.
  auto host_timed = [](const Event& e) {
    return e.kind == EventKind::kRuntime || e.kind == EventKind::kDriver ||
           e.kind == EventKind::kInstant;
  };
  absl::flat_hash_set<uint32_t> late;
  bool any_late = false;
  for (const Event& e : events_) {
    if (!host_timed(e) || e.start_ns <= edge_ns) continue;
    any_late = true;
    if (e.correlation != 0) late.insert(e.correlation);
  }
  if (!any_late) return;  // the usual case: the session stopped CUPTI before any launch
  DropEvents([&](const Event& e) {
    return (host_timed(e) && e.start_ns > edge_ns) ||
           (e.correlation != 0 && late.contains(e.correlation));
  });
}

void CuptiConverter::ShiftTime(int64_t delta_ns) {
  for (Event& e : events_) {
    e.start_ns += delta_ns;
    e.end_ns += delta_ns;
  }
  for (KernelDetail& k : kernels_.mutable_rows()) {
    if (k.queued != 0) k.queued += delta_ns;
  }
}

void CuptiConverter::Finalize() {
  // Wait targets first: they add rows keyed by the unresolved context.
  for (const auto& [index, sync_id] : waits_) {
    auto it = event_records_.find(sync_id);
    if (it == event_records_.end()) continue;
    Event& e = events_[index];
    SyncDetail d = syncs_.rows()[e.detail];
    d.wait_on_stream = it->second.stream;
    d.wait_on_event_record_correlation = it->second.correlation;
    e.detail = syncs_.Intern(d);
  }
  for (SyncDetail& d : syncs_.mutable_rows()) {
    if (d.device != kNoValue) continue;
    auto it = context_device_.find(d.context);
    d.device = it != context_device_.end() ? it->second : 0;
  }
  for (LocalTrack& t : tracks_) {
    if (!t.by_context) continue;
    auto it = context_device_.find(t.device);
    t.device = it != context_device_.end() ? it->second : 0;
    t.by_context = false;
  }
}

}  // namespace kairos::internal
