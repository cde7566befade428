#!/usr/bin/env python3
"""Instructions the library's batch paths execute on fixed inputs, counted by valgrind.

Why (issue 29 item 6): on the shared 2-vCPU VM a benchmark's time moves by 10-40% from run to
run, so the baseline's spreads are wide, and two regressions hid inside them: the Perfetto
encoder's per-event functions stopped being inlined when its class moved to a header (+19%
instructions), and the analysis grew by 87% as features were added (docs/PERFORMANCE.md, "The
run of 2026-11-28, session 15"). An instruction count on a fixed input is the same in every run,
so a change of 1% shows.

How: each probe runs one of the benchmark executables next to this script under
`valgrind --tool=callgrind --toggle-collect=FUNCTION`, which counts only the instructions
executed inside FUNCTION (inclusive: what it calls, on the calling thread), and prints the total
as one headline in millions (unit Minstr), or per unit of work for the range hot path (unit
instr, per push+pop); tools/bench_check.py flags a count more than 1% over the baseline's. The inputs are fixed here, so a probe's count changes only when the code does
(or the compiler: compare counts from one toolchain). Kernel time (write(2), page faults) is not
counted: the time benchmarks measure it.

Installed by bench/CMakeLists.txt as build/bench/instruction_count_benchmark, so bench_all runs
it; without valgrind it says so and prints no headline (bench_check then reports them missing).
Usage: instruction_count_benchmark [-v]  (-v: valgrind's own output too). About 45 s.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# (metric, executable and arguments, function counted[, units of work]): printed in millions
# (Minstr), or per unit of work (instr) where one is given.
# Inputs: analysis_benchmark's synthetic trace of 400k events; perfetto_writer_benchmark's three
# traces (2 x 200k lean ranges, 200k kernels with all args and flows, a training loop), written
# once each to each format; cupti_convert_benchmark's 48 x 4 MiB buffers of CUPTI records,
# converted 10 times; flush_benchmark's 20k-launch window (convert, merge, summary, write).
PROBES = [
    ("analyze_minstr", ["analysis_benchmark", "400000", "0"], "kairos::Analyze*"),
    ("perfetto_write_minstr", ["perfetto_writer_benchmark", "200000", "0"],
     "kairos::PerfettoTraceWriter::Write*"),
    ("json_write_minstr", ["perfetto_writer_benchmark", "200000", "0"],
     "kairos::JsonTraceWriter::Write*"),
    ("cupti_convert_minstr", ["cupti_convert_benchmark", "convert"],
     "kairos::internal::CuptiConverter::ConvertBuffer*"),
    ("flush_merge_minstr", ["flush_benchmark", "20000", None, "kairos"],
     "kairos::internal::MergeIntoTraceData*"),
    ("flush_summary_minstr", ["flush_benchmark", "20000", None, "kairos"], "kairos::EmitSummary*"),
    # The hot path: one push+pop while a window records, statically linked and through
    # libkairos.so (range_benchmark --instr: 100000 pairs after the thread's first).
    ("range_static_instr", ["range_benchmark", "--instr", "100000"], "*InstrRangesStatic*",
     100000),
    ("range_so_instr", ["range_benchmark", "--instr", "100000"], "*InstrRangesThroughSo*",
     100000),
]


def count(argv, function, verbose):
    """Instructions callgrind counted inside `function`, or None when the run failed."""
    with tempfile.TemporaryDirectory(prefix="kairos_instr_") as tmp:
        argv = [tmp if a is None else a for a in argv]
        out = os.path.join(tmp, "callgrind.out")
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
               "--toggle-collect=" + function, os.path.join(HERE, argv[0])] + argv[1:]
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL if not verbose else None,
                           stderr=subprocess.DEVNULL if not verbose else None)
        if r.returncode != 0 or not os.path.exists(out):
            print(f"  {argv[0]} under valgrind exited with {r.returncode}", flush=True)
            return None
        with open(out, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = re.match(r"summary:\s+(\d+)", line)
                if m:
                    return int(m.group(1))
    return None


def main(argv):
    verbose = "-v" in argv
    if shutil.which("valgrind") is None:
        print("instruction_count_benchmark: valgrind not found (Debian package valgrind): "
              "skipped, no headline")
        return 0
    failed = 0
    for metric, cmd, function, *per in PROBES:
        if not os.access(os.path.join(HERE, cmd[0]), os.X_OK):
            print(f"  {metric}: {cmd[0]} is not built next to this script: skipped")
            failed += 1
            continue
        n = count(cmd, function, verbose)
        if n is None or n == 0:
            # Zero means the function was never entered: renamed, or the benchmark changed.
            print(f"  {metric}: no instructions counted in {function} (renamed? the benchmark "
                  "changed?): no headline")
            failed += 1
            continue
        shown = " ".join("DIR" if a is None else a for a in cmd)
        print(f"  {metric}: {n:,} instructions in {function} ({shown})")
        value, unit = (n / per[0], "instr") if per else (n / 1e6, "Minstr")
        print(f"KAIROS_HEADLINE instruction_count_benchmark {metric} {value:.6g} lower - {unit}",
              flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
