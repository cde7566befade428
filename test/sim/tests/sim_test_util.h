// File: test/sim/tests/sim_test_util.h
// Layer: simulator tests: a CUPTI activity collector for Catch2 tests.
// Threading: buffer callbacks may arrive on CUPTI's worker thread; all shared
//            state is behind one mutex.
//
// Registers buffer callbacks once per process, copies every delivered record
// and remembers which threads delivered buffers, so tests can assert exact
// record streams.
#ifndef KAIROS_TEST_SIM_TESTS_SIM_TEST_UTIL_H_
#define KAIROS_TEST_SIM_TESTS_SIM_TEST_UTIL_H_

#include <cupti.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <thread>
#include <vector>

namespace ksim_test {

using Record = std::vector<uint8_t>;

// Registers the callbacks (idempotent).
void EnsureRegistered();
// Size of buffers handed to CUPTI from now on.
void SetBufferSize(size_t bytes);
// Flushes (device sync first unless `no_sync`) and returns all records
// delivered since the previous Take().
std::vector<Record> Take(uint32_t flush_flag = 0, bool no_sync = false);
// Records delivered so far without flushing (for worker-thread tests).
size_t DeliveredBuffers();
std::vector<std::thread::id> DeliveringThreads();

// Enables kinds for one test and disables them afterwards.
class Kinds {
 public:
  Kinds(std::initializer_list<CUpti_ActivityKind> kinds);
  ~Kinds();

 private:
  std::vector<CUpti_ActivityKind> kinds_;
};

inline uint32_t KindOf(const Record& r) {
  uint32_t k;
  std::memcpy(&k, r.data(), sizeof(k));
  return k;
}

template <typename T>
std::vector<T> Of(const std::vector<Record>& records, CUpti_ActivityKind kind) {
  std::vector<T> out;
  for (const Record& r : records) {
    if (KindOf(r) == static_cast<uint32_t>(kind) && r.size() == sizeof(T)) {
      T t;
      std::memcpy(&t, r.data(), sizeof(T));
      out.push_back(t);
    }
  }
  return out;
}

}  // namespace ksim_test

// Kernel launch helpers compiled by nvcc (sim_kernels.cu).
extern "C" {
int KsimLaunchScale(float* data, int n, unsigned grid, unsigned block, struct CUstream_st* stream);
int KsimLaunchScaleShared(float* data, int n, unsigned grid, unsigned block, size_t shared, struct CUstream_st* stream);
int KsimLaunchPinned(struct CUstream_st* stream);
int KsimLaunchExplicit(float* data, int n, struct CUstream_st* stream);
const void* KsimScaleHostStub();
}

#endif  // KAIROS_TEST_SIM_TESTS_SIM_TEST_UTIL_H_
