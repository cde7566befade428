#!/usr/bin/env python3
"""Doc facts: where a document states a name or a number taken from the code, the code must
still say it. Each check reads both sides; none restates a value of its own.

  paths       every repository path with a file extension named in docs/*.md and README.md
              (`src/model/event.h`, `tools/gpu-check/run.sh`, `src/x.{h,cc}`) exists.
  threads     the kairos threads ARCHITECTURE.md lists (`kairos-<role>`) are exactly the roles
              the library names with NameThisThread("<role>").
  layers      every folder under src/ is a row of ARCHITECTURE.md's layer table, no source file
              sits at the top of src/, and each library file's "Layer:" header line names the
              target of the folder it is in.
  temp-name   OUTPUT.md's temp-file name (`<path>.tmp.<pid>.<16 random hex digits>`) is what
              file_sink.cc formats.
  metrics     the Prometheus families FLEET.md names (`kairos_...`) are exactly those the agent
              writes (tools/*.cc), and its `reason="a|b|..."` list is exactly MetricsRejectName's.
  findings    every finding id the analysis can emit (FindingBuilder / MakeFinding in
              src/analysis/) is a row (| `id` | ...) of a finding table in docs/*.md.

Usage: check_doc_facts.py [--root DIR] [--only CHECK] [--docs-dir DIR] [--self-test]
  --docs-dir reads the documents from DIR instead of ROOT/docs.
  --self-test proves each check can fail: it copies docs/ and README.md, breaks one fact per
  check in the copy, and succeeds only if that check reports it (and passes on the intact copy).
Exit status 0 when every fact holds, 1 otherwise (each mismatch printed on its own line).
"""
import argparse
import glob
import os
import re
import sys

PATH_RE = re.compile(
    r"(?<![\w/.-])((?:src|tools|bindings|test|bench|include|examples|deploy|cmake|docs)/"
    r"[\w./{},+-]*[\w}])")


def doc_files(root, docs_dir):
    files = sorted(glob.glob(os.path.join(docs_dir, "*.md")))
    readme = os.path.join(root, "README.md")
    if os.path.exists(readme):
        files.append(readme)
    return files


def expand(path):
    m = re.match(r"(.*)\{([^}]*)\}(.*)", path)
    if not m:
        return [path]
    return [m.group(1) + x + m.group(3) for x in m.group(2).split(",")]


