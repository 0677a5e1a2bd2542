#!/usr/bin/env python3
"""Checks docs/figures against the pages: every file under docs/figures is
referenced by a page (docs/**/*.md or README.md), and every figure a page
references exists. A reference is a path through `figures/`, as an image or
link target (`figures/gemm/gemm-tune.png`) or in text
(`docs/figures/coschedule/pairs.csv`).

    python3 scripts/check-doc-figures.py      # exit status 1 on a mismatch

scripts/docs.sh runs it; test/python/test_doc_figures.py too."""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
FIGURES = os.path.join(DOCS, "figures")
# The path after figures/: names of letters, digits and . _ - /; a trailing
# dot ends a sentence, not the name.
REFERENCE = re.compile(r"figures/([A-Za-z0-9_./-]*[A-Za-z0-9_/-])")


def pages():
    yield os.path.join(ROOT, "README.md")
    for base, dirs, files in os.walk(DOCS):
        dirs[:] = [d for d in dirs if d not in ("figures", "generated")]
        for f in files:
            if f.endswith(".md"):
                yield os.path.join(base, f)


def referenced():
    """{path under docs/figures: [pages citing it]}"""
    refs = {}
    for page in pages():
        with open(page, encoding="utf-8") as f:
            for m in REFERENCE.finditer(f.read()):
                refs.setdefault(m.group(1), []).append(
                    os.path.relpath(page, ROOT))
    return refs


def present():
    out = set()
    for base, _, files in os.walk(FIGURES):
        for f in files:
            out.add(os.path.relpath(os.path.join(base, f), FIGURES))
    return out


def problems():
    refs, files = referenced(), present()
    out = []
    for path in sorted(files - set(refs)):
        out.append(f"docs/figures/{path}: no page references it")
    for path in sorted(set(refs) - files):
        out.append(f"docs/figures/{path}: referenced by "
                   f"{', '.join(sorted(set(refs[path])))} but missing")
    return out


def main():
    found = problems()
    for line in found:
        print(f"check-doc-figures: {line}", file=sys.stderr)
    print(f"check-doc-figures: {len(present())} files, "
          f"{len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
