"""The bridge loads into a process that already has libkairos (LD_PRELOAD) and into one that
does not (the package dlopens it): both record operators, and with LD_PRELOAD there is one
kairos in the process (the package uses the preloaded copy, the bridge binds to it)."""
import os
import re
import subprocess
import sys

import kt_util as k

k.need_torch()
f = k.Failures()
d = k.tmpdir()
child = r'''
import sys, os, torch, kairos, kairos._lib as L
path = sys.argv[1]
kairos.attach_torch()
kairos.init("ACTIVITIES_LOG_FILE=%s\nKAIROS_SUMMARY=off" % path)
kairos.start()
torch.mm(torch.ones(4, 4), torch.ones(4, 4))
print("flushed", kairos.flush())
maps = [l.split()[-1] for l in open("/proc/self/maps") if "libkairos" in l]
print("copies", len(set(maps)), "lib", L.library_path())
'''
for label, preload in (("without LD_PRELOAD", None), ("with LD_PRELOAD", os.environ["KAIROS_LIB"])):
    path = os.path.join(d, "t_%d.json" % (preload is not None))
    r = subprocess.run([sys.executable, "-c", child, path], env=k.env(LD_PRELOAD=preload),
                       capture_output=True, text=True, timeout=120)
    print(r.stdout, r.stderr)
    f.eq(r.returncode, 0, "%s: exit status" % label)
    f.check("copies 1 " in r.stdout, "%s: one libkairos mapped" % label)
    m = re.search(r"^flushed (.*)$", r.stdout, re.M)
    if m and os.path.exists(m.group(1)):
        f.eq(len(k.events(k.load(m.group(1)), cat="cpu_op", name="aten::mm")), 1, "%s: op recorded" % label)
    else:
        f.check(False, "%s: trace written" % label)
f.done()
