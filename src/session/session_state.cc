// File: session_state.cc — see session_state.h.
// Layer: kairos_session. Threading: caller's lock.
#include "session/session_state.h"

#include "log.h"

namespace kairos {

const char* SessionStateName(SessionState s) {
  switch (s) {
    case SessionState::kIdle: return "idle";
    case SessionState::kWarmup: return "warm-up";
    case SessionState::kRecording: return "recording";
    case SessionState::kFlushing: return "flushing";
  }
  return "?";
}

bool IsLegalTransition(SessionState from, SessionState to) {
  static constexpr bool kTable[4][4] = {
      //            idle   warmup recording flushing   (to)
      /* idle */    {false, true,  false,    false},
      /* warmup */  {true,  false, true,     false},
      /* recording*/{false, false, false,    true},
      /* flushing */{true,  false, false,    false},
  };
  return kTable[static_cast<int>(from)][static_cast<int>(to)];
}

bool SessionStateMachine::Transition(SessionState from, SessionState to) {
  if (state_ != from || !IsLegalTransition(from, to)) {
    KAIROS_LOG_WARNING("internal: illegal session transition %s -> %s (state is %s)",
                       SessionStateName(from), SessionStateName(to), SessionStateName(state_));
    return false;
  }
  state_ = to;
  KAIROS_LOG_VERBOSE("session: %s -> %s", SessionStateName(from), SessionStateName(to));
  return true;
}

}  // namespace kairos
