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

// Writes one input at `w`: a tensor's rank, dtype name and sizes; for other inputs an empty
// shape and the coarse type name PyTorch's profiler writes ("TensorList", "Scalar" or "").
// Returns the words written, or 0 when they do not fit in `room` words.
inline uint32_t CaptureInput(const c10::IValue& v, const DtypeNames& names, uint64_t* w,
                             uint32_t room) {
  if (room < 2) return 0;
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (!t.defined()) {
      w[0] = 0;
      w[1] = TextWord("");
      return 2;
    }
    const auto sizes = t.sizes();
    if (sizes.size() > room - 2) return 0;
    w[0] = sizes.size();
    w[1] = TextWord(names.Of(static_cast<int>(t.scalar_type())));
    // A loop, not memcpy: ranks are small, and a libc call per input costs more than the copy.
    for (size_t k = 0; k < sizes.size(); ++k) w[2 + k] = static_cast<uint64_t>(sizes[k]);
    return 2 + static_cast<uint32_t>(sizes.size());
  }
  w[0] = 0;
  // isScalar/isBool are inline tag tests; isTensorList is a call into libtorch.
  w[1] = TextWord((v.isScalar() || v.isBool()) ? "Scalar" : v.isTensorList() ? "TensorList" : "");
  return 2;
}

// Writes every input of `fn` at `w`, at most `room` words, and returns the words written, or
// kOverBounds when they do not fit. May throw (reading an input): the caller catches, since
// nothing may escape into the operator.
inline uint32_t CaptureInputs(const at::RecordFunction& fn, const DtypeNames& names, uint64_t* w,
                              uint32_t room) {
  const c10::ArrayRef<const c10::IValue> in = fn.inputs();
  if (in.size() > room / 2) return kOverBounds;
  // The count in a local (no struct the compiler keeps in memory across libtorch calls).
  uint32_t nwords = 0;
  for (const c10::IValue& v : in) {
    const uint32_t n = CaptureInput(v, names, w + nwords, room - nwords);
    if (n == 0) return kOverBounds;
    nwords += n;
  }
  return nwords;
}

}  // namespace kairos_torch

#endif  // KAIROS_BINDINGS_TORCH_OP_INPUT_CAPTURE_H_
