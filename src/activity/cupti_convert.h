// File: cupti_convert.h
// Layer: kairos_activity (CUDA builds only). Turns completed CUPTI activity buffers (CUDA
// 13.0 record layouts, cupti_activity.h) into compact kairos Events plus de-duplicated side
// table rows. Ids in the output (names, tracks, detail rows) are local to the converter;
// correlation.h maps them into a TraceData at the end of the session.
// Threading: one converter is used by one thread at a time (the CUPTI worker while
// recording, then the session thread in Collect). It never calls CUPTI except through the
// injected callback-name function.
#ifndef KAIROS_SRC_ACTIVITY_CUPTI_CONVERT_H_
#define KAIROS_SRC_ACTIVITY_CUPTI_CONVERT_H_

#include <cupti.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "activity/demangle.h"
#include "activity/event_chunks.h"
#include "model/event.h"
#include "model/string_table.h"
#include "model/trace_data.h"

namespace kairos::internal {

// Stride of a record of `kind` in a CUDA 13.0 buffer (the current struct size, as
// cuptiActivityGetNextRecord advances); 0 for a kind kairos has no layout for.
size_t CuptiRecordSize(uint32_t kind);

// Calls fn(kind, record) for each whole record of a CUPTI buffer, in order, stepping with
// CuptiRecordSize; stops at the first record of unknown kind or one cut by the end. Returns the
// bytes walked (less than `valid_size` when the tail is not a whole known record).
template <typename Fn>
size_t ForEachCuptiRecord(const uint8_t* buffer, size_t valid_size, Fn&& fn) {
  size_t off = 0;
  while (off + sizeof(uint32_t) <= valid_size) {
    uint32_t kind;
    std::memcpy(&kind, buffer + off, sizeof(kind));
    const size_t size = CuptiRecordSize(kind);
    if (size == 0 || off + size > valid_size) break;
    fn(kind, buffer + off);
    off += size;
  }
  return off;
}

// Number of whole records in a buffer (for discarded buffers).
uint64_t CountCuptiRecords(const uint8_t* buffer, size_t valid_size);

// Track of a memory event until MergeIntoTraceData puts it on its API call's thread.
inline constexpr uint32_t kUnresolvedTrack = 0xFFFFFFFFu;

// A converter-local track. GPU rows are (device, stream). Synchronization records carry only
// a context, so their rows are keyed by context until ResolveContexts() maps it to a device.
struct LocalTrack {
  TrackType type = TrackType::kThread;
  uint32_t device = 0;  // device ordinal; the context id while by_context
  uint32_t id = 0;      // kThread: OS tid; GPU rows: stream id
  bool by_context = false;
};

struct ConvertStats {
  uint64_t records = 0;          // records walked in recording buffers
  uint64_t events = 0;           // events stored
  uint64_t before_window = 0;    // started before the window's start: warm-up's work
  uint64_t out_of_range = 0;     // from the window on, but ending (or launched) after its end
  uint64_t filtered_api = 0;     // runtime/driver calls on the drop lists (cupti_cbids.h)
  uint64_t store_full = 0;       // dropped because the event store hit its bound
  uint64_t unknown_kind = 0;     // records of kinds kairos does not convert
  uint64_t bad_timestamp = 0;    // start/end unknown (0) or end < start
  uint64_t truncated_buffers = 0;  // buffers whose tail was not a whole known record
  uint64_t external_correlations = 0;
  uint64_t memory_records = 0;   // MEMORY2 records walked (allocations and frees)
  uint64_t memory_pool_records = 0;  // MEMORY_POOL records (pool created/destroyed/trimmed)
  uint64_t memory_bad_op = 0;    // MEMORY2 records of neither allocation nor release
};

using CallbackNameFn = CUptiResult (*)(CUpti_CallbackDomain, uint32_t, const char**);

// A cheap word-wise hash of a side-table row (rows are small and built from zeroed memory);
// absl's string hash cost more than the rest of a record's conversion. The words are
// multiplied independently and summed (no serial multiply chain: a kernel row is 10 words),
// then mixed once.
template <typename T>
struct BytesHash {
  size_t operator()(const T& v) const {
    const auto* p = reinterpret_cast<const unsigned char*>(&v);
    uint64_t h = 0x9E3779B97F4A7C15ull ^ sizeof(T);
    size_t i = 0;
    for (; i + 8 <= sizeof(T); i += 8) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      const unsigned r = static_cast<unsigned>(i * 3 % 64);  // position matters
      h += ((w << r) | (w >> ((64 - r) & 63))) * (0xFF51AFD7ED558CCDull + 2 * i);
    }
    for (; i < sizeof(T); ++i) h = (h ^ p[i]) * 0x100000001B3ull;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ull;
    h ^= h >> 29;
    return static_cast<size_t>(h);
  }
};
// Compares whole words (inlined; a memcmp call was 9% of the conversion).
template <typename T>
struct BytesEq {
  bool operator()(const T& a, const T& b) const {
    const auto* x = reinterpret_cast<const unsigned char*>(&a);
    const auto* y = reinterpret_cast<const unsigned char*>(&b);
    uint64_t diff = 0;
    size_t i = 0;
    for (; i + 8 <= sizeof(T); i += 8) {
      uint64_t u, w;
      std::memcpy(&u, x + i, 8);
      std::memcpy(&w, y + i, 8);
      diff |= u ^ w;
    }
    for (; i < sizeof(T); ++i) diff |= static_cast<uint64_t>(x[i] ^ y[i]);
    return diff == 0;
  }
};

