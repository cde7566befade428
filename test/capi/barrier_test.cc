// File: barrier_test.cc
// Layer: test/capi. The exception barrier of the C ABI: bindings/c/kairos_c.cc is compiled
// into this test (statically, with the session library, and the session's api.cc built here
// with KAIROS_TEST_SEAMS) so the core's test hook can force
// an exception under each entry point; none may escape, each returns its documented error
// result and leaves a message in kairos_last_error().
// Threading: single-threaded.
#include <catch2/catch.hpp>

#include <string>

#include "kairos.h"
#include "session/api.h"

namespace {

std::string LastError() { return kairos_last_error(); }

TEST_CASE("an exception under a C entry point becomes KAIROS_ERR_INTERNAL") {
  kairos::api::ThrowOnNextCallForTest();
  CHECK(kairos_start() == KAIROS_ERR_INTERNAL);
  CHECK(LastError() ==
        "internal error in kairos_start: exception forced by ThrowOnNextCallForTest");

  kairos::api::ThrowOnNextCallForTest();
  CHECK(kairos_init("ACTIVITIES_LOG_FILE=/tmp/x.json") == KAIROS_ERR_INTERNAL);
  CHECK(LastError().rfind("internal error in kairos_init", 0) == 0);

  kairos::api::ThrowOnNextCallForTest();
  CHECK(kairos_flush() == nullptr);
  CHECK(LastError().rfind("internal error in kairos_flush", 0) == 0);

  kairos::api::ThrowOnNextCallForTest();
  CHECK(kairos_set_metadata("k", "v") == KAIROS_ERR_INTERNAL);

  kairos::api::ThrowOnNextCallForTest();
  kairos_shutdown();  // void: the barrier swallows it
  CHECK(LastError().rfind("internal error in kairos_shutdown", 0) == 0);

  kairos::api::ThrowOnNextCallForTest();
  CHECK(kairos_stop() == KAIROS_ERR_INTERNAL);

  // The hook fires once: the library works normally afterwards.
  CHECK(kairos_init(nullptr) == KAIROS_OK);
  CHECK(kairos_stop() == KAIROS_ERR_FAILED_PRECONDITION);
  CHECK(LastError() == "no trace is recording");
}

}  // namespace
