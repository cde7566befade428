#!/usr/bin/env python3
"""Size limits of the library's code (issue 24, item 5): no function over MAX_FUNCTION lines
and no file over MAX_FILE lines in src/, bindings/ and tools/, except the entries of
size_allowance.txt, each a known offender at its measured size: an allowed entry may shrink,
never grow, and an entry that no longer exceeds the limit must be removed (so the list only
gets shorter). Declarative tables (a function whose body is mostly one initializer list, like
the config key table) are listed there too, marked "table".

A function is found the way clang-format lays this tree out: a definition starts at column 0
(not a comment, preprocessor line, namespace, class, struct, enum or union) and its body ends
at the first later line that is exactly "}". Lambdas and local classes count toward the
function that contains them. Member functions defined inside a class body (indented) are not
measured; they are one-liners by the style of the tree.

Usage: check_sizes.py [--root DIR] [--list] [--self-test]
  --list prints every function over the limit with its length (to write the allowance).
  --self-test proves the check fails on a function one line over the limit and on a grown
  allowance entry.
Exit status 0 when every limit holds, 1 otherwise (each violation on its own line).
"""
import argparse
import os
import re
import sys

MAX_FUNCTION = 80
MAX_FILE = 700
SCANNED = ("src", "bindings", "tools")
SKIP_START = re.compile(r"^(//|/\*|\*|#|namespace\b|class\b|struct\b|enum\b|union\b|template\b"
                        r"|extern\b|using\b|typedef\b|}|\s|$)")
NAME_RE = re.compile(r"([~\w:]+(?:operator\s*\S+)?)\s*\(")


def functions(lines):
    """Yields (name, first line number, length) for each column-0 function definition."""
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if SKIP_START.match(line) and not line.startswith("template"):
            i += 1
            continue
        if line.startswith("template"):
            i += 1
            continue
        # A signature runs until a line ending with "{" (the body) or ";" (a declaration).
        j = i
        while j < n and not lines[j].rstrip().endswith(("{", ";")) and j - i < 12:
            j += 1
        if j >= n or not lines[j].rstrip().endswith("{") or "(" not in "".join(lines[i:j + 1]):
            i = j + 1
            continue
        sig = " ".join(l.strip() for l in lines[i:j + 1])
        if "=" in sig.split("(")[0]:  # a variable with a braced initializer, not a function
            i = j + 1
            continue
        k = j + 1
        while k < n and lines[k].rstrip() not in ("}", "};"):
            k += 1
        m = NAME_RE.search(sig)
        yield (m.group(1) if m else sig[:40]), i + 1, k - i + 1
        i = k + 1


def source_files(root):
    for top in SCANNED:
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if name.endswith((".cc", ".h", ".c")):
                    yield os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")


def measure(root):
    """{key: length} of everything over its limit: 'path:Function' and 'path' (file)."""
    over = {}
    for rel in source_files(root):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
        if len(lines) - 1 > MAX_FILE:
            over[rel] = len(lines) - 1
        for name, _, length in functions(lines):
            if length > MAX_FUNCTION:
                key = f"{rel}:{name}"
                over[key] = max(length, over.get(key, 0))
    return over


def read_allowance(path):
    allowed = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            allowed[parts[0]] = int(parts[1])
    return allowed


def check(over, allowed):
    errors = []
    for key, length in sorted(over.items()):
        limit = MAX_FILE if ":" not in key else MAX_FUNCTION
        what = "file" if ":" not in key else "function"
        if key not in allowed:
            errors.append(f"{key}: {what} of {length} lines (limit {limit}); split it")
        elif length > allowed[key]:
            errors.append(f"{key}: {what} grew to {length} lines (allowance {allowed[key]}, "
                          f"limit {limit}); split it instead")
    for key, length in sorted(allowed.items()):
        if key not in over:
            errors.append(f"{key}: within the limit now (or gone): remove it from "
                          f"size_allowance.txt")
        elif over[key] < length:
            errors.append(f"{key}: shrank to {over[key]} lines: lower its allowance from {length}")
    return errors


def self_test():
    body = ["int F(int x) {"] + ["  x += 1;"] * (MAX_FUNCTION - 2) + ["}"]
    if list(functions(body)) != [("F", 1, MAX_FUNCTION)]:
        print("self-test: a function of exactly the limit was measured as",
              list(functions(body)))
        return 1
    grown = ["int F(int x) {"] + ["  x += 1;"] * (MAX_FUNCTION - 1) + ["}"]
    over = {f"src/x.cc:{n}": l for n, _, l in functions(grown) if l > MAX_FUNCTION}
    if not check(over, {}):
        print("self-test: a function one line over the limit passed")
        return 1
    if not check(over, {"src/x.cc:F": MAX_FUNCTION}):
        print("self-test: a function over its allowance passed")
        return 1
    if check(over, {"src/x.cc:F": MAX_FUNCTION + 1}):
        print("self-test: a function at its allowance failed")
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    root = os.path.abspath(args.root)
    over = measure(root)
    if args.list:
        for key, length in sorted(over.items(), key=lambda kv: -kv[1]):
            print(f"{key} {length}")
        return 0
    errors = check(over, read_allowance(os.path.join(os.path.dirname(__file__),
                                                     "size_allowance.txt")))
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
