"""conv2d as an implicit GEMM (ism.im2col): examples/conv2d.mlir and
bench/conv2d.py's programs in the reference interpreter against a float64
NumPy convolution (padding, stride, dilation, C not a multiple of the
64-channel block, 1x1 and 5x5 filters), their sm_90a PTX (wgmma fed by
TMA's im2col mode) and the gather they become for sm_80."""

import os
import sys

import numpy as np
import pytest

import ism

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import conv2d  # noqa: E402
from test_grouped_gemm import bf16  # noqa: E402


def reference(x, f, bias, r, s, stride, pad, dil, relu=True):
    """float64 conv2d of NHWC x and K x (R S C) f, (N P Q) x K."""
    n, h, w, c = x.shape
    k = f.shape[0]
    f = f.reshape(k, r, s, c)
    p = conv2d.out_size(h, r, stride, pad, dil)
    q = conv2d.out_size(w, s, stride, pad, dil)
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    out = np.zeros((n, p, q, k))
    for i in range(r):
        for j in range(s):
            win = xp[:, i * dil:i * dil + stride * (p - 1) + 1:stride,
                     j * dil:j * dil + stride * (q - 1) + 1:stride, :]
            out += np.einsum("npqc,kc->npqk", win, f[:, i, j, :])
    out += bias
    return (np.maximum(out, 0) if relu else out).reshape(n * p * q, k)


def run(module, shape, k, r, s, stride, pad, dil, seed=0):
    rng = np.random.default_rng(seed)
    n, h, w, c = shape
    x, x64 = bf16(rng.standard_normal(shape))
    f, f64 = bf16(rng.standard_normal((k, r * s * c)))
    bias = rng.standard_normal(k).astype(np.float32)
    p = conv2d.out_size(h, r, stride, pad, dil)
    q = conv2d.out_size(w, s, stride, pad, dil)
    y = np.full((n * p * q, k), 0x7FC0, np.uint16)          # NaN bits
    ism.interpret(module, "main", x, f, bias, y)
    got = (y.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    ref = reference(x64, f64, bias, r, s, stride, pad, dil)
    np.testing.assert_allclose(got, ref, rtol=1e-2,
                               atol=1e-2 * np.abs(ref).max())


def test_example_matches_numpy():
    m = ism.Module.parse_file(os.path.join(ROOT, "examples", "conv2d.mlir"))
    run(m, (2, 9, 7, 80), 40, 3, 3, 1, 1, 1)


@pytest.mark.parametrize("name", [c[0] for c in conv2d.CHECKS])
def test_bench_programs_match_numpy(name):
    _, kw, (n, h, w, c, k) = next(x for x in conv2d.CHECKS if x[0] == name)
    r, s = kw.get("r", 3), kw.get("s", 3)
    run(ism.Module.parse(conv2d.program(**kw)), (n, h, w, c), k, r, s,
        kw.get("stride", 1), kw.get("pad", 1), kw.get("dil", 1))


def test_example_ptx_reads_x_with_tma_im2col():
    m = ism.Module.parse_file(os.path.join(ROOT, "examples", "conv2d.mlir"))
    ptx = ism.to_ptx(m, chip="sm_90a")
    assert "cp.async.bulk.tensor.4d.shared::cluster.global.im2col" in ptx
    assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16" in ptx


def test_example_on_sm80_gathers():
    m = ism.Module.parse_file(os.path.join(ROOT, "examples", "conv2d.mlir"))
    ptx = ism.to_ptx(m, chip="sm_80")
    assert "im2col" not in ptx and "wgmma" not in ptx


def test_conv_checks_its_shapes():
    m = ism.Module.parse_file(os.path.join(ROOT, "examples", "conv2d.mlir"))
    x = np.zeros((1, 4, 4, 64), np.uint16)
    f = np.zeros((8, 64 * 8), np.uint16)                # not 3 * 3 * 64
    with pytest.raises(ism.RunError, match="the filter is 8x512; a 3x3 "
                       "filter of C = 64"):
        ism.interpret(m, "main", x, f, np.zeros(8, np.float32),
                      np.zeros((16, 8), np.uint16))
