// File: session_state.h
// Layer: kairos_session. The one recording lifecycle: idle -> warm-up -> recording ->
// flushing -> idle (warm-up may also return to idle when a request is cancelled). Every
// change goes through Transition(), which checks the table and logs at verbose level.
// Threading: not synchronised itself; the Profiler changes it under its mutex. Producers
// never read it: they see only g_cpu_epoch (src/activity/cpu_recorder.h).
#ifndef KAIROS_SRC_SESSION_SESSION_STATE_H_
#define KAIROS_SRC_SESSION_SESSION_STATE_H_

#include <cstdint>

namespace kairos {

enum class SessionState : uint8_t { kIdle = 0, kWarmup, kRecording, kFlushing };

const char* SessionStateName(SessionState s);

// True when `from -> to` is a legal edge:
//   idle -> warm-up          a request was accepted
//   warm-up -> recording     the window opened
//   warm-up -> idle          cancelled (pre-empted, flush, shutdown, fork, fallback failed)
//   recording -> flushing    the window closed
//   flushing -> idle         the trace was written (or the write failed)
bool IsLegalTransition(SessionState from, SessionState to);

class SessionStateMachine {
 public:
  SessionState state() const { return state_; }
  // Moves from `from` to `to`. Returns false (and changes nothing) when the current state
  // is not `from` or the edge is illegal; that is a kairos bug, logged as a warning.
  bool Transition(SessionState from, SessionState to);

 private:
  SessionState state_ = SessionState::kIdle;
};

}  // namespace kairos

#endif  // KAIROS_SRC_SESSION_SESSION_STATE_H_
