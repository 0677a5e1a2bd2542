"""scripts/make-wheel.py, the wheel assembler of scripts/build-wheel.sh,
checked on a stand-in package (building the real wheels takes minutes and is
not part of the test suite): the files, METADATA from pyproject.toml, the tag,
RECORD's hashes, and that pip installs the result."""

import base64
import hashlib
import os
import subprocess
import sys
import zipfile

import pytest

from conftest import ROOT

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = pytest.importorskip("tomli")


def make_wheel(tmp_path, *extra_args):
    pkg = tmp_path / "src" / "ism"
    (pkg / "__pycache__").mkdir(parents=True)
    (pkg / "__pycache__" / "ir.cpython-311.pyc").write_bytes(b"")
    (pkg / "__init__.py").write_text("ANSWER = 42\n")
    (pkg / "_config.py").write_text('MLIR_DYLIB = ""\n')
    (pkg / "_ism.cpython-311-x86_64-linux-gnu.so").write_bytes(b"left out")
    ext = tmp_path / "_ism.abi3.so"
    ext.write_bytes(b"\x7fELF stand-in")
    out = tmp_path / "dist"
    subprocess.run(
        [sys.executable, os.path.join(ROOT, "scripts", "make-wheel.py"),
         "--pyproject", os.path.join(ROOT, "pyproject.toml"),
         "--package", str(pkg), "--exclude", "_ism.*so", "--extra", str(ext),
         "--out", str(out), *extra_args],
        check=True, capture_output=True, text=True)
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        version = tomllib.load(f)["project"]["version"]
    return out, version


def test_wheel_contents_metadata_and_record(tmp_path):
    out, version = make_wheel(tmp_path, "--tag", "cp312-abi3-linux_x86_64",
                              "--requires-python", ">=3.12")
    wheel = out / f"ism-{version}-cp312-abi3-linux_x86_64.whl"
    info = f"ism-{version}.dist-info"
    with zipfile.ZipFile(wheel) as zf:
        assert sorted(zf.namelist()) == sorted([
            "ism/__init__.py", "ism/_config.py", "ism/_ism.abi3.so",
            f"{info}/METADATA", f"{info}/WHEEL", f"{info}/RECORD"])
        assert zf.getinfo("ism/_ism.abi3.so").external_attr >> 16 == 0o100755
        meta = zf.read(f"{info}/METADATA").decode()
        assert "Name: ism\n" in meta and f"Version: {version}\n" in meta
        assert "Requires-Python: >=3.12\n" in meta
        assert "Requires-Dist: numpy\n" in meta
        assert 'Requires-Dist: torch; extra == "torch"\n' in meta
        assert "Tag: cp312-abi3-linux_x86_64\n" in zf.read(f"{info}/WHEEL").decode()
        record = zf.read(f"{info}/RECORD").decode().splitlines()
        assert f"{info}/RECORD,," in record
        for line in record:
            name, digest, size = line.rsplit(",", 2)
            if name.endswith("/RECORD"):
                continue
            data = zf.read(name)
            expect = base64.urlsafe_b64encode(
                hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert digest == "sha256=" + expect and int(size) == len(data)


def test_pip_installs_it(tmp_path):
    if subprocess.run([sys.executable, "-m", "pip", "--version"],
                      capture_output=True).returncode != 0:
        pytest.skip("no pip")
    out, version = make_wheel(tmp_path, "--tag", "py3-none-any")
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-index",
         "--no-deps", "--disable-pip-version-check", "--target", str(site),
         str(out / f"ism-{version}-py3-none-any.whl")],
        check=True, capture_output=True, text=True)
    assert (site / "ism" / "_ism.abi3.so").read_bytes() == b"\x7fELF stand-in"
    assert (site / "ism" / "__init__.py").read_text() == "ANSWER = 42\n"
