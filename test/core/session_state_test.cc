// File: session_state_test.cc
// Layer: test/core. The transition table and TextNamesWindow.
// Threading: single-threaded.
#include "session/session_state.h"

#include <catch2/catch.hpp>

#include "session/profiler.h"

namespace kairos {
namespace {

TEST_CASE("only the lifecycle edges are legal") {
  using S = SessionState;
  const S all[] = {S::kIdle, S::kWarmup, S::kRecording, S::kFlushing};
  int legal = 0;
  for (S from : all)
    for (S to : all) legal += IsLegalTransition(from, to) ? 1 : 0;
  CHECK(legal == 5);
  CHECK(IsLegalTransition(S::kIdle, S::kWarmup));
  CHECK(IsLegalTransition(S::kWarmup, S::kRecording));
  CHECK(IsLegalTransition(S::kWarmup, S::kIdle));
  CHECK(IsLegalTransition(S::kRecording, S::kFlushing));
  CHECK(IsLegalTransition(S::kFlushing, S::kIdle));
  CHECK_FALSE(IsLegalTransition(S::kRecording, S::kIdle));
}

TEST_CASE("Transition refuses a wrong current state and leaves it unchanged") {
  SessionStateMachine sm;
  CHECK_FALSE(sm.Transition(SessionState::kWarmup, SessionState::kRecording));
  CHECK(sm.state() == SessionState::kIdle);
  CHECK(sm.Transition(SessionState::kIdle, SessionState::kWarmup));
  CHECK_FALSE(sm.Transition(SessionState::kWarmup, SessionState::kFlushing));
  CHECK(sm.state() == SessionState::kWarmup);
  CHECK(std::string(SessionStateName(sm.state())) == "warm-up");
}

TEST_CASE("TextNamesWindow finds trigger keys only") {
  CHECK(TextNamesWindow("ACTIVITIES_ITERATIONS=3"));
  CHECK(TextNamesWindow("  PROFILE_START_TIME = 5 \n"));
  CHECK(TextNamesWindow("ACTIVITIES_LOG_FILE=/x.json;ACTIVITIES_DURATION_MSECS=10"));
  CHECK_FALSE(TextNamesWindow("ACTIVITIES_LOG_FILE=/x.json"));
  CHECK_FALSE(TextNamesWindow("# ACTIVITIES_ITERATIONS=3"));
  CHECK_FALSE(TextNamesWindow("ACTIVITIES_LOG_FILE=/ACTIVITIES_ITERATIONS=3"));
  CHECK_FALSE(TextNamesWindow(""));
}

}  // namespace
}  // namespace kairos
