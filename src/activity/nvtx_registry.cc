// File: nvtx_registry.cc — see nvtx_registry.h.
// Layer: kairos_activity. Process-global, never-freed NVTX domains, strings and thread names.
// Threading: one mutex guards every mutation; see the header for the lock-free readers.
#include "activity/nvtx_registry.h"

#include <algorithm>
#include <mutex>
#include <new>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_set.h"
#include "util/log.h"

namespace kairos::internal {
namespace {

// Heap-allocated and leaked on purpose: NVTX calls may arrive during and after static
// destruction (threads still running while the process exits).
struct Registry {
  std::mutex mu;
  std::vector<std::string> include, exclude;
  absl::flat_hash_map<std::string, NvtxDomain*> domains;
  NvtxDomain* overflow_domain = nullptr;
  absl::node_hash_set<std::string> strings;  // node-based: c_str() pointers are stable
  absl::flat_hash_map<int64_t, std::string> thread_names;
  // The registry is the one owner of NVTX's process state: the default domain, the domain
  // handed out when allocating a new one fails (here, so that path allocates nothing), and
  // the counters.
  NvtxDomain default_domain;
  NvtxDomain fallback_domain;
  NvtxCounters counters;
};

Registry& GetRegistry() {
  static Registry* r = new Registry;
  return *r;
}

// Interns under the registry mutex. Returns nullptr past the bound.
const char* InternLocked(Registry& r, std::string_view text) {
  if (text.size() > kNvtxMaxStringBytes) text = text.substr(0, kNvtxMaxStringBytes);
  auto it = r.strings.find(absl::string_view(text.data(), text.size()));
  if (it != r.strings.end()) return it->c_str();
  if (r.strings.size() >= kNvtxMaxStrings) return nullptr;
  return r.strings.emplace(text).first->c_str();
}

bool Listed(const std::vector<std::string>& list, std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

}  // namespace

// The registry cannot be replaced in a fork() child as other process state is: its domains
// and strings are handles the application keeps. So fork() waits for any mutation in flight
// (mutations are short and take no other lock) and the child finds the mutex free.
void NvtxRegistryLockBeforeFork() { GetRegistry().mu.lock(); }
void NvtxRegistryUnlockAfterFork() { GetRegistry().mu.unlock(); }

NvtxDomain* NvtxDefaultDomain() { return &GetRegistry().default_domain; }

NvtxCounters& GetNvtxCounters() { return GetRegistry().counters; }

void NvtxSetDomainFilter(std::vector<std::string> include, std::vector<std::string> exclude) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.include = std::move(include);
  r.exclude = std::move(exclude);
}

NvtxDomain* NvtxCreateDomain(std::string_view name) {
  Registry& r = GetRegistry();
  NvtxCounters& c = GetNvtxCounters();
  try {
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.domains.find(absl::string_view(name.data(), name.size()));
    if (it != r.domains.end()) return it->second;
    if (r.domains.size() < kNvtxMaxDomains) {
      const char* interned = InternLocked(r, name);
      if (interned != nullptr) {
        auto* d = new NvtxDomain;
        d->name = interned;
        d->filtered = (!r.include.empty() && !Listed(r.include, name)) || Listed(r.exclude, name);
        r.domains.emplace(std::string(name), d);
        c.domains.fetch_add(1, std::memory_order_relaxed);
        if (d->filtered) c.domains_filtered.fetch_add(1, std::memory_order_relaxed);
        return d;
      }
    }
    if (r.overflow_domain == nullptr) {
      auto* d = new NvtxDomain;
      d->name = "kairos_overflow_domain";
      r.overflow_domain = d;
      KAIROS_LOG_WARNING("NVTX: more than %u domains; further domains share one", kNvtxMaxDomains);
    }
    c.domains_overflow.fetch_add(1, std::memory_order_relaxed);
    return r.overflow_domain;
  } catch (...) {  // allocation failure: never let it reach the application
    c.domains_overflow.fetch_add(1, std::memory_order_relaxed);
    return &r.fallback_domain;
  }
}

void NvtxNameCategory(NvtxDomain* domain, uint32_t id, std::string_view name) {
  if (domain == nullptr || id == 0 || id >= kNvtxMaxCategories) return;
  Registry& r = GetRegistry();
  try {
    std::lock_guard<std::mutex> lock(r.mu);
    const char* interned = InternLocked(r, name);
    if (interned == nullptr) {
      GetNvtxCounters().strings_overflow.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    domain->categories[id].store(interned, std::memory_order_release);
  } catch (...) {
    GetNvtxCounters().strings_overflow.fetch_add(1, std::memory_order_relaxed);
  }
}

const char* NvtxInternString(std::string_view text) {
  Registry& r = GetRegistry();
  try {
    std::lock_guard<std::mutex> lock(r.mu);
    const char* interned = InternLocked(r, text);
    if (interned != nullptr) return interned;
  } catch (...) {
  }
  GetNvtxCounters().strings_overflow.fetch_add(1, std::memory_order_relaxed);
  return "kairos_overflow_string";
}

void NvtxNameThread(int64_t tid, std::string_view name) {
  Registry& r = GetRegistry();
  try {
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.thread_names.find(tid);
    if (it != r.thread_names.end()) {
      it->second.assign(name.data(), std::min(name.size(), kNvtxMaxStringBytes));
    } else if (r.thread_names.size() < kNvtxMaxThreadNames) {
      r.thread_names.emplace(tid, std::string(name.substr(0, kNvtxMaxStringBytes)));
    } else {
      GetNvtxCounters().thread_names_dropped.fetch_add(1, std::memory_order_relaxed);
    }
  } catch (...) {
    GetNvtxCounters().thread_names_dropped.fetch_add(1, std::memory_order_relaxed);
  }
}

std::string NvtxThreadName(int64_t tid) {
  Registry& r = GetRegistry();
  try {
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.thread_names.find(tid);
    return it != r.thread_names.end() ? it->second : std::string();
  } catch (...) {
    return std::string();
  }
}

void WideToUtf8(const wchar_t* in, char* out, size_t cap) {
  size_t n = 0;
  if (in != nullptr) {
    for (; *in != 0; ++in) {
      uint32_t cp = static_cast<uint32_t>(*in);
      if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
      char enc[4];
      size_t len;
      if (cp < 0x80) {
        enc[0] = static_cast<char>(cp);
        len = 1;
      } else if (cp < 0x800) {
        enc[0] = static_cast<char>(0xC0 | (cp >> 6));
        enc[1] = static_cast<char>(0x80 | (cp & 0x3F));
        len = 2;
      } else if (cp < 0x10000) {
        enc[0] = static_cast<char>(0xE0 | (cp >> 12));
        enc[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        enc[2] = static_cast<char>(0x80 | (cp & 0x3F));
        len = 3;
      } else {
        enc[0] = static_cast<char>(0xF0 | (cp >> 18));
        enc[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        enc[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        enc[3] = static_cast<char>(0x80 | (cp & 0x3F));
        len = 4;
      }
      if (n + len + 1 > cap) break;
      for (size_t i = 0; i < len; ++i) out[n++] = enc[i];
    }
  }
  out[n] = '\0';
}

}  // namespace kairos::internal
