"""Python stacks with torch: `python3 -m kairos run --with-stack` of an unmodified training
script with an iteration window. Every cpu_op lies inside the Python frame that was running
when it started: aten::linear's innermost frame is nn.Linear's forward (called through
Module._call_impl from the script's step), aten::sum's is the script's step (out.sum() is a
C method, not a Python frame); python_function ids are dense and parents enclose children."""
import collections
import json
import os
import subprocess
import sys

import kt_util as k

k.need_torch()
f = k.Failures()
d = k.tmpdir()
script = os.path.join(k.HERE, "stack_train.py")
# The lines the script marks (# LINE:<what>), as the trace's line args must name them.
with open(script) as fh:
    LINE = {l.split("# LINE:")[1].strip(): n for n, l in enumerate(fh, 1) if "# LINE:" in l}
    fh.seek(0)
    DEF_STEP = [n for n, l in enumerate(fh, 1) if l.startswith("def step(")][0]
cmd = [sys.executable, "-m", "kairos", "run", "--with-stack", "--profile-memory", "--config",
       "PROFILE_START_ITERATION=4;ACTIVITIES_WARMUP_ITERATIONS=2;ACTIVITIES_ITERATIONS=2;"
       "KAIROS_SUMMARY=off;"
       "KAIROS_ITERATION_FALLBACK_TIMEOUT_MS=600000;ACTIVITIES_LOG_FILE=%s" % os.path.join(d, "t.json"),
       script, "8"]
