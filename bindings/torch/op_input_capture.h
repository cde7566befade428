// File: op_input_capture.h
// Layer: bindings/torch. Reads an operator's inputs as kairos stores them (kairos_op_enter's
// packed words: per input its rank, its type text's address, its sizes), so the hot path
// copies sizes and never formats text: "Input Dims" / "Input type" are written at collection
// (src/activity/op_inputs.h). Shared by the torch bridge and by the bridge's floor benchmark
// (bench/torch_floor_callback.cc), which must read the inputs exactly as the bridge does.
// Threading: none of its own; the dtype table is filled once before any callback reads it.
#ifndef KAIROS_BINDINGS_TORCH_OP_INPUT_CAPTURE_H_
#define KAIROS_BINDINGS_TORCH_OP_INPUT_CAPTURE_H_

#include <ATen/record_function.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kairos.h"  // KAIROS_OP_MAX_INPUT_WORDS, the words' layout (kairos_op_enter)

namespace kairos_torch {

// The most words one op's capture writes is the room its caller gives (kairos: at most
// KAIROS_OP_MAX_INPUT_WORDS, less when the thread's args area is nearly full); an op past it
// (hundreds of inputs) is recorded without shapes and counted by kairos as dropped args.
inline constexpr uint32_t kMaxWords = KAIROS_OP_MAX_INPUT_WORDS;
inline constexpr uint32_t kOverBounds = UINT32_MAX;

// dtype names ("float", "long int", "c10::Half": TypeMeta::name(), what PyTorch's profiler
// writes) as NUL-terminated strings that live as long as the process, indexed by ScalarType.
// kairos records only their address and reads the text at collection.
struct DtypeNames {
  static constexpr int kCount = static_cast<int>(c10::ScalarType::NumOptions);
  char text[kCount][48] = {};
  bool filled = false;

  void Fill() {
    if (filled) return;
    filled = true;
    for (int i = 0; i < kCount; ++i) {
      text[i][0] = '\0';
      try {
        const auto name = c10::scalarTypeToTypeMeta(static_cast<c10::ScalarType>(i)).name();
        const size_t n = std::min(name.size(), sizeof(text[i]) - 1);
        std::memcpy(text[i], name.data(), n);
        text[i][n] = '\0';
      } catch (...) {
      }
    }
  }
  const char* Of(int st) const { return st >= 0 && st < kCount ? text[st] : ""; }
};

inline uint64_t TextWord(const char* text) { return reinterpret_cast<uintptr_t>(text); }

// Writes every input of `fn` at `w`, at most `room` words, and returns the words written, or
// kOverBounds when they do not fit. Per input: a tensor's rank, dtype name and sizes; for
// other inputs an empty shape and the coarse type name PyTorch's profiler writes
// ("TensorList", "Scalar" or ""). May throw (reading an input): the caller catches, since
// nothing may escape into the operator.
// One bound check up front covers every input's two words, so the loop checks room only for
// a tensor's sizes: an op with several non-tensor inputs (TorchScript passes them all) paid a
// room check and a recomputed write position per input, about a quarter of the capture's
// instructions (docs/PERFORMANCE.md, torch bridge, session 17).
inline uint32_t CaptureInputs(const at::RecordFunction& fn, const DtypeNames& names, uint64_t* w,
                              uint32_t room) {
  const c10::ArrayRef<const c10::IValue> in = fn.inputs();
  if (in.size() > room / 2) return kOverBounds;
  // Words left for tensors' sizes once every input has its two.
  size_t spare = room - 2 * in.size();
  uint64_t* out = w;
  for (const c10::IValue& v : in) {
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      if (!t.defined()) {
        out[0] = 0;
        out[1] = TextWord("");
        out += 2;
        continue;
      }
      // A nested tensor has no sizes (sizes() throws, which used to drop the op's whole
      // shapes): an empty shape with its dtype, as PyTorch's profiler writes it.
      if (__builtin_expect(t.is_nested(), 0)) {
        out[0] = 0;
        out[1] = TextWord(names.Of(static_cast<int>(t.scalar_type())));
        out += 2;
        continue;
      }
      const auto sizes = t.sizes();
      if (sizes.size() > spare) return kOverBounds;
      spare -= sizes.size();
      out[0] = sizes.size();
      out[1] = TextWord(names.Of(static_cast<int>(t.scalar_type())));
      // A loop, not memcpy: ranks are small, and a libc call per input costs more than the copy.
      for (size_t k = 0; k < sizes.size(); ++k) out[2 + k] = static_cast<uint64_t>(sizes[k]);
      out += 2 + sizes.size();
      continue;
    }
    out[0] = 0;
    // isScalar/isBool are inline tag tests; isTensorList is a call into libtorch.
    out[1] =
        TextWord((v.isScalar() || v.isBool()) ? "Scalar" : v.isTensorList() ? "TensorList" : "");
    out += 2;
  }
  return static_cast<uint32_t>(out - w);
}

}  // namespace kairos_torch

#endif  // KAIROS_BINDINGS_TORCH_OP_INPUT_CAPTURE_H_
