#!/usr/bin/env python3
"""Flags every benchmark headline that got worse than bench/baseline.tsv by more than its spread.

Issue 29 item 6. Not a CI gate (the build machines are shared and noisy): a command a developer
runs before stopping a session, on the machine the baseline was measured on. docs/PERFORMANCE.md,
"Headline table, baseline and regression check", says how to read its output.

  tools/bench_check.py                        build bench_all in build/, run it, compare
  tools/bench_check.py --current TSV          compare an existing build/bench/headlines.tsv
  tools/bench_check.py --write-baseline --runs 3
                                              run bench_all 3 times, rewrite the baseline
  tools/bench_check.py --write-baseline --from A.tsv B.tsv C.tsv
                                              rewrite the baseline from runs already made

Inputs: the TSV bench_all writes (bench/run_all.cmake; one row per KAIROS_HEADLINE line of
bench/bench_headline.h, '#' lines are the run's conditions). The baseline holds per headline the
median over the runs and their spread (max - min): a headline regressed when it is worse than the
median by more than that spread, in the direction its row says is worse (instruction counts, units
Minstr and instr: by more than 1% of the median, since their spread is near zero). A headline in the
baseline that the run did not print (a benchmark failed or skipped) is flagged as missing; a new
one is listed, not flagged. Exit status: 0 nothing flagged, 1 a regression or a missing headline,
2 bad input.
"""

import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_BASELINE = os.path.join(ROOT, "bench", "baseline.tsv")
RUN_COLUMNS = ["benchmark", "metric", "value", "better", "target", "unit", "status"]
BASELINE_COLUMNS = ["benchmark", "metric", "better", "unit", "value", "spread", "runs"]
# bench/instruction_count_benchmark.py's headlines: flagged past 1% of the baseline, whatever
# their (near zero) spread.
INSTRUCTIONS_UNITS = ("Minstr", "instr")
INSTRUCTIONS_SLACK = 0.01


class InputError(Exception):
    pass


def read_tsv(path, columns):
    """Returns (comment lines, rows as dicts in file order); the first non-comment line is the
    header and must name `columns`."""
    comments, rows, header = [], [], None
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}")
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        if line.startswith("#"):
            comments.append(line)
            continue
        fields = line.split("\t")
        if header is None:
            if fields != columns:
                raise InputError(f"{path}:{n}: header {fields}, expected {columns}")
            header = fields
            continue
        if len(fields) != len(columns):
            raise InputError(f"{path}:{n}: {len(fields)} fields, expected {len(columns)}")
        rows.append(dict(zip(columns, fields)))
    if header is None:
        raise InputError(f"{path}: no header line")
    return comments, rows


def number(text, where):
    try:
        return float(text)
    except ValueError:
        raise InputError(f"{where}: '{text}' is not a number")


def fmt(x):
    """Six significant digits, as the benchmarks print them (bench_headline.h)."""
    return f"{x:.6g}"


def run_bench_all(build):
    """Builds and runs bench_all in `build`; returns the path of the TSV it wrote."""
    cmd = ["cmake", "--build", build, "--target", "bench_all"]
    print("bench_check: " + " ".join(cmd), flush=True)
    if subprocess.call(cmd) != 0:
        raise InputError("bench_all failed")
    return os.path.join(build, "bench", "headlines.tsv")


