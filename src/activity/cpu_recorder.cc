// File: cpu_recorder.cc — see cpu_recorder.h.
// Layer: kairos_activity. The recorder's process-wide part (ProcessRecorder) and the cold
// paths of the producer side: a thread's first record, its exit, pre-arming, names and args.
// The session steps are cpu_recorder_session.cc, the ring feeder's passes cpu_ring_feed.cc,
// the collector cpu_collect.cc.
// Threading: cold paths run on application threads under the registry mutex (once per
// thread per session) or the thread's names_mu (new names).
#include "activity/cpu_recorder.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <algorithm>
#include <functional>
#include <mutex>
#include <string_view>

#include "activity/cpu_process_state.h"
#include "util/log.h"

namespace kairos::internal {

ProcessRecorder g_recorder;
thread_local ThreadState* t_thread_state __attribute__((tls_model("initial-exec"))) = nullptr;

namespace {

using Registry = CpuThreadRegistry;

void OnThreadExit(void* state);

void InitProcessRecorder() {
  std::call_once(g_recorder.init, [] {
    (void)pthread_key_create(&g_recorder.exit_key, OnThreadExit);
    g_recorder.dead = new ThreadState;
  });
}

Registry* GetRegistry() {
  Registry* r = g_recorder.registry.load(std::memory_order_acquire);
  if (r != nullptr) return r;
  InitProcessRecorder();
  auto* fresh = new Registry;
  if (g_recorder.registry.compare_exchange_strong(r, fresh, std::memory_order_acq_rel)) return fresh;
  delete fresh;
  return r;
}

ThreadState* DeadState() {
  InitProcessRecorder();
  return g_recorder.dead;
}

}  // namespace

void SetCollectorHooks(ThreadNameLookup lookup, CollectStatsHook stats) {
  g_recorder.thread_name_lookup.store(lookup, std::memory_order_release);
  g_recorder.collect_stats_hook.store(stats, std::memory_order_release);
}
ThreadNameLookup CollectorThreadNameLookup() {
  return g_recorder.thread_name_lookup.load(std::memory_order_acquire);
}
CollectStatsHook CollectorStatsHook() {
  return g_recorder.collect_stats_hook.load(std::memory_order_acquire);
}

namespace {

// One args slot per record: ops carry args on every range (2+ records); raw inputs take more
// slots, never the half kept for the ranges the ring can still hold (StoreOpInputsAndPublish).
// Slots are made resident as they are used (FeedRings): until then they cost address space.
size_t ArgsCapacityFor(size_t ring_records) { return ring_records; }

// A ring for a thread that starts recording: a spare one when its size fits, else new.
// Registry mutex held.
std::unique_ptr<ThreadRing> TakeRing(Registry* reg, size_t cap) {
  // Spares of another size are left from before a size change: nobody uses them.
  while (cap > 0 && !reg->spare_rings.empty()) {
    std::unique_ptr<ThreadRing> r = std::move(reg->spare_rings.back());
    reg->spare_rings.pop_back();
    if (r->capacity() == cap) {
      r->Reset();
      r->feed = ThreadRing::FeedState{};  // the rate was its previous thread's
      return r;
    }
  }
  return std::make_unique<ThreadRing>(cap, ArgsCapacityFor(cap) * sizeof(StoredArgs));
}

// Points the hot fields at `s`'s ring and clears per-session state. Registry mutex held;
// the owning thread is not recording into this state (its epoch differs).
void ResetForSession(ThreadState* s) {
  ThreadRing* ring = s->ring_storage.get();
  s->ring = ring;
  s->args = ring != nullptr ? static_cast<StoredArgs*>(ring->aux()) : nullptr;
  s->args_capacity =
      ring != nullptr ? static_cast<uint32_t>(ring->aux_bytes() / sizeof(StoredArgs)) : 0;
  s->args_used.store(0, std::memory_order_relaxed);
  if (ring != nullptr) {
    // A new window: the feeder measures this writer afresh but remembers its last rate.
    ring->feed.records = 0;
    ring->feed.args = 0;
    ring->feed.last_ns = 0;
  }
  s->depth = 0;
  s->op_depth = 0;
  s->op_entered = 0;
  s->args_dropped.store(0, std::memory_order_relaxed);
  s->names_dropped.store(0, std::memory_order_relaxed);
  s->names_truncated.store(0, std::memory_order_relaxed);
}

// Gives `s` a ring of the configured size for a new session (registry mutex held), with its
// first `head_bytes` of records and the first page of args resident; the ring feeder makes
// the rest resident ahead of the writer. A thread over KAIROS_MAX_THREADS gets an empty
// ring: its records are dropped and counted.
void EnsureRing(Registry* reg, ThreadState* s, size_t head_bytes) {
  if (!s->holds_slot && reg->live_with_ring < reg->max_threads && reg->ring_records > 0) {
    s->holds_slot = true;
    ++reg->live_with_ring;
  }
  const size_t cap = s->holds_slot ? reg->ring_records : 0;
  if (s->ring_storage == nullptr || s->ring_storage->capacity() != cap) {
    std::unique_ptr<ThreadRing> fresh = TakeRing(reg, cap);
    if (s->ring_storage != nullptr) {
      s->ring_storage->Release();
      reg->retired_rings.push_back(std::move(s->ring_storage));
    }
    s->ring_storage = std::move(fresh);
  } else {
    s->ring_storage->Reset();
  }
  if (s->ring_storage != nullptr) s->ring_storage->MakeResident(head_bytes, 1, ~size_t{0});
}

std::string CurrentThreadName() {
  char buf[17] = {};  // PR_GET_NAME: one syscall, 16 bytes with the NUL
  if (prctl(PR_GET_NAME, buf, 0, 0, 0) != 0) return std::string();
  return std::string(buf);
}

}  // namespace

// Another thread's name, read from procfs (the controller names threads it arms).
std::string ThreadNameOf(int64_t tid) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/self/task/%lld/comm", static_cast<long long>(tid));
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::string();
  char buf[64];
  const ssize_t n = read(fd, buf, sizeof(buf));
  close(fd);
  if (n <= 0) return std::string();
  size_t len = static_cast<size_t>(n);
  while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\0')) --len;
  return std::string(buf, len);
}

