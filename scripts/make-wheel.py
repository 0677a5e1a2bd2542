#!/usr/bin/env python3
"""Assembles a wheel from a built package directory (scripts/build-wheel.sh).

A wheel is a zip of the package (ism/...) and its dist-info (METADATA, WHEEL,
RECORD): name, version, summary and dependencies come from pyproject.toml's
[project] table, the tag and Requires-Python from the command line. The
archive is reproducible (sorted entries, fixed timestamps, deflate level 9).

  make-wheel.py --pyproject pyproject.toml --package build-wheel/python_packages/ism
                --tag cp311-cp311-linux_x86_64 --out dist
                [--exclude GLOB]... [--extra FILE]... [--requires-python SPEC]
"""

import argparse
import base64
import fnmatch
import hashlib
import os
import re
import sys
import zipfile

try:
    import tomllib
except ImportError:  # Python < 3.11
    try:
        import tomli as tomllib
    except ImportError:
        sys.exit("make-wheel: needs Python >= 3.11 (tomllib) or tomli")

# Reproducible entries: 1980-01-01, the earliest date a zip can hold.
EPOCH = (1980, 1, 1, 0, 0, 0)


def normalize(name):
    """The distribution name as wheel file names spell it (PEP 427/503)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def metadata(project, root, requires_python):
    lines = ["Metadata-Version: 2.1",
             "Name: " + project["name"],
             "Version: " + project["version"]]
    if "description" in project:
        lines.append("Summary: " + project["description"])
    if requires_python or "requires-python" in project:
        lines.append("Requires-Python: " +
                     (requires_python or project["requires-python"]))
    for dep in project.get("dependencies", []):
        lines.append("Requires-Dist: " + dep)
    for extra, deps in sorted(project.get("optional-dependencies",
                                          {}).items()):
        lines.append("Provides-Extra: " + extra)
        for dep in deps:
            marker = 'extra == "%s"' % extra
            if ";" in dep:
                dep, cond = dep.split(";", 1)
                marker = "(%s) and %s" % (cond.strip(), marker)
            lines.append("Requires-Dist: %s; %s" % (dep.strip(), marker))
    readme = project.get("readme")
    body = ""
    if isinstance(readme, str) and readme.endswith(".md"):
        with open(os.path.join(root, readme), encoding="utf-8") as f:
            body = f.read()
        lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + body


def record_hash(data):
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pyproject", required=True)
    ap.add_argument("--package", required=True,
                    help="the package directory; its name is the import name")
    ap.add_argument("--tag", required=True,
                    help="python-abi-platform, e.g. cp312-abi3-linux_x86_64")
    ap.add_argument("--out", required=True)
    ap.add_argument("--exclude", action="append", default=[],
                    help="file name glob to leave out of the package")
    ap.add_argument("--extra", action="append", default=[],
                    help="a file added to the package directory")
    ap.add_argument("--requires-python", default=None)
    args = ap.parse_args()

    with open(args.pyproject, "rb") as f:
        project = tomllib.load(f)["project"]
    root = os.path.dirname(os.path.abspath(args.pyproject))
    name, version = normalize(project["name"]), project["version"]
    package = os.path.abspath(args.package)
    pkg_name = os.path.basename(package)

    files = {}  # archive name -> path
    for dirpath, dirnames, filenames in os.walk(package):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for fn in filenames:
            if fn.endswith((".pyc", ".pyo")) or any(
                    fnmatch.fnmatch(fn, g) for g in args.exclude):
                continue
            path = os.path.join(dirpath, fn)
            rel = os.path.relpath(path, os.path.dirname(package))
            files[rel.replace(os.sep, "/")] = path
    for path in args.extra:
        files[pkg_name + "/" + os.path.basename(path)] = path
    if not any(n.endswith(".so") for n in files):
        sys.exit("make-wheel: no extension module in " + package)

    dist_info = "%s-%s.dist-info" % (name, version)
    generated = {
        dist_info + "/METADATA":
            metadata(project, root, args.requires_python).encode(),
        dist_info + "/WHEEL": (
            "Wheel-Version: 1.0\n"
            "Generator: ism scripts/make-wheel.py\n"
            "Root-Is-Purelib: false\n"
            "Tag: %s\n" % args.tag).encode(),
    }

    os.makedirs(args.out, exist_ok=True)
    wheel = os.path.join(args.out, "%s-%s-%s.whl" % (name, version, args.tag))
    record = []
    tmp = wheel + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED,
                         compresslevel=9) as zf:
        def add(arcname, data, executable=False):
            info = zipfile.ZipInfo(arcname, date_time=EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o100755 if executable else 0o100644) << 16
            zf.writestr(info, data, compresslevel=9)
            record.append("%s,%s,%d" % (arcname, record_hash(data), len(data)))

        for arcname in sorted(files):
            with open(files[arcname], "rb") as f:
                data = f.read()
            add(arcname, data, executable=arcname.endswith(".so"))
        for arcname in sorted(generated):
            add(arcname, generated[arcname])
        record.append(dist_info + "/RECORD,,")
        info = zipfile.ZipInfo(dist_info + "/RECORD", date_time=EPOCH)
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o100644 << 16
        zf.writestr(info, "\n".join(record) + "\n", compresslevel=9)
    os.replace(tmp, wheel)
    size = os.path.getsize(wheel)
    print("make-wheel: %s (%.1f MiB)" % (wheel, size / 2**20))


if __name__ == "__main__":
    main()
