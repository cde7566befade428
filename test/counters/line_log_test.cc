// File: line_log_test.cc
// Layer: test/counters. LineLog: a full disk (RLIMIT_FSIZE makes the kernel refuse bytes
// past a size, as a full file system would) never leaves half a line; the lines lost are
// counted; rotation bounds the file; a FIFO at the path is refused without blocking.
// Threading: single-threaded; the size-limit cases run in a forked child (the limit is
// process-wide).
#include "counters/line_log.h"

#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "temp_dir.h"

namespace kairos {
namespace {

using testing::TempDir;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Line(char c, size_t n) { return std::string(n - 1, c) + "\n"; }

TEST_CASE("a write cut short by a full disk is taken back whole, and the loss is counted") {
  const TempDir temp("kairos_line_log_");
  const std::string& dir = temp.path();
  const std::string path = dir + "/t.jsonl";
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // Child: the file may hold 100 bytes; a write past that is short, then EFBIG.
    signal(SIGXFSZ, SIG_IGN);
    rlimit lim{100, 100};
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0) _exit(10);
    LineLog log;
    if (!log.Open(path, 0).ok()) _exit(11);
    if (!log.Append(Line('a', 60), 1)) _exit(12);
    if (log.Append(Line('b', 30) + Line('c', 30), 2)) _exit(13);  // 40 of 60 bytes fit
    if (log.lost_since_last_write() != 2 || log.lost_total() != 2) _exit(14);
    if (log.Append(Line('d', 60), 1)) _exit(15);  // nothing fits
    if (log.lost_since_last_write() != 3) _exit(16);
    if (log.Append(Line('e', 40), 1) != true) _exit(17);  // exactly fits: 100 bytes
    if (log.lost_since_last_write() != 0 || log.lost_total() != 3) _exit(18);
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  // Whole lines only: no half line of 'b' for the next line to be glued onto.
  CHECK(ReadAll(path) == Line('a', 60) + Line('e', 40));
}

TEST_CASE("rotation keeps the file under its bound and the previous one as .1") {
  const TempDir temp("kairos_line_log_");
  const std::string& dir = temp.path();
  const std::string path = dir + "/t.jsonl";
  LineLog log;
  REQUIRE(log.Open(path, 100).ok());
  CHECK(log.Append(Line('a', 60), 1));
  CHECK(log.Append(Line('b', 30), 1));  // 90 bytes: under the bound
  CHECK(log.rotations() == 0);
  CHECK(log.Append(Line('c', 30), 1));  // would be 120: rotate first
  CHECK(log.rotations() == 1);
  CHECK(ReadAll(path + ".1") == Line('a', 60) + Line('b', 30));
  CHECK(ReadAll(path) == Line('c', 30));
  CHECK(log.Append(Line('d', 80), 1));  // 110: rotate again, .1 replaced
  CHECK(log.rotations() == 2);
  CHECK(ReadAll(path + ".1") == Line('c', 30));
  CHECK(ReadAll(path) == Line('d', 80));
  // A batch larger than the bound on its own still goes in whole (after a rotation).
  CHECK(log.Append(Line('e', 300), 1));
  CHECK(ReadAll(path) == Line('e', 300));
}

TEST_CASE("an existing file is appended to; a FIFO at the path is refused without blocking") {
  const TempDir temp("kairos_line_log_");
  const std::string& dir = temp.path();
  {
    std::ofstream(dir + "/old.jsonl") << Line('x', 10);
    LineLog log;
    REQUIRE(log.Open(dir + "/old.jsonl", 0).ok());
    CHECK(log.Append(Line('y', 10), 1));
    CHECK(ReadAll(dir + "/old.jsonl") == Line('x', 10) + Line('y', 10));
  }
  REQUIRE(mkfifo((dir + "/fifo").c_str(), 0600) == 0);
  LineLog log;
  const absl::Status s = log.Open(dir + "/fifo", 0);
  CHECK(s.message() == "'" + dir + "/fifo' is not a regular file");
  CHECK_FALSE(log.is_open());
}

}  // namespace
}  // namespace kairos
