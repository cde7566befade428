// File: dcheck.h
// Layer: kairos_util. KAIROS_DCHECK(cond, "what"): an invariant the code relies on. In Debug
// and sanitizer builds (KAIROS_DCHECK_ON defined) a failed check prints one line (file, line,
// the condition and the message) to stderr and aborts, which the test suites under
// ASan/UBSan/TSan turn into a failure with a stack. In release builds the library never
// aborts the host job over a kairos bug, but a break does not vanish either: it is counted
// (`invariant_breaks` in every later trace's kairos_stats) and the process's first few are
// logged.
// Checks are for session-level code (not the hot path): the condition is evaluated in every
// build.
// Threading: any thread.
#ifndef KAIROS_SRC_DCHECK_H_
#define KAIROS_SRC_DCHECK_H_

#if !defined(KAIROS_DCHECK_ON) && !defined(NDEBUG)
#define KAIROS_DCHECK_ON 1
#endif

#ifdef KAIROS_DCHECK_ON
#include <cstdio>
#include <cstdlib>
#define KAIROS_DCHECK(cond, msg)                                                          \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      std::fprintf(stderr, "kairos: DCHECK failed at %s:%d: %s (%s)\n", __FILE__, __LINE__, \
                   #cond, msg);                                                           \
      std::abort();                                                                       \
    }                                                                                     \
  } while (0)
#else
#define KAIROS_DCHECK(cond, msg)                                                  \
  do {                                                                            \
    if (!(cond)) ::kairos::internal::NoteInvariantBreak(__FILE__, __LINE__, #cond, msg); \
  } while (0)
#endif

#include <cstdint>

namespace kairos::internal {
// A release build's failed KAIROS_DCHECK: counts it and, for the process's first
// kLoggedInvariantBreaks, logs one error line. Never blocks, never throws.
inline constexpr uint64_t kLoggedInvariantBreaks = 8;
void NoteInvariantBreak(const char* file, int line, const char* cond, const char* msg);
// Failed checks since the process started (release builds; 0 where checks abort).
uint64_t InvariantBreaks();
}  // namespace kairos::internal

#endif  // KAIROS_SRC_DCHECK_H_
