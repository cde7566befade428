// File: file_sink_test.cc
// Layer: tests (output). AtomicFileSink: atomic replace, no partial or temp files on any
// error (EFBIG via RLIMIT_FSIZE, ENOSPC via /dev/full), clear errors naming the path.
// Threading: single-threaded; RLIMIT_FSIZE is changed and restored within one test.
#include "output/file_sink.h"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <string>

#include "json_test_util.h"

namespace kairos {
namespace {

using testing::TempDir;

TEST_CASE("AtomicFileSink writes a temp file and renames it on Finish") {
  TempDir dir;
  const std::string path = dir.File("trace.json");
  auto sink = AtomicFileSink::Create(path);
  REQUIRE(sink.ok());
  const std::string temp = (*sink)->temp_path();
  // "<path>.tmp.<pid>.<16 random hex digits>": nobody can plant a file at it in advance.
  const std::string prefix = path + ".tmp." + std::to_string(getpid()) + ".";
  REQUIRE(temp.size() == prefix.size() + 16);
  CHECK(temp.compare(0, prefix.size(), prefix) == 0);
  CHECK(temp.find_first_not_of("0123456789abcdef", prefix.size()) == std::string::npos);
  REQUIRE((*sink)->Write("hello ", 6).ok());
  REQUIRE((*sink)->Write("world", 5).ok());
  CHECK(dir.List() == std::vector<std::string>{temp.substr(dir.path().size() + 1)});
  struct stat st;
  REQUIRE(stat(temp.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0640);
  REQUIRE((*sink)->Finish().ok());
  CHECK(dir.List() == std::vector<std::string>{"trace.json"});
  CHECK(testing::ReadFile(path) == "hello world");
  CHECK((*sink)->bytes_written() == 11);
  // A second Finish or Write is an error, not a crash.
  CHECK((*sink)->Finish().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_FALSE((*sink)->Write("x", 1).ok());
}

TEST_CASE("Temp files of writers that died mid-write are removed by the next writer") {
  // A SIGKILL during a write leaves "<name>.tmp.<pid>.<hex>" behind; it was never cleaned up.
  TempDir dir;
  const std::string path = dir.File("trace.json");
  const pid_t dead = fork();
  REQUIRE(dead >= 0);
  if (dead == 0) _exit(0);
  REQUIRE(waitpid(dead, nullptr, 0) == dead);  // its pid now names no process
  const std::string hex = ".0123456789abcdef";
  auto plant = [&](const std::string& name, time_t age) {
    std::ofstream(dir.File(name)) << "partial";
    const timespec times[2] = {{time(nullptr) - age, 0}, {time(nullptr) - age, 0}};
    REQUIRE(utimensat(AT_FDCWD, dir.File(name).c_str(), times, 0) == 0);
  };
  const std::string stale = "trace.json.tmp." + std::to_string(dead) + hex;
  const std::string recent = "trace.json.tmp." + std::to_string(dead) + ".fedcba9876543210";
  const std::string alive = "trace.json.tmp." + std::to_string(getppid()) + hex;
  const std::string other = "other.json.tmp." + std::to_string(dead) + hex;
  const std::string odd = "trace.json.tmp." + std::to_string(dead) + ".xyz";
  plant(stale, 3600);
  plant(recent, 10);    // may still be written, on another host sharing the directory
  plant(alive, 3600);   // a live process's
  plant(other, 3600);   // another name's: not this writer's to judge
  plant(odd, 3600);     // not a name kairos makes
  auto sink = AtomicFileSink::Create(path);
  REQUIRE(sink.ok());
  REQUIRE((*sink)->Finish().ok());
  std::vector<std::string> want{"other.json.tmp." + std::to_string(dead) + hex, "trace.json",
                                alive, recent, odd};
  std::sort(want.begin(), want.end());
  std::vector<std::string> got = dir.List();
  std::sort(got.begin(), got.end());
  CHECK(got == want);
}

TEST_CASE("AtomicFileSink replaces an existing file and never leaves a partial one") {
  TempDir dir;
  const std::string path = dir.File("t.json");
  {
    auto first = AtomicFileSink::Create(path);
    REQUIRE(first.ok());
    REQUIRE((*first)->Write("old", 3).ok());
    REQUIRE((*first)->Finish().ok());
  }
  {
    auto second = AtomicFileSink::Create(path);
    REQUIRE(second.ok());
    REQUIRE((*second)->Write("new-but-abandoned", 17).ok());
    // Destroyed without Finish: the old file stays, the temp goes.
  }
  CHECK(dir.List() == std::vector<std::string>{"t.json"});
  CHECK(testing::ReadFile(path) == "old");
  auto third = AtomicFileSink::Create(path);
  REQUIRE(third.ok());
  REQUIRE((*third)->Write("newer", 5).ok());
  REQUIRE((*third)->Finish().ok());
  CHECK(testing::ReadFile(path) == "newer");
}

TEST_CASE("Two sinks for one path in one process get distinct temp files") {
  TempDir dir;
  const std::string path = dir.File("x.json");
  auto a = AtomicFileSink::Create(path);
  auto b = AtomicFileSink::Create(path);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK((*b)->temp_path() != (*a)->temp_path());
  REQUIRE((*a)->Write("a", 1).ok());
  REQUIRE((*b)->Write("b", 1).ok());
  REQUIRE((*a)->Finish().ok());
  REQUIRE((*b)->Finish().ok());
  CHECK(testing::ReadFile(path) == "b");
  CHECK(dir.List() == std::vector<std::string>{"x.json"});
}

TEST_CASE("Missing directory: clear error naming the path") {
  TempDir dir;
  const std::string path = dir.File("no/such/dir/t.json");
  auto sink = AtomicFileSink::Create(path);
  REQUIRE_FALSE(sink.ok());
  CHECK(sink.status().code() == absl::StatusCode::kNotFound);
  const std::string msg(sink.status().message());
  CHECK(msg.find(path) != std::string::npos);
  CHECK(msg.find("No such file or directory") != std::string::npos);
  CHECK(dir.List().empty());
}

TEST_CASE("Unwritable directory: clear error naming the path") {
  // Root ignores directory permissions, so use a file system nobody may create files in.
  TempDir dir;
  std::string path;
  if (geteuid() == 0) {
    path = "/proc/kairos_output_test.json";
  } else {
    REQUIRE(chmod(dir.path().c_str(), 0500) == 0);
    path = dir.File("t.json");
  }
  auto sink = AtomicFileSink::Create(path);
  chmod(dir.path().c_str(), 0700);
  REQUIRE_FALSE(sink.ok());
  const std::string msg(sink.status().message());
  INFO(msg);
  CHECK(msg.find("cannot create trace file '" + path + ".tmp.") == 0);
  CHECK(msg.find("for '" + path + "'") != std::string::npos);
  CHECK(dir.List().empty());
}

TEST_CASE("A symlink at the final path is refused, at Create and at Finish") {
  TempDir dir;
  const std::string target = dir.File("target");
  const std::string link = dir.File("link.json");
  REQUIRE(symlink(target.c_str(), link.c_str()) == 0);
  auto sink = AtomicFileSink::Create(link);
  REQUIRE_FALSE(sink.ok());
  CHECK(sink.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(sink.status().message()).find(link) != std::string::npos);

  const std::string later = dir.File("later.json");
  auto s2 = AtomicFileSink::Create(later);
  REQUIRE(s2.ok());
  REQUIRE((*s2)->Write("data", 4).ok());
  REQUIRE(symlink(target.c_str(), later.c_str()) == 0);  // appears while we write
  const absl::Status st = (*s2)->Finish();
  CHECK(st.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(dir.List() == std::vector<std::string>{"later.json", "link.json"});
  CHECK(access(target.c_str(), F_OK) != 0);  // nothing written through the link
}

TEST_CASE("A FIFO, a directory or a symlink to /dev/null at the target is never replaced") {
  TempDir dir;
  const std::string fifo = dir.File("fifo.json");
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  auto at_fifo = AtomicFileSink::Create(fifo);
  REQUIRE_FALSE(at_fifo.ok());
  CHECK(at_fifo.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(at_fifo.status().message() ==
        "refusing to write trace '" + fifo +
            "': it exists and is not a regular file (a FIFO, device, socket or directory is "
            "never replaced)");
  const std::string null_link = dir.File("null.json");
  REQUIRE(symlink("/dev/null", null_link.c_str()) == 0);
  auto at_link = AtomicFileSink::Create(null_link);
  REQUIRE_FALSE(at_link.ok());
  CHECK(at_link.status().message() ==
        "refusing to write trace '" + null_link + "': the path is a symbolic link");
  const std::string sub = dir.File("sub.json");
  REQUIRE(mkdir(sub.c_str(), 0700) == 0);
  CHECK(AtomicFileSink::Create(sub).status().code() == absl::StatusCode::kFailedPrecondition);
  // /dev/null itself (a character device): refused before anything is created in /dev.
  auto dev_null = AtomicFileSink::Create("/dev/null");
  REQUIRE_FALSE(dev_null.ok());
  CHECK(dev_null.status().message() ==
        "refusing to write trace '/dev/null': it exists and is not a regular file (a FIFO, "
        "device, socket or directory is never replaced)");
  struct stat st;
  REQUIRE(stat("/dev/null", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));

  // A FIFO that appears at the final name while the trace is written is not replaced either.
  const std::string late = dir.File("late.json");
  auto sink = AtomicFileSink::Create(late);
  REQUIRE(sink.ok());
  REQUIRE((*sink)->Write("x", 1).ok());
  REQUIRE(mkfifo(late.c_str(), 0600) == 0);
  CHECK((*sink)->Finish().code() == absl::StatusCode::kFailedPrecondition);
  REQUIRE(lstat(late.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  CHECK(dir.List() ==
        std::vector<std::string>{"fifo.json", "late.json", "null.json", "sub.json"});
}

TEST_CASE("Paths with NUL or control characters are rejected with a clear error") {
  TempDir dir;
  const std::string with_nul = dir.File("a") + std::string("\0b.json", 7);
  auto nul = AtomicFileSink::Create(with_nul);
  REQUIRE_FALSE(nul.ok());
  CHECK(nul.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(nul.status().message() ==
        "refusing to write a file: the path contains the control character \\x00 (NUL and "
        "control characters are never accepted in a file name)");
  CHECK(AtomicFileSink::Create(dir.File("a\nb.json")).status().message() ==
        "refusing to write a file: the path contains the control character \\x0a (NUL and "
        "control characters are never accepted in a file name)");
  CHECK(dir.List().empty());
}

TEST_CASE("Confined sink: planted symlinks cannot redirect the write outside the directory") {
  TempDir allowed;
  TempDir outside;
  FileSinkOptions confined;
  confined.confine_dir = allowed.path() + "/";
  // A symlinked directory component inside the allowed directory, pointing outside.
  const std::string escape = allowed.File("escape");
  REQUIRE(symlink(outside.path().c_str(), escape.c_str()) == 0);
  auto via_link = AtomicFileSink::Create(escape + "/t.json", confined);
  REQUIRE_FALSE(via_link.ok());
  CHECK(via_link.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(via_link.status().message() ==
        "refusing to write '" + escape +
            "/t.json': directory component 'escape' is a symbolic link or not a directory "
            "(never followed in a confined path)");
  // The same path without confinement follows the link (a trusted config may use one).
  {
    auto trusted = AtomicFileSink::Create(escape + "/t.json");
    REQUIRE(trusted.ok());
    (*trusted)->Abort();
  }
  // Outside, "..", and an existing file (never replaced when confined).
  CHECK(AtomicFileSink::Create(outside.File("t.json"), confined).status().message() ==
        "refusing to write '" + outside.File("t.json") + "': outside the allowed directory " +
            allowed.path() + "/");
  CHECK(AtomicFileSink::Create(allowed.File("../x.json"), confined).status().code() ==
        absl::StatusCode::kInvalidArgument);
  const std::string existing = allowed.File("existing.json");
  {
    auto first = AtomicFileSink::Create(existing, confined);
    REQUIRE(first.ok());
    REQUIRE((*first)->Write("one", 3).ok());
    REQUIRE((*first)->Finish().ok());
  }
  CHECK(AtomicFileSink::Create(existing, confined).status().message() ==
        "refusing to write trace '" + existing +
            "': it already exists (a confined output never replaces a file)");
  // A real subdirectory is fine; a regular file appearing at the name while writing is not
  // replaced (the rename refuses to overwrite).
  REQUIRE(mkdir(allowed.File("sub").c_str(), 0700) == 0);
  const std::string inner = allowed.File("sub/t.json");
  auto sink = AtomicFileSink::Create(inner, confined);
  REQUIRE(sink.ok());
  REQUIRE((*sink)->Write("data", 4).ok());
  { std::ofstream(inner) << "planted"; }
  CHECK((*sink)->Finish().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(testing::ReadFile(inner) == "planted");
  CHECK(outside.List().empty());
}

TEST_CASE("File too large (EFBIG via RLIMIT_FSIZE): no temp, no final file, error names path") {
  TempDir dir;
  const std::string path = dir.File("big.json");
  struct rlimit old_limit;
  REQUIRE(getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  struct sigaction ignore {}, old_action {};
  ignore.sa_handler = SIG_IGN;
  REQUIRE(sigaction(SIGXFSZ, &ignore, &old_action) == 0);
  auto sink = AtomicFileSink::Create(path);
  REQUIRE(sink.ok());
  struct rlimit small = old_limit;
  small.rlim_cur = 4096;
  REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
  const std::string chunk(3000, 'x');
  const absl::Status first = (*sink)->Write(chunk.data(), chunk.size());
  const absl::Status second = (*sink)->Write(chunk.data(), chunk.size());  // crosses 4096
  const absl::Status third = (*sink)->Write(chunk.data(), chunk.size());
  setrlimit(RLIMIT_FSIZE, &old_limit);
  sigaction(SIGXFSZ, &old_action, nullptr);
  CHECK(first.ok());
  CHECK(second.code() == absl::StatusCode::kResourceExhausted);
  const std::string msg(second.message());
  CHECK(msg.find(path) != std::string::npos);
  CHECK(msg.find("File too large") != std::string::npos);
  CHECK(third == second);  // sticky
  CHECK((*sink)->Finish() == second);
  CHECK(dir.List().empty());
}

TEST_CASE("WriteFully reports ENOSPC from a full device") {
  const int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  const char buf[100] = {};
  CHECK(internal::WriteFully(fd, buf, sizeof(buf)) == ENOSPC);
  close(fd);
  const int ok_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  CHECK(internal::WriteFully(ok_fd, buf, sizeof(buf)) == 0);
  close(ok_fd);
}

}  // namespace
}  // namespace kairos
