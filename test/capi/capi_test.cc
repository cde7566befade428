// File: capi_test.cc
// Layer: test/capi. The C ABI through libkairos.so: version, status strings, error codes
// and the thread-local last error, calls before init / with bad arguments / after
// shutdown, the recording flag, and a whole synchronous session.
// Threading: the test thread plus one thread for the thread-local error check.
#include "kairos.h"

#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "temp_dir.h"

namespace {

using kairos::testing::TempDir;

TEST_CASE("version and status strings") {
  CHECK(kairos_version() == KAIROS_VERSION_NUMBER);
  CHECK(KAIROS_VERSION_NUMBER == 100);
  CHECK(std::string(kairos_status_string(KAIROS_OK)) == "ok");
  CHECK(std::string(kairos_status_string(KAIROS_ERR_INVALID_ARGUMENT)) == "invalid argument");
  CHECK(std::string(kairos_status_string(KAIROS_ERR_NOT_FOUND)) == "not found");
  CHECK(std::string(kairos_status_string(-999)) == "unknown error code");
}

TEST_CASE("calls before any trace are defined and cheap") {
  kairos_range_push("x");
  kairos_range_pop();
  kairos_range_pop();  // unbalanced: ignored
  CHECK(kairos_range_start("y") == 0);
  kairos_range_end(0);
  kairos_range_end(12345);
  kairos_mark("m");
  kairos_step();
  CHECK(*kairos_recording_flag() == 0);
  CHECK(kairos_stop() == KAIROS_ERR_FAILED_PRECONDITION);
  CHECK(std::string(kairos_last_error()) == "no trace is recording");
  CHECK(kairos_flush() == nullptr);
  CHECK(std::string(kairos_last_error()) == "no trace has been written");
}

TEST_CASE("bad arguments give codes and a per-thread message") {
  CHECK(kairos_set_metadata(nullptr, "v") == KAIROS_ERR_INVALID_ARGUMENT);
  const std::string msg = kairos_last_error();
  CHECK(msg == "kairos_set_metadata: key must be a non-empty string");
  std::string other;
  std::thread([&] { other = kairos_last_error(); }).join();
  CHECK(other.empty());
  CHECK(kairos_init("ACTIVITIES_ITERATIONS=-5") == KAIROS_ERR_INVALID_ARGUMENT);
  CHECK(std::strstr(kairos_last_error(), "ACTIVITIES_ITERATIONS") != nullptr);
  CHECK(kairos_set_metadata("k", nullptr) == KAIROS_OK);
  CHECK(std::string(kairos_last_error()).empty());
}

TEST_CASE("kairos_set_metadata is bounded: key and value sizes, number of keys") {
  CHECK(kairos_set_metadata(std::string(257, 'k').c_str(), "v") == KAIROS_ERR_INVALID_ARGUMENT);
  CHECK(std::string(kairos_last_error()) == "kairos_set_metadata: key longer than 256 bytes");
  CHECK(kairos_set_metadata("big", std::string(64 * 1024 + 1, 'v').c_str()) ==
        KAIROS_ERR_INVALID_ARGUMENT);
  CHECK(std::string(kairos_last_error()) ==
        "kairos_set_metadata: value of 'big' longer than 65536 bytes");
  CHECK(kairos_set_metadata(std::string(256, 'k').c_str(), std::string(65536, 'v').c_str()) ==
        KAIROS_OK);
  // Up to 1024 distinct keys (the ones set by earlier cases of this process count too); a key
  // set again replaces its value and costs no slot.
  int added = 0;
  for (int i = 0; i < 2000 && kairos_set_metadata(("cap" + std::to_string(i)).c_str(), "x") ==
                                  KAIROS_OK;
       ++i)
    ++added;
  CHECK(added < 1024);
  CHECK(kairos_set_metadata(("cap" + std::to_string(added)).c_str(), "x") ==
        KAIROS_ERR_RESOURCE_EXHAUSTED);
  CHECK(std::string(kairos_last_error()) ==
        "kairos_set_metadata: at most 1024 keys; 'cap" + std::to_string(added) + "' not added");
  CHECK(kairos_set_metadata("cap0", "replaced") == KAIROS_OK);
}

TEST_CASE("a synchronous session through the C ABI, then shutdown") {
  const TempDir temp("kairos_capi_");
  const std::string& dir = temp.path();
  const std::string cfg = std::string("ACTIVITIES_LOG_FILE=") + dir + "/capi.json";
  REQUIRE(kairos_init(cfg.c_str()) == KAIROS_OK);
  REQUIRE(kairos_start() == KAIROS_OK);
  CHECK(*kairos_recording_flag() != 0);
  CHECK(kairos_start() == KAIROS_ERR_FAILED_PRECONDITION);
  kairos_optimizer_pre_step();
  kairos_range_push("inner");
  kairos_range_pop();
  kairos_optimizer_post_step();
  const uint64_t id = kairos_range_start("async");
  CHECK(id != 0);
  std::thread([id] { kairos_range_end(id); }).join();
  REQUIRE(kairos_stop() == KAIROS_OK);
  const char* path = kairos_flush();
  REQUIRE(path != nullptr);
  CHECK(std::string(path) == std::string(dir) + "/capi_" + std::to_string(getpid()) + ".json");
  CHECK(access(path, R_OK) == 0);
  kairos_shutdown();
  CHECK(kairos_start() == KAIROS_ERR_FAILED_PRECONDITION);
  CHECK(std::string(kairos_last_error()) == "kairos is shut down");
  kairos_range_push("after shutdown");
  kairos_range_pop();
  kairos_shutdown();  // twice is fine
  REQUIRE(kairos_init(nullptr) == KAIROS_OK);
}

TEST_CASE("kairos_init_values: a value is data, so '#' and '=' stay in the path") {
  const TempDir temp("kairos_capi_");
  const std::string& dir = temp.path();
  const std::string want_in = std::string(dir) + "/exp#1 a=b.json";
  const char* keys[] = {"ACTIVITIES_LOG_FILE"};
  const char* values[] = {want_in.c_str()};
  REQUIRE(kairos_init_values("KAIROS_SUMMARY=off", keys, values, 1) == KAIROS_OK);
  REQUIRE(kairos_start() == KAIROS_OK);
  REQUIRE(kairos_stop() == KAIROS_OK);
  const char* path = kairos_flush();
  REQUIRE(path != nullptr);
  CHECK(std::string(path) ==
        std::string(dir) + "/exp#1 a=b_" + std::to_string(getpid()) + ".json");
  CHECK(access(path, R_OK) == 0);
  const char* bad[] = {"/tmp/a\nb.json"};
  CHECK(kairos_init_values(nullptr, keys, bad, 1) == KAIROS_ERR_INVALID_ARGUMENT);
  CHECK(std::string(kairos_last_error()) ==
        "config value 1: ACTIVITIES_LOG_FILE: contains the control character \\x0a (NUL and "
        "control characters are never accepted)");
  CHECK(kairos_init_values(nullptr, nullptr, nullptr, 1) == KAIROS_ERR_INVALID_ARGUMENT);
  CHECK(std::string(kairos_last_error()) == "kairos_init_values: keys and values must not be NULL");
  CHECK(kairos_init_values(nullptr, nullptr, nullptr, 0) == KAIROS_OK);
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// How often `needle` occurs in the file at `path`.
size_t Occurrences(const std::string& path, const std::string& needle) {
  const std::string text = ReadText(path);
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The digits of kairos_stats' `name` in the trace at `path` ("" when absent).
std::string StatText(const std::string& path, const std::string& name) {
  const std::string text = ReadText(path);
  size_t at = text.find("\"" + name + "\":");
  if (at == std::string::npos) return "";
  at += name.size() + 3;
  while (at < text.size() && text[at] == ' ') ++at;
  size_t end = at;
  while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
  return text.substr(at, end - at);
}

// A thread that recorded in one window and exits after that window was written: its records
// were read already. They used to be copied into the records kept for exited threads, and
// counted against the next window's bound (KAIROS_MAX_THREADS x the per-thread buffer), so the
// short-lived threads of that window lost every record (8 dropped of 8 here).
TEST_CASE("short-lived threads keep their records after a thread of the previous window exits") {
  const TempDir temp("kairos_capi_");
  const std::string& dir = temp.path();
  std::string cfg = std::string("ACTIVITIES_LOG_FILE=") + dir +
                    "/w1.json\nKAIROS_SUMMARY=off\nKAIROS_CPU_BUFFER_KB_PER_THREAD=512\n"
                    "KAIROS_MAX_THREADS=3\n";
  REQUIRE(kairos_init(cfg.c_str()) == KAIROS_OK);
  REQUIRE(kairos_start() == KAIROS_OK);
  std::atomic<int> phase{0};
  std::thread early([&phase] {
    for (int i = 0; i < 7000; ++i) {  // 14,000 records: over the next window's 3 x 4,096
      kairos_range_push("early");
      kairos_range_pop();
    }
    phase = 1;
    while (phase.load() != 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (phase.load() != 1) std::this_thread::yield();
  REQUIRE(kairos_stop() == KAIROS_OK);
  const char* first = kairos_flush();
  REQUIRE(first != nullptr);
  CHECK(Occurrences(first, "\"name\":\"early\"") == 7000);
  phase = 2;
  early.join();  // exits after its window was written
  cfg = std::string("ACTIVITIES_LOG_FILE=") + dir +
        "/w2.json\nKAIROS_SUMMARY=off\nKAIROS_CPU_BUFFER_KB_PER_THREAD=96\nKAIROS_MAX_THREADS=3\n";
  REQUIRE(kairos_init(cfg.c_str()) == KAIROS_OK);
  REQUIRE(kairos_start() == KAIROS_OK);
  for (int i = 0; i < 4; ++i) {
    std::thread([] {
      kairos_range_push("late");
      kairos_range_pop();
    }).join();
  }
  REQUIRE(kairos_stop() == KAIROS_OK);
  const char* second = kairos_flush();
  REQUIRE(second != nullptr);
  CHECK(Occurrences(second, "\"name\":\"late\"") == 4);
  CHECK(StatText(second, "cpu_dropped") == "0");
}

}  // namespace
