// File: file_sink.cc
// Layer: kairos_output. Atomic temp-file-and-rename output; see file_sink.h.
// Threading: one thread at a time.
#include "output/file_sink.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "log.h"

namespace kairos {
namespace internal {

int WriteFully(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;  // a regular file never returns 0 for a non-empty write
    p += n;
    size -= static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace internal

namespace {

absl::Status ErrnoStatus(int err, const std::string& msg) {
  if (err == ENOENT || err == ENOTDIR) return absl::NotFoundError(msg);
  if (err == EACCES || err == EPERM || err == EROFS) return absl::PermissionDeniedError(msg);
  if (err == ENOSPC || err == EFBIG || err == EDQUOT) return absl::ResourceExhaustedError(msg);
  if (err == EEXIST || err == ELOOP) return absl::FailedPreconditionError(msg);
  return absl::InternalError(msg);
}

bool IsSymlink(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

}  // namespace

absl::StatusOr<std::unique_ptr<AtomicFileSink>> AtomicFileSink::Create(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("trace output path is empty");
  if (IsSymlink(path)) {
    return absl::FailedPreconditionError(
        absl::StrCat("refusing to write trace '", path, "': the path is a symbolic link"));
  }
  const std::string base = absl::StrCat(path, ".tmp.", static_cast<long>(::getpid()));
  // Another writer of this process may hold the plain name (two sessions writing one path);
  // a numbered suffix keeps them apart instead of clobbering each other.
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::string temp = attempt == 0 ? base : absl::StrCat(base, ".", attempt);
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
    if (fd >= 0) {
      return std::unique_ptr<AtomicFileSink>(new AtomicFileSink(path, std::move(temp), fd));
    }
    const int err = errno;
    if (err == EINTR) {
      --attempt;
      continue;
    }
    if (err != EEXIST) {
      return ErrnoStatus(err, absl::StrCat("cannot create trace file '", temp,
                                           "' for '", path, "': ", strerror(err)));
    }
  }
  return absl::FailedPreconditionError(
      absl::StrCat("cannot create a temp file for trace '", path, "': ", base, " and 15 "
                   "numbered variants already exist"));
}

AtomicFileSink::AtomicFileSink(std::string path, std::string temp_path, int fd)
    : path_(std::move(path)), temp_path_(std::move(temp_path)), fd_(fd) {}

AtomicFileSink::~AtomicFileSink() {
  if (!finished_) Abort();
}

void AtomicFileSink::Abort() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!finished_ && !temp_path_.empty()) {
    ::unlink(temp_path_.c_str());
    temp_path_.clear();
  }
}

absl::Status AtomicFileSink::Fail(const char* what, int err) {
  status_ = ErrnoStatus(err, absl::StrCat(what, " trace file '", path_, "' (temp '", temp_path_,
                                          "'): ", strerror(err)));
  Abort();
  return status_;
}

absl::Status AtomicFileSink::Write(const void* data, size_t size) {
  if (!status_.ok()) return status_;
  if (finished_ || fd_ < 0) {
    status_ = absl::FailedPreconditionError(
        absl::StrCat("write to trace file '", path_, "' after Finish or Abort"));
    return status_;
  }
  if (size == 0) return absl::OkStatus();
  const int err = internal::WriteFully(fd_, data, size);
  if (err != 0) return Fail("cannot write", err);
  bytes_written_ += size;
  return absl::OkStatus();
}

absl::Status AtomicFileSink::Finish() {
  if (!status_.ok()) return status_;
  if (finished_ || fd_ < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("trace file '", path_, "' already finished or aborted"));
  }
  // fsync before rename: after a crash the final name holds either the old file or the whole
  // new one, never a truncated one.
  while (::fsync(fd_) != 0) {
    if (errno == EINTR) continue;
    // EINVAL/EROFS: the target (e.g. a pipe or special fs) cannot sync; not a data error.
    if (errno == EINVAL || errno == EROFS) break;
    return Fail("cannot fsync", errno);
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0 && errno != EINTR) return Fail("cannot close", errno);
  if (IsSymlink(path_)) {
    status_ = absl::FailedPreconditionError(
        absl::StrCat("refusing to replace trace '", path_, "': the path is a symbolic link"));
    Abort();
    return status_;
  }
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) return Fail("cannot rename", errno);
  finished_ = true;
  return absl::OkStatus();
}

}  // namespace kairos
