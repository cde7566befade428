#!/usr/bin/env python3
"""Include-graph check: every `#include "..."` and `#include <...>` of a project header in the
library, bindings and tools must follow the layer table in docs/ARCHITECTURE.md. An angle
include names a project header when it resolves under one of INCLUDE_ROOTS (`<vector>` and
other system headers resolve nowhere and are skipped): `#include <activity/cpu_recorder.h>`
in bindings/c is as forbidden as its quoted spelling.

Why a test on top of the per-target include directories (cmake/KairosLayers.cmake): a quoted
include is first looked up next to the including file, so a file at the top of src/ (layer
base) reaches every layer's headers by relative path without any -I flag. The compiler cannot
catch that edge; this check does, for every file, from the same table the docs show.

The table is the one under the heading "## Layers are CMake targets": columns
`target | folder | job | may include`. The folder column's first `backquoted` path says which
files belong to the layer (`src/` means the files directly in src/, not its subfolders); the
last column lists the layer names (target names without the "kairos_" prefix) whose headers
the layer may include directly. Other words there (external libraries) are ignored. Edges are
not transitive: bindings may include session headers, not activity internals.

Usage: check_layers.py [--root DIR] [--inject FILE:INCLUDE [--expect-forbidden]]
  --inject adds one `#include "INCLUDE"` line to FILE (in memory) before checking (INCLUDE
  written `<path>` injects the angle form); with
  --expect-forbidden the run succeeds only if that very line is reported, which is how the
  suite proves the check fails on a forbidden edge.
Exit status: 0 when every edge is allowed, 1 on a violation (each printed as
file:line: layer -> layer (include)), 2 on a malformed table.
"""
import argparse
import os
import re
import sys

SCANNED = ("src", "bindings", "tools")
INCLUDE_ROOTS = ("src", "include", "bindings/c")
TABLE_HEADING = "## Layers are CMake targets"


def layer_name(target):
    target = target.strip().strip("`")
    if target.startswith("kairos_"):
        return target[len("kairos_"):]
    return target


def parse_table(arch_path):
    """Returns (layers, folder_of, allowed): layer names in table order, folder per layer, and
    the set of layers each may include."""
    with open(arch_path, encoding="utf-8") as f:
        text = f.read()
    start = text.find(TABLE_HEADING)
    if start < 0:
        raise ValueError(f"{arch_path}: no '{TABLE_HEADING}' section")
    rows, header_seen = [], False
    for line in text[start:].splitlines()[1:]:
        if line.startswith("## "):
            break
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not header_seen:  # the first row names the columns
            header_seen = True
            continue
        if len(cells) < 4 or set(cells[0]) <= set("-: "):
            continue
        rows.append(cells)
    if not rows:
        raise ValueError(f"{arch_path}: layer table is empty")
    layers, folder_of, raw_allowed = [], {}, {}
    for cells in rows:
        name = layer_name(cells[0])
        m = re.search(r"`([^`]+)`", cells[1])
        if not m:
            raise ValueError(f"row '{cells[0]}': folder column has no `path`")
        layers.append(name)
        folder_of[name] = m.group(1).rstrip("/") + "/"
        raw_allowed[name] = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", cells[-1])
    allowed = {n: {layer_name(w) for w in words} & set(layers) for n, words in raw_allowed.items()}
    return layers, folder_of, allowed


def layer_of(path, folder_of):
    """The layer owning `path` (relative, '/'-separated): the longest folder prefix; a folder
    given as `src/` owns only the files directly inside it."""
    best, best_len = None, -1
    for name, folder in folder_of.items():
        if not path.startswith(folder):
            continue
        rest = path[len(folder):]
        if folder == "src/" and "/" in rest:
            continue
        if len(folder) > best_len:
            best, best_len = name, len(folder)
    return best


def resolve(root, including, target, angle=False):
    """The repository-relative path an include names, or None (generated, external, system).
    A quoted include is looked up next to the including file first; an angle one only under
    the include roots."""
    candidates = [] if angle else [os.path.join(os.path.dirname(including), target)]
    candidates += [os.path.join(r, target) for r in INCLUDE_ROOTS]
    for c in candidates:
        full = os.path.normpath(os.path.join(root, c))
        if os.path.isfile(full):
            return os.path.relpath(full, root).replace(os.sep, "/")
    return None


INCLUDE_RE = re.compile(r'^\s*#\s*include\s+(?:"([^"]+)"|<([^>]+)>)')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    ap.add_argument("--inject", default=None)
    ap.add_argument("--expect-forbidden", action="store_true",
                    help="with --inject: succeed only if the injected include is reported")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    try:
        layers, folder_of, allowed = parse_table(os.path.join(root, "docs", "ARCHITECTURE.md"))
    except ValueError as e:
        print(f"check_layers: {e}", file=sys.stderr)
        return 2
    inject_file, inject_include = None, None
    if args.inject:
        inject_file, inject_include = args.inject.split(":", 1)

    violations, files, edges = [], 0, 0
    for top in SCANNED:
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for n in sorted(names):
                if not n.endswith((".h", ".hpp", ".cc", ".c", ".inc")):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, n), root).replace(os.sep, "/")
                src_layer = layer_of(rel, folder_of)
                if src_layer is None:
                    continue
                files += 1
                with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
                    lines = f.read().splitlines()
                if rel == inject_file:
                    lines.append(f"#include {inject_include}" if inject_include.startswith("<")
                                 else f'#include "{inject_include}"')
                for lineno, line in enumerate(lines, 1):
                    m = INCLUDE_RE.match(line)
                    if not m:
                        continue
                    angle = m.group(1) is None
                    name = m.group(2) if angle else m.group(1)
                    dst = resolve(root, rel, name, angle)
                    if dst is None:
                        continue
                    dst_layer = layer_of(dst, folder_of)
                    if dst_layer is None or dst_layer == src_layer:
                        continue
                    edges += 1
                    if dst_layer not in allowed[src_layer]:
                        spelled = f"<{name}>" if angle else f'"{name}"'
                        violations.append(f"{rel}:{lineno}: {src_layer} -> {dst_layer} "
                                          f"(#include {spelled}); the layer table allows "
                                          f"{src_layer} -> {sorted(allowed[src_layer]) or 'nothing'}")
    for v in violations:
        print(v)
    if args.expect_forbidden:
        spelled = inject_include if inject_include.startswith("<") else f'"{inject_include}"'
        hit = [v for v in violations
               if v.startswith(f"{inject_file}:") and f"#include {spelled})" in v]
        print(f"check_layers: injected edge {'reported' if hit else 'NOT reported'}",
              file=sys.stderr)
        return 0 if hit else 1
    print(f"check_layers: {files} files, {edges} cross-layer includes, "
          f"{len(violations)} forbidden", file=sys.stderr)
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
