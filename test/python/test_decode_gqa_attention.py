"""examples/decode_gqa_attention.mlir (grouped-query split-KV decode
attention over the first pos + 1 positions of the caches, pos read from
device memory) in the reference interpreter against a float64 NumPy
softmax attention: several positions (one key, a partial block, several
chunks, the whole cache) with the same compiled module, query heads
sharing KV heads, keys past pos never read (they hold NaN), and wrong shapes
as one-line errors; then one decode step chained after
examples/decode_rope_append.mlir on the caches it wrote."""

import os

import numpy as np
import pytest

import ism
from test_grouped_gemm import bf16
from test_decode_rope_append import as_float, rope, tables

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "decode_gqa_attention.mlir")
ROPE = os.path.join(ROOT, "examples", "decode_rope_append.mlir")
NAN = 0x7FC0


def attention(q, k, v, pos, scale):
    """q: Hq x 64, k and v: Hkv x ctx x 64, float64."""
    g = q.shape[0] // k.shape[0]
    out = np.empty_like(q)
    for h in range(q.shape[0]):
        keys, values = k[h // g, :pos + 1], v[h // g, :pos + 1]
        s = scale * keys @ q[h]
        p = np.exp(s - s.max())
        out[h] = p @ values / p.sum()
    return out


def run(m, q, kc, vc, pos, splits, scale):
    hq = q.shape[0]
    o = np.full((hq, 64), NAN, np.uint16)
    mp = np.zeros((hq, splits), np.float32)
    lp = np.zeros((hq, splits), np.float32)
    op = np.zeros((hq, splits, 64), np.float32)
    ism.interpret(m, "main", q, kc, vc, np.array([pos], np.int32), o, mp, lp,
                  op, np.float32(scale))
    return as_float(o)


@pytest.mark.parametrize("hq,hkv,ctx,splits", [(32, 8, 300, 4), (6, 2, 70, 3),
                                               (4, 4, 130, 1)])
def test_matches_numpy_at_each_position(hq, hkv, ctx, splits):
    rng = np.random.default_rng(hq + ctx)
    m = ism.Module.parse_file(EXAMPLE)
    q, q64 = bf16(rng.standard_normal((hq, 1, 64)))
    kc, k64 = bf16(rng.standard_normal((hkv, ctx, 64)))
    vc, v64 = bf16(rng.standard_normal((hkv, ctx, 64)))
    scale = 64 ** -0.5
    for pos in sorted({0, 5, 63, 64, ctx // 2, ctx - 1}):
        # Positions past pos hold NaN: a read of one would show.
        kpad, vpad = kc.copy(), vc.copy()
        kpad[:, pos + 1:], vpad[:, pos + 1:] = NAN, NAN
        got = run(m, q, kpad, vpad, pos, splits, scale)
        ref = attention(q64[:, 0], k64, v64, pos, scale)
        np.testing.assert_allclose(got, ref, rtol=2e-2, atol=2e-2)


def test_one_step_after_rope_and_append():
    rng = np.random.default_rng(7)
    hq, hkv, ctx, pos = 8, 2, 50, 17
    cos, sin = tables(ctx)
    q, q64 = bf16(rng.standard_normal((hq, 64)))
    k, k64 = bf16(rng.standard_normal((hkv, 64)))
    v, v64 = bf16(rng.standard_normal((hkv, 64)))
    kc, kc64 = bf16(rng.standard_normal((hkv, ctx, 64)))
    vc, vc64 = bf16(rng.standard_normal((hkv, ctx, 64)))
    qo = np.full((hq, 1, 64), NAN, np.uint16)
    p = np.array([pos], np.int32)
    ism.interpret(ism.Module.parse_file(ROPE), "main", q, k, v, cos, sin, p,
                  qo, kc, vc)
    got = run(ism.Module.parse_file(EXAMPLE), qo, kc, vc, pos, 2, 0.125)
    kc64[:, pos] = rope(k64, cos[pos], sin[pos])
    vc64[:, pos] = v64
    ref = attention(rope(q64, cos[pos], sin[pos]), kc64, vc64, pos, 0.125)
    np.testing.assert_allclose(got, ref, rtol=3e-2, atol=3e-2)


def test_wrong_shapes_are_one_line_errors():
    m = ism.Module.parse_file(EXAMPLE)
    q = np.zeros((6, 1, 64), np.uint16)
    cache = np.zeros((4, 10, 64), np.uint16)
    o = np.zeros((6, 64), np.uint16)
    ws = (np.zeros((6, 2), np.float32), np.zeros((6, 2), np.float32),
          np.zeros((6, 2, 64), np.float32))
    pos = np.zeros(1, np.int32)
    with pytest.raises(ism.RunError, match="6 query heads and 4 KV heads: the "
                       "query heads must be a multiple of the KV heads"):
        ism.interpret(m, "main", q, cache, cache.copy(), pos, o, *ws,
                      np.float32(1))
    with pytest.raises(ism.RunError, match="Q is 6x1x128: this decode takes "
                       "one token's heads of 64"):
        ism.interpret(m, "main", np.zeros((6, 1, 128), np.uint16), cache,
                      cache.copy(), pos, o, *ws, np.float32(1))
    with pytest.raises(ism.RunError, match="pos has 3 elements"):
        ism.interpret(m, "main", q, cache[:3], cache[:3].copy(),
                      np.zeros(3, np.int32), o, *ws, np.float32(1))
