// File: test/sim/tests/samples/ptx_diff_test.cc
// Layer: simulator tests, kernel execution: the decoded fast path (ptx_fast.h) against the
//        reference interpreter (ptx_exec.h). Every kernel nvcc emits for diff_kernels.cu and
//        for this folder's sample programs, and those of diff_guarded.ptx, runs on both, in several launch shapes, over the
//        same random memory; the two must leave every byte the same and report the same
//        ExecResult (completed, thread-instruction count, the problem text of a fault or of
//        the instruction cap).
// Threading: single-threaded.
#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "ptx_exec.h"
#include "ptx_fast.h"
#include "ptx_parse.h"

namespace {

using kairos::sim::ptx::ExecResult;
using kairos::sim::ptx::Kernel;
using kairos::sim::ptx::LaunchDims;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> EntryNames(const std::string& ptx) {
  std::vector<std::string> names;
  const std::regex entry(R"(\.entry\s+([A-Za-z_$][A-Za-z0-9_$]*)\s*\()");
  for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), entry); it != std::sregex_iterator(); ++it) {
    names.push_back((*it)[1].str());
  }
  return names;
}

// The memory a launch may touch: a few buffers of random bytes (pointer parameters point into
// them) and one per __device__ variable; one flat copy holds them all so a run can be reset.
constexpr size_t kBufBytes = 64 * 1024;
constexpr size_t kBuffers = 6;

struct Memory {
  std::vector<uint8_t> bytes;  // kBuffers data buffers, then the variables

  explicit Memory(uint32_t seed) : bytes(kBuffers * kBufBytes + 16 * 1024) {
    std::mt19937 rng(seed);
    for (size_t i = 0; i < kBuffers * kBufBytes; ++i) bytes[i] = static_cast<uint8_t>(rng());
  }
  uint64_t Buffer(size_t i) { return reinterpret_cast<uint64_t>(bytes.data() + (i % kBuffers) * kBufBytes); }
  uint64_t Variable(size_t i) { return reinterpret_cast<uint64_t>(bytes.data() + kBuffers * kBufBytes + i * 64); }
  bool Resolve(uint64_t a, uint64_t n, uint64_t* lo, uint64_t* hi) {
    const uint64_t base = reinterpret_cast<uint64_t>(bytes.data());
    for (size_t i = 0; i < kBuffers; ++i) {
      const uint64_t b = base + i * kBufBytes;
      if (a >= b && a + n <= b + kBufBytes) {
        *lo = b;
        *hi = b + kBufBytes;
        return true;
      }
    }
    const uint64_t v = base + kBuffers * kBufBytes;
    if (a >= v && a + n <= base + bytes.size()) {
      *lo = v;
      *hi = base + bytes.size();
      return true;
    }
    return false;
  }
};

struct Shape {
  LaunchDims dims;
  uint32_t int_param;  // every 32-bit parameter (sizes, counts, strides)
};

Shape MakeShape(uint32_t gx, uint32_t gy, uint32_t bx, uint32_t by, uint32_t dyn, uint32_t ints) {
  Shape s;
  s.dims.grid[0] = gx;
  s.dims.grid[1] = gy;
  s.dims.block[0] = bx;
  s.dims.block[1] = by;
  s.dims.dynamic_shared = dyn;
  s.int_param = ints;
  return s;
}

struct Outcome {
  ExecResult result;
  std::vector<uint8_t> memory;
};

enum class Engine { kReference, kFast };

