"""The ctypes layer without torch (torch made unimportable): ranges (context manager and
decorator), marks, steps, metadata, start/stop/flush; attach_torch fails with a clear
message and `python3 -m kairos run` still runs a torch-free script."""
import os
import sys

sys.modules["torch"] = None  # import torch -> ImportError, as on a machine without torch
sys.path.insert(0, os.environ["KAIROS_PYTHONPATH"])
import kairos  # noqa: E402

import kt_util as k  # noqa: E402

f = k.Failures()
d = k.tmpdir()
path = os.path.join(d, "t.json")
f.eq(kairos.version()[0], 0, "version major")
kairos.init("ACTIVITIES_LOG_FILE=%s\nKAIROS_SUMMARY=off" % path)
kairos.set_metadata("job", "ctypes")
f.eq(kairos.recording(), False, "idle before start")
kairos.start()
f.eq(kairos.recording(), True, "recording after start")


@kairos.range("decorated")
def work():
    kairos.mark("inside")


with kairos.range("outer"):
    work()
kairos.range_push("pushed")
kairos.range_pop()
rid = kairos.range_start("cross")
kairos.range_end(rid)
kairos.step()
kairos.step()
try:
    kairos.start()
    f.check(False, "second start raises")
except kairos.KairosError as e:
    f.check("busy" in str(e), "second start: %s" % e)
out = kairos.flush()
f.check(out.startswith(os.path.join(d, "t_")) and out.endswith(".json"), "flush returns the trace path: " + out)
t = k.load(out)
names = {e["name"] for e in k.events(t, cat="user_annotation")}
f.check({"outer", "decorated", "pushed", "cross"} <= names, "ranges recorded: %s" % sorted(names))
f.check(any(e.get("name") == "inside" for e in t["traceEvents"] if e.get("ph") == "i"), "mark")
f.eq(t.get("job"), "ctypes", "metadata")
f.check(len(k.step_ranges(t)) >= 2, "ProfilerStep ranges from kairos.step()")
f.check(not k.events(t, cat="cpu_op"), "no cpu_op without the bridge")
try:
    kairos.attach_torch()
    f.check(False, "attach_torch without torch raises")
except kairos.TorchUnavailable as e:
    f.check("torch is not importable" in str(e), "clear message: %s" % e)
try:
    kairos.init("PROFILE_START_ITERATION=abc")
    f.check(False, "bad config raises")
except kairos.KairosError as e:
    f.check("PROFILE_START_ITERATION" in str(e) and e.code == -1, "bad config names the key: %s" % e)

script = os.path.join(d, "plain.py")
with open(script, "w") as s:
    s.write("import sys\nprint('plain', sys.argv[1:])\n")
r = k.run_kairos(script, ["a", "b"])
f.check("plain ['a', 'b']" in r.stdout, "kairos run of a torch-free script")
f.done()
