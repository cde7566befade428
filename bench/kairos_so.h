// File: kairos_so.h
// Layer: bench. libkairos.so opened the way a program that attaches at run time does
// (dlopen + dlsym of the C ABI), for benchmarks that measure the calls through the library's
// PLT-like indirection: the library next to the benchmark binary (build/lib/), and the entry
// points they use.
// Threading: Load once, on the benchmark's thread.
#ifndef KAIROS_BENCH_KAIROS_SO_H_
#define KAIROS_BENCH_KAIROS_SO_H_

#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "core_abi.h"

namespace kairos::bench {

struct KairosSo {
  void (*push)(const char*) = nullptr;
  void (*pop)() = nullptr;
  int (*init)(const char*) = nullptr;
  int (*start)() = nullptr;
  int (*stop)() = nullptr;
  const char* (*flush)() = nullptr;
  const volatile uint32_t* (*recording_flag)() = nullptr;
  std::string error;  // why Load failed

  // build/lib/libkairos.so relative to this executable (build/bench/).
  static std::string DefaultPath() {
    char exe[PATH_MAX] = {};
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    std::string dir = n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string(".");
    dir = dir.substr(0, dir.rfind('/'));
    return dir + "/../lib/libkairos.so";
  }

  // False (with `error`) when the library or one of the entry points is missing.
  bool Load(const std::string& path = DefaultPath()) {
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* e = dlerror();
      error = e != nullptr ? e : "dlopen failed";
      return false;
    }
    push = reinterpret_cast<void (*)(const char*)>(dlsym(lib, "kairos_range_push"));
    pop = reinterpret_cast<void (*)()>(dlsym(lib, "kairos_range_pop"));
    init = reinterpret_cast<int (*)(const char*)>(dlsym(lib, "kairos_init"));
    start = reinterpret_cast<int (*)()>(dlsym(lib, "kairos_start"));
    stop = reinterpret_cast<int (*)()>(dlsym(lib, "kairos_stop"));
    flush = reinterpret_cast<const char* (*)()>(dlsym(lib, "kairos_flush"));
    recording_flag =
        reinterpret_cast<const volatile uint32_t* (*)()>(dlsym(lib, "kairos_recording_flag"));
    if (!push || !pop || !init || !start || !stop || !flush || !recording_flag) {
      error = "libkairos.so lacks the C ABI symbols";
      return false;
    }
    return true;
  }
};

// The implementation libkairos.so loaded (libkairos_core.so beside it), called through its
// table directly, without the shim's trampolines: the benchmarks' "before the shim" path.
// Empty when the core is not loaded yet (Find after the first control call).
struct KairosCoreDirect {
  void (*push)(const char*) = nullptr;
  void (*pop)() = nullptr;

  static KairosCoreDirect Find(const std::string& shim_path = KairosSo::DefaultPath()) {
    KairosCoreDirect d;
    const std::string core = shim_path.substr(0, shim_path.rfind('/')) + "/libkairos_core.so";
    void* lib = dlopen(core.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (lib == nullptr) return d;
    auto get = reinterpret_cast<kairos_core_get_fn>(dlsym(lib, "kairos_core_get"));
    if (get == nullptr) return d;
    const kairos_core_api* h = get();
    d.push = h->range_push;
    d.pop = h->range_pop;
    return d;
  }
};

}  // namespace kairos::bench

#endif  // KAIROS_BENCH_KAIROS_SO_H_
