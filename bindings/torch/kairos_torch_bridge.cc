// File: kairos_torch_bridge.cc
// Layer: bindings/torch. The torch bridge: a global at::RecordFunction callback that
// records every PyTorch operator as a kairos cpu_op range and every record_function() user
// scope as a user_annotation range (both through kairos_op_enter / _exit), and a second
// callback, limited to user scopes, that counts an iteration (kairos_step) at the end of
// PyTorch's own "Optimizer.step#<Class>.step" scope. Loaded by the Python package with
// ctypes (no pybind11, no Python headers: one translation unit, one compile of the torch
// headers); it resolves libkairos and libtorch symbols from the process.
// Threading: callbacks run on every thread that runs operators (autograd threads included:
// backward ops are recorded on the thread that runs them). Install/uninstall are serialised
// by a mutex; a second install is a no-op that reports "already installed".
//
// Cost while no trace records: the callback does one plain load of kairos' recording flag
// and returns (measured in bench/torch_op_bench.py). While recording: one call into kairos
// per callback (kairos_op_enter / kairos_op_exit: one ring record each, the nesting kept by
// kairos) and, only when installed with record_shapes, a copy of the inputs' sizes
// (formatted as text later, at collection).
// With allocator events asked for (kairos_torch_set_profile_memory), a reporter in PyTorch's
// per-thread profiler slot records its allocators' events: see "Allocator events" below.
#include <ATen/record_function.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/csrc/profiler/orchestration/observer.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

#include "kairos.h"
#include "model/flops.h"
#include "op_input_capture.h"

