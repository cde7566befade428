"""Python stacks (PROFILE_WITH_STACK, docs/PYTHON_STACKS.md) without torch:
- a hidden-structure script (recursion, a generator, an exception, a thread started before
  the window and one started in it) gives exactly the expected python_function tree per
  thread, with dense ids, parents on the same thread that enclose their children, and the
  frames open when the window began reconstructed;
- the hook is on every thread in the window and on none before or after it;
- a window opened 10,000 frames deep has every frame in one chain;
- 100 threads started in the window, a file name that is not UTF-8: all recorded, the name
  escaped;
- `python3 -m kairos run --with-stack` of a script that exits mid-window: trace written,
  open frames unfinished;
- hostile use (issue 30): 100,000 frames of recursion inside the window unwound by an
  exception, 2,000 short-lived threads, 300 threads at once (past KAIROS_MAX_THREADS),
  1 MB / quote / newline / NUL / lone-surrogate frame names, and a ring that fills: every
  frame exact or every loss counted, the trace valid JSON.
Each script runs in its own interpreter."""
import collections
import json
import os
import subprocess
import sys

import kt_util as k

f = k.Failures()
d = k.tmpdir()

STRUCTURE = r'''
import json, sys, threading
import kairos
from kairos import _pytracer

def leaf(x):
    return x + 1

def rec(n):
    return leaf(n) if n == 0 else rec(n - 1)

def gen():
    yield 1
    yield 2

def boom():
    raise ValueError("boom")

def catch():
    try:
        boom()
    except ValueError:
        return "caught"

go, done = threading.Event(), threading.Event()
hooked = {}

def worker_a():
    go.wait()
    hooked["a"] = _pytracer.thread_hooked()
    rec(1)
    done.set()

def worker_b():
    hooked["b"] = _pytracer.thread_hooked()
    leaf(0)

def work():
    rec(2)
    for _ in gen():
        pass
    catch()
    b = threading.Thread(target=worker_b)
    b.start()
    b.join()
    go.set()
    done.wait()

def own_hook(*args):
    pass

a = threading.Thread(target=worker_a)
a.start()
threading.setprofile(own_hook)  # the program's hook for later threads: put back after
hooked["before"] = _pytracer.thread_hooked()
with kairos.profile(path=sys.argv[1], with_stack=True, on_trace_ready=hooked.setdefault("paths", []).append) as p:
    hooked["main"] = _pytracer.thread_hooked()
    work()
hooked["after"] = _pytracer.thread_hooked()
hooked["installed_after"] = _pytracer.installed()
hooked["own_hook_back"] = threading._profile_hook is own_hook
a.join()
print(json.dumps(hooked))
'''

DEEP = r'''
import sys
import kairos
sys.setrecursionlimit(30000)

def leaf():
    return 1

def down(n):
    if n == 0:
        with kairos.profile(path=sys.argv[1], with_stack=True, on_trace_ready=print):
            leaf()
        return 0
    return down(n - 1)

down(10000)
'''

MANY = r'''
import os, sys, threading
import kairos

def leaf():
    return 1

def worker():
    leaf()

bad = {}
exec(compile("def odd():\n    return 2\n", os.fsdecode(b"/tmp/bad\xff.py"), "exec"), bad)
with kairos.profile(path=sys.argv[1], with_stack=True, on_trace_ready=print):
    ts = [threading.Thread(target=worker) for _ in range(100)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    bad["odd"]()
'''

FORK = r'''
import os, sys, time
import kairos
from kairos import _pytracer

def leaf():
    return 1

def child_work():
    return sum(range(10))

with kairos.profile(path=sys.argv[1], with_stack=True, on_trace_ready=print):
    leaf()
    pid = os.fork()
    if pid == 0:  # mid-window: the child has no hook and records its own window
        print("child hooked", _pytracer.thread_hooked(), _pytracer.installed(), flush=True)
        kairos.init("ACTIVITIES_LOG_FILE=%s\nPROFILE_WITH_STACK=true\nKAIROS_SUMMARY=off" % sys.argv[2])
        kairos.start()
        time.sleep(0.05)
        child_work()
        print("child trace", kairos.flush(), flush=True)
        os._exit(0)
    os.waitpid(pid, 0)
    leaf()
'''

