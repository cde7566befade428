// File: output_path_test.cc
// Layer: test for kairos_config. Default path, `_<pid>` rewrite, templating and the on-demand
// path rule against a real temporary directory tree (symlinks, existing files, "..").
// Threading: single-threaded.
#include "config/output_path.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "temp_dir.h"

namespace kairos {
namespace {

PathContext Context() {
  PathContext c;
  c.pid = 4242;
  c.rank = 3;
  c.unix_time_s = 1763772000;  // 2025-11-22T00:40:00Z
  c.host = "node-7.cluster";
  return c;
}

// A scratch tree: <root>/allowed (the allowed dir), <root>/outside, and links between them.
// The whole tree is removed with `temp`.
struct Tree {
  Tree() {
    REQUIRE(mkdir(allowed.c_str(), 0700) == 0);
    REQUIRE(mkdir((root + "/outside").c_str(), 0700) == 0);
    REQUIRE(mkdir((allowed + "sub").c_str(), 0700) == 0);
  }
  const testing::TempDir temp{"kairos_path_test_"};
  const std::string root = temp.path();
  const std::string allowed = root + "/allowed/";
};

TEST_CASE("default path and directory", "[output_path]") {
  CHECK(DefaultTracePath("/tmp", 17) == "/tmp/libkineto_activities_17.json");
  CHECK(DefaultTracePath("/tmp/", 17) == "/tmp/libkineto_activities_17.json");
  EnvSettings env;
  CHECK(DefaultTraceDir(env) == "/tmp");
  env.tmp_dir = "/scratch";
  CHECK(DefaultTraceDir(env) == "/scratch");
  env.trace_dir = "/traces";
  CHECK(DefaultTraceDir(env) == "/traces");
}

TEST_CASE("_<pid> rewrite applies to the file name only", "[output_path]") {
  CHECK(InsertPidSuffix("/t/run.pt.trace.json", 42) == "/t/run_42.pt.trace.json");
  CHECK(InsertPidSuffix("/t/run.json", 42) == "/t/run_42.json");
  CHECK(InsertPidSuffix("/t/a.json.json", 42) == "/t/a_42.json.json");
  CHECK(InsertPidSuffix("/t/x.json.gz", 42) == "/t/x_42.json.gz");
  CHECK(InsertPidSuffix("/t/x.pftrace", 42) == "/t/x.pftrace");
  CHECK(InsertPidSuffix("/t/d.json/trace", 42) == "/t/d.json/trace");
  CHECK(InsertPidSuffix("/t/d.json/x.json", 42) == "/t/d.json/x_42.json");
  CHECK(InsertPidSuffix("/t/run.json", 42, 3) == "/t/run_rank3_42.json");
  CHECK(InsertPidSuffix("/t/run.pt.trace.json", 42, 0) == "/t/run_rank0_42.pt.trace.json");
  CHECK(InsertPidSuffix("/t/x.pftrace", 42, 3) == "/t/x.pftrace");
  CHECK(InsertPidSuffix("rel.json", 42) == "rel_42.json");
}

TEST_CASE("templating", "[output_path]") {
  const PathContext c = Context();
  CHECK(ExpandPathTemplate("/t/{host}/r{rank}_{pid}_{time}.json", c) ==
        "/t/node-7.cluster/r3_4242_20251122T004000Z.json");
  CHECK(ExpandPathTemplate("/t/{unknown}{pid", c) == "/t/{unknown}{pid");
  PathContext odd = c;
  odd.rank = -1;
  odd.host = "a/b c";
  CHECK(ExpandPathTemplate("{rank}-{host}", odd) == "0-a_b_c");
  // {pid} present: no second pid insertion.
  CHECK(ResolveOutputPath("/t/r{rank}.{pid}.json", "/d", c) == "/t/r3.4242.json");
  CHECK(ResolveOutputPath("/t/r{rank}.json", "/d", c) == "/t/r3_4242.json");
  CHECK(ResolveOutputPath("", "/d", c) == "/d/libkineto_activities_4242.json");
  CHECK(ResolveOutputPath("/tmp/memory_snapshot_{pid}.pickle", "/d", c) ==
        "/tmp/memory_snapshot_4242.pickle");
}

TEST_CASE("allowed directory precedence", "[output_path]") {
  EnvSettings env;
  env.tmp_dir = "/tmp";
  CHECK(OnDemandAllowedDir(env) == "/tmp/");
  env.trace_dir = "/traces";
  CHECK(OnDemandAllowedDir(env) == "/traces/");
  env.ondemand_trace_dir = "/od/";
  CHECK(OnDemandAllowedDir(env) == "/od/");
}

TEST_CASE("on-demand: accepted paths", "[output_path]") {
  Tree t;
  const PathContext c = Context();
  OnDemandPath p = ResolveOnDemandPath(t.allowed + "x.json", t.allowed, c);
  CHECK_FALSE(p.replaced);
  CHECK(p.path == t.allowed + "x_rank3_4242.json");
  CHECK(p.message.empty());
  p = ResolveOnDemandPath(t.allowed + "sub/r{rank}.pt.trace.json", t.allowed, c);
  CHECK_FALSE(p.replaced);
  CHECK(p.path == t.allowed + "sub/r3_4242.pt.trace.json");
  // Allowed dir given without its trailing slash.
  p = ResolveOnDemandPath(t.allowed + "y.json", t.root + "/allowed", c);
  CHECK_FALSE(p.replaced);
  p = ResolveOnDemandPath("", t.allowed, c);
  CHECK_FALSE(p.replaced);
  CHECK(p.path == t.allowed + "libkineto_activities_4242.json");
}

TEST_CASE("on-demand: refused paths fall back to the default in the allowed dir", "[output_path]") {
  Tree t;
  const PathContext c = Context();
  const std::string fallback = t.allowed + "libkineto_activities_4242.json";

  OnDemandPath p = ResolveOnDemandPath(t.allowed + "../outside/x.json", t.allowed, c);
  CHECK(p.replaced);
  CHECK(p.path == fallback);
  CHECK(p.message == "on-demand ACTIVITIES_LOG_FILE \"" + t.allowed +
                         "../outside/x.json\" refused: resolved path \"" + t.allowed +
                         "../outside/x_rank3_4242.json\" contains \"..\"; writing to " + fallback +
                         " instead");

  p = ResolveOnDemandPath(t.allowed + "a..b.json", t.allowed, c);
  CHECK(p.replaced);

  p = ResolveOnDemandPath("rel/x.json", t.allowed, c);
  CHECK(p.replaced);
  CHECK(p.message ==
        "on-demand ACTIVITIES_LOG_FILE \"rel/x.json\" refused: resolved path "
        "\"rel/x_rank3_4242.json\" is not an absolute path; writing to " +
            fallback + " instead");

  p = ResolveOnDemandPath(t.root + "/outside/x.trace", t.allowed, c);
  CHECK(p.replaced);
  CHECK(p.message == "on-demand ACTIVITIES_LOG_FILE \"" + t.root +
                         "/outside/x.trace\" refused: it is outside the allowed directory " +
                         t.allowed + "; writing to " + fallback + " instead");

  p = ResolveOnDemandPath(t.allowed + "nodir/x.trace", t.allowed, c);
  CHECK(p.replaced);
  CHECK(p.message == "on-demand ACTIVITIES_LOG_FILE \"" + t.allowed +
                         "nodir/x.trace\" refused: it has a parent directory that cannot be "
                         "resolved (No such file or directory); writing to " +
                         fallback + " instead");

  p = ResolveOnDemandPath(t.allowed + "sub/", t.allowed, c);
  CHECK(p.replaced);
}

TEST_CASE("on-demand: symlinks are never followed out of the directory", "[output_path]") {
  Tree t;
  const PathContext c = Context();
  // A directory symlink inside the allowed dir that points outside it.
  REQUIRE(symlink((t.root + "/outside").c_str(), (t.allowed + "escape").c_str()) == 0);
  OnDemandPath p = ResolveOnDemandPath(t.allowed + "escape/x.trace", t.allowed, c);
  CHECK(p.replaced);
  CHECK(p.message == "on-demand ACTIVITIES_LOG_FILE \"" + t.allowed +
                         "escape/x.trace\" refused: it has a parent directory that resolves to " +
                         t.root + "/outside, outside the allowed directory " + t.root +
                         "/allowed; writing to " + t.allowed +
                         "libkineto_activities_4242.json instead");
  // A final-component symlink, even dangling, is refused.
  REQUIRE(symlink((t.root + "/outside/victim").c_str(), (t.allowed + "link.trace").c_str()) == 0);
  p = ResolveOnDemandPath(t.allowed + "link.trace", t.allowed, c);
  CHECK(p.replaced);
  CHECK(p.message.find("refused: it is an existing symlink (never followed)") != std::string::npos);
  struct stat st;
  CHECK(lstat((t.root + "/outside/victim").c_str(), &st) != 0);  // nothing was created
  // A symlink inside that stays inside is fine for the parent.
  REQUIRE(symlink((t.allowed + "sub").c_str(), (t.allowed + "alias").c_str()) == 0);
  p = ResolveOnDemandPath(t.allowed + "alias/ok.trace", t.allowed, c);
  CHECK_FALSE(p.replaced);
  CHECK(p.path == t.allowed + "alias/ok.trace");
}

TEST_CASE("on-demand: existing files are never overwritten", "[output_path]") {
  Tree t;
  const PathContext c = Context();
  std::ofstream(t.allowed + "old_rank3_4242.json") << "{}";
  OnDemandPath p = ResolveOnDemandPath(t.allowed + "old.json", t.allowed, c);
  CHECK(p.replaced);
  CHECK(p.message == "on-demand ACTIVITIES_LOG_FILE \"" + t.allowed +
                         "old.json\" refused: resolved path \"" + t.allowed +
                         "old_rank3_4242.json\" already exists (never overwritten); writing to " +
                         t.allowed + "libkineto_activities_4242.json instead");
  // When the default name is taken too, a fresh name is chosen.
  std::ofstream(t.allowed + "libkineto_activities_4242.json") << "{}";
  p = ResolveOnDemandPath(t.allowed + "old.json", t.allowed, c);
  CHECK(p.path == t.allowed + "libkineto_activities_4242_20251122T004000Z.json");
  std::ofstream(t.allowed + "libkineto_activities_4242_20251122T004000Z.json") << "{}";
  p = ResolveOnDemandPath("", t.allowed, c);
  CHECK_FALSE(p.replaced);
  CHECK(p.path == t.allowed + "libkineto_activities_4242_20251122T004000Z_2.json");
}

TEST_CASE("on-demand: allowed directory that is itself a symlink", "[output_path]") {
  Tree t;
  const PathContext c = Context();
  const std::string link_dir = t.root + "/linked";
  REQUIRE(symlink(t.allowed.c_str(), link_dir.c_str()) == 0);
  OnDemandPath p = ResolveOnDemandPath(link_dir + "/x.trace", link_dir, c);
  CHECK_FALSE(p.replaced);
  CHECK(p.path == link_dir + "/x.trace");
}

TEST_CASE("CurrentPathContext reads the process; the rank is the caller's", "[output_path]") {
  const PathContext c = CurrentPathContext(7);
  CHECK(c.pid == static_cast<int64_t>(getpid()));
  CHECK(c.rank == 7);
  CHECK(c.unix_time_s > 1700000000);
  CHECK_FALSE(c.host.empty());
}

}  // namespace
}  // namespace kairos
