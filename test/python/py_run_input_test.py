"""`python3 -m kairos run` and the files it reads (issue 30, item 2 and "Also"), torch-free:
- KAIROS_CONFIG naming a FIFO: the run does not hang (the Python side used to open it
  blocking, forever); --config-file naming a FIFO, a directory, a device or a file over
  1 MiB: one line naming the file, exit status 2, nothing run, no trace;
- the script missing or a FIFO, a bad --config: one line, exit 2, no traceback, no trace
  (the old code printed a traceback and still wrote the window's trace);
- kairos._input.read_input_file itself: every refusal's exact line, without blocking;
- a script that ends before a time window opens: one line saying why there is no trace (the
  old code said nothing); with ACTIVITIES_WARMUP_PERIOD_SECS=0 a 1 s script gets its trace, and
  so does an instant one (the run starts it once the window records)."""
import os
import subprocess
import sys
import threading

sys.modules["torch"] = None  # torch-free, as on a machine without torch
sys.path.insert(0, os.environ["KAIROS_PYTHONPATH"])
from kairos import _input  # noqa: E402

import kt_util as k  # noqa: E402

f = k.Failures()
d = k.tmpdir()
PROG = "python3 -m kairos run: "
fifo = os.path.join(d, "cfg.fifo")
os.mkfifo(fifo)
script = os.path.join(d, "plain.py")
with open(script, "w") as s:
    s.write("print('plain ran')\n")
big = os.path.join(d, "big.conf")
with open(big, "w") as s:
    s.write("# padding\n" * 110000)  # 1,100,000 bytes
size_big = os.path.getsize(big)


def run(args, extra_env=None, timeout=60):
    """Runs `python3 -m kairos run ARGS`; a hang is a failure (returncode None)."""
    cmd = [sys.executable, "-m", "kairos", "run"] + args
    try:
        return subprocess.run(cmd, env=k.env(**(extra_env or {})), capture_output=True,
                              text=True, timeout=timeout, cwd=d)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, None, "", "TIMEOUT after %d s" % timeout)


def traces():
    return sorted(n for n in os.listdir(d) if n.startswith("t_") and n.endswith(".json"))


# The helper: exact lines, no blocking (a FIFO open would block without O_NONBLOCK).
def refusal(path, limit=_input.MAX_CONFIG_BYTES):
    result = []
    th = threading.Thread(target=lambda: result.append(_try_read(path, limit)), daemon=True)
    th.start()
    th.join(10)
    return result[0] if result else "BLOCKED"


def _try_read(path, limit):
    try:
        return _input.read_input_file(path, limit)
    except _input.InputFileError as e:
        return str(e)


f.eq(refusal(fifo), fifo + ": is a FIFO, not a regular file; refusing to read it", "helper: FIFO")
f.eq(refusal(d), d + ": is a directory, not a regular file; refusing to read it", "helper: dir")
f.eq(refusal("/dev/zero"), "/dev/zero: is a character device, not a regular file; refusing to "
     "read it", "helper: device")
f.eq(refusal(big), "%s: is %d bytes; the limit is 1048576; refusing to read it" % (big, size_big),
     "helper: over the size cap")
f.eq(refusal(os.path.join(d, "none")), os.path.join(d, "none") + ": No such file or directory",
     "helper: missing")
f.eq(refusal(os.path.join(d, "a\nb")), os.path.join(d, "a\\x0ab") + ": No such file or directory",
     "helper: the name is printed on one line")
f.eq(refusal(script), b"print('plain ran')\n", "helper: a regular file is read")
f.eq(refusal(script, 5), "%s: is 19 bytes; the limit is 5; refusing to read it" % script,
     "helper: limit argument")

# KAIROS_CONFIG naming a FIFO: the library refuses it and says so; the run goes on.
r = run([script], extra_env={"KAIROS_CONFIG": fifo}, timeout=30)
f.eq(r.returncode, 0, "KAIROS_CONFIG=FIFO: no hang, the script runs (stderr: %s)" % r.stderr.strip())
f.check("plain ran" in r.stdout, "KAIROS_CONFIG=FIFO: script output")

cfg_window = "ACTIVITIES_WARMUP_PERIOD_SECS=0;ACTIVITIES_DURATION_MSECS=200;ACTIVITIES_LOG_FILE=" + \
    os.path.join(d, "t.json")
for what, args, line in [
    ("--config-file FIFO", ["--config-file", fifo, script],
     PROG + fifo + ": is a FIFO, not a regular file; refusing to read it"),
    ("--config-file directory", ["--config-file", d, script],
     PROG + d + ": is a directory, not a regular file; refusing to read it"),
    ("--config-file device", ["--config-file", "/dev/zero", script],
     PROG + "/dev/zero: is a character device, not a regular file; refusing to read it"),
    ("--config-file over 1 MiB", ["--config-file", big, script],
     PROG + "%s: is %d bytes; the limit is 1048576; refusing to read it" % (big, size_big)),
    ("missing script", ["--config", cfg_window, "nope.py"],
     PROG + "nope.py: No such file or directory"),
    ("script is a FIFO", ["--config", cfg_window, fifo],
     PROG + fifo + ": is a FIFO, not a regular file; refusing to read it"),
    ("bad --config", ["--config", cfg_window + ";PROFILE_START_ITERATION=abc", script],
     PROG + '--config: config line 4: PROFILE_START_ITERATION: "abc" is not an integer; '
     "expected an integer in [0, 2147483647]"),
]:
    r = run(args, timeout=30)
    f.eq(r.returncode, 2, what + ": exit status")
    f.eq(r.stderr, line + "\n", what + ": one line on stderr")
    f.eq(r.stdout, "", what + ": nothing ran")
    f.eq(traces(), [], what + ": no trace written")

