// File: pm_backend.h
// Layer: kairos_counters. The seam between the PM-sampling TraceSource (pm_source.h) and
// CUPTI: a platform that says how many GPUs there are and opens one sampler per GPU. The
// CUPTI implementation is pm_cupti.h (CUDA builds); tests inject a fake, so the source's
// window, bounding and track logic is tested without CUPTI.
// Threading: a PmSampler is used by one thread at a time (the source serialises calls).
#ifndef KAIROS_SRC_COUNTERS_PM_BACKEND_H_
#define KAIROS_SRC_COUNTERS_PM_BACKEND_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace kairos {

// One decoded sample: its interval on the Unix-ns clock and one value per configured metric
// (in configuration order).
struct PmSample {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::vector<double> values;
};

class PmSampler {
 public:
  virtual ~PmSampler() = default;
  // Configures and starts sampling `metrics` every `interval_ns` on `device`. An error is
  // one line naming the CUPTI result (e.g. CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) and what it
  // means for the user.
  virtual absl::Status Start(uint32_t device, const std::vector<std::string>& metrics,
                             int64_t interval_ns) = 0;
  // Decodes what the hardware collected since the last call; appends completed samples.
  // `overflowed` is set when the hardware buffer lost samples.
  virtual absl::Status Poll(std::vector<PmSample>* out, bool* overflowed) = 0;
  // Stops sampling and releases the device (idempotent). A final Poll should precede it.
  virtual void Stop() = 0;
};

// A GPU's identity for telemetry lines and the fleet agent's gpu_uuid label: the UUID as
// nvidia-smi prints it ("GPU-" + 8-4-4-4-12 hex) and the device name; "" when unknown.
struct GpuIdentity {
  std::string uuid, name;
};

class PmPlatform {
 public:
  virtual ~PmPlatform() = default;
  // GPUs visible to the process; 0 when unknown.
  virtual int DeviceCount() = 0;
  // The identity of GPU `device` (an ordinal); empty fields when unknown.
  virtual GpuIdentity Identity(int /*device*/) { return {}; }
  virtual std::unique_ptr<PmSampler> Open() = 0;
};

}  // namespace kairos

#endif  // KAIROS_SRC_COUNTERS_PM_BACKEND_H_
