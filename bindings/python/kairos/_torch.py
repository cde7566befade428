"""The torch bridge: loads _kairos_torch.so (a RecordFunction callback, see
bindings/torch/kairos_torch_bridge.cc) into a process whose torch is imported, and counts
iterations from the optimizer. Importing this module never imports torch; attach() does.
"""
import ctypes
import os
import sys
import threading

from . import _lib

_mu = threading.Lock()
_bridge = None
_hooks = []
_auto_steps = True  # False while kairos.profile drives the iteration count itself
_profile_memory = False  # report PyTorch's allocator events (request_memory)


class TorchUnavailable(RuntimeError):
    """torch is missing, of another version than the bridge was built for, or the bridge
    was not built (CMake did not find Torch)."""


def _bridge_path():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_kairos_torch.so")


def attached():
    return _bridge is not None


def attach(record_shapes=False, with_flops=False):
    """Registers the bridge's callbacks (idempotent: a second call returns False and keeps the
    first call's settings). record_shapes: ask PyTorch for operator inputs so traces whose
    config sets PROFILE_REPORT_INPUT_SHAPES=true carry "Input Dims"/"Input type".
    with_flops: ask for them too and compute each operator's FLOPs, so traces whose config
    sets PROFILE_WITH_FLOPS=true carry "flops" (docs/FLOPS.md).
    Raises TorchUnavailable with the reason when it cannot attach."""
    global _bridge
    with _mu:
        if _bridge is not None:
            return False
        try:
            import torch
        except ImportError as e:
            raise TorchUnavailable("kairos: torch is not importable (%s); the torch bridge is "
                                   "off, the ctypes API still works" % e)
        path = _bridge_path()
        if not os.path.exists(path):
            raise TorchUnavailable("kairos: the torch bridge was not built (%s missing; "
                                   "configure kairos with libtorch-dev installed)" % path)
        _lib.lib()  # libkairos first, RTLD_GLOBAL: the bridge links against it
        try:
            bridge = ctypes.CDLL(path)
        except OSError as e:
            raise TorchUnavailable("kairos: cannot load the torch bridge: %s" % e)
        bridge.kairos_torch_install.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        bridge.kairos_torch_install.restype = ctypes.c_int
        bridge.kairos_torch_built_version.restype = ctypes.c_int
        built = bridge.kairos_torch_built_version()
        parts = torch.__version__.split(".")
        running = int(parts[0]) * 100 + int("".join(ch for ch in parts[1] if ch.isdigit()) or 0)
        if built != running:
            raise TorchUnavailable(
                "kairos: the torch bridge was built for torch %d.%d but torch %s is running; "
                "rebuild kairos against this torch" % (built // 100, built % 100, torch.__version__))
        opt = getattr(torch.optim, "optimizer", None)
        has_hooks = opt is not None and hasattr(opt, "register_optimizer_step_post_hook")
        # Iterations: PyTorch 2.x global optimizer step hooks; 1.x: the bridge recognises
        # the "Optimizer.step#<Class>.step" record_function (never both: one count per step).
        rc = bridge.kairos_torch_install(1 if record_shapes else 0, 0 if has_hooks else 1,
                                         1 if with_flops else 0)
        if rc < 0:
            raise TorchUnavailable("kairos: registering the RecordFunction callback failed")
        if has_hooks:
            _hooks.append(opt.register_optimizer_step_post_hook(_on_optimizer_step))
        _bridge = bridge
        if _profile_memory:
            _bridge.kairos_torch_set_profile_memory(1)
        return True


def request_memory():
    """Report PyTorch's allocator events (the hook torch's profile_memory uses) from now on,
    in the bridge attached now or later; traces whose config sets PROFILE_PROFILE_MEMORY=true
    keep them as [memory] events (docs/MEMORY.md)."""
    global _profile_memory
    _profile_memory = True
    if _bridge is not None:
        _bridge.kairos_torch_set_profile_memory(1)


def release_memory():
    """Takes the bridge's allocator reporter out of this thread's profiler slot now, so
    torch's own profiler can start on this thread right after a kairos window."""
    if _bridge is not None:
        _bridge.kairos_torch_memory_release()


def _on_optimizer_step(*_args, **_kwargs):
    if _auto_steps:
        _lib.lib().kairos_step()


def set_auto_steps(on):
    """Whether optimizer steps count iterations (kairos.profile turns it off while its
    p.step() calls count them)."""
    global _auto_steps
    _auto_steps = bool(on)
    if _bridge is not None and hasattr(_bridge, "kairos_torch_set_count_steps"):
        _bridge.kairos_torch_set_count_steps(1 if on else 0)


def attach_if_imported(record_shapes=False, with_flops=False):
    """attach() when torch is already imported; True when the bridge is (now) attached."""
    if sys.modules.get("torch") is None:  # not imported (None: import of torch blocked)
        return attached()
    try:
        attach(record_shapes, with_flops)
    except TorchUnavailable as e:
        sys.stderr.write(str(e) + "\n")
    return attached()
