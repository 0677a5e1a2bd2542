"""Triton versions of bench/streaming.py's kernels: the same algorithm, chunk
and loop structure as the ism kernels, written the natural Triton way (a
`range` loop over the row in CHUNK-wide pieces, masks on the last one,
Triton's default num_stages unless given), and the read kernel of the
roofline. `runner()` returns a callable that launches one on a case's
tensors (streaming.shapes() order)."""
import triton
import triton.language as tl


@triton.jit
def _online_max_sum(base, n, CHUNK: tl.constexpr):
    cols = tl.arange(0, CHUNK)
    m = tl.full([CHUNK], -1e30, tl.float32)
    s = tl.zeros([CHUNK], dtype=tl.float32)
    for off in range(0, n, CHUNK):
        c = off + cols
        v = tl.load(base + c, mask=c < n, other=-float("inf")).to(tl.float32)
        e = tl.exp(-tl.abs(v - m))
        s = tl.where(v > m, s * e + 1.0, s + e)
        m = tl.maximum(m, v)
    return m, s


@triton.jit
def lse_kernel(x_ptr, out_ptr, stride, n, CHUNK: tl.constexpr):
    row = tl.program_id(0)
    m, s = _online_max_sum(x_ptr + row * stride, n, CHUNK)
    big = tl.max(m, 0)
    total = tl.sum(s * tl.exp(m - big), 0)
    tl.store(out_ptr + row, big + tl.log(total))


@triton.jit
def softmax_kernel(x_ptr, y_ptr, stride, n, CHUNK: tl.constexpr):
    row = tl.program_id(0)
    base = x_ptr + row * stride
    m, s = _online_max_sum(base, n, CHUNK)
    big = tl.max(m, 0)
    inv = 1.0 / tl.sum(s * tl.exp(m - big), 0)
    cols = tl.arange(0, CHUNK)
    for off in range(0, n, CHUNK):
        c = off + cols
        mask = c < n
        v = tl.load(base + c, mask=mask, other=-float("inf")).to(tl.float32)
        p = tl.exp(v - big) * inv
        tl.store(y_ptr + row * stride + c, p.to(y_ptr.dtype.element_ty),
                 mask=mask)


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, stride, n, eps,
                     CHUNK: tl.constexpr):
    row = tl.program_id(0)
    base = x_ptr + row * stride
    cols = tl.arange(0, CHUNK)
    acc = tl.zeros([CHUNK], dtype=tl.float32)
    acc2 = tl.zeros([CHUNK], dtype=tl.float32)
    for off in range(0, n, CHUNK):
        c = off + cols
        v = tl.load(base + c, mask=c < n, other=0.0).to(tl.float32)
        acc += v
        acc2 += v * v
    mean = tl.sum(acc, 0) / n
    var = tl.sum(acc2, 0) / n - mean * mean
    rstd = tl.rsqrt(var + eps)
    for off in range(0, n, CHUNK):
        c = off + cols
        mask = c < n
        v = tl.load(base + c, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + c, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + c, mask=mask, other=0.0).to(tl.float32)
        y = (v - mean) * rstd * w + b
        tl.store(y_ptr + row * stride + c, y.to(y_ptr.dtype.element_ty),
                 mask=mask)


@triton.jit
def colsum_kernel(x_ptr, out_ptr, R, C, stride, BR: tl.constexpr,
                  BC: tl.constexpr):
    cols = tl.program_id(0) * BC + tl.arange(0, BC)
    rows = tl.arange(0, BR)
    acc = tl.zeros([BR, BC], dtype=tl.float32)
    for r in range(0, R, BR):
        rr = r + rows
        mask = (rr[:, None] < R) & (cols[None, :] < C)
        t = tl.load(x_ptr + rr[:, None] * stride + cols[None, :], mask=mask,
                    other=0.0)
        acc += t.to(tl.float32)
    tl.store(out_ptr + cols, tl.sum(acc, 0), mask=cols < C)


@triton.jit
def gemv_kernel(w_ptr, x_ptr, y_ptr, N, K, stride, BN: tl.constexpr,
                BK: tl.constexpr):
    rows = tl.program_id(0) * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros([BN, BK], dtype=tl.float32)
    for k in range(0, K, BK):
        kk = k + ks
        w = tl.load(w_ptr + rows[:, None] * stride + kk[None, :],
                    mask=(rows[:, None] < N) & (kk[None, :] < K), other=0.0)
        x = tl.load(x_ptr + kk, mask=kk < K, other=0.0)
        acc += w.to(tl.float32) * x.to(tl.float32)[None, :]
    tl.store(y_ptr + rows, tl.sum(acc, 1), mask=rows < N)


@triton.jit
def read_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Reads BLOCK int32 words a program; one XOR of them written, so that
    nothing is dropped. The roofline's read-only kernel."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(out_ptr + tl.program_id(0), tl.xor_sum(v, 0))


READ_BLOCK = 4096


def read_programs(n):
    return triton.cdiv(n, READ_BLOCK)


def run_read(words, partial):
    read_kernel[(read_programs(words.numel()),)](
        words, partial, words.numel(), BLOCK=READ_BLOCK, num_warps=4)


def _tile(kernel, chunk, block):
    import streaming
    return streaming.tile_shape(kernel, chunk, block)


def runner(kernel, ins, cfg, eps, stages=None):
    """A callable launching `kernel`'s Triton version on `ins` (streaming
    .shapes() order) with cfg's chunk, warps and block."""
    chunk, warps = cfg["chunk"], cfg["warps"]
    opts = dict(num_warps=warps)
    if stages is not None:
        opts["num_stages"] = stages
    if kernel in ("lse", "softmax", "layernorm"):
        x = ins[0]
        rows, n = x.shape
        if kernel == "lse":
            out = ins[1]
            return lambda: lse_kernel[(rows,)](x, out, x.stride(0), n,
                                               CHUNK=chunk, **opts)
        if kernel == "softmax":
            y = ins[1]
            assert y.stride(0) == x.stride(0)
            return lambda: softmax_kernel[(rows,)](x, y, x.stride(0), n,
                                                   CHUNK=chunk, **opts)
        w, b, y = ins[1:]
        assert y.stride(0) == x.stride(0)
        return lambda: layernorm_kernel[(rows,)](
            x, w, b, y, x.stride(0), n, eps, CHUNK=chunk, **opts)
    if kernel == "colsum":
        x, out = ins
        rows, cols = x.shape
        br, bc = _tile("colsum", chunk, cfg["block"])
        return lambda: colsum_kernel[(triton.cdiv(cols, bc),)](
            x, out, rows, cols, x.stride(0), BR=br, BC=bc, **opts)
    w, x, y = ins
    n, k = w.shape
    bn, bk = _tile("gemv", chunk, cfg["block"])
    return lambda: gemv_kernel[(triton.cdiv(n, bn),)](
        w, x, y, n, k, w.stride(0), BN=bn, BK=bk, **opts)
