#!/usr/bin/env python3
"""Tests tools/bench_check.py (issue 29 item 6) on synthetic TSVs, never on a benchmark run.

Usage: bench_check_test.py <path to bench_check.py>. Each case writes a baseline and a
headlines.tsv into a scratch directory, runs the script there (relative paths, so its output is
the same on every machine) and compares stdout, stderr and the exit status exactly.
"""

import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.abspath(sys.argv[1])
RUN_HEADER = "benchmark\tmetric\tvalue\tbetter\ttarget\tunit\tstatus\n"
BASE_HEADER = "benchmark\tmetric\tbetter\tunit\tvalue\tspread\truns\n"

# One of each case: a regression, an improvement, a value inside the spread, a value exactly
# one spread away (inside: the spread is measured run-to-run noise), a deterministic figure
# with spread 0 unchanged, a headline the run lacks, and one the baseline lacks.
BASELINE = ("# synthetic\n" + BASE_HEADER +
            "a_benchmark\tratio\tlower\tx\t1.2\t0.1\t1.15,1.2,1.25\n"
            "a_benchmark\tspeed\thigher\tM/s\t20\t2\t19,20,21\n"
            "a_benchmark\tnoisy\tlower\tx\t1\t0.1\t0.95,1,1.05\n"
            "a_benchmark\tedge\tlower\tx\t1.2\t0.1\t1.1,1.2,1.2\n"
            "b_benchmark\tbytes\tlower\tB\t23.5\t0\t23.5,23.5,23.5\n"
            "c_benchmark\tgone\tlower\tcount\t0\t0\t0,0,0\n")
CURRENT = ("# bench_all synthetic\n" + RUN_HEADER +
           "a_benchmark\tratio\t1.5\tlower\t1.3\tx\tmissed\n"
           "a_benchmark\tspeed\t25\thigher\t30\tM/s\tmissed\n"
           "a_benchmark\tnoisy\t1.04\tlower\t-\tx\t-\n"
           "a_benchmark\tedge\t1.3\tlower\t1.3\tx\tmet\n"
           "b_benchmark\tbytes\t23.5\tlower\t20\tB\tmissed\n"
           "c_benchmark\tfresh\t3\thigher\t-\tx\t-\n")
EXPECTED = """\
bench_check: current.tsv against baseline.tsv
REGRESSED a_benchmark ratio: 1.5 x (baseline 1.2 spread 0.1 x, lower is better): worse by 0.3
improved  a_benchmark speed: 25 M/s (baseline 20 spread 2 M/s, higher is better): better by 5
MISSING   c_benchmark gone: not in this run (baseline 0 spread 0 count, lower is better)
new       c_benchmark fresh: 3 x (not in the baseline)
bench_check: 1 regressed, 1 missing, 1 improved, 3 within the spread, 1 new
bench_check: to take improvements and new headlines into the baseline, rerun with --write-baseline --runs 3 on a machine as loaded as the baseline's header says
"""
EXPECTED_VERBOSE_OK = """\
ok        a_benchmark noisy: 1.04 x (baseline 1 spread 0.1 x, lower is better)
ok        a_benchmark edge: 1.3 x (baseline 1.2 spread 0.1 x, lower is better)
ok        b_benchmark bytes: 23.5 B (baseline 23.5 spread 0 B, lower is better)
"""

failures = []


def run(files, args):
    with tempfile.TemporaryDirectory(prefix="bench_check_test_") as d:
        for name, text in files.items():
            with open(os.path.join(d, name), "w", encoding="utf-8") as f:
                f.write(text)
        p = subprocess.run([sys.executable, SCRIPT] + args, cwd=d, capture_output=True,
                           text=True)
        written = {}
        for name in os.listdir(d):
            with open(os.path.join(d, name), encoding="utf-8") as f:
                written[name] = f.read()
        return p.returncode, p.stdout, p.stderr, written


def check(name, got, want):
    if got != want:
        failures.append(f"{name}:\n--- want\n{want}\n--- got\n{got}")


