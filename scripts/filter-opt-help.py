#!/usr/bin/env python3
"""Filters `ism-opt --help` (stdin) for the docs. ism-opt links LLVM and
registers every upstream MLIR pass, so its --help lists several hundred
passes and LLVM's global options for every backend; the page keeps:

- the overview and usage lines and the section headings;
- in the list of passes and pass pipelines ("Compiler passes to run"),
  ism's own (names starting with `ism` or containing `-ism`), with their
  options;
- among the other options, MLIR's driver options (`--mlir-*` and those of
  `mlir-opt`'s main, MLIR_DRIVER below) and --help/--version.

Every kept line is as ism-opt prints it.

    build/bin/ism-opt --help | python3 scripts/filter-opt-help.py"""

import re
import sys

ENTRY = re.compile(r"^(\s+)--?([A-Za-z0-9_.-]+)")
# The options MlirOptMain registers besides the --mlir-* ones.
MLIR_DRIVER = {
    "allow-unregistered-dialect", "dump-pass-pipeline", "emit-bytecode",
    "emit-bytecode-version", "elide-resource-data-from-bytecode",
    "irdl-file", "list-passes", "load-dialect-plugin", "load-pass-plugin",
    "log-actions-to", "log-mlir-actions-filter", "no-implicit-module",
    "o", "output-split-marker", "pass-pipeline", "profile-actions-to",
    "run-reproducer", "show-dialects", "split-input-file",
    "verify-diagnostics", "verify-each", "verify-roundtrip",
    "help", "help-list", "version",
}


def is_ism(name):
    return name.startswith("ism") or "-ism" in name


def is_driver(name):
    return name.startswith("mlir-") or name in MLIR_DRIVER


def main():
    out = []
    in_list = False      # inside "Compiler passes to run"
    list_indent = 0
    entry_indent = None  # indentation of the current option entry
    keep = True
    for line in sys.stdin.read().splitlines():
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if in_list and stripped and indent <= list_indent:
            in_list = False
            entry_indent = None
        if stripped.startswith("Compiler passes to run"):
            in_list, list_indent, entry_indent = True, indent, None
            out.append(line)
            continue
        if not stripped or (stripped.endswith(":")
                            and not stripped.startswith("-")):
            # blank lines and headings ("General options:", "Passes:")
            out.append(line)
            entry_indent = None
            keep = True
            continue
        m = ENTRY.match(line)
        if m and (entry_indent is None or indent <= entry_indent):
            entry_indent = indent
            name = m.group(2)
            keep = is_ism(name) if in_list else is_driver(name)
        elif entry_indent is None:
            keep = True  # text before any option: OVERVIEW, USAGE
        if keep:
            out.append(line)
    # Option categories ("Polly Options:") left without options go, with
    # their descriptions; so do runs of blank lines.
    blocks, block = [], []
    for line in out:
        if line.endswith(":") and not line.startswith(" ") and block:
            blocks.append(block)
            block = []
        block.append(line)
    blocks.append(block)
    kept = [b for i, b in enumerate(blocks)
            if i == 0 or b[0] == "OPTIONS:"
            or any(ENTRY.match(line) for line in b[1:])]
    text = "\n".join(line for b in kept for line in b)
    print(re.sub(r"\n{3,}", "\n\n", text).strip())


if __name__ == "__main__":
    main()
