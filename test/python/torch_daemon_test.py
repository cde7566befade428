"""A daemon-triggered iteration window on a running, unmodified PyTorch script: `kairos
daemon` relay, the script under `python3 -m kairos run` with KINETO_USE_DAEMON=1, then
`kairos trace --iterations 3 --with-flops` (the bridge computes FLOPs: KAIROS_TORCH_WITH_FLOPS=1):
the trace has exactly 3 ProfilerStep ranges and the ops, aten::addmm with its flops. Then
`kairos trace --profile-memory` (a time window; the bridge reports PyTorch's allocator events:
KAIROS_TORCH_PROFILE_MEMORY=1): CPU [memory] events under ops, none lost (each Total Allocated
is the previous one plus its Bytes)."""
import os
import re
import subprocess
import sys
import time

import kt_util as k

k.need_torch()
f = k.Failures()
d = k.tmpdir()
cli = os.environ["KAIROS_CLI"]
endpoint = "kairos-pyt-%d" % os.getpid()
job = str(4100000000 + os.getpid())
relay = subprocess.Popen([cli, "daemon", "--port", "0", "--endpoint", endpoint, "--verbose"],
                         stderr=subprocess.PIPE, text=True)
procs = [relay]
try:
    port = None
    deadline = time.time() + 20
    while time.time() < deadline and port is None:
        line = relay.stderr.readline()
        m = re.search(r"rpc 127\.0\.0\.1:([0-9]+)", line)
        if m:
            port = int(m.group(1))
    f.check(port is not None, "relay listening")
    stop = os.path.join(d, "stop")
    env = k.env(KINETO_USE_DAEMON="1", KAIROS_DAEMON_ENDPOINT=endpoint, KAIROS_JOB_ID=job,
                KINETO_ONDEMAND_TRACE_DIR=d, KAIROS_CONFIG_TEXT="KAIROS_DAEMON_POLL_MS=50",
                KAIROS_TORCH_WITH_FLOPS="1", KAIROS_TORCH_PROFILE_MEMORY="1")
    script = subprocess.Popen([sys.executable, "-m", "kairos", "run",
                               os.path.join(k.HERE, "long_train.py"), stop, "120"],
                              env=env, stdout=subprocess.PIPE, stderr=open(os.path.join(d, "job.log"), "w"),
                              text=True)
    procs.append(script)
    ready = script.stdout.readline()
    f.check(ready.startswith("ready "), "script running: %r" % ready)
    pid = script.pid
    want = "job %s pid %d type" % (job, pid)
    deadline = time.time() + 30
    registered = False
    while time.time() < deadline and not registered:
        line = relay.stderr.readline()
        registered = want in line
    f.check(registered, "script registered with the relay")
    trace = subprocess.run([cli, "trace", "--port", str(port), "--job-id", job, "--log-file",
                            os.path.join(d, "trace.json"), "--iterations", "3", "--with-flops"],
                           capture_output=True, text=True, timeout=60)
    f.eq(trace.returncode, 0, "kairos trace accepted: " + trace.stdout.strip())
    out = os.path.join(d, "trace_%d.json" % pid)
    deadline = time.time() + 60
    while time.time() < deadline and not os.path.exists(out):
        time.sleep(0.1)
    f.check(os.path.exists(out), "trace file %s written" % out)
    mem = subprocess.run([cli, "trace", "--port", str(port), "--job-id", job, "--log-file",
                          os.path.join(d, "mem.json"), "--duration-ms", "2000", "--profile-memory"],
                         capture_output=True, text=True, timeout=60)
    f.eq(mem.returncode, 0, "kairos trace --profile-memory accepted: " + mem.stdout.strip())
    mem_out = os.path.join(d, "mem_%d.json" % pid)
    deadline = time.time() + 60
    while time.time() < deadline and not os.path.exists(mem_out):
        time.sleep(0.1)
    f.check(os.path.exists(mem_out), "trace file %s written" % mem_out)
    open(stop, "w").close()
    script.wait(timeout=60)
    if os.path.exists(out):  # written whole (temp file, then rename); the job has exited
        t = k.load(out)
        steps = sorted(k.step_ranges(t))
        f.eq(len(steps), 3, "3 ProfilerStep ranges: %s" % steps)
        f.check(len(k.events(t, cat="cpu_op", name="aten::linear")) >= 3, "ops of the window")
        # nn.Linear(16, 4) on [8, 16]: addmm 2 * 8 * 16 * 4.
        addmm = k.events(t, cat="cpu_op", name="aten::addmm")
        f.check(len(addmm) >= 3 and all(e["args"].get("flops") == 1024 for e in addmm),
                "--with-flops: every aten::addmm has flops 1024 (%s)" % [e["args"].get("flops") for e in addmm])
        f.check(not [e for e in t["traceEvents"] if e.get("name") == "[memory]"],
                "a request without --profile-memory has no [memory] event")
    if os.path.exists(mem_out):
        t = k.load(mem_out)
        # A time window (--profile-memory is one, as in dyno): 2 s so that a loaded machine
        # (ctest -j2 beside the simulator tests) still runs the 5 ms loop inside it; 300 ms
        # once held no step at all there.
        f.check(len(k.events(t, cat="cpu_op", name="aten::linear")) >= 3, "ops in the memory window")
        ev = sorted((e for e in t["traceEvents"] if e.get("name") == "[memory]"),
                    key=lambda e: float(e["ts"]))
        f.check(len(ev) >= 10 and all(e["args"]["Device Type"] == 0 for e in ev),
                "CPU [memory] events in the window: %d" % len(ev))
        f.check(all("External id" in e["args"] for e in ev if e["args"]["Bytes"] > 0),
                "every allocation under an op")
        chain = [i for i in range(1, len(ev)) if ev[i]["args"]["Total Allocated"] !=
                 ev[i - 1]["args"]["Total Allocated"] + ev[i]["args"]["Bytes"]]
        f.check(not chain, "no event lost: Total Allocated chains (breaks at %s)" % chain[:5])
finally:
    for p in procs:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
f.done()
