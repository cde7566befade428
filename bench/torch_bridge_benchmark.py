#!/usr/bin/env python3
"""The torch bridge's cost per operator, as bench_all headlines (issue 29 items 5 and 6).

Why: the bridge is the hot path of every PyTorch job kairos profiles, and its two issue 29
targets (0.3x the legacy profiler's overhead per op without shapes, 0.5x with) and the
allocator events' cost had no line in bench_all, so nothing compared them with a baseline:
the memory events' cost per op could grow unseen. This script runs, with a Python that has
torch (this one, else Debian's /usr/bin/python3) and the kairos package built next to it
(build/python):
  - bench/torch_op_bench.py 20000 12 (about 1 minute): the time ratios against the legacy
    profiler, headlines recording_vs_legacy (target 0.3), shapes_vs_legacy_shapes (0.5) and
    memory_vs_legacy_memory;
  - bench/torch_op_instr.py (about 3 minutes; needs valgrind): kairos' instructions per op
    over no profiler, exact from run to run, headlines recording_instr, shapes_instr and
    memory_instr (unit instr: bench_check flags them past 1%).
Without torch, the bridge module or valgrind, it says which is missing and prints no
headline for that part (bench_check then reports those rows missing).
Usage: torch_bridge_benchmark [--no-instr]
"""

import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_BENCH = "@PROJECT_SOURCE_DIR@/bench"
PYTHON_PACKAGE = os.path.join(HERE, "..", "python")


def torch_python():
    """An interpreter that imports torch, or None."""
    for exe in (sys.executable, "/usr/bin/python3"):
        if exe and os.path.exists(exe) and subprocess.run(
                [exe, "-c", "import torch"], stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL).returncode == 0:
            return exe
    return None


def run(python, script, args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (PYTHON_PACKAGE, SOURCE_BENCH, os.environ.get("PYTHONPATH")) if p))
    # The scripts' stdout (their tables and KAIROS_HEADLINE lines) passes through as it comes.
    r = subprocess.run([python, os.path.join(SOURCE_BENCH, script)] + args, env=env)
    if r.returncode != 0:
        print(f"torch_bridge_benchmark: {script} exited with {r.returncode}", flush=True)
    return r.returncode


def main(argv):
    python = torch_python()
    if python is None:
        print("torch_bridge_benchmark: no Python with torch (Debian: python3-torch): skipped, "
              "no headline")
        return 0
    if not os.path.exists(os.path.join(PYTHON_PACKAGE, "kairos", "_kairos_torch.so")):
        print("torch_bridge_benchmark: the torch bridge is not built (build/python/kairos/"
              "_kairos_torch.so; needs libtorch-dev): skipped, no headline")
        return 0
    rc = run(python, "torch_op_bench.py", ["20000", "12"])
    if "--no-instr" in argv:
        return rc
    if shutil.which("valgrind") is None:
        print("torch_bridge_benchmark: valgrind not found (Debian package valgrind): no "
              "instruction headline")
        return rc
    return run(python, "torch_op_instr.py",
               ["none", "recording", "rec+shapes", "rec+memory", "legacy", "legacy+shapes",
                "legacy+memory"]) or rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
