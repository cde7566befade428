#!/bin/sh
# File: tools/fuzz.sh — run every libFuzzer target for a bounded time (CI, tools/test.sh).
# Builds build-fuzz/ with clang (-DKAIROS_FUZZ=ON: coverage + ASan + UBSan), then runs each
# target for KAIROS_FUZZ_SECONDS (default 20), nproc targets at a time, starting from its
# committed seed corpus. New inputs go to a scratch directory, never into the repository; a
# crash leaves its reproducer in build-fuzz/artifacts/ and fails the script. Seed corpora: see test/fuzz/CMakeLists.txt.
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
seconds=${KAIROS_FUZZ_SECONDS:-20}

CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKAIROS_FUZZ=ON \
  -DKAIROS_WITH_CUDA=OFF -DKAIROS_BUILD_BENCH=OFF -DKAIROS_BUILD_EXAMPLES=OFF \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" >/dev/null
cmake --build build-fuzz -j"$jobs" --target fuzz_config fuzz_daemon_protocol fuzz_daemon_rpc \
  fuzz_json_reader fuzz_json_escape fuzz_perfetto_reader fuzz_metrics_agent

rm -rf build-fuzz/artifacts
mkdir -p build-fuzz/artifacts
run() {  # run <target> <seed corpus dir>
  work=$(mktemp -d)
  log="build-fuzz/$1.log"
  echo "== fuzz $1 for ${seconds} s (seeds: $2)"
  rc=0
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: bounded memory is a promise.
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "build-fuzz/test/fuzz/$1" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix=build-fuzz/artifacts/"$1"- \
    "$work" "$2" >"$log" 2>&1 || rc=$?
  rm -rf "$work"
  echo "$1: $(grep -E "^stat::number_of_executed_units|^stat::new_units_added" "$log" | tr -s ' \n' ' ')"
  if [ "$rc" != 0 ]; then
    tail -n 40 "$log" >&2
    echo "fuzz $1 failed (exit $rc); reproducer (if any) in build-fuzz/artifacts/" >&2
    exit 1
  fi
}
# Targets run $jobs at a time (each libFuzzer process is single-threaded): on the 2-core CI
# machines that halves the fuzzing phase's wall time at the same fuzzing time per target.
failed=0
batch=""
finish_batch() {
  for pid in $batch; do wait "$pid" || failed=1; done
  batch=""
}
n=0
for spec in "fuzz_config test/config/corpus" "fuzz_daemon_protocol test/daemon/corpus" \
            "fuzz_daemon_rpc test/daemon/rpc_corpus" "fuzz_json_reader test/fuzz/corpus/json_reader" \
            "fuzz_json_escape test/output/corpus/json_escape" \
            "fuzz_perfetto_reader test/fuzz/corpus/perfetto_reader" \
            "fuzz_metrics_agent test/daemon/metrics_corpus"; do
  # shellcheck disable=SC2086
  (run $spec) &
  batch="$batch $!"
  n=$((n + 1))
  if [ $((n % jobs)) = 0 ]; then finish_batch; fi
done
finish_batch
if [ "$failed" != 0 ]; then
  echo "fuzzing failed (see above)" >&2
  exit 1
fi
echo "== fuzzing clean"
