#!/bin/sh
# File: tools/demo.sh — the README's first command: builds kairos in build/, runs the C
# training-loop example (examples/train_c) and prints where its trace is.
# Usage: tools/demo.sh [iterations]
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build --target train_c -j"$jobs" >/dev/null
out=$(mktemp -d /tmp/kairos_demo_XXXXXX)
# Iterations 5..9 of the loop, written under $out (the _<pid> suffix is libkineto's rule).
KAIROS_CONFIG_TEXT="PROFILE_START_ITERATION=5;ACTIVITIES_ITERATIONS=5;ACTIVITIES_WARMUP_ITERATIONS=1;ACTIVITIES_LOG_FILE=$out/train_c.json" \
  build/bin/train_c "${1:-20}"
echo "open it in https://ui.perfetto.dev or chrome://tracing"