// Interns side-table rows by their bytes (rows must be built from zeroed memory so padding
// compares equal). A small direct-mapped cache by hash sits in front of the hash map: launches
// repeat a few rows (grid sizes, streams) in short cycles, which a last-row check missed.
template <typename T>
class DetailTable {
 public:
  uint32_t Intern(const T& row) {
    const size_t h = BytesHash<T>()(row);
    Slot& slot = cache_[h & (kCacheSlots - 1)];
    if (slot.hash == h && slot.index < rows_.size() && BytesEq<T>()(row, rows_[slot.index])) {
      return slot.index;
    }
    auto [it, inserted] = index_.try_emplace(row, static_cast<uint32_t>(rows_.size()));
    if (inserted) rows_.push_back(row);
    slot = Slot{h, it->second};
    return it->second;
  }
  const std::vector<T>& rows() const { return rows_; }
  // Callers that rewrite rows in place must call Clear() or not Intern again (ShiftTime and
  // Finalize change rows only after the last Intern of a key they touch; the cache compares
  // the row's bytes, so a changed row is a miss, never a wrong hit).
  std::vector<T>& mutable_rows() { return rows_; }
  void Clear() {
    rows_.clear();
    index_.clear();
    for (Slot& s : cache_) s = Slot();
  }

 private:
  static constexpr size_t kCacheSlots = 64;
  struct Slot {
    size_t hash = 0;
    uint32_t index = UINT32_MAX;
  };
  std::vector<T> rows_;
  absl::flat_hash_map<T, uint32_t, BytesHash<T>, BytesEq<T>> index_;
  Slot cache_[kCacheSlots];
};

// The converted events, in chunks that grow with use (event_chunks.h).
using EventStore = EventChunks;

class CuptiConverter {
 public:
  // `callback_name` resolves runtime/driver cbids to names (cuptiGetCallbackName);
  // `max_events` bounds the event store (records beyond it are counted in store_full).
  CuptiConverter(CallbackNameFn callback_name, size_t max_events);

  // Records are kept when window_start <= start and end <= window_end.
  void SetWindow(int64_t start_ns, int64_t end_ns) {
    window_start_ = start_ns;
    window_end_ = end_ns;
  }
  // The event store needs nothing up front: its chunk table is sized here, chunks come as the
  // window fills (up to max_events), made resident ahead by PrepareStore().
  void ConvertBuffer(const uint8_t* buffer, size_t valid_size);
  // Makes the event store resident ahead of the next buffer's events (as many as the last
  // buffer stored, at least a quarter chunk), so converting it takes no page fault. For the
  // conversion worker while it has no buffer waiting (CuptiBufferPool's idle hook): off the
  // converting path. Returns the bytes made resident.
  size_t PrepareStore();
  // After the last buffer: maps context-keyed sync rows to devices (learned from kernel,
  // memcpy, memset and CUDA event records) and fills wait_on_* of Event Sync / Stream Wait
  // Event rows from the matching CUDA event records.
  void Finalize();
  // Links a correlation id to a CPU range seen in the API-enter callback (kept if an
  // EXTERNAL_CORRELATION record already linked it).
  void AddExternal(uint32_t correlation, uint64_t external_id) {
    external_.try_emplace(correlation, external_id);
  }
  // Drops (as out_of_range) events that end after `end_ns`: the window's end is known only
  // once recording has stopped.
  void DropAfter(int64_t end_ns);
  // Drops (as out_of_range) runtime/driver calls and memory operations that start after
  // `edge_ns`, the window's exact closing edge (a step boundary), and the GPU work they
  // launched: CUPTI keeps
  // recording until the session thread stops it, so a launch of the next step would
  // otherwise appear in the trace, with its kernel when the GPU finished it in time.
  void DropLaunchedAfter(int64_t edge_ns);
  // Adds `delta_ns` to every event's start/end and every kernel's queued time.
  void ShiftTime(int64_t delta_ns);
  void Clear();

