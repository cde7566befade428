// File: demangle.cc
// Layer: kairos_activity. abi::__cxa_demangle wrapper and its cache.
// Threading: see demangle.h.
#include "activity/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <utility>

namespace kairos::internal {

std::string Demangle(std::string_view mangled) {
  // Only Itanium-mangled names; __cxa_demangle would also "demangle" plain words such as
  // "f" into type names.
  if (mangled.size() < 3 || mangled[0] != '_' || mangled[1] != 'Z') return std::string(mangled);
  const std::string input(mangled);  // __cxa_demangle needs a NUL-terminated string
  int status = 0;
  char* out = abi::__cxa_demangle(input.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) {
    std::free(out);
    return input;
  }
  std::string result(out);
  std::free(out);
  return result;
}

std::string_view DemangleCache::Get(std::string_view mangled) {
  std::string key(mangled);
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    it = cache_.emplace(std::move(key), Demangle(mangled)).first;
  }
  return it->second;
}

}  // namespace kairos::internal