def check_paths(root, docs_dir):
    errors = []
    for doc in doc_files(root, docs_dir):
        with open(doc, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                for m in PATH_RE.finditer(line):
                    for p in expand(m.group(1)):
                        base = os.path.basename(p)
                        # Only file names with an extension: a bare name is often a built
                        # program (examples/cuda/train_loop) or a ctest name.
                        if "." not in base or "*" in p or "<" in p:
                            continue
                        if not os.path.exists(os.path.join(root, p)):
                            errors.append(f"{os.path.relpath(doc, docs_dir)}:{lineno}: names "
                                          f"{p}, which does not exist")
    return errors


def source_files(root, top):
    for dirpath, _, names in os.walk(os.path.join(root, top)):
        for n in sorted(names):
            if n.endswith((".h", ".cc", ".c")):
                yield os.path.join(dirpath, n)


def check_threads(root, docs_dir):
    code = set()
    for path in source_files(root, "src"):
        with open(path, encoding="utf-8", errors="replace") as f:
            code |= set(re.findall(r'\bNameThisThread\("([a-z0-9-]+)"\)', f.read()))
    with open(os.path.join(docs_dir, "ARCHITECTURE.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.find("Each is named `kairos-<role>`")
    if start < 0:
        return ["ARCHITECTURE.md: the list of kairos threads ('Each is named `kairos-<role>`') "
                "is gone"]
    end = text.find("\n- ", start)
    doc = set(re.findall(r"`kairos-([a-z0-9-]+)`", text[start:end]))
    errors = [f"ARCHITECTURE.md lists thread kairos-{r}, which no NameThisThread names"
              for r in sorted(doc - code)]
    errors += [f"the library names thread kairos-{r}; ARCHITECTURE.md's thread list lacks it"
               for r in sorted(code - doc)]
    if not code:
        errors.append("no NameThisThread(\"...\") call found in src/: the check reads nothing")
    return errors


def layer_table(docs_dir):
    with open(os.path.join(docs_dir, "ARCHITECTURE.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.find("## Layers are CMake targets")
    rows = {}
    for line in text[start:].splitlines()[1:]:
        if line.startswith("## "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4 or not line.startswith("|"):
            continue
        m = re.search(r"`([^`]+)`", cells[1])
        t = re.search(r"`(kairos_[a-z_]+)`", cells[2])
        if m and m.group(1).startswith("src/"):
            rows[m.group(1).rstrip("/")] = t.group(1) if t else None
    return rows


def check_layers(root, docs_dir):
    errors = []
    rows = layer_table(docs_dir)
    if not rows:
        return ["ARCHITECTURE.md: no src/ rows in the layer table"]
    src = os.path.join(root, "src")
    for n in sorted(os.listdir(src)):
        full = os.path.join(src, n)
        if os.path.isdir(full) and f"src/{n}" not in rows and any(
                x.endswith((".h", ".cc")) for x in os.listdir(full)):
            errors.append(f"src/{n}/ is in no row of ARCHITECTURE.md's layer table")
        if os.path.isfile(full) and n.endswith((".h", ".cc")):
            errors.append(f"src/{n} sits at the top of src/, in no layer")
    for folder, target in sorted(rows.items()):
        if target is None:
            continue
        for path in source_files(root, folder):
            if os.path.dirname(os.path.relpath(path, root)) != folder:
                continue  # subfolders (output/proto) may say more
            with open(path, encoding="utf-8", errors="replace") as f:
                head = f.read(600)
            m = re.search(r"^// Layer: (kairos_[a-z_]+)", head, re.M)
            if m and m.group(1) != target:
                errors.append(f"{os.path.relpath(path, root)}: header says Layer: {m.group(1)}, "
                              f"the folder is {target}")
    return errors


def check_temp_name(root, docs_dir):
    with open(os.path.join(docs_dir, "OUTPUT.md"), encoding="utf-8") as f:
        doc = f.read()
    m = re.search(r"`<path>\.tmp\.<pid>\.<(\d+) random hex digits>`", doc)
    if not m:
        return ["OUTPUT.md: the temp-file name (`<path>.tmp.<pid>.<N random hex digits>`) is gone"]
    with open(os.path.join(root, "src/output/file_sink.cc"), encoding="utf-8") as f:
        code = f.read()
    c = re.search(r'"\.tmp\.%ld\.%0(\d+)llx"', code)
    if not c:
        return ["src/output/file_sink.cc no longer formats \".tmp.%ld.%0Nllx\""]
    if c.group(1) != m.group(1):
        return [f"OUTPUT.md says {m.group(1)} random hex digits, file_sink.cc writes {c.group(1)}"]
    return []


def check_metrics(root, docs_dir):
    with open(os.path.join(docs_dir, "FLEET.md"), encoding="utf-8") as f:
        doc = f.read()
    code = ""
    for path in sorted(glob.glob(os.path.join(root, "tools", "*.cc"))):
        with open(path, encoding="utf-8") as f:
            code += f.read()
    written = set(re.findall(r'"(kairos_[a-z_]+)"', code))
    named = set(re.findall(r"`(kairos_[a-z_]+)[`{]", doc))
    errors = [f"FLEET.md names {n}, which the agent does not write" for n in sorted(named - written)]
    errors += [f"the agent writes {n}, which FLEET.md does not name" for n in sorted(written - named)]
    m = re.search(r'reason="([a-z_|]+)"', doc)
    with open(os.path.join(root, "tools", "metrics_store.cc"), encoding="utf-8") as f:
        store = f.read()
    reasons = re.findall(r'case MetricsReject::k\w+: return "([a-z_]+)";', store)
    if not m:
        errors.append('FLEET.md no longer lists the rejection reasons (reason="a|b|...")')
    elif m.group(1).split("|") != reasons:
        errors.append(f"FLEET.md lists reasons {m.group(1)}, MetricsRejectName gives {'|'.join(reasons)}")
    return errors


def check_findings(root, docs_dir):
    ids = set()
    for path in sorted(glob.glob(os.path.join(root, "src", "analysis", "*.cc"))):
        with open(path, encoding="utf-8") as f:
            code = f.read()
        ids |= set(re.findall(r'FindingBuilder \w+\(ctx, "([a-z_]+)"', code))
        ids |= set(re.findall(r'MakeFinding\(\s*"([a-z_]+)"', code))
    if not ids:
        return ["no finding ids found in src/analysis/ (FindingBuilder / MakeFinding changed?)"]
    rows = set()
    for path in glob.glob(os.path.join(docs_dir, "*.md")):
        with open(path, encoding="utf-8") as f:
            rows |= set(re.findall(r"^\| `([a-z_]+)` \|", f.read(), re.M))
    return [f"finding {i} has no row in a docs/*.md finding table" for i in sorted(ids - rows)]


# One broken fact per check: (document, text to replace, replacement).
BREAKS = {
    "paths": ("ARCHITECTURE.md", "`src/util/thread_name.h`", "`src/util/no_such_file.h`"),
    "threads": ("ARCHITECTURE.md", "`kairos-host` (/proc sampler), ", ""),
    "layers": ("ARCHITECTURE.md", "| util | `src/util/` |", "| util | `src/utilities/` |"),
    "temp-name": ("OUTPUT.md", "<16 random hex digits>", "<12 random hex digits>"),
    "metrics": ("FLEET.md", "|too_many_lines|", "|"),
    "findings": ("SUMMARY.md", "| `excessive_sync` |", "| excessive sync |"),
}


def self_test(root):
    import shutil
    import tempfile
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        docs = os.path.join(tmp, "docs")
        shutil.copytree(os.path.join(root, "docs"), docs)
        for name, (doc, old, new) in BREAKS.items():
            path = os.path.join(docs, doc)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            if CHECKS[name](root, docs):
                failures.append(f"{name}: fails on the intact docs")
            if old not in text:
                failures.append(f"{name}: the self-test's break text {old!r} is not in {doc}")
                continue
            with open(path, "w", encoding="utf-8") as f:
                f.write(text.replace(old, new, 1))
            if not CHECKS[name](root, docs):
                failures.append(f"{name}: did not notice {doc} changed {old!r} to {new!r}")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    for f in failures:
        print(f"self-test: {f}")
    return 1 if failures else 0


CHECKS = {"paths": check_paths, "threads": check_threads, "layers": check_layers,
          "temp-name": check_temp_name, "metrics": check_metrics, "findings": check_findings}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    ap.add_argument("--docs-dir", default=None)
    ap.add_argument("--only", choices=sorted(CHECKS), default=None)
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    if args.self_test:
        return self_test(root)
    docs_dir = os.path.abspath(args.docs_dir or os.path.join(root, "docs"))
    errors = []
    for name, fn in CHECKS.items():
        if args.only and name != args.only:
            continue
        errors += [f"{name}: {e}" for e in fn(root, docs_dir)]
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
