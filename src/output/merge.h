// File: merge.h
// Layer: kairos_output. `kairos merge`: the traces of a job's ranks into one timeline, each
// rank its own process group (pids remapped so ranks never collide, process names and
// labels saying "rank R"), clocks aligned across ranks:
//  - ranks on one host share a clock and are not shifted;
//  - another host is shifted by the median, over every collective instance both hosts
//    recorded, of (reference end - its end): NCCL finishes the k-th instance of a collective
//    on a communicator within microseconds on every rank, so the ends are a common event
//    and the median ignores the odd outlier. The reference is the host of the lowest rank.
// Output: Kineto JSON (.json, .json.gz, .json.zst; streamed from JSON inputs, every event
// and arg kept) or Perfetto (.pftrace, .pftrace.zst; from JSON or Perfetto inputs through
// TraceData, one rank at a time). Memory: the JSON path holds one event plus one record per
// collective; the Perfetto path one rank's TraceData.
// Threading: a call runs on the calling thread.
#ifndef KAIROS_SRC_OUTPUT_MERGE_H_
#define KAIROS_SRC_OUTPUT_MERGE_H_

#include <climits>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "model/trace_data.h"

namespace kairos {

// Rank R's processes get pids R * kMergePidStride + i, i = 0, 1, ... in order of first
// appearance (JSON) or CPU process 0, GPU d at 1 + d (Perfetto): small enough for Perfetto's
// 32-bit pids with up to 21,474 ranks, whatever the OS pids were.
inline constexpr int64_t kMergePidStride = 100000;

// One collective kernel end, in the rank's own clock. The k-th instance of (name,
// communicator, step) is the same collective on every rank.
struct MergeCollective {
  std::string name;
  std::string group;  // "Process Group Ranks" (the communicator), empty if unknown
  int64_t step = -1;  // ProfilerStep#N whose CPU range holds the launch; -1 = none
  int64_t end_ns = 0;
};

struct MergeRankInfo {
  std::string path;
  int64_t rank = -1;      // distributedInfo, else the file name's ".rank<R>", else position
  std::string host;
  bool perfetto = false;  // input is a Perfetto trace
  std::vector<MergeCollective> collectives;  // in file order
  int64_t min_ts_ns = INT64_MAX;  // earliest timestamp, own clock
  int64_t shift_ns = 0;   // added to every timestamp of this rank
  uint64_t aligned_on = 0;  // collective instances the shift was computed from
};

struct MergeOptions {
  std::string out_path;
  // Reads a Perfetto input (the tool passes ReadPerfettoTrace; kairos_output does not link
  // the Perfetto decoder). Null: Perfetto inputs are refused.
  std::function<absl::StatusOr<TraceData>(const std::string&)> read_perfetto;
  int zstd_level = 3;
};

struct MergeResult {
  std::vector<MergeRankInfo> ranks;  // by rank
  uint64_t events = 0;               // events written
  std::vector<std::string> warnings;
};

// Whether a kernel name is a collective (NCCL/RCCL kernel names).
bool IsCollectiveKernelName(std::string_view name);

// Sets shift_ns/aligned_on of every rank (see the file comment); warnings for hosts that
// share no collective with the reference.
void AlignClocks(std::vector<MergeRankInfo>& ranks, std::vector<std::string>* warnings);

absl::StatusOr<MergeResult> MergeTraces(const std::vector<std::string>& inputs, const MergeOptions& options);

}  // namespace kairos

#endif  // KAIROS_SRC_OUTPUT_MERGE_H_
