#!/usr/bin/env python3
"""The library's writable symbols equal the process-state table in docs/ARCHITECTURE.md.

Reads the built libraries (--lib, once per file: libkairos.so, the preload shim, and
libkairos_core.so, the implementation it loads) with `nm -C --defined-only -f sysv` (demangled
names, the section of each symbol) and keeps every data symbol a running process can write:

  * nm type B b D d V v u: .bss, .data, .tbss/.tdata (thread-locals), .data.rel.ro;
  * minus what the toolchain emits for a symbol that is listed or for no state of ours:
    "guard variable for X" (X's one-time-init flag: X is listed; when X itself has no
    symbol left, the guard stands for it and X must be listed), vtables / typeinfo /
    VTT (read-only after relocation), std::__ioinit (libstdc++'s empty per-file stream
    initialiser) and the CRT/linker symbols in TOOLCHAIN;
  * minus *local* symbols in .data.rel.ro: const tables of pointers, which the dynamic
    loader makes read-only after relocation (RELRO). An *exported* one stays: a program
    that links it gets a copy relocation into its own writable data (ncclProfiler_v4).

The table (section "## Process state" of ARCHITECTURE.md) names each entry in its first
column as backticked demangled names; a row may name several symbols of one piece of
state (the text after the last "::" is compared in full, the scope too). The check fails
when the library has a writable symbol the table does not name, when the table names one
the library no longer has, or when the counts differ (two files each defining a same-named
static are two entries). Renaming a global does not hide it: the new name is not listed.
It also fails when the totals stated above the table are not the real ones.

Rows under a heading that says "constant" list symbols that hold no mutable state (counted
apart from the pieces of state): each must be in .data.rel.ro, where only a `const` object
with relocations lands (the loader makes it read-only after relocation), so mutable state
cannot hide there.

Rows whose first cell says "CUDA builds" name symbols that only CUDA builds have: with
--cuda OFF they must be absent, and the stated totals (those of a CUDA build) are not
compared. --forget NAME / --phantom NAME are the probes that prove the check can fail (a
global the table does not list; a listed symbol the library lacks); --as-constant NAME
proves a mutable one cannot be passed off as constant.
"""
import argparse
import collections
import re
import subprocess
import sys

KEEP_TYPES = set("BbDdVvu")
# ... and ASan's one-definition-rule indicator, one per instrumented global (a byte beside a
# global the table already lists, not state of its own).
COMPILER_PREFIXES = ("guard variable for ", "vtable for ", "typeinfo for ", "typeinfo name for ",
                     "VTT for ", "construction vtable for ", "DW.ref.", "__odr_asan.")
TOOLCHAIN = {"std::__ioinit", "_DYNAMIC", "_GLOBAL_OFFSET_TABLE_", "__TMC_END__", "__dso_handle",
             "__do_global_dtors_aux_fini_array_entry", "__frame_dummy_init_array_entry",
             "__tls_guard", "completed.0", "__bss_start", "_edata", "_end"}


def writable_symbols(lib, sections=None):
    """The writable data symbols of `lib`; `sections` (a dict) gets each one's section."""
    out = subprocess.run(["nm", "-C", "--defined-only", "-f", "sysv", lib], check=True,
                         capture_output=True, text=True).stdout
    found = collections.Counter()
    guarded = set()
    for line in out.splitlines():
        parts = line.split("|")
        if len(parts) != 7:
            continue
        name, kind, section = parts[0].strip(), parts[2].strip(), parts[6].strip()
        if kind not in KEEP_TYPES:
            continue
        if name.startswith("guard variable for "):
            guarded.add(name[len("guard variable for "):])
            continue
        if name in TOOLCHAIN or name.startswith(COMPILER_PREFIXES):
            continue
        if section == ".data.rel.ro" and kind.islower():
            continue  # local const table, read-only after relocation
        found[name] += 1
        if sections is not None:
            sections[name] = section
    # A static the optimizer kept in a register or folded away can leave its guard behind:
    # the guard is then the state's only trace, and stands for it.
    for name in guarded:
        if name not in found:
            found[name] += 1
    return found


