"""Instructions per operator of the torch bridge, counted by valgrind (callgrind), for the
modes of bench/torch_op_bench.py. Times on the shared 2-vCPU VM move by 10-20% from run to run
and the VM exposes no hardware counters to perf; instruction counts are exact and repeatable,
so a change of a few instructions on the hot path shows.
How: the script re-runs itself under `valgrind --tool=callgrind --dump-before=getppid`; in
that child, each mode runs the TorchScript loop of bench/torch_add_loop.py (N torch.add) twice,
with N1 and N2 ops, between two calls of os.getppid() (a libc call nothing else makes), so each
interval is one callgrind dump. Instructions per op = (Ir(N2) - Ir(N1)) / (N2 - N1): the
interval's constant part (the call into TorchScript, the mode's set-up) cancels. Only the
calling thread is counted (--separate-threads): kairos' own threads (the ring feeder, the host
sampler) run beside it, not on the operator's path. Each dump also has the interval's
per-function counts: `--profile MODE` prints, per op, the instructions of each function in
MODE next to those in `none` (self cost, from callgrind_annotate), sorted by the difference:
where MODE's extra instructions go, PyTorch's own part (the callback machinery) included.
Usage: PYTHONPATH=build/python /usr/bin/python3 bench/torch_op_instr.py [--profile MODE] [MODE...]
(about 3 minutes: valgrind runs `import torch` for most of it). Modes: none, empty, empty+in,
floor, floor+sh (bench/torch_floor_callback.cc: `cmake --build build --target
torch_floor_callback` first), recording, rec+shapes, rec+memory, legacy, legacy+shapes, legacy+memory (default: all)."""
import glob
import os
import re
import subprocess
import sys
import tempfile

N1, N2 = 2000, 12000
MODES = ["none", "empty", "empty+in", "floor", "floor+sh", "recording", "rec+shapes", "rec+memory", "legacy",
         "legacy+shapes", "legacy+memory"]
FLOOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "bench",
                     "torch_floor_callback.so")


def child(modes):
    import torch
    import kairos
    from kairos import _torch
    import torch_add_loop
    ops, a, b = torch_add_loop.make()
    mark = os.getppid  # (through ctypes, callgrind does not see the call)
    def init(keys=""):
        # Each kairos.init replaces the whole config, so each carries the shared settings (no
        # summary, no host sampler, traces in the parent's temp directory; the default buffer),
        # as bench/torch_op_bench.py's init does.
        kairos.init(keys + "\nKAIROS_SUMMARY=off\nKAIROS_HOST_METRICS_INTERVAL_MS=0\n"
                    "ACTIVITIES_LOG_FILE=%s/t.json" % os.environ["KAIROS_INSTR_OUT"])

    init()
    _torch.attach(record_shapes=False)
    bridge = _torch._bridge
    bridge.kairos_torch_uninstall()

    def run(n):
        mark()
        ops(a, b, n)
        mark()

    def window(shapes):
        def f(n):
            bridge.kairos_torch_install(1 if shapes else 0, 0, 0)
            init("PROFILE_REPORT_INPUT_SHAPES=%s" % ("true" if shapes else "false"))
            kairos.start()
            try:
                run(n)
            finally:
                kairos.flush()
                bridge.kairos_torch_uninstall()
        return f

    def installed(install):
        def f(n):
            install()
            try:
                run(n)
            finally:
                bridge.kairos_torch_uninstall()
        return f

    def floor(shapes):
        import ctypes
        lib = ctypes.CDLL(FLOOR)

        def f(n):
            if lib.kairos_torch_floor_install(1 if shapes else 0) != 0:
                raise SystemExit("floor callback refused")
            try:
                run(n)
            finally:
                lib.kairos_torch_floor_uninstall()
        return f

    def rec_memory(n):  # as torch_op_bench's rec+memory: two [memory] events per op
        bridge.kairos_torch_install(0, 0, 0)
        bridge.kairos_torch_set_profile_memory(1)
        init("PROFILE_REPORT_INPUT_SHAPES=false\nPROFILE_PROFILE_MEMORY=true")
        kairos.start()
        try:
            run(n)
        finally:
            kairos.flush()
            bridge.kairos_torch_set_profile_memory(0)
            bridge.kairos_torch_memory_release()
            bridge.kairos_torch_uninstall()
            init("PROFILE_PROFILE_MEMORY=false")

    def legacy(shapes, memory=False):
        def f(n):
            with torch.autograd.profiler.profile(use_kineto=False, record_shapes=shapes,
                                                 profile_memory=memory):
                run(n)
        return f

    table = {"none": run, "empty": installed(bridge.kairos_torch_install_empty),
             "empty+in": installed(bridge.kairos_torch_install_empty_inputs),
             "floor": floor(False), "floor+sh": floor(True),
             "recording": window(False), "rec+shapes": window(True), "rec+memory": rec_memory,
             "legacy": legacy(False), "legacy+shapes": legacy(True),
             "legacy+memory": legacy(False, memory=True)}
    for m in modes:
        table[m](200)  # warm-up: TorchScript's profiling executor settles on the second run
        table[m](200)
        mark()  # the dump before this one holds the warm-up: the next two are N1, N2
        table[m](N1)
        table[m](N2)
    mark()


