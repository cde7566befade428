#!/bin/bash
# File: prometheus_e2e_test.sh
# Layer: end-to-end test of the fleet path (issue #28) with the real engine: Debian's
# `prometheus` on loopback (own config, data dir and free port, 1 s scrape and rule evaluation,
# the shipped deploy/prometheus/kairos_rules.yml) scrapes a private `kairos daemon
# --metrics-port`, which two simulated data-parallel jobs poll (LD_PRELOAD, KINETO_USE_DAEMON=1):
#   job 101, busy (long kernels), 2 ranks, writing its own telemetry file every 1 s too;
#   job 102, idle (100 ms of host work a step), 1 rank, with no telemetry setting at all (the
#            daemon's offer starts it).
# The idle job reports to a second agent ("host 2": IPC directory, /metrics on 127.0.0.2, its own
# host name in a UTS namespace where one can be made).
# Checks, through Prometheus' HTTP API: both jobs' processes appear, each from its host's agent; each busy-job series'
# SM active and GPU busy equal the line of the job's own file with the same timestamp within
# 1 point, its device memory used and total exactly, and its kernel counter grows by exactly
# the kernels of the lines in between; the
# idle job's KairosGpuIdle alert is pending (its `for` is 15 m) and the busy job has none;
# series of the busy job disappear within 5 s of its processes being killed while the idle
# job's stay.
# usage: prometheus_e2e_test.sh KAIROS_BIN LIBKAIROS RUN_DDP SIM_LIB_DIR RULES_DIR OUT_DIR
set -u
kairos=$1 libkairos=$2 run_ddp=$3 simlib=$4 rules=$(cd "$5" && pwd) out=$6
if ! command -v prometheus >/dev/null 2>&1; then
  echo "SKIP: prometheus not found (apt-get install prometheus)"
  exit 77
fi
rm -rf "$out" && mkdir -p "$out/sock" "$out/data" || exit 1
pids=() groups=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  # Each job runs in its own process group (setsid): its launcher and ranks go together.
  for g in "${groups[@]}"; do kill -KILL -- "-$g" 2>/dev/null; done
  wait 2>/dev/null
}
trap cleanup EXIT

"$kairos" daemon --port 0 --socket-dir "$out/sock" --metrics-port 0 \
  --metrics-port-file "$out/mport" --metrics-interval-secs 1 > "$out/daemon.log" 2>&1 &
pids+=($!)
# A second host: its own agent, IPC directory and /metrics address (127.0.0.2), under its own
# host name where a UTS namespace can be made (root), else the same name.
mkdir -p "$out/sock2"
agent2=("$kairos" daemon --port 0 --bind 127.0.0.2 --socket-dir "$out/sock2" --metrics-port 0
        --metrics-address 127.0.0.2 --metrics-port-file "$out/mport2" --metrics-interval-secs 1)
if unshare -u true 2>/dev/null; then
  host2=fleet-host2
  unshare -u sh -c 'hostname fleet-host2 && exec "$@"' sh "${agent2[@]}" > "$out/daemon2.log" 2>&1 &
else
  host2=$(hostname)
  "${agent2[@]}" > "$out/daemon2.log" 2>&1 &
fi
pids+=($!)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
prom_port=$(free_port)
for _ in $(seq 100); do [ -s "$out/mport" ] && [ -s "$out/mport2" ] && break; sleep 0.05; done
[ -s "$out/mport" ] && [ -s "$out/mport2" ] \
  || { echo "FAIL: the agents did not start"; cat "$out/daemon.log" "$out/daemon2.log"; exit 1; }
cat > "$out/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: ["$rules/kairos_rules.yml"]  # a glob: a wrong path would load no rules silently
scrape_configs:
  - job_name: kairos
    static_configs: [{targets: ["127.0.0.1:$(cat "$out/mport")", "127.0.0.2:$(cat "$out/mport2")"]}]
EOF
prometheus --config.file="$out/prometheus.yml" --storage.tsdb.path="$out/data" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=warn > "$out/prometheus.log" 2>&1 &
pids+=($!)

# Each rank sees one GPU, its own, as under SLURM's per-task CUDA_VISIBLE_DEVICES (telemetry
# reports every GPU a process can see; docs/FLEET.md).
cat > "$out/rank.sh" <<EOF
#!/bin/sh
LOCAL_RANK=0 KAIROS_SIM_DEVICES=h100:1 exec "$(dirname "$run_ddp")/ddp_train" "\$@"
EOF
chmod +x "$out/rank.sh"
common=(env LD_LIBRARY_PATH="$simlib" LD_PRELOAD="$libkairos" KINETO_USE_DAEMON=1
        KINETO_IPC_SOCKET_DIR="$out/sock" KAIROS_SIM_NCCL_LATENCY_US=8 KAIROS_SIM_NCCL_BW_GBPS=100
        KAIROS_SIM_NCCL_TIMEOUT_MS=60000)
