"""python3 -m kairos run [--config TEXT | --config-file F] script.py [args...]

Runs an unmodified script with kairos loaded and, as soon as the script imports torch, the
torch bridge attached (operators as cpu_op, record_function scopes as user_annotation,
optimizer steps as iterations). Scripts that never import torch run without the bridge.
The environment route works as without `run`: KAIROS_CONFIG / KAIROS_CONFIG_TEXT windows,
KINETO_USE_DAEMON=1 for `kairos trace` / `dyno gputrace` requests.
"""
import argparse
import importlib.abc
import os
import re
import runpy
import sys

from . import _lib, _torch


def _wants_shapes(text):
    """PROFILE_REPORT_INPUT_SHAPES=true in any config this run sees (then the bridge asks
    PyTorch for operator inputs). KAIROS_TORCH_RECORD_SHAPES=1 forces it, for daemon requests
    that set the key later."""
    if os.environ.get("KAIROS_TORCH_RECORD_SHAPES", "") in ("1", "true", "yes"):
        return True
    texts = [text or "", os.environ.get("KAIROS_CONFIG_TEXT", "").replace(";", "\n")]
    for var in ("KAIROS_CONFIG", "KINETO_CONFIG"):
        path = os.environ.get(var)
        if path:
            try:
                with open(path) as f:
                    texts.append(f.read())
            except OSError:
                pass
    pat = re.compile(r"^\s*(PROFILE_REPORT_INPUT_SHAPES|CLIENT_INTERFACE_ENABLE_OP_INPUTS_COLLECTION)"
                     r"\s*=\s*(true|1|yes)\s*$", re.I | re.M)
    return any(pat.search(t) for t in texts)


class _TorchImportHook(importlib.abc.MetaPathFinder):
    """Attaches the bridge right after the script's first `import torch` completes."""

    def __init__(self, record_shapes):
        self.record_shapes = record_shapes
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
            _torch.attach(self.record_shapes)
        except _torch.TorchUnavailable as e:
            sys.stderr.write(str(e) + "\n")


def _run(args):
    text = args.config
    if args.config_file:
        with open(args.config_file) as f:
            text = f.read()
    lib = _lib.lib()  # loads libkairos: it reads the environment's config (and daemon) now
    if text:
        _lib.check(lib.kairos_init(_lib.encode(text)))
    shapes = _wants_shapes(text)
    if "torch" in sys.modules:
        _torch.attach_if_imported(shapes)
    else:
        sys.meta_path.insert(0, _TorchImportHook(shapes))

    sys.argv = [args.script] + args.args
    sys.path.insert(0, os.path.dirname(os.path.abspath(args.script)))
    code = 0
    try:
        runpy.run_path(args.script, run_name="__main__")
    except SystemExit as e:
        code = e.code
    except BaseException:
        # The trace is still written (below) with the ranges the exception left open
        # closed at the window end; then the script's error is reported as Python would.
        import traceback
        traceback.print_exc()
        code = 1
    finally:
        # Ends a window still recording (the trace is written now, not at interpreter exit)
        # and names the last trace this process wrote (kairos appends the pid to the name).
        path = lib.kairos_flush()
        if path:
            sys.stderr.write("kairos: trace %s\n" % path.decode("utf-8", "replace"))
    return code


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m kairos")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run a Python script under kairos (torch bridge attached)")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--config", help="Kineto-syntax config text (KEY=VALUE lines; ';' also separates)")
    g.add_argument("--config-file", help="file with Kineto-syntax config")
    r.add_argument("script")
    r.add_argument("args", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    if args.config:
        args.config = args.config.replace(";", "\n")
    return _run(args)


if __name__ == "__main__":
    sys.exit(main())
