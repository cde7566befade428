// File: merge_internal.h
// Layer: kairos_output. The Perfetto half of MergeTraces (merge_perfetto.cc), called by
// merge.cc once the ranks and their clock shifts are known.
// Threading: calling thread.
#ifndef KAIROS_SRC_OUTPUT_MERGE_INTERNAL_H_
#define KAIROS_SRC_OUTPUT_MERGE_INTERNAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "output/merge.h"

namespace kairos::internal {

// Reads each rank (one at a time) into TraceData and writes its tracks and events, shifted,
// under per-rank processes "rank R: ..." to options.out_path (.pftrace, .pftrace.zst).
// Events whose shifted time does not fit 64-bit ns are left out and reported, one warning
// per rank (DroppedWarning), in `warnings`.
absl::Status WriteMergedPerfetto(const MergeOptions& options, const std::vector<MergeRankInfo>& ranks,
                                 uint64_t* events, std::vector<std::string>* warnings);

// "rank R: N events dropped: shifted by S ns their time does not fit a 64-bit ns time"
std::string DroppedWarning(const MergeRankInfo& rank, uint64_t dropped);

}  // namespace kairos::internal

#endif  // KAIROS_SRC_OUTPUT_MERGE_INTERNAL_H_