setsid "${common[@]}" KAIROS_JOB_ID=101 KAIROS_SIM_KERNEL_TIMES=Forward=3000,Backward=3000 \
  KAIROS_CONFIG_TEXT="KAIROS_TELEMETRY_INTERVAL_SECS=1;KAIROS_TELEMETRY_FILE=$out/tel_{pid}.jsonl" \
  "$run_ddp" 2 --bin "$out/rank.sh" --steps 100000 --host-us 200 > "$out/job101.log" 2>&1 &
groups+=($!)
setsid "${common[@]}" KINETO_IPC_SOCKET_DIR="$out/sock2" KAIROS_JOB_ID=102 "$run_ddp" 1 --bin "$out/rank.sh" --steps 100000 --host-us 100000 \
  > "$out/job102.log" 2>&1 &
groups+=($!)

python3 - "$prom_port" "$out" "$(hostname)" "$host2" <<'PY'
import glob, json, os, signal, sys, time, urllib.parse, urllib.request
port, out, host1, host2 = sys.argv[1:5]
fail = []

def query(q, at=None):
    params = {"query": q}
    if at is not None:
        params["time"] = "%.3f" % at
    url = "http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode(params))
    with urllib.request.urlopen(url, timeout=5) as r:
        body = json.load(r)
    assert body["status"] == "success", body
    return body["data"]["result"]

