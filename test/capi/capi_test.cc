// File: capi_test.cc
// Layer: test/capi. The C ABI through libkairos.so: version, status strings, error codes
// and the thread-local last error, calls before init / with bad arguments / after
// shutdown, the recording flag, and a whole synchronous session.
// Threading: the test thread plus one thread for the thread-local error check.
#include "kairos.h"

#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <thread>

namespace {

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
  char dir[] = "/tmp/kairos_capi_XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
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
  char dir[] = "/tmp/kairos_capi_XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
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

}  // namespace
