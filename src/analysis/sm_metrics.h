// File: sm_metrics.h
// Layer: kairos_analysis (internal). The launch shape of one kernel record against its
// device: blocks, blocks per SM and occupancy (via occupancy.h), shared by the SM proxy
// metrics and the concurrency/occupancy detectors.
// Threading: pure functions.
#ifndef KAIROS_SRC_ANALYSIS_SM_METRICS_H_
#define KAIROS_SRC_ANALYSIS_SM_METRICS_H_

#include <cstdint>
#include <vector>

#include "model/trace_data.h"

namespace kairos::internal {

struct KernelShape {
  uint64_t blocks = 0;          // 0 = no launch configuration
  int32_t sm_count = 0;         // 0 = device limits unknown
  double blocks_per_sm = 0.0;
  bool occupancy_valid = false;
  double theoretical_pct = 0.0;
  double est_achieved_pct = 0.0;
  uint8_t limiting = 0;         // OccupancyLimit bits
};

KernelShape ShapeOf(const TraceData& data, const Event& kernel, const DeviceInfo* device);

// ShapeOf memoised per kernel side-table row (rows are de-duplicated launch
// configurations, so a million launches usually share a handful of rows).
class ShapeCache {
 public:
  ShapeCache(const TraceData& data, const DeviceInfo* device)
      : data_(data), device_(device), rows_(data.kernels.size()), done_(data.kernels.size(), 0) {}
  KernelShape Get(const Event& kernel) {
    if (kernel.detail >= rows_.size()) return ShapeOf(data_, kernel, device_);
    if (!done_[kernel.detail]) {
      rows_[kernel.detail] = ShapeOf(data_, kernel, device_);
      done_[kernel.detail] = 1;
    }
    return rows_[kernel.detail];
  }

 private:
  const TraceData& data_;
  const DeviceInfo* device_;
  std::vector<KernelShape> rows_;
  std::vector<uint8_t> done_;
};

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ANALYSIS_SM_METRICS_H_
