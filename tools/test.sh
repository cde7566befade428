#!/bin/sh
# File: tools/test.sh — THE test command of the README (and of .ci/run).
# 1. A normal optimised build in build/ (library, CLI, examples, simulator, benchmarks) and
#    its whole ctest suite, including the end-to-end runs on the CUDA simulator.
# 2. An ASan+UBSan build in build-asan/ (tests only) and its ctest suite.
# Debug info is kept minimal (-g1) in both: it is what makes sanitizer reports readable, and
# full -g roughly doubles compile and link time on the 2-core CI machines.
# The TSan build is a CMake option too (-DKAIROS_TSAN=ON); see docs/TESTING.md.
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

echo "== normal build (build/)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")

echo "== ASan+UBSan build (build-asan/)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKAIROS_ASAN=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DKAIROS_BUILD_BENCH=OFF -DKAIROS_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j"$jobs")
echo "== all tests passed (normal + ASan/UBSan)"