  EventStore& events() { return events_; }
  const std::vector<LocalTrack>& tracks() const { return tracks_; }
  const StringTable& strings() const { return strings_; }
  const std::vector<KernelDetail>& kernels() const { return kernels_.rows(); }
  const std::vector<MemcpyDetail>& memcpys() const { return memcpys_.rows(); }
  const std::vector<MemsetDetail>& memsets() const { return memsets_.rows(); }
  const std::vector<SyncDetail>& syncs() const { return syncs_.rows(); }
  // Rows of the "[memory]" instants (one per MEMORY2 record kept); totals are filled later
  // (ComputeMemoryTotals), tracks when the calls are joined (MergeIntoTraceData).
  const std::vector<MemoryDetail>& memory() const { return memory_; }
  // CUPTI correlation id -> external id (the CPU range id pushed around the call).
  const absl::flat_hash_map<uint32_t, uint64_t>& external_ids() const { return external_; }
  const ConvertStats& stats() const { return stats_; }
  size_t max_events() const { return max_events_; }

 private:
  uint32_t Track(TrackType type, uint32_t device, uint32_t id, bool by_context);
  // Removes the events `drop` selects, keeping order and the waits_ indexes; counted as
  // out_of_range.
  template <typename Pred>
  void DropEvents(Pred drop);
  StringId ApiName(bool runtime, uint32_t cbid);
  StringId KernelName(const char* mangled);
  StringId MemcpyName(uint8_t copy_kind, uint8_t src, uint8_t dst);
  StringId MemsetName(uint16_t memory_kind);
  // Returns false (and counts) when the record is outside the window or malformed.
  bool Keep(uint64_t start, uint64_t end);
  void NoteContext(uint32_t context, uint32_t device) {
    if (context == last_context_) return;  // records of one context come in long runs
    context_device_.try_emplace(context, device);
    last_context_ = context;
  }
  Event* Append();

  void OnKernel(const uint8_t* p);
  void OnMemcpy(const uint8_t* p);
  void OnMemcpyP2P(const uint8_t* p);
  // The part both memcpy record layouts share: the event on the copy's stream.
  void AppendMemcpy(const MemcpyDetail& d, uint64_t start, uint64_t end, uint32_t correlation);
  void OnMemset(const uint8_t* p);
  void OnApi(const uint8_t* p, bool runtime);
  void OnSync(const uint8_t* p);
  void OnCudaEvent(const uint8_t* p);
  void OnOverhead(const uint8_t* p);
  void OnExternalCorrelation(const uint8_t* p);
  void OnMemory(const uint8_t* p);

  CallbackNameFn callback_name_;
  size_t max_events_;
  int64_t window_start_ = 0;
  int64_t window_end_ = INT64_MAX;

  EventStore events_;
  size_t last_buffer_events_ = 0;  // events the last buffer stored (PrepareStore's lead)
  std::vector<LocalTrack> tracks_;
  absl::flat_hash_map<uint64_t, uint32_t> track_index_[10];  // [type], [5 + type] by context
  // Direct-mapped cache in front of track_index_ (records alternate between a few streams
  // and threads).
  struct TrackSlot {
    uint64_t key = ~0ull;
    int map = -1;
    uint32_t track = 0;
  };
  TrackSlot track_cache_[16];
  StringTable strings_;
  DemangleCache demangler_;
  std::vector<StringId> runtime_names_;  // by cbid; kUnresolved until first seen
  std::vector<StringId> driver_names_;
  absl::flat_hash_map<const char*, StringId> kernel_names_;
  struct NameSlot {
    const char* ptr = nullptr;
    StringId id = 0;
  };
  NameSlot kernel_cache_[16];
  uint32_t last_context_ = 0xFFFFFFFFu;
  std::vector<StringId> memcpy_names_;  // [copy_kind][src][dst], 11 x 8 x 8
  std::vector<StringId> memset_names_;  // [memory kind], 8
  DetailTable<KernelDetail> kernels_;
  DetailTable<MemcpyDetail> memcpys_;
  DetailTable<MemsetDetail> memsets_;
  DetailTable<SyncDetail> syncs_;
  std::vector<MemoryDetail> memory_;  // one row per memory event (every row differs)
  absl::flat_hash_map<uint32_t, uint64_t> external_;
  absl::flat_hash_map<uint32_t, uint32_t> context_device_;
  struct EventRecordInfo {
    uint32_t stream;
    uint32_t correlation;
  };
  absl::flat_hash_map<uint64_t, EventRecordInfo> event_records_;  // cudaEventSyncId ->
  std::vector<std::pair<uint32_t, uint64_t>> waits_;  // (event index, cudaEventSyncId)
  ConvertStats stats_;
};

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_CUPTI_CONVERT_H_
