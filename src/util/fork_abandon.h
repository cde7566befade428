// File: fork_abandon.h
// Layer: kairos_util. One place for objects a fork() child abandons: after fork only the
// forking thread exists in the child, so a module's process-wide state (a registry, a log,
// a buffer pool) whose mutex another thread held is replaced, never touched or freed again.
// Kept here so they stay reachable and leak checkers in the child (LeakSanitizer) stay
// quiet. Bounded: past kMaxAbandoned pointers (many nested forks) the rest are simply not
// remembered (still never freed).
// Threading: called from after-fork-child hooks only (one thread exists then).
#ifndef KAIROS_SRC_FORK_ABANDON_H_
#define KAIROS_SRC_FORK_ABANDON_H_

namespace kairos::internal {

inline constexpr int kMaxAbandoned = 64;

// Remembers `p` (nullptr is ignored).
void KeepAbandonedAfterFork(const void* p);
// For tests: how many pointers are remembered.
int AbandonedAfterForkCount();

}  // namespace kairos::internal

#endif  // KAIROS_SRC_FORK_ABANDON_H_
