"""The bridge loads into a process that already has libkairos (LD_PRELOAD) and into one that
does not (the package dlopens it): both record operators, and with LD_PRELOAD there is one
kairos in the process (the package uses the preloaded copy, the bridge binds to it; one
libkairos.so shim and the one libkairos_core.so it loaded)."""
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
# libkairos.so is the shim; libkairos_core.so beside it the implementation it loaded.
shims = set(m for m in maps if "libkairos_core" not in m)
cores = set(m for m in maps if "libkairos_core" in m)
print("copies", len(shims), "cores", len(cores), "lib", L.library_path())
'''
for label, preload in (("without LD_PRELOAD", None), ("with LD_PRELOAD", os.environ["KAIROS_LIB"])):
    path = os.path.join(d, "t_%d.json" % (preload is not None))
    r = subprocess.run([sys.executable, "-c", child, path], env=k.env(LD_PRELOAD=preload),
                       capture_output=True, text=True, timeout=120)
    print(r.stdout, r.stderr)
    f.eq(r.returncode, 0, "%s: exit status" % label)
    f.check("copies 1 cores 1 " in r.stdout, "%s: one libkairos and one core mapped" % label)
    m = re.search(r"^flushed (.*)$", r.stdout, re.M)
    if m and os.path.exists(m.group(1)):
        f.eq(len(k.events(k.load(m.group(1)), cat="cpu_op", name="aten::mm")), 1, "%s: op recorded" % label)
    else:
        f.check(False, "%s: trace written" % label)
# A torch of another version than the bridge was built for: a clear message, no callback,
# and the ctypes layer keeps working.
other = r'''
import torch, kairos
torch.__version__ = "9.9.0"
try:
    kairos.attach_torch()
    print("attached")
except kairos.TorchUnavailable as e:
    print("refused:", e)
print("version", kairos.version(), "attached", kairos._torch.attached())
'''
r = subprocess.run([sys.executable, "-c", other], env=k.env(), capture_output=True, text=True, timeout=120)
print(r.stdout, r.stderr)
f.check("refused: kairos: the torch bridge was built for torch " in r.stdout and
        "but torch 9.9.0 is running" in r.stdout, "version mismatch refused with a clear message")
f.check("version (0, 1, 0) attached False" in r.stdout, "ctypes layer works, bridge not attached")
f.done()
