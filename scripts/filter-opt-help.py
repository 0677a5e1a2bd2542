#!/usr/bin/env python3
"""Filters `ism-opt --help` (stdin) for the docs: in its list of passes and
pass pipelines ("Compiler passes to run"), keeps only ism's (names starting
with `ism` or containing `-ism`, with their options); every other line is
kept as it is. ism-opt also registers the upstream MLIR passes, several
hundred of them, which MLIR's own documentation describes.

    build/bin/ism-opt --help | python3 scripts/filter-opt-help.py"""

import re
import sys

ENTRY = re.compile(r"^(\s+)--?([A-Za-z0-9_.-]+)")


def is_ism(name):
    return name.startswith("ism") or "-ism" in name


def main():
    lines = sys.stdin.read().splitlines()
    out = []
    list_indent = None   # indentation of the "Compiler passes to run" line
    entry_indent = None  # indentation of a pass entry
    keep = True
    for line in lines:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if list_indent is None:
            out.append(line)
            if stripped.startswith("Compiler passes to run"):
                list_indent = indent
            continue
        if stripped and indent <= list_indent:
            list_indent = None  # the list has ended
            keep = True
            out.append(line)
            continue
        if stripped.endswith(":") and not stripped.startswith("-"):
            out.append(line)  # "Passes:", "Pass Pipelines:"
            entry_indent = None
            continue
        m = ENTRY.match(line)
        if m and (entry_indent is None or indent <= entry_indent):
            entry_indent = indent
            keep = is_ism(m.group(2))
        if keep:
            out.append(line)
    print("\n".join(out))


if __name__ == "__main__":
    main()
