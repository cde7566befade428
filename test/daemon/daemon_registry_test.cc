// File: daemon_registry_test.cc
// Layer: test (daemon). The relay's matching rules (dynolog-wire-protocol.md §3.1, §5):
// whole-job and ancestry matching, process_limit, busy, consume-after-send, 64-bit job ids,
// stale and dead processes.
// Threading: single-threaded; clock and pid probe are injected.
#include "daemon_registry.h"

#include <catch2/catch.hpp>
#include <functional>
#include <set>

namespace kairos::tools {
namespace {

constexpr char kConfig[] = "ACTIVITIES_LOG_FILE=/tmp/t.json\nACTIVITIES_DURATION_MSECS=100";

TEST_CASE("whole-job request, process_limit 2 of 3: two triggered, one reported untriggered") {
  DaemonRegistry r(60000, nullptr, "host");
  r.OnPoll(7, {300, 10, 1}, 2, 0);
  r.OnPoll(7, {100, 10, 1}, 2, 0);
  r.OnPoll(7, {200, 10, 1}, 2, 0);
  r.OnPoll(8, {400}, 2, 0);  // another job
  REQUIRE(r.size() == 4);
  const OnDemandResult res = r.Request(7, {0}, kConfig, 2, 10, 1700000000);
  // Visited in std::set<int32_t> order of the pid sets: {1,10,100} < {1,10,200} < {1,10,300}.
  CHECK(res.processes_matched == std::vector<int32_t>{100, 200, 300});
  CHECK(res.profilers_triggered == std::vector<int32_t>{100, 200});
  CHECK(res.profilers_busy == 0);

  auto reply = r.OnPoll(7, {100, 10, 1}, 2, 20);
  REQUIRE(reply.has_value());
  CHECK(*reply == "\n    " + std::string(kConfig) + "\n    REQUEST_TRACE_ID=" +
                      r.TraceId(100, 1700000000) + "\n");
  CHECK(r.TraceId(100, 1700000000) == std::to_string(std::hash<std::string>{}("host:100:1700000000")));
  CHECK_FALSE(r.OnPoll(7, {300, 10, 1}, 2, 20).has_value());
  CHECK_FALSE(r.OnPoll(8, {400}, 2, 20).has_value());
}

TEST_CASE("iteration requests carry the relay's request time; time requests are sent as Dynolog does") {
  DaemonRegistry r(60000, nullptr, "h");
  r.OnPoll(7, {100}, 2, 0);
  const std::string iter =
      "PROFILE_START_ITERATION=0\nPROFILE_START_ITERATION_ROUNDUP=20\nACTIVITIES_ITERATIONS=10";
  REQUIRE(r.Request(7, {0}, iter, 8, 10, 1700000000, 1700000000123).profilers_triggered.size() == 1);
  auto reply = r.OnPoll(7, {100}, 2, 20);
  REQUIRE(reply.has_value());
  CHECK(*reply == "\n    " + iter + "\n    REQUEST_TRACE_ID=" + r.TraceId(100, 1700000000) +
                      "\n    KAIROS_REQUEST_TIME_MS=1700000000123\n");
  DaemonRegistry t(60000, nullptr, "h");
  t.OnPoll(7, {100}, 2, 0);
  REQUIRE(t.Request(7, {0}, kConfig, 8, 30, 1700000000, 1700000000456).profilers_triggered.size() == 1);
  reply = t.OnPoll(7, {100}, 2, 40);
  REQUIRE(reply.has_value());
  CHECK(*reply == "\n    " + std::string(kConfig) + "\n    REQUEST_TRACE_ID=" +
                      t.TraceId(100, 1700000000) + "\n");
}

TEST_CASE("a config is cleared only once delivered; busy polls keep it pending") {
  DaemonRegistry r(60000, nullptr, "h");
  r.OnPoll(0, {5}, 2, 0);
  REQUIRE(r.Request(0, {}, kConfig, 1000, 0, 0).profilers_triggered == std::vector<int32_t>{5});
  CHECK_FALSE(r.OnPoll(0, {5}, 0, 1).has_value());  // busy client: keep it
  REQUIRE(r.OnPoll(0, {5}, 2, 2).has_value());      // handed out, but the send failed...
  REQUIRE(r.OnPoll(0, {5}, 2, 3).has_value());      // ...so the next poll gets it again
  // A second request while one is pending counts as busy.
  const OnDemandResult busy = r.Request(0, {0}, kConfig, 1000, 4, 0);
  CHECK(busy.processes_matched == std::vector<int32_t>{5});
  CHECK(busy.profilers_triggered.empty());
  CHECK(busy.profilers_busy == 1);
  r.ConfigDelivered(0, {5});
  CHECK_FALSE(r.OnPoll(0, {5}, 2, 5).has_value());
}

TEST_CASE("pid matching: any pid of the ancestry selects the process") {
  DaemonRegistry r(60000, nullptr, "h");
  r.OnPoll(1, {11, 50}, 2, 0);  // ranks under launcher 50
  r.OnPoll(1, {12, 50}, 2, 0);
  r.OnPoll(1, {13, 60}, 2, 0);
  CHECK(r.Request(1, {50}, kConfig, 10, 0, 0).profilers_triggered ==
        std::vector<int32_t>{11, 12});
  CHECK(r.Request(1, {13}, kConfig, 10, 0, 0).profilers_triggered == std::vector<int32_t>{13});
  CHECK(r.Request(1, {99}, kConfig, 10, 0, 0).processes_matched.empty());
  CHECK(r.Request(2, {0}, kConfig, 10, 0, 0).processes_matched.empty());  // unknown job
}

TEST_CASE("job ids above 2^31 match exactly (Dynolog truncates them to int)") {
  DaemonRegistry r(60000, nullptr, "h");
  r.OnPoll(5000000000LL, {21}, 2, 0);
  CHECK(r.Request(5000000000LL, {0}, kConfig, 3, 0, 0).profilers_triggered ==
        std::vector<int32_t>{21});
  CHECK(r.Request(705032704LL, {0}, kConfig, 3, 0, 0).processes_matched.empty());  // truncated
}

TEST_CASE("stale and dead processes are forgotten before matching") {
  std::set<int32_t> dead;
  DaemonRegistry r(1000, [&](int32_t pid) { return dead.count(pid) == 0; }, "h");
  r.OnPoll(0, {1}, 2, 0);     // will go stale
  r.OnPoll(0, {2}, 2, 900);   // will die
  r.OnPoll(0, {3}, 2, 900);   // lives
  dead.insert(2);
  const OnDemandResult res = r.Request(0, {0}, kConfig, 1, 1500, 0);
  CHECK(res.processes_matched == std::vector<int32_t>{3});
  CHECK(res.profilers_triggered == std::vector<int32_t>{3});
  CHECK(r.size() == 1);
  CHECK(r.Sweep(5000) == 1);
  CHECK(r.size() == 0);
}

TEST_CASE("process_limit 0 matches but triggers nothing; empty pid sets never register") {
  DaemonRegistry r(60000, nullptr, "h");
  CHECK_FALSE(r.OnPoll(0, {}, 2, 0).has_value());
  CHECK(r.size() == 0);
  r.OnPoll(0, {4}, 2, 0);
  const OnDemandResult res = r.Request(0, {0}, kConfig, 0, 0, 0);
  CHECK(res.processes_matched == std::vector<int32_t>{4});
  CHECK(res.profilers_triggered.empty());
  CHECK(res.profilers_busy == 0);
}

TEST_CASE("the table is capped: new processes past the cap are refused and counted") {
  DaemonRegistry r(1000, nullptr, "h", 3);
  for (int64_t job = 0; job < 3; ++job) r.OnPoll(job, {1}, 2, 0);
  CHECK(r.size() == 3);
  // A fourth process (a fake poll with a new job id): refused, counted, not stored.
  CHECK_FALSE(r.OnPoll(99, {1}, 2, 10).has_value());
  CHECK(r.size() == 3);
  CHECK(r.refused() == 1);
  // Registered processes keep polling, and a request still reaches them.
  r.OnPoll(0, {1}, 2, 500);
  CHECK(r.Request(0, {0}, kConfig, 5, 500, 0).profilers_triggered == std::vector<int32_t>{1});
  // Once the others went stale, the sweep the full table runs makes room.
  r.OnPoll(0, {1}, 2, 1800);
  CHECK_FALSE(r.OnPoll(99, {1}, 2, 1900).has_value());  // job 0's pending config goes first
  CHECK(r.size() == 2);
  CHECK(r.refused() == 1);
}

TEST_CASE("an entry naming a live pid (pid 1) is swept at the age limit unless a config waits") {
  // pid 1 is always alive and the flood polls every 100 ms, so neither the pid probe nor
  // staleness ever sweeps it; the age limit does.
  DaemonRegistry r(1000, [](int32_t) { return true; }, "h", 100, 5000);
  r.OnPoll(7, {1}, 2, 0);
  r.OnPoll(8, {1}, 2, 0);
  r.Request(8, {0}, kConfig, 1, 0, 0);  // job 8 has a config waiting
  for (int64_t t = 100; t <= 5000; t += 100) {
    r.OnPoll(7, {1}, 0, t);  // type 0: a poll that does not take the config
    r.OnPoll(8, {1}, 0, t);
  }
  CHECK(r.Sweep(5000) == 0);
  CHECK(r.size() == 2);
  r.OnPoll(7, {1}, 0, 5001);
  r.OnPoll(8, {1}, 0, 5001);
  CHECK(r.Sweep(5001) == 1);  // job 7: registered 5001 ms ago
  CHECK(r.size() == 1);
  // A real process just registers again with its next poll.
  r.OnPoll(7, {1}, 2, 5002);
  CHECK(r.size() == 2);
}

}  // namespace
}  // namespace kairos::tools
