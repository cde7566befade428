// File: fork_abandon.cc
// Layer: kairos_util. See fork_abandon.h.
#include "util/fork_abandon.h"

namespace kairos::internal {
namespace {
// Plain data (no constructor, no lock): written only while one thread exists. The pointers
// are volatile because nothing reads them: their only job is to be in memory, where a leak
// checker finds them (without it the optimiser drops the array and its stores).
struct Abandoned {
  const void* volatile pointers[kMaxAbandoned];
  int count;
};
Abandoned g_abandoned;
}  // namespace

void KeepAbandonedAfterFork(const void* p) {
  if (p != nullptr && g_abandoned.count < kMaxAbandoned) g_abandoned.pointers[g_abandoned.count++] = p;
}

int AbandonedAfterForkCount() { return g_abandoned.count; }

}  // namespace kairos::internal
