// File: cpu_recorder.cc — see cpu_recorder.h.
// Layer: kairos_activity. Cold paths of the producer side and the collector.
// Threading: cold paths run on application threads under the registry mutex (once per
// thread per session) or the thread's names_mu (new names); Collect/Reset run on the session
// thread under the registry mutex.
#include "activity/cpu_recorder.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <string_view>

#include "log.h"

namespace kairos::internal {

std::atomic<uint32_t> g_cpu_epoch{0};
std::atomic<ThreadNameLookup> g_thread_name_lookup{nullptr};
std::atomic<CollectStatsHook> g_cpu_collect_stats_hook{nullptr};
thread_local ThreadState* t_thread_state __attribute__((tls_model("initial-exec"))) = nullptr;

namespace {

std::atomic<uint32_t> g_epoch_counter{0};
std::atomic<uint32_t> g_next_id_block{1};

// Every thread state ever created in this process image. Heap-allocated and never freed:
// threads may still record while the process exits, after static destructors ran.
struct Registry {
  std::mutex mu;
  std::vector<ThreadState*> states;
  uint64_t generation = 0;
  size_t ring_records = 1024 * 1024 / sizeof(RingRecord);
  size_t max_threads = 256;
  size_t live_with_ring = 0;
  uint64_t threads_over_limit = 0;
};

std::atomic<Registry*> g_registry{nullptr};
// Registries abandoned by fork(), kept reachable so leak checkers in the child stay quiet.
Registry* g_abandoned[16];
int g_abandoned_count = 0;

Registry* GetRegistry() {
  Registry* r = g_registry.load(std::memory_order_acquire);
  if (r != nullptr) return r;
  auto* fresh = new Registry;
  if (g_registry.compare_exchange_strong(r, fresh, std::memory_order_acq_rel)) return fresh;
  delete fresh;
  return r;
}

ThreadState* DeadState() {
  static ThreadState* dead = new ThreadState;  // epoch 0 never matches a session
  return dead;
}

struct ExitGuard {
  bool armed = false;
  ~ExitGuard() {
    ThreadState* s = t_thread_state;
    if (s != nullptr && s != DeadState()) s->exited.store(true, std::memory_order_release);
    t_thread_state = DeadState();
  }
};
thread_local ExitGuard t_exit_guard;

std::string CurrentThreadName() {
  char buf[32] = {};
  if (pthread_getname_np(pthread_self(), buf, sizeof(buf)) != 0) return std::string();
  return std::string(buf);
}

}  // namespace

void ConfigureRings(size_t ring_records, int64_t max_threads) {
  Registry* reg = GetRegistry();
  std::lock_guard<std::mutex> lock(reg->mu);
  reg->ring_records = ring_records;
  reg->max_threads = max_threads > 0 ? static_cast<size_t>(max_threads) : 0;
}

namespace {
ThreadState* AcquireThreadStateImpl(uint32_t epoch) {
  ThreadState* s = t_thread_state;
  if (s == DeadState()) return nullptr;  // thread is exiting
  Registry* reg = GetRegistry();
  std::lock_guard<std::mutex> lock(reg->mu);
  if (s != nullptr && s->generation != reg->generation) s = nullptr;  // parent's, pre-fork
  if (s == nullptr) {
    s = new ThreadState;
    s->names.emplace_back();
    s->tid = static_cast<int64_t>(syscall(SYS_gettid));
    s->generation = reg->generation;
    reg->states.push_back(s);
    t_thread_state = s;
    t_exit_guard.armed = true;
  }
  // A new session for this thread: reuse the ring when the size is unchanged.
  const bool allowed = s->ring_storage != nullptr || reg->live_with_ring < reg->max_threads;
  const size_t cap = allowed ? reg->ring_records : 0;
  if (!allowed) ++reg->threads_over_limit;
  if (s->ring_storage == nullptr || s->ring_storage->capacity() != cap) {
    if (s->ring_storage == nullptr && cap > 0) ++reg->live_with_ring;
    s->ring_storage = std::make_unique<ThreadRing>(cap);
    // One slot per push: framework operators (kairos_op_push) carry args on every range, and
    // a range is at least two records, so cap / 2 never runs out before the ring does. The
    // array is not touched up front: unused slots cost address space only.
    const uint32_t args_cap = static_cast<uint32_t>(cap / 2);
    s->args_storage.reset(args_cap ? new StoredArgs[args_cap] : nullptr);
    s->args_capacity = args_cap;
  } else {
    s->ring_storage->Reset();
  }
  s->ring = s->ring_storage.get();
  s->args = s->args_storage.get();
  s->args_used = 0;
  s->depth = 0;
  s->args_dropped.store(0, std::memory_order_relaxed);
  s->names_dropped.store(0, std::memory_order_relaxed);
  s->thread_name = CurrentThreadName();
  s->epoch.store(epoch, std::memory_order_release);
  return s;
}
}  // namespace

ThreadState* AcquireThreadStateSlow(uint32_t epoch) {
  // Allocation failure on an application thread drops the record; it never throws.
  try {
    return AcquireThreadStateImpl(epoch);
  } catch (...) {
    return nullptr;
  }
}

namespace {
uint32_t InternNameImpl(ThreadState* s, const char* name) {
  const size_t len = std::strlen(name);
  uint32_t id = 0;
  {
    std::lock_guard<std::mutex> lock(s->names_mu);
    auto it = s->name_index.find(absl::string_view(name, len));
    if (it != s->name_index.end()) {
      id = it->second;
    } else if (s->names.size() >= kMaxNamesPerThread) {
      s->names_dropped.fetch_add(1, std::memory_order_relaxed);
      return 0;
    } else {
      id = static_cast<uint32_t>(s->names.size());
      s->names.emplace_back(name, len);
      s->name_index.emplace(s->names.back(), id);
    }
  }
  if (len <= kCachedNameMax) {
    NameCacheEntry& e = s->cache[(reinterpret_cast<uintptr_t>(name) >> 4) & (kNameCacheSize - 1)];
    std::memcpy(e.bytes, name, len + 1);
    e.ptr = name;
    e.id = id;
  }
  return id;
}
}  // namespace

uint32_t InternNameSlow(ThreadState* s, const char* name) {
  try {
    return InternNameImpl(s, name);
  } catch (...) {
    s->names_dropped.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
}

uint32_t StoreArgsSlow(ThreadState* s, const RangeArgs& args) {
  if (s->args_used >= s->args_capacity) {
    s->args_dropped.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  StoredArgs& a = s->args[s->args_used];
  a.domain = LookupName(s, args.domain);
  a.category = LookupName(s, args.category);
  a.category_id = args.category_id;
  a.color_argb = args.color_argb;
  a.has_color = args.has_color;
  a.payload_type = args.payload_type;
  a.payload_bits = args.payload_bits;
  a.cpu_op = args.cpu_op;
  a.input_dims = args.cpu_op ? LookupName(s, args.input_dims) : 0;
  a.input_types = args.cpu_op ? LookupName(s, args.input_types) : 0;
  a.sequence_nr = args.sequence_nr;
  a.fwd_thread_id = args.fwd_thread_id;
  a.record_function_id = args.record_function_id;
  return ++s->args_used;
}

void RefillIdBlock(ThreadState* s) {
  uint32_t base = g_next_id_block.fetch_add(1, std::memory_order_relaxed) * kIdBlock;
  if (base == 0) base = 1;  // after wrap-around: 0 means "no range"
  s->next_id = base;
  s->id_limit = base - (base % kIdBlock) + kIdBlock;
}

void CpuRecorderAfterForkChild() {
  g_cpu_epoch.store(0, std::memory_order_relaxed);
  Registry* old = g_registry.load(std::memory_order_relaxed);
  auto* fresh = new Registry;  // the parent's is leaked: its mutex may be held forever
  if (old != nullptr && g_abandoned_count < 16) g_abandoned[g_abandoned_count++] = old;
  if (old != nullptr) {
    fresh->generation = old->generation + 1;
    fresh->ring_records = old->ring_records;
    fresh->max_threads = old->max_threads;
  }
  g_registry.store(fresh, std::memory_order_release);
}

size_t RegisteredThreadCount() {
  Registry* reg = GetRegistry();
  std::lock_guard<std::mutex> lock(reg->mu);
  return reg->states.size();
}

// ---- CpuRecorder ----

namespace {
uint32_t ReserveEpoch() {
  uint32_t e = g_epoch_counter.fetch_add(1, std::memory_order_relaxed) + 1;
  if (e == 0) e = g_epoch_counter.fetch_add(1, std::memory_order_relaxed) + 1;
  return e;
}
}  // namespace

void DisableEpoch(uint32_t epoch) {
  g_cpu_epoch.compare_exchange_strong(epoch, 0, std::memory_order_acq_rel);
}

uint32_t CpuRecorder::Prepare(const Config& config) {
  size_t records = options_.ring_records;
  if (records == 0) {
    records = static_cast<size_t>(std::max<int64_t>(config.cpu_buffer_kb_per_thread, 0)) * 1024 /
              sizeof(RingRecord);
  }
  const int64_t max_threads = options_.max_threads > 0 ? options_.max_threads : config.max_threads;
  ConfigureRings(records, max_threads);
  const uint32_t e = ReserveEpoch();
  next_epoch_.store(e, std::memory_order_release);
  return e;
}

absl::Status CpuRecorder::StartWarmup(const Config& config) {
  // A request armed by Prepare() may already record under its reserved epoch (the step hook
  // enabled it at the warm-up boundary); keep it. Otherwise size the rings and take one now.
  const uint32_t reserved = next_epoch_.exchange(0, std::memory_order_acq_rel);
  if (reserved != 0) {
    epoch_ = reserved;
  } else {
    epoch_ = Prepare(config);
    next_epoch_.store(0, std::memory_order_relaxed);
  }
  start_raw_ = 0;
  end_raw_ = ~0ull;
  start_is_step_boundary_ = false;
  return absl::OkStatus();
}

void CpuRecorder::EnableNow() {
  // Release: pairs with nothing on the hot path (it loads relaxed); the ring state each
  // thread needs is set up by that thread itself under the registry mutex.
  g_cpu_epoch.store(epoch_, std::memory_order_release);
}

void CpuRecorder::StartRecording(int64_t) { EnableNow(); }

void CpuRecorder::StopRecording(int64_t) {
  uint32_t expected = epoch_;
  g_cpu_epoch.compare_exchange_strong(expected, 0, std::memory_order_acq_rel);
}

void CpuRecorder::SetWindow(uint64_t start_raw, uint64_t end_raw, const ClockConverter& clock,
                            bool start_is_step_boundary) {
  start_raw_ = start_raw;
  end_raw_ = end_raw;
  clock_ = clock;
  start_is_step_boundary_ = start_is_step_boundary;
}

void CpuRecorder::Reset() {
  StopRecording(0);
  Registry* reg = GetRegistry();
  std::lock_guard<std::mutex> lock(reg->mu);
  // Threads that exited are gone for good: free their buffers now that they are collected.
  auto& v = reg->states;
  for (auto it = v.begin(); it != v.end();) {
    ThreadState* s = *it;
    if (s->exited.load(std::memory_order_acquire)) {
      if (s->ring_storage != nullptr && s->ring_storage->capacity() > 0 && reg->live_with_ring > 0)
        --reg->live_with_ring;
      delete s;
      it = v.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace kairos::internal

namespace kairos::internal {

void ForEachThreadStateLocked(const std::function<void(ThreadState&)>& fn) {
  Registry* reg = GetRegistry();
  std::lock_guard<std::mutex> lock(reg->mu);
  for (ThreadState* s : reg->states) fn(*s);
}

}  // namespace kairos::internal
