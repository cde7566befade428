#!/usr/bin/env python3
"""The torch bridge's cost per operator, as bench_all headlines (issue 29 items 5 and 6).

Why: the bridge is the hot path of every PyTorch job kairos profiles, and its two issue 29
targets (0.3x the legacy profiler's overhead per op without shapes, 0.5x with) and the
allocator events' cost had no line in bench_all, so nothing compared them with a baseline:
the memory events' cost per op could grow unseen. This script runs, with a Python that has
torch (this one, else Debian's /usr/bin/python3) and the kairos package built next to it
(build/python):
  - bench/torch_op_bench.py 20000 12, three times (about 1 minute each): the time ratios
    against the legacy profiler, headlines recording_vs_legacy (target 0.3),
    shapes_vs_legacy_shapes (0.5) and memory_vs_legacy_memory, each the median of the three
    processes' ratios. One process's best-of-12 rounds is stable, but processes differ: on the
    2-vCPU VM, three runs of one build gave 0.58, 0.69 and 0.58 with shapes (session 17), so a
    single process's ratio moved bench_check's spread more than any change measured;
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


def script_env():
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (PYTHON_PACKAGE, SOURCE_BENCH, os.environ.get("PYTHONPATH")) if p))


def run(python, script, args):
    # The script's stdout (its table and KAIROS_HEADLINE lines) passes through as it comes.
    r = subprocess.run([python, os.path.join(SOURCE_BENCH, script)] + args, env=script_env())
    if r.returncode != 0:
        print(f"torch_bridge_benchmark: {script} exited with {r.returncode}", flush=True)
    return r.returncode


TIME_RUNS = 3


def run_timed(python):
    """torch_op_bench.py in TIME_RUNS processes: each one's table as it comes, then one
    headline per metric with the median of the processes' values (a metric some process did
    not print is left out, so bench_check reports it missing)."""
    values = {}  # metric -> (the line's fields, [values])
    rc = 0
    for i in range(TIME_RUNS):
        print(f"torch_bridge_benchmark: torch_op_bench.py, process {i + 1} of {TIME_RUNS}",
              flush=True)
        r = subprocess.run([python, os.path.join(SOURCE_BENCH, "torch_op_bench.py"), "20000",
                            "12"], env=script_env(), stdout=subprocess.PIPE, text=True)
        for line in r.stdout.splitlines():
            f = line.split()
            if len(f) == 7 and f[0] == "KAIROS_HEADLINE":
                values.setdefault(f[2], (f, []))[1].append(float(f[3]))
                # Not as a headline line: bench_all collects every line that has the tag.
                print(f"  this process: {f[2]} {f[3]}")
            else:
                print(line)
        sys.stdout.flush()
        if r.returncode != 0:
            print(f"torch_bridge_benchmark: torch_op_bench.py exited with {r.returncode}")
            rc = r.returncode
    for metric, (f, v) in values.items():
        if len(v) != TIME_RUNS:
            continue
        median = sorted(v)[len(v) // 2]
        print(f"  {metric}: median of " + ", ".join(f"{x:.4g}" for x in v))
        print(" ".join(f[:3] + [f"{median:.4g}"] + f[4:]))
    return rc


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
    rc = run_timed(python)
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
