"""8-bit floats (f8E4M3FN, f8E5M2) in the runner: buffers of their bit
patterns, the reference interpreter's FP8 GEMM (bench/fp8_gemm.py's
program) against a float64 product of independently decoded inputs, and the
checks on what arrays such buffers take."""

import importlib.util
import os

import numpy as np
import pytest

import ism

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def load_fp8_gemm():
    spec = importlib.util.spec_from_file_location(
        "fp8_gemm", os.path.join(ROOT, "bench", "fp8_gemm.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def decode(bits, exponent_bits, mantissa_bits, fn):
    """The values of 8-bit float bit patterns (uint8), by the formula:
    bias 2^(e-1) - 1, subnormals at exponent 0. `fn`: e4m3fn's encoding
    (no infinities; only S.1111.111 is NaN), else IEEE-like (e5m2)."""
    bits = bits.astype(np.int64)
    sign = np.where(bits >> 7, -1.0, 1.0)
    e = (bits >> mantissa_bits) & ((1 << exponent_bits) - 1)
    m = bits & ((1 << mantissa_bits) - 1)
    bias = (1 << (exponent_bits - 1)) - 1
    normal = (1 + m / 2.0 ** mantissa_bits) * 2.0 ** (e - bias)
    subnormal = m / 2.0 ** mantissa_bits * 2.0 ** (1 - bias)
    value = sign * np.where(e == 0, subnormal, normal)
    top = (1 << exponent_bits) - 1
    if fn:
        value = np.where((e == top) & (m == (1 << mantissa_bits) - 1),
                         np.nan, value)
    else:
        value = np.where(e == top, np.where(m == 0, sign * np.inf, np.nan),
                         value)
    return value


def random_bits(rng, shape, exponent_bits, mantissa_bits):
    """Random finite bit patterns, and not too large (exponent below the
    bias + 4), so that the products' sums stay well inside f32."""
    bits = rng.integers(0, 256, size=shape, dtype=np.uint8)
    e = (bits >> mantissa_bits) & ((1 << exponent_bits) - 1)
    bias = (1 << (exponent_bits - 1)) - 1
    keep = e < bias + 4
    # Clear the top exponent bit where the exponent is too large.
    return np.where(keep, bits, bits & ~np.uint8(1 << (6))).astype(np.uint8)


def test_decoder_matches_known_values():
    e4m3 = decode(np.array([0x00, 0x01, 0x08, 0x38, 0x7e, 0x7f, 0xb8],
                           np.uint8), 4, 3, True)
    assert e4m3[:5].tolist() == [0.0, 2.0 ** -9, 2.0 ** -6, 1.0, 448.0]
    assert np.isnan(e4m3[5]) and e4m3[6] == -1.0
    e5m2 = decode(np.array([0x01, 0x3c, 0x7b, 0x7c], np.uint8), 5, 2, False)
    assert e5m2.tolist() == [2.0 ** -16, 1.0, 57344.0, np.inf]


@pytest.mark.parametrize("a,b", [("e4m3", "e4m3"), ("e4m3", "e5m2"),
                                 ("e5m2", "e5m2")])
def test_interpreted_fp8_gemm_matches_float64(a, b):
    fp8 = load_fp8_gemm()
    m = ism.Module.parse(fp8.program(a=a, b=b, out="f32"))
    fmt = {"e4m3": (4, 3, True), "e5m2": (5, 2, False)}
    rng = np.random.default_rng(7)
    M, N, K = 70, 50, 200  # partial tiles in every dimension
    A = random_bits(rng, (M, K), *fmt[a][:2])
    B = random_bits(rng, (N, K), *fmt[b][:2])
    C = np.full((M, N), np.nan, np.float32)
    sa, sb = np.array([0.5], np.float32), np.array([3.0], np.float32)
    ism.interpret(m, "main", A, B, C, sa, sb)
    ref = 1.5 * (decode(A, *fmt[a]) @ decode(B, *fmt[b]).T)
    assert np.isfinite(ref).all() and np.abs(ref).max() > 1
    np.testing.assert_allclose(C, ref, rtol=1e-6, atol=1e-6 * np.abs(ref).max())


def test_interpreted_rowwise_scaled_gemm():
    """scales="row": C[m, n] = sa[m] * sb[n] * (A x B^T)[m, n]."""
    fp8 = load_fp8_gemm()
    m = ism.Module.parse(fp8.program(out="f32", bn=256, scales="row"))
    rng = np.random.default_rng(11)
    M, N, K = 130, 300, 256
    A = random_bits(rng, (M, K), 4, 3)
    B = random_bits(rng, (N, K), 4, 3)
    C = np.full((M, N), np.nan, np.float32)
    sa = rng.uniform(0.5, 2, M).astype(np.float32)
    sb = rng.uniform(0.5, 2, N).astype(np.float32)
    ism.interpret(m, "main", A, B, C, sa, sb)
    ref = (decode(A, 4, 3, True) @ decode(B, 4, 3, True).T) * \
        sa.astype(np.float64)[:, None] * sb.astype(np.float64)[None, :]
    np.testing.assert_allclose(C, ref, rtol=1e-6, atol=1e-6 * np.abs(ref).max())
    with pytest.raises(ism.RunError, match="the scales hold 129 and 300 "
                       "elements for 130 rows of A and 300 of B"):
        ism.interpret(m, "main", A, B, C, sa[:129].copy(), sb)


def test_interpreted_gemm_with_an_e4m3_output_rounds_and_saturates():
    fp8 = load_fp8_gemm()
    m = ism.Module.parse(fp8.program(out="f8E4M3FN"))
    rng = np.random.default_rng(3)
    M, N, K = 70, 50, 256
    A = random_bits(rng, (M, K), 4, 3)
    B = random_bits(rng, (N, K), 4, 3)
    C = np.full((M, N), 0x7F, np.uint8)             # NaN bits
    sa, sb = np.array([2.0], np.float32), np.array([1.0], np.float32)
    ism.interpret(m, "main", A, B, C, sa, sb)
    exact = 2.0 * (decode(A, 4, 3, True) @ decode(B, 4, 3, True).T)
    # e4m3's grid: 3 mantissa bits, subnormals 2^-9 apart, saturated at 448.
    a = np.minimum(np.abs(exact), 448.0)
    ulp = 2.0 ** (np.floor(np.log2(np.maximum(a, 2.0 ** -6))) - 3)
    ref = np.sign(exact) * np.minimum(np.round(a / ulp) * ulp, 448.0)
    assert (np.abs(exact) > 448).any()              # some saturate
    np.testing.assert_array_equal(decode(C, 4, 3, True), ref)


def test_interpreted_block_scaled_gemm():
    """scales="block": C[m, n] = sum over K blocks kb of
    SA[m, kb] * SB[n / 128, kb] * (A x B^T restricted to kb)[m, n]."""
    fp8 = load_fp8_gemm()
    m = ism.Module.parse(fp8.program(out="f32", scales="block"))
    rng = np.random.default_rng(13)
    M, N, K = 150, 200, 300                        # 3 K blocks, the last 44
    A = random_bits(rng, (M, K), 4, 3)
    B = random_bits(rng, (N, K), 4, 3)
    C = np.full((M, N), np.nan, np.float32)
    sa = rng.uniform(0.5, 2, (M, 3)).astype(np.float32)
    sb = rng.uniform(0.5, 2, (2, 3)).astype(np.float32)
    ism.interpret(m, "main", A, B, C, sa, sb)
    a64, b64 = decode(A, 4, 3, True), decode(B, 4, 3, True)
    ref = np.zeros((M, N))
    for kb in range(3):
        ks = slice(128 * kb, min(K, 128 * (kb + 1)))
        part = a64[:, ks] @ b64[:, ks].T
        scale_b = np.repeat(sb[:, kb].astype(np.float64), 128)[:N]
        ref += part * sa[:, kb].astype(np.float64)[:, None] * scale_b[None, :]
    np.testing.assert_allclose(C, ref, rtol=1e-6, atol=1e-6 * np.abs(ref).max())
    with pytest.raises(ism.RunError, match="the scales are 150x2 and 2x3; "
                       "A's need 150x3"):
        ism.interpret(m, "main", A, B, C, sa[:, :2].copy(), sb)


def test_block_scaled_gemm_waits_for_each_step_and_scales_it():
    fp8 = load_fp8_gemm()
    ptx = ism.to_ptx(ism.Module.parse(fp8.program(scales="block")),
                     chip="sm_90a")
    assert "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3" in ptx
    assert "wgmma.wait_group.sync.aligned 0" in ptx


def test_fp8_buffers_take_bit_patterns_not_floats():
    fp8 = load_fp8_gemm()
    m = ism.Module.parse(fp8.program(out="f32"))
    A = np.zeros((4, 8), np.float32)  # not 8-bit
    B = np.zeros((4, 8), np.uint8)
    C = np.zeros((4, 4), np.float32)
    s = np.ones(1, np.float32)
    with pytest.raises(TypeError, match="float8_e4m3fn or uint8"):
        ism.interpret(m, "main", A, B, C, s, s)
