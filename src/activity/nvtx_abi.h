// File: nvtx_abi.h
// Layer: kairos_activity. The few NVTX injection ABI types kairos needs (NVTX 3 headers,
// injection load sequence version 2), declared from the documented layouts so NVTX capture
// builds and works without the CUDA toolkit. static_asserts pin every offset we read.
// Threading: types only.
#ifndef KAIROS_SRC_ACTIVITY_NVTX_ABI_H_
#define KAIROS_SRC_ACTIVITY_NVTX_ABI_H_

#include <cstddef>
#include <cstdint>

namespace kairos::internal::nvtx {

// Export table ids passed to the getter given to InitializeInjectionNvtx2.
inline constexpr uint32_t kExportTableCallbacks = 1;

// Callback modules (NvtxCallbackModule).
inline constexpr int kModuleCore = 1;
inline constexpr int kModuleCore2 = 5;  // domains

// Slots of the CORE module (slot 0 unused).
enum CoreSlot : uint32_t {
  kMarkEx = 1, kMarkA = 2, kMarkW = 3,
  kRangeStartEx = 4, kRangeStartA = 5, kRangeStartW = 6, kRangeEnd = 7,
  kRangePushEx = 8, kRangePushA = 9, kRangePushW = 10, kRangePop = 11,
  kNameCategoryA = 12, kNameCategoryW = 13, kNameOsThreadA = 14, kNameOsThreadW = 15,
};

// Slots of the CORE2 (domain) module.
enum Core2Slot : uint32_t {
  kDomainMarkEx = 1, kDomainRangeStartEx = 2, kDomainRangeEnd = 3,
  kDomainRangePushEx = 4, kDomainRangePop = 5,
  kDomainNameCategoryA = 8, kDomainNameCategoryW = 9,
  kDomainRegisterStringA = 10, kDomainRegisterStringW = 11,
  kDomainCreateA = 12, kDomainCreateW = 13, kDomainDestroy = 14,
};

using FunctionPointer = void (*)();
using FunctionTable = FunctionPointer**;  // table[slot] points AT the application's slot
using GetExportTableFn = const void* (*)(uint32_t export_table_id);

struct ExportTableCallbacks {
  size_t struct_size;
  int (*GetModuleFunctionTable)(int module, FunctionTable* out_table, unsigned int* out_size);
};

// nvtxEventAttributes_t (version 3, 48 bytes).
inline constexpr int32_t kColorArgb = 1;
inline constexpr int32_t kMessageAscii = 1;
inline constexpr int32_t kMessageUnicode = 2;
inline constexpr int32_t kMessageRegistered = 3;

struct EventAttributes {
  uint16_t version;
  uint16_t size;
  uint32_t category;
  int32_t color_type;
  uint32_t color;
  int32_t payload_type;  // same numbering as RangeArgs::payload_type (1 u64 ... 6 float)
  int32_t reserved0;
  uint64_t payload_bits;  // the payload union, read as raw bits
  int32_t message_type;
  int32_t pad;
  union {
    const char* ascii;
    const wchar_t* unicode;
    const void* registered;  // a handle kairos returned: points at interned UTF-8
  } message;
};
static_assert(sizeof(EventAttributes) == 48);
static_assert(offsetof(EventAttributes, category) == 4);
static_assert(offsetof(EventAttributes, color_type) == 8);
static_assert(offsetof(EventAttributes, color) == 12);
static_assert(offsetof(EventAttributes, payload_type) == 16);
static_assert(offsetof(EventAttributes, payload_bits) == 24);
static_assert(offsetof(EventAttributes, message_type) == 32);
static_assert(offsetof(EventAttributes, message) == 40);

// NVTX's "no push/pop tracking" value, returned by push/pop of a filtered domain.
inline constexpr int kNoPushPopTracking = -2;

}  // namespace kairos::internal::nvtx

#endif  // KAIROS_SRC_ACTIVITY_NVTX_ABI_H_