namespace {

const volatile uint32_t* g_recording = nullptr;    // kairos_recording_flag()
std::mutex g_install_mu;
at::CallbackHandle g_ops_handle = 0;
at::CallbackHandle g_step_handle = 0;
std::atomic<bool> g_count_steps{false};
bool g_needs_inputs = false;  // PyTorch boxes operator inputs for us (shapes or FLOPs)
bool g_record_shapes = false;  // format "Input Dims" / "Input type"
bool g_with_flops = false;     // compute "flops" (OpFlops)

// Nesting: a RecordFunction that began before the window (or in an earlier one) must not pop
// a range it never pushed. kairos keeps that count per thread (kairos_op_enter / _exit), in
// its own thread state: the bridge has no thread-local on the recording path (it is
// dlopen()ed, so each of its thread-locals would cost a __tls_get_addr call per callback).

// ---- Shapes (record_shapes): raw sizes on the hot path, text at collection ----
// The callback copies each input's rank, dtype name and sizes into a stack array of words
// and hands them to kairos_op_enter; libkairos formats "Input Dims" / "Input type" on the
// session thread (src/activity/op_inputs.h). Formatting and interning the text here
// cost more per op than the rest of the recording path (docs/PERFORMANCE.md).

// The capture itself (bounds, dtype names, the words' layout) is op_input_capture.h, shared
// with the bridge's floor benchmark; it writes into kairos' own storage (CaptureInto). The
// dtype table is filled once, under g_install_mu, before the first callback is registered;
// read-only after (a later install after an uninstall, while a late callback may still read
// it, leaves it).
kairos_torch::DtypeNames g_dtype_names;

// kairos' capture callback (kairos_op_enter_captured): the inputs of the RecordFunction at
// `ctx`, written straight into kairos' args area. An exception while reading them leaves the
// inputs out (it must not escape into kairos or the operator), as does an op past the bounds:
// kairos counts them as dropped args.
uint32_t CaptureInto(void* ctx, uint64_t* words, uint32_t room) noexcept {
  try {
    return kairos_torch::CaptureInputs(*static_cast<const at::RecordFunction*>(ctx), g_dtype_names,
                                       words, room);
  } catch (...) {
    return kairos_torch::kOverBounds;
  }
}

// ---- FLOPs (PROFILE_WITH_FLOPS; formulas in src/model/flops.h, table in docs/FLOPS.md) ----
// Kept apart from the shape formatting: it reads the same boxed inputs but needs the
// non-tensor ones (stride, padding, groups, output_mask) that "Input Dims" leaves empty.

// Sizes of inputs[i] when it is a defined tensor.
bool TensorDims(c10::ArrayRef<const c10::IValue> in, size_t i, kairos::flops::Dims* out) {
  if (i >= in.size() || !in[i].isTensor()) return false;
  const at::Tensor& t = in[i].toTensor();
  if (!t.defined()) return false;
  const auto sizes = t.sizes();
  *out = kairos::flops::Dims{sizes.data(), sizes.size()};
  return true;
}

// An int[] input copied into `buf` (at most 8 entries; conv attributes have 1 to 3).
bool IntList(c10::ArrayRef<const c10::IValue> in, size_t i, int64_t (&buf)[8],
             kairos::flops::Dims* out) {
  if (i >= in.size() || !in[i].isIntList()) return false;
  const c10::List<int64_t> list = in[i].toIntList();
  if (list.size() > 8) return false;
  for (size_t k = 0; k < list.size(); ++k) buf[k] = list.get(k);
  *out = kairos::flops::Dims{buf, list.size()};
  return true;
}

// conv1d/2d/3d(input, weight, bias, stride, padding, dilation, groups): string padding
// ("same", "valid") has no count here, as in PyTorch.
int64_t ConvFlops(c10::ArrayRef<const c10::IValue> in) {
  kairos::flops::Dims x, w, st, pad, dil;
  int64_t b_st[8], b_pad[8], b_dil[8];
  if (!TensorDims(in, 0, &x) || !TensorDims(in, 1, &w) || !IntList(in, 3, b_st, &st) ||
      !IntList(in, 4, b_pad, &pad) || !IntList(in, 5, b_dil, &dil) || in.size() < 7 ||
      !in[6].isInt())
    return -1;
  return kairos::flops::Conv(x, w, st, pad, dil, in[6].toInt());
}

// convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
// transposed, output_padding, groups, output_mask).
int64_t ConvBackwardFlops(c10::ArrayRef<const c10::IValue> in) {
  kairos::flops::Dims go, x, w;
  if (!TensorDims(in, 0, &go) || !TensorDims(in, 1, &x) || !TensorDims(in, 2, &w) ||
      in.size() < 11 || !in[7].isBool() || !in[10].isBoolList())
    return -1;
  const c10::List<bool> mask = in[10].toBoolList();
  if (mask.size() < 2) return -1;
  return kairos::flops::ConvBackward(go, x, w, in[7].toBool(), mask.get(0), mask.get(1));
}

// The scaled-dot-product attention kernels' ops (PyTorch 2.x): query, key, value are the
// first three inputs, after grad_out for the backward ops.
int64_t AttentionFlops(c10::ArrayRef<const c10::IValue> in, bool backward) {
  const size_t q = backward ? 1 : 0;
  kairos::flops::Dims qd, kd, vd;
  if (!TensorDims(in, q, &qd) || !TensorDims(in, q + 1, &kd) || !TensorDims(in, q + 2, &vd))
    return -1;
  return kairos::flops::Attention(qd, kd, vd, backward);
}

bool Is(const char* op, const char* name) { return std::strcmp(op, name) == 0; }

// The FLOPs of one operator from its inputs, or -1 (no formula for it, or inputs that do not
// fit). Called only while recording with g_with_flops; the name test costs one compare for
// the ops that are not aten:: (autograd nodes, TorchScript functions).
int64_t OpFlops(const at::RecordFunction& fn) {
  const char* name = fn.name();
  if (name == nullptr || std::strncmp(name, "aten::", 6) != 0) return -1;
  const char* op = name + 6;
  const c10::ArrayRef<const c10::IValue> in = fn.inputs();
  namespace fl = kairos::flops;
  fl::Dims a, b, bias;
  // Tensors i and j (and, for the +bias forms, a tensor at 0 as PyTorch requires).
  auto two = [&](size_t i, size_t j) { return TensorDims(in, i, &a) && TensorDims(in, j, &b); };
  auto biased = [&] { return TensorDims(in, 0, &bias) && two(1, 2); };
  switch (op[0]) {
    case 'm':
      if (Is(op, "mm")) return two(0, 1) ? fl::Gemm(a, b) : -1;
      if (Is(op, "mul")) return TensorDims(in, 0, &a) ? fl::Elementwise(a) : -1;
      return -1;
    case 'a':
      if (Is(op, "addmm")) return biased() ? fl::Gemm(a, b) : -1;
      if (Is(op, "add")) return TensorDims(in, 0, &a) ? fl::Elementwise(a) : -1;
      return -1;
    case 'b':
      if (Is(op, "bmm")) return two(0, 1) ? fl::BatchedGemm(a, b) : -1;
      if (Is(op, "baddbmm")) return biased() ? fl::BatchedGemm(a, b) : -1;
      return -1;
    case 'c':
      if (Is(op, "conv1d") || Is(op, "conv2d") || Is(op, "conv3d")) return ConvFlops(in);
      if (Is(op, "conv_transpose1d") || Is(op, "conv_transpose2d") || Is(op, "conv_transpose3d"))
        return two(0, 1) ? fl::ConvTranspose(a, b) : -1;
      if (Is(op, "convolution_backward")) return ConvBackwardFlops(in);
      return -1;
    case '_':
      if (std::strncmp(op, "_scaled_dot_product_", 20) != 0 &&
          std::strncmp(op, "_flash_attention_", 17) != 0 &&
          std::strncmp(op, "_efficient_attention_", 21) != 0)
        return -1;
      {
        const size_t len = std::strlen(op);
        const bool backward = len > 9 && std::strcmp(op + len - 9, "_backward") == 0;
        return AttentionFlops(in, backward);
      }
    default:
      return -1;
  }
}

// ---- Allocator events (PROFILE_PROFILE_MEMORY; docs/MEMORY.md "PyTorch allocator events") ----
// PyTorch's allocators (the CPU allocator's ProfiledCPUMemoryReporter, the CUDA caching
// allocator) report each allocation and free to the c10::MemoryReportingInfoBase installed
// in the thread's c10::ThreadLocalDebugInfo under DebugInfoKind::PROFILER_STATE, the slot
// torch's own profiler uses (reportMemoryUsageToProfiler). The bridge installs its reporter
// there on a thread's first operator of a window (when the slot is free) and takes it out
// on the thread's first operator after the window (or kairos_torch_memory_release), so
// outside kairos windows torch's profiler finds the slot as it left it. The reporter is a
// ProfilerStateBase with a disabled config: PyTorch code that casts the slot's content to
// its profiler base (profilerEnabled(), getProfilerConfig()) reads "disabled", never garbage.
// at::ThreadLocalState carries the slot to autograd's device threads as for torch's profiler.
namespace torch_prof = torch::profiler::impl;

// The totals' types changed between PyTorch versions (int64_t in 1.13, size_t in 2.11, found
// on a real GPU machine): read them from the base class's own declaration so the override
// matches whichever torch the bridge is compiled against.
template <typename Fn>
struct MemoryUsageArgs;
template <typename C, typename Size, typename Total, typename Reserved>
struct MemoryUsageArgs<void (C::*)(void*, Size, Total, Reserved, c10::Device)> {
  using AllocSize = Size;
  using TotalAllocated = Total;
  using TotalReserved = Reserved;
};
using MemoryArgs = MemoryUsageArgs<decltype(&c10::MemoryReportingInfoBase::reportMemoryUsage)>;

struct MemoryReporter final : torch_prof::ProfilerStateBase {
  MemoryReporter() : ProfilerStateBase(torch_prof::ProfilerConfig(torch_prof::ProfilerState::Disabled)) {}
  // On the allocating thread, inside the allocator (its lock may be held): one ring record.
  void reportMemoryUsage(void* ptr, MemoryArgs::AllocSize alloc_size,
                         MemoryArgs::TotalAllocated total_allocated,
                         MemoryArgs::TotalReserved total_reserved, c10::Device device) override {
    kairos_memory_event(ptr, static_cast<int64_t>(alloc_size), static_cast<int64_t>(total_allocated),
                        static_cast<int64_t>(total_reserved), static_cast<int32_t>(device.type()),
                        device.index());
  }
  // The allocator asks before it does any bookkeeping: false while no window records.
  bool memoryProfilingEnabled() const override { return *g_recording != 0; }
  torch_prof::ActiveProfilerType profilerType() override {
    return torch_prof::ActiveProfilerType::NONE;
  }
};

std::atomic<bool> g_profile_memory{false};        // kairos_torch_set_profile_memory
std::atomic<uint32_t> g_memory_threads{0};        // threads holding the reporter in their slot
std::shared_ptr<MemoryReporter> g_memory_reporter;  // created at install, never replaced
std::atomic<uint64_t> g_memory_slot_taken{0};     // windows' threads where torch's profiler held it
thread_local bool t_memory_pushed = false;

// A thread's first operator of a window: install the reporter if memory is asked for and
// the slot is free (torch's own profiler running on this thread keeps it: counted). Once per
// thread and window, like kairos' own first record of a thread in a window: PyTorch's _push
// allocates one small list node (torch's profiler does the same when it starts).
void MemoryOnWindowOp() {
  if (!g_profile_memory.load(std::memory_order_relaxed) || t_memory_pushed || !g_memory_reporter)
    return;
  try {
    if (c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE) != nullptr) {
      g_memory_slot_taken.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    c10::ThreadLocalDebugInfo::_push(c10::DebugInfoKind::PROFILER_STATE, g_memory_reporter);
    t_memory_pushed = true;
    g_memory_threads.fetch_add(1, std::memory_order_relaxed);
  } catch (...) {
  }
}

// Takes the reporter out of this thread's slot if it is on top (something pushed over it
// since, e.g. a DebugInfoGuard, is left alone: the reporter stays inert there, reporting
// nothing while no window records).
void MemoryRelease() {
  if (!t_memory_pushed) return;
  t_memory_pushed = false;
  g_memory_threads.fetch_sub(1, std::memory_order_relaxed);
  try {
    if (c10::ThreadLocalDebugInfo::_peek(c10::DebugInfoKind::PROFILER_STATE).get() ==
        g_memory_reporter.get())
      c10::ThreadLocalDebugInfo::_pop(c10::DebugInfoKind::PROFILER_STATE);
  } catch (...) {  // the top is another kind of debug info
  }
}

// An operator while no window records: one more load, and the release only on a thread
// that holds the reporter.
inline void MemoryOnIdleOp() {
  if (__builtin_expect(g_memory_threads.load(std::memory_order_relaxed) != 0, 0)) MemoryRelease();
}

// The op's range while recording: one call into kairos (kairos_op_enter), which keeps the
// thread's nesting; its first op of the window also installs the allocator reporter. Out of
// line, so the idle check in OnOpStart saves no registers and sets up no stack frame.
__attribute__((noinline)) void RecordOpStart(const at::RecordFunction& fn) {
  int first;
  if (fn.scope() == at::RecordScope::USER_SCOPE) {
    first = kairos_op_enter(fn.name(), nullptr, -1, nullptr, 0, fn.threadId());
  } else {
    kairos_op_args args;
    args.sequence_nr = fn.seqNr();
    args.fwd_thread_id = fn.forwardThreadId();
    args.record_function_id = fn.handle();
    args.input_dims = nullptr;
    args.input_types = nullptr;
    int64_t flops = -1;
    if (g_with_flops) try {
      flops = OpFlops(fn);
    } catch (...) {
      flops = -1;
    }
    // Shapes whenever PyTorch hands over the inputs (installed with record_shapes); a trace
    // whose config does not ask for them drops them at collection (kairos_op_attach).
    first = g_record_shapes
                ? kairos_op_enter_captured(fn.name(), &args, flops, &CaptureInto,
                                           const_cast<at::RecordFunction*>(&fn), fn.threadId())
                : kairos_op_enter(fn.name(), &args, flops, nullptr, 0, fn.threadId());
  }
  if (__builtin_expect(first != 0, 0)) MemoryOnWindowOp();
}

std::unique_ptr<at::ObserverContext> OnOpStart(const at::RecordFunction& fn) {
  if (__builtin_expect(*g_recording == 0, 1)) {  // the one load while idle
    MemoryOnIdleOp();
  } else {
    RecordOpStart(fn);
  }
  return nullptr;
}

// Closes the range this thread's start callback opened, if it opened one in this window
// (kairos_op_exit checks); an async RecordFunction ending on another thread closes nothing.
void OnOpEnd(const at::RecordFunction& fn, at::ObserverContext*) {
  if (__builtin_expect(*g_recording == 0, 1)) return;
  kairos_op_exit(fn.threadId());
}

constexpr char kStepPrefix[] = "Optimizer.step#";

// User scopes only (PyTorch filters by scope before calling): recognises the optimizer step.
void OnUserScopeEnd(const at::RecordFunction& fn, at::ObserverContext*) {
  const char* name = fn.name();
  if (!g_count_steps.load(std::memory_order_relaxed)) return;
  if (name != nullptr && std::strncmp(name, kStepPrefix, sizeof(kStepPrefix) - 1) == 0)
    kairos_step();
}

std::unique_ptr<at::ObserverContext> NoStart(const at::RecordFunction&) { return nullptr; }

}  // namespace