BUSY = r'''
import time
def busy():
    t = time.time()
    while time.time() - t < 0.3:
        pass
busy()
'''

EXITS = r'''
import sys, time
def inner():
    sys.exit(3)
def outer():
    inner()
time.sleep(0.3)
outer()
'''


HOSTILE_DEEP = r'''
import sys
import kairos
sys.setrecursionlimit(250000)

def down(n):
    if n == 0:
        raise ValueError("bottom")
    return down(n - 1)

with kairos.profile(path=sys.argv[1], with_stack=True, on_trace_ready=print):
    try:
        down(100000)
    except ValueError:
        pass
'''

SHORT_THREADS = r'''
import sys, threading
import kairos

def leaf():
    return 1

def worker():
    leaf()

with kairos.profile(path=sys.argv[1], with_stack=True, on_trace_ready=print):
    for _ in range(40):
        ts = [threading.Thread(target=worker) for _ in range(50)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
'''

AT_ONCE = r'''
import sys, threading
import kairos
N = 300
barrier = threading.Barrier(N)

def leaf():
    return 1

def worker():
    barrier.wait()
    leaf()

with kairos.profile(path=sys.argv[1], with_stack=True, on_trace_ready=print):
    ts = [threading.Thread(target=worker) for _ in range(N)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
'''

NAMES = r'''
import sys
import kairos

def f():
    return 1

huge = type(f)(f.__code__.replace(co_name="n" * 1000000, co_filename="/tmp/" + "F" * 200000), {})
odd = type(f)(f.__code__.replace(co_name='a"b\n\\c\x00d\ud800e', co_filename='/tmp/x"y\n.py'), {})
with kairos.profile(path=sys.argv[1], with_stack=True, on_trace_ready=print):
    huge()
    odd()
'''

RING_FULL = r'''
import sys
import kairos

def leaf():
    return 1

with kairos.profile(path=sys.argv[1], with_stack=True, on_trace_ready=print,
                    config="KAIROS_CPU_BUFFER_KB_PER_THREAD=64"):
    for _ in range(100000):
        leaf()
'''


def run_script(name, text, *args, kairos_run=None, extra_env=None):
    path = os.path.join(d, name)
    with open(path, "w") as fh:
        fh.write(text)
    if kairos_run is not None:
        cmd = [sys.executable, "-m", "kairos", "run"] + kairos_run + [path]
    else:
        cmd = [sys.executable, path]
    p = subprocess.run(cmd + list(args), env=k.env(**(extra_env or {})), capture_output=True,
                       text=True, timeout=300)
    return path, p


def py_events(trace):
    return [e for e in trace["traceEvents"] if e.get("cat") == "python_function"]


def check_ids(evs, what):
    """Dense ids 1..N; each parent exists, is on the same thread and encloses the child."""
    by_id = {e["args"]["Python id"]: e for e in evs}
    f.check(sorted(by_id) == list(range(1, len(evs) + 1)),
            "%s: ids are 1..%d, each once" % (what, len(evs)))
    bad = 0
    for e in evs:
        pid = e["args"].get("Python parent id")
        if pid is None:
            continue
        p = by_id.get(pid)
        if p is None or p["tid"] != e["tid"] or \
                p["args"]["Python thread"] != e["args"]["Python thread"] or \
                p["ts"] > e["ts"] + 0.002 or p["ts"] + p["dur"] < e["ts"] + e["dur"] - 0.002:
            bad += 1
    f.eq(bad, 0, what + ": parents on the same thread enclosing their children")
    return by_id


def short(e):
    return e["name"].rsplit("): ", 1)[-1]


