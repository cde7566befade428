"""Step phases (docs/SUMMARY.md, "Step phases") on a CPU torch training loop with a DataLoader,
under `python3 -m kairos run` with an iteration window (steps 2..4) and the in-process summary:
- every step's phases (data loading, forward, backward, optimizer, other) sum to the step
  within 1% (they partition it exactly by construction);
- each phase the loop has is there: data loading, forward, backward, optimizer all > 0;
- data_loader_bound fires with the slow dataset (100 ms per batch, small model) and not with
  the fast one (ready-made batches, large model)."""
import glob
import json
import os

import kt_util as k

k.need_torch()
f = k.Failures()


def run(mode):
    d = k.tmpdir()
    cfg = ("PROFILE_START_ITERATION=2;ACTIVITIES_ITERATIONS=3;ACTIVITIES_WARMUP_ITERATIONS=1;"
           "KAIROS_HOST_METRICS_INTERVAL_MS=0;ACTIVITIES_LOG_FILE=" + os.path.join(d, "t.json") +
           ";KAIROS_ITERATION_FALLBACK_TIMEOUT_MS=600000")
    k.run_kairos(os.path.join(k.HERE, "loader_train.py"), [mode, "5"], config=cfg)
    found = glob.glob(os.path.join(d, "*.summary.json"))
    f.check(len(found) == 1, "%s: one summary written (%s)" % (mode, found))
    with open(found[0]) as fh:
        return json.load(fh)


for mode in ("slow", "fast"):
    s = run(mode)
    ph = s.get("phases") or {}
    steps = ph.get("steps", [])
    f.eq([r["step"] for r in steps], [2, 3, 4], "%s: phases for ProfilerStep#2..4" % mode)
    for r in steps:
        total = sum(r["host_ns"].values())
        f.check(abs(total - r["duration_ns"]) <= 0.01 * r["duration_ns"],
                "%s step %d: phases sum %d to the step %d within 1%%" % (mode, r["step"], total, r["duration_ns"]))
        for p in ("data_loading", "forward", "backward", "optimizer"):
            f.check(r["host_ns"][p] > 0, "%s step %d: %s %d ns > 0" % (mode, r["step"], p, r["host_ns"][p]))
    ids = [x["id"] for x in s["findings"]]
    if mode == "slow":
        f.check("data_loader_bound" in ids, "slow loader: data_loader_bound fires (%s)" % ids)
        share = [x for x in s["findings"] if x["id"] == "data_loader_bound"][0]["evidence"]["data_loading_share_of_step"] \
            if "data_loader_bound" in ids else 0
        f.check(share > 0.5, "slow loader: data loading %.2f of the steps" % share)
    else:
        f.check("data_loader_bound" not in ids, "fast loader: no data_loader_bound (%s)" % ids)
f.done()
