// File: file_sink.h
// Layer: kairos_output. AtomicFileSink: THE way kairos writes a file (traces, summaries,
// extra outputs). Bytes go to a fresh temp file in the target directory that is renamed into
// place on Finish(), so a reader never sees a partial file, and the sink refuses every way a
// hostile or careless path could make it write where it must not:
//  - the temp file is created O_CREAT|O_EXCL|O_NOFOLLOW with a random name
//    ("<name>.tmp.<pid>.<16 hex>"), so nobody can plant a file or symlink at it in advance;
//  - an existing target that is not a regular file (symlink, FIFO, device such as /dev/null,
//    socket, directory) is never replaced: checked at Create and again right before rename;
//  - paths with NUL or control characters are rejected (a NUL would silently cut the name);
//  - with FileSinkOptions::confine_dir (daemon requests), every directory below the allowed
//    directory is opened with O_NOFOLLOW relative to the previous one, and the rename cannot
//    replace an existing file, so a symlink planted anywhere in the path cannot redirect the
//    write outside the allowed directory, even if it appears after the path was checked.
// All file operations after Create are relative to one directory fd (openat/renameat), so a
// directory renamed or replaced meanwhile cannot move the write elsewhere.
// Threading: one thread at a time (ByteSink contract).
#ifndef KAIROS_SRC_OUTPUT_FILE_SINK_H_
#define KAIROS_SRC_OUTPUT_FILE_SINK_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "output/sink.h"

namespace kairos {

struct FileSinkOptions {
  // Non-empty: the file must lie inside this directory (trusted: set by the job owner, e.g.
  // KINETO_ONDEMAND_TRACE_DIR; symlinks in it are followed), every directory component of
  // the path below it must be a real directory (no symlinks), and an existing file is never
  // replaced. Used for daemon-requested traces.
  std::string confine_dir;
  mode_t mode = 0640;  // of the new file (then masked by the umask); summaries use the same
  // What the file is, for its error messages ("refusing to write summary '...'"): a refusal
  // of a report or a port file once said "refusing to write trace".
  const char* what = "trace";
};

class AtomicFileSink : public ByteSink {
 public:
  // Creates the temp file. Errors name the path and the reason: NotFound (missing
  // directory), PermissionDenied, FailedPrecondition (symlink or non-regular target, symlink
  // in a confined path, existing file in confined mode), InvalidArgument (empty path, NUL or
  // control characters, path outside confine_dir, "." or ".." components in confined mode).
  static absl::StatusOr<std::unique_ptr<AtomicFileSink>> Create(const std::string& path);
  static absl::StatusOr<std::unique_ptr<AtomicFileSink>> Create(const std::string& path,
                                                                const FileSinkOptions& options);

  // Removes the temp file unless Finish() succeeded.
  ~AtomicFileSink() override;
  AtomicFileSink(const AtomicFileSink&) = delete;
  AtomicFileSink& operator=(const AtomicFileSink&) = delete;

  // Writes everything (retrying EINTR and short writes). On error the temp file is removed
  // at once and every later call returns the same error.
  absl::Status Write(const void* data, size_t size) override;
  // fsync, close, refuse if the final path became a symlink or a non-regular file, rename
  // into place (confined: without replacing anything).
  absl::Status Finish() override;
  // Drops the output: removes the temp file. Idempotent.
  void Abort();

  const std::string& temp_path() const { return temp_path_; }
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  AtomicFileSink(std::string path, std::string temp_path, int dir_fd, std::string name,
                 std::string temp_name, int fd, bool no_replace, const char* what);
  absl::Status Fail(const char* what, int err);

  std::string path_;
  std::string temp_path_;
  int dir_fd_;
  std::string name_;       // final file name inside dir_fd_
  std::string temp_name_;  // temp file name inside dir_fd_
  int fd_;
  bool no_replace_;
  const char* what_;  // FileSinkOptions::what
  bool finished_ = false;
  uint64_t bytes_written_ = 0;
  absl::Status status_;
};

namespace internal {
// write(2) until all `size` bytes are written; retries EINTR and short writes. Returns 0 or
// the errno of the failing call (ENOSPC, EFBIG, EIO, ...).
int WriteFully(int fd, const void* data, size_t size);

// "" or why `path` cannot name a file: empty, or contains NUL / a control byte (named as
// \xNN). Shared by every place that turns configured text into a file name.
std::string PathCharacterProblem(const std::string& path);
}  // namespace internal

}  // namespace kairos

#endif  // KAIROS_SRC_OUTPUT_FILE_SINK_H_
