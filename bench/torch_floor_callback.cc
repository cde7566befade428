// File: bench/torch_floor_callback.cc
// Layer: bench (a module torch_op_bench.py loads; built with the torch bridge's headers).
// The floor of the torch bridge (docs/PERFORMANCE.md, "Torch bridge: the floor of the work"):
// a RecordFunction callback that does what any profiler recording an operator must do, and
// nothing more. At the start: read the TSC and store it with the op's name (its address only),
// sequence number, forward thread id, RecordFunction id and, with shapes, its inputs read by
// the bridge's own capture (op_input_capture.h) straight into the buffer. At the end: read the
// TSC and store it. The buffer is the thread's, allocated and made resident at its first op,
// and wraps around: no name interning, nesting, window, bounds accounting or publication to
// another thread. bench/torch_op_bench.py and bench/torch_op_instr.py time it beside the
// bridge (modes "floor" and "floor+shapes"), as range_benchmark times kairos' ranges beside a
// bare ring with two TSC reads. Benchmark only: not installed, not part of the default build
// (target torch_floor_callback).
#include <ATen/record_function.h>
#include <x86intrin.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "op_input_capture.h"

namespace {

// 8 MiB per thread, resident from the start, wrapping around: a round of the benchmark (20,000
// ops, 1-4 MiB of records) mostly writes lines an earlier round left in the cache, the
// cheapest memory a recorder can write to, so this is a lower bound. With 64 MiB (lines
// last written 64 MiB ago) the floor with shapes took 271-287 ns per op, more than kairos
// (docs/PERFORMANCE.md).
constexpr size_t kBufferWords = size_t{1} << 20;
constexpr size_t kStartWords = 6 + kairos_torch::kMaxWords;

struct FloorBuffer {
  uint64_t* words;
  size_t used;
};
// Initial-exec: one %fs-relative load, as kairos' own thread state (the module is dlopen()ed
// into a process whose static TLS has room for 16 bytes).
thread_local FloorBuffer t_buffer __attribute__((tls_model("initial-exec")));

kairos_torch::DtypeNames g_names;
at::CallbackHandle g_handle = 0;
uint64_t g_ops_started = 0;  // the installing thread's ops (a check that the callback ran)

__attribute__((noinline)) void NewBuffer() {
  auto* w = static_cast<uint64_t*>(std::malloc(kBufferWords * sizeof(uint64_t)));
  if (w == nullptr) std::abort();
  std::memset(w, 0, kBufferWords * sizeof(uint64_t));  // resident before the first record
  t_buffer.words = w;
  t_buffer.used = 0;
}

inline uint64_t* Reserve(size_t words) {
  if (__builtin_expect(t_buffer.words == nullptr, 0)) NewBuffer();
  if (__builtin_expect(t_buffer.used + words > kBufferWords, 0)) t_buffer.used = 0;
  return t_buffer.words + t_buffer.used;
}

template <bool kShapes>
std::unique_ptr<at::ObserverContext> FloorStart(const at::RecordFunction& fn) {
  uint64_t* w = Reserve(kStartWords);
  w[0] = __rdtsc();
  w[1] = reinterpret_cast<uintptr_t>(fn.name());
  w[2] = static_cast<uint64_t>(fn.seqNr());
  w[3] = fn.forwardThreadId();
  w[4] = fn.handle();
  uint32_t n = 0;
  if (kShapes) {
    try {
      n = kairos_torch::CaptureInputs(fn, g_names, w + 6, kairos_torch::kMaxWords);
    } catch (...) {
      n = 0;
    }
    if (n == kairos_torch::kOverBounds) n = 0;
  }
  w[5] = n;
  t_buffer.used += 6 + n;
  ++g_ops_started;
  return nullptr;
}

void FloorEnd(const at::RecordFunction& fn, at::ObserverContext*) {
  uint64_t* w = Reserve(2);
  w[0] = __rdtsc();
  w[1] = fn.threadId();
  t_buffer.used += 2;
}

}  // namespace

extern "C" {

// Registers the floor callback (with the inputs requested when `shapes`); -1 when one is
// registered already or PyTorch refuses.
__attribute__((visibility("default"))) int kairos_torch_floor_install(int shapes) {
  if (g_handle != 0) return -1;
  try {
    g_names.Fill();
    g_handle = at::addGlobalCallback(
        shapes ? at::RecordFunctionCallback(&FloorStart<true>, &FloorEnd).needsInputs(true)
               : at::RecordFunctionCallback(&FloorStart<false>, &FloorEnd));
    return 0;
  } catch (...) {
    return -1;
  }
}

__attribute__((visibility("default"))) void kairos_torch_floor_uninstall(void) {
  try {
    if (g_handle != 0) at::removeCallback(g_handle);
  } catch (...) {
  }
  g_handle = 0;
}

// Ops the callback started since load (single-threaded benchmark: a plain counter).
__attribute__((visibility("default"))) uint64_t kairos_torch_floor_ops(void) { return g_ops_started; }

}  // extern "C"
