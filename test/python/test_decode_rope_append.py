"""examples/decode_rope_append.mlir (RoPE and the KV-cache append of a decode
step at a position read from device memory) in the reference interpreter
against NumPy: q rotated, k rotated into the K cache's row pos, v copied into
the V cache's row pos, every other cache row untouched; the same module at
several positions (pos is data, not a compile-time value); a position past
the cache writes nothing; wrong shapes give the host function's one-line
errors."""

import os

import numpy as np
import pytest

import ism
from test_grouped_gemm import bf16

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "decode_rope_append.mlir")


def tables(ctx, half=32, theta=500000.0):
    inv = theta ** (-np.arange(half) / half)
    angles = np.arange(ctx)[:, None] * inv[None, :]
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def rope(x, cos, sin):
    """Rotate-half RoPE of rows x (..., 64) by cos/sin rows (32), as complex
    multiplication of (x1 + i x2) by exp(i angle)."""
    z = (x[..., :32] + 1j * x[..., 32:]) * (cos + 1j * sin)
    return np.concatenate([z.real, z.imag], axis=-1)


def as_float(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def step(hq, hkv, ctx, positions, seed=0):
    rng = np.random.default_rng(seed)
    m = ism.Module.parse_file(EXAMPLE)
    cos, sin = tables(ctx)
    kc, kc64 = bf16(rng.standard_normal((hkv, ctx, 64)))
    vc, vc64 = bf16(rng.standard_normal((hkv, ctx, 64)))
    for p in positions:
        q, q64 = bf16(rng.standard_normal((hq, 64)))
        k, k64 = bf16(rng.standard_normal((hkv, 64)))
        v, v64 = bf16(rng.standard_normal((hkv, 64)))
        qo = np.full((hq, 1, 64), 0x7FC0, np.uint16)       # NaN bits
        pos = np.array([p], np.int32)
        ism.interpret(m, "main", q, k, v, cos, sin, pos, qo, kc, vc)
        yield p, (q64, k64, v64, cos, sin), qo, (kc, kc64), (vc, vc64)


@pytest.mark.parametrize("hq,hkv,ctx", [(32, 8, 40), (4, 1, 7)])
def test_rotates_and_appends_at_each_position(hq, hkv, ctx):
    positions = [0, ctx - 1, 3 % ctx, 1]
    for p, (q64, k64, v64, cos, sin), qo, (kc, kc64), (vc, vc64) in step(
            hq, hkv, ctx, positions):
        np.testing.assert_allclose(as_float(qo)[:, 0],
                                   rope(q64, cos[p], sin[p]), rtol=1e-2,
                                   atol=1e-2)
        np.testing.assert_allclose(as_float(kc)[:, p],
                                   rope(k64, cos[p], sin[p]), rtol=1e-2,
                                   atol=1e-2)
        np.testing.assert_array_equal(as_float(vc)[:, p], v64)
        # The rows written so far hold what was written; check the others
        # against the caches as they were before this position's step.
        kc64[:, p], vc64[:, p] = as_float(kc)[:, p], v64
        np.testing.assert_array_equal(as_float(kc), kc64)
        np.testing.assert_array_equal(as_float(vc), vc64)


def test_position_past_the_cache_writes_nothing():
    for p, _, qo, (kc, kc64), (vc, vc64) in step(4, 2, 6, [6, -1]):
        np.testing.assert_array_equal(as_float(kc), kc64)
        np.testing.assert_array_equal(as_float(vc), vc64)
        np.testing.assert_array_equal(as_float(qo), 0)


def test_wrong_shapes_are_one_line_errors():
    m = ism.Module.parse_file(EXAMPLE)
    cos, sin = tables(8)
    q = np.zeros((4, 64), np.uint16)
    kv = np.zeros((2, 64), np.uint16)
    cache = np.zeros((2, 8, 64), np.uint16)
    pos = np.zeros(1, np.int32)
    qo = np.zeros((4, 1, 64), np.uint16)
    with pytest.raises(ism.RunError, match="q is 4x32, k 2x64 and v 2x64: "
                       "this step takes heads of 64"):
        ism.interpret(m, "main", np.zeros((4, 32), np.uint16), kv, kv, cos,
                      sin, pos, qo, cache, cache.copy())
    with pytest.raises(ism.RunError, match=r"cos is 7x32 and sin 8x32: each "
                       r"must be 8 \(max_ctx\) x 32"):
        ism.interpret(m, "main", q, kv, kv, cos[:7], sin, pos, qo, cache,
                      cache.copy())
    with pytest.raises(ism.RunError, match="pos has 2 elements"):
        ism.interpret(m, "main", q, kv, kv, cos, sin, np.zeros(2, np.int32),
                      qo, cache, cache.copy())
