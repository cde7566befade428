// File: kairos_torch_bridge.cc
// Layer: bindings/torch. The torch bridge: a global at::RecordFunction callback that
// records every PyTorch operator as a kairos cpu_op range (kairos_op_push) and every
// record_function() user scope as a user_annotation range (kairos_range_push), and a second
// callback, limited to user scopes, that counts an iteration (kairos_step) at the end of
// PyTorch's own "Optimizer.step#<Class>.step" scope. Loaded by the Python package with
// ctypes (no pybind11, no Python headers: one translation unit, one compile of the torch
// headers); it resolves libkairos and libtorch symbols from the process.
// Threading: callbacks run on every thread that runs operators (autograd threads included:
// backward ops are recorded on the thread that runs them). Install/uninstall are serialised
// by a mutex; a second install is a no-op that reports "already installed".
//
// Cost while no trace records: the callback does one plain load of kairos' recording flag
// and returns (measured in bench/torch_op_bench.py). While recording: the thread-local
// nesting check, kairos_op_push (one ring record) and, only when installed with
// record_shapes, formatting of the shapes and types into a thread-local buffer.
#include <ATen/record_function.h>

#include <atomic>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

#include "kairos.h"

namespace {

const volatile uint32_t* g_recording = nullptr;    // kairos_recording_flag()
std::mutex g_install_mu;
at::CallbackHandle g_ops_handle = 0;
at::CallbackHandle g_step_handle = 0;
std::atomic<bool> g_count_steps{false};
bool g_needs_inputs = false;

constexpr uint32_t kMaxDepth = 1u << 20;

// Ranges this thread pushed in the current recording epoch. A RecordFunction that began
// before the window (or in an earlier one) must not pop a range it never pushed: its end
// callback sees depth 0 (or an old epoch) and does nothing. Operators nest per thread, so a
// counter is enough.
struct Nesting {
  uint32_t epoch = 0;
  uint32_t depth = 0;
};
// Default (dynamic) TLS model: this module is dlopen()ed after startup, where the static TLS
// surplus initial-exec would need is small and shared; the access is on the recording path
// only (the idle check returns before it).
thread_local Nesting t_nesting;

// Appends one input's shape to `dims` and its type to `types` (thread-local buffers that keep
// their capacity, so this does not allocate once warm).
void AppendDims(const c10::IValue& v, std::string& dims, std::string& types) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (!t.defined()) {
      dims += "[]";
      types += "\"\"";
      return;
    }
    // std::to_chars, not snprintf: this runs for every operator input while recording shapes.
    const auto sizes = t.sizes();
    char buf[512];
    char* p = buf;
    char* const end = buf + sizeof(buf) - 24;
    *p++ = '[';
    for (size_t i = 0; i < sizes.size() && p < end; ++i) {
      if (i) {
        *p++ = ',';
        *p++ = ' ';
      }
      p = std::to_chars(p, end + 22, static_cast<int64_t>(sizes[i])).ptr;
    }
    *p++ = ']';
    dims.append(buf, static_cast<size_t>(p - buf));
    types += '"';
    const auto name = t.dtype().name();
    types.append(name.data(), name.size());
    types += '"';
    return;
  }
  // Non-tensor inputs: Kineto writes an empty shape and a coarse type name.
  dims += "[]";
  if (v.isTensorList()) {
    types += "\"TensorList\"";
  } else if (v.isScalar() || v.isBool()) {
    types += "\"Scalar\"";
  } else {
    types += "\"\"";
  }
}

std::unique_ptr<at::ObserverContext> OnOpStart(const at::RecordFunction& fn) {
  const uint32_t epoch = *g_recording;  // the one load while idle
  if (__builtin_expect(epoch == 0, 1)) return nullptr;
  Nesting& n = t_nesting;
  if (n.epoch != epoch) {
    n.epoch = epoch;
    n.depth = 0;
  }
  if (n.depth >= kMaxDepth) return nullptr;
  if (fn.scope() == at::RecordScope::USER_SCOPE) {
    kairos_range_push(fn.name());
  } else {
    kairos_op_args args;
    args.sequence_nr = fn.seqNr();
    args.fwd_thread_id = fn.forwardThreadId();
    args.record_function_id = fn.handle();
    args.input_dims = nullptr;
    args.input_types = nullptr;
    thread_local std::string dims, types;
    // Shapes whenever PyTorch hands over the inputs (installed with record_shapes); a trace
    // whose config does not ask for them drops them at collection (kairos_op_attach).
    // An exception here (allocation) would escape into the operator: shapes are skipped.
    if (g_needs_inputs) try {
      dims.assign(1, '[');
      types.assign(1, '[');
      bool first = true;
      for (const c10::IValue& v : fn.inputs()) {
        if (!first) {
          dims += ", ";
          types += ", ";
        }
        first = false;
        AppendDims(v, dims, types);
      }
      dims += ']';
      types += ']';
      args.input_dims = dims.c_str();
      args.input_types = types.c_str();
    } catch (...) {
      args.input_dims = args.input_types = nullptr;
    }
    kairos_op_push(fn.name(), &args);
  }
  ++n.depth;
  return nullptr;
}

void OnOpEnd(const at::RecordFunction& fn, at::ObserverContext*) {
  const uint32_t epoch = *g_recording;
  if (__builtin_expect(epoch == 0, 1)) return;
  Nesting& n = t_nesting;
  if (n.epoch != epoch || n.depth == 0) return;  // began outside this window
  // An async RecordFunction may end on another thread: its range stays open on the thread
  // that started it (written unfinished) rather than closing an unrelated range here.
  if (fn.threadId() != 0 && fn.threadId() != at::RecordFunction::currentThreadId()) return;
  --n.depth;
  kairos_range_pop();
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
// count_steps: count an iteration at the end of each "Optimizer.step#" scope (off when the
// caller uses optimizer step hooks instead). Returns 0 when installed, 1 when it already
// was (settings unchanged), -1 on error.
__attribute__((visibility("default"))) int kairos_torch_install(int record_shapes,
                                                                int count_steps) {
  std::lock_guard<std::mutex> lock(g_install_mu);
  if (g_ops_handle != 0) return 1;
  try {
    g_recording = kairos_recording_flag();
    kairos_op_attach();
    g_needs_inputs = record_shapes != 0;
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
