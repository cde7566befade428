#!/bin/sh
# File: tools/test.sh — THE test command of the README (and of .ci/run).
# Configures and builds a normal build in build/ and runs ctest, then an ASan+UBSan build in
# build-asan/ and runs ctest there. Benchmarks and examples are built in the normal build
# only. Uses every core the machine has (on 2 cores: well under 20 minutes).
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

echo "== normal build (build/)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")

echo "== ASan+UBSan build (build-asan/)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKAIROS_ASAN=ON \
  -DKAIROS_BUILD_BENCH=OFF -DKAIROS_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j"$jobs")
echo "== all tests passed (normal + ASan/UBSan)"
