// File: nvtx_registry.h
// Layer: kairos_activity. Process-global NVTX state behind the injection handlers: domains
// (with their category names and the filter decision), registered strings, thread names
// from nvtxNameOsThread, and loss counters. Everything handed to NVTX as a handle is
// never freed, so a handle stays valid for the life of the process (NVTX has no lifetime
// rule we could rely on: two shared objects may share one domain name).
// Threading: creation/registration functions lock one mutex (cold; once per domain, string
// or name). Hot readers (CategoryName, the handle fields) are lock-free: category names are
// published with release stores of pointers to immutable interned strings.
#ifndef KAIROS_SRC_ACTIVITY_NVTX_REGISTRY_H_
#define KAIROS_SRC_ACTIVITY_NVTX_REGISTRY_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kairos::internal {

inline constexpr uint32_t kNvtxMaxDomains = 256;
inline constexpr uint32_t kNvtxMaxCategories = 256;  // ids >= this keep only their number
inline constexpr uint32_t kNvtxMaxStrings = 65536;
inline constexpr uint32_t kNvtxMaxThreadNames = 4096;
inline constexpr size_t kNvtxMaxStringBytes = 1024;  // longer names are truncated

// NvtxDomain
//
// What an nvtxDomainHandle_t points at. `name` is nullptr for the default domain (the
// core module's calls). A filtered domain's handlers return at once.
struct NvtxDomain {
  const char* name = nullptr;
  bool filtered = false;
  std::atomic<const char*> categories[kNvtxMaxCategories] = {};
};

// The root's pthread_atfork hooks: the parent takes the registry mutex before fork() and
// both sides release it after, so a child never inherits it held by a thread it lacks.
void NvtxRegistryLockBeforeFork();
void NvtxRegistryUnlockAfterFork();

// The default domain (core-module calls). Never filtered.
NvtxDomain* NvtxDefaultDomain();

// Sets the KAIROS_NVTX_DOMAINS filter applied to domains created afterwards: with a
// non-empty `include` only listed names are recorded; listed `exclude` names never are.
void NvtxSetDomainFilter(std::vector<std::string> include, std::vector<std::string> exclude);

// Returns the domain named `name` (the same handle for the same name, so every shared
// object sees one domain). Beyond kNvtxMaxDomains, a shared overflow domain is returned and
// counted. Never returns nullptr.
NvtxDomain* NvtxCreateDomain(std::string_view name);

// Names category `id` of `domain` (the last name given wins).
void NvtxNameCategory(NvtxDomain* domain, uint32_t id, std::string_view name);

// Category name of `id` in `domain`, nullptr if unnamed. Lock-free.
inline const char* NvtxCategoryName(const NvtxDomain* domain, uint32_t id) {
  if (id == 0 || id >= kNvtxMaxCategories) return nullptr;
  // Acquire: pairs with the release store that published the interned string.
  return domain->categories[id].load(std::memory_order_acquire);
}

// Interns `text` process-wide; the returned pointer is stable and NUL-terminated (used as
// the nvtxStringHandle_t). Beyond kNvtxMaxStrings it returns a shared overflow string and
// counts it.
const char* NvtxInternString(std::string_view text);

// nvtxNameOsThread: names OS thread `tid`; read back when the thread's track is written.
void NvtxNameThread(int64_t tid, std::string_view name);
std::string NvtxThreadName(int64_t tid);

// Converts a wide (UTF-32 on Linux) string to UTF-8 into `out` (capacity `cap` >= 1, always
// NUL-terminated, truncated on a code point boundary). Invalid code points become U+FFFD.
void WideToUtf8(const wchar_t* in, char* out, size_t cap);

// Loss and bookkeeping counters (process lifetime).
struct NvtxCounters {
  std::atomic<uint64_t> init_calls{0};        // InitializeInjectionNvtx2 calls
  std::atomic<uint64_t> domains{0};           // distinct domains created
  std::atomic<uint64_t> domains_filtered{0};  // of which filtered
  std::atomic<uint64_t> domains_overflow{0};  // creations mapped to the overflow domain
  std::atomic<uint64_t> strings_overflow{0};  // registrations mapped to the overflow string
  std::atomic<uint64_t> thread_names_dropped{0};
  std::atomic<uint64_t> unmatched_pops{0};    // pops without a push while recording
  uint64_t unmatched_pops_reported = 0;       // in the last trace's stats (session thread)
};
NvtxCounters& GetNvtxCounters();

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_NVTX_REGISTRY_H_
