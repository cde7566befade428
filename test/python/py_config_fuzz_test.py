"""Randomised abuse of the Python side's config handling (issue 30: it had no fuzzer), with a
fixed seed so a failure reproduces:
- kairos.init(text) and the values path (kairos_init_values, used by kairos.profile for
  paths) on random text, bytes and key/value pairs: every call either succeeds or raises
  KairosError whose message is one printable line of bounded length; nothing else is raised,
  the interpreter never crashes, and no call schedules a trace (the generator never emits a
  window key);
- kairos._input.read_input_file on random files of every type (regular files of random bytes
  and sizes around the limit, FIFOs, directories, sockets, dangling and looping symlinks,
  /dev/zero): bytes of at most the limit, or InputFileError with one line naming the file;
  never a hang (each call runs under a deadline)."""
import os
import random
import socket
import sys
import threading

sys.modules["torch"] = None  # torch-free
sys.path.insert(0, os.environ["KAIROS_PYTHONPATH"])
import kairos  # noqa: E402
from kairos import _input, _lib  # noqa: E402

import kt_util as k  # noqa: E402

SEED = int(os.environ.get("KAIROS_PY_FUZZ_SEED", "20261127"))
ROUNDS = int(os.environ.get("KAIROS_PY_FUZZ_ROUNDS", "1500"))
rng = random.Random(SEED)
f = k.Failures()
d = k.tmpdir()

# Keys that exist but open no window, junk keys, and near-misses of real ones.
KEYS = ["ACTIVITIES_LOG_FILE", "ACTIVITY_TYPES", "KAIROS_LOG_LEVEL", "KAIROS_SUMMARY",
        "ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB", "KAIROS_CPU_BUFFER_KB_PER_THREAD", "X", "",
        "activities_log_file", "ACTIVITIES_LOG_FILE ", "KAIROS_\u00e9", "A" * 300]
ALPHABET = "ab=#;:\n\r\t \\\"'/.\u00e9\u2603\x00\x01\x1b\x7f0123456789-_"


def rand_text(max_len=200):
    n = rng.randrange(max_len)
    return "".join(rng.choice(ALPHABET) for _ in range(n))


def rand_config():
    lines = []
    for _ in range(rng.randrange(6)):
        kind = rng.randrange(4)
        if kind == 0:
            lines.append(rand_text(60))
        elif kind == 1:
            lines.append("%s=%s" % (rng.choice(KEYS), rand_text(60)))
        elif kind == 2:
            lines.append("# " + rand_text(40))
        else:
            lines.append("%s=%d" % (rng.choice(KEYS), rng.randrange(-2**40, 2**40)))
    sep = rng.choice(["\n", "\r\n", ";", "\n\n"])
    text = sep.join(lines)
    return text.encode("utf-8", "surrogatepass") if rng.random() < 0.3 else text


def one_line(msg):
    return "\n" not in msg and len(msg) < 8192


errors = 0
others = []
for i in range(ROUNDS):
    try:
        if rng.random() < 0.5:
            kairos.init(rand_config())
        else:
            pairs = [(rng.choice(KEYS), rand_text(80)) for _ in range(rng.randrange(1, 4))]
            _lib.init(rand_config() if rng.random() < 0.5 else "", pairs)
    except _lib.KairosError as e:
        errors += 1
        if not one_line(str(e)):
            others.append("round %d: message is not one bounded line: %r" % (i, str(e)[:200]))
    except Exception as e:  # noqa: BLE001
        others.append("round %d: %s: %s" % (i, type(e).__name__, e))
f.eq(others, [], "init/init_values on %d random configs (seed %d): only KairosError" % (ROUNDS, SEED))
f.check(0 < errors < ROUNDS, "some random configs were refused, some accepted (%d refused)" % errors)
f.check(not kairos.recording(), "no random config started a recording")


def with_deadline(fn, seconds=10):
    out = {}

    def target():
        try:
            out["value"] = fn()
        except Exception as e:  # noqa: BLE001
            out["error"] = e
    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    return None if t.is_alive() else out


paths = []
limit = 4096
for i in range(60):
    p = os.path.join(d, "f%d" % i)
    kind = rng.randrange(7)
    if kind <= 2:
        size = rng.choice([0, 1, limit - 1, limit, limit + 1, rng.randrange(3 * limit)])
        with open(p, "wb") as out:
            out.write(bytes(rng.randrange(256) for _ in range(size)))
    elif kind == 3:
        os.mkfifo(p)
    elif kind == 4:
        os.mkdir(p)
    elif kind == 5:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.bind(p)
        s.close()
    else:
        os.symlink(rng.choice([p, os.path.join(d, "missing"), "/dev/zero"]), p)
    paths.append(p)
paths += ["/dev/zero", "/dev/null", d, os.path.join(d, "nope"), "/proc/self/mem"]

bad = []
for p in paths:
    r = with_deadline(lambda p=p: _input.read_input_file(p, limit))
    if r is None:
        bad.append("%s: hung" % p)
    elif "error" in r:
        e = r["error"]
        if not isinstance(e, _input.InputFileError):
            bad.append("%s: %s: %s" % (p, type(e).__name__, e))
        elif not (one_line(str(e)) and str(e).startswith(_input.printable(p) + ": ")):
            bad.append("%s: message %r" % (p, str(e)))
    elif not (isinstance(r["value"], bytes) and len(r["value"]) <= limit):
        bad.append("%s: returned %r" % (p, type(r["value"])))
f.eq(bad, [], "read_input_file on %d files of every type: bytes within the limit or one line" % len(paths))
f.done()
