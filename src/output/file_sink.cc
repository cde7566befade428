// File: file_sink.cc
// Layer: kairos_output. The hardened atomic file sink; see file_sink.h for the rules.
// Threading: one thread at a time.
#include "output/file_sink.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "util/log.h"

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

std::string PathCharacterProblem(const std::string& path) {
  if (path.empty()) return "the path is empty";
  for (char ch : path) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      return absl::StrCat("the path contains the control character \\x",
                          absl::Hex(c, absl::kZeroPad2), " (NUL and control characters are "
                          "never accepted in a file name)");
    }
  }
  return "";
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

// 64 unpredictable bits for the temp name. getrandom never blocks with GRND_NONBLOCK; if the
// pool is not ready (early boot) a mix of clock, pid, the calling thread's stack address
// (ASLR-placed, distinct per thread) and the caller's attempt number still gives names no one
// can plant in advance by guessing the pid alone, and two threads of one process, or two
// attempts, do not draw the same name in one clock tick (O_EXCL catches any that still do).
uint64_t RandomBits(uint64_t attempt) {
  uint64_t r = 0;
  if (::getrandom(&r, sizeof(r), GRND_NONBLOCK) == static_cast<ssize_t>(sizeof(r))) return r;
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t z = static_cast<uint64_t>(ts.tv_nsec) ^ (static_cast<uint64_t>(ts.tv_sec) << 32) ^
               (static_cast<uint64_t>(::getpid()) << 16) ^
               (static_cast<uint64_t>(reinterpret_cast<uintptr_t>(&r)) * 0x9e3779b97f4a7c15ULL) ^
               (attempt << 56);
  z += 0x9e3779b97f4a7c15ULL;  // splitmix64 finaliser
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// "" if nothing is at `name`, or a regular file is there (and `no_replace` is false);
// otherwise why the target must not be replaced.
std::string TargetProblem(int dir_fd, const std::string& name, bool no_replace) {
  struct stat st;
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return "";
  if (S_ISLNK(st.st_mode)) return "the path is a symbolic link";
  if (!S_ISREG(st.st_mode)) {
    return "it exists and is not a regular file (a FIFO, device, socket or directory is never "
           "replaced)";
  }
  if (no_replace) return "it already exists (a confined output never replaces a file)";
  return "";
}

// Opens the directory `path` will be created in, as an O_PATH fd, and sets `*name` to the
// final component. Confined: the path must lie under `confine` and every component below it
// is opened O_NOFOLLOW relative to its parent.
absl::StatusOr<int> OpenParent(const std::string& path, const std::string& confine,
                               std::string* name) {
  constexpr int kDirFlags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  if (confine.empty()) {
    const size_t slash = path.rfind('/');
    const std::string dir =
        slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
    *name = slash == std::string::npos ? path : path.substr(slash + 1);
    if (name->empty() || *name == "." || *name == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot write '", path, "': the path names a directory, not a file"));
    }
    const int fd = ::open(dir.c_str(), kDirFlags);
    if (fd < 0) {
      const int err = errno;
      return ErrnoStatus(err, absl::StrCat("cannot create trace file '", path,
                                           "': directory '", dir, "': ", strerror(err)));
    }
    return fd;
  }
  std::string root = confine;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  const std::string prefix = root == "/" ? root : root + "/";
  if (path.compare(0, prefix.size(), prefix) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("refusing to write '", path,
                                                   "': outside the allowed directory ", prefix));
  }
  std::vector<std::string> parts;
  size_t start = prefix.size();
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    parts.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    if (p == "." || p == ".." || (p.empty() && i + 1 == parts.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "refusing to write '", path, "': a confined path may not contain \".\", \"..\" or "
          "name a directory"));
    }
  }
  int fd = ::open(root.c_str(), kDirFlags);
  if (fd < 0) {
    const int err = errno;
    return ErrnoStatus(err, absl::StrCat("cannot create trace file '", path,
                                         "': allowed directory '", root, "': ", strerror(err)));
  }
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (parts[i].empty()) continue;  // "a//b"
    const int next = ::openat(fd, parts[i].c_str(), kDirFlags | O_NOFOLLOW);
    const int err = errno;
    ::close(fd);
    if (next < 0) {
      if (err == ELOOP || err == ENOTDIR) {
        return absl::FailedPreconditionError(absl::StrCat(
            "refusing to write '", path, "': directory component '", parts[i],
            "' is a symbolic link or not a directory (never followed in a confined path)"));
      }
      return ErrnoStatus(err, absl::StrCat("cannot create trace file '", path,
                                           "': directory component '", parts[i],
                                           "': ", strerror(err)));
    }
    fd = next;
  }
  *name = parts.back();
  return fd;
}