void DeleteThreadState(CpuThreadRegistry* reg, ThreadState* s) {
  reg->name_bytes.fetch_sub(s->name_bytes, std::memory_order_relaxed);
  if (s->ring_storage != nullptr && !s->holds_slot)
    reg->retained_records -= std::min(reg->retained_records, s->ring_storage->capacity());
  delete s;
}

namespace {

// Keeps `s`'s records of the open session, read from its ring `big`, in a compact copy
// (s->ring_storage) until the flush; over the retention bound or out of memory they are
// dropped and counted. Registry mutex held.
void RetainForFlush(Registry* reg, ThreadState* s, ThreadRing& big) {
  const size_t n = big.size();
  const size_t aux =
      static_cast<size_t>(s->args_used.load(std::memory_order_relaxed)) * sizeof(StoredArgs);
  ThreadRing* kept = nullptr;
  const size_t bound = reg->max_threads * reg->ring_records;
  if (reg->retained_records + n <= bound) kept = big.CompactCopy(n, aux);
  if (kept == nullptr) {
    // Over the retention bound or out of memory: the records are dropped and counted.
    kept = big.CompactCopy(0, 0);
    if (kept != nullptr) kept->AddDropped(n);
  }
  if (kept != nullptr) {
    reg->retained_records += kept->capacity();
    s->ring_storage.reset(kept);
  } else {
    reg->alloc_failures.fetch_add(n, std::memory_order_relaxed);
  }
}

// Thread exit (pthread key destructor, on the exiting thread): the slot is recycled, the
// records of the open session are kept in a compact copy until the flush.
void OnThreadExit(void* state) {
  auto* s = static_cast<ThreadState*>(state);
  t_thread_state = DeadState();
  if (s == nullptr || s == DeadState()) return;
  Registry* reg = g_recorder.registry.load(std::memory_order_acquire);
  if (reg == nullptr) return;
  std::lock_guard<std::mutex> lock(reg->mu);
  if (s->generation != reg->generation) return;  // the parent's, before fork()
  // A thread that claimed a pre-armed state has no name yet; procfs loses it at exit.
  if (s->thread_name.empty()) s->thread_name = CurrentThreadName();
  s->exited.store(true, std::memory_order_release);
  if (!s->holds_slot) return;
  s->holds_slot = false;
  --reg->live_with_ring;
  std::unique_ptr<ThreadRing> big = std::move(s->ring_storage);
  if (big == nullptr) return;
  // A session's records that were collected already (the thread exits after its session's
  // Reset) are read by nobody again: nothing is kept. Kept, they counted against the next
  // session's retention bound, and threads exiting in that session lost their records.
  if (s->epoch.load(std::memory_order_relaxed) != reg->collected_epoch)
    RetainForFlush(reg, s, *big);
  // Point the collector at the copy, or at nothing (args slots keep their numbers: the copy
  // holds the first args_used of them).
  ThreadRing* ring = s->ring_storage.get();
  s->ring = ring;
  s->args = ring != nullptr ? static_cast<StoredArgs*>(ring->aux()) : nullptr;
  s->args_capacity =
      ring != nullptr ? static_cast<uint32_t>(ring->aux_bytes() / sizeof(StoredArgs)) : 0;
  big->Reset();
  if (reg->spare_rings.size() < reg->max_threads) reg->spare_rings.push_back(std::move(big));
}

}  // namespace

