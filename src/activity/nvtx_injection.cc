// File: nvtx_injection.cc — see nvtx_injection.h.
// Layer: kairos_activity. The NVTX handlers (core and domain modules) and slot installation.
// Threading: handlers run on application threads and never lock on the ranges' path; domain
// creation, string registration and naming take the registry mutex (nvtx_registry.cc).
#include "activity/nvtx_injection.h"

#include "activity/cpu_recorder.h"
#include "activity/nvtx_registry.h"

namespace kairos::internal {
namespace {

using nvtx::EventAttributes;

// NVTX push/pop nesting level of this thread, kept even when nothing records because the
// handlers must return it. Initial-exec: one %fs-relative access inside the dlopen'ed tool.
thread_local int t_nvtx_depth __attribute__((tls_model("initial-exec"))) = 0;

constexpr size_t kWideBufferBytes = 512;

inline bool Recording() { return g_recorder.epoch.load(std::memory_order_relaxed) != 0; }

// Fills `args` and returns the message of `a` (UTF-8; wide text is converted into `wide`).
inline const char* Decode(const NvtxDomain* d, const EventAttributes* a, RangeArgs* args,
                          char (&wide)[kWideBufferBytes]) {
  args->domain = d->name;
  if (a == nullptr) return nullptr;
  args->category_id = a->category;
  args->category = NvtxCategoryName(d, a->category);
  if (a->color_type == nvtx::kColorArgb) {
    args->has_color = 1;
    args->color_argb = a->color;
  }
  if (a->payload_type >= 1 && a->payload_type <= 6) {
    args->payload_type = static_cast<uint8_t>(a->payload_type);
    args->payload_bits = a->payload_bits;
  }
  if (a->size < sizeof(EventAttributes)) return nullptr;  // too old to carry a message
  switch (a->message_type) {
    case nvtx::kMessageAscii: return a->message.ascii;
    case nvtx::kMessageRegistered: return static_cast<const char*>(a->message.registered);
    case nvtx::kMessageUnicode:
      WideToUtf8(a->message.unicode, wide, kWideBufferBytes);
      return wide;
    default: return nullptr;
  }
}

// ---- Ranges and marks of one domain ----

int DomainPush(const NvtxDomain* d, const EventAttributes* a) {
  if (d->filtered) return nvtx::kNoPushPopTracking;
  if (Recording()) {
    RangeArgs args;
    char wide[kWideBufferBytes];
    const char* name = Decode(d, a, &args, wide);
    PushRange(name, &args);
  }
  return t_nvtx_depth++;
}

int DomainPop(const NvtxDomain* d) {
  if (d->filtered) return nvtx::kNoPushPopTracking;
  if (t_nvtx_depth == 0) {
    // Not forwarded: PopRange would close a kairos_range_push range of this thread.
    if (Recording()) GetNvtxCounters().unmatched_pops.fetch_add(1, std::memory_order_relaxed);
    return -1;
  }
  PopRange();
  return --t_nvtx_depth;
}

uint64_t DomainStart(const NvtxDomain* d, const EventAttributes* a) {
  if (d->filtered || !Recording()) return 0;
  RangeArgs args;
  char wide[kWideBufferBytes];
  const char* name = Decode(d, a, &args, wide);
  return StartRange(name, &args);
}

void DomainMark(const NvtxDomain* d, const EventAttributes* a) {
  if (d->filtered || !Recording()) return;
  RangeArgs args;
  char wide[kWideBufferBytes];
  const char* name = Decode(d, a, &args, wide);
  Mark(name, &args);
}

const NvtxDomain* AsDomain(const void* handle) {
  return handle != nullptr ? static_cast<const NvtxDomain*>(handle) : NvtxDefaultDomain();
}

// ---- CORE module ----

void MarkEx(const EventAttributes* a) { DomainMark(NvtxDefaultDomain(), a); }
void MarkA(const char* m) { Mark(m); }
void MarkW(const wchar_t* m) {
  if (!Recording()) return;
  char buf[kWideBufferBytes];
  WideToUtf8(m, buf, sizeof(buf));
  Mark(buf);
}
uint64_t RangeStartEx(const EventAttributes* a) { return DomainStart(NvtxDefaultDomain(), a); }
uint64_t RangeStartA(const char* m) { return StartRange(m); }
uint64_t RangeStartW(const wchar_t* m) {
  if (!Recording()) return 0;
  char buf[kWideBufferBytes];
  WideToUtf8(m, buf, sizeof(buf));
  return StartRange(buf);
}
// Ids come from the process-wide range id space, so any thread may end any range.
void RangeEnd(uint64_t id) { EndRange(static_cast<uint32_t>(id)); }
int RangePushEx(const EventAttributes* a) { return DomainPush(NvtxDefaultDomain(), a); }
int RangePushA(const char* m) {
  PushRange(m);
  return t_nvtx_depth++;
}
int RangePushW(const wchar_t* m) {
  if (Recording()) {
    char buf[kWideBufferBytes];
    WideToUtf8(m, buf, sizeof(buf));
    PushRange(buf);
  }
  return t_nvtx_depth++;
}
int RangePop() { return DomainPop(NvtxDefaultDomain()); }
void NameCategoryA(uint32_t id, const char* name) {
  if (name != nullptr) NvtxNameCategory(NvtxDefaultDomain(), id, name);
}
void NameCategoryW(uint32_t id, const wchar_t* name) {
  char buf[kWideBufferBytes];
  WideToUtf8(name, buf, sizeof(buf));
  NvtxNameCategory(NvtxDefaultDomain(), id, buf);
}
void NameOsThreadA(uint32_t tid, const char* name) {
  if (name != nullptr) NvtxNameThread(tid, name);
}
void NameOsThreadW(uint32_t tid, const wchar_t* name) {
  char buf[kWideBufferBytes];
  WideToUtf8(name, buf, sizeof(buf));
  NvtxNameThread(tid, buf);
}

// ---- CORE2 (domain) module ----

void DomainMarkEx(const void* h, const EventAttributes* a) { DomainMark(AsDomain(h), a); }
uint64_t DomainRangeStartEx(const void* h, const EventAttributes* a) {
  return DomainStart(AsDomain(h), a);
}
void DomainRangeEnd(const void* h, uint64_t id) {
  if (AsDomain(h)->filtered) return;
  EndRange(static_cast<uint32_t>(id));
}
int DomainRangePushEx(const void* h, const EventAttributes* a) {
  return DomainPush(AsDomain(h), a);
}
int DomainRangePop(const void* h) { return DomainPop(AsDomain(h)); }
NvtxDomain* MutableDomain(void* h) {
  return h != nullptr ? static_cast<NvtxDomain*>(h) : NvtxDefaultDomain();
}
void DomainNameCategoryA(void* h, uint32_t id, const char* name) {
  if (name != nullptr) NvtxNameCategory(MutableDomain(h), id, name);
}
void DomainNameCategoryW(void* h, uint32_t id, const wchar_t* name) {
  char buf[kWideBufferBytes];
  WideToUtf8(name, buf, sizeof(buf));
  NvtxNameCategory(MutableDomain(h), id, buf);
}
const void* DomainRegisterStringA(const void*, const char* s) {
  return NvtxInternString(s != nullptr ? s : "");
}
const void* DomainRegisterStringW(const void*, const wchar_t* s) {
  char buf[kWideBufferBytes];
  WideToUtf8(s, buf, sizeof(buf));
  return NvtxInternString(buf);
}
void* DomainCreateA(const char* name) { return NvtxCreateDomain(name != nullptr ? name : ""); }
void* DomainCreateW(const wchar_t* name) {
  char buf[kWideBufferBytes];
  WideToUtf8(name, buf, sizeof(buf));
  return NvtxCreateDomain(buf);
}
// Handles stay valid forever (another shared object may hold the same domain).
void DomainDestroy(void*) {}

struct Slot {
  uint32_t id;
  nvtx::FunctionPointer fn;
};

template <typename F>
nvtx::FunctionPointer Fp(F f) {
  return reinterpret_cast<nvtx::FunctionPointer>(f);
}

// Returns false when the module's table is unavailable.
bool Install(const nvtx::ExportTableCallbacks* cb, int module, const Slot* slots, size_t n) {
  nvtx::FunctionTable table = nullptr;
  unsigned int size = 0;
  if (cb->GetModuleFunctionTable(module, &table, &size) == 0 || table == nullptr) return false;
  for (size_t i = 0; i < n; ++i) {
    if (slots[i].id < size && table[slots[i].id] != nullptr) *table[slots[i].id] = slots[i].fn;
  }
  return true;
}

}  // namespace

int NvtxAttach(nvtx::GetExportTableFn get_export_table) {
  GetNvtxCounters().init_calls.fetch_add(1, std::memory_order_relaxed);
  if (get_export_table == nullptr) return 0;
  const auto* cb = static_cast<const nvtx::ExportTableCallbacks*>(
      get_export_table(nvtx::kExportTableCallbacks));
  if (cb == nullptr || cb->struct_size < sizeof(nvtx::ExportTableCallbacks) ||
      cb->GetModuleFunctionTable == nullptr)
    return 0;
  SetCollectorHooks(&NvtxThreadName, &NvtxAddStats);
  const Slot core[] = {
      {nvtx::kMarkEx, Fp(&MarkEx)},           {nvtx::kMarkA, Fp(&MarkA)},
      {nvtx::kMarkW, Fp(&MarkW)},             {nvtx::kRangeStartEx, Fp(&RangeStartEx)},
      {nvtx::kRangeStartA, Fp(&RangeStartA)}, {nvtx::kRangeStartW, Fp(&RangeStartW)},
      {nvtx::kRangeEnd, Fp(&RangeEnd)},       {nvtx::kRangePushEx, Fp(&RangePushEx)},
      {nvtx::kRangePushA, Fp(&RangePushA)},   {nvtx::kRangePushW, Fp(&RangePushW)},
      {nvtx::kRangePop, Fp(&RangePop)},       {nvtx::kNameCategoryA, Fp(&NameCategoryA)},
      {nvtx::kNameCategoryW, Fp(&NameCategoryW)}, {nvtx::kNameOsThreadA, Fp(&NameOsThreadA)},
      {nvtx::kNameOsThreadW, Fp(&NameOsThreadW)},
  };
  const Slot core2[] = {
      {nvtx::kDomainMarkEx, Fp(&DomainMarkEx)},
      {nvtx::kDomainRangeStartEx, Fp(&DomainRangeStartEx)},
      {nvtx::kDomainRangeEnd, Fp(&DomainRangeEnd)},
      {nvtx::kDomainRangePushEx, Fp(&DomainRangePushEx)},
      {nvtx::kDomainRangePop, Fp(&DomainRangePop)},
      {nvtx::kDomainNameCategoryA, Fp(&DomainNameCategoryA)},
      {nvtx::kDomainNameCategoryW, Fp(&DomainNameCategoryW)},
      {nvtx::kDomainRegisterStringA, Fp(&DomainRegisterStringA)},
      {nvtx::kDomainRegisterStringW, Fp(&DomainRegisterStringW)},
      {nvtx::kDomainCreateA, Fp(&DomainCreateA)},
      {nvtx::kDomainCreateW, Fp(&DomainCreateW)},
      {nvtx::kDomainDestroy, Fp(&DomainDestroy)},
  };
  const bool ok = Install(cb, nvtx::kModuleCore, core, sizeof(core) / sizeof(core[0]));
  Install(cb, nvtx::kModuleCore2, core2, sizeof(core2) / sizeof(core2[0]));
  return ok ? 1 : 0;
}

void NvtxAddStats(TraceData& data) {
  NvtxCounters& c = GetNvtxCounters();
  const uint64_t pops = c.unmatched_pops.load();
  data.AddStat("nvtx_unmatched_pops", pops - c.unmatched_pops_reported);
  c.unmatched_pops_reported = pops;
  data.AddStat("nvtx_init_calls", c.init_calls.load());
  data.AddStat("nvtx_domains", c.domains.load());
  data.AddStat("nvtx_domains_filtered", c.domains_filtered.load());
  data.AddStat("nvtx_domains_overflow", c.domains_overflow.load());
  data.AddStat("nvtx_strings_overflow", c.strings_overflow.load());
  data.AddStat("nvtx_thread_names_dropped", c.thread_names_dropped.load());
}

}  // namespace kairos::internal