def wait_for(what, cond, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            v = cond()
            if v:
                return v
        except Exception as e:  # Prometheus still starting
            last = e
        time.sleep(0.25)
    print("FAIL: timed out waiting for " + what)
    for f in ("daemon.log", "daemon2.log", "prometheus.log", "job101.log", "job102.log"):
        print("--- " + f); print(open(os.path.join(out, f)).read()[-2000:])
    sys.exit(1)

def pids_of(job):
    return sorted({s["metric"]["pid"] for s in query('kairos_gpu_busy_ratio{job_id="%s"}' % job)})

# 1. Both jobs' two ranks appear (the idle job with no telemetry setting: the daemon's offer).
wait_for("the jobs' 2 and 1 processes in Prometheus",
         lambda: len(pids_of("101")) == 2 and len(pids_of("102")) == 1, 60)
busy_pids, idle_pids = pids_of("101"), pids_of("102")
print("busy job pids", busy_pids, "idle job pids", idle_pids)
# Two hosts: each job's series come from its own agent (host label, scrape instance).
for job, host, inst in (("101", host1, "127.0.0.1:"), ("102", host2, "127.0.0.2:")):
    got = {(x["metric"]["host"], x["metric"]["instance"].rsplit(":", 1)[0] + ":")
           for x in query('kairos_gpu_busy_ratio{job_id="%s"}' % job)}
    if got != {(host, inst)}:
        fail.append("job %s series from %s, expected host %s via %s" % (job, got, host, inst))
# No file for the idle job (offered telemetry writes none).
for p in idle_pids:
    if os.path.exists(os.path.join(out, "tel_%s.jsonl" % p)):
        fail.append("idle job pid %s wrote a telemetry file" % p)

def lines(pid):
    with open(os.path.join(out, "tel_%s.jsonl" % pid)) as f:
        return [json.loads(l) for l in f if l.strip()]

def sample(q, at):
    return {(s["metric"]["pid"], s["metric"]["device"]): float(s["value"][1]) for s in query(q, at)}

# 2. Values: at two instants 3 s apart, each busy-job series equals its own file's line with
# the same timestamp; the kernel counter grows by exactly the lines' kernels in between.
time.sleep(3)
t1 = time.time() - 1
time.sleep(3)
t2 = time.time() - 1
time.sleep(1.5)  # the files have the lines of t2 by now
checked = 0
for at in (t1, t2):
    ts = sample('kairos_telemetry_timestamp_seconds{job_id="101"}', at)
    sm = sample('kairos_gpu_sm_active_ratio{job_id="101"}', at)
    busy = sample('kairos_gpu_busy_ratio{job_id="101"}', at)
    mem = sample('kairos_gpu_memory_used_bytes{job_id="101"}', at)
    mem_total = sample('kairos_gpu_memory_total_bytes{job_id="101"}', at)
    for key, t in ts.items():
        pid, dev = key
        match = [l for l in lines(pid) if l["device"] == int(dev) and l["ts_ns"] // 1000000 == round(t * 1000)]
        if len(match) != 1:
            fail.append("no line of pid %s device %s at %.3f" % (pid, dev, t)); continue
        l = match[0]
        for name, got, want in (("sm_active", sm.get(key), l["sm_active_pct"]),
                                ("gpu_busy", busy.get(key), l["gpu_busy_pct"])):
            if got is None or want is None or abs(100 * got - want) > 1:
                fail.append("pid %s %s: prometheus %s vs file %s" % (pid, name, got, want))
        # Device memory (bytes, exact: whole numbers below 2^53 survive float64).
        for name, got, want in (("memory used", mem.get(key), l["gpu_memory_used_bytes"]),
                                ("memory total", mem_total.get(key), l["gpu_memory_total_bytes"])):
            if got is None or not want or got != want:
                fail.append("pid %s %s: prometheus %s vs file %s" % (pid, name, got, want))
        checked += 1
kernels_seen = 0
ts1 = sample('kairos_telemetry_timestamp_seconds{job_id="101"}', t1)
ts2 = sample('kairos_telemetry_timestamp_seconds{job_id="101"}', t2)
k1 = sample('kairos_gpu_kernels_total{job_id="101"}', t1)
k2 = sample('kairos_gpu_kernels_total{job_id="101"}', t2)
for key in ts2:
    pid, dev = key
    if key not in k1 or key not in ts1:
        fail.append("series %s missing at t1" % (key,)); continue
    want = sum(l["kernels"] for l in lines(pid) if l["device"] == int(dev)
               and round(ts1[key] * 1000) < l["ts_ns"] // 1000000 <= round(ts2[key] * 1000))
    if k2[key] - k1[key] != want:
        fail.append("pid %s kernels grew %d, its lines say %d" % (pid, k2[key] - k1[key], want))
    kernels_seen += want
    print("pid %s device %s: sm_active %.1f%% busy %.1f%%, %d kernels in %.0f s" %
          (pid, dev, 100 * sm[key], 100 * busy[key], want, ts2[key] - ts1[key]))
if checked < 4 or kernels_seen <= 0:
    fail.append("only %d series values and %d kernels checked" % (checked, kernels_seen))
print("idle job GPU busy:", sample('kairos_gpu_busy_ratio{job_id="102"}', t2))
sm_job = {s["metric"]["job_id"]: float(s["value"][1]) for s in query("job_id:kairos_gpu_sm_active:avg")}
print("job SM efficiency (recording rule):", sm_job)
if not (sm_job.get("101", 0) > 0.5 and sm_job.get("102", 1) < 0.1):
    fail.append("recorded job SM efficiency %s: expected busy > 50%%, idle < 10%%" % sm_job)

# 3. The idle job's GPU-idle alert is pending (for: 15m), for its processes only.
alerts = wait_for("KairosGpuIdle pending for the idle job", lambda: [
    a for a in query('ALERTS{alertname="KairosGpuIdle"}')
    if a["metric"]["job_id"] == "102"] , 20)
states = {(a["metric"]["pid"], a["metric"]["alertstate"]) for a in alerts}
if {p for p, s in states if s == "pending"} != set(idle_pids):
    fail.append("KairosGpuIdle pending for %s, expected %s" % (states, idle_pids))
if query('ALERTS{alertname="KairosGpuIdle",job_id="101"}'):
    fail.append("KairosGpuIdle for the busy job")

# 4. Kill the busy job's ranks: their series leave /metrics at the daemon's next sweep
# (<= 1 s) and Prometheus marks them stale at the next scrape.
for p in busy_pids:
    os.kill(int(p), signal.SIGKILL)
killed = time.time()
wait_for("the killed job's series to disappear", lambda: not query('kairos_gpu_busy_ratio{job_id="101"}'), 10)
print("series gone %.1f s after the kill" % (time.time() - killed))
if time.time() - killed > 5:
    fail.append("series disappeared only after %.1f s" % (time.time() - killed))
if pids_of("102") != idle_pids:
    fail.append("the idle job's series changed: %s" % pids_of("102"))
for f in fail:
    print("FAIL: " + f)
sys.exit(1 if fail else 0)
PY
rc=$?
[ $rc -eq 0 ] && echo "PASS"
exit $rc
