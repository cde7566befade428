// File: thread_ring.cc — see thread_ring.h.
// Layer: kairos_activity. Threading: constructed on the producer's cold path.
#include "activity/thread_ring.h"

#include <cstring>
#include <new>

namespace kairos::internal {

ThreadRing::ThreadRing(size_t capacity)
    : records_(capacity ? new (std::nothrow) RingRecord[capacity] : nullptr),
      capacity_(records_ ? capacity : 0) {
  // Prefault: writing zeros touches every page so the first appends in a window do not
  // stall on page faults.
  if (records_) std::memset(static_cast<void*>(records_.get()), 0, capacity_ * sizeof(RingRecord));
}

}  // namespace kairos::internal
