"""kairos.profile: torch.profiler.profile's common shape over kairos.

    with kairos.profile(path="/tmp/t.json", record_shapes=True,
                        schedule=kairos.schedule(wait=1, warmup=1, active=3),
                        on_trace_ready=lambda path: print(path)) as p:
        for batch in data:
            train_step(batch)
            p.step()

Without a schedule the whole block is one window. With one, p.step() counts iterations and
each active span is a kairos iteration window (exact ProfilerStep#N boundaries); while the
block runs, p.step() is the only iteration counter (optimizer auto-counting pauses).
One kairos.profile at a time per process (kairos records one window at a time).

The path goes to the library as data (kairos_init_values), never spliced into config text,
so "runs/exp#1.json" is written as runs/exp#1_<pid>.json. With a schedule that repeats
(repeat != 1) each cycle writes its own file: "_iter<N>" (N = the cycle's first active
iteration, its first ProfilerStep#N) is inserted where the library inserts "_<pid>".
"""
import os
import threading

from . import _lib, _stacks, _torch

_active_lock = threading.Lock()
_active = None

# torch.profiler.ProfilerActivity names -> kairos ACTIVITY_TYPES.
_ACTIVITY = {"CPU": "cpu_op,user_annotation", "CUDA": "kernel,gpu_memcpy,gpu_memset,cuda_runtime,cuda_driver"}


class schedule:
    """wait, warmup, active, repeat (0 = forever), skip_first: like torch.profiler.schedule."""

    def __init__(self, *, wait, warmup, active, repeat=1, skip_first=0):
        if active <= 0 or wait < 0 or warmup < 0 or repeat < 0 or skip_first < 0:
            raise ValueError("kairos.schedule: active must be > 0, the others >= 0")
        self.wait, self.warmup, self.active = wait, warmup, active
        self.repeat, self.skip_first = repeat, skip_first


def _cycle_path(path, iteration):
    """`path` with "_iter<N>" inserted in the file name where the library inserts its
    "_<pid>" (docs/CONFIG.md, "Output path"): before the first ".pt.trace.json", else the
    first ".json"; else before the first ".pftrace"; else at the end. The library then adds
    "_<pid>" (or "_rank<R>_<pid>") after it: runs/t.json -> runs/t_iter5_<pid>.json."""
    head, name = os.path.split(path)
    tag = "_iter%d" % iteration
    for ext in (".pt.trace.json", ".json", ".pftrace"):
        at = name.find(ext)
        if at >= 0:
            return os.path.join(head, name[:at] + tag + name[at:])
    return os.path.join(head, name + tag)


def _activity_types(activities):
    if activities is None:
        return None
    names = []
    for a in activities:
        key = getattr(a, "name", str(a)).upper()
        if key not in _ACTIVITY:
            raise ValueError("kairos.profile: unknown activity %r (CPU or CUDA)" % (a,))
        names.append(_ACTIVITY[key])
    return ",".join(names)


