// File: thread_name_test.cc
// Layer: test (kairos_util). NameThisThread: the name the kernel reports for the thread.
#include "util/thread_name.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

namespace kairos {
namespace {

std::string CommOf(long tid) {
  std::ifstream f("/proc/self/task/" + std::to_string(tid) + "/comm");
  std::string name;
  std::getline(f, name);
  return name;
}

std::string NameInThread(const char* role) {
  std::string seen;
  std::thread t([&] {
    NameThisThread(role);
    seen = CommOf(syscall(SYS_gettid));
  });
  t.join();
  return seen;
}

TEST_CASE("NameThisThread: kairos-<role>, cut to the kernel's 15 bytes") {
  CHECK(NameInThread("cupti") == "kairos-cupti");
  CHECK(NameInThread("telemetry") == "kairos-telemetr");  // 7 + 8 of 9: 15 bytes
  CHECK(NameInThread("") == "kairos-");
}

}  // namespace
}  // namespace kairos