def compare(baseline_path, current_path, verbose):
    """Prints one line per headline worth a look and returns the exit status."""
    _, base_rows = read_tsv(baseline_path, BASELINE_COLUMNS)
    _, cur_rows = read_tsv(current_path, RUN_COLUMNS)
    current = {}
    for r in cur_rows:
        current[(r["benchmark"], r["metric"])] = r
    seen = set()
    counts = {"regressed": 0, "missing": 0, "improved": 0, "ok": 0, "new": 0}
    print(f"bench_check: {current_path} against {baseline_path}")
    for b in base_rows:
        key = (b["benchmark"], b["metric"])
        name = f"{b['benchmark']} {b['metric']}"
        where = f"{baseline_path}: {name}"
        base, spread = number(b["value"], where), number(b["spread"], where)
        lower = b["better"] == "lower"
        ref = f"baseline {fmt(base)} spread {fmt(spread)} {b['unit']}, {b['better']} is better"
        if key not in current:
            counts["missing"] += 1
            print(f"MISSING   {name}: not in this run ({ref})")
            continue
        seen.add(key)
        value = number(current[key]["value"], f"{current_path}: {name}")
        if math.isnan(value) or math.isinf(value):
            counts["regressed"] += 1
            print(f"REGRESSED {name}: {current[key]['value']} ({ref})")
            continue
        # Positive = worse, in the headline's own unit. The slack only absorbs binary rounding
        # (1.3 - 1.2 > 0.1 in doubles): a value exactly one spread away is within it.
        worse_by = value - base if lower else base - value
        slack = spread + 1e-9 * max(abs(base), abs(value), 1.0)
        if b["unit"] in INSTRUCTIONS_UNITS:
            # Instruction counts repeat to within 0.01%, so their spread says nothing about how
            # much growth matters: under 1% is code that moved, over it code that grew.
            slack = max(slack, INSTRUCTIONS_SLACK * abs(base))
        shown = f"{name}: {fmt(value)} {b['unit']} ({ref})"
        if worse_by > slack:
            counts["regressed"] += 1
            print(f"REGRESSED {shown}: worse by {fmt(worse_by)}")
        elif -worse_by > slack:
            counts["improved"] += 1
            print(f"improved  {shown}: better by {fmt(-worse_by)}")
        else:
            counts["ok"] += 1
            if verbose:
                print(f"ok        {shown}")
    for r in cur_rows:
        if (r["benchmark"], r["metric"]) not in seen:
            counts["new"] += 1
            print(f"new       {r['benchmark']} {r['metric']}: {r['value']} {r['unit']} "
                  "(not in the baseline)")
    print(f"bench_check: {counts['regressed']} regressed, {counts['missing']} missing, "
          f"{counts['improved']} improved, {counts['ok']} within the spread, {counts['new']} new")
    if counts["improved"] or counts["new"]:
        print("bench_check: to take improvements and new headlines into the baseline, rerun with "
              "--write-baseline --runs 3 on a machine as loaded as the baseline's header says")
    return 1 if counts["regressed"] or counts["missing"] else 0


def write_baseline(baseline_path, run_paths):
    """Median and max - min of each headline over the runs; a headline some run lacks is kept
    from the runs that have it (its `runs` column says how many)."""
    if len(run_paths) < 2:
        raise InputError("a baseline needs at least 2 runs (3 recommended): the spread is "
                         "measured, not assumed")
    order, values, info, conditions = [], {}, {}, []
    for i, path in enumerate(run_paths, 1):
        comments, rows = read_tsv(path, RUN_COLUMNS)
        conditions += [f"#   run {i}: {c.lstrip('# ')}" for c in comments]
        for r in rows:
            key = (r["benchmark"], r["metric"])
            v = number(r["value"], f"{path}: {key[0]} {key[1]}")
            if math.isnan(v) or math.isinf(v):
                continue
            if key not in values:
                order.append(key)
                values[key] = []
                info[key] = (r["better"], r["unit"])
            values[key].append(v)
    tmp = baseline_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("# Baseline of the benchmark headlines (bench/bench_headline.h) for "
                "tools/bench_check.py.\n")
        f.write(f"# Written by tools/bench_check.py --write-baseline from {len(run_paths)} "
                "bench_all runs: value = median over the\n# runs, spread = max - min (a headline "
                "is flagged when it is worse than value by more than spread).\n")
        f.write("# The runs' conditions (from the TSVs bench_all wrote):\n")
        f.write("\n".join(conditions) + "\n")
        f.write("\t".join(BASELINE_COLUMNS) + "\n")
        for key in order:
            v = values[key]
            better, unit = info[key]
            f.write("\t".join([key[0], key[1], better, unit, fmt(statistics.median(v)),
                               fmt(max(v) - min(v)), ",".join(fmt(x) for x in v)]) + "\n")
    os.replace(tmp, baseline_path)
    print(f"bench_check: wrote {len(order)} headlines from {len(run_paths)} runs to "
          f"{baseline_path}; add a line to its header about the machine and its load")
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"),
                   help="build directory to run bench_all in (default: build/)")
    p.add_argument("--baseline", default=DEFAULT_BASELINE, help="default: bench/baseline.tsv")
    p.add_argument("--current", help="compare this headlines.tsv instead of running bench_all")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also list the headlines within the spread")
    p.add_argument("--write-baseline", action="store_true",
                   help="rewrite the baseline instead of comparing")
    p.add_argument("--runs", type=int, default=3, help="bench_all runs for --write-baseline")
    p.add_argument("--from", dest="from_tsv", nargs="+", metavar="TSV",
                   help="with --write-baseline: use these run TSVs instead of running bench_all")
    a = p.parse_args(argv)
    try:
        if not a.write_baseline:
            return compare(a.baseline, a.current or run_bench_all(a.build), a.verbose)
        if a.from_tsv:
            return write_baseline(a.baseline, a.from_tsv)
        with tempfile.TemporaryDirectory(prefix="bench_check_") as tmp:
            runs = []
            for i in range(a.runs):
                runs.append(os.path.join(tmp, f"run{i + 1}.tsv"))
                shutil.copy(run_bench_all(a.build), runs[-1])
            return write_baseline(a.baseline, runs)
    except InputError as e:
        print(f"bench_check: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
