// File: line_log.cc — see line_log.h.
// Layer: kairos_counters. Threading: see line_log.h.
#include "counters/line_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace kairos {
namespace {

int OpenAppend(const std::string& path, uint64_t* size, std::string* error) {
  // Said by type first (a FIFO without a reader fails open with ENXIO, a symlink with
  // ELOOP); the descriptor is checked again below, so a swap in between gains nothing.
  struct stat pre {};
  if (lstat(path.c_str(), &pre) == 0 && !S_ISREG(pre.st_mode)) {
    *error = absl::StrCat("'", path, "' is not a regular file");
    return -1;
  }
  const int fd =
      open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd < 0) {
    *error = absl::StrCat("cannot open '", path, "': ", strerror(errno));
    return -1;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    *error = absl::StrCat("'", path, "' is not a regular file");
    return -1;
  }
  *size = static_cast<uint64_t>(st.st_size);
  return fd;
}

}  // namespace

LineLog::~LineLog() {
  if (fd_ >= 0) close(fd_);
}

absl::Status LineLog::Open(const std::string& path, uint64_t max_bytes) {
  std::string error;
  const int fd = OpenAppend(path, &size_, &error);
  if (fd < 0) return absl::UnavailableError(error);
  if (fd_ >= 0) close(fd_);
  fd_ = fd;
  path_ = path;
  max_bytes_ = max_bytes;
  return absl::OkStatus();
}

bool LineLog::Rotate() {
  // A rename keeps what the file holds for readers that have it open; the new file starts
  // empty. Failure (a read-only directory): keep appending past the bound rather than lose
  // lines, and try again at the next batch.
  const std::string old = path_ + ".1";
  if (rename(path_.c_str(), old.c_str()) != 0) return false;
  std::string error;
  uint64_t size = 0;
  const int fd = OpenAppend(path_, &size, &error);
  if (fd < 0) return false;  // the old descriptor (now PATH.1) stays in use
  close(fd_);
  fd_ = fd;
  size_ = size;
  ++rotations_;
  return true;
}

bool LineLog::Append(std::string_view lines, uint64_t count) {
  if (fd_ < 0 || lines.empty()) return fd_ >= 0;
  if (max_bytes_ > 0 && size_ > 0 && size_ + lines.size() > max_bytes_) Rotate();
  const uint64_t begin = size_;
  size_t done = 0;
  int err = 0;
  while (done < lines.size()) {
    const ssize_t n = write(fd_, lines.data() + done, lines.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      err = n < 0 ? errno : ENOSPC;
      break;
    }
  }
  if (err == 0) {
    size_ = begin + done;
    lost_since_write_ = 0;
    return true;
  }
  // Cut the partial batch back off: the file ends on a whole line again.
  if (done > 0 && ftruncate(fd_, static_cast<off_t>(begin)) != 0) {
    // Cannot cut (should not happen on a regular file): end the half line instead, so only
    // that one line is unreadable, not the next one too.
    (void)!write(fd_, "\n", 1);
    struct stat st {};
    size_ = fstat(fd_, &st) == 0 ? static_cast<uint64_t>(st.st_size) : begin + done;
  } else {
    size_ = begin;
  }
  lost_since_write_ += count;
  lost_total_ += count;
  return false;
}

}  // namespace kairos
