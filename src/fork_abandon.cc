// File: fork_abandon.cc
// Layer: kairos_base. See fork_abandon.h.
#include "fork_abandon.h"

namespace kairos::internal {
namespace {
// Plain globals (no constructor, no lock): written only while one thread exists.
const void* g_abandoned[kMaxAbandoned];
int g_abandoned_count = 0;
}  // namespace

void KeepAbandonedAfterFork(const void* p) {
  if (p != nullptr && g_abandoned_count < kMaxAbandoned) g_abandoned[g_abandoned_count++] = p;
}

int AbandonedAfterForkCount() { return g_abandoned_count; }

}  // namespace kairos::internal