p = subprocess.run(cmd, env=k.env(), capture_output=True, text=True, timeout=600)
f.eq(p.returncode, 0, "run exit status (stderr: %s)" % p.stderr[-2000:])
path = k.trace_of(p)
f.check(path is not None, "trace written")
if path:
    t = k.load(path)
    steps = sorted(k.step_ranges(t))
    f.eq(steps, ["ProfilerStep#4", "ProfilerStep#5"], "iteration window")
    py = [e for e in t["traceEvents"] if e.get("cat") == "python_function"]
    f.check(len(py) > 0, "python_function events (%d)" % len(py))
    by_id = {e["args"]["Python id"]: e for e in py}
    f.check(sorted(by_id) == list(range(1, len(py) + 1)), "ids 1..N, each once")
    eps = 0.002

    def encloses(a, b):
        return a["tid"] == b["tid"] and a["ts"] <= b["ts"] + eps and \
            a["ts"] + a["dur"] >= b["ts"] + b["dur"] - eps

    bad = [e for e in py if e["args"].get("Python parent id") is not None and
           not encloses(by_id[e["args"]["Python parent id"]], e)]
    f.eq(len(bad), 0, "parents enclose their children")

    def innermost(op):
        best = None
        for e in py:
            if encloses(e, op) and (best is None or e["args"]["Python id"] > best["args"]["Python id"]):
                best = e
        return best

    def chain(e):
        names = []
        while e is not None:
            names.append(e["name"])
            e = by_id.get(e["args"].get("Python parent id"))
        return names

    ops = [e for e in t["traceEvents"] if e.get("cat") == "cpu_op"]
    lin = [e for e in ops if e["name"] == "aten::linear"]
    sums = [e for e in ops if e["name"] == "aten::sum"]
    f.eq(len(lin), 4, "two aten::linear per step, two steps")
    step_name = "%s(%d): step" % (script, DEF_STEP)
    for op in lin:
        c = chain(innermost(op))
        f.check(c and c[0].endswith("): forward") and "nn/modules/linear.py(" in c[0] and
                any("): _call_impl" in n for n in c) and step_name in c,
                "aten::linear under Linear.forward <- _call_impl <- step: %s" % c[:4])
    # out.sum() in step (a C method: no frame of its own) and the bias gradients' sums in
    # loss.backward() (under Tensor.backward's frame).
    # (Counting outermost ops only: PyTorch may run an aten::sum inside an aten::sum.)
    outer = [op for op in sums if not any(o is not op and encloses(o, op) for o in ops)]
    fwd = [op for op in outer if chain(innermost(op))[:1] == [step_name]]
    f.eq(len(fwd), 2, "one outermost aten::sum directly under step per step")
    rest = [chain(innermost(op)) for op in sums
            if chain(innermost(op))[:1] != [step_name]]
    f.check(len(rest) > 0 and all(any("_tensor.py(" in n and n.endswith("): backward") for n in c)
                                  and step_name in c for c in rest),
            "the other aten::sum ops are under Tensor.backward <- step (%d)" % len(rest))
    # Python frames are on the thread that ran them, with the ops.
    f.eq({e["tid"] for e in lin} <= {e["tid"] for e in py}, True, "ops' thread has Python frames")

    # Lines (docs/PYTHON_STACKS.md "Lines"). An op called straight from step carries step's
    # line ("Python line"); a frame carries the line of its caller that called it ("Python
    # caller line"): model(x)'s _call_impl, loss.backward()'s Tensor.backward.
    def line_of(e):
        return e["args"].get("Python line")

    def outer_under_step(name):
        return [op for op in ops if op["name"] == name and chain(innermost(op))[:1] == [step_name]
                and not any(o is not op and encloses(o, op) for o in ops)]
    items = outer_under_step("aten::item")
    f.eq([line_of(op) for op in items], [LINE["item"]] * 2, "aten::item's Python line is loss.item()'s")
    f.eq([line_of(op) for op in fwd], [LINE["sum"]] * 2, "aten::sum's Python line is out.sum()'s")
    zeros = outer_under_step("aten::zeros")
    f.eq([line_of(op) for op in zeros], [LINE["leak"]] * 2, "aten::zeros' Python line is the leak's")
    # Nested ops inside a C call keep the Python line of the call that made them.
    inner = [op for op in ops if any(o is not op and encloses(o, op) for o in items)]
    f.check(len(inner) > 0 and all(line_of(op) == LINE["item"] for op in inner),
            "ops inside aten::item carry its line: %s" % [(o["name"], line_of(o)) for o in inner])
    step_ids = {e["args"]["Python id"] for e in py if e["name"] == step_name}
    kids = collections.defaultdict(set)
    for e in py:
        if e["args"].get("Python parent id") in step_ids:
            kids[e["name"].rsplit("): ", 1)[-1]].add(e["args"].get("Python caller line"))
    f.eq(kids.get("_call_impl"), {LINE["model"]}, "model(x)'s frame was called from its line")
    f.eq(kids.get("backward"), {LINE["backward"]}, "loss.backward()'s frame was called from its line")
    # An op inside a library frame carries that frame's line: F.linear's in Linear.forward, as
    # torch's own source has it.
    import inspect
    import torch.nn
    src, first = inspect.getsourcelines(torch.nn.Linear.forward)
    want = [first + i for i, l in enumerate(src) if "F.linear(" in l]
    f.eq(sorted({line_of(op) for op in lin}), want, "aten::linear's line is F.linear's in forward")

    # Allocation sites (issue 25 item 5): the leaked tensor's [memory] events carry its line,
    # and `kairos summarize` names the user's line of the site that never freed.
    mem = [e for e in t["traceEvents"] if e.get("name") == "[memory]"]
    f.check(any(e["args"].get("Python line") == LINE["leak"] for e in mem),
            "a [memory] event at the leak's line (%d events)" % len(mem))
    summ = subprocess.run([os.environ["KAIROS_CLI"], "summarize", "--format", "json", path],
                          capture_output=True, text=True, timeout=120)
    f.eq(summ.returncode, 0, "kairos summarize (%s)" % summ.stderr[-500:])
    hosts = [m for m in json.loads(summ.stdout or "{}").get("memory", []) if m["device_type"] == "cpu"]
    at = "stack_train.py:%d in step" % LINE["leak"]
    leak = [s for h in hosts for s in h["not_freed_sites"] if s.get("python") == at]
    f.eq([(s["name"], s["count"], s["bytes"]) for s in leak], [("aten::empty", 2, 8000)],
         "the leak's site: two 4,000-byte tensors at %s (%s)" % (at, [h["not_freed_sites"] for h in hosts]))
    text = subprocess.run([os.environ["KAIROS_CLI"], "summarize", path], capture_output=True,
                          text=True, timeout=120)
    f.check('from "aten::empty" at %s' % at in text.stdout, "summarize text names the leak's line")

    # Host-side findings name the user's line: the trace's real frames and lines, with GPU
    # work and synchronisations added where loss.item() ran (CPU torch has no GPU to wait
    # on): from the start of the window's first aten::item, 12 cudaStreamSynchronize calls of
    # 1 ms on its thread, each with its GPU-side Stream Sync (Kineto's form, linked by
    # correlation id), and a kernel every millisecond of the window. excessive_sync must name
    # the item's line (and op) as the trace's real frames and lines give it.
    x = [e for e in t["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "python_function"]
    t0, t1 = min(e["ts"] for e in x), max(e["ts"] + e["dur"] for e in x)
    extra = [{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": t0 + 1000 * i,
              "dur": 900, "args": {"device": 0, "stream": 7, "correlation": 0}}
             for i in range(int((t1 - t0) / 1000))]
    it = items[0]
    slot = it["dur"] / 13.0  # the host calls inside the op (it ran them); the GPU waits 1 ms each
    for i in range(12):
        extra += [{"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize",
                   "pid": it["pid"], "tid": it["tid"], "ts": it["ts"] + slot * (i + 0.5),
                   "dur": slot / 2, "args": {"cbid": 131, "correlation": 9000 + i}},
                  {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7,
                   "ts": it["ts"] + 1000 * i, "dur": 999,
                   "args": {"device": 0, "stream": 7, "correlation": 9000 + i}}]
    synced = dict(t)
    synced["traceEvents"] = list(t["traceEvents"]) + extra
    sp = os.path.join(d, "synced.json")
    with open(sp, "w") as fh:
        json.dump(synced, fh)
    res = {fmt: subprocess.run([os.environ["KAIROS_CLI"], "summarize", "--format", fmt, sp],
                               capture_output=True, text=True, timeout=120) for fmt in ("json", "text")}
    want = "is in Python stack_train.py:%d in step (aten::item)." % LINE["item"]
    found = [x for x in json.loads(res["json"].stdout or "{}").get("findings", []) if x.get("id") == "excessive_sync"]
    f.check(len(found) == 1 and want in found[0].get("recommendation", ""),
            "excessive_sync (summary JSON) names loss.item()'s line: %s" % [x.get("recommendation") for x in found])
    f.check(want in res["text"].stdout, "excessive_sync (summarize text) names loss.item()'s line")

    # The line args of ops, frames and [memory] events survive kairos convert both ways (the
    # Perfetto writer and reader; a [memory] event once shared python_function's detail-table
    # number there and could get a frame's args instead of its own).
    def lines(trace):
        return sorted((e.get("cat"), e["name"], e["args"].get("Python line"),
                       e["args"].get("Python caller line"), e["args"].get("Bytes")) for e in trace["traceEvents"]
                      if e.get("cat") in ("cpu_op", "python_function", "cpu_instant_event") and
                      "args" in e and ("Python line" in e["args"] or "Python caller line" in e["args"]))
    pf, back = os.path.join(d, "t.pftrace"), os.path.join(d, "back.json")
    conv = [subprocess.run([os.environ["KAIROS_CLI"], "convert", a, b], capture_output=True,
                           text=True, timeout=120) for a, b in ((path, pf), (pf, back))]
    f.eq([c.returncode for c in conv], [0, 0], "convert to Perfetto and back (%s)" % conv[-1].stderr[-300:])
    if os.path.exists(back):
        want = lines(t)
        f.check(len(want) > 0 and lines(k.load(back)) == want,
                "every line arg kept through Perfetto (%d)" % len(want))

# --with-modules: Module._call_impl frames are named as PyTorch names module calls.
cmd[4] = "--with-modules"
p = subprocess.run(cmd, env=k.env(), capture_output=True, text=True, timeout=600)
f.eq(p.returncode, 0, "--with-modules run exit status (stderr: %s)" % p.stderr[-2000:])
path = k.trace_of(p)
f.check(path is not None, "--with-modules trace written")
if path:
    t = k.load(path)
    py = [e for e in t["traceEvents"] if e.get("cat") == "python_function"]
    by_id = {e["args"]["Python id"]: e for e in py}
    mods = collections.Counter(e["name"] for e in py if e["name"].startswith("nn.Module: "))
    f.eq(dict(mods), {"nn.Module: Sequential_0": 2, "nn.Module: Linear_0": 2,
                      "nn.Module: ReLU_0": 2, "nn.Module: Linear_1": 2},
         "one scope per module call, numbered per class in order of first call")
    f.eq(sum(1 for e in py if e["name"].endswith("): _call_impl")), 0, "no _call_impl frame left")
    lin = [e for e in t["traceEvents"] if e.get("cat") == "cpu_op" and e["name"] == "aten::linear"]
    chains = []
    for op in lin:
        inner = max((e for e in py if e["tid"] == op["tid"] and e["ts"] <= op["ts"] + 0.002 and
                     e["ts"] + e["dur"] >= op["ts"] + op["dur"] - 0.002),
                    key=lambda e: e["args"]["Python id"])
        c = []
        while inner is not None:
            c.append(inner["name"])
            inner = by_id.get(inner["args"].get("Python parent id"))
        chains.append(c)
    f.check(len(chains) == 4 and all(
        c[0].endswith("): forward") and c[1] in ("nn.Module: Linear_0", "nn.Module: Linear_1") and
        "nn.Module: Sequential_0" in c for c in chains),
        "aten::linear under Linear.forward <- nn.Module: Linear_N <- ... nn.Module: Sequential_0")
    f.eq([w for w in t.get("kairos_warnings", []) if "MODULES" in w], [], "no modules warning")
f.done()
