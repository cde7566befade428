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
  open frames unfinished.
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

f.done()
