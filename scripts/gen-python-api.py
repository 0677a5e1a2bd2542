#!/usr/bin/env python3
"""Writes the Python API reference (Markdown) of the `ism` package to stdout,
from its docstrings: every name of `ism.__all__`, grouped into functions,
classes (with their public methods and properties), exceptions and
constants, each with its signature and docstring; then the public functions
and classes of the `ism.models` modules (MODELS).

    PYTHONPATH=build/python_packages python3 scripts/gen-python-api.py > api.md

Imports `ism` only (no GPU, no torch). scripts/docs.sh runs it for the docs
site (docs/reference/generated/python-api.md)."""

import inspect
import re
import sys

import ism

ROLE = re.compile(r":(?:class|func|meth|attr|mod|data|exc):`~?([^`]+)`")


def text(doc):
    """A docstring as Markdown: Sphinx roles become code spans, the
    double-backquoted literals single ones, indented blocks stay code."""
    doc = inspect.cleandoc(doc or "")
    doc = ROLE.sub(r"`\1`", doc)
    doc = doc.replace("``", "`")
    # Keep the docstring's line structure: Markdown would run short lines
    # such as "a -- b" lists together; indented examples are code already
    # (a blank line before them is needed).
    out, prev_blank, in_code = [], True, False
    for line in doc.splitlines():
        indented = line.startswith("    ")
        if indented and not in_code and not prev_blank:
            out.append("")
        if indented:
            in_code = True
        elif line.strip():
            in_code = False
        out.append(line)
        prev_blank = not line.strip()
    return "\n".join(out)


def signature(name, obj):
    try:
        sig = str(inspect.signature(obj))
    except (TypeError, ValueError):
        # nanobind functions carry their signature in __doc__'s first line
        first = (getattr(obj, "__doc__", "") or "").split("\n", 1)[0]
        sig = first[first.index("("):] if first.startswith(
            getattr(obj, "__name__", name) + "(") else "(...)"
    return f"{name}{sig}"


def members(cls):
    """Public methods and properties, inherited ones from the package's own
    base classes included (the builders share theirs)."""
    seen = {}
    for base in reversed(cls.__mro__):
        if base.__module__.split(".")[0] == "ism":
            seen.update(vars(base))
    for name, value in sorted(seen.items()):
        if name.startswith("_") and name not in ("__call__", "__getitem__"):
            continue
        if isinstance(value, property):
            yield name, value, "property"
        elif isinstance(value, (staticmethod, classmethod)):
            yield name, value.__func__, "method"
        elif inspect.isfunction(value):
            yield name, value, "method"


def write_class(w, qualified, n, cls):
    """A class's section: its constructor, docstring, methods and
    properties."""
    w(f"### `{qualified}`\n\n")
    if "__init__" in vars(cls) and inspect.isfunction(cls.__init__):
        w(f"```python\n{signature(n, cls)}\n```\n\n")
    w(text(cls.__doc__) + "\n\n")
    for m, value, kind in members(cls):
        if kind == "property":
            w(f"#### `{n}.{m}` (property)\n\n")
        else:
            w(f"#### `{n}.{m}`\n\n```python\n{signature(m, value)}\n"
              f"```\n\n")
        w(text(value.__doc__) + "\n\n")


def main():
    names = sorted(ism.__all__, key=str.lower)
    objs = {n: getattr(ism, n) for n in names}
    exceptions = [n for n in names if inspect.isclass(objs[n])
                  and issubclass(objs[n], BaseException)]
    classes = [n for n in names if inspect.isclass(objs[n])
               and n not in exceptions]
    functions = [n for n in names if callable(objs[n])
                 and not inspect.isclass(objs[n])]
    constants = [n for n in names if n not in exceptions + classes + functions]

    w = sys.stdout.write
    w("# Python API\n\n")
    w("Generated from the docstrings of the `ism` package "
      "(`scripts/gen-python-api.py`), for every name in `ism.__all__` and "
      "the `ism.models` modules. "
      "How the pieces fit together: [ism from Python](../../python.md).\n\n")
    w("## Package\n\n" + text(ism.__doc__) + "\n\n")

    w("## Functions\n\n")
    for n in functions:
        w(f"### `ism.{n}`\n\n```python\n{signature(n, objs[n])}\n```\n\n")
        w(text(objs[n].__doc__) + "\n\n")

    w("## Classes\n\n")
    for n in classes:
        write_class(w, f"ism.{n}", n, objs[n])

    w("## Exceptions\n\n")
    w("| exception | base classes | raised for |\n| --- | --- | --- |\n")
    for n in exceptions:
        bases = ", ".join(f"`{b.__name__}`" for b in objs[n].__bases__)
        doc = " ".join(text(objs[n].__doc__).split()) or ""
        w(f"| `ism.{n}` | {bases} | {doc.replace('|', '/')} |\n")
    w("\n")

    w("## Constants\n\n")
    for n in constants:
        w(f"### `ism.{n}`\n\n```python\n{n} = {objs[n]!r}\n```\n\n")

    for module in MODELS:
        write_module(w, module)


# Subpackages documented after the package's own names: their public
# functions and classes (those defined in the module, not imported).
MODELS = ("ism.models.llama", "ism.models.decode_modules")


def write_module(w, name):
    import importlib
    module = importlib.import_module(name)
    w(f"## `{name}`\n\n" + text(module.__doc__) + "\n\n")
    for n, obj in sorted(vars(module).items(), key=lambda kv: kv[0].lower()):
        if n.startswith("_") or getattr(obj, "__module__", None) != name:
            continue
        if inspect.isclass(obj):
            write_class(w, f"{name}.{n}", n, obj)
        elif inspect.isfunction(obj):
            w(f"### `{name}.{n}`\n\n```python\n{signature(n, obj)}\n"
              f"```\n\n" + text(obj.__doc__) + "\n\n")


if __name__ == "__main__":
    main()
