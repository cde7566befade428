// File: cupti_link_table_test.cc
// Layer: test (kairos_activity). The CUPTI link table's memory follows use: creating it
// touches only the prefaulted head (the first window of a CUDA process used to zero 8 MiB
// while kairos_start() waited), Clear hands the used pages back, pairs round-trip exactly
// and overflow is counted.
// Threading: single-threaded, plus one concurrent-writer case (TSan target).
#include "activity/cupti_link_table.h"

#include <unistd.h>

#include <thread>
#include <vector>

#include <catch2/catch.hpp>

namespace kairos::internal {
namespace {

size_t Page() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

TEST_CASE("a 1 M-pair table maps zero pages: only the head is resident", "[cupti_link_table]") {
  CuptiLinkTable t;
  REQUIRE(t.Create(size_t{1} << 20, 64u << 10));
  CHECK(t.capacity() == (size_t{1} << 20));
  // 64 KiB prefaulted of 8 MiB: before the fix all 2048 pages were written by new[]().
  CHECK(t.ResidentPages() == (64u << 10) / Page());
  CHECK(t.stored() == 0);
  // The first links land in the prefaulted head: no page is faulted in for them.
  t.Add(7, 9);
  CHECK(t.ResidentPages() == (64u << 10) / Page());
  // (Reads last: reading an untouched page maps the shared zero page, which mincore counts.)
  CHECK(t.at(0) == ((uint64_t{7} << 32) | 9));
  CHECK(t.at((size_t{1} << 20) - 1) == 0);
}

TEST_CASE("pairs round-trip; overflow is counted, not stored", "[cupti_link_table]") {
  CuptiLinkTable t;
  REQUIRE(t.Create(10, 0));
  CHECK(t.ResidentPages() == 0);
  for (uint32_t i = 1; i <= 15; ++i) t.Add(1000 + i, i);
  CHECK(t.added() == 15);
  CHECK(t.stored() == 10);
  CHECK(t.overflow() == 5);
  for (size_t i = 0; i < 10; ++i)
    CHECK(t.at(i) == ((uint64_t{1000 + i + 1} << 32) | (i + 1)));
  CHECK(t.ResidentPages() == 1);
}

TEST_CASE("Clear returns the used pages and the table reads as zero", "[cupti_link_table]") {
  CuptiLinkTable t;
  REQUIRE(t.Create(size_t{1} << 20, 0));
  const size_t per_page = Page() / sizeof(uint64_t);
  for (uint32_t i = 0; i < 3 * per_page; ++i) t.Add(i + 1, i + 1);
  CHECK(t.ResidentPages() == 3);
  t.Clear();
  CHECK(t.ResidentPages() == 0);
  CHECK(t.added() == 0);
  // A new session on the same mapping: the head is faulted in again, nothing else.
  REQUIRE(t.Create(size_t{1} << 20, 2 * Page()));
  CHECK(t.ResidentPages() == 2);
  // The old pairs are gone (zero pages; read after the resident count, see above).
  CHECK(t.at(0) == 0);
  CHECK(t.at(3 * per_page - 1) == 0);
}

TEST_CASE("a larger table keeps the smaller mapping for late writers", "[cupti_link_table]") {
  CuptiLinkTable t;
  REQUIRE(t.Create(100, 0));
  t.Add(1, 2);
  REQUIRE(t.Create(100000, 0));
  CHECK(t.capacity() == 100000);
  CHECK(t.added() == 0);
  t.Add(3, 4);
  CHECK(t.at(0) == ((uint64_t{3} << 32) | 4));
  REQUIRE(t.Create(50, 0));  // smaller: the same mapping, a smaller logical capacity
  CHECK(t.capacity() == 50);
  CHECK(t.at(0) == 0);
}

TEST_CASE("concurrent writers each get a unique slot", "[cupti_link_table]") {
  CuptiLinkTable t;
  REQUIRE(t.Create(4 * 5000, 0));
  std::vector<std::thread> threads;
  for (uint32_t w = 0; w < 4; ++w)
    threads.emplace_back([&t, w] {
      for (uint32_t i = 0; i < 5000; ++i) t.Add(w + 1, i + 1);
    });
  for (auto& th : threads) th.join();
  REQUIRE(t.stored() == 20000);
  std::vector<int> seen(4 * 5001, 0);
  for (size_t i = 0; i < t.stored(); ++i) {
    const uint64_t v = t.at(i);
    const uint32_t w = static_cast<uint32_t>(v >> 32), n = static_cast<uint32_t>(v);
    REQUIRE(w >= 1);
    REQUIRE(w <= 4);
    ++seen[(w - 1) * 5001 + n];
  }
  size_t once = 0;
  for (int c : seen) once += c == 1;
  CHECK(once == 20000);
}

}  // namespace
}  // namespace kairos::internal
