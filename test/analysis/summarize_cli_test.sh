#!/bin/bash
# File: summarize_cli_test.sh
# Layer: tests for the `kairos summarize` CLI. --format text|json|markdown on a real trace
# file (the report fixture's rank 0: a data loader starves GPU 0), a bad format rejected, and
# --out through the hardened sink.
# usage: summarize_cli_test.sh KAIROS_BIN FIXTURE_BIN OUT_DIR
set -u
kairos=$1 fixture=$2 out=$3
rm -rf "$out" && mkdir -p "$out" && "$fixture" "$out" || { echo "FAIL: fixture"; exit 1; }
fail=0
"$kairos" summarize "$out/rank0.json" > "$out/text.txt" || fail=1
# The sample's rank 0 is starved by its data loader: the GPU-side finding first, the step-side
# data_loader_bound (docs/SUMMARY.md, "Step phases") second.
head -2 "$out/text.txt" | tail -1 | grep -q '^2 findings; the largest: GPU idle while waiting for the host (GPU 0, ' \
  || { echo "FAIL: text verdict"; head -3 "$out/text.txt"; fail=1; }
grep -q '^  GPUs 1-7: no GPU work in the window$' "$out/text.txt" || { echo "FAIL: idle GPUs line"; fail=1; }
"$kairos" summarize --format json "$out/rank0.json" > "$out/s.json" || fail=1
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['schema_version']==2 and d['idle_devices']==[1,2,3,4,5,6,7] and d['findings'][0]['confidence']=='high' and [f['id'] for f in d['findings']]==['gpu_idle_host_bound','data_loader_bound'], d" "$out/s.json" \
  || { echo "FAIL: json"; fail=1; }
"$kairos" summarize --json "$out/rank0.json" | cmp -s - "$out/s.json" || { echo "FAIL: --json differs from --format json"; fail=1; }
"$kairos" summarize --format markdown "$out/rank0.json" > "$out/s.md" || fail=1
head -1 "$out/s.md" | grep -qx '## kairos summary' || { echo "FAIL: markdown header"; fail=1; }
grep -q '^| 0 | ' "$out/s.md" || { echo "FAIL: markdown GPU table"; fail=1; }
grep -q '^#### GPU idle while waiting for the host (GPU 0)$' "$out/s.md" || { echo "FAIL: markdown finding"; fail=1; }
"$kairos" summarize --format yaml "$out/rank0.json" > /dev/null 2> "$out/err.txt"
[ $? -eq 2 ] && grep -q "must be text, json, markdown or jsonl" "$out/err.txt" || { echo "FAIL: bad format accepted"; fail=1; }
# --out: the same JSON as --format json, written through the hardened sink: a symlink
# planted at the name is refused, not followed (the fopen this replaced followed it).
"$kairos" summarize --out "$out/o.json" "$out/rank0.json" > /dev/null || fail=1
cmp -s "$out/o.json" "$out/s.json" || { echo "FAIL: --out differs from --format json"; fail=1; }
ln -sf "$out/victim.json" "$out/link.json"
"$kairos" summarize --out "$out/link.json" "$out/rank0.json" > /dev/null 2> "$out/err2.txt"
[ $? -eq 1 ] && [ ! -e "$out/victim.json" ] && grep -q "symbolic link" "$out/err2.txt" \
  || { echo "FAIL: --out followed a symlink"; fail=1; }
# --format jsonl: one row per trace of the directory, each with exactly the documented fields
# (docs/SUMMARY.md, schema 1) in order, agreeing with the trace's own JSON summary; a trace
# that cannot be read is reported and skipped (exit 1), the others still give their rows.
mkdir -p "$out/traces" && cp "$out/rank0.json" "$out/rank1.json" "$out/traces/" || fail=1
"$kairos" summarize --format jsonl "$out/traces" "$out/missing.json" > "$out/rows.jsonl" 2> "$out/err3.txt"
[ $? -eq 1 ] && grep -q "missing.json" "$out/err3.txt" || { echo "FAIL: jsonl with a missing trace"; fail=1; }
"$kairos" summarize --format json "$out/rank1.json" > "$out/s1.json" || fail=1
python3 - "$out" <<'EOF' || fail=1
import json, sys
d = sys.argv[1]
rows = [json.loads(l) for l in open(d + "/rows.jsonl")]
keys = ["schema_version", "trace", "trace_id", "job_id", "job_name", "rank", "world_size", "host",
        "pid", "window_start_ns", "window_end_ns", "verdict", "gpus", "idle_gpus", "gpu_busy_pct",
        "sm_efficiency_pct", "steps", "step_median_ms", "findings", "top_finding", "top_finding_share"]
assert len(rows) == 2, rows
for rank, (row, summary) in enumerate(zip(rows, ["s.json", "s1.json"])):
    s = json.load(open(d + "/" + summary))
    assert list(row.keys()) == keys, list(row.keys())
    assert row["schema_version"] == 1 and row["trace"] == "%s/traces/rank%d.json" % (d, rank), row
    assert row["rank"] == rank and row["world_size"] == 2, row
    assert row["verdict"] == s["verdict"], (row["verdict"], s["verdict"])
    assert row["gpus"] == len(s["devices"]) and row["idle_gpus"] == len(s["idle_devices"]), row
    busy = 100.0 * sum(x["busy_ns"] for x in s["devices"]) / sum(x["window_ns"] for x in s["devices"])
    assert abs(row["gpu_busy_pct"] - busy) < 1e-9, (row["gpu_busy_pct"], busy)
    assert row["steps"] == s["steps"]["count"], (row["steps"], s["steps"])
    assert row["findings"] == len(s["findings"]), row
    if s["findings"]:
        assert row["top_finding"] == s["findings"][0]["id"], row
        assert abs(row["top_finding_share"] - s["findings"][0]["window_share"]) < 1e-6, row
    else:
        assert row["top_finding"] is None and row["top_finding_share"] is None, row
assert rows[0]["top_finding"] == "gpu_idle_host_bound" and rows[1]["top_finding"] is None
EOF
"$kairos" summarize --format jsonl --out "$out/x" "$out" > /dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL: --out accepted with jsonl"; fail=1; }
[ $fail -eq 0 ] && echo "OK"
exit $fail
