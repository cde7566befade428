// File: bench/sim_exec_bench.cc
// Layer: benchmark: the simulator's kernel execution (test/sim/src/ptx_*): the decoded fast
//        path against the reference interpreter, same kernels, same inputs, same run.
// Threading: single-threaded.
//
// The kernels are this project's sample programs' (test/sim/tests/samples/*.cu, as PTX), run at
// the sizes NVIDIA's public samples of the same kind use by default: simpleStreams' array of
// 16 M ints with 5 increments per element (one launch of the 201 it makes), simpleMultiCopy's
// 4 M ints with 5 inner repetitions, vectorAdd's 50 000 floats. Each launch runs on both
// engines; the output bytes must agree. Reported: seconds (best of 3), ns per
// thread-instruction, and the reference/fast ratio. Command and results: docs/PERFORMANCE.md,
// "Simulator kernel execution".
#include <algorithm>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "ptx_exec.h"
#include "ptx_fast.h"
#include "ptx_parse.h"

namespace {

namespace ptx = kairos::sim::ptx;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct Buffer {
  std::vector<uint8_t> bytes;
  uint64_t Addr() const { return reinterpret_cast<uint64_t>(bytes.data()); }
};

struct Case {
  const char* title;
  const char* ptx_file;
  const char* kernel;
  uint32_t grid, block;
  std::vector<size_t> buffer_bytes;  // pointer parameters, in order
  std::vector<int32_t> ints;         // 32-bit parameters, in order after the pointers
  std::vector<int32_t> fill;         // each buffer's ints start at fill[i] + index
};

// CPU time of this thread: the development machine is shared, and wall time under load says
// more about the neighbours than about the engines.
double ThreadSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main() {
  const std::string dir = KSIM_SAMPLE_PTX_DIR;
  const uint32_t n16m = 16u << 20, n4m = 4u << 20, n50k = 50000;
  const std::vector<Case> cases = {
      {"simpleStreams init_array, 16M x 5", "simple_streams.ptx", "_Z15sampleInitArrayPiPKii", n16m / 512, 512,
       {n16m * 4ull, 4}, {5}, {0, 3}},
      {"simpleMultiCopy incKernel, 4M x 5", "simple_multi_copy.ptx", "_Z15sampleIncKernelPiPKiii", n4m / 512, 512,
       {n4m * 4ull, n4m * 4ull}, {static_cast<int32_t>(n4m), 5}, {0, 1}},
      {"vectorAdd, 50000", "vector_add.ptx", "_Z15sampleVectorAddPKfS0_Pfi", (n50k + 255) / 256, 256,
       {n50k * 4ull, n50k * 4ull, n50k * 4ull}, {static_cast<int32_t>(n50k)}, {1, 2, 0}},
  };
  std::printf("%-36s %14s %10s %10s %8s %8s %7s\n", "kernel", "thread-instr", "ref s", "fast s", "ref ns", "fast ns",
              "ratio");
  int status = 0;
  const char* only = std::getenv("SIM_EXEC_BENCH_ONLY");  // "fast": skip the reference (for profiling)
  for (const Case& c : cases) {
    ptx::Kernel k;
    std::string why;
    auto no_globals = [](const std::string&, uint64_t*) { return false; };
    if (ptx::ParseKernel(ReadFile(dir + "/" + c.ptx_file), c.kernel, no_globals, &k, &why) != ptx::ParseResult::kOk) {
      std::printf("%s: cannot decode %s (%s)\n", c.title, c.kernel, why.c_str());
      return 1;
    }
    const ptx::FastKernel fk = ptx::CompileFast(k);
    ptx::LaunchDims dims;
    dims.grid[0] = c.grid;
    dims.block[0] = c.block;
    std::vector<uint8_t> out[2];
    double best[2] = {1e30, 1e30};
    uint64_t instructions = 0;
    for (int rep = 0; rep < 3; ++rep) {
      for (int engine = only != nullptr && std::strcmp(only, "fast") == 0 ? 1 : 0; engine < 2; ++engine) {
        std::vector<Buffer> bufs(c.buffer_bytes.size());
        for (size_t i = 0; i < bufs.size(); ++i) {
          bufs[i].bytes.resize(c.buffer_bytes[i]);
          for (size_t j = 0; j < c.buffer_bytes[i] / 4; ++j) {
            const int32_t v = c.fill[i] + static_cast<int32_t>(j % 1000);
            std::memcpy(bufs[i].bytes.data() + 4 * j, &v, 4);
          }
        }
        std::vector<uint8_t> params(k.param_bytes + 8, 0);
        for (size_t i = 0; i < k.param_offset.size(); ++i) {
          if (i < bufs.size()) {
            const uint64_t a = bufs[i].Addr();
            std::memcpy(params.data() + k.param_offset[i], &a, 8);
          } else {
            std::memcpy(params.data() + k.param_offset[i], &c.ints[i - bufs.size()], 4);
          }
        }
        auto resolve = [&bufs](uint64_t a, uint64_t n, uint64_t* lo, uint64_t* hi) {
          for (const Buffer& b : bufs) {
            if (a >= b.Addr() && a + n <= b.Addr() + b.bytes.size()) {
              *lo = b.Addr();
              *hi = b.Addr() + b.bytes.size();
              return true;
            }
          }
          return false;
        };
        const double t0 = ThreadSeconds();
        const ptx::ExecResult r = engine == 0 ? ptx::Execute(k, dims, params.data(), resolve, ~0ull)
                                              : ptx::ExecuteFast(fk, dims, params.data(), resolve, ~0ull);
        best[engine] = std::min(best[engine], ThreadSeconds() - t0);
        if (!r.completed) {
          std::printf("%s: stopped: %s\n", c.title, r.problem.c_str());
          return 1;
        }
        instructions = r.thread_instructions;
        out[engine].clear();
        for (const Buffer& b : bufs) out[engine].insert(out[engine].end(), b.bytes.begin(), b.bytes.end());
      }
      if (!out[0].empty() && out[0] != out[1]) {
        std::printf("%s: the engines' outputs differ\n", c.title);
        status = 1;
      }
    }
    const double ni = static_cast<double>(instructions);
    std::printf("%-36s %14llu %10.3f %10.3f %8.2f %8.2f %6.1fx\n", c.title, static_cast<unsigned long long>(instructions),
                best[0], best[1], best[0] * 1e9 / ni, best[1] * 1e9 / ni, best[0] / best[1]);
  }
  return status;
}
