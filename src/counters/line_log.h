// File: line_log.h
// Layer: kairos_counters. An append-only file of whole lines, for telemetry (JSONL that
// DuckDB, pandas and jq read): a line is either in the file whole or not at all, and the file
// is bounded by size.
// - One write(2) per batch of lines; a short write (a full disk) is cut back with ftruncate
//   to where the batch began, so no half line is left for the next batch to be glued onto.
//   The lines are counted as lost; the next batch that is written says how many were lost
//   since the last one (LostSinceLastWrite), so the file itself records the gap.
// - Rotation: when a batch would take the file past max_bytes, the file is renamed to
//   PATH.1 (replacing the previous PATH.1) and a new PATH started: at most 2 x max_bytes on
//   disk per process. max_bytes 0 = never rotate.
// - Opened as the trace sink opens: O_NOFOLLOW, O_NONBLOCK (a planted FIFO never blocks),
//   regular files only.
// Threading: not thread-safe; one owner (the telemetry writer, under its mutex). Assumes it
// is the only writer of PATH (the default name carries host and pid).
#ifndef KAIROS_SRC_COUNTERS_LINE_LOG_H_
#define KAIROS_SRC_COUNTERS_LINE_LOG_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace kairos {

class LineLog {
 public:
  LineLog() = default;
  ~LineLog();
  LineLog(const LineLog&) = delete;
  LineLog& operator=(const LineLog&) = delete;

  // Opens (creating, appending) `path`. Error: cannot be opened or is not a regular file.
  absl::Status Open(const std::string& path, uint64_t max_bytes);
  bool is_open() const { return fd_ >= 0; }

  // Appends `lines` (whole lines, each ending in '\n', `count` of them). False when they
  // could not be written whole (nothing of them is left in the file; they are counted lost).
  bool Append(std::string_view lines, uint64_t count);

  // Lines lost since the last batch that was written (0 after a successful Append).
  uint64_t lost_since_last_write() const { return lost_since_write_; }
  uint64_t lost_total() const { return lost_total_; }
  uint64_t rotations() const { return rotations_; }

 private:
  bool Rotate();

  std::string path_;
  uint64_t max_bytes_ = 0;
  int fd_ = -1;
  uint64_t size_ = 0;  // bytes in the file (single writer)
  uint64_t lost_since_write_ = 0;
  uint64_t lost_total_ = 0;
  uint64_t rotations_ = 0;
};

}  // namespace kairos

#endif  // KAIROS_SRC_COUNTERS_LINE_LOG_H_