def projected_forests(evs, by_id, keep):
    """Per Python thread: the tree of the frames `keep` accepts, each under its nearest kept
    ancestor (children in start order), as nested (name, [children]) tuples."""
    kids = collections.defaultdict(list)
    roots = collections.defaultdict(list)
    for e in sorted(evs, key=lambda e: e["args"]["Python id"]):
        if not keep(e):
            continue
        p = by_id.get(e["args"].get("Python parent id"))
        while p is not None and not keep(p):
            p = by_id.get(p["args"].get("Python parent id"))
        (kids[p["args"]["Python id"]] if p is not None else roots[e["args"]["Python thread"]]).append(e)

    def tree(e):
        return (short(e), [tree(c) for c in kids[e["args"]["Python id"]]])
    return {t: [tree(r) for r in rs] for t, rs in roots.items()}


# ---- The hidden structure ----
path, p = run_script("structure.py", STRUCTURE, os.path.join(d, "s.json"))
f.eq(p.returncode, 0, "structure script exit status (stderr: %s)" % p.stderr[-2000:])
out = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 else {}
f.eq({kk: out.get(kk) for kk in ("before", "main", "a", "b", "after", "installed_after", "own_hook_back")},
     {"before": False, "main": True, "a": True, "b": True, "after": False, "installed_after": False,
      "own_hook_back": True},
     "hook on every thread in the window, on none outside it; the program's threading hook back")
if out.get("paths"):
    t = k.load(out["paths"][0])
    evs = py_events(t)
    by_id = check_ids(evs, "structure")
    forests = projected_forests(evs, by_id, lambda e: e["name"].startswith(path + "("))
    leaf = ("leaf", [])
    want_main = [("<module>", [("work", [("rec", [("rec", [("rec", [leaf])])]),
                                         ("gen", []), ("gen", []), ("gen", []),
                                         ("catch", [("boom", [])])])])]
    want_a = [("worker_a", [("rec", [("rec", [leaf])])])]
    want_b = [("worker_b", [leaf])]
    f.eq(sorted(forests.values()), sorted([want_main, want_a, want_b]),
         "script frames per thread, exactly")
    f.eq(len({e["tid"] for e in evs}), 3, "three threads with Python frames")
    boom = [e for e in evs if short(e) == "boom"]
    f.eq([e["args"].get("finished", True) for e in boom], [True], "the frame an exception left is closed")
    mod = [e for e in evs if short(e) == "<module>" and e["name"].startswith(path)]
    f.eq([e["args"].get("Python parent id") for e in mod], [None], "<module> is a root (reconstructed)")
    st = t.get("kairos_stats", {})
    f.eq((st.get("python_frames"), st.get("python_threads"), st.get("python_unmatched_returns")),
         (len(evs), 3, 0), "python stats")
    name = [e["name"] for e in evs if short(e) == "leaf"][0]
    f.eq(name, "%s(6): leaf" % path, "PyTorch's name form file(line): function")

# ---- 10,000 frames deep ----
path, p = run_script("deep.py", DEEP, os.path.join(d, "deep.json"))
f.eq(p.returncode, 0, "deep script exit status (stderr: %s)" % p.stderr[-2000:])
if p.returncode == 0:
    t = k.load(p.stdout.strip().splitlines()[-1])
    evs = py_events(t)
    by_id = check_ids(evs, "deep")
    downs = [e for e in evs if short(e) == "down"]
    f.eq(len(downs), 10001, "every frame of the deep stack")
    depth, e = 0, [e for e in evs if short(e) == "leaf"][0]
    while e["args"].get("Python parent id") is not None:
        e = by_id[e["args"]["Python parent id"]]
        depth += short(e) == "down"
    f.eq(depth, 10001, "leaf sits under the whole chain")

