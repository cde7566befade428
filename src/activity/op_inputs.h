// File: op_inputs.h
// Layer: kairos_activity. A framework operator's raw inputs (kairos_op_push_inputs): stored as
// 8-byte words in the args slots after the op's own (cpu_recorder.h StoredArgs::input_words)
// on the hot path, and turned into the "Input Dims" / "Input type" JSON array text PyTorch's
// profiler writes at collection.
// Threading: StoreOpInputsAndPublish on the recording thread (hot path: no lock, no
// allocation, bounded by kMaxOpInputs / kMaxOpInputSizes); FormatOpInputs on the session
// thread.
// Why the text is made at collection: formatting and interning shape text per op on the
// application's thread cost the torch bridge more than the rest of its recording path
// (docs/PERFORMANCE.md, torch bridge).
#ifndef KAIROS_SRC_ACTIVITY_OP_INPUTS_H_
#define KAIROS_SRC_ACTIVITY_OP_INPUTS_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace kairos::internal {

// Storing them: StoreOpInputsAndPublish (declared in cpu_recorder.h, defined in op_inputs.cc).

// Formats `words` words at `w` (per input: rank, the address of its NUL-terminated type text
// or 0 for "", then `rank` sizes) as dims = [[2, 3], [], ...] and types = ["float", "Scalar",
// ...]. Returns false (dims/types unspecified) when an input runs past the end of the words:
// the op is then written without shapes. Type text longer than kMaxTypeText is cut there.
inline constexpr size_t kMaxTypeText = 256;
bool FormatOpInputs(const uint64_t* w, uint32_t words, std::string* dims, std::string* types);

}  // namespace kairos::internal

#endif  // KAIROS_SRC_ACTIVITY_OP_INPUTS_H_