def totals(path):
    with open(path) as f:
        for line in f:
            if line.startswith("totals:") or line.startswith("summary:"):
                return int(line.split()[1])
    raise ValueError("no totals in " + path)


def functions(path):
    """Self instructions per function of one dump (callgrind_annotate, every function)."""
    text = subprocess.run(["callgrind_annotate", "--threshold=100", "--inclusive=no", "--auto=no", path],
                          capture_output=True, text=True, check=True).stdout
    out = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \([ \d.]+%\)\s+(.*)$", line)
        if m and "PROGRAM TOTALS" not in line:
            out[m.group(2)] = out.get(m.group(2), 0) + int(m.group(1).replace(",", ""))
    return out


def main(argv):
    profile = None
    if argv[:1] == ["--profile"]:
        profile, argv = argv[1], argv[2:]
    # The floor modes need the floor module (skipped by default without it).
    modes = argv or [m for m in MODES if not m.startswith("floor") or os.path.exists(FLOOR)]
    if profile is not None and "none" not in modes:
        modes = ["none"] + modes
    if os.environ.get("KAIROS_INSTR_CHILD") == "1":
        child(modes)
        return
    # The callgrind dumps and the child's traces, removed when the counts are printed.
    with tempfile.TemporaryDirectory(prefix="kairos_instr_") as out:
        report(modes, profile, out)


def report(modes, profile, out):
    env = dict(os.environ, KAIROS_INSTR_CHILD="1", KAIROS_INSTR_OUT=out)
    subprocess.run(["valgrind", "--tool=callgrind", "--dump-before=getppid", "--separate-threads=yes",
                    "--callgrind-out-file=" + out + "/cg.out", sys.executable, __file__] + modes,
                   env=env, check=True, stderr=subprocess.DEVNULL)
    # The main thread's dumps: cg.out.<n>-01.
    dumps = sorted(glob.glob(out + "/cg.out.*-01"),
                   key=lambda p: int(re.sub(r".*\.(\d+)-01$", r"\1", p)))
    # Each mark() dumps the counts since the previous dump, so run(n) gives two dumps (the gap
    # before it, then its interval), and each mode nine: warm-up x2 (2 + 2), the extra mark (1),
    # N1 (2), N2 (2); then the final mark's. Counted from the end: a getppid() made while
    # importing (none today) would only add dumps at the front.
    counts = [totals(p) for p in dumps]
    first = len(counts) - (9 * len(modes) + 1)
    if first < 0:
        raise SystemExit("unexpected dumps: %d for %d modes" % (len(counts), len(modes)))
    print("callgrind, TorchScript loop of torch.add, instructions per op ((N=%d) - (N=%d)) / %d:"
          % (N2, N1, N2 - N1))
    base = None
    over = {}
    for i, m in enumerate(modes):
        k = first + 9 * i
        per_op = (counts[k + 8] - counts[k + 6]) / (N2 - N1)
        if m == "none":
            base = per_op
        extra = "   over none %+8.1f" % (per_op - base) if base is not None else ""
        print("  %-14s %9.1f%s" % (m, per_op, extra))
        over[m] = per_op - base if base is not None else None
    # Headline lines (bench_headline.h; bench_all runs this through torch_bridge_benchmark.py):
    # kairos' instructions per op over none, exact from run to run (bench_check's 1% rule).
    for mode, metric in (("recording", "recording_instr"), ("rec+shapes", "shapes_instr"),
                         ("rec+memory", "memory_instr")):
        if over.get(mode) is not None and profile is None:
            print("KAIROS_HEADLINE torch_bridge_benchmark %s %.1f lower - instr" % (metric, over[mode]))
    for a, b in (("recording", "legacy"), ("rec+shapes", "legacy+shapes"), ("empty", "legacy"),
                 ("empty+in", "legacy+shapes"), ("floor", "legacy"), ("floor+sh", "legacy+shapes"),
                 ("recording", "floor"), ("rec+shapes", "floor+sh"), ("rec+memory", "legacy+memory")):
        if over.get(a) is not None and over.get(b):
            print("  %s overhead / %s overhead: %.2f" % (a, b, over[a] / over[b]))
    if profile is not None:
        def per_op(mode):
            k = first + 9 * modes.index(mode)
            n1, n2 = functions(dumps[k + 6]), functions(dumps[k + 8])
            return {f: (n2.get(f, 0) - n1.get(f, 0)) / (N2 - N1) for f in set(n1) | set(n2)}
        mine, none = per_op(profile), per_op("none")
        rows = sorted(((mine.get(f, 0), none.get(f, 0), f) for f in set(mine) | set(none)),
                      key=lambda r: -(r[0] - r[1]))
        print("\nper op, self instructions: %s, none, difference (|difference| >= 2)" % profile)
        for a, b, f in rows:
            if abs(a - b) >= 2:
                print("  %8.1f %8.1f %+8.1f  %s" % (a, b, a - b, f[:150]))


if __name__ == "__main__":
    main(sys.argv[1:])
