// File: nvtx_train.cc
// Layer: examples/nvtx. The C++ flavour: nvtx3.hpp scoped ranges in a custom domain, with
// a data-loader thread named through NVTX and a cross-thread start/end range. No kairos
// call; trace it with (one shell line)
//   NVTX_INJECTION64_PATH=<build>/lib/libkairos.so
//   KAIROS_CONFIG_TEXT='ACTIVITIES_WARMUP_PERIOD_SECS=0;ACTIVITIES_DURATION_MSECS=500;ACTIVITIES_LOG_FILE=/tmp/nvtx_cpp.json'
//   <build>/bin/nvtx_train_cpp
// Threading: main thread plus one loader thread.
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <nvtx3/nvtx3.hpp>

namespace {

struct TrainerDomain {
  static constexpr const char* name{"trainer"};
};

void Busy(std::chrono::microseconds d) {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 50;
  nvtxNameOsThreadA(static_cast<uint32_t>(syscall(SYS_gettid)), "trainer-main");
  for (int i = 0; i < steps; ++i) {
    nvtx3::scoped_range_in<TrainerDomain> step{nvtx3::message{"step"}, nvtx3::payload{i}};
    // The next batch is prepared on another thread; the range spans both threads.
    const nvtxRangeId_t prefetch = nvtxRangeStartA("prefetch");
    std::thread loader([prefetch] {
      nvtxNameOsThreadA(static_cast<uint32_t>(syscall(SYS_gettid)), "loader");
      Busy(std::chrono::microseconds(400));
      nvtxRangeEnd(prefetch);
    });
    {
      nvtx3::scoped_range_in<TrainerDomain> fwd{nvtx3::message{"forward"},
                                                nvtx3::rgb{30, 136, 229}};
      Busy(std::chrono::microseconds(1500));
    }
    {
      nvtx3::scoped_range_in<TrainerDomain> bwd{nvtx3::message{"backward"},
                                                nvtx3::rgb{229, 57, 53}};
      Busy(std::chrono::microseconds(2500));
    }
    loader.join();
    nvtx3::mark_in<TrainerDomain>(nvtx3::message{"optimizer_step"});
  }
  std::printf("ran %d steps\n", steps);
  return 0;
}
