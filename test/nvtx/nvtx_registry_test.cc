// File: nvtx_registry_test.cc
// Layer: test/nvtx (kairos_activity). The NVTX registry (domains, filter, strings, UTF-8)
// and the handlers installed through a hand-built NVTX callback table, without recording
// (nvtx_injection_test covers recording end to end with NVIDIA's own headers).
// Threading: single-threaded.
#include <string>

#include <catch2/catch.hpp>

#include "activity/nvtx_abi.h"
#include "activity/nvtx_injection.h"
#include "activity/nvtx_registry.h"

namespace kairos::internal {
namespace {

// A stand-in for one NVTX instance's slot tables.
nvtx::FunctionPointer g_core[16];
nvtx::FunctionPointer g_core2[16];
nvtx::FunctionPointer* g_core_table[16];
nvtx::FunctionPointer* g_core2_table[16];

int GetModuleTable(int module, nvtx::FunctionTable* out, unsigned int* size) {
  nvtx::FunctionPointer** t = module == nvtx::kModuleCore    ? g_core_table
                              : module == nvtx::kModuleCore2 ? g_core2_table
                                                             : nullptr;
  if (t == nullptr) return 0;
  for (int i = 0; i < 16; ++i) t[i] = (module == nvtx::kModuleCore ? g_core : g_core2) + i;
  *out = t;
  *size = 16;
  return 1;
}

const nvtx::ExportTableCallbacks kCallbacks = {sizeof(nvtx::ExportTableCallbacks),
                                               &GetModuleTable};
const void* GetExportTable(uint32_t id) {
  return id == nvtx::kExportTableCallbacks ? &kCallbacks : nullptr;
}
const void* NoTables(uint32_t) { return nullptr; }

template <typename F>
F Slot(nvtx::FunctionPointer* table, uint32_t slot) {
  return reinterpret_cast<F>(table[slot]);
}

}  // namespace

TEST_CASE("wide strings become UTF-8, truncated on a code point boundary") {
  char buf[32];
  WideToUtf8(L"a\u00e9\u2713\U0001F600", buf, sizeof(buf));
  CHECK(std::string(buf) == "a\xc3\xa9\xe2\x9c\x93\xf0\x9f\x98\x80");
  WideToUtf8(L"\u00e9\u00e9", buf, 4);  // room for one 2-byte char + NUL
  CHECK(std::string(buf) == "\xc3\xa9");
  const wchar_t bad[] = {static_cast<wchar_t>(0xD800), static_cast<wchar_t>(0x110000), 0};
  WideToUtf8(bad, buf, sizeof(buf));
  CHECK(std::string(buf) == "\xef\xbf\xbd\xef\xbf\xbd");
  WideToUtf8(nullptr, buf, sizeof(buf));
  CHECK(std::string(buf).empty());
}

TEST_CASE("domains: one handle per name, filter applied at creation, categories") {
  NvtxSetDomainFilter({}, {"skip"});
  NvtxDomain* a1 = NvtxCreateDomain("reg-a");
  NvtxDomain* a2 = NvtxCreateDomain("reg-a");
  CHECK(a1 == a2);
  CHECK(std::string(a1->name) == "reg-a");
  CHECK_FALSE(a1->filtered);
  CHECK(NvtxCreateDomain("skip")->filtered);
  NvtxSetDomainFilter({"only"}, {});
  CHECK_FALSE(NvtxCreateDomain("only")->filtered);
  CHECK(NvtxCreateDomain("other")->filtered);
  CHECK_FALSE(NvtxCreateDomain("reg-a")->filtered);  // decided when first created
  NvtxSetDomainFilter({}, {});

  CHECK(NvtxCategoryName(a1, 3) == nullptr);
  NvtxNameCategory(a1, 3, "three");
  CHECK(std::string(NvtxCategoryName(a1, 3)) == "three");
  NvtxNameCategory(a1, kNvtxMaxCategories, "ignored");
  CHECK(NvtxCategoryName(a1, kNvtxMaxCategories) == nullptr);
  CHECK(NvtxCategoryName(NvtxDefaultDomain(), 3) == nullptr);

  const char* s1 = NvtxInternString("hello");
  CHECK(NvtxInternString(std::string("hel") + "lo") == s1);
  CHECK(std::string(s1) == "hello");
}

TEST_CASE("handlers installed into an NVTX instance; nesting levels when not recording") {
  CHECK(NvtxAttach(nullptr) == 0);
  CHECK(NvtxAttach(&NoTables) == 0);
  REQUIRE(NvtxAttach(&GetExportTable) == 1);
  for (uint32_t slot = 1; slot <= 15; ++slot) CHECK(g_core[slot] != nullptr);
  for (uint32_t slot : {1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, 14}) CHECK(g_core2[slot] != nullptr);
  CHECK(g_core2[6] == nullptr);  // resources: not handled, NVTX makes them no-ops
  CHECK(g_core2[15] == nullptr);

  auto push = Slot<int (*)(const char*)>(g_core, nvtx::kRangePushA);
  auto push_w = Slot<int (*)(const wchar_t*)>(g_core, nvtx::kRangePushW);
  auto pop = Slot<int (*)()>(g_core, nvtx::kRangePop);
  CHECK(push("a") == 0);
  CHECK(push_w(L"b") == 1);
  CHECK(pop() == 1);
  CHECK(pop() == 0);
  CHECK(pop() == -1);  // pop without push: not crashed on
  CHECK(Slot<uint64_t (*)(const char*)>(g_core, nvtx::kRangeStartA)("x") == 0);  // not recording

  auto create = Slot<void* (*)(const char*)>(g_core2, nvtx::kDomainCreateA);
  auto create_w = Slot<void* (*)(const wchar_t*)>(g_core2, nvtx::kDomainCreateW);
  void* d = create("handler-domain");
  CHECK(create_w(L"handler-domain") == d);
  NvtxSetDomainFilter({}, {"handler-filtered"});
  void* f = create("handler-filtered");
  NvtxSetDomainFilter({}, {});
  auto dpush = Slot<int (*)(void*, const nvtx::EventAttributes*)>(g_core2,
                                                                 nvtx::kDomainRangePushEx);
  auto dpop = Slot<int (*)(void*)>(g_core2, nvtx::kDomainRangePop);
  nvtx::EventAttributes attr{};
  attr.version = 3;
  attr.size = sizeof(attr);
  attr.message_type = nvtx::kMessageAscii;
  attr.message.ascii = "m";
  CHECK(dpush(d, &attr) == 0);
  CHECK(dpush(f, &attr) == nvtx::kNoPushPopTracking);
  CHECK(dpop(f) == nvtx::kNoPushPopTracking);
  CHECK(dpop(d) == 0);

  auto reg = Slot<const void* (*)(void*, const char*)>(g_core2, nvtx::kDomainRegisterStringA);
  const void* h = reg(d, "reg-string");
  CHECK(std::string(static_cast<const char*>(h)) == "reg-string");
  CHECK(reg(nullptr, "reg-string") == h);

  Slot<void (*)(uint32_t, const char*)>(g_core, nvtx::kNameOsThreadA)(4242, "t-name");
  CHECK(NvtxThreadName(4242) == "t-name");
  Slot<void (*)(uint32_t, const wchar_t*)>(g_core, nvtx::kNameOsThreadW)(4243, L"w\u00e9");
  CHECK(NvtxThreadName(4243) == "w\xc3\xa9");
  CHECK(NvtxThreadName(1).empty());
}

TEST_CASE("domains beyond the bound share one overflow domain and are counted") {
  // Earlier cases may already have created domains (the registry is process-wide).
  const uint64_t existing = GetNvtxCounters().domains.load();
  const uint64_t overflow_before = GetNvtxCounters().domains_overflow.load();
  NvtxDomain* last = nullptr;
  for (uint32_t i = 0; i < kNvtxMaxDomains + 3; ++i)
    last = NvtxCreateDomain("bulk-" + std::to_string(i));
  CHECK(std::string(last->name) == "kairos_overflow_domain");
  CHECK(NvtxCreateDomain("bulk-more") == last);
  CHECK(NvtxCreateDomain("bulk-0") != last);  // created before the bound: still its own
  CHECK(GetNvtxCounters().domains.load() == kNvtxMaxDomains);
  // kMax + 3 + 1 creations, of which kMax - existing got a domain of their own.
  CHECK(GetNvtxCounters().domains_overflow.load() - overflow_before == existing + 4);
}

}  // namespace kairos::internal
