"""Pass pipelines, per-stage IR, PTX, and the run entry point."""

import os

import pytest

import ism
from conftest import ROOT

GPU_MODULE = """
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @fill(%out: memref<?xf32>, %v: f32) kernel
        attributes {known_block_size = array<i32: 128, 1, 1>} {
      %tid = gpu.thread_id x
      memref.store %v, %out[%tid] : memref<?xf32>
      gpu.return
    }
  }
}
"""


def softmax():
    return ism.Module.parse_file(os.path.join(ROOT, "examples", "softmax.mlir"))


def test_compile_runs_a_pipeline_on_a_copy():
    m = softmax()
    before = str(m)
    out = ism.apply_pipeline(m, "builtin.module(ism-combine,canonicalize,cse)")
    assert str(m) == before
    assert "ism.kernel @softmax" in str(out)
    assert str(m.apply_pipeline("canonicalize")) == str(ism.apply_pipeline(m, "canonicalize"))


def test_bad_pipelines():
    with pytest.raises(ism.CompileError, match="does not refer to a registered pass"):
        ism.apply_pipeline(softmax(), "no-such-pass")
    assert ism.has_pass("canonicalize") and ism.has_pass("ism-combine")
    assert not ism.has_pass("no-such-pass")


def test_stages():
    st = ism.stages(softmax(), "ism-combine,canonicalize,cse")
    assert [name for name, _ in st] == ["ism-combine", "canonicalize", "cse"]
    assert all("ism.kernel @softmax" in ir for _, ir in st)


def test_gpu_module_to_ptx():
    m = ism.Module.parse(GPU_MODULE)
    compiled = ism.compile_ptx(m, chip="sm_90a")
    assert ".entry fill" in compiled.ptx
    assert ".target sm_90a" in compiled.ptx
    assert compiled.kernels["fill"].num_threads == 128
    assert ".entry" in m.to_ptx(chip="sm_80")
    # A module that already holds gpu.binary ops gives their PTX back.
    binary = ism.apply_pipeline(m, "nvvm-attach-target{chip=sm_90a},"
                            "gpu.module(convert-gpu-to-nvvm,reconcile-unrealized-casts),"
                            "gpu-module-to-binary{format=isa}")
    assert ".entry fill" in ism.to_ptx(binary)


def test_tile_module_to_ptx():
    m = softmax()
    if ism.has_pass(ism.PTX_PIPELINE):
        assert ".entry" in m.to_ptx(chip="sm_90a")
    else:
        with pytest.raises(ism.CompileError, match="ism-to-ptx"):
            m.to_ptx()


def test_run_checks_arguments():
    np = pytest.importorskip("numpy")
    m = softmax()
    x = np.zeros((4, 4096), np.float16)
    y = np.zeros((4, 4096), np.float16)
    with pytest.raises(TypeError, match="takes 2 arguments"):
        ism.run(m, "main", x)
    with pytest.raises(TypeError, match="dtype float32"):
        ism.run(m, "main", x, y.astype(np.float32))
    with pytest.raises(ValueError, match="1 dimensions"):
        ism.run(m, "main", x, np.zeros(4, np.float16))
    with pytest.raises(ValueError, match="no host function @nope"):
        ism.run(m, "nope", x, y)
    assert ism.runtime_available()