void ConfigureRings(size_t ring_records, int64_t max_threads, uint64_t name_byte_budget) {
  Registry* reg = GetRegistry();
  std::lock_guard<std::mutex> lock(reg->mu);
  reg->ring_records = ring_records;
  reg->max_threads = max_threads > 0 ? static_cast<size_t>(max_threads) : 0;
  if (name_byte_budget > 0) reg->name_budget = name_byte_budget;
}

namespace {

// The first record of a thread that never recorded: takes a state the controller pre-armed
// for `epoch` (ring prefaulted, names reserved), or nullptr when none is offered. No lock,
// no allocation: one CAS and a gettid.
ThreadState* ClaimPreArmed(uint32_t epoch) {
  Registry* reg = g_recorder.registry.load(std::memory_order_acquire);
  if (reg == nullptr) return nullptr;
  uint64_t cur = reg->ready_cursor.load(std::memory_order_acquire);
  for (;;) {
    if (static_cast<uint32_t>(cur >> 32) != epoch) return nullptr;
    const uint64_t next = cur & 0xFFFF, count = (cur >> 16) & 0xFFFF;
    if (next >= count) return nullptr;
    ThreadState* s = reg->ready[next].load(std::memory_order_acquire);
    if (reg->ready_cursor.compare_exchange_weak(cur, cur + 1, std::memory_order_acq_rel,
                                                std::memory_order_acquire)) {
      // The name is not read here (prctl costs more than the rest of the claim together):
      // the thread names itself at exit, the collector reads it from procfs otherwise.
      s->tid = static_cast<int64_t>(syscall(SYS_gettid));
      t_thread_state = s;
      pthread_setspecific(g_recorder.exit_key, s);  // one of the first keys: no allocation
      s->owner_known.store(true, std::memory_order_release);
      g_recorder.prearmed_claims.fetch_add(1, std::memory_order_relaxed);
      return s;
    }
  }
}

ThreadState* AcquireThreadStateImpl(uint32_t epoch) {
  g_recorder.slow_acquires.fetch_add(1, std::memory_order_relaxed);
  ThreadState* s = t_thread_state;
  if (s == DeadState()) return nullptr;  // thread is exiting
  Registry* reg = GetRegistry();
  std::lock_guard<std::mutex> lock(reg->mu);
  if (s != nullptr && s->generation != reg->generation) s = nullptr;  // parent's, pre-fork
  // The controller armed this state while we waited for the mutex.
  if (s != nullptr && s->epoch.load(std::memory_order_relaxed) == epoch) return s;
  if (s == nullptr) {
    if (reg->states.size() == reg->states.capacity())  // the push_back below cannot throw
      reg->states.reserve(std::max<size_t>(64, 2 * reg->states.capacity()));
    auto fresh = std::make_unique<ThreadState>();
    fresh->names.emplace_back();
    fresh->tid = static_cast<int64_t>(syscall(SYS_gettid));
    fresh->generation = reg->generation;
    s = fresh.release();
    reg->states.push_back(s);
    t_thread_state = s;
    pthread_setspecific(g_recorder.exit_key, s);
  }
  // Only a head on this (the application's) thread: the feeder grows the rest.
  EnsureRing(reg, s, kPreArmedPrefaultBytes);
  ResetForSession(s);
  s->thread_name = CurrentThreadName();
  s->epoch.store(epoch, std::memory_order_release);
  return s;
}
}  // namespace

