// File: sanitizer_skip.h
// Layer: test. The one switch for test parts that cannot hold under ASan/TSan: the
// sanitizers fault in their own shadow memory on the first touch of every page (so "zero
// page faults" checks measure them, not kairos) and reserve terabytes of address space (so
// RLIMIT_AS cannot be combined with them). Everything else in such a test still runs.
// Threading: n/a (compile-time constants and a macro).
#ifndef KAIROS_TEST_SANITIZER_SKIP_H_
#define KAIROS_TEST_SANITIZER_SKIP_H_

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define KAIROS_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KAIROS_UNDER_SANITIZER 1
#endif
#endif
#ifndef KAIROS_UNDER_SANITIZER
#define KAIROS_UNDER_SANITIZER 0
#endif

namespace kairos::testing {
// True in ASan/TSan builds: checks of page faults or address-space limits are skipped.
inline constexpr bool kUnderSanitizer = KAIROS_UNDER_SANITIZER != 0;
}  // namespace kairos::testing

// Ends the current Catch2 test case (as passed, with the reason printed as a warning) in a
// sanitizer build. Use at the top of a test whose whole point is unmeasurable there.
#define KAIROS_SKIP_UNDER_SANITIZER(why)                                   \
  do {                                                                     \
    if (::kairos::testing::kUnderSanitizer) {                              \
      WARN("skipped under a sanitizer: " why);                             \
      return;                                                              \
    }                                                                      \
  } while (0)

#endif  // KAIROS_TEST_SANITIZER_SKIP_H_
