// File: detail_values.h
// Layer: kairos_model (event model). Names for the raw CUPTI enum values the side tables of
// event.h store (stored raw so a value a newer CUPTI adds survives): every comparison and
// name table uses these instead of bare numbers.
// Threading: constants only.
#ifndef KAIROS_SRC_DETAIL_VALUES_H_
#define KAIROS_SRC_DETAIL_VALUES_H_

#include <cstdint>

namespace kairos {

// MemcpyDetail::copy_kind (CUpti_ActivityMemcpyKind).
enum MemcpyKindValue : uint8_t {
  kMemcpyUnknown = 0, kMemcpyHtoD = 1, kMemcpyDtoH = 2, kMemcpyHtoA = 3, kMemcpyAtoH = 4,
  kMemcpyAtoA = 5, kMemcpyAtoD = 6, kMemcpyDtoA = 7, kMemcpyDtoD = 8, kMemcpyHtoH = 9,
  kMemcpyPtoP = 10,  // peer-to-peer (CUPTI MEMCPY2 records): src/dst device and context set
};
// MemcpyDetail::src_kind/dst_kind, MemsetDetail::memory_kind (CUpti_ActivityMemoryKind).
enum MemoryKindValue : uint8_t {
  kMemoryUnknown = 0, kMemoryPageable = 1, kMemoryPinned = 2, kMemoryDevice = 3,
  kMemoryArray = 4, kMemoryManaged = 5, kMemoryDeviceStatic = 6, kMemoryManagedStatic = 7,
};
// SyncDetail::sync_type (CUpti_ActivitySynchronizationType).
enum SyncTypeValue : uint8_t {
  kSyncUnknown = 0, kSyncEvent = 1, kSyncStreamWaitEvent = 2, kSyncStream = 3, kSyncContext = 4,
};
// CpuArgs::payload_type (the NVTX payload types kairos keeps).
enum PayloadTypeValue : uint8_t {
  kPayloadNone = 0, kPayloadU64 = 1, kPayloadI64 = 2, kPayloadDouble = 3, kPayloadU32 = 4,
  kPayloadI32 = 5, kPayloadFloat = 6,
};
// The `stream` of a detail row with no stream (CUPTI's invalid-value marker, 0xFFFFFFFF).
inline constexpr uint32_t kNoStream = 0xFFFFFFFFu;

}  // namespace kairos

#endif  // KAIROS_SRC_DETAIL_VALUES_H_
