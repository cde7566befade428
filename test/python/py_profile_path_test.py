"""kairos.profile's output path and schedule cycles (issue 30, items 3 and 4), torch-free
(p.step() counts the iterations):
- path="exp#1.json": the path reaches the library as data (kairos_init_values), so the trace
  is exp#1_<pid>.json and a user file named "exp" (where the old code wrote: '#' started a
  comment in the config text it built) is untouched; '=', ';' and blanks survive too;
- a path the library refuses (a newline, a NUL) raises KairosError naming the value;
- schedule(repeat=2): two files, one per cycle, named _iter<N> (N = the cycle's first
  ProfilerStep), each holding its own steps; p.traces lists each once (the old code wrote
  both cycles to one path and listed it twice); repeat != 1 without path= is a ValueError."""
import os
import sys

sys.modules["torch"] = None
sys.path.insert(0, os.environ["KAIROS_PYTHONPATH"])
import kairos  # noqa: E402

import kt_util as k  # noqa: E402

f = k.Failures()
d = k.tmpdir()
pid = os.getpid()
base = "KAIROS_SUMMARY=off"

# '#' in the path: the old code wrote the trace over d/exp.
user_file = os.path.join(d, "exp")
with open(user_file, "w") as s:
    s.write("the user's own file\n")
with kairos.profile(path=os.path.join(d, "exp#1.json"), config=base) as p:
    kairos.mark("inside")
want = os.path.join(d, "exp#1_%d.json" % pid)
f.eq(p.traces, [want], "p.traces names the real file")
f.check(os.path.isfile(want), "the trace is exp#1_<pid>.json")
with open(user_file) as s:
    f.eq(s.read(), "the user's own file\n", "the user's file 'exp' is untouched")
f.check(want in p.traces and k.load(want).get("traceName") == want, "traceName is the full path")

odd = os.path.join(d, "a=b;c d.json")
with kairos.profile(path=odd, config=base) as p:
    pass
f.eq(p.traces, [os.path.join(d, "a=b;c d_%d.json" % pid)], "'=', ';' and a blank survive")

for bad, line in [
    (os.path.join(d, "a\nb.json"), "config value 1: ACTIVITIES_LOG_FILE: contains the control "
     "character \\x0a (NUL and control characters are never accepted)"),
    (os.path.join(d, "a\0b.json"), "config value 1: ACTIVITIES_LOG_FILE: contains the control "
     "character \\x00 (NUL and control characters are never accepted)"),
]:
    try:
        with kairos.profile(path=bad, config=base):
            pass
        f.check(False, "refused: %r" % bad)
    except kairos.KairosError as e:
        f.eq((e.code, str(e)), (-1, line), "refused with the value's name: %r" % bad)
f.eq(sorted(n for n in os.listdir(d) if n.startswith("a")), ["a=b;c d_%d.json" % pid],
     "nothing written for a refused path")

# schedule(repeat=2): one file per cycle.
sched = os.path.join(d, "sched.json")
ready = []
with kairos.profile(path=sched, config=base, on_trace_ready=ready.append,
                    schedule=kairos.schedule(wait=1, warmup=1, active=2, repeat=2)) as p:
    first = kairos.current_iteration()
    for _ in range(12):
        with kairos.range("work"):
            pass
        p.step()
# Cycle 1 records iterations first+2, first+3; cycle 2 starts at the first step after cycle
# 1's end (first+4) and again waits 1 and warms 1: first+6, first+7.
it1, it2 = first + 2, first + 6
want = [os.path.join(d, "sched_iter%d_%d.json" % (it1, pid)),
        os.path.join(d, "sched_iter%d_%d.json" % (it2, pid))]
f.eq(p.traces, want, "one file per cycle, named _iter<N>")
f.eq(ready, want, "on_trace_ready once per cycle")
for path, it in zip(want, (it1, it2)):
    steps = sorted(k.step_ranges(k.load(path))) if os.path.isfile(path) else []
    f.eq(steps, ["ProfilerStep#%d" % it, "ProfilerStep#%d" % (it + 1)],
         "%s holds its own cycle" % os.path.basename(path))

try:
    kairos.profile(schedule=kairos.schedule(wait=0, warmup=0, active=1, repeat=0))
    f.check(False, "repeat=0 without path raises")
except ValueError as e:
    f.eq(str(e), "kairos.profile: a schedule with repeat=0 writes one trace per cycle, named "
         "from path=; give path= (each cycle's file gets _iter<N>, see docs/PYTORCH.md)",
         "repeat != 1 without path=: clear ValueError")
f.done()