Outcome Run(Engine engine, const Kernel& k, const kairos::sim::ptx::FastKernel& fk, const Shape& shape,
            const Memory& initial) {
  Memory mem = initial;
  std::vector<uint8_t> params(k.param_bytes + 8, 0);
  for (size_t i = 0; i < k.param_offset.size(); ++i) {
    uint8_t* p = params.data() + k.param_offset[i];
    if (k.param_size[i] == 8) {
      const uint64_t a = mem.Buffer(i) + 64 * i;  // not every pointer at a buffer's start
      std::memcpy(p, &a, 8);
    } else if (k.param_size[i] == 4) {
      std::memcpy(p, &shape.int_param, 4);
    } else {
      for (uint32_t b = 0; b < k.param_size[i]; ++b) p[b] = static_cast<uint8_t>(17 * b + i);
    }
  }
  auto resolve = [&mem](uint64_t a, uint64_t n, uint64_t* lo, uint64_t* hi) { return mem.Resolve(a, n, lo, hi); };
  constexpr uint64_t kCap = 1'000'000;  // thread-instructions: a spinning kernel stops here
  Outcome o;
  o.result = engine == Engine::kReference ? kairos::sim::ptx::Execute(k, shape.dims, params.data(), resolve, kCap)
                                          : kairos::sim::ptx::ExecuteFast(fk, shape.dims, params.data(), resolve, kCap);
  o.memory = std::move(mem.bytes);
  return o;
}

}  // namespace

TEST_CASE("the fast path and the reference interpreter leave the same bytes and results", "[diff]") {
  const std::vector<Shape> shapes = {
      MakeShape(2, 1, 128, 1, 0, 200),     // guards split a block: 200 of 256 threads in range
      MakeShape(3, 2, 16, 4, 256, 300),    // 2D grid and block, dynamic shared memory
      MakeShape(1, 1, 32, 1, 64, 5),       // one warp-sized block, short loops
      MakeShape(4, 1, 256, 1, 1024, 100),  // strides that leave the buffer part way
  };
  int kernels = 0, runs = 0, completed = 0, stopped = 0;
  std::set<std::string> stop_reasons;
  for (const char* path : {PTX_FILES}) {
    const std::string ptx = ReadFile(path);
    for (const std::string& name : EntryNames(ptx)) {
      std::vector<std::string> var_names;
      Memory initial(static_cast<uint32_t>(std::hash<std::string>()(name)));
      auto globals = [&](const std::string& var, uint64_t* addr) {
        var_names.push_back(var);
        *addr = initial.Variable(var_names.size() - 1);
        return true;
      };
      Kernel k;
      std::string why;
      if (kairos::sim::ptx::ParseKernel(ptx, name, globals, &k, &why) != kairos::sim::ptx::ParseResult::kOk) {
        INFO(name << ": " << why);
        CHECK(name == "_Z13subsetShufflePi");  // the one kernel outside the subset, on purpose
        continue;
      }
      ++kernels;
      const kairos::sim::ptx::FastKernel fk = kairos::sim::ptx::CompileFast(k);
      for (const Shape& shape : shapes) {
        INFO(name << " grid " << shape.dims.grid[0] << "x" << shape.dims.grid[1] << " block " << shape.dims.block[0]
                  << "x" << shape.dims.block[1] << " int " << shape.int_param);
        const Outcome ref = Run(Engine::kReference, k, fk, shape, initial);
        const Outcome fast = Run(Engine::kFast, k, fk, shape, initial);
        CHECK(fast.result.completed == ref.result.completed);
        CHECK(fast.result.thread_instructions == ref.result.thread_instructions);
        CHECK(fast.result.problem == ref.result.problem);
        CHECK(fast.memory == ref.memory);
        ++runs;
        if (ref.result.completed) {
          ++completed;
        } else {
          ++stopped;
          stop_reasons.insert(ref.result.problem.substr(0, ref.result.problem.find(' ', 12)));
          UNSCOPED_INFO(name << ": " << ref.result.problem);
        }
      }
    }
  }
  // Every kernel of the files ran in every shape; some ran to the end and some stopped, by a
  // fault and by the instruction cap, so both engines' stopping paths were compared too.
  // diff_kernels 7, diff_guarded 1, ptx_subset 7 (of 8), simple_hyperq 3, the other samples 1 each
  CHECK(kernels == 22);
  CHECK(runs == kernels * static_cast<int>(shapes.size()));
  CHECK(completed > 0);
  CHECK(stopped > 0);
  CHECK(stop_reasons.count("illegal address") == 1);
  CHECK(stop_reasons.count("instruction cap") == 1);
}
