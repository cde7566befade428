"""python3 -m kairos run [--config TEXT | --config-file F] script.py [args...]

Runs an unmodified script with kairos loaded and, as soon as the script imports torch, the
torch bridge attached (operators as cpu_op, record_function scopes as user_annotation,
optimizer steps as iterations). Scripts that never import torch run without the bridge.
The environment route works as without `run`: KAIROS_CONFIG / KAIROS_CONFIG_TEXT windows,
KINETO_USE_DAEMON=1 for `kairos trace` / `dyno gputrace` requests.
"""
import argparse
import builtins
import importlib.abc
import os
import re
import sys
import types

from . import _input, _lib, _stacks, _torch

PROG = "python3 -m kairos run"


def _wants_shapes(text):
    """PROFILE_REPORT_INPUT_SHAPES=true in any config this run sees (then the bridge asks
    PyTorch for operator inputs). KAIROS_TORCH_RECORD_SHAPES=1 forces it, for daemon requests
    that set the key later."""
    return _wants(text, "KAIROS_TORCH_RECORD_SHAPES",
                  "PROFILE_REPORT_INPUT_SHAPES|CLIENT_INTERFACE_ENABLE_OP_INPUTS_COLLECTION")


def _wants_flops(text):
    """PROFILE_WITH_FLOPS=true in any config this run sees (then the bridge computes FLOPs);
    KAIROS_TORCH_WITH_FLOPS=1 forces it, for daemon requests (`--with-flops`) set later."""
    return _wants(text, "KAIROS_TORCH_WITH_FLOPS", "PROFILE_WITH_FLOPS")


def _from_start(text):
    """True when this run's config (its --config / --config-file text, or the environment's)
    asks for a time window with ACTIVITIES_WARMUP_PERIOD_SECS=0: a window meant to hold the
    script from its first line. Iteration windows and PROFILE_START_TIME open when the script
    gets there, so they are not waited for."""
    texts = _config_texts(text)
    zero = re.compile(r"^\s*ACTIVITIES_WARMUP_PERIOD_SECS\s*=\s*0+\s*$", re.M)
    later = re.compile(r"^\s*(PROFILE_START_ITERATION|PROFILE_START_ITERATION_ROUNDUP|"
                       r"ACTIVITIES_ITERATIONS|PROFILE_START_TIME)\s*=", re.M)
    return any(zero.search(t) for t in texts) and not any(later.search(t) for t in texts)


def _wait_for_window(lib, bound_s=10.0):
    """Waits (at most bound_s) until a window records: the profiler's own warm-up is
    milliseconds without a GPU and about 0.3 s with CUPTI, and a script that ran meanwhile
    would be outside its window (a script shorter than that got no trace at all)."""
    import time
    flag = lib.kairos_recording_flag()
    deadline = time.monotonic() + bound_s
    while not flag[0] and time.monotonic() < deadline:
        time.sleep(0.001)


def _config_texts(text):
    """This run's config text and the environment's, ';' read as a line break (as the
    library reads --config and KAIROS_CONFIG_TEXT)."""
    texts = [(text or "").replace(";", "\n"), os.environ.get("KAIROS_CONFIG_TEXT", "").replace(";", "\n")]
    for var in ("KAIROS_CONFIG", "KINETO_CONFIG"):
        path = os.environ.get(var)
        if path:
            try:
                texts.append(_input.read_input_file(path).decode("utf-8", "replace"))
            except _input.InputFileError:
                pass  # libkairos refuses the same file and says why
            break  # the library reads KINETO_CONFIG only when KAIROS_CONFIG is unset
    return texts


def _wants(text, env, keys):
    if os.environ.get(env, "") in ("1", "true", "yes"):
        return True
    texts = _config_texts(text)
    pat = re.compile(r"^\s*(" + keys + r")\s*=\s*(true|1|yes)\s*$", re.I | re.M)
    return any(pat.search(t) for t in texts)


class _TorchImportHook(importlib.abc.MetaPathFinder):
    """Attaches the bridge right after the script's first `import torch` completes."""

    def __init__(self, record_shapes, with_flops):
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.busy = False

    def find_spec(self, name, path, target=None):
        if name != "torch" or self.busy:
            return None
        self.busy = True
        try:
            import importlib.util
            spec = importlib.util.find_spec(name)
        finally:
            self.busy = False
        if spec is None or spec.loader is None:
            return None
        loader = spec.loader
        hook = self

        class _Loader(importlib.abc.Loader):
            def create_module(self, s):
                return loader.create_module(s)

            def exec_module(self, module):
                loader.exec_module(module)
                hook.attach()

        spec.loader = _Loader()
        return spec

    def attach(self):
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        try:
            _torch.attach(self.record_shapes, self.with_flops)
        except _torch.TorchUnavailable as e:
            sys.stderr.write(str(e) + "\n")


_NO_TRACE = ("kairos: no trace: the script ended before the window opened (a time window "
             "opens after ACTIVITIES_WARMUP_PERIOD_SECS, default 5 s, plus the profiler's "
             "warm-up; an iteration window at its start iteration) and a window that has not "
             "opened is cancelled at the end; set ACTIVITIES_WARMUP_PERIOD_SECS=0, see "
             "docs/PYTORCH.md\n")


class _UserError(Exception):
    """A mistake in the command line, its config or its script path: one line on stderr,
    exit status 2, nothing run and no trace written."""