// rename without replacing an existing entry. RENAME_NOREPLACE is atomic; on a file system
// that lacks it, link(2) gives the same guarantee (it fails with EEXIST) at the cost of a
// second call.
int RenameNoReplace(int dir_fd, const std::string& from, const std::string& to) {
  if (::renameat2(dir_fd, from.c_str(), dir_fd, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return errno;
  if (::linkat(dir_fd, from.c_str(), dir_fd, to.c_str(), 0) != 0) return errno;
  ::unlinkat(dir_fd, from.c_str(), 0);
  return 0;
}

// Temp files `<name>.tmp.<pid>.<16 hex>` that earlier writers of the same name left when they
// died mid-write (SIGKILL, an OOM kill, a crash): removed when their pid no longer exists,
// they are regular files of this user, and untouched for kStaleTempSec. A live writer, also
// one on another host sharing the directory (its pid means nothing here), keeps writing,
// so its file stays newer than that. Bounded: at most kMaxStaleScan entries are looked at.
constexpr time_t kStaleTempSec = 600;
constexpr int kMaxStaleScan = 100000;

bool IsStaleTempName(const char* entry, const std::string& name, pid_t* pid) {
  const std::string prefix = name + ".tmp.";
  if (std::strncmp(entry, prefix.c_str(), prefix.size()) != 0) return false;
  const char* p = entry + prefix.size();
  long long value = 0;
  int digits = 0;
  for (; *p >= '0' && *p <= '9' && digits < 10; ++p, ++digits) value = value * 10 + (*p - '0');
  if (digits == 0 || *p != '.') return false;
  ++p;
  int hex = 0;
  for (; std::isxdigit(static_cast<unsigned char>(*p)); ++p) ++hex;
  if (hex != 16 || *p != '\0' || value <= 0) return false;
  *pid = static_cast<pid_t>(value);
  return true;
}

void RemoveStaleTemps(int dir_fd, const std::string& name) {
  const int fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    return;
  }
  const time_t now = ::time(nullptr);
  int scanned = 0;
  while (const dirent* e = ::readdir(d)) {
    if (++scanned > kMaxStaleScan) break;
    pid_t pid = 0;
    if (!IsStaleTempName(e->d_name, name, &pid) || pid == ::getpid()) continue;
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to ask)
    struct stat st {};
    if (::fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
        st.st_uid != ::geteuid() || now - st.st_mtime < kStaleTempSec) {
      continue;
    }
    if (::unlinkat(fd, e->d_name, 0) == 0)
      KAIROS_LOG_VERBOSE("removed '%s', left by a writer (pid %d) that died", e->d_name,
                         static_cast<int>(pid));
  }
  ::closedir(d);
}

}  // namespace

absl::StatusOr<std::unique_ptr<AtomicFileSink>> AtomicFileSink::Create(const std::string& path) {
  return Create(path, FileSinkOptions{});
}

