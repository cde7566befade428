// File: cpu_process_state.h
// Layer: kairos_activity. The CPU recorder's thread registry, which the one ProcessRecorder
// (cpu_recorder.h, defined in cpu_recorder.cc) holds, and the functions through which the
// recorder's other files reach it.
// docs/ARCHITECTURE.md "Process state" lists it.
// Threading: as each field says; the registry's fields under its mutex unless atomic.
#ifndef KAIROS_SRC_ACTIVITY_CPU_PROCESS_STATE_H_
#define KAIROS_SRC_ACTIVITY_CPU_PROCESS_STATE_H_

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "activity/cpu_recorder.h"
#include "activity/thread_ring.h"

namespace kairos::internal {

// Every thread state created in this process image and not yet retired. Heap-allocated and
// never freed: threads may still record while the process exits, after static destructors.
struct CpuThreadRegistry {
  std::mutex mu;
  std::vector<ThreadState*> states;
  uint64_t generation = 0;
  size_t ring_records = 0;  // set by ConfigureRings before any thread records
  size_t max_threads = 256;
  size_t live_with_ring = 0;  // live threads holding a slot (<= max_threads)
  // Rings of exited threads, reset with their head resident: the next new thread takes one
  // instead of allocating. Freed at the end of each session.
  std::vector<std::unique_ptr<ThreadRing>> spare_rings;
  // Records kept for exited threads until the flush; bounded by max_threads full rings.
  size_t retained_records = 0;
  // The epoch of the last session collected and reset (CpuRecorder::Reset): a thread that
  // exits later with a state of that epoch has nothing left to keep (OnThreadExit). 0 (never
  // an epoch) matches a state that was never armed, which has nothing to keep either.
  uint32_t collected_epoch = 0;
  // Rings replaced by a size change while their thread lives: a thread that read a stale
  // epoch may still write to one, so they are only released to the kernel, never unmapped.
  std::vector<std::unique_ptr<ThreadRing>> retired_rings;
  std::atomic<uint64_t> name_bytes{0};
  uint64_t name_budget = kDefaultNameByteBudget;
  // Records dropped because the thread's state could not be allocated.
  std::atomic<uint64_t> alloc_failures{0};
  // States pre-armed for threads that never recorded (ArmRegisteredThreads): ready[i] for
  // i < count are offered; a first record claims the next one by advancing ready_cursor
  // (epoch << 32 | count << 16 | next) with one compare-and-swap. The controller closes the
  // cursor (a new epoch, count 0) before it rewrites ready[], so a claim that read an entry
  // of another epoch fails its compare-and-swap. `prearmed` mirrors ready[] (mutex).
  std::atomic<ThreadState*> ready[kMaxPreArmed] = {};
  std::atomic<uint64_t> ready_cursor{0};
  std::vector<ThreadState*> prearmed;
  // Where the ring feeder's next pass starts (FeedRings): after a pass that ran out of
  // budget, at the ring it stopped on.
  size_t feed_cursor = 0;
  // Python frame names (InternPythonName): process-wide ids the python tracer caches per code
  // object, so a frame's record carries no text. Own mutex: a new code object on a Python
  // thread never waits for the registry.
  struct PythonNames {
    std::mutex mu;
    std::deque<std::string> names{std::string()};  // [0] = "" (dropped); deque: views stay valid
    absl::flat_hash_map<std::string_view, uint32_t> index;
    uint64_t bytes = 0;
  } python;
  // In a forked child, the parent's registry it replaced (CpuRecorderAfterForkChild): never
  // touched again (its mutex may be held by a thread that does not exist here), only kept
  // reachable so leak checkers in the child stay quiet. A chain over nested forks.
  const CpuThreadRegistry* abandoned_parent = nullptr;
};

// The recorder's other files (cpu_recorder_session.cc, cpu_ring_feed.cc) reach the one
// ProcessRecorder through these; cpu_recorder.cc defines them beside it.
// The registry, created on first use.
CpuThreadRegistry* CpuRegistry();
// The registry, or nullptr while no thread has recorded (the feeder creates nothing).
CpuThreadRegistry* CpuRegistryIfCreated();
// A fresh recording epoch, unique in the process and never 0.
uint32_t ReserveCpuEpoch();
// Frees a retired state (registry mutex held; it is no longer in reg->states).
void DeleteThreadState(CpuThreadRegistry* reg, ThreadState* s);
// Ends the current offer of pre-armed states (registry mutex held): the claimed ones leave
// reg->prearmed and are registered threads from then on, so one whose thread exits can be
// freed without the next offer reaching it.
void ClosePreArmedOfferLocked(CpuThreadRegistry* reg);

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_CPU_PROCESS_STATE_H_
