#!/bin/bash
# File: clickhouse_load_test.sh
# Layer: end-to-end test of the warehouse rows (issue #28 item 5) with a real engine: Debian's
# ClickHouse (clickhouse-server + clickhouse-client, 18.16 in bookworm) started on a free
# loopback port with its own config and data directory. The table is created from the
# statement docs/SUMMARY.md documents (read out of the doc, so the doc is what is tested), the
# rows `kairos summarize --format jsonl DIR` writes are loaded with the documented
# `INSERT ... FORMAT JSONEachRow` pipe, and every field of every row is queried back and
# compared with the row exactly; then a count, one job's GPU busy and the top finding's name by
# plain SQL.
# Skipped (77, with a message) where ClickHouse is not installed; CI installs it (.ci/run).
# usage: clickhouse_load_test.sh KAIROS_BIN FIXTURE_BIN SUMMARY_MD OUT_DIR
set -u
kairos=$1 fixture=$2 doc=$3 out=$4
for b in clickhouse-server clickhouse-client; do
  if ! command -v "$b" >/dev/null 2>&1; then
    echo "SKIP: $b not found (apt-get install clickhouse-server clickhouse-client):" \
         "the warehouse rows are NOT loaded into a real engine on this machine"
    exit 77
  fi
done
rm -rf "$out" && mkdir -p "$out/traces" "$out/ch" || exit 1
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null; }
trap cleanup EXIT

# Three traces: the report fixture's two ranks (one finding-free) and a copy of rank 0 that
# carries what a daemon-started job writes: a job id above 2^31, a job name with a quote and
# non-ASCII text, a host and a trace id.
"$fixture" "$out/traces" > /dev/null || { echo "FAIL: fixture"; exit 1; }
python3 - "$out/traces" <<'EOF' || exit 1
import json, sys
d = sys.argv[1]
t = json.load(open(d + "/rank0.json"))
t.update({"job_id": "4000000001", "job_name": "nightly \"bert\" \u2014 large", "host_name": "node-7",
          "trace_id": "A1B2C3"})
json.dump(t, open(d + "/job_rank0.json", "w"))
EOF
"$kairos" summarize --format jsonl "$out/traces" > "$out/rows.jsonl" || { echo "FAIL: summarize"; exit 1; }

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$out/ch/config.xml" <<EOF
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$out/ch/server.log</log><errorlog>$out/ch/server.err.log</errorlog></logger>
  <tcp_port>$port</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>$out/ch/data/</path>
  <tmp_path>$out/ch/data/tmp/</tmp_path>
  <user_files_path>$out/ch/data/user_files/</user_files_path>
  <format_schema_path>$out/ch/data/format_schemas/</format_schema_path>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
</yandex>
EOF
cat > "$out/ch/users.xml" <<'EOF'
<?xml version="1.0"?>
<yandex>
  <profiles><default/></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks>
    <profile>default</profile><quota>default</quota></default></users>
  <quotas><default/></quotas>
</yandex>
EOF
clickhouse-server --config-file="$out/ch/config.xml" > "$out/ch/stdout.log" 2>&1 &
server=$!
# 64-bit integers unquoted in JSON output (18.16 quotes them by default): rows compare as JSON.
ch() { clickhouse-client --port "$port" --output_format_json_quote_64bit_integers=0 "$@"; }
version=
for _ in $(seq 300); do  # bounded: 30 s (0.3 s idle; the whole test once took 9.3 s under load 12)
  version=$(ch -q "SELECT version()" 2>/dev/null) && break
  kill -0 "$server" 2>/dev/null || break
  sleep 0.1
done
[ -n "$version" ] || { echo "FAIL: clickhouse-server did not start"; cat "$out/ch/"*.log; exit 1; }
echo "ClickHouse $version on 127.0.0.1:$port"

# The documented table: the first ```sql block after "ClickHouse:" in docs/SUMMARY.md.
# LowCardinality is experimental in 18.x: the setting the doc names enables it there; later
# releases need none.
python3 - "$doc" > "$out/ddl.sql" <<'EOF' || { echo "FAIL: no ClickHouse statement in $doc"; exit 1; }
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"^ClickHouse[^\n]*:\n+```sql\n(.*?)```", text, re.S | re.M)
sys.exit(1) if not m else print(m.group(1))
EOF
settings=()
case "$version" in 18.*) settings=(--allow_experimental_low_cardinality_type=1) ;; esac
ch "${settings[@]}" --multiquery < "$out/ddl.sql" || { echo "FAIL: the documented DDL"; cat "$out/ddl.sql"; exit 1; }
ch -q "INSERT INTO kairos_trace_summary FORMAT JSONEachRow" < "$out/rows.jsonl" \
  || { echo "FAIL: loading the rows"; exit 1; }
ch -q "SELECT * FROM kairos_trace_summary ORDER BY trace FORMAT JSONEachRow" > "$out/back.jsonl" || exit 1
ch -q "SELECT count(), countIf(top_finding IS NULL) FROM kairos_trace_summary" > "$out/count.tsv" || exit 1
ch -q "SELECT pid, gpu_busy_pct, top_finding, host, job_name FROM kairos_trace_summary
       WHERE job_id = 4000000001 FORMAT JSONEachRow" > "$out/job.jsonl" || exit 1
ch -q "SELECT top_finding, count() FROM kairos_trace_summary WHERE top_finding IS NOT NULL
       GROUP BY top_finding" > "$out/findings.tsv" || exit 1

python3 - "$out" <<'EOF'
import json, sys
d = sys.argv[1]
rows = sorted((json.loads(l) for l in open(d + "/rows.jsonl")), key=lambda r: r["trace"])
back = [json.loads(l) for l in open(d + "/back.jsonl")]
fail = []
if len(rows) != 3:
    fail.append("summarize wrote %d rows, expected 3" % len(rows))
if len(back) != len(rows):
    fail.append("%d rows back from ClickHouse, %d loaded" % (len(back), len(rows)))
for r, b in zip(rows, back):
    if list(b.keys()) != list(r.keys()):
        fail.append("columns %s vs fields %s" % (list(b.keys()), list(r.keys())))
    for k, v in r.items():
        if b.get(k) != v:  # exact: integers, strings, nulls and doubles round-trip unchanged
            fail.append("%s %s: ClickHouse %r, row %r" % (r["trace"], k, b.get(k), v))
if open(d + "/count.tsv").read() != "3\t1\n":
    fail.append("count, null top findings: %r" % open(d + "/count.tsv").read())
job = [json.loads(l) for l in open(d + "/job.jsonl")]
want = [r for r in rows if r["job_id"] == 4000000001]
if len(job) != 1 or len(want) != 1 or job[0] != {
        "pid": 4242, "gpu_busy_pct": want[0]["gpu_busy_pct"], "top_finding": "gpu_idle_host_bound",
        "host": "node-7", "job_name": "nightly \"bert\" \u2014 large"}:
    fail.append("job 4000000001: %s" % job)
elif not 61 < job[0]["gpu_busy_pct"] < 62:  # the fixture's rank 0: 61.1% busy
    fail.append("job 4000000001 busy %s" % job[0]["gpu_busy_pct"])
if open(d + "/findings.tsv").read() != "gpu_idle_host_bound\t2\n":
    fail.append("findings by name: %r" % open(d + "/findings.tsv").read())
for f in fail:
    print("FAIL: " + f)
if not fail:
    print("PASS: %d rows loaded and read back exactly" % len(back))
sys.exit(1 if fail else 0)
EOF