ThreadState* AcquireThreadStateSlow(uint32_t epoch) {
  if (t_thread_state == nullptr) {
    if (ThreadState* s = ClaimPreArmed(epoch)) return s;
  }
  // Allocation failure on an application thread drops the record (counted); never throws.
  try {
    return AcquireThreadStateImpl(epoch);
  } catch (...) {
    if (Registry* reg = g_recorder.registry.load(std::memory_order_acquire))
      reg->alloc_failures.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
}

namespace {

// Threads of this process not registered with the recorder (the caller excluded): the ones
// that may make their first record in the coming window. Registry mutex held.
size_t CountUnregisteredThreads(Registry* reg) {
  std::vector<int64_t> known;
  known.reserve(reg->states.size() + 1);
  known.push_back(static_cast<int64_t>(syscall(SYS_gettid)));
  for (ThreadState* s : reg->states) {
    if (s->prearmed_unclaimed || !s->owner_known.load(std::memory_order_acquire)) continue;
    if (!s->exited.load(std::memory_order_acquire)) known.push_back(s->tid);
  }
  std::sort(known.begin(), known.end());
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return 0;
  size_t n = 0;
  while (dirent* e = readdir(d)) {
    const long long tid = std::atoll(e->d_name);
    if (tid > 0 && !std::binary_search(known.begin(), known.end(), tid)) ++n;
  }
  closedir(d);
  return n;
}

// Closes the last epoch's offer: from here no claim of it can succeed, and the entries
// before the old cursor's `next` are exactly the claimed ones, which become registered
// threads (armed like every other). Registry mutex held.
void ClosePreArmedOffer(Registry* reg, uint32_t epoch) {
  const uint64_t old = reg->ready_cursor.exchange(uint64_t{epoch} << 32, std::memory_order_acq_rel);
  const size_t claimed = std::min<size_t>(old & 0xFFFF, reg->prearmed.size());
  for (size_t i = 0; i < claimed; ++i) reg->prearmed[i]->prearmed_unclaimed = false;
  reg->prearmed.erase(reg->prearmed.begin(), reg->prearmed.begin() + claimed);
}

}  // namespace

void ClosePreArmedOfferLocked(CpuThreadRegistry* reg) {
  ClosePreArmedOffer(reg, static_cast<uint32_t>(reg->ready_cursor.load(std::memory_order_acquire) >> 32));
}

namespace {

// Offers pre-armed states for `epoch` (see ArmRegisteredThreads), after ClosePreArmedOffer.
// Registry mutex held.
void PreArmNewThreads(Registry* reg, uint32_t epoch) {
  // At most half of the KAIROS_MAX_THREADS slots the registered threads leave free: threads
  // created after warm-up must still find one.
  size_t held = 0;
  for (ThreadState* s : reg->prearmed) held += s->holds_slot ? 1 : 0;
  const size_t others = reg->live_with_ring - held;
  const size_t free_slots = reg->max_threads > others ? reg->max_threads - others : 0;
  const size_t want = std::min({CountUnregisteredThreads(reg), kMaxPreArmed, free_slots / 2});
  // Unclaimed states beyond the need are freed: nothing can reach them now.
  while (reg->prearmed.size() > want) {
    ThreadState* s = reg->prearmed.back();
    reg->prearmed.pop_back();
    reg->states.erase(std::find(reg->states.begin(), reg->states.end(), s));
    if (s->holds_slot) --reg->live_with_ring;
    DeleteThreadState(reg, s);
  }
  try {
    while (reg->prearmed.size() < want && reg->live_with_ring < reg->max_threads &&
           reg->ring_records > 0) {
      auto fresh = std::make_unique<ThreadState>();
      fresh->names.emplace_back();
      fresh->name_index.reserve(16);  // the first names it interns allocate nothing
      fresh->generation = reg->generation;
      fresh->prearmed_unclaimed = true;
      fresh->owner_known.store(false, std::memory_order_relaxed);
      reg->states.reserve(reg->states.size() + 1);
      reg->prearmed.reserve(reg->prearmed.size() + 1);
      reg->states.push_back(fresh.get());
      reg->prearmed.push_back(fresh.release());
    }
  } catch (...) {
    // Out of memory: fewer states are offered; the other threads register themselves.
  }
  size_t count = 0;
  for (ThreadState* s : reg->prearmed) {
    try {
      // The first state offered is claimed by the window's first new writer, which may
      // stream records from its first one on: its head lasts until the feeder's next pass
      // has seen it (kFirstClaimHeadBytes). The others keep the small head: memory held
      // for threads that may never record stays small.
      EnsureRing(reg, s, count == 0 ? kFirstClaimHeadBytes : kPreArmedPrefaultBytes);
    } catch (...) {
      break;
    }
    ResetForSession(s);
    s->epoch.store(epoch, std::memory_order_release);
    reg->ready[count++].store(s, std::memory_order_relaxed);
  }
  reg->ready_cursor.store((uint64_t{epoch} << 32) | (uint64_t{count} << 16),
                          std::memory_order_release);
}

}  // namespace

size_t ArmRegisteredThreads(uint32_t epoch) {
  Registry* reg = GetRegistry();
  std::lock_guard<std::mutex> lock(reg->mu);
  ClosePreArmedOffer(reg, epoch);
  size_t armed = 0;
  for (ThreadState* s : reg->states) {
    if (s->exited.load(std::memory_order_acquire) || s->generation != reg->generation) continue;
    // Pre-armed states are offered below; a claimed one whose owner has not yet written its
    // tid is left to arm itself on its next record.
    if (s->prearmed_unclaimed || !s->owner_known.load(std::memory_order_acquire)) continue;
    if (s->epoch.load(std::memory_order_relaxed) == epoch) continue;  // armed itself already
    try {
      EnsureRing(reg, s, kArmedHeadBytes);
      std::string name = ThreadNameOf(s->tid);
      if (!name.empty()) s->thread_name = std::move(name);
    } catch (...) {
      continue;  // out of memory: the thread arms itself on its first record (or drops)
    }
    ResetForSession(s);
    s->epoch.store(epoch, std::memory_order_release);
    ++armed;
  }
  PreArmNewThreads(reg, epoch);
  return armed;
}

namespace {

// Stores `src` cut to at most `max` bytes as prefix + "..." in `buf` (never splitting a
// UTF-8 sequence); `src` may point into `buf`.
std::string_view Truncate(const char* src, size_t max, char* buf) {
  size_t cut = max - 3;
  while (cut > 0 && (static_cast<unsigned char>(src[cut]) & 0xC0) == 0x80) --cut;
  std::memmove(buf, src, cut);
  std::memcpy(buf + cut, "...", 3);
  return std::string_view(buf, cut + 3);
}

uint32_t InternNameImpl(ThreadState* s, const char* name) {
  Registry* reg = GetRegistry();
  const size_t len = strnlen(name, kMaxNameBytes + 1);
  char buf[kMaxNameBytes + 1];
  std::string_view key(name, len);
  bool truncated = false;
  if (len > kMaxNameBytes) {
    key = Truncate(name, kMaxNameBytes, buf);
    truncated = true;
  }
  uint32_t id = 0;
  {
    std::lock_guard<std::mutex> lock(s->names_mu);
    auto it = s->name_index.find(key);
    const uint64_t used = reg->name_bytes.load(std::memory_order_relaxed);
    if (it == s->name_index.end() && key.size() > kOverBudgetNameBytes &&
        used + key.size() + kNameEntryOverhead > reg->name_budget) {
      // Budget spent: new names are kept short (distinct prefixes stay distinct).
      key = Truncate(key.data(), kOverBudgetNameBytes, buf);
      truncated = true;
      it = s->name_index.find(key);
    }
    if (it != s->name_index.end()) {
      id = it->second;
    } else {
      const uint64_t cost = key.size() + kNameEntryOverhead;
      // Short names may still be added past the budget, up to twice it: a hard ceiling.
      if (s->names.size() >= kMaxNamesPerThread || used + cost > 2 * reg->name_budget) {
        s->names_dropped.fetch_add(1, std::memory_order_relaxed);
        return 0;
      }
      id = static_cast<uint32_t>(s->names.size());
      s->names.emplace_back(key);
      try {
        s->name_index.emplace(s->names.back(), id);
      } catch (...) {
        s->names.pop_back();
        throw;
      }
      s->name_bytes += cost;
      reg->name_bytes.fetch_add(cost, std::memory_order_relaxed);
      if (truncated) s->names_truncated.fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (!truncated && len <= kCachedNameMax) {
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
  // Relaxed: only this thread writes it; the ring feeder reads it to size the resident area.
  const uint32_t used = s->args_used.load(std::memory_order_relaxed);
  if (used >= s->args_capacity) {
    s->args_dropped.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  StoredArgs& a = s->args[used];
  a.domain = LookupName(s, args.domain);
  a.category = LookupName(s, args.category);
  a.category_id = args.category_id;
  a.color_argb = args.color_argb;
  a.has_color = args.has_color;
  a.payload_type = args.payload_type;
  a.py_line = args.py_line;
  a.payload_bits = args.payload_bits;
  a.cpu_op = args.cpu_op;
  a.input_dims = args.cpu_op ? LookupName(s, args.input_dims) : 0;
  a.input_types = args.cpu_op ? LookupName(s, args.input_types) : 0;
  a.sequence_nr = args.sequence_nr;
  a.fwd_thread_id = args.fwd_thread_id;
  a.record_function_id = args.record_function_id;
  a.flops = args.flops;
  StoreOpInputsAndPublish(s, a, args.cpu_op ? args.inputs : nullptr, used);
  return used + 1;
}

void RefillIdBlock(ThreadState* s) {
  uint32_t base = g_recorder.next_id_block.fetch_add(1, std::memory_order_relaxed) * kIdBlock;
  if (base == 0) base = 1;  // after wrap-around: 0 means "no range"
  s->next_id = base;
  s->id_limit = base - (base % kIdBlock) + kIdBlock;
}

uint32_t InternPythonName(std::string_view name) {
  try {
    Registry* reg = GetRegistry();
    char buf[kMaxNameBytes + 4];
    std::string cut;
    if (name.size() > kMaxNameBytes) {
      cut.assign(name.substr(0, kMaxNameBytes + 1));
      name = Truncate(cut.c_str(), kMaxNameBytes, buf);
    }
    Registry::PythonNames& t = reg->python;
    std::lock_guard<std::mutex> lock(t.mu);
    auto it = t.index.find(name);
    if (it != t.index.end()) return it->second;
    if (t.names.size() >= kMaxPythonNames || t.bytes + name.size() > kMaxPythonNameBytes)
      return 0;
    t.names.emplace_back(name);
    const auto id = static_cast<uint32_t>(t.names.size() - 1);
    t.index.emplace(t.names.back(), id);
    t.bytes += name.size();
    return id;
  } catch (...) {
    return 0;  // out of memory: the frame is recorded without its name
  }
}

void ForEachPythonName(const std::vector<uint32_t>& ids,
                       const std::function<void(uint32_t, std::string_view)>& fn) {
  Registry::PythonNames& t = GetRegistry()->python;
  std::lock_guard<std::mutex> lock(t.mu);
  for (uint32_t id : ids) fn(id, id < t.names.size() ? std::string_view(t.names[id]) : "");
}

void CpuRecorderAfterForkChild() {
  g_recorder.epoch.store(0, std::memory_order_relaxed);
  Registry* old = g_recorder.registry.load(std::memory_order_relaxed);
  auto* fresh = new Registry;  // the parent's is leaked: its mutex may be held forever
  fresh->abandoned_parent = old;  // reachable for leak checkers in the child
  if (old != nullptr) {
    fresh->generation = old->generation + 1;
    fresh->ring_records = old->ring_records;
    fresh->max_threads = old->max_threads;
    fresh->name_budget = old->name_budget;
  }
  g_recorder.registry.store(fresh, std::memory_order_release);
}

size_t RegisteredThreadCount() {
  Registry* reg = GetRegistry();
  std::lock_guard<std::mutex> lock(reg->mu);
  return reg->states.size();
}

uint64_t NameBytesInUse() {
  return GetRegistry()->name_bytes.load(std::memory_order_relaxed);
}

uint64_t SlowAcquiresForTest() { return g_recorder.slow_acquires.load(std::memory_order_relaxed); }
uint64_t PreArmedClaimsForTest() { return g_recorder.prearmed_claims.load(std::memory_order_relaxed); }
size_t PreArmedUnclaimedForTest() {
  Registry* reg = GetRegistry();
  std::lock_guard<std::mutex> lock(reg->mu);
  const uint64_t cur = reg->ready_cursor.load(std::memory_order_acquire);
  const size_t count = (cur >> 16) & 0xFFFF, next = cur & 0xFFFF;
  return count > next ? count - next : 0;
}

uint64_t TakeAllocFailures() {
  return GetRegistry()->alloc_failures.exchange(0, std::memory_order_relaxed);
}

void ForEachThreadStateLocked(const std::function<void(ThreadState&)>& fn) {
  Registry* reg = GetRegistry();
  std::lock_guard<std::mutex> lock(reg->mu);
  for (ThreadState* s : reg->states) fn(*s);
}

// ---- Reached by the recorder's other files (cpu_process_state.h) ----

CpuThreadRegistry* CpuRegistry() { return GetRegistry(); }

CpuThreadRegistry* CpuRegistryIfCreated() {
  return g_recorder.registry.load(std::memory_order_acquire);
}

uint32_t ReserveCpuEpoch() {
  uint32_t e = g_recorder.epoch_counter.fetch_add(1, std::memory_order_relaxed) + 1;
  if (e == 0) e = g_recorder.epoch_counter.fetch_add(1, std::memory_order_relaxed) + 1;
  return e;
}

}  // namespace kairos::internal