# 1. The mixed case: flags the regression and the missing headline, exits 1.
rc, out, err, _ = run({"baseline.tsv": BASELINE, "current.tsv": CURRENT},
                      ["--baseline", "baseline.tsv", "--current", "current.tsv"])
check("mixed: exit status", rc, 1)
check("mixed: stdout", out, EXPECTED)
check("mixed: stderr", err, "")

# 2. -v also lists what is within the spread, in baseline order.
rc, out, _, _ = run({"baseline.tsv": BASELINE, "current.tsv": CURRENT},
                    ["--baseline", "baseline.tsv", "--current", "current.tsv", "-v"])
check("verbose: exit status", rc, 1)
check("verbose: ok lines", "".join(l + "\n" for l in out.splitlines() if l.startswith("ok ")),
      EXPECTED_VERBOSE_OK)

# 3. Without the regression and the missing headline: nothing flagged, exit 0.
clean_base = "".join(l + "\n" for l in BASELINE.splitlines()
                     if not l.startswith(("a_benchmark\tratio", "c_benchmark\tgone")))
clean_cur = "".join(l + "\n" for l in CURRENT.splitlines()
                    if not l.startswith(("a_benchmark\tratio", "c_benchmark\tfresh")))
rc, out, _, _ = run({"baseline.tsv": clean_base, "current.tsv": clean_cur},
                    ["--baseline", "baseline.tsv", "--current", "current.tsv"])
check("clean: exit status", rc, 0)
check("clean: stdout", out, "bench_check: current.tsv against baseline.tsv\n"
      "improved  a_benchmark speed: 25 M/s (baseline 20 spread 2 M/s, higher is better): "
      "better by 5\n"
      "bench_check: 0 regressed, 0 missing, 1 improved, 3 within the spread, 0 new\n"
      "bench_check: to take improvements and new headlines into the baseline, rerun with "
      "--write-baseline --runs 3 on a machine as loaded as the baseline's header says\n")

# 4. A benchmark that printed nan (a broken run) is a regression, whatever the spread.
nan_cur = RUN_HEADER + "b_benchmark\tbytes\tnan\tlower\t20\tB\tmissed\n"
rc, out, _, _ = run({"baseline.tsv": ("# synthetic\n" + BASE_HEADER +
                                      "b_benchmark\tbytes\tlower\tB\t23.5\t0\t23.5,23.5\n"),
                     "current.tsv": nan_cur},
                    ["--baseline", "baseline.tsv", "--current", "current.tsv"])
check("nan: exit status", rc, 1)
check("nan: flag", out.splitlines()[1],
      "REGRESSED b_benchmark bytes: nan (baseline 23.5 spread 0 B, lower is better)")

# 5. --write-baseline --from: median and max - min per headline, the runs' conditions in the
#    header; a nan is left out of its headline's runs.
runs = {}
for i, (ratio, bytes_) in enumerate([("1.3", "23.5"), ("1.1", "23.5"), ("1.25", "nan")], 1):
    runs[f"run{i}.tsv"] = (f"# bench_all run {i}\n# load average before: {i}.00 1.00 1.00\n" +
                           RUN_HEADER +
                           f"a_benchmark\tratio\t{ratio}\tlower\t1.3\tx\tmet\n"
                           f"b_benchmark\tbytes\t{bytes_}\tlower\t20\tB\tmissed\n")
rc, out, _, written = run(runs, ["--baseline", "baseline.tsv", "--write-baseline", "--from",
                                 "run1.tsv", "run2.tsv", "run3.tsv"])
check("write: exit status", rc, 0)
check("write: stdout", out, "bench_check: wrote 2 headlines from 3 runs to baseline.tsv; add a "
      "line to its header about the machine and its load\n")
