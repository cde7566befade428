// File: dcheck.h
// Layer: kairos_base. KAIROS_DCHECK(cond, "what"): an invariant the code relies on, checked in
// Debug and sanitizer builds (KAIROS_DCHECK_ON defined) and compiled out otherwise, so the
// release library never aborts the host job over a kairos bug. A failed check prints one line
// (file, line, the condition and the message) to stderr and aborts, which the test suites
// under ASan/UBSan/TSan turn into a failure with a stack.
// Threading: any thread; the check itself has no side effects beyond evaluating `cond`.
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
// Not evaluated, but still compiled: a check cannot rot into code that no longer builds.
#define KAIROS_DCHECK(cond, msg) \
  do {                           \
    if (false && (cond)) {       \
      (void)(msg);               \
    }                            \
  } while (0)
#endif

#endif  // KAIROS_SRC_DCHECK_H_
