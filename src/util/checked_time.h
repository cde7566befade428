// File: checked_time.h
// Layer: kairos_util. THE checked arithmetic for timestamps read from outside (trace readers,
// `kairos merge`): a sum or difference of int64 ns that does not fit is reported to the
// caller, which refuses the input or drops and counts the event; it never wraps. A wrapped
// sum is undefined behaviour and, in practice, an end before its start: a trace of kernels
// near INT64_MAX µs read as "No GPU work", and merge wrote a wrapped clock_shift_ns.
// Threading: pure functions.
#ifndef KAIROS_SRC_CHECKED_TIME_H_
#define KAIROS_SRC_CHECKED_TIME_H_

#include <cstdint>

namespace kairos {

// *out = a + b; false (and *out unspecified) when the sum does not fit int64.
[[nodiscard]] inline bool AddNs(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}

// *out = a - b; false (and *out unspecified) when the difference does not fit int64.
[[nodiscard]] inline bool SubNs(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_sub_overflow(a, b, out);
}

// *out = a + b for an unsigned delta (Perfetto's incremental clock) on an int64 time: false
// when the exact sum does not fit int64 (the builtin computes it in infinite precision).
[[nodiscard]] inline bool AddDeltaNs(int64_t a, uint64_t b, int64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}

}  // namespace kairos

#endif  // KAIROS_SRC_CHECKED_TIME_H_
