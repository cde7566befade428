// File: op_inputs_text.h
// Layer: kairos_activity. Turns a framework operator's raw inputs (the words
// kairos_op_push_inputs stored after its args slot, cpu_recorder.h StoredArgs::input_words)
// into the "Input Dims" / "Input type" JSON array text PyTorch's profiler writes.
// Threading: session thread (collection); pure function of its arguments.
// Why here and not on the hot path: formatting and interning shape text per op cost the
// torch bridge more than the rest of its recording path (docs/PERFORMANCE.md, torch bridge).
#ifndef KAIROS_SRC_ACTIVITY_OP_INPUTS_TEXT_H_
#define KAIROS_SRC_ACTIVITY_OP_INPUTS_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>


namespace kairos::internal {

// Formats `words` words at `w` (per input: rank, the address of its NUL-terminated type text
// or 0 for "", then `rank` sizes) as dims = [[2, 3], [], ...] and types = ["float", "Scalar",
// ...]. Returns false (dims/types unspecified) when an input runs past the end of the words:
// the op is then written without shapes. Type text longer than kMaxTypeText is cut there.
inline constexpr size_t kMaxTypeText = 256;
bool FormatOpInputs(const uint64_t* w, uint32_t words, std::string* dims, std::string* types);

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_OP_INPUTS_TEXT_H_
