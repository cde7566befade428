// File: cupti_totals.cc
// Layer: kairos_activity (CUDA builds only). See cupti_totals.h.
#include "activity/cupti_totals.h"

#include "util/clock.h"

namespace kairos::internal {

void CuptiTotals::Count(const uint8_t* buffer, size_t valid_size) {
  if (!on_.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(mu_);
  tally_.AddBuffer(buffer, valid_size, UnixNowNs());
}

ActivityTotals CuptiTotals::Take(uint32_t device, int64_t end_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  const CuptiTally::Totals t = tally_.Take(device, end_ns);
  ActivityTotals out;
  out.complete = !failed_.load();
  out.kernels = t.kernels;
  out.memcpy_bytes = t.memcpy_bytes;
  out.busy_ns = t.busy_ns;
  return out;
}

}  // namespace kairos::internal