extern "C" {

// Registers the callbacks. record_shapes: request operator inputs from PyTorch (needed for
// "Input Dims"; PyTorch then boxes inputs for every operator, so it is off unless asked).
// with_flops: request them too and compute "flops" (shapes are then not formatted unless
// record_shapes). count_steps: count an iteration at the end of each "Optimizer.step#" scope
// (off when the caller uses optimizer step hooks instead). Returns 0 when installed, 1 when
// it already was (settings unchanged), -1 on error.
__attribute__((visibility("default"))) int kairos_torch_install(int record_shapes,
                                                                int count_steps,
                                                                int with_flops) {
  std::lock_guard<std::mutex> lock(g_install_mu);
  if (g_ops_handle != 0) return 1;
  try {
    g_recording = kairos_recording_flag();
    if (!g_memory_reporter) g_memory_reporter = std::make_shared<MemoryReporter>();
    kairos_op_attach();
    g_dtype_names.Fill();
    g_record_shapes = record_shapes != 0;
    g_with_flops = with_flops != 0;
    g_needs_inputs = g_record_shapes || g_with_flops;
    g_ops_handle = at::addGlobalCallback(
        at::RecordFunctionCallback(&OnOpStart, &OnOpEnd).needsInputs(g_needs_inputs));
    g_count_steps.store(count_steps != 0, std::memory_order_relaxed);
    if (count_steps != 0) {
      g_step_handle = at::addGlobalCallback(at::RecordFunctionCallback(&NoStart, &OnUserScopeEnd)
                                                .scopes({at::RecordScope::USER_SCOPE}));
    }
    return 0;
  } catch (...) {
    return -1;
  }
}

// For bench/torch_op_bench.py only: registers callbacks that do nothing at all, so PyTorch's
// own cost of having a global callback can be told apart from the bridge's idle check.
// Removed by kairos_torch_uninstall(). Returns -1 when the bridge is installed.
namespace {
std::unique_ptr<at::ObserverContext> EmptyStart(const at::RecordFunction&) { return nullptr; }
void EmptyEnd(const at::RecordFunction&, at::ObserverContext*) {}
}  // namespace
__attribute__((visibility("default"))) int kairos_torch_install_empty(void) {
  std::lock_guard<std::mutex> lock(g_install_mu);
  if (g_ops_handle != 0) return -1;
  try {
    g_ops_handle = at::addGlobalCallback(at::RecordFunctionCallback(&EmptyStart, &EmptyEnd));
    return 0;
  } catch (...) {
    return -1;
  }
}

// The same with the operator inputs requested (what record_shapes or with_flops costs PyTorch
// before any callback reads them): the floor of the bridge with shapes.
__attribute__((visibility("default"))) int kairos_torch_install_empty_inputs(void) {
  std::lock_guard<std::mutex> lock(g_install_mu);
  if (g_ops_handle != 0) return -1;
  try {
    g_ops_handle = at::addGlobalCallback(
        at::RecordFunctionCallback(&EmptyStart, &EmptyEnd).needsInputs(true));
    return 0;
  } catch (...) {
    return -1;
  }
}

// Removes the callbacks (PyTorch requires that no operator runs concurrently).
__attribute__((visibility("default"))) void kairos_torch_uninstall(void) {
  std::lock_guard<std::mutex> lock(g_install_mu);
  try {
    if (g_ops_handle != 0) at::removeCallback(g_ops_handle);
    if (g_step_handle != 0) at::removeCallback(g_step_handle);
  } catch (...) {
  }
  g_ops_handle = g_step_handle = 0;
}

// Turns iteration counting from "Optimizer.step#" on or off (kairos.profile counts with
// p.step() instead). Only effective when installed with count_steps.
__attribute__((visibility("default"))) void kairos_torch_set_count_steps(int on) {
  std::lock_guard<std::mutex> lock(g_install_mu);
  g_count_steps.store(on != 0 && g_step_handle != 0, std::memory_order_relaxed);
}

// Allocator events (PROFILE_PROFILE_MEMORY): on = install the reporter on each thread's first
// operator of the next windows; off = install no more (threads holding it release it at
// their next operator outside a window).
__attribute__((visibility("default"))) void kairos_torch_set_profile_memory(int on) {
  g_profile_memory.store(on != 0, std::memory_order_relaxed);
}

// Takes the reporter out of the calling thread's debug-info slot now (kairos.profile's exit,
// the end of `kairos run`), so torch's own profiler can start on this thread at once.
__attribute__((visibility("default"))) void kairos_torch_memory_release(void) { MemoryRelease(); }

// Threads that found torch's own profiler holding the slot at a window's first operator
// (their allocations are not in kairos' trace).
__attribute__((visibility("default"))) uint64_t kairos_torch_memory_slot_taken(void) {
  return g_memory_slot_taken.load(std::memory_order_relaxed);
}

// 1 while installed.
__attribute__((visibility("default"))) int kairos_torch_installed(void) {
  std::lock_guard<std::mutex> lock(g_install_mu);
  return g_ops_handle != 0 ? 1 : 0;
}

// The torch major*100+minor the bridge was compiled against (the Python side compares it
// with the running torch before loading the bridge's callbacks).
__attribute__((visibility("default"))) int kairos_torch_built_version(void) {
  return KAIROS_TORCH_VERSION;
}

}  // extern "C"
