// File: bench/fresh_memory_probe.cc
// Layer: bench (a probe of the machine, not of kairos; not in bench_all).
// What making memory resident costs here, the way the ring feeder does it (thread_ring.cc
// PopulateRange: one 2 MiB-aligned chunk at a time, MADV_HUGEPAGE for the chunk, then
// MADV_POPULATE_WRITE). On a virtual machine whose host takes freed guest memory back (a
// balloon with free-page reporting), the first process to touch such memory again pays the
// host's faults too: each chunk costs milliseconds instead of a fraction of one, though the
// guest kernel hands out a huge page at once (no compaction stall in /proc/vmstat). Run it
// several times in a row: the first run after the machine was idle shows the host's cost, the
// next ones reuse memory the host still backs. docs/PERFORMANCE.md (long windows) has results.
// Usage: fresh_memory_probe [chunks=128]
#include <sys/mman.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14
#endif

int main(int argc, char** argv) {
  const size_t chunk = size_t{2} << 20;
  const size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 128;
  if (n == 0) return 2;
  const size_t span = chunk * (n + 1);
  void* p = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  if (p == MAP_FAILED) return 1;
  auto* base = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(p) + chunk - 1) & ~(chunk - 1));
  double total_ms = 0, max_ms = 0;
  size_t slow = 0;
  for (size_t i = 0; i < n; ++i) {
    uint8_t* c = base + i * chunk;
    (void)madvise(c, chunk, MADV_HUGEPAGE);
    const auto t0 = std::chrono::steady_clock::now();
    if (madvise(c, chunk, MADV_POPULATE_WRITE) != 0) {
      std::printf("fresh_memory_probe: MADV_POPULATE_WRITE failed (kernel older than 5.14?)\n");
      return 1;
    }
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    total_ms += ms;
    if (ms > max_ms) max_ms = ms;
    if (ms > 1.0) ++slow;
  }
  std::printf("%zu x 2 MiB populated: mean %.3f ms per chunk (%.2f GB/s), max %.3f ms, %zu over 1 ms\n",
              n, total_ms / static_cast<double>(n),
              static_cast<double>(n * chunk) / (total_ms * 1e6), max_ms, slow);
  munmap(p, span);
  return 0;
}
