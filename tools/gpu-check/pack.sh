#!/bin/bash
# File: tools/gpu-check/pack.sh — the real-GPU kit's pack step (docs/REAL_GPU.md). Runs here,
# on the development machine, after a normal build in build/. Puts into one ignored folder
# (default gpu-kit/, under the 64 MiB the device tool carries) everything run.sh needs on a
# GPU machine that has the CUDA 13 driver, toolkit and its own Python with torch, but no
# Debian -dev packages:
#   lib/      libkairos.so (the preload shim) and libkairos_core.so (the implementation it loads)
#   bin/      the kairos CLI
#   deps/     every shared library libkairos or the CLI needs beyond glibc (abseil, zstd,
#             libstdc++ ...); run.sh puts on the library path only those the machine lacks
#   cuda/     the workloads, compiled here by nvcc for sm_90 (SASS) plus compute_90 PTX, so the
#             same binaries run on an H100/H200 and, through the PTX, on the simulator
#   python/   the kairos Python package (pure Python; the torch bridge is built on the device)
#   torch_bridge/  the bridge's source, the C ABI header and the Python tracer's source,
#             compiled by run.sh against the device's torch and Python
#   check/    the trace checker and run.sh itself
# Usage: tools/gpu-check/pack.sh [--build DIR] [--out DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=build
out=gpu-kit
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "pack.sh: unknown argument: $1 (usage: pack.sh [--build DIR] [--out DIR])" >&2; exit 2 ;;
  esac
done
limit_mib=60  # the device tool carries 64 MiB in all; leave room for the tracked tree

nvcc=""
for c in "$(grep -s '^CUDAToolkit_NVCC_EXECUTABLE:' "$build/CMakeCache.txt" | cut -d= -f2)" \
         /usr/local/cuda/bin/nvcc "$(command -v nvcc || true)"; do
  if [ -n "$c" ] && [ -x "$c" ]; then nvcc="$c"; break; fi
done
[ -n "$nvcc" ] || { echo "pack.sh: nvcc not found (the CUDA toolkit is needed to build the workloads)" >&2; exit 1; }
for t in "$build/lib/libkairos.so" "$build/lib/libkairos_core.so" "$build/bin/kairos"; do
  [ -f "$t" ] || { echo "pack.sh: $t missing: build first (cmake --build $build --target kairos kairos_cli)" >&2; exit 1; }
done

rm -rf "$out"
mkdir -p "$out"/{lib,bin,deps,cuda,python,torch_bridge,check}
cp -L "$build/lib/libkairos.so" "$out/lib/libkairos.so"
cp "$build/lib/libkairos_core.so" "$out/lib/"  # beside the shim, where it looks
ln -s libkairos.so "$out/lib/libkairos.so.0"  # the torch bridge's NEEDED name
cp "$build/bin/kairos" "$out/bin/"

# Dependencies: everything ldd resolves except glibc's own libraries and the kernel's vDSO,
# which every Linux image has. libcuda and libcupti are never shipped: kairos loads the
# device's own (libcupti by dlopen).
glibc_re='^(linux-vdso|ld-linux|libc\.so|libm\.so|libpthread\.so|libdl\.so|librt\.so|libresolv\.so)'
for bin in "$out/lib/libkairos.so" "$out/lib/libkairos_core.so" "$out/bin/kairos"; do
  ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r name path; do
    if [[ "$name" =~ $glibc_re ]]; then continue; fi
    case "$name" in libcuda.so*|libcupti.so*|libnvidia*) continue ;; esac
    cp -L "$path" "$out/deps/$name"
  done
done

# Workloads: real device code for sm_90 and PTX for compute_90 (the simulator runs the PTX).
gencode="-gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90"
for w in examples/cuda/train_loop.cu tools/gpu-check/duty_cycle.cu tools/gpu-check/alloc_pattern.cu; do
  name=$(basename "$w" .cu)
  "$nvcc" -cudart shared -O2 $gencode -Iexamples/cuda -o "$out/cuda/$name" "$w" -ldl
done
# The PM sampling call sequence, standalone (diagnostics: docs/REAL_GPU.md).
"$nvcc" -cudart shared -O2 $gencode -Itest/sim/tests -o "$out/cuda/pm_probe" tools/gpu-check/pm_probe.cu -lcupti

cp -r bindings/python/kairos "$out/python/"
rm -rf "$out/python/kairos/__pycache__"
# _location.py tells the package where libkairos is; point it at the kit's copy.
cat > "$out/python/kairos/_location.py" <<'PY'
# Written by tools/gpu-check/pack.sh: the kit's own libkairos.
import os
LIBKAIROS = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lib", "libkairos.so"))
PY
cp bindings/torch/kairos_torch_bridge.cc bindings/c/kairos.h bindings/python/pytracer.c "$out/torch_bridge/"
# The bridge includes the FLOP formulas by their layer path ("model/flops.h").
mkdir -p "$out/torch_bridge/model"
cp src/model/flops.h "$out/torch_bridge/model/"
cp tools/gpu-check/torch_gpu_train.py "$out/torch_bridge/"
cp tools/gpu-check/check_trace.py tools/gpu-check/run.sh "$out/check/"
# A crash on the GPU machine prints its own stack (module+offset, addr2line-ready here).
gcc -O1 -g -shared -fPIC -o "$out/lib/segv_trace.so" tools/gpu-check/segv_trace.c
git rev-parse --short HEAD > "$out/VERSION" 2>/dev/null || echo unknown > "$out/VERSION"

size_kib=$(du -sk "$out" | cut -f1)
# The newest glibc symbol version libkairos, the CLI and the workloads need: the GPU machine's
# glibc must be at least that (run.sh's info part prints the machine's).
glibc_need=$(for f in "$out/lib/libkairos.so" "$out/lib/libkairos_core.so" "$out/bin/kairos" "$out"/cuda/*; do objdump -T "$f" 2>/dev/null; done |
  grep -o 'GLIBC_2\.[0-9]*' | sort -u -t. -k2 -n | tail -1)
echo "${glibc_need#GLIBC_}" > "$out/GLIBC_NEEDED"
{
  echo "kairos real-GPU kit, commit $(cat "$out/VERSION"), packed $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "size: $((size_kib / 1024)) MiB ($size_kib KiB); needs glibc >= ${glibc_need#GLIBC_}"
  (cd "$out" && find . -type f -printf '%s %p\n' | sort -k2)
} > "$out/MANIFEST"
if [ "$size_kib" -gt $((limit_mib * 1024)) ]; then
  echo "pack.sh: the kit is $((size_kib / 1024)) MiB, over the $limit_mib MiB it may take of the device tool's 64 MiB" >&2
  exit 1
fi
echo "pack.sh: $out/ ready ($((size_kib / 1024)) MiB, $(ls "$out/deps" | wc -l) dependency libraries)"
