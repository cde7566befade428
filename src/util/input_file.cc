// File: input_file.cc
// Layer: kairos_util. See input_file.h.
#include "util/input_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace kairos {

const char* FileTypeName(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISREG(mode)) return "a regular file";
  return "not a regular file";
}

absl::StatusOr<int> OpenInputFile(const std::string& path, struct stat* st_out) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    const int err = errno;
    const std::string msg = absl::StrCat(path, ": ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(msg) : absl::PermissionDeniedError(msg);
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return absl::PermissionDeniedError(absl::StrCat(path, ": fstat: ", std::strerror(err)));
  }
  if (st_out != nullptr) *st_out = st;
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": is ", FileTypeName(st.st_mode), ", not a regular file; refusing to read it"));
  }
  // A regular file never blocks, but clear O_NONBLOCK anyway so the descriptor is an
  // ordinary one (a file on some FUSE/network file systems may report EAGAIN with it).
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    const int err = errno;
    ::close(fd);
    return absl::PermissionDeniedError(absl::StrCat(path, ": fcntl: ", std::strerror(err)));
  }
  return fd;
}

}  // namespace kairos
