#!/bin/sh
# File: tools/demo.sh — the README's first command. On a fresh Debian machine: installs the
# build dependencies (apt, with sudo when not root), builds kairos in build/, runs the C
# training-loop example (examples/train_c) under the profiler with an iteration window, and,
# when the CUDA toolkit is present, the CUDA training loop (examples/cuda/train_loop) on the
# simulated GPU (test/sim) attached with LD_PRELOAD and no code change, and, when
# python3-torch is installed, examples/pytorch/train_mlp.py under `python3 -m kairos run`.
# Each run prints its
# summary and writes an HTML report; the script ends with where the traces, summaries and
# reports are.
# Usage: tools/demo.sh [iterations]
set -eu
cd "$(dirname "$0")/.."
iters="${1:-20}"
jobs=$(nproc 2>/dev/null || echo 2)

pkgs="cmake g++ make pkg-config libprotobuf-dev protobuf-compiler libzstd-dev zstd libabsl-dev catch2 nlohmann-json3-dev"
missing=""
for p in $pkgs; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "== installing:$missing"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

echo "== building (build/)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
targets="train_c kairos kairos_cli"
if grep -q '^KAIROS_HAVE_CUDA:INTERNAL=ON' build/CMakeCache.txt 2>/dev/null || \
   [ -f build/test/sim/Makefile ]; then
  targets="$targets ksim_libs cuda_examples"
fi
for t in $targets; do cmake --build build --target "$t" -j"$jobs" >/dev/null; done

out=$(mktemp -d /tmp/kairos_demo_XXXXXX)
echo "== examples/train_c: $iters steps, iterations 5..9 traced (warm-up 1)"
KAIROS_CONFIG_TEXT="PROFILE_START_ITERATION=5;ACTIVITIES_ITERATIONS=5;ACTIVITIES_WARMUP_ITERATIONS=1;ACTIVITIES_LOG_FILE=$out/train_c.json;KAIROS_SUMMARY=stdout;KAIROS_REPORT=html" \
  build/bin/train_c "$iters"

if [ -x build/examples/cuda/train_loop ] && [ -f build/sim/lib/libcudart.so.13 ]; then
  echo
  # An iteration window: steps 5..24 of 30, so the trace shows the training loop, not the
  # process's start-up (a window from process start was mostly CUDA initialisation).
  echo "== examples/cuda/train_loop on the simulated GPU, LD_PRELOAD=libkairos.so, iterations 5..24 traced"
  LD_LIBRARY_PATH="$PWD/build/sim/lib" LD_PRELOAD="$PWD/build/lib/libkairos.so" \
    KAIROS_CONFIG_TEXT="PROFILE_START_ITERATION=5;ACTIVITIES_ITERATIONS=20;ACTIVITIES_WARMUP_ITERATIONS=1;ACTIVITIES_LOG_FILE=$out/train_loop.json;KAIROS_SUMMARY=stdout;KAIROS_REPORT=html" \
    build/examples/cuda/train_loop 30
fi

# PyTorch (when python3-torch is installed): the unmodified MLP example under `python3 -m
# kairos run`; the summary's top CPU ranges are aten ops.
torch_py=""
for py in python3 /usr/bin/python3; do
  if [ -z "$torch_py" ] && "$py" -c "import torch" >/dev/null 2>&1; then torch_py="$py"; fi
done
if [ -n "$torch_py" ] && grep -q '^Torch_DIR:PATH=/' build/CMakeCache.txt 2>/dev/null; then
  cmake --build build --target kairos_python kairos_torch_bridge -j"$jobs" >/dev/null
  echo
  echo "== examples/pytorch/train_mlp.py under python3 -m kairos run: iterations 5..7 traced"
  PYTHONPATH="$PWD/build/python" "$torch_py" -m kairos run \
    --config "PROFILE_START_ITERATION=5;ACTIVITIES_ITERATIONS=3;ACTIVITIES_WARMUP_ITERATIONS=1;PROFILE_REPORT_INPUT_SHAPES=true;ACTIVITIES_LOG_FILE=$out/train_mlp.json;KAIROS_SUMMARY=stdout;KAIROS_REPORT=html" \
    examples/pytorch/train_mlp.py --steps 12
else
  echo
  echo "== (PyTorch example skipped: install python3-torch and libtorch-dev, then rerun)"
fi

echo
echo "== done. Traces (.json: open in https://ui.perfetto.dev, chrome://tracing or HTA), summaries"
echo "   (.summary.json) and HTML reports (.report.html: open in any browser):"
for f in "$out"/*; do echo "   $f"; done
