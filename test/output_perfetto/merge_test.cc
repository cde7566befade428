// File: merge_test.cc
// Layer: tests for src/output/merge* and `kairos merge` / multi-trace `kairos summarize`.
// Four-rank fixtures (test/analysis/multirank_fixture.h) on one host and on "different
// hosts" with skewed clocks; the merged trace is read back with kairos' own JSON and
// Perfetto readers.
// Threading: single-threaded; the CLI cases run the kairos binary as a child process.
#include <array>
#include <catch2/catch.hpp>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/multirank_fixture.h"
#include "output/json_reader.h"
#include "output/merge.h"
#include "output/proto/perfetto_reader.h"
#include "temp_dir.h"

namespace kairos {
namespace {

using testing::JobSpec;
using testing::TempDir;

constexpr char kAllReduce[] = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";

std::vector<std::string> WriteJob(const JobSpec& j, const std::string& dir) {
  std::vector<std::string> paths;
  for (int r = 0; r < j.world; ++r) {
    paths.push_back(dir + "/job.rank" + std::to_string(r) + ".json");
    REQUIRE(testing::WriteFixtureFile(paths.back(), testing::RankTraceJson(j, r)));
  }
  return paths;
}

// Skewed clocks: hosts a, b, b, c; rank 3's second all-reduce ends 800 us late (an outlier).
JobSpec SkewedJob() {
  JobSpec j;
  j.straggler = 2;
  j.straggler_delay_us = 1000;
  j.hosts = {"a", "b", "b", "c"};
  j.offset_ns = {0, 3700123456, 3700123456, -1200987654};
  j.outlier_rank = 3;
  j.outlier_us = 800;
  return j;
}

struct MergedJson {
  std::map<int64_t, std::string> process_names;   // pid -> name
  std::map<int64_t, std::vector<int64_t>> ends;   // rank -> all-reduce ends (merged clock)
  uint64_t events = 0;
};

MergedJson ReadMerged(const std::string& path) {
  MergedJson m;
  KinetoJsonCallbacks cb;
  cb.on_event = [&](const KinetoEvent& ev) {
    ++m.events;
    const int64_t pid = ev.pid.AsInt();
    if (ev.ph == "M" && ev.name == "process_name") m.process_names[pid] = ev.args.Find("name")->text;
    if (ev.cat == "kernel" && ev.name == kAllReduce) m.ends[pid / kMergePidStride].push_back(ev.ts_ns + ev.dur_ns);
  };
  REQUIRE(ReadKinetoJsonFile(path, cb).ok());
  return m;
}

TEST_CASE("merge: one host, four process groups, no shift", "[merge]") {
  JobSpec j;
  j.straggler = 2;
  j.straggler_delay_us = 1000;
  const TempDir temp("kairos_merge_test_onehost_");
  const std::string& dir = temp.path();
  const std::vector<std::string> in = WriteJob(j, dir);
  MergeOptions o;
  o.out_path = dir + "/merged.json";
  absl::StatusOr<MergeResult> r = MergeTraces(in, o);
  REQUIRE(r.ok());
  REQUIRE(r->ranks.size() == 4);
  for (const MergeRankInfo& k : r->ranks) {
    CHECK(k.shift_ns == 0);
    CHECK(k.host == "node0");
    CHECK(k.collectives.size() == 10);
  }
  const MergedJson m = ReadMerged(o.out_path);
  CHECK(m.events == r->events);
  std::set<int64_t> groups;
  for (const auto& [pid, name] : m.process_names) {
    const int64_t rank = pid / kMergePidStride;
    groups.insert(rank);
    INFO(pid << " " << name);
    CHECK(name.rfind("rank " + std::to_string(rank) + ":", 0) == 0);
  }
  CHECK(groups == std::set<int64_t>{0, 1, 2, 3});
  // CPU process (named by the input) and GPU 0 (named by the merge) per rank.
  // pids in order of first appearance: the CPU process (1002, named by the input), then
  // GPU 0 (pid 0, unnamed: named by the merge).
  CHECK(m.process_names.at(2 * kMergePidStride + 0) == "rank 2: python");
  CHECK(m.process_names.at(2 * kMergePidStride + 1) == "rank 2: process 0");
  CHECK(m.process_names.size() == 8);
  // Still a Kineto trace for kairos' own reader.
  absl::StatusOr<TraceData> back = ReadKinetoJsonTrace(o.out_path);
  REQUIRE(back.ok());
  CHECK(back->EventCount() > 0);
}

TEST_CASE("merge: skewed hosts are aligned on collective ends within 5 us", "[merge]") {
  const JobSpec j = SkewedJob();
  const TempDir temp("kairos_merge_test_skew_");
  const std::string& dir = temp.path();
  const std::vector<std::string> in = WriteJob(j, dir);
  for (const char* out : {"merged.json", "merged.json.zst"}) {
    MergeOptions o;
    o.out_path = dir + "/" + out;
    absl::StatusOr<MergeResult> r = MergeTraces(in, o);
    REQUIRE(r.ok());
    // Same host, same shift; the outlier does not move rank 3's median.
    CHECK(r->ranks[0].shift_ns == 0);
    CHECK(r->ranks[1].shift_ns == -3700123456);
    CHECK(r->ranks[2].shift_ns == -3700123456);
    CHECK(r->ranks[3].shift_ns == 1200987654);
    CHECK(r->ranks[1].aligned_on == 20);  // two ranks on host b, 10 all-reduces each
    CHECK(r->ranks[3].aligned_on == 10);
    const MergedJson m = ReadMerged(o.out_path);
    REQUIRE(m.ends.size() == 4);
    for (size_t k = 0; k < 10; ++k) {
      int64_t lo = INT64_MAX, hi = INT64_MIN;
      for (const auto& [rank, ends] : m.ends) {
        REQUIRE(ends.size() == 10);
        if (rank == 3 && k == 1) continue;  // the outlier itself
        lo = std::min(lo, ends[k]);
        hi = std::max(hi, ends[k]);
      }
      INFO(out << " instance " << k);
      CHECK(hi - lo <= 5000);
    }
  }
}

TEST_CASE("merge: collectives match by step when a rank's trace starts later", "[merge]") {
  JobSpec j = SkewedJob();
  j.outlier_rank = -1;
  j.jitter_us = 40;  // steps of different lengths: a step off would show
  j.late_rank = 3;   // on host c, traced from the third step on
  j.late_steps = 2;
  const TempDir temp("kairos_merge_test_late_");
  const std::string& dir = temp.path();
  const std::vector<std::string> in = WriteJob(j, dir);
  MergeOptions o;
  o.out_path = dir + "/merged.json";
  absl::StatusOr<MergeResult> r = MergeTraces(in, o);
  REQUIRE(r.ok());
  CHECK(r->ranks[3].aligned_on == 8);
  CHECK(r->ranks[3].shift_ns == 1200987654);
  const MergedJson m = ReadMerged(o.out_path);
  REQUIRE(m.ends.at(3).size() == 8);
  for (size_t k = 0; k < 8; ++k) {
    INFO("step " << k + 2);
    CHECK(std::llabs(m.ends.at(3)[k] - m.ends.at(0)[k + 2]) <= 5000);
  }
}

TEST_CASE("merge: Perfetto output keeps every event, aligned", "[merge]") {
  const JobSpec j = SkewedJob();
  const TempDir temp("kairos_merge_test_pftrace_");
  const std::string& dir = temp.path();
  const std::vector<std::string> in = WriteJob(j, dir);
  MergeOptions o;
  o.out_path = dir + "/merged.pftrace";
  absl::StatusOr<MergeResult> r = MergeTraces(in, o);
  REQUIRE(r.ok());
  absl::StatusOr<TraceData> back = ReadPerfettoTrace(o.out_path);
  REQUIRE(back.ok());
  std::vector<int64_t> ends;
  uint64_t kernels = 0, steps = 0;
  for (size_t t = 0; t < back->tracks.size(); ++t) {
    for (const Event& e : back->events_by_track[t]) {
      const std::string_view name = back->strings.Get(e.name);
      if (name == kAllReduce) ends.push_back(e.end_ns);
      if (name.rfind("sm80_xmma", 0) == 0) ++kernels;
      if (name.rfind("ProfilerStep#", 0) == 0) ++steps;
    }
  }
  CHECK(kernels == 40);
  CHECK(steps == 40);
  REQUIRE(ends.size() == 40);
  std::sort(ends.begin(), ends.end());
  for (size_t k = 0; k < 10; ++k) {
    INFO("instance " << k);
    if (k == 1) {
      CHECK(ends[4 * k + 3] - ends[4 * k] == 800000);  // the outlier, 800 us late
      CHECK(ends[4 * k + 2] - ends[4 * k] <= 5000);
    } else {
      CHECK(ends[4 * k + 3] - ends[4 * k] <= 5000);
    }
  }
  // A Perfetto input merges too (into Perfetto).
  MergeOptions o2;
  o2.out_path = dir + "/again.pftrace.zst";
  o2.read_perfetto = [](const std::string& p) { return ReadPerfettoTrace(p); };
  absl::StatusOr<MergeResult> r2 = MergeTraces({o.out_path}, o2);
  REQUIRE(r2.ok());
  CHECK(r2->events == r->events);
  MergeOptions o3;
  o3.out_path = dir + "/bad.json";
  o3.read_perfetto = o2.read_perfetto;
  CHECK(!MergeTraces({o.out_path}, o3).ok());  // JSON output needs JSON inputs
}

// One rank's trace: its host, and X events (category, name, ts in µs text, dur in µs).
std::string HostileRank(int rank, const std::string& host,
                        const std::vector<std::array<std::string, 3>>& events) {
  std::string j = "{\"distributedInfo\": {\"rank\": " + std::to_string(rank) + ", \"world_size\": 2}, \"host_name\": \"" +
                  host + "\", \"traceEvents\": [";
  for (size_t i = 0; i < events.size(); ++i) {
    j += std::string(i ? "," : "") + "{\"ph\":\"X\",\"cat\":\"" + events[i][0] + "\",\"name\":\"" + events[i][1] +
         "\",\"pid\":0,\"tid\":7,\"ts\":" + events[i][2] + ",\"dur\":1,\"args\":{\"device\":0,\"stream\":7}}";
  }
  return j + "]}";
}

TEST_CASE("merge: clock differences and shifted times that do not fit int64 are counted, never wrapped",
          "[merge]") {
  // Ends near +INT64_MAX on the reference host and near INT64_MIN on the other: their
  // difference does not fit. The old code wrapped it into clock_shift_ns = -3001 ns (UB).
  std::vector<MergeRankInfo> ranks(2);
  ranks[0].rank = 0;
  ranks[0].host = "a";
  ranks[1].rank = 1;
  ranks[1].host = "b";
  MergeCollective c;
  c.name = kAllReduce;
  c.end_ns = INT64_MAX - 1000;
  ranks[0].collectives.push_back(c);
  c.end_ns = INT64_MIN + 2000;
  ranks[1].collectives.push_back(c);
  std::vector<std::string> warnings;
  AlignClocks(ranks, &warnings);
  CHECK(ranks[1].shift_ns == 0);
  CHECK(ranks[1].aligned_on == 0);
  CHECK(warnings == std::vector<std::string>{
                        "host b: 1 collective instances ignored for the clock shift: their end differs from the "
                        "reference's by more than a 64-bit ns time holds",
                        "rank 1 (host b) shares no collective with rank 0: its clock is not shifted"});

  // A shift that fits but carries one of rank 1's events past INT64_MAX: that event is left
  // out of both outputs and reported; the others are written.
  const TempDir temp("kairos_merge_test_overflow_");
  const std::string& dir = temp.path();
  const std::string r0 = dir + "/t.rank0.json", r1 = dir + "/t.rank1.json";
  REQUIRE(testing::WriteFixtureFile(r0, HostileRank(0, "a", {{{"kernel", kAllReduce, "9000000000000000"}}})));
  REQUIRE(testing::WriteFixtureFile(
      r1, HostileRank(1, "b", {{{"kernel", kAllReduce, "0"}, {"kernel", "late", "1000000000000000"}}})));
  for (const char* out : {"/m.json", "/m.pftrace"}) {
    INFO(out);
    MergeOptions o;
    o.out_path = dir + out;
    o.read_perfetto = [](const std::string& p) { return ReadPerfettoTrace(p); };
    absl::StatusOr<MergeResult> r = MergeTraces({r0, r1}, o);
    REQUIRE(r.ok());
    CHECK(r->ranks[1].shift_ns == 9000000000000000000);
    CHECK(r->warnings == std::vector<std::string>{"rank 1: 1 events dropped: shifted by 9000000000000000000 ns "
                                                  "their time does not fit a 64-bit ns time"});
    CHECK(r->events >= 2);
  }
}

#ifdef KAIROS_CLI_PATH
std::string Run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  CHECK(pclose(p) == 0);
  return out;
}

TEST_CASE("cli: summarize a directory of ranks, merge them", "[merge][cli]") {
  JobSpec j;
  j.straggler = 2;
  j.straggler_delay_us = 1500;
  j.jitter_us = 30;
  j.steps = 12;
  const TempDir temp("kairos_merge_test_cli_");
  const std::string& dir = temp.path();
  const std::vector<std::string> in = WriteJob(j, dir);
  const std::string cli = KAIROS_CLI_PATH;
  const std::string text = Run(cli + " summarize " + dir);
  CHECK(text.find("Rank 2 is the straggler") != std::string::npos);
  CHECK(text.find("[straggler_rank]") != std::string::npos);
  const std::string json = Run(cli + " summarize --format json " + in[0] + " " + in[1] + " " + in[2] + " " + in[3]);
  CHECK(json.find("\"straggler_rank\":2") != std::string::npos);
  const std::string md = Run(cli + " summarize --format markdown " + dir);
  CHECK(md.find("## kairos cross-rank summary (4 ranks)") == 0);
  Run(cli + " merge " + dir + "/job.rank0.json " + dir + "/job.rank1.json " + dir + "/job.rank2.json " + dir +
      "/job.rank3.json -o " + dir + "/merged.pftrace 2>/dev/null");
  CHECK(ReadPerfettoTrace(dir + "/merged.pftrace").ok());
  // The merged file in the directory has no rank in its name: not taken for a fifth rank.
  CHECK(Run(cli + " summarize " + dir).find("kairos cross-rank summary: 4 ranks\nRank 2 is the straggler") == 0);
  // Clean job: the directory summary names no straggler.
  JobSpec clean;
  clean.jitter_us = 30;
  clean.steps = 12;
  const TempDir temp2("kairos_merge_test_cli_clean_");
  const std::string& dir2 = temp2.path();
  WriteJob(clean, dir2);
  CHECK(Run(cli + " summarize " + dir2).find("No straggler among 4 ranks") != std::string::npos);
}
#endif

}  // namespace
}  // namespace kairos