# ---- 100 threads and a file name that is not UTF-8 ----
path, p = run_script("many.py", MANY, os.path.join(d, "many.json"))
f.eq(p.returncode, 0, "many script exit status (stderr: %s)" % p.stderr[-2000:])
if p.returncode == 0:
    t = k.load(p.stdout.strip().splitlines()[-1])
    evs = py_events(t)
    check_ids(evs, "many")
    workers = [e for e in evs if short(e) == "worker"]
    f.eq(len(workers), 100, "one worker frame per thread")
    f.eq(len({e["tid"] for e in workers}), 100, "on 100 threads")
    f.eq(t["kairos_stats"].get("python_threads"), 101, "101 Python threads")
    odd = [e["name"] for e in evs if short(e) == "odd"]
    f.eq(odd, ["/tmp/bad\\udcff.py(1): odd"], "undecodable file name escaped")

# ---- fork mid-window ----
path, p = run_script("fork.py", FORK, os.path.join(d, "parent.json"), os.path.join(d, "child.json"))
f.eq(p.returncode, 0, "fork script exit status (stderr: %s)" % p.stderr[-2000:])
lines = p.stdout.strip().splitlines()
f.check("child hooked False False" in lines, "the forked child has no hook")
child = [l.split(" ", 2)[2] for l in lines if l.startswith("child trace ")]
f.eq(len(child), 1, "the child wrote its own trace")
if child and p.returncode == 0:
    def mine(tp):
        return [short(e) for e in py_events(k.load(tp)) if e["name"].startswith(path + "(")]
    f.eq(mine(child[0]), ["<module>", "child_work"], "the child's window: its frames, named")
    f.eq(mine(lines[-1]), ["<module>", "leaf", "leaf"], "the parent's window: its frames")

# ---- kairos run --with-stack, the script exits mid-window ----
path, p = run_script("exits.py", EXITS, kairos_run=[
    "--with-stack", "--config", "ACTIVITIES_WARMUP_PERIOD_SECS=0;ACTIVITIES_DURATION_MSECS=60000;"
    "ACTIVITIES_LOG_FILE=%s" % os.path.join(d, "exits.json")])
f.eq(p.returncode, 3, "exit status of the script")
tp = k.trace_of(p)
f.check(tp is not None, "trace written (stderr: %s)" % p.stderr[-2000:])
if tp:
    evs = py_events(k.load(tp))
    check_ids(evs, "exits")
    got = {short(e): e["args"].get("finished", True) for e in evs if e["name"].startswith(path)}
    f.eq(got, {"<module>": True, "outer": True, "inner": True},
         "frames left by SystemExit are closed")

# ---- a window from the environment, open before the tracer attached (joined when it attaches) ----
path, p = run_script("busy.py", BUSY, kairos_run=["--with-stack"], extra_env={
    "KAIROS_CONFIG_TEXT": "ACTIVITIES_WARMUP_PERIOD_SECS=0;ACTIVITIES_DURATION_MSECS=60000;"
                          "KAIROS_SUMMARY=off;ACTIVITIES_LOG_FILE=%s" % os.path.join(d, "busy.json")})
tp = k.trace_of(p)
f.check(p.returncode == 0 and tp is not None, "startup window trace (stderr: %s)" % p.stderr[-2000:])
if tp:
    evs = py_events(k.load(tp))
    f.eq([short(e) for e in evs if e["name"].startswith(path + "(")], ["<module>", "busy"],
         "the tracer joined the window that opened at library load")


# ---- Hostile use (issue 30) ----
def hostile(name, text):
    path, p = run_script(name + ".py", text, os.path.join(d, name + ".json"))
    f.eq(p.returncode, 0, "%s script exit status (stderr: %s)" % (name, p.stderr[-2000:]))
    if p.returncode != 0:
        return path, None, None
    t = k.load(p.stdout.strip().splitlines()[-1])
    return path, t, py_events(t)

