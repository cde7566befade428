// File: abuse_paths_test.cc
// Layer: test (abuse, ctest label "abuse"). Path attacks on daemon-requested traces: escapes
// the path rule refuses up front, and symlinks planted between the check and the write, which
// the confined file sink must refuse. Nothing may ever appear outside the allowed directory.
// Threading: single-threaded.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "abuse/abuse_util.h"
#include "config/output_path.h"
#include "output/file_sink.h"
#include "output/writer.h"
#include "model/trace_data.h"

namespace kairos {
namespace {

using testing::ScratchDir;

PathContext Context() {
  PathContext c;
  c.pid = 77;
  c.unix_time_s = 1763772000;
  c.host = "h";
  return c;
}

bool Empty(const std::string& dir) {
  return std::system(("test -z \"$(ls -A '" + dir + "')\"").c_str()) == 0;
}

TEST_CASE("request paths that escape the allowed directory are replaced by the default",
          "[abuse]") {
  ScratchDir root;
  const std::string allowed = root.File("allowed") + "/";
  REQUIRE(mkdir(allowed.c_str(), 0700) == 0);
  REQUIRE(mkdir(root.File("outside").c_str(), 0700) == 0);
  REQUIRE(symlink(root.File("outside").c_str(), (allowed + "link").c_str()) == 0);
  const std::string fallback = allowed + "libkineto_activities_77.json";
  struct Case {
    std::string requested;
    std::string reason;
  } cases[] = {
      {allowed + "../outside/t.json", "contains \"..\""},
      {root.File("outside/t.json"), "is outside the allowed directory " + allowed},
      {"relative.json", "is not an absolute path"},
      {allowed + "link/t.json", "has a parent directory that resolves to " +
                                    root.File("outside") + ", outside the allowed directory " +
                                    root.File("allowed")},
  };
  for (const Case& c : cases) {
    INFO(c.requested);
    const OnDemandPath p = ResolveOnDemandPath(c.requested, allowed, Context());
    CHECK(p.replaced);
    CHECK(p.path == fallback);
    CHECK(p.message.find(c.reason) != std::string::npos);
  }
}

TEST_CASE("a symlink planted after the path check cannot redirect a daemon trace", "[abuse]") {
  ScratchDir root;
  const std::string allowed = root.File("allowed") + "/";
  const std::string outside = root.File("outside");
  REQUIRE(mkdir(allowed.c_str(), 0700) == 0);
  REQUIRE(mkdir(outside.c_str(), 0700) == 0);
  REQUIRE(mkdir((allowed + "sub").c_str(), 0700) == 0);
  // 1. The path is checked while sub/ is a real directory: accepted.
  const OnDemandPath p = ResolveOnDemandPath(allowed + "sub/t.json", allowed, Context());
  REQUIRE_FALSE(p.replaced);
  REQUIRE(p.path == allowed + "sub/t_77.json");
  // 2. The attacker swaps sub/ for a symlink to a directory outside.
  REQUIRE(rmdir((allowed + "sub").c_str()) == 0);
  REQUIRE(symlink(outside.c_str(), (allowed + "sub").c_str()) == 0);
  // 3. The write is confined: refused, nothing written anywhere.
  TraceData data;
  OutputOptions request;
  request.path = p.path;
  request.format = TraceFormat::kJson;
  request.confine_dir = allowed;
  const absl::Status st = WriteTraceFile(data, request);
  CHECK(st.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(st.message() == "refusing to write '" + p.path +
                            "': directory component 'sub' is a symbolic link or not a "
                            "directory (never followed in a confined path)");
  CHECK(Empty(outside));

  // A symlink planted at the final name itself (pointing at a file outside) is refused too,
  // and the file it points at is untouched.
  const std::string victim = outside + "/victim";
  { std::ofstream(victim) << "precious"; }
  REQUIRE(symlink(victim.c_str(), (allowed + "t.json").c_str()) == 0);
  request.path = allowed + "t.json";
  const absl::Status st2 = WriteTraceFile(data, request);
  CHECK(st2.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(st2.message() == "refusing to write trace '" + allowed + "t.json': the path is a "
                         "symbolic link");
  std::ifstream in(victim);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(content == "precious");

  // The old fixed temp name ("<path>.tmp.<pid>") planted as a symlink is simply not used.
  const std::string planted = allowed + "u.json.tmp." + std::to_string(getpid());
  REQUIRE(symlink(victim.c_str(), planted.c_str()) == 0);
  request.path = allowed + "u.json";
  REQUIRE(WriteTraceFile(data, request).ok());
  struct stat st_u;
  REQUIRE(lstat((allowed + "u.json").c_str(), &st_u) == 0);
  CHECK(S_ISREG(st_u.st_mode));
  std::ifstream in2(victim);
  std::string content2((std::istreambuf_iterator<char>(in2)), std::istreambuf_iterator<char>());
  CHECK(content2 == "precious");
  // And a daemon trace never replaces an existing file, even a regular one.
  const absl::Status again = WriteTraceFile(data, request);
  CHECK(again.message() == "refusing to write trace '" + allowed +
                               "u.json': it already exists (a confined output never replaces "
                               "a file)");
}

TEST_CASE("a trace path naming a FIFO or /dev/null is refused, not replaced", "[abuse]") {
  ScratchDir root;
  const std::string fifo = root.File("trace.json");
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  TraceData data;
  OutputOptions request;
  request.format = TraceFormat::kJson;
  for (const std::string& path : {fifo, std::string("/dev/null")}) {
    INFO(path);
    request.path = path;
    const absl::Status st = WriteTraceFile(data, request);
    CHECK(st.message() == "refusing to write trace '" + path +
                              "': it exists and is not a regular file (a FIFO, device, socket "
                              "or directory is never replaced)");
  }
  struct stat s;
  REQUIRE(lstat(fifo.c_str(), &s) == 0);
  CHECK(S_ISFIFO(s.st_mode));
  REQUIRE(stat("/dev/null", &s) == 0);
  CHECK(S_ISCHR(s.st_mode));
  // A NUL inside the path (as \u0000 from a request) never reaches a system call.
  request.path = root.File("a") + std::string("\0.json", 6);
  CHECK(WriteTraceFile(data, request).message() ==
        "refusing to write a file: the path contains the control character \\x00 (NUL and "
        "control characters are never accepted in a file name)");
}

}  // namespace
}  // namespace kairos
