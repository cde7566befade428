// File: proc_parse_test.cc
// Layer: tests for kairos_counters. Parsers against captured /proc text; rates by hand.
// Threading: single-threaded.
#include "counters/proc_parse.h"

#include <catch2/catch.hpp>

#include "counters/test_data.h"

namespace kairos::internal {
namespace {

using kairos::testing::LoadProcSample;

TEST_CASE("ParseProcStat reads the aggregate line, every core and ctxt") {
  auto r = ParseProcStat(LoadProcSample("proc_stat_a.txt"));
  REQUIRE(r.ok());
  CHECK(r->all.user == 7253);
  CHECK(r->all.system == 1759);
  CHECK(r->all.idle == 84111);
  CHECK(r->all.iowait == 490);
  CHECK(r->all.softirq == 44);
  CHECK(r->all.steal == 84);
  CHECK(r->all.Total() == 93741);
  CHECK(r->all.Busy() == 9140);
  REQUIRE(r->cores.size() == 2);
  CHECK(r->cores[1].idle == 43198);
  CHECK(r->context_switches == 255001);
}

TEST_CASE("ParseProcStat rejects text without the aggregate line") {
  CHECK(!ParseProcStat("ctxt 5\n").ok());
  CHECK(!ParseProcStat("cpu  1 2 x 4 5\n").ok());
}

TEST_CASE("Busy and iowait percentages over two captured snapshots") {
  auto a = ParseProcStat(LoadProcSample("proc_stat_a.txt"));
  auto b = ParseProcStat(LoadProcSample("proc_stat_b.txt"));
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(BusyPercent(a->all, b->all) == Approx(30.0));    // 6 busy of 20 ticks
  CHECK(IowaitPercent(a->all, b->all) == Approx(10.0));  // 2 of 20
  CHECK(BusyPercent(a->cores[0], b->cores[0]) == Approx(60.0));
  CHECK(IowaitPercent(a->cores[0], b->cores[0]) == Approx(20.0));
  CHECK(BusyPercent(a->cores[1], b->cores[1]) == 0.0);
  CHECK(BusyPercent(b->all, a->all) == 0.0);  // counter went backwards: no garbage
  CHECK(RatePerSecond(b->context_switches - 500, b->context_switches, 100000000) == Approx(5000.0));
  CHECK(RatePerSecond(10, 5, 100000000) == 0.0);
}

TEST_CASE("ParseMemInfo converts kB to bytes") {
  auto r = ParseMemInfo(LoadProcSample("meminfo.txt"));
  REQUIRE(r.ok());
  CHECK(r->total_bytes == 24684084ull * 1024);
  CHECK(r->available_bytes == 24324832ull * 1024);
  CHECK(!ParseMemInfo("MemTotal: 5 kB\n").ok());
}

TEST_CASE("ParseProcessStat survives parentheses and spaces in the command name") {
  auto r = ParseProcessStat(LoadProcSample("self_stat.txt"));
  REQUIRE(r.ok());
  CHECK(r->utime_ticks == 150);
  CHECK(r->stime_ticks == 50);
  CHECK(r->num_threads == 7);
  CHECK(r->rss_pages == 365);
  CHECK(!ParseProcessStat("12 (x) R 1 2").ok());
}

TEST_CASE("ParseDiskStats sums whole disks once, skipping partitions and virtual devices") {
  auto r = ParseDiskStats(LoadProcSample("diskstats.txt"));
  REQUIRE(r.ok());
  CHECK(r->read_bytes == (2468506ull + 1000) * 512);
  CHECK(r->write_bytes == (448616ull + 2000) * 512);
}

TEST_CASE("ParseNetDev sums every interface but loopback") {
  auto r = ParseNetDev(LoadProcSample("net_dev.txt"));
  REQUIRE(r.ok());
  CHECK(r->read_bytes == 18462847ull + 1000);
  CHECK(r->write_bytes == 43322ull + 2000);
  CHECK(!ParseNetDev("eth0: 1 2 3\n").ok());
}

}  // namespace
}  // namespace kairos::internal
