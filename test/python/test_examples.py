"""The Python examples build IR identical, after canonicalisation, to the
.mlir examples: checked in-process and through ism-opt --canonicalize."""

import os
import shutil
import subprocess
import sys

import pytest

import ism
from conftest import BUILD, ROOT

import matmul
import softmax

EXAMPLES = [("softmax", softmax.build_softmax), ("matmul", matmul.build_matmul)]


@pytest.mark.parametrize("name,build", EXAMPLES)
def test_matches_mlir_example(name, build):
    ref = ism.Module.parse_file(os.path.join(ROOT, "examples", f"{name}.mlir"))
    assert str(ism.apply_pipeline(build(), "canonicalize")) == \
        str(ism.apply_pipeline(ref, "canonicalize"))


def ism_opt():
    path = os.path.join(BUILD, "bin", "ism-opt")
    return path if os.path.exists(path) else shutil.which("ism-opt")


@pytest.mark.parametrize("name,build", EXAMPLES)
def test_matches_through_ism_opt(name, build, tmp_path):
    tool = ism_opt()
    if tool is None:
        pytest.skip("ism-opt is not built")
    generated = tmp_path / f"{name}.mlir"
    generated.write_text(str(build()))

    def canon(path):
        return subprocess.run([tool, str(path), "--canonicalize"], check=True,
                              capture_output=True, text=True).stdout

    assert canon(generated) == canon(os.path.join(ROOT, "examples", f"{name}.mlir"))


def test_matmul_transpose_b_reads_the_weight_k_major():
    """x @ W^T: the K loop's dot takes the transposed [BLOCK_N, BLOCK_K]
    tile of W, which ism-accelerate-dot keeps on wgmma (the shared tile
    read the other way) rather than a product of its own; the grid's N is
    W's rows."""
    module = matmul.build_matmul(transpose_b=True)
    text = str(module)
    assert "ism.trans" in text and "tensor<128x64xbf16>" in text
    lowered = str(ism.apply_pipeline(
        module, "ism-assign-layouts,ism-accelerate-dot{chip=sm_90a}"))
    assert "version = 3" in lowered
    assert "order = [0, 1]" in lowered  # the transposed shared tile
    assert "ism.swap_ab" not in lowered


def test_sweep_runs():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable,
                          os.path.join(ROOT, "python", "examples", "sweep_matmul.py"),
                          "--quick"], check=True, capture_output=True, text=True,
                         env=env).stdout
    assert "128x128x64" in out and "estimate" in out
