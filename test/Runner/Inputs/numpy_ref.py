"""Checks ism-run --interpret outputs (saved .npy) against NumPy.

usage: numpy_ref.py OP RTOL IN.npy... OUT.npy [--eps E]
(for the attention ops E is the softmax scale)
Prints "numpy_ref OP: ok" or the worst error and exits non-zero.
"""
import sys

import numpy as np


def rope(x, cos, sin):
    x1, x2 = x[..., :64], x[..., 64:]
    c, s = cos[:, None, :], sin[:, None, :]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1)


def layernorm(x, w, b, eps):
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def rmsnorm(x, w, eps):
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps) * w


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def attention(q, k, v, scale, causal):
    """O and the log-sum-exp of each score row, per (batch x head)."""
    s = q @ k.transpose(0, 2, 1) * scale
    if causal:
        s = s + np.triu(np.full(s.shape[1:], -np.inf), 1)
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(s - m)
    l = e.sum(axis=-1, keepdims=True)
    return e / l @ v, (m + np.log(l))[..., 0]


def decode_attention(q, k, v, scale):
    """One query row per (batch x head): (bh, d) against (bh, seq, d)."""
    return attention(q[:, None, :], k, v, scale, False)[0][:, 0, :]


def e4m3(v):
    """float64 rounded to f8E4M3FN: round to nearest even on its grid (3
    mantissa bits; subnormals 2^-9 apart), saturated at +-448."""
    a = np.minimum(np.abs(v), 448.0)
    e = np.floor(np.log2(np.maximum(a, 2.0 ** -6)))
    ulp = 2.0 ** (e - 3)
    return np.sign(v) * np.minimum(np.round(a / ulp) * ulp, 448.0)


def fp8_inverse_scale(x):
    return 448.0 / np.maximum(np.abs(x).max(axis=1, keepdims=True), 1e-12)


OPS = {
    "vector_add": lambda x, y, eps: x + y,
    "softmax": lambda x, eps: softmax(x),
    "layernorm": lambda x, w, b, eps: layernorm(x, w, b, eps),
    "rmsnorm": lambda x, w, eps: rmsnorm(x, w, eps),
    "rope": lambda x, c, s, eps: rope(x, c, s),
    "matmul": lambda a, b, eps: a @ b,
    "attention": lambda q, k, v, scale: attention(q, k, v, scale, False)[0],
    "decode_attention": lambda q, k, v, scale: decode_attention(q, k, v,
                                                                scale),
    "attention_lse": lambda q, k, v, scale: attention(q, k, v, scale,
                                                      False)[1],
    "attention_causal": lambda q, k, v, scale: attention(q, k, v, scale,
                                                         True)[0],
    "attention_causal_lse": lambda q, k, v, scale: attention(q, k, v, scale,
                                                             True)[1],
    "fp8_quantize": lambda x, eps: e4m3(x * fp8_inverse_scale(x)),
    "fp8_scale": lambda x, eps: 1.0 / fp8_inverse_scale(x)[:, 0],
    # x quantized per row (its scale kept in f32), times W^T, scaled back.
    "fp8_linear": lambda x, w, sw, eps: (
        (e4m3(x * fp8_inverse_scale(x)) @ w.T)
        * (1.0 / fp8_inverse_scale(x)).astype(np.float32) * sw[None, :]),
}


def main(argv):
    eps = 1e-5
    if "--eps" in argv:
        at = argv.index("--eps")
        eps = float(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    op, rtol, *files = argv
    arrays = [np.load(f).astype(np.float64) for f in files]
    expected = OPS[op](*arrays[:-1], eps)
    got = arrays[-1]
    if got.shape != expected.shape:
        print(f"numpy_ref {op}: shape {got.shape} != {expected.shape}")
        return 1
    err = np.abs(got - expected)
    bound = float(rtol) * (np.abs(expected) + np.abs(expected).max())
    bad = ~(err <= bound)
    if bad.any():
        i = tuple(int(k) for k in np.unravel_index(np.argmax(bad), bad.shape))
        print(f"numpy_ref {op}: {bad.sum()} mismatches; first at {i}: "
              f"got {got[i]}, expected {expected[i]}")
        return 1
    print(f"numpy_ref {op}: ok ({got.size} elements, max abs error "
          f"{err.max():.3g})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
