"""examples/grouped_gemm.mlir in the reference interpreter: a mixture of
experts' grouped GEMM whose routing (tokens per expert) is a device array,
against float64 per-expert products, with empty experts, experts of more
than one 128-row tile and of fewer rows than one."""

import os
import sys

import numpy as np
import pytest

import ism
from test_fp8 import decode, random_bits

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import grouped_gemm  # noqa: E402


def bf16(a):
    """Values rounded to bf16: (bit patterns as uint16, values as float64)."""
    u = a.astype(np.float32).view(np.uint32)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return u, (u.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def module():
    return ism.Module.parse_file(os.path.join(ROOT, "examples",
                                              "grouped_gemm.mlir"))


@pytest.mark.parametrize("counts", [[130, 0, 7, 256, 1], [0, 0, 3], [128]])
def test_grouped_gemm_matches_per_expert_products(counts):
    counts = np.array(counts, np.int32)
    rng = np.random.default_rng(len(counts))
    E, N, K = len(counts), 200, 128
    M = int(counts.sum())
    x, x64 = bf16(rng.standard_normal((M, K)))
    w, w64 = bf16(rng.standard_normal((E * N, K)))
    y = np.full((M, N), 0x7FC0, np.uint16)              # NaN bits
    ism.interpret(module(), "main", x, w, counts, y)
    got = (y.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    ref = np.zeros((M, N))
    starts = np.concatenate([[0], np.cumsum(counts)])
    for e in range(E):
        rows = slice(starts[e], starts[e + 1])
        ref[rows] = x64[rows] @ w64[e * N:(e + 1) * N].T
    np.testing.assert_allclose(got, ref, rtol=1e-2,
                               atol=1e-2 * np.abs(ref).max())


def test_grouped_gemm_checks_the_stacked_weights():
    x = np.zeros((4, 64), np.uint16)
    w = np.zeros((300, 64), np.uint16)                  # not 2 x 128 rows
    y = np.zeros((4, 128), np.uint16)
    with pytest.raises(ism.RunError, match="W has 300 rows; 2 experts of "
                       "N = 128 .y's columns. need 256"):
        ism.interpret(module(), "main", x, w, np.array([3, 1], np.int32), y)


def fp8_module():
    """The example with e4m3 x and W (bench/grouped_gemm.py's variant)."""
    return ism.Module.parse(grouped_gemm.fp8_text())


def test_fp8_grouped_gemm_runs_on_8_bit_tensor_cores():
    m = fp8_module()
    assert "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3" in \
        ism.to_ptx(m, chip="sm_90a")
    counts = np.array([200, 0, 5, 130], np.int32)
    rng = np.random.default_rng(5)
    E, N, K = len(counts), 136, 256
    M = int(counts.sum())
    x = random_bits(rng, (M, K), 4, 3)
    w = random_bits(rng, (E * N, K), 4, 3)
    y = np.full((M, N), 0x7FC0, np.uint16)
    ism.interpret(m, "main", x, w, counts, y)
    got = (y.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    x64, w64 = decode(x, 4, 3, True), decode(w, 4, 3, True)
    starts = np.concatenate([[0], np.cumsum(counts)])
    ref = np.zeros((M, N))
    for e in range(E):
        rows = slice(starts[e], starts[e + 1])
        ref[rows] = x64[rows] @ w64[e * N:(e + 1) * N].T
    np.testing.assert_allclose(got, ref, rtol=1e-2,
                               atol=1e-2 * np.abs(ref).max())