def table_symbols(doc):
    text = open(doc, encoding="utf-8").read()
    m = re.search(r"^## Process state\n(.*?)(?=^## )", text, re.S | re.M)
    if not m:
        sys.exit("FAIL: no '## Process state' section in " + doc)
    section = m.group(1)
    listed = collections.Counter()
    cuda_only = set()
    constant_names = set()
    rows = 0
    constant_rows = 0
    in_constant = False  # under a heading that names constant symbols (no mutable state)
    for line in section.splitlines():
        if line.startswith("#"):
            in_constant = "constant" in line.lower()
            continue
        if not line.startswith("|") or line.startswith("|---"):
            continue
        first = line.split("|")[1]
        names = re.findall(r"`([^`]+)`", first)
        if not names:
            continue  # the header row
        if in_constant:
            constant_rows += 1
            constant_names.update(names)
        else:
            rows += 1
        for n in names:
            listed[n] += 1
            if "CUDA builds" in first:
                cuda_only.add(n)
    stated = re.search(r"(\d+) pieces of process state\b.*?\s(\d+) constant tables?\b.*?\s(\d+) "
                       r"writable symbols", section, re.S)
    return listed, cuda_only, constant_names, rows, constant_rows, stated


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True, action="append",
                    help="a library to read (repeat: the shim and the core)")
    ap.add_argument("--doc", required=True)
    ap.add_argument("--list", action="store_true", help="print the writable symbols and exit")
    ap.add_argument("--cuda", default="ON", help="ON: a CUDA build (the default); OFF: CPU only")
    ap.add_argument("--forget", help="probe: drop this name from the table")
    ap.add_argument("--phantom", help="probe: add this name to the table")
    ap.add_argument("--as-constant", help="probe: list this name as a constant symbol")
    args = ap.parse_args()
    found = collections.Counter()
    sections = {}
    for lib in args.lib:
        found += writable_symbols(lib, sections)
    if args.list:
        for n in sorted(found.elements()):
            print(n)
        print(f"{sum(found.values())} writable symbols")
        return 0
    listed, cuda_only, constant_names, rows, constant_rows, stated = table_symbols(args.doc)
    cuda = args.cuda.upper() in ("ON", "1", "TRUE", "YES")
    if not cuda:
        for n in cuda_only:
            del listed[n]
    if args.forget:
        if args.forget not in listed:
            sys.exit(f"probe: {args.forget} is not in the table")
        listed[args.forget] -= 1
    if args.phantom:
        listed[args.phantom] += 1
    ok = True
    for n in sorted((found - listed).elements()):
        print(f"FAIL: writable symbol not in the state table: {n}")
        ok = False
    for n in sorted((listed - found).elements()):
        print(f"FAIL: the state table lists a symbol the library does not have: {n}")
        ok = False
    if args.as_constant:
        constant_names.add(args.as_constant)
    for n in sorted(constant_names):
        if n in sections and sections[n] != ".data.rel.ro":
            print(f"FAIL: {n} is listed as constant but lives in {sections[n]} (writable)")
            ok = False
    total = sum(found.values())
    if stated is None:
        print("FAIL: the state table does not state 'N pieces of process state ... K constant "
              "tables ... M writable symbols'")
        ok = False
    elif cuda and tuple(int(g) for g in stated.groups()) != (rows, constant_rows, total):
        print(f"FAIL: the table states {stated.group(1)} pieces / {stated.group(2)} constant "
              f"tables / {stated.group(3)} symbols; it has {rows} state rows, {constant_rows} "
              f"constant rows and the library {total} writable symbols")
        ok = False
    if not ok:
        return 1
    scope = "" if cuda else " (a CPU-only build: the CUDA-only rows are absent, as they must be)"
    print(f"PASS: {rows} pieces of process state, {constant_rows} constant tables, {total} writable "
          f"symbols, all in the table{scope}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
