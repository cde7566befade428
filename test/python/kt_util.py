"""Helpers shared by the Python/torch tests (test/python). Environment from ctest:
KAIROS_PY (the interpreter), KAIROS_PYTHONPATH (build/python), KAIROS_LIB (libkairos.so),
KAIROS_CLI (the kairos binary). Temp directories come from tmpdir(), removed at exit."""
import atexit
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))


def need_torch():
    try:
        import torch  # noqa: F401
    except ImportError as e:
        print("SKIP: torch is not importable by %s (%s); install python3-torch" % (sys.executable, e))
        sys.exit(SKIP)


def env(**extra):
    e = dict(os.environ)
    e["PYTHONPATH"] = os.environ["KAIROS_PYTHONPATH"]
    for k in ("KAIROS_CONFIG", "KAIROS_CONFIG_TEXT", "KINETO_CONFIG", "KINETO_USE_DAEMON", "LD_PRELOAD"):
        e.pop(k, None)
    e.update({k: v for k, v in extra.items() if v is not None})
    return e


def run_kairos(script, script_args=(), config=None, extra_env=None, check=True, timeout=300,
               with_flops=False):
    cmd = [sys.executable, "-m", "kairos", "run"]
    if with_flops:
        cmd.append("--with-flops")
    if config:
        cmd += ["--config", config]
    cmd += [script] + list(script_args)
    p = subprocess.run(cmd, env=env(**(extra_env or {})), capture_output=True, text=True,
                       timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError("%s failed (%d):\n%s\n%s" % (cmd, p.returncode, p.stdout, p.stderr))
    return p


def trace_of(proc):
    """The trace path `python3 -m kairos run` printed ("kairos: trace PATH"), or None."""
    m = re.search(r"^kairos: trace (.*)$", proc.stderr, re.M)
    return m.group(1) if m else None


def load(path):
    with open(path) as f:
        return json.load(f)


def events(trace, cat=None, name=None, prefix=None):
    out = []
    for e in trace["traceEvents"]:
        if e.get("ph") != "X":
            continue
        if cat is not None and e.get("cat") != cat:
            continue
        n = e.get("name", "")
        if name is not None and n != name:
            continue
        if prefix is not None and not n.startswith(prefix):
            continue
        out.append(e)
    return out


def step_ranges(trace):
    return {e["name"]: e for e in events(trace, cat="user_annotation", prefix="ProfilerStep#")}


def ops_within(trace, span, prefix="aten::"):
    lo, hi = span["ts"], span["ts"] + span["dur"]
    c = collections.Counter()
    for e in events(trace, cat="cpu_op", prefix=prefix):
        if e["ts"] >= lo and e["ts"] + e["dur"] <= hi:
            c[e["name"]] += 1
    return c


def tmpdir():
    """A fresh directory under $TMPDIR (else /tmp) for the test's files, removed with
    everything in it when the test process exits: at the end of the script, at sys.exit (as
    in Failures.done) or after an uncaught exception, and after the children the test waited
    for or stopped. The tests call it at module level and use the path until they exit, so a
    `with` block would have to span each whole script; this is its equivalent. A fork()ed
    child that exits through sys.exit leaves the parent's directory alone."""
    d = tempfile.mkdtemp(prefix="kairos_pyt_")
    owner = os.getpid()

    def remove():
        if os.getpid() == owner:
            shutil.rmtree(d, ignore_errors=True)

    atexit.register(remove)
    return d


class Failures:
    def __init__(self):
        self.n = 0

    def check(self, cond, what):
        if cond:
            print("ok   %s" % what)
        else:
            self.n += 1
            print("FAIL %s" % what)

    def eq(self, a, b, what):
        self.check(a == b, "%s: %r == %r" % (what, a, b))

    def done(self):
        if self.n:
            print("%d check(s) failed" % self.n)
            sys.exit(1)
        print("all checks passed")
        sys.exit(0)
