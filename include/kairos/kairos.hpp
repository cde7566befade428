// File: include/kairos/kairos.hpp
// Layer: public C++ convenience over the C ABI (bindings/c/kairos.h). Header-only: it adds
// no symbols, so C++ users get RAII ranges without depending on kairos' C++ internals or ABI.
// Threading: as the C functions it wraps (any thread, before init, after shutdown, in a
// forked child). Since 0.1.
#ifndef KAIROS_INCLUDE_KAIROS_KAIROS_HPP_
#define KAIROS_INCLUDE_KAIROS_KAIROS_HPP_

#include <cstdint>
#include <string>

#include "kairos.h"

namespace kairos {

// A thread-local range for the lifetime of a scope:
//   { kairos::ScopedRange r("forward"); model.forward(); }
class ScopedRange {
 public:
  explicit ScopedRange(const char* name) noexcept { kairos_range_push(name); }
  ~ScopedRange() { kairos_range_pop(); }
  ScopedRange(const ScopedRange&) = delete;
  ScopedRange& operator=(const ScopedRange&) = delete;
};

// A range that may end on another thread; movable, ends at most once.
class AsyncRange {
 public:
  explicit AsyncRange(const char* name) noexcept : id_(kairos_range_start(name)) {}
  AsyncRange(AsyncRange&& other) noexcept : id_(other.id_) { other.id_ = 0; }
  AsyncRange& operator=(AsyncRange&& other) noexcept {
    if (this != &other) {
      End();
      id_ = other.id_;
      other.id_ = 0;
    }
    return *this;
  }
  ~AsyncRange() { End(); }
  void End() noexcept {
    if (id_ != 0) kairos_range_end(id_);
    id_ = 0;
  }

 private:
  uint64_t id_;
};

// Brackets an optimizer step: pre-step on construction, post-step (the iteration boundary)
// on destruction.
class OptimizerStep {
 public:
  OptimizerStep() noexcept { kairos_optimizer_pre_step(); }
  ~OptimizerStep() { kairos_optimizer_post_step(); }
  OptimizerStep(const OptimizerStep&) = delete;
  OptimizerStep& operator=(const OptimizerStep&) = delete;
};

// Waits for the current trace to be written; returns its path, or "" if there was none.
inline std::string Flush() {
  const char* p = kairos_flush();
  return p != nullptr ? std::string(p) : std::string();
}

}  // namespace kairos

#endif  // KAIROS_INCLUDE_KAIROS_KAIROS_HPP_
