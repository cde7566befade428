// File: file_sink.h
// Layer: kairos_output. AtomicFileSink: a ByteSink that writes "<path>.tmp.<pid>" next to the
// final path and renames it into place on Finish(), so a reader never sees a partial trace.
// Threading: one thread at a time (ByteSink contract).
#ifndef KAIROS_SRC_OUTPUT_FILE_SINK_H_
#define KAIROS_SRC_OUTPUT_FILE_SINK_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "output/sink.h"

namespace kairos {

class AtomicFileSink : public ByteSink {
 public:
  // Creates the temp file "<path>.tmp.<pid>" (O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, mode 0640;
  // if that name is taken, ".1" ... ".15" is appended). Fails, naming the path and
  // strerror, when the directory is missing or unwritable or `path` is a symlink.
  static absl::StatusOr<std::unique_ptr<AtomicFileSink>> Create(const std::string& path);

  // Removes the temp file unless Finish() succeeded.
  ~AtomicFileSink() override;
  AtomicFileSink(const AtomicFileSink&) = delete;
  AtomicFileSink& operator=(const AtomicFileSink&) = delete;

  // Writes everything (retrying EINTR and short writes). On error the temp file is removed
  // at once and every later call returns the same error.
  absl::Status Write(const void* data, size_t size) override;
  // fsync, close, refuse if the final path became a symlink, rename(2) into place.
  absl::Status Finish() override;
  // Drops the output: removes the temp file. Idempotent.
  void Abort();

  const std::string& temp_path() const { return temp_path_; }
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  AtomicFileSink(std::string path, std::string temp_path, int fd);
  absl::Status Fail(const char* what, int err);

  std::string path_;
  std::string temp_path_;
  int fd_;
  bool finished_ = false;
  uint64_t bytes_written_ = 0;
  absl::Status status_;
};

namespace internal {
// write(2) until all `size` bytes are written; retries EINTR and short writes. Returns 0 or
// the errno of the failing call (ENOSPC, EFBIG, EIO, ...).
int WriteFully(int fd, const void* data, size_t size);
}  // namespace internal

}  // namespace kairos

#endif  // KAIROS_SRC_OUTPUT_FILE_SINK_H_