absl::StatusOr<std::unique_ptr<AtomicFileSink>> AtomicFileSink::Create(
    const std::string& path, const FileSinkOptions& options) {
  if (path.empty()) return absl::InvalidArgumentError(absl::StrCat(options.what, " output path is empty"));
  if (std::string problem = internal::PathCharacterProblem(path); !problem.empty()) {
    // The path itself may hold the control bytes: it is not echoed.
    return absl::InvalidArgumentError(absl::StrCat("refusing to write a file: ", problem));
  }
  std::string name;
  absl::StatusOr<int> dir = OpenParent(path, options.confine_dir, &name);
  if (!dir.ok()) return dir.status();
  const int dir_fd = *dir;
  const bool no_replace = !options.confine_dir.empty();
  if (std::string problem = TargetProblem(dir_fd, name, no_replace); !problem.empty()) {
    ::close(dir_fd);
    return absl::FailedPreconditionError(
        absl::StrCat("refusing to write ", options.what, " '", path, "': ", problem));
  }
  RemoveStaleTemps(dir_fd, name);
  const std::string dir_part = path.substr(0, path.size() - name.size());
  for (int attempt = 0; attempt < 16; ++attempt) {
    char suffix[48];
    snprintf(suffix, sizeof(suffix), ".tmp.%ld.%016llx", static_cast<long>(::getpid()),
             static_cast<unsigned long long>(RandomBits(static_cast<uint64_t>(attempt))));
    std::string temp_name = name + suffix;
    const int fd = ::openat(dir_fd, temp_name.c_str(),
                            O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, options.mode);
    if (fd >= 0) {
      std::string temp_path = dir_part + temp_name;
      return std::unique_ptr<AtomicFileSink>(new AtomicFileSink(
          path, std::move(temp_path), dir_fd, name, std::move(temp_name), fd, no_replace, options.what));
    }
    const int err = errno;
    if (err == EINTR || err == EEXIST) continue;  // EEXIST: a name collision or a plant
    ::close(dir_fd);
    return ErrnoStatus(err, absl::StrCat("cannot create ", options.what, " file '", path, ".tmp.", ::getpid(),
                                         ".*' for '", path, "': ", strerror(err)));
  }
  ::close(dir_fd);
  return absl::FailedPreconditionError(absl::StrCat(
      "cannot create a temp file for ", options.what, " '", path, "': 16 random names were all taken"));
}

AtomicFileSink::AtomicFileSink(std::string path, std::string temp_path, int dir_fd,
                               std::string name, std::string temp_name, int fd, bool no_replace,
                               const char* what)
    : path_(std::move(path)),
      temp_path_(std::move(temp_path)),
      dir_fd_(dir_fd),
      name_(std::move(name)),
      temp_name_(std::move(temp_name)),
      fd_(fd),
      no_replace_(no_replace),
      what_(what) {}

AtomicFileSink::~AtomicFileSink() {
  if (!finished_) Abort();
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

void AtomicFileSink::Abort() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!finished_ && !temp_name_.empty()) {
    ::unlinkat(dir_fd_, temp_name_.c_str(), 0);
    temp_name_.clear();
    temp_path_.clear();
  }
}

absl::Status AtomicFileSink::Fail(const char* what, int err) {
  status_ = ErrnoStatus(err, absl::StrCat(what, " ", what_, " file '", path_, "' (temp '", temp_path_,
                                          "'): ", strerror(err)));
  Abort();
  return status_;
}

absl::Status AtomicFileSink::Write(const void* data, size_t size) {
  if (!status_.ok()) return status_;
  if (finished_ || fd_ < 0) {
    status_ = absl::FailedPreconditionError(
        absl::StrCat("write to ", what_, " file '", path_, "' after Finish or Abort"));
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
        absl::StrCat(what_, " file '", path_, "' already finished or aborted"));
  }
  // fsync before rename: after a crash the final name holds either the old file or the whole
  // new one, never a truncated one.
  while (::fsync(fd_) != 0) {
    if (errno == EINTR) continue;
    // EINVAL/EROFS: the file system cannot sync; not a data error.
    if (errno == EINVAL || errno == EROFS) break;
    return Fail("cannot fsync", errno);
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0 && errno != EINTR) return Fail("cannot close", errno);
  // Checked again: something may have appeared at the final name while we wrote.
  if (std::string problem = TargetProblem(dir_fd_, name_, no_replace_); !problem.empty()) {
    status_ = absl::FailedPreconditionError(
        absl::StrCat("refusing to replace ", what_, " '", path_, "': ", problem));
    Abort();
    return status_;
  }
  const int err = no_replace_ ? RenameNoReplace(dir_fd_, temp_name_, name_)
                              : (::renameat(dir_fd_, temp_name_.c_str(), dir_fd_, name_.c_str()) == 0
                                     ? 0
                                     : errno);
  if (err != 0) return Fail("cannot rename", err);
  finished_ = true;
  return absl::OkStatus();
}

}  // namespace kairos