check("write: baseline", written.get("baseline.tsv"), """\
# Baseline of the benchmark headlines (bench/bench_headline.h) for tools/bench_check.py.
# Written by tools/bench_check.py --write-baseline from 3 bench_all runs: value = median over the
# runs, spread = max - min (a headline is flagged when it is worse than value by more than spread).
# The runs' conditions (from the TSVs bench_all wrote):
#   run 1: bench_all run 1
#   run 1: load average before: 1.00 1.00 1.00
#   run 2: bench_all run 2
#   run 2: load average before: 2.00 1.00 1.00
#   run 3: bench_all run 3
#   run 3: load average before: 3.00 1.00 1.00
benchmark\tmetric\tbetter\tunit\tvalue\tspread\truns
a_benchmark\tratio\tlower\tx\t1.25\t0.2\t1.3,1.1,1.25
b_benchmark\tbytes\tlower\tB\t23.5\t0\t23.5,23.5
""")

# 6. One run is not a spread; a malformed file is an input error (exit 2), not a pass.
rc, _, err, _ = run(runs, ["--baseline", "baseline.tsv", "--write-baseline", "--from",
                           "run1.tsv"])
check("one run: exit status", rc, 2)
check("one run: stderr", err, "bench_check: a baseline needs at least 2 runs (3 recommended): "
      "the spread is measured, not assumed\n")
rc, _, err, _ = run({"baseline.tsv": BASELINE, "current.tsv": "not\ta\theadline\n"},
                    ["--baseline", "baseline.tsv", "--current", "current.tsv"])
check("malformed: exit status", rc, 2)
check("malformed: stderr", err.split(":")[0:2], ["bench_check", " current.tsv"])

# 7. Instruction counts (units Minstr and instr, spread near 0): 1% over the baseline is within
#    it, more is flagged (per push+pop, 143 -> 145 is 1.4%); 1% under is not an improvement
#    worth listing, more is.
instr_base = ("# synthetic\n" + BASE_HEADER +
              "i_benchmark\tsame\tlower\tMinstr\t1000\t0.01\t1000,1000.01\n"
              "i_benchmark\tedge\tlower\tMinstr\t1000\t0\t1000,1000\n"
              "i_benchmark\tgrew\tlower\tMinstr\t1000\t0\t1000,1000\n"
              "i_benchmark\tshrank\tlower\tMinstr\t1000\t0\t1000,1000\n"
              "i_benchmark\tmoved\tlower\tMinstr\t1000\t0\t1000,1000\n"
              "i_benchmark\tper_op\tlower\tinstr\t143\t0\t143,143\n")
instr_cur = (RUN_HEADER +
             "i_benchmark\tsame\t1000.005\tlower\t-\tMinstr\t-\n"
             "i_benchmark\tedge\t1010\tlower\t-\tMinstr\t-\n"
             "i_benchmark\tgrew\t1010.5\tlower\t-\tMinstr\t-\n"
             "i_benchmark\tshrank\t980\tlower\t-\tMinstr\t-\n"
             "i_benchmark\tmoved\t995\tlower\t-\tMinstr\t-\n"
             "i_benchmark\tper_op\t145\tlower\t-\tinstr\t-\n")
rc, out, _, _ = run({"baseline.tsv": instr_base, "current.tsv": instr_cur},
                    ["--baseline", "baseline.tsv", "--current", "current.tsv"])
check("instructions: exit status", rc, 1)
check("instructions: flags", "".join(l + "\n" for l in out.splitlines()[1:4]),
      "REGRESSED i_benchmark grew: 1010.5 Minstr (baseline 1000 spread 0 Minstr, lower is "
      "better): worse by 10.5\n"
      "improved  i_benchmark shrank: 980 Minstr (baseline 1000 spread 0 Minstr, lower is "
      "better): better by 20\n"
      "REGRESSED i_benchmark per_op: 145 instr (baseline 143 spread 0 instr, lower is "
      "better): worse by 2\n")
check("instructions: counts", out.splitlines()[4],
      "bench_check: 2 regressed, 0 missing, 1 improved, 3 within the spread, 0 new")

if failures:
    print("\n\n".join(failures))
    sys.exit(1)
print("bench_check_test: all cases passed")