# 100,000 frames of recursion inside the window, unwound by an exception: every frame, one
# chain, every one closed.
path, t, evs = hostile("hostile_deep", HOSTILE_DEEP)
if t:
    by_id = check_ids(evs, "hostile deep")
    downs = [e for e in evs if short(e) == "down"]
    f.eq(len(downs), 100001, "every frame of the 100,000-deep recursion")
    f.eq(sum(1 for e in downs if e["args"].get("finished", True) is not True), 0,
         "frames unwound by the exception are closed")
    deepest = max(downs, key=lambda e: e["ts"])
    depth = 0
    while deepest["args"].get("Python parent id") is not None:
        deepest = by_id[deepest["args"]["Python parent id"]]
        depth += short(deepest) == "down"
    f.eq(depth, 100000, "the deepest frame sits under the whole chain")
    f.eq(t["kairos_stats"].get("python_unmatched_returns"), 0, "no unmatched return")

# 2,000 short-lived threads (50 at a time): each recorded on its own thread row.
path, t, evs = hostile("short_threads", SHORT_THREADS)
if t:
    check_ids(evs, "short threads")
    workers = [e for e in evs if short(e) == "worker"]
    f.eq(len(workers), 2000, "one worker frame per short-lived thread")
    f.eq(len({e["args"]["Python thread"] for e in workers}), 2000, "on 2000 Python threads")
    f.eq(t["kairos_stats"].get("python_threads"), 2001, "2001 Python threads counted")
    f.eq(t["kairos_stats"].get("cpu_dropped"), 0, "nothing dropped")

# 300 threads alive at once: the first 256 (KAIROS_MAX_THREADS, the main thread one of them)
# get a ring, the rest are dropped, counted and said.
path, t, evs = hostile("at_once", AT_ONCE)
if t:
    check_ids(evs, "at once")
    st = t["kairos_stats"]
    workers = [e for e in evs if short(e) == "worker"]
    f.eq((len(workers), st.get("python_threads"), st.get("cpu_threads")), (255, 256, 301),
         "workers with a ring, Python threads recorded, threads seen")
    f.check(st.get("cpu_dropped", 0) > 0, "the other threads' records counted as dropped")
    f.check(any("KAIROS_MAX_THREADS" in w for w in t.get("kairos_warnings", [])),
            "the loss is said in kairos_warnings")

# Frame names of 1 MB, and with quotes, a line feed, a backslash, NUL and a lone surrogate.
path, t, evs = hostile("names", NAMES)
if t:
    check_ids(evs, "names")
    mine = [e["name"] for e in evs if e["name"].startswith(("/tmp/F", "/tmp/x"))]
    f.eq(len(mine), 2, "both hostile frames recorded")
    big = [n for n in mine if n.startswith("/tmp/FFFF")]
    f.check(len(big) == 1 and len(big[0].encode()) <= 1024 and big[0].endswith("..."),
            "the 1 MB name cut to 1 KiB and marked (%r)" % [len(n) for n in big])
    f.check('/tmp/x"y\n.py(%d): a"b\n\\c\x00d\\ud800e' % (NAMES.count("\n", 0, NAMES.index("def f")) + 1) in mine,
            "the odd name kept, escaped only where it is not UTF-8 (%r)" % mine)

# A 64 KiB ring, 100,000 calls: it fills; every record kept or counted, frames consistent.
path, t, evs = hostile("ring_full", RING_FULL)
if t:
    check_ids(evs, "ring full")
    st = t["kairos_stats"]
    leaves = [e for e in evs if short(e) == "leaf"]
    f.check(0 < len(leaves) < 100000, "some leaf frames recorded (%d)" % len(leaves))
    f.check(st.get("cpu_dropped", 0) >= 2 * (100000 - len(leaves)),
            "every lost call and return counted (%s dropped)" % st.get("cpu_dropped"))
    f.eq(st.get("python_unmatched_returns"), 0, "no unmatched return")
    f.check(any("cpu_dropped" in w for w in t.get("kairos_warnings", [])), "the loss is said")
    unfinished = [e for e in evs if e["args"].get("finished", True) is not True]
    f.eq(len(unfinished), st.get("python_unfinished_frames"), "frames cut by the full ring are marked")


f.done()
