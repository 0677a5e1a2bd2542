"""bench/decode_layer.py's module (a Llama decoder layer's decode step as one
ordered region, assembled from the examples' kernels) in the reference
interpreter against a float64 NumPy layer at a small configuration: the
output row, and the caches' row pos (RoPE'd k, v) with every other row
untouched; then the same module at another position."""

import os
import sys

import numpy as np
import pytest

import ism
from conftest import ROOT
from test_grouped_gemm import bf16
from test_decode_rope_append import as_float, rope, tables
from test_decode_gqa_attention import attention

sys.path.insert(0, os.path.join(ROOT, "bench"))
import decode_layer  # noqa: E402

EPS = 1e-5


def rounded(a):
    return bf16(a)[1]


def norm(x, w):
    return x / np.sqrt((x * x).mean() + EPS) * w


def reference(x, wn1, wq, wk, wv, wo, wn2, wg, wu, wd, cos, sin, pos, kc, vc,
              scale):
    """float64, rounding to bf16 where the kernels store bf16."""
    hq, hkv = wq.shape[0] // 64, wk.shape[0] // 64
    h = norm(x[0], wn1)
    q = rounded(wq @ h).reshape(hq, 64)
    k = rounded(wk @ h).reshape(hkv, 64)
    v = rounded(wv @ h).reshape(hkv, 64)
    q = rounded(rope(q, cos[pos], sin[pos]))
    kc, vc = kc.copy(), vc.copy()
    kc[:, pos] = rounded(rope(k, cos[pos], sin[pos]))
    vc[:, pos] = v
    o = rounded(attention(q, kc, vc, pos, scale))
    x1 = rounded(wo @ o.reshape(-1) + x[0])
    h2 = norm(x1, wn2)
    g, u = wg @ h2, wu @ h2
    a = rounded(g / (1 + np.exp(-g)) * u)
    return wd @ a + x1, kc, vc


def test_layer_matches_numpy():
    rng = np.random.default_rng(11)
    hdim, hkv, ffn, ctx = 256, 2, 600, 100
    m = ism.Module.parse(decode_layer.layer_module())

    def w(rows, cols):
        return bf16(rng.standard_normal((rows, cols)) / np.sqrt(cols))
    x, x64 = bf16(rng.standard_normal((1, hdim)))
    wn1, wn164 = bf16(1 + 0.1 * rng.standard_normal(hdim))
    wn2, wn264 = bf16(1 + 0.1 * rng.standard_normal(hdim))
    (wq, wq64), (wk, wk64), (wv, wv64) = (w(hdim, hdim), w(hkv * 64, hdim),
                                          w(hkv * 64, hdim))
    wo, wo64 = w(hdim, hdim)
    (wg, wg64), (wu, wu64), (wd, wd64) = (w(ffn, hdim), w(ffn, hdim),
                                          w(hdim, ffn))
    cos, sin = tables(ctx)
    kc, kc64 = bf16(rng.standard_normal((hkv, ctx, 64)))
    vc, vc64 = bf16(rng.standard_normal((hkv, ctx, 64)))
    scale = 0.125
    for pos in (37, 0, ctx - 1):
        y = np.full((1, hdim), 0x7FC0, np.uint16)
        ism.interpret(m, "main", x, wn1, wq, wk, wv, wo, wn2, wg, wu, wd, cos,
                      sin, np.array([pos], np.int32), kc, vc, y,
                      np.float32(EPS), np.float32(scale))
        ref, kc64, vc64 = reference(x64, wn164, wq64, wk64, wv64, wo64, wn264,
                                    wg64, wu64, wd64, cos, sin, pos, kc64,
                                    vc64, scale)
        np.testing.assert_allclose(as_float(y)[0], ref, rtol=3e-2,
                                   atol=3e-2 * np.abs(ref).max())
        np.testing.assert_allclose(as_float(kc), kc64, rtol=1e-2, atol=1e-2)
        np.testing.assert_array_equal(as_float(vc), vc64)
        kc64 = as_float(kc)


def test_the_layer_is_one_ordered_region_of_ten_launches():
    text = decode_layer.layer_module()
    m = ism.Module.parse(text)
    assert "ism.coschedule ordered" in str(m)
    assert text.count("ism.launch @") == 10
    ptx = ism.to_ptx(m, chip="sm_90a")
    assert ptx.count(".entry ") == 1
    assert (".entry proj__proj__proj__rope__rope__copy_row__decode__o_proj__"
            "gate_up__down") in ptx


def test_missing_kernel_is_named():
    with pytest.raises(ValueError, match="has no kernel nope"):
        decode_layer.kernels(os.path.join(ROOT, "examples", "decode_mlp.mlir"),
                             ["gate_up", "nope"])