def _prepare(args):
    """Reads the config file and the script (each through the one input opener: never blocks
    on a FIFO, refuses non-regular and oversized files), loads libkairos and applies the
    config. Every failure is a _UserError, raised before any window of this run exists."""
    text = args.config.encode("utf-8", "surrogateescape") if args.config else None
    where = "--config"
    try:
        if args.config_file:
            where = "--config-file %s" % _input.printable(args.config_file)
            text = _input.read_input_file(args.config_file)
        source = _input.read_input_file(args.script, _input.MAX_SCRIPT_BYTES)
    except _input.InputFileError as e:
        raise _UserError(str(e)) from None
    if args.profile_memory:
        # Appended to this run's config text, so it holds for the window that text names (a
        # window named by the environment's config takes PROFILE_PROFILE_MEMORY=true there).
        text = (text + b"\n" if text else b"") + b"PROFILE_PROFILE_MEMORY=true"
    extra = []
    if args.with_stack or args.with_modules:
        extra.append("PROFILE_WITH_STACK=true")
    if args.with_modules:
        extra.append("PROFILE_WITH_MODULES=true")
    if extra:
        # Every window of this run records Python stacks: the one in --config / --config-file
        # and the environment's (read by libkairos when it loads, just below).
        text = (text + b"\n" if text else b"") + "\n".join(extra).encode()
        if any(os.environ.get(v) for v in ("KAIROS_CONFIG_TEXT", "KAIROS_CONFIG", "KINETO_CONFIG")):
            env = os.environ.get("KAIROS_CONFIG_TEXT", "")
            os.environ["KAIROS_CONFIG_TEXT"] = (env + ";" if env else "") + ";".join(extra)

    if getattr(args, "with_flops", False):  # one more config line, applied with the others
        text = (text + b"\n" if text else b"") + b"PROFILE_WITH_FLOPS=true"
    try:
        lib = _lib.lib()  # loads libkairos: it reads the environment's config (and daemon) now
    except OSError as e:
        raise _UserError(str(e)) from None
    # The Python tracer is attached in every run (an idle thread until a window asks for
    # stacks), so a daemon request with --with-stacks finds it; attached before the config
    # below is applied, so that window is seen from its warm-up.
    reason = _stacks.try_attach()
    if reason and extra:
        sys.stderr.write(reason + "\n")
    if text and text != "\n".join(extra).encode():
        try:
            _lib.init(text)
        except _lib.KairosError as e:
            raise _UserError("%s: %s" % (where, e)) from None
    return lib, text, source


def _run(args):
    try:
        lib, text, source = _prepare(args)
    except _UserError as e:
        sys.stderr.write("%s: %s\n" % (PROG, e))
        return 2
    decoded = text.decode("utf-8", "replace") if text else None
    shapes = _wants_shapes(decoded)
    flops = _wants_flops(decoded)
    if _wants(decoded, "KAIROS_TORCH_PROFILE_MEMORY", "PROFILE_PROFILE_MEMORY|PROFILE_MEMORY"):
        # PyTorch's allocator events (docs/MEMORY.md); KAIROS_TORCH_PROFILE_MEMORY=1 for daemon
        # requests (`--profile-memory`) that set the key later.
        _torch.request_memory()
    if sys.modules.get("torch") is not None:
        _torch.attach_if_imported(shapes, flops)
    else:
        sys.meta_path.insert(0, _TorchImportHook(shapes, flops))

    if _from_start(decoded):
        # The window was asked for from the script's first line: start the script once it
        # records, so even a script shorter than the profiler's warm-up gets its trace.
        _wait_for_window(lib)

    sys.argv = [args.script] + args.args
    sys.path.insert(0, os.path.dirname(os.path.abspath(args.script)))
    # The script runs as __main__ from the bytes read above (as runpy.run_path would run
    # them; the file is not opened a second time).
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=args.script, __cached__=None, __loader__=None,
                         __package__=None, __spec__=None, __builtins__=builtins)
    sys.modules["__main__"] = main
    code = 0
    try:
        exec(compile(source, args.script, "exec", dont_inherit=True), main.__dict__)
    except SystemExit as e:
        code = e.code
    except BaseException as e:
        # The trace is still written (below) with the ranges the exception left open
        # closed at the window end; then the script's error is reported as Python would
        # (from the script's frames on: this function's frame is left out).
        import traceback
        traceback.print_exception(type(e), e, e.__traceback__.tb_next)
        code = 1
    finally:
        # Ends a window still recording (the trace is written now, not at interpreter exit)
        # and names the last trace this process wrote (kairos appends the pid to the name).
        path = lib.kairos_flush()
        _torch.release_memory()  # the profiler slot back (an atexit torch profiler may run)
        if path:
            sys.stderr.write("kairos: trace %s\n" % os.fsdecode(path))
        elif b"before its window opened" in (lib.kairos_last_error() or b""):
            # The library's rule (kairos_flush cancels a window that has not opened): a
            # script that ends during the warm-up gets no trace. Say so, with the remedy.
            sys.stderr.write(_NO_TRACE)
    return code


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m kairos")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run a Python script under kairos (torch bridge attached)")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--config", help="Kineto-syntax config text (KEY=VALUE lines; ';' also separates)")
    g.add_argument("--config-file", help="file with Kineto-syntax config")
    r.add_argument("--profile-memory", action="store_true",
                   help="record CUDA allocations and frees and PyTorch's allocator events "
                   "as [memory] events (docs/MEMORY.md)")
    r.add_argument("--with-stack", action="store_true",
                   help="record Python stacks (python_function events; PROFILE_WITH_STACK=true)")
    r.add_argument("--with-modules", action="store_true",
                   help="also name nn.Module calls 'nn.Module: <Class>_<n>' (PROFILE_WITH_MODULES=true; "
                        "implies --with-stack)")
    r.add_argument("--with-flops", action="store_true",
                   help="PROFILE_WITH_FLOPS=true: a flops arg on operators with a formula")
    r.add_argument("script")
    r.add_argument("args", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    if args.config:
        args.config = args.config.replace(";", "\n")

    return _run(args)


if __name__ == "__main__":
    sys.exit(main())
