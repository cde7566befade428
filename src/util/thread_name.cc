// File: thread_name.cc
// Layer: kairos_util. See thread_name.h.
#include "util/thread_name.h"

#include <pthread.h>

#include <cstdio>

namespace kairos {

void NameThisThread(const char* role) {
  char name[16];  // the kernel's TASK_COMM_LEN, terminator included
  std::snprintf(name, sizeof name, "%s%s", kThreadNamePrefix, role);
  (void)pthread_setname_np(pthread_self(), name);
}

}  // namespace kairos
