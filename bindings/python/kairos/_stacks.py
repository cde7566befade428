"""Python stacks (PROFILE_WITH_STACK, docs/PYTHON_STACKS.md): attaches the C tracer
kairos._pytracer to the libkairos the ctypes layer loaded.

kairos records a window's Python calls and returns as python_function events when the
window's config sets PROFILE_WITH_STACK=true (kairos run --with-stack, kairos.profile(
with_stack=True), kairos trace --with-stacks). The tracer's hook is installed on every
Python thread only while such a window warms up or records: libkairos tells the tracer
(kairos_py_attach's observer) and a watcher thread of the tracer installs or removes it.
"""
import atexit
import ctypes
import os

from . import _lib

_attached = False
_error = None


class StacksUnavailable(RuntimeError):
    """The tracer extension could not be loaded (built without Python headers)."""


def _addr(fn):
    return ctypes.cast(fn, ctypes.c_void_p).value


def attach():
    """Attaches the tracer (once per process). Returns True the first time, False after.
    Raises StacksUnavailable with the reason when kairos._pytracer is missing."""
    global _attached, _error
    if _attached:
        return False
    if _error is not None:
        raise StacksUnavailable(_error)
    try:
        from . import _pytracer
    except ImportError as e:
        _error = ("kairos: Python stacks are unavailable: the tracer extension kairos._pytracer "
                  "was not built (%s); install the Python headers (Debian: python3-dev) and "
                  "rebuild" % e)
        raise StacksUnavailable(_error)
    l = _lib.lib()
    flag = _addr(l.kairos_recording_flag())
    _pytracer.attach(flag, _addr(l.kairos_py_name), _addr(l.kairos_py_call),
                     _addr(l.kairos_py_return), _addr(l.kairos_py_attach),
                     _addr(l.kairos_py_call_line), _addr(l.kairos_py_line_source))
    # A forked child has no watcher thread and a fresh libkairos name table.
    os.register_at_fork(after_in_child=_pytracer._after_fork_child)
    # kairos closes a window still open at exit after the interpreter is gone: the tracer
    # stops listening when the interpreter starts finalizing.
    atexit.register(_pytracer._detach)
    _attached = True
    return True


def try_attach():
    """attach(), or the reason it is unavailable (a str) instead of an exception."""
    try:
        attach()
        return None
    except StacksUnavailable as e:
        return str(e)


def install_now(modules=False):
    """Installs the hook on every thread now (the window was just started on this thread);
    `modules`: Module._call_impl frames named "nn.Module: <Class>_<n>"."""
    from . import _pytracer
    _pytracer.install(3 if modules else 1)


def remove_now():
    from . import _pytracer
    _pytracer.remove()