class profile:
    def __init__(self, path=None, record_shapes=False, activities=None, schedule=None,
                 on_trace_ready=None, config=None, profile_memory=False,
                 with_stack=False, with_modules=False, with_flops=False):
        self.path = os.fsdecode(os.fspath(path)) if path is not None else None
        if schedule is not None and schedule.repeat != 1 and self.path is None:
            raise ValueError("kairos.profile: a schedule with repeat=%d writes one trace per "
                             "cycle, named from path=; give path= (each cycle's file gets "
                             "_iter<N>, see docs/PYTORCH.md)" % schedule.repeat)
        self.record_shapes = record_shapes
        # CUDA allocations and frees as [memory] events (PROFILE_PROFILE_MEMORY, docs/MEMORY.md)
        self.profile_memory = profile_memory
        self.with_stack = with_stack or with_modules  # module scopes are recorded with stacks
        self.with_modules = with_modules
        self.with_flops = with_flops
        self.activity_types = _activity_types(activities)
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.extra = config or ""
        self.step_num = 0
        self.traces = []
        self._cycle = 0
        self._window_end = None  # p.step() count at which the scheduled window is complete
        self._thread = None

    def _init(self, window="", iteration=None):
        """kairos_init of this profile's config; the output path goes as data, never as text
        (a '#' in it would start a comment). `iteration`: the cycle's first active iteration,
        named in the file of a repeating schedule."""
        values = []
        if self.path:
            path = self.path
            if iteration is not None and self.schedule.repeat != 1:
                path = _cycle_path(path, iteration)
            values.append(("ACTIVITIES_LOG_FILE", path))
        _lib.init(self._config(window), values)

    def _config(self, window=""):
        lines = [self.extra]
        if self.record_shapes:
            lines.append("PROFILE_REPORT_INPUT_SHAPES=true")
        if self.profile_memory:
            lines.append("PROFILE_PROFILE_MEMORY=true")
        if self.with_flops:
            lines.append("PROFILE_WITH_FLOPS=true")
        if self.activity_types:
            lines.append("ACTIVITY_TYPES=%s" % self.activity_types)
        if self.with_stack:
            lines.append("PROFILE_WITH_STACK=true")
        if self.with_modules:
            lines.append("PROFILE_WITH_MODULES=true")
        lines.append(window)
        return "\n".join(l for l in lines if l)

    def __enter__(self):
        global _active
        with _active_lock:
            if _active is not None:
                raise RuntimeError("kairos.profile: another kairos.profile is active in this "
                                   "process (nested, or on another thread); kairos records "
                                   "one window at a time")
            _active = self
        try:
            self._thread = threading.get_ident()
            if self.profile_memory:
                _torch.request_memory()
            _torch.attach_if_imported(self.record_shapes, self.with_flops)
            if self.with_stack:
                _stacks.attach()  # raises StacksUnavailable with the reason
            if self.schedule is None:
                self._init()
                _lib.check(_lib.lib().kairos_start())
                if self.with_stack:
                    # The window is open: hook every thread now rather than when the tracer's
                    # watcher gets the GIL, so the block's first calls are recorded.
                    _stacks.install_now(self.with_modules)
            else:
                _torch.set_auto_steps(False)
                self._schedule_cycle(self.schedule.skip_first)
        except BaseException:
            self._release()
            raise
        return self

    def _schedule_cycle(self, offset):
        s = self.schedule
        cur = _lib.lib().kairos_current_iteration()  # the iteration running now
        # Iteration windows start at a boundary whose warm-up iteration has not begun yet, so
        # with wait=0 the first active step is the next one (kairos would move it anyway).
        start = max(cur + offset + s.wait + s.warmup, cur + 1 + s.warmup)
        window = ("PROFILE_START_ITERATION=%d\nACTIVITIES_ITERATIONS=%d\n"
                  "ACTIVITIES_WARMUP_ITERATIONS=%d\nPROFILE_START_ITERATION_ROUNDUP=1"
                  % (start, s.active, s.warmup))
        self._init(window, start)
        self._window_end = self.step_num + (start - cur) + s.active

    def step(self):
        """Ends the current iteration (ProfilerStep#N boundary)."""
        if threading.get_ident() != self._thread:
            raise RuntimeError("kairos.profile.step(): call it from the thread that entered")
        _lib.lib().kairos_step()
        self.step_num += 1
        if self.schedule is not None and self._window_end is not None and \
                self.step_num >= self._window_end:
            self._trace_ready()
            self._cycle += 1
            if self.schedule.repeat == 0 or self._cycle < self.schedule.repeat:
                self._schedule_cycle(0)
            else:
                self._window_end = None

    def _trace_ready(self):
        try:
            path = _lib.lib().kairos_flush()
        except Exception:  # pragma: no cover - kairos_flush does not raise
            path = None
        if path:
            path = os.fsdecode(path)
            if path in self.traces:
                return  # no new trace: kairos_flush answered with the last one written
            self.traces.append(path)
            if self.on_trace_ready is not None:
                self.on_trace_ready(path)

    def __exit__(self, exc_type, exc, tb):
        try:
            # The trace is written also when the block raised: its ranges were closed by the
            # exception unwinding (context managers) or are marked unfinished.
            if self.schedule is None:
                self._trace_ready()
            elif self._window_end is not None:
                if _lib.lib().kairos_recording_flag()[0] != 0:
                    self._trace_ready()  # an active span cut short by the block's end
                else:
                    _lib.lib().kairos_flush()  # cancels the pending window; no new trace
        finally:
            self._release()
        return False

    def _release(self):
        global _active
        if self.schedule is not None:
            _torch.set_auto_steps(True)
        if self.profile_memory:
            _torch.release_memory()  # torch's own profiler may start on this thread next
        with _active_lock:
            if _active is self:
                _active = None
