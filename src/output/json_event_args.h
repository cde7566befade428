// File: json_event_args.h
// Layer: kairos_output (internal to the JSON writer). Display names and `args` objects of
// each event kind, in the key order of trace-format-kineto-json.md §4.
// Threading: one thread per formatter.
#ifndef KAIROS_SRC_OUTPUT_JSON_EVENT_ARGS_H_
#define KAIROS_SRC_OUTPUT_JSON_EVENT_ARGS_H_

#include <cstdint>
#include <vector>

#include "event.h"
#include "output/json_out.h"
#include "trace_data.h"

namespace kairos {
namespace internal {

// "HtoD", ..., "PtoP", else "<unknown>" (CUpti_ActivityMemcpyKind).
const char* MemcpyKindName(uint8_t kind);
// "Pageable", "Device", ... else "Unknown" (CUpti_ActivityMemoryKind).
const char* MemoryKindName(uint8_t kind);
// "Event Sync", "Stream Wait Event", "Stream Sync", "Context Sync", else "Unknown Sync".
const char* SyncKindName(uint8_t sync_type);
inline constexpr uint8_t kMemcpyKindPtoP = 10;
inline constexpr uint8_t kSyncEvent = 1;
inline constexpr uint8_t kSyncStreamWaitEvent = 2;

class JsonEventFormatter {
 public:
  explicit JsonEventFormatter(const TraceData& data);

  // Writes the event's name as a JSON string: memcpy/memset/sync names are derived from
  // their details, a kernel literally named "kernel" is written "Kernel" (as Kineto does).
  void WriteName(const Event& e, JsonOut& out) const;
  // Writes `,"args":{...}`, or nothing when the event has no args.
  void WriteArgs(const Event& e, JsonOut& out);

 private:
  void CpuArgsOf(const Event& e, ArgsOut& args) const;
  void KernelArgs(const Event& e, ArgsOut& args);
  void MemcpyArgs(const Event& e, ArgsOut& args) const;
  void MemsetArgs(const Event& e, ArgsOut& args) const;
  void SyncArgs(const Event& e, ArgsOut& args) const;
  void CudaEventArgs(const Event& e, ArgsOut& args) const;
  const DeviceInfo* Device(uint32_t id) const {
    return id < devices_by_id_.size() ? devices_by_id_[id] : nullptr;
  }

  const TraceData& data_;
  std::vector<const DeviceInfo*> devices_by_id_;
  // Per KernelDetail row: est. achieved occupancy %, or -1 when not yet computed. Rows are
  // de-duplicated launch configurations, so this is computed once per configuration.
  std::vector<int32_t> occupancy_pct_;
};

}  // namespace internal
}  // namespace kairos

#endif  // KAIROS_SRC_OUTPUT_JSON_EVENT_ARGS_H_
