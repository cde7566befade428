// File: signal_mask.h
// Layer: kairos_util. Every kairos thread is started with SIGTERM and SIGINT blocked, so it
// never takes the job's termination signals: the job's handlers, and kairos' flush on signal,
// run on the job's own threads. A thread inherits its creator's mask, so blocking the two
// signals on the creating thread around the start is enough.
// Threading: the guard changes the calling thread's mask only.
#ifndef KAIROS_SRC_UTIL_SIGNAL_MASK_H_
#define KAIROS_SRC_UTIL_SIGNAL_MASK_H_

#include <pthread.h>
#include <signal.h>

namespace kairos {

// Blocks SIGTERM and SIGINT on the calling thread for its lifetime, then restores the mask the
// thread had, whatever happened in between (a thread that failed to start included).
class JobSignalsBlocked {
 public:
  JobSignalsBlocked() {
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    pthread_sigmask(SIG_BLOCK, &block, &old_);
  }
  ~JobSignalsBlocked() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  JobSignalsBlocked(const JobSignalsBlocked&) = delete;
  JobSignalsBlocked& operator=(const JobSignalsBlocked&) = delete;

 private:
  sigset_t old_;
};

}  // namespace kairos

#endif  // KAIROS_SRC_UTIL_SIGNAL_MASK_H_
