// File: op_inputs_text.cc
// Layer: kairos_activity. See op_inputs_text.h. The text matches what the torch bridge
// formatted on the application thread before (and PyTorch's profiler writes): ", " between
// items, sizes in decimal, type names quoted as they are (dtype names hold no quote).
#include "activity/op_inputs_text.h"

#include <charconv>
#include <cstring>

namespace kairos::internal {

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
