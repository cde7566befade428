"""kairos: in-process GPU/CPU trace recorder for PyTorch training jobs (Python API).

A thin ctypes layer over libkairos's C ABI (no torch dependency), plus the torch bridge
(kairos.attach_torch) and kairos.profile. See docs/PYTORCH.md.

    import kairos
    kairos.init("ACTIVITIES_ITERATIONS=3\\nPROFILE_START_ITERATION=10")
    with kairos.range("data"):
        ...
    kairos.step()
"""
import functools

from . import _lib
from ._lib import KairosError
from ._torch import TorchUnavailable
from ._profile import profile, schedule
from ._stacks import StacksUnavailable

__all__ = [
    "KairosError", "TorchUnavailable", "init", "shutdown", "start", "stop", "flush", "step",
    "optimizer_pre_step", "optimizer_post_step", "range", "range_push", "range_pop",
    "range_start", "range_end", "mark", "set_metadata", "recording", "current_iteration",
    "version", "attach_torch", "profile", "schedule",
]


def version():
    """libkairos's version as (major, minor, patch)."""
    v = _lib.lib().kairos_version()
    return (v // 10000, (v // 100) % 100, v % 100)


def init(config=None):
    """kairos_init: Kineto-syntax config text (KEY=VALUE lines) on top of the environment's.
    A window key (PROFILE_START_ITERATION, ACTIVITIES_ITERATIONS, ...) schedules a trace."""
    _lib.check(_lib.lib().kairos_init(_lib.encode(config)))


def shutdown():
    _lib.lib().kairos_shutdown()


def start():
    """Starts recording now with the base config (KairosError "profiler busy" if one records)."""
    _lib.check(_lib.lib().kairos_start())


def stop():
    _lib.check(_lib.lib().kairos_stop())


def flush():
    """Ends a recording window, waits for its trace and returns the path (or the last trace's)."""
    l = _lib.lib()
    p = l.kairos_flush()
    if p is None:
        raise KairosError(-7, (l.kairos_last_error() or b"").decode("utf-8", "replace"))
    return p.decode("utf-8", "replace")


def step():
    """Counts one iteration (ProfilerStep#N boundary)."""
    _lib.lib().kairos_step()


def optimizer_pre_step():
    _lib.lib().kairos_optimizer_pre_step()


def optimizer_post_step():
    _lib.lib().kairos_optimizer_post_step()


def range_push(name):
    _lib.lib().kairos_range_push(_lib.encode(name))


def range_pop():
    _lib.lib().kairos_range_pop()


def range_start(name):
    """A range that may end on another thread; returns its id for range_end()."""
    return _lib.lib().kairos_range_start(_lib.encode(name))


def range_end(range_id):
    _lib.lib().kairos_range_end(range_id)


def mark(name):
    _lib.lib().kairos_mark(_lib.encode(name))


def set_metadata(key, value):
    _lib.check(_lib.lib().kairos_set_metadata(_lib.encode(key), _lib.encode(value)))


def recording():
    """True while a window records."""
    return _lib.lib().kairos_recording_flag()[0] != 0


def current_iteration():
    return _lib.lib().kairos_current_iteration()


def attach_torch(record_shapes=False, with_flops=False, profile_memory=False):
    """Attaches the torch bridge (imports torch). Returns True the first time, False when it
    was already attached; raises TorchUnavailable with the reason when it cannot.
    profile_memory: report PyTorch's allocator events (kept in traces whose config sets
    PROFILE_PROFILE_MEMORY=true; docs/MEMORY.md), also when already attached."""
    from . import _torch
    if profile_memory:
        _torch.request_memory()
    return _torch.attach(record_shapes, with_flops)


class range:  # noqa: A001 (mirrors torch.profiler.record_function's shape)
    """A nested range on this thread: `with kairos.range("x"):` or `@kairos.range("x")`.
    The range is closed when the block exits, also by an exception."""

    def __init__(self, name):
        self._name = _lib.encode(name)

    def __enter__(self):
        _lib.lib().kairos_range_push(self._name)
        return self

    def __exit__(self, *exc):
        _lib.lib().kairos_range_pop()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with range(self._name):
                return fn(*args, **kwargs)
        return wrapper
