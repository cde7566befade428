#!/usr/bin/env python3
# File: fleet_prometheus_memory.py
# Layer: bench. What one Prometheus pays per kairos series (docs/FLEET.md, "One Prometheus"): a
# real `kairos daemon --metrics-port` fed by fake processes (PROCS x GPUS series keys, 13 series
# each) is scraped by Debian's `prometheus` (own config, data dir, free loopback port) every 2 s
# for SECONDS; then Prometheus' own metrics: head series, resident memory, Go heap in use. Run it
# at two sizes and take the slope, so Prometheus' fixed cost drops out.
# usage: fleet_prometheus_memory.py KAIROS_BIN PROCS GPUS SECONDS
# Threading: single-threaded; the daemon and prometheus are child processes.
import json, os, shutil, socket, subprocess, sys, tempfile, time, urllib.request

kairos, procs, gpus, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
tmp = tempfile.mkdtemp(prefix="kairos-prom-mem-")
endpoint = "kairos-prom-mem-%d" % os.getpid()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def header(kind, payload):
    return len(payload).to_bytes(8, "little") + kind.encode().ljust(32, b"\0") + payload


daemon = subprocess.Popen([kairos, "daemon", "--port", "0", "--endpoint", endpoint, "--metrics-port", "0",
                           "--metrics-port-file", tmp + "/mport", "--no-pid-check",
                           "--metrics-max-series", str(procs * gpus + 1)],
                          stderr=subprocess.DEVNULL)
for _ in range(200):
    if os.path.exists(tmp + "/mport") and open(tmp + "/mport").read().strip():
        break
    time.sleep(0.02)
mport = int(open(tmp + "/mport").read())
prom_port = free_port()
with open(tmp + "/prometheus.yml", "w") as f:
    f.write("global: {scrape_interval: 2s, evaluation_interval: 60s}\n"
            "scrape_configs:\n  - job_name: kairos\n    static_configs: [{targets: ['127.0.0.1:%d']}]\n"
            "  - job_name: self\n    static_configs: [{targets: ['127.0.0.1:%d']}]\n" % (mport, prom_port))
prom = subprocess.Popen(["prometheus", "--config.file=" + tmp + "/prometheus.yml",
                         "--storage.tsdb.path=" + tmp + "/data", "--web.listen-address=127.0.0.1:%d" % prom_port,
                         "--log.level=warn"], stderr=subprocess.DEVNULL)

daemon_addr = b"\0" + endpoint.encode() + b"\0"
socks = []
for i in range(procs):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(b"\0" + ("%s-p%d" % (endpoint, i)).encode() + b"\0")
    s.setblocking(False)
    socks.append(s)


def poll_all():
    for i, s in enumerate(socks):
        req = (2).to_bytes(4, "little", signed=True) + (1).to_bytes(4, "little") + (7).to_bytes(8, "little") + \
              (200000 + i).to_bytes(4, "little")
        for _ in range(100):
            try:
                s.sendto(header("req", req), daemon_addr)
                break
            except BlockingIOError:
                time.sleep(0.001)
    time.sleep(0.2)
    for s in socks:
        try:
            while True:
                s.recv(70000)
        except BlockingIOError:
            pass


def send_lines():
    now_ns = time.time_ns()
    for i, s in enumerate(socks):
        pid = 200000 + i
        lines = "".join(json.dumps({"ts_ns": now_ns, "host": "h", "pid": pid, "job_id": 7, "rank": i, "device": g,
                                    "interval_ns": 10000000000, "gpu_busy_pct": 50.0 + g, "sm_active_pct": 40.5,
                                    "achieved_occupancy_pct": 30.0, "tensor_active_pct": 10.0,
                                    "dram_throughput_pct": 20.0, "kernels": 1000, "memcpy_bytes": 4096,
                                    "steps": 10, "step_time_ms_p50": 100.0, "process_cpu_pct": 100.0,
                                    "process_rss_bytes": 1 << 30, "gpu_memory_used_bytes": 60 << 30,
                                    "gpu_memory_total_bytes": 80 << 30}) + "\n" for g in range(gpus))
        for _ in range(100):
            try:
                s.sendto(header("tlm", lines.encode()), daemon_addr)
                break
            except BlockingIOError:
                time.sleep(0.001)


def prom_self():
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % prom_port, timeout=10) as r:
        text = r.read().decode()
    want = {}
    for line in text.splitlines():
        for name in ("prometheus_tsdb_head_series", "process_resident_memory_bytes", "go_memstats_heap_inuse_bytes"):
            if line.startswith(name + " "):
                want[name] = float(line.split()[1])
    return want


try:
    start = time.time()
    last_refresh = 0
    while time.time() - start < seconds:
        if time.time() - last_refresh >= 5:  # polls keep the registry entry, lines the series
            poll_all()
            send_lines()
            last_refresh = time.time()
        time.sleep(0.2)
    m = prom_self()
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % mport, timeout=10) as r:
        body = len(r.read())
    print("procs %d x gpus %d: agent body %d bytes; prometheus head series %d, RSS %.1f MiB, heap in use %.1f MiB"
          % (procs, gpus, body, m.get("prometheus_tsdb_head_series", -1),
             m.get("process_resident_memory_bytes", 0) / 2**20, m.get("go_memstats_heap_inuse_bytes", 0) / 2**20))
finally:
    prom.terminate()
    daemon.terminate()
    prom.wait()
    daemon.wait()
    shutil.rmtree(tmp, ignore_errors=True)
