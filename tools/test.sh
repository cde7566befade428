#!/bin/sh
# File: tools/test.sh — THE test command of the README (and of .ci/run).
# 1. A normal optimised build in build/ (library, CLI, examples, simulator, benchmarks) and
#    its whole ctest suite, including the end-to-end runs on the CUDA simulator and the abuse
#    suite (label "abuse").
# 2. An ASan+UBSan build in build-asan/ (tests only) and its ctest suite.
# 3. A TSan build in build-tsan/ of the tests that run threads (label "concurrency", target
#    kairos_concurrency_tests) and those tests.
# 4. The libFuzzer targets (tools/fuzz.sh): config parser, Dynolog IPC decoder, daemon RPC,
#    JSON reader, JSON escaper, Perfetto reader, each for KAIROS_FUZZ_SECONDS (default 20)
#    from its committed corpus.
# Debug info is kept minimal (-g1): it is what makes sanitizer reports readable, and full -g
# roughly doubles compile and link time on the 2-core CI machines. Phase times are printed
# (docs/TESTING.md lists measured ones; the whole run must stay under 30 min on 2 cores).
# Each ctest run gets a private, empty TMPDIR, and the phase fails, naming what is left, if
# the tests leave anything in it: a test removes its temp files (test/temp_dir.h for C++,
# tempfile for Python, mktemp + trap for shell), and the traces the library writes to its
# default directory (TMPDIR) count too (docs/TESTING.md, "Temporary files").
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
t0=$(date +%s)
phase() { echo "== [$(( $(date +%s) - t0 )) s] $1"; }

# in_private_tmp BUILD_DIR COMMAND...: runs COMMAND in BUILD_DIR with TMPDIR set to a new,
# empty directory. Afterwards, if anything is left in it, prints each entry (a directory with
# the number of entries inside it; at most 50 lines) and fails (exit 1, or COMMAND's status
# if COMMAND failed too); the directory is removed in every case.
private_tmp=""
trap 'if [ -n "$private_tmp" ]; then rm -rf "$private_tmp"; fi' EXIT
in_private_tmp() {
  build_dir=$1
  shift
  private_tmp=$(mktemp -d)
  status=0
  (cd "$build_dir" && TMPDIR=$private_tmp && export TMPDIR && "$@") || status=$?
  left=$(cd "$private_tmp" && for e in * .[!.]* ..?*; do
    if [ -d "$e" ] && [ ! -L "$e" ]; then
      echo "$e/ ($(find "$e" -mindepth 1 | wc -l | tr -d ' ') entries inside)"
    elif [ -e "$e" ] || [ -L "$e" ]; then
      echo "$e"
    fi
  done)
  if [ -n "$left" ]; then
    n=$(printf '%s\n' "$left" | wc -l | tr -d ' ')
    echo "FAIL: the tests run in $build_dir/ left files in their private TMPDIR (entries: $n)." \
      "A test removes what it creates (test/temp_dir.h, tempfile.TemporaryDirectory, mktemp +" \
      "trap) and points the library's output (default: TMPDIR) into its own temp directory:" >&2
    printf '%s\n' "$left" | head -n 50 | sed 's/^/  /' >&2
    [ "$status" -ne 0 ] || status=1
  fi
  rm -rf "$private_tmp"
  private_tmp=""
  return "$status"
}

phase "normal build (build/)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKAIROS_WERROR=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" >/dev/null
cmake --build build -j"$jobs"
in_private_tmp build ctest --output-on-failure -j"$jobs"

phase "ASan+UBSan build (build-asan/)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKAIROS_ASAN=ON -DKAIROS_WERROR=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DKAIROS_BUILD_BENCH=OFF -DKAIROS_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-asan -j"$jobs"
in_private_tmp build-asan env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j"$jobs"

phase "TSan build of the concurrency tests (build-tsan/)"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKAIROS_TSAN=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DKAIROS_BUILD_BENCH=OFF -DKAIROS_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-tsan -j"$jobs" --target kairos_concurrency_tests
in_private_tmp build-tsan env TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:die_after_fork=0 \
  ctest --output-on-failure -j"$jobs" -L concurrency

phase "fuzzing (build-fuzz/)"
tools/fuzz.sh

phase "all tests passed (normal + ASan/UBSan + TSan + fuzz)"
