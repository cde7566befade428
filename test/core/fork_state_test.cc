// File: fork_state_test.cc
// Layer: test/core. The root's after-fork hooks reset the process state that the hook of
// issue 24 missed: a child forked while another thread holds the NVTX registry mutex can
// still create domains (the old hook let it inherit the mutex held, and it hung), and a
// child does not inherit the parent's NCCL tallies, telemetry step ring or step boundaries,
// but keeps the parent's decoded environment; what the hook replaces stays reachable from
// its replacement (nested children exit normally under LeakSanitizer in the ASan build).
// Each child runs under alarm(): a hang is a SIGALRM death, reported as a failure.
// Threading: the test thread, one helper thread in the NVTX case, and one fork child per case.
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "activity/nccl_collectives.h"
#include "activity/nvtx_registry.h"
#include "config/env.h"
#include "util/clock.h"
#include "counters/telemetry.h"
#include "activity/cpu_process_state.h"
#include "session/controller.h"
#include "session/root.h"

namespace kairos {
namespace {

// Runs `child` in a fork child (bounded by alarm) and returns its exit status, or -signal.
template <typename F>
int InChild(F child) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    alarm(10);
    _exit(child());
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

TEST_CASE("fork() while another thread holds the NVTX registry: the child creates domains") {
  SessionController::Get();  // the root exists: its pthread_atfork hooks are installed
  std::atomic<int> phase{0};
  std::thread holder([&phase] {
    internal::NvtxRegistryLockBeforeFork();  // as a thread mid-nvtxDomainCreate would
    phase.store(1);
    while (phase.load() != 2) std::this_thread::yield();
    // Long enough that, without the hook that makes fork() wait for the mutex, fork()
    // returns (and the child inherits the mutex held) while this thread still holds it.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    internal::NvtxRegistryUnlockAfterFork();
  });
  while (phase.load() != 1) std::this_thread::yield();
  phase.store(2);
  const int status = InChild([] {
    internal::NvtxDomain* d = internal::NvtxCreateDomain("fork_state_child_domain");
    return d != nullptr && internal::NvtxCreateDomain("fork_state_child_domain") == d ? 0 : 1;
  });
  holder.join();
  CHECK(status == 0);
  // The parent's registry works too (the parent side of the hook released the mutex).
  CHECK(internal::NvtxCreateDomain("fork_state_parent_domain") != nullptr);
}

TEST_CASE("fork(): the child starts with no NCCL communicator and no tallies") {
  SessionController::Get();
  void* comm = nullptr;
  int mask = 0;
  REQUIRE(internal::NcclPluginInit(&GetRoot().nccl, &comm, &mask, nullptr, 0xF0F0, 1, 8, 3) ==
          kKairosNcclSuccess);
  int32_t rank = -1, size = 0;
  REQUIRE(internal::NcclLargestComm(GetRoot().nccl, &rank, &size));
  REQUIRE(internal::NcclCounters(GetRoot().nccl).communicators >= 1);
  const Root* const parent_root = &GetRoot();
  const internal::CpuThreadRegistry* const parent_registry = internal::CpuRegistry();
  CHECK(InChild([parent_root, parent_registry] {
          int32_t r = -1, s = 0;
          const internal::NcclPluginCounters c = internal::NcclCounters(GetRoot().nccl);
          int code = 0;
          if (internal::NcclLargestComm(GetRoot().nccl, &r, &s))
            code |= 1;  // would register with the daemon
          if (c.communicators != 0 || c.operations != 0 || c.without_launch != 0) code |= 2;
          // The hook replaced the parent's root and thread registry, and the new ones keep
          // the parent's reachable.
          if (&GetRoot() == parent_root || GetRoot().abandoned_parent != parent_root) code |= 4;
          const internal::CpuThreadRegistry* reg = internal::CpuRegistryIfCreated();
          if (reg == nullptr || reg == parent_registry || reg->abandoned_parent != parent_registry)
            code |= 8;
          return code;
        }) == 0);
  CHECK(internal::NcclLargestComm(GetRoot().nccl, &rank, &size));  // the parent keeps its own
  CHECK(size == 8);
  internal::NcclPluginFinalize(comm);
}

TEST_CASE("fork(): the child does not stamp steps into the parent's telemetry ring") {
  SessionController::Get();
  const std::string path = "fork_state_telemetry_" + std::to_string(getpid()) + ".jsonl";
  Telemetry t;
  TelemetryOptions o;
  o.interval_ns = 10LL * 1000 * 1000 * 1000;
  o.path = path;
  o.iterations = [] { return int64_t{0}; };
  o.run_thread = false;
  o.step_slot = &g_steps.telemetry;  // as root.cc sets it
  REQUIRE(t.Start(o).ok());
  TelemetryStepRing* ring = g_steps.telemetry.load();
  REQUIRE(ring != nullptr);
  CHECK(InChild([ring] {
          StepHook();  // the child's step 1 (the hook loads the slot)
          TelemetryNoteStep(g_steps.telemetry.load(), 7, 1234);
          return g_steps.telemetry.load() == nullptr && ring->raw[1].load() == 0 &&
                         ring->raw[7].load() == 0
                     ? 0
                     : 1;
        }) == 0);
  std::remove(path.c_str());
}

TEST_CASE("fork(): the child's iteration 1 is not the parent's step boundary 1") {
  SessionController::Get();
  const int64_t before = g_steps.iteration.load();
  for (int i = 0; i < 3; ++i) StepHook();
  const int64_t parent_iteration = g_steps.iteration.load();
  REQUIRE(parent_iteration == before + 3);
  REQUIRE(StepBoundaryRaw(parent_iteration) != 0);
  CHECK(InChild([parent_iteration] {
          int code = 0;
          if (g_steps.iteration.load() != 0) code |= 1;
          // The child has not reached this boundary: the ring must not answer with the parent's.
          if (StepBoundaryRaw(parent_iteration) != 0) code |= 2;
          if (StepBoundaryRaw(1) != 0) code |= 4;
          StepHook();
          if (g_steps.iteration.load() != 1 || StepBoundaryRaw(1) == 0) code |= 8;
          return code;
        }) == 0);
}

TEST_CASE("the environment is decoded once; a fork child keeps the parent's decoded copy") {
  SessionController::Get();
  const EnvSettings& first = ProcessEnv();
  const std::string job_name = first.job_name;  // as the process started (ctest sets none)
  setenv("PT_PROFILER_JOB_NAME", "fork_state_set_after_first_read", 1);
  // Not re-read: the same object, unchanged, though the variable changed since.
  CHECK(&ProcessEnv() == &first);
  CHECK(ProcessEnv().job_name == job_name);
  CHECK(DecodeProcessEnv().job_name == "fork_state_set_after_first_read");
  const EnvSettings* const parent_copy = &first;
  CHECK(InChild([parent_copy, job_name] {
          const EnvSettings& child = ProcessEnv();
          return &child == parent_copy && child.job_name == job_name ? 0 : 1;
        }) == 0);
  unsetenv("PT_PROFILER_JOB_NAME");
}

// What fork() replaces in a child (the root, the thread registry, the CUPTI buffer pool) is
// never freed there: another thread of the parent may have held its mutex. It must stay
// reachable from what replaced it, also over nested forks, or LeakSanitizer reports it when
// the child exits normally (the ASan build's suite runs with detect_leaks=1; elsewhere this
// checks the chains of parents). The children exit through exit(), not _exit(), and the test
// holds the replaced objects' addresses only masked, so its own stack keeps nothing reachable.
uintptr_t Masked(const void* p) { return reinterpret_cast<uintptr_t>(p) ^ 0x5a5a5a5a5a5a5a5aull; }

TEST_CASE("fork(): nested children exit normally; what each fork replaced stays reachable") {
  SessionController::Get();
  const uintptr_t root0 = Masked(&GetRoot());
  const uintptr_t reg0 = Masked(internal::CpuRegistry());
  std::fflush(nullptr);  // nothing buffered is written twice by the children's exit()
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    alarm(20);
    int code = 0;
    if (Masked(&GetRoot()) == root0 || Masked(GetRoot().abandoned_parent) != root0) code |= 1;
    const internal::CpuThreadRegistry* reg = internal::CpuRegistry();
    if (Masked(reg) == reg0 || Masked(reg->abandoned_parent) != reg0) code |= 2;
    const uintptr_t root1 = Masked(&GetRoot());
    const uintptr_t reg1 = Masked(reg);
    reg = nullptr;
    const pid_t grandchild = fork();
    if (grandchild == 0) {
      alarm(20);
      int g = 0;
      const Root* parent = GetRoot().abandoned_parent;
      if (Masked(parent) != root1 || Masked(parent->abandoned_parent) != root0) g |= 4;
      const internal::CpuThreadRegistry* parent_reg = internal::CpuRegistry()->abandoned_parent;
      if (Masked(parent_reg) != reg1 || Masked(parent_reg->abandoned_parent) != reg0) g |= 8;
      parent = nullptr;
      parent_reg = nullptr;
      std::exit(g);
    }
    int status = 0;
    if (grandchild < 0 || waitpid(grandchild, &status, 0) != grandchild) {
      code |= 16;
    } else if (!WIFEXITED(status)) {
      code |= 32;  // a signal: LeakSanitizer aborts (abort_on_error) on a leak
    } else {
      code |= WEXITSTATUS(status);  // 23: LeakSanitizer's exit code for a leak
    }
    std::exit(code);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace kairos
