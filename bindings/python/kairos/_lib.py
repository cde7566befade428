"""ctypes binding of libkairos's C ABI (bindings/c/kairos.h). No dependency on torch.

The library is found in this order: a libkairos already in the process (LD_PRELOAD or
linked in: using that copy matters, two copies would be two profilers), $KAIROS_LIBRARY,
the path CMake recorded in _location.py, then the loader's search path.
"""
import ctypes
import ctypes.util
import os

_lib = None


class KairosError(RuntimeError):
    """A kairos C call failed; the message is kairos_last_error()."""

    def __init__(self, code, message):
        super().__init__(message or "kairos error %d" % code)
        self.code = code


def _declare(lib):
    c = ctypes
    sig = {
        "kairos_version": (c.c_int32, []),
        "kairos_status_string": (c.c_char_p, [c.c_int32]),
        "kairos_last_error": (c.c_char_p, []),
        "kairos_init": (c.c_int, [c.c_char_p]),
        "kairos_init_values": (c.c_int, [c.c_char_p, c.POINTER(c.c_char_p),
                                         c.POINTER(c.c_char_p), c.c_size_t]),
        "kairos_shutdown": (None, []),
        "kairos_range_push": (None, [c.c_char_p]),
        "kairos_range_pop": (None, []),
        "kairos_range_start": (c.c_uint64, [c.c_char_p]),
        "kairos_range_end": (None, [c.c_uint64]),
        "kairos_mark": (None, [c.c_char_p]),
        "kairos_optimizer_pre_step": (None, []),
        "kairos_optimizer_post_step": (None, []),
        "kairos_step": (None, []),
        "kairos_start": (c.c_int, []),
        "kairos_stop": (c.c_int, []),
        "kairos_flush": (c.c_char_p, []),
        "kairos_set_metadata": (c.c_int, [c.c_char_p, c.c_char_p]),
        "kairos_recording_flag": (c.POINTER(c.c_uint32), []),
        "kairos_current_iteration": (c.c_int64, []),
    }
    # Python stacks (kairos._stacks hands these addresses to the tracer extension). Absent
    # from a libkairos older than the package: the stacks are then unavailable, nothing else.
    optional = {
        "kairos_py_name": (c.c_uint32, [c.c_char_p, c.c_size_t]),
        "kairos_py_call": (None, [c.c_uint32]),
        "kairos_py_return": (None, []),
        "kairos_py_attach": (c.c_int, [c.c_void_p, c.c_void_p]),
    }
    for name, (res, args) in optional.items():
        f = getattr(lib, name, None)
        if f is not None:
            f.restype = res
            f.argtypes = args
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args


def _candidates():
    env = os.environ.get("KAIROS_LIBRARY")
    if env:
        yield env
    try:
        from . import _location
        yield _location.LIBKAIROS
    except ImportError:
        pass
    found = ctypes.util.find_library("kairos")
    if found:
        yield found
    yield "libkairos.so.0"


def lib():
    """The loaded libkairos (loads it on first use); raises OSError when none is found."""
    global _lib
    if _lib is not None:
        return _lib
    try:
        proc = ctypes.CDLL(None)
        proc.kairos_version  # noqa: B018 (raises AttributeError when absent)
        proc.kairos_current_iteration
        _declare(proc)
        _lib = proc
        return _lib
    except AttributeError:
        pass
    errors = []
    for path in _candidates():
        try:
            # RTLD_GLOBAL: the torch bridge resolves kairos_* from this copy.
            candidate = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            _declare(candidate)
            _lib = candidate
            return _lib
        except (OSError, AttributeError) as e:
            errors.append("%s: %s" % (path, e))
    raise OSError("kairos: libkairos.so not found (set KAIROS_LIBRARY): " + "; ".join(errors))


def library_path():
    """File name of the loaded libkairos (for LD_PRELOAD of child processes)."""
    lib()
    import ctypes as c

    class _Info(c.Structure):
        _fields_ = [("fname", c.c_char_p), ("fbase", c.c_void_p),
                    ("sname", c.c_char_p), ("saddr", c.c_void_p)]
    info = _Info()
    libdl = c.CDLL(None)
    addr = c.cast(_lib.kairos_version, c.c_void_p)
    if libdl.dladdr(addr, c.byref(info)) and info.fname:
        return info.fname.decode()
    return None


def check(code):
    if code != 0:
        l = lib()
        raise KairosError(code, (l.kairos_last_error() or b"").decode("utf-8", "replace"))
    return code


def init(text, values=()):
    """kairos_init(text), or with `values` ((key, value) pairs) kairos_init_values: each value
    goes to the library as data, never spliced into config text (where '#' starts a comment
    and '=' splits the line), so a path like "runs/exp#1.json" stays whole. str values are
    encoded with os.fsencode (paths). A NUL, which the C string would silently cut at, is
    refused here with the library's wording."""
    l = lib()
    if not values:
        return check(l.kairos_init(encode(text)))
    keys, vals = [], []
    for i, (key, value) in enumerate(values, 1):
        k = encode(key)
        v = os.fsencode(value) if not isinstance(value, bytes) else value
        for what in (k, v):
            if b"\0" in what:
                raise KairosError(-1, "config value %d: %s: contains the control character "
                                  "\\x00 (NUL and control characters are never accepted)"
                                  % (i, k.replace(b"\0", b"\\x00").decode("utf-8", "replace")))
        keys.append(k)
        vals.append(v)
    n = len(keys)
    return check(l.kairos_init_values(encode(text), (ctypes.c_char_p * n)(*keys),
                                      (ctypes.c_char_p * n)(*vals), n))


def encode(s):
    if s is None:
        return None
    if isinstance(s, bytes):
        return s
    return str(s).encode("utf-8", "replace")
