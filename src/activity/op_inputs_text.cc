// File: op_inputs_text.cc
// Layer: kairos_activity. See op_inputs_text.h. The text matches what the torch bridge
// formatted on the application thread before (and PyTorch's profiler writes): ", " between
// items, sizes in decimal, type names quoted as they are (dtype names hold no quote).
#include "activity/op_inputs_text.h"

#include <charconv>

namespace kairos::internal {

bool FormatOpInputs(const uint64_t* w, uint32_t words,
                    absl::FunctionRef<std::string_view(uint32_t)> type_text, std::string* dims,
                    std::string* types) {
  dims->assign(1, '[');
  types->assign(1, '[');
  char num[24];
  for (uint32_t i = 0; i < words;) {
    const uint64_t header = w[i++];
    const auto rank = static_cast<uint32_t>(header);
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
    types->append(type_text(static_cast<uint32_t>(header >> 32)));
    types->push_back('"');
  }
  dims->push_back(']');
  types->push_back(']');
  return true;
}

}  // namespace kairos::internal
