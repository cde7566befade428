"""THE way the kairos Python package opens a file it reads (config files named by
--config-file, KAIROS_CONFIG / KINETO_CONFIG, the script of `python3 -m kairos run`).

A plain open() of a FIFO blocks until a writer appears, and a read of a device never ends,
so `python3 -m kairos run` with KAIROS_CONFIG naming a FIFO used to hang forever although
libkairos refuses it. Here the open is O_NONBLOCK (returns at once for a FIFO), O_CLOEXEC
and O_NOCTTY; the type is checked on the open descriptor (no race with a rename between a
stat and the open); only a regular file is read, and at most `limit` bytes of it (checked
by fstat and again while reading: a file may grow). Symlinks to regular files are followed.
The rule and its wording are the library's (src/util/input_file.h); this is a separate copy in
Python, with no dependency on it.
"""
import os
import stat

# The library's limit for a config file (src/config/env.cc, docs/CONFIG.md).
MAX_CONFIG_BYTES = 1 << 20
# A script run by `python3 -m kairos run`.
MAX_SCRIPT_BYTES = 64 << 20


class InputFileError(OSError):
    """A file kairos was asked to read is missing, unreadable, not a regular file or too
    large. The message is one line that names the file."""


def _type_name(mode):
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def printable(text):
    """`text` with control characters written as \\xNN, so a message stays one line."""
    out = []
    for c in text:
        if c.isprintable():
            out.append(c)
        else:  # control characters, and the surrogates fsdecode gives undecodable bytes
            out.append("\\x%02x" % ord(c) if ord(c) < 256 else "\\u%04x" % ord(c))
    return "".join(out)


def read_input_file(path, limit=MAX_CONFIG_BYTES):
    """The bytes of the regular file `path` (at most `limit` bytes); raises InputFileError
    with one line "<path>: <reason>" otherwise:
        "<path>: No such file or directory"  (any open or fstat failure: its strerror)
        "<path>: is a FIFO, not a regular file; refusing to read it"  (a directory, ...)
        "<path>: is 2097152 bytes; the limit is 1048576; refusing to read it"
    Never blocks on a FIFO or a device."""
    name = printable(os.fsdecode(path))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as e:
        raise InputFileError("%s: %s" % (name, e.strerror or e)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputFileError("%s: is %s, not a regular file; refusing to read it"
                                 % (name, _type_name(st.st_mode)))
        if st.st_size > limit:
            raise InputFileError("%s: is %d bytes; the limit is %d; refusing to read it"
                                 % (name, st.st_size, limit))
        # A regular file never blocks; clear O_NONBLOCK anyway so reads are ordinary ones
        # (some FUSE/network file systems report EAGAIN with it).
        os.set_blocking(fd, True)
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise InputFileError("%s: grew past the limit of %d bytes while read; refusing "
                                     "to read it" % (name, limit))
        return b"".join(chunks)
    except InputFileError:
        raise
    except OSError as e:
        raise InputFileError("%s: %s" % (name, e.strerror or e)) from None
    finally:
        os.close(fd)
