// File: demangle.h
// Layer: kairos_activity. Itanium C++ demangling of kernel names, cached, so a kernel
// launched a million times is demangled once.
// Threading: Demangle() is thread-safe; a DemangleCache belongs to one thread.
#ifndef KAIROS_SRC_ACTIVITY_DEMANGLE_H_
#define KAIROS_SRC_ACTIVITY_DEMANGLE_H_

#include <string>
#include <string_view>

#include <unordered_map>

namespace kairos::internal {

// Returns the demangled name, or `mangled` unchanged when it is not a mangled C++ name
// (e.g. an extern "C" kernel) or demangling fails.
std::string Demangle(std::string_view mangled);

class DemangleCache {
 public:
  // The returned view stays valid for the cache's lifetime.
  std::string_view Get(std::string_view mangled);
  size_t size() const { return cache_.size(); }

 private:
  // Node-based so returned views survive rehashing.
  std::unordered_map<std::string, std::string> cache_;
};

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_DEMANGLE_H_
