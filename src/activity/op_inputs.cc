// File: op_inputs.cc
// Layer: kairos_activity. See op_inputs.h. Words per input: its rank, its type text's address
// (a string that lives as long as the process, kairos.h: read here at collection, so the hot
// path does no name lookup or strcmp), then its sizes. The text matches what the torch bridge
// formatted on the application thread before (and PyTorch's profiler writes): ", " between
// items, sizes in decimal, type names quoted as they are (dtype names hold no quote).
#include "activity/op_inputs.h"

#include <charconv>
#include <cstring>

#include "activity/cpu_recorder.h"
#include "activity/op_scope.h"

namespace kairos::internal {

namespace {
// 1 + the words `in` takes, or 0 when over the bounds (kMaxOpInputs, kMaxOpInputSizes).
uint32_t InputWords(const OpInputs& in) {
  if (in.count > kMaxOpInputs) return 0;
  if (in.count == 0) return 1;
  if (in.ranks == nullptr) return 0;
  // Each rank is bounded before it is added: no sum of up to kMaxOpInputs ranks overflows.
  uint32_t sizes = 0;
  bool over = false;
  for (uint32_t i = 0; i < in.count; ++i) {
    over |= in.ranks[i] > kMaxOpInputSizes;
    sizes += in.ranks[i] & (2 * kMaxOpInputSizes - 1);
  }
  if (over || sizes > kMaxOpInputSizes || (sizes > 0 && in.sizes == nullptr)) return 0;
  return 1 + 2 * in.count + sizes;
}

// The words of `in` after `a` when they fit in `free_slots`; returns a.input_words. The sizes
// are copied by a loop, not memcpy: most inputs have rank 0 to 2 (a framework op's inputs are
// mostly tensors of low rank and scalars), where a libc call per input costs more than the
// copy (the torch bridge's aten::add in TorchScript has 6 inputs: docs/PERFORMANCE.md).
uint32_t StoreOpInputs(ThreadState* s, StoredArgs& a, const OpInputs* in, uint32_t free_slots) {
  a.input_words = 0;
  if (in == nullptr) return 0;
  const uint32_t words = InputWords(*in);
  if (words == 0 || InputSlots(words - 1) > free_slots) {
    s->args_dropped.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  a.input_words = words;
  if (words == 1) return words;
  auto* w = reinterpret_cast<uint64_t*>(&a + 1);
  const int64_t* sizes = in->sizes;
  const char* const* types = in->types;
  for (uint32_t i = 0; i < in->count; ++i) {
    const uint32_t rank = in->ranks[i];
    w[0] = rank;
    w[1] = reinterpret_cast<uintptr_t>(types != nullptr ? types[i] : nullptr);
    for (uint32_t k = 0; k < rank; ++k) w[2 + k] = static_cast<uint64_t>(sizes[k]);
    w += 2 + rank;
    sizes += rank;
  }
  return words;
}
}  // namespace

void StoreOpInputsAndPublish(ThreadState* s, StoredArgs& a, const OpInputs* in, uint32_t used) {
  const uint32_t words = StoreOpInputs(s, a, in, SpareInputSlots(s, used));
  // Relaxed, as in StoreArgsSlow: only this thread writes args_used.
  s->args_used.store(used + 1 + (words > 0 ? InputSlots(words - 1) : 0), std::memory_order_relaxed);
}

uint32_t StoreOpArgs(ThreadState* s, const OpMeta& m, const PackedInputs* in) {
  const uint32_t used = s->args_used.load(std::memory_order_relaxed);
  if (used >= s->args_capacity) {
    s->args_dropped.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  StoredArgs& a = WriteOpSlot(s, m, used);
  uint32_t slots = 0;
  if (in != nullptr) {
    // The words as given, in one block; their structure is checked at collection.
    if (in->count <= kMaxOpInputWords && (in->count == 0 || in->words != nullptr) &&
        InputSlots(in->count) <= SpareInputSlots(s, used)) {
      slots = InputSlots(in->count);
      a.input_words = in->count + 1;
      if (in->count > 0) std::memcpy(&a + 1, in->words, size_t{in->count} * sizeof(uint64_t));
    } else {
      s->args_dropped.fetch_add(1, std::memory_order_relaxed);
    }
  }
  return PublishOpSlot(s, used, slots);
}

bool FormatOpInputs(const uint64_t* w, uint32_t words, std::string* dims, std::string* types) {
  dims->assign(1, '[');
  types->assign(1, '[');
  char num[24];
  for (uint32_t i = 0; i < words;) {
    if (words - i < 2) return false;
    const uint64_t rank = w[i++];
    const auto* type = reinterpret_cast<const char*>(static_cast<uintptr_t>(w[i++]));
    if (rank > words - i) return false;
    if (dims->size() > 1) {
      dims->append(", ", 2);
      types->append(", ", 2);
    }
    dims->push_back('[');
    for (uint32_t k = 0; k < rank; ++k) {
      if (k > 0) dims->append(", ", 2);
      const char* end = std::to_chars(num, num + sizeof(num), static_cast<int64_t>(w[i + k])).ptr;
      dims->append(num, static_cast<size_t>(end - num));
    }
    i += rank;
    dims->push_back(']');
    types->push_back('"');
    if (type != nullptr) types->append(type, strnlen(type, kMaxTypeText));
    types->push_back('"');
  }
  dims->push_back(']');
  types->push_back(']');
  return true;
}

}  // namespace kairos::internal
