"""The tutorials of python/tutorials (docs/guide) run as written: each
one's CPU part (build, compile to PTX, the float64 interpreter against NumPy)
everywhere, and its GPU part (CUDA tensors, checked against PyTorch) where
torch finds a GPU; the GPU tests are skipped elsewhere."""

import importlib.util
import os

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TUTORIALS = os.path.join(ROOT, "python", "tutorials")
NAMES = ["01_first_kernel", "02_matmul", "03_pytorch_autotune",
         "04_coschedule", "05_attention", "06_fp8", "07_llama_decode"]


def load(name):
    spec = importlib.util.spec_from_file_location(
        f"tutorial_{name}", os.path.join(TUTORIALS, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_tutorial_is_tested_and_has_a_page():
    scripts = sorted(f[:-3] for f in os.listdir(TUTORIALS)
                     if f.endswith(".py") and f[0].isdigit())
    assert scripts == NAMES
    pages = sorted(os.listdir(os.path.join(ROOT, "docs", "guide")))
    for name in NAMES:
        page = name[:2] + "-"
        assert any(p.startswith(page) for p in pages), name


def test_first_kernel_cpu():
    out = load("01_first_kernel").cpu()
    assert ".entry vector_add" in out["ptx"]
    assert out["softmax_error"] < 1e-3


def test_matmul_cpu_uses_the_tensor_cores():
    out = load("02_matmul").cpu()
    assert "wgmma.mma_async" in out["hopper"]
    assert "mma.sync" in out["ampere"]
    assert out["info"]["threads"] == 384     # 8 consumer warps + a producer
    assert out["error"] < 1e-2


def test_pytorch_autotune_cpu_compiles_every_candidate():
    tutorial = load("03_pytorch_autotune")
    sizes = tutorial.cpu()
    assert list(sizes) == tutorial.CONFIGS
    for config, info in sizes.items():
        # num_warps consumer warps and a producer warpgroup
        assert info["threads"] == 32 * config.kwargs["num_warps"] + 128
        assert 0 < info["shared_memory_bytes"] <= 232448


def test_coschedule_cpu_fuses_the_pair():
    out = load("04_coschedule").cpu()
    assert "ism.kernel @matmul__rmsnorm" in out["ir"]
    assert out["ir"].count("#ism.partition<") >= 2
    assert max(out["errors"]) < 1e-2


def test_attention_cpu_matches_numpy():
    out = load("05_attention").cpu()
    assert "wgmma.mma_async" in out["ptx"]
    for err_o, err_lse in out["errors"].values():
        assert err_o < 2e-2 and err_lse < 1e-4


def test_fp8_cpu_quantizes_and_multiplies_on_8_bit_tensor_cores():
    out = load("06_fp8").cpu()
    assert "e4m3x2" in out["ptx"]
    # e4m3's rounding of both operands: a few percent, not more.
    assert 0.005 < out["error"] < 0.06


def test_llama_decode_cpu_steps_match_numpy():
    out = load("07_llama_decode").cpu()
    assert len(out["fused"]) == 1 and out["fused"][0].startswith("embed__")
    assert out["error"] < 1e-2
    assert 0 <= out["token"] < 1024


def gpu_or_skip():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    return torch


@pytest.mark.parametrize("name", NAMES)
def test_tutorial_gpu(name):
    torch = gpu_or_skip()
    tutorial = load(name)
    if name == "04_coschedule" and \
            torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("the tutorial times the wgmma GEMM's pair (sm_90a)")
    tutorial.gpu()
