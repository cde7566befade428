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

#include "absl/functional/function_ref.h"

namespace kairos::internal {

// Formats `words` words at `w` (per input: header = type name id << 32 | rank, then `rank`
// sizes) as dims = [[2, 3], [], ...] and types = ["float", "Scalar", ...]; type_text maps a
// type name id to its text. Returns false (dims/types unspecified) when a rank runs past the
// end of the words: the op is then written without shapes.
bool FormatOpInputs(const uint64_t* w, uint32_t words,
                    absl::FunctionRef<std::string_view(uint32_t)> type_text, std::string* dims,
                    std::string* types);

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_OP_INPUTS_TEXT_H_