bad_file = os.path.join(d, "bad.conf")
with open(bad_file, "w") as s:
    s.write("ACTIVITIES_DURATION_MSECS=-5\n")
r = run(["--config-file", bad_file, script])
f.eq((r.returncode, r.stderr), (2, PROG + "--config-file %s: config line 1: ACTIVITIES_DURATION_MSECS:"
                                ' "-5" is negative; expected an integer in [0, 2147483647]\n'
                                % bad_file), "bad --config-file: one line naming the file")

# A short script and a time window: the library cancels a window that has not opened when
# the run ends (default warm-up 5 s): one line says so; without warm-up it gets its trace.
r = run(["--config", "ACTIVITIES_DURATION_MSECS=200;ACTIVITIES_LOG_FILE=" + os.path.join(d, "t.json"),
         script])
f.eq(r.returncode, 0, "short script, default warm-up: exit status")
f.eq(r.stderr, "kairos: no trace: the script ended before the window opened (a time window "
     "opens after ACTIVITIES_WARMUP_PERIOD_SECS, default 5 s, plus the profiler's warm-up; an "
     "iteration window at its start iteration) and a window that has not opened is cancelled at "
     "the end; set ACTIVITIES_WARMUP_PERIOD_SECS=0, see docs/PYTORCH.md\n",
     "short script, default warm-up: one line saying why there is no trace")
# Without the warm-up period only the profiler's own warm-up is left (milliseconds here, about
# 0.3 s with CUPTI on a GPU): a script of 1 s gets its trace.
second = os.path.join(d, "second.py")
with open(second, "w") as s:
    s.write("import time\ntime.sleep(1)\n")
r = run(["--config", cfg_window, second])
path = k.trace_of(r)
f.check(r.returncode == 0 and path is not None and os.path.isfile(path),
        "1 s script, no warm-up period: trace written (%s)" % r.stderr.strip())
# ';' separates --config lines for the library; the run's own checks read it the same way
# (a ';'-separated PROFILE_REPORT_INPUT_SHAPES=true used to leave the bridge without shapes).
from kairos import __main__ as kmain  # noqa: E402
f.check(kmain._wants_shapes("ACTIVITIES_DURATION_MSECS=5;PROFILE_REPORT_INPUT_SHAPES=true"),
        "';'-separated config: shapes asked for")
f.check(kmain._wants_flops("PROFILE_WITH_FLOPS=true ; ACTIVITIES_DURATION_MSECS=5"),
        "';'-separated config: FLOPs asked for")
f.check(kmain._from_start("ACTIVITIES_DURATION_MSECS=5;ACTIVITIES_WARMUP_PERIOD_SECS=0") and
        not kmain._from_start("ACTIVITIES_WARMUP_PERIOD_SECS=0;PROFILE_START_ITERATION=3") and
        not kmain._from_start("ACTIVITIES_DURATION_MSECS=5"),
        "a time window from the first line is recognised, iteration windows are not")

# Issue 30: a script shorter than the profiler's own warm-up, with the warm-up period at 0
# (';'-separated config): the run starts the script once the window records, so it gets its
# trace with the script's frames in it (before: "no trace").
instant = os.path.join(d, "instant.py")
with open(instant, "w") as s:
    s.write("def work():\n    return sum(range(10))\nwork()\n")
r = run(["--with-stack", "--config", cfg_window.replace("200", "5000"), instant])
path = k.trace_of(r)
f.check(r.returncode == 0 and path is not None and os.path.isfile(path),
        "instant script, no warm-up period: trace written (%s)" % r.stderr.strip())
if path:
    names = [e["name"] for e in k.load(path)["traceEvents"] if e.get("cat") == "python_function"]
    f.eq([n for n in names if n.startswith(instant)], [instant + "(1): <module>", instant + "(1): work"],
         "instant script: its frames are in the window")

# --profile-memory: PROFILE_PROFILE_MEMORY=true joins the run's config (and so the trace's),
# after --config-file's text as after --config's; without it, it stays off.
import json  # noqa: E402
window_file = os.path.join(d, "window.conf")
with open(window_file, "w") as s:
    s.write(cfg_window.replace(";", "\n") + "\n")
for what, args, on in [("--profile-memory --config", ["--profile-memory", "--config", cfg_window], True),
                       ("--profile-memory --config-file", ["--profile-memory", "--config-file", window_file], True),
                       ("--config alone", ["--config", cfg_window], False)]:
    r = run(args + [second])
    path = k.trace_of(r)
    f.check(r.returncode == 0 and path is not None, what + ": trace written (%s)" % r.stderr.strip())
    if path:
        with open(path) as t:
            config = json.load(t)["kairos_config"]
        f.eq("PROFILE_PROFILE_MEMORY=true" in config, on, what + ": memory recording in the config")
f.done()
