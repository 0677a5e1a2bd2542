"""Triton baselines for bench/bench.py, written after the Triton tutorials.

Each `run_*` function takes the same tensors as the ism kernel (and writes
the same output), so bench.py times all implementations on one set of
buffers.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _add_kernel(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(z_ptr + offs, x + y, mask=mask)


def run_vector_add(x, y, z):
    n = x.numel()
    _add_kernel[(triton.cdiv(n, 1024),)](x, y, z, n, BLOCK=1024)


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask,
                other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty),
             mask=mask)


def run_softmax(x, y):
    rows, cols = x.shape
    _softmax_kernel[(rows,)](x, y, x.stride(0), cols,
                             BLOCK=triton.next_power_of_2(cols), num_warps=8)


@triton.jit
def _layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, stride, n_cols, eps,
                      BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask,
                other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask).to(tl.float32)
    y = xc * rstd * w + b
    tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty),
             mask=mask)


def run_layernorm(x, w, b, y, eps):
    rows, cols = x.shape
    _layernorm_kernel[(rows,)](x, w, b, y, x.stride(0), cols, eps,
                               BLOCK=triton.next_power_of_2(cols),
                               num_warps=8)


@triton.jit
def _rmsnorm_kernel(x_ptr, w_ptr, y_ptr, stride, n_cols, eps,
                    BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask,
                other=0.0).to(tl.float32)
    rrms = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
    tl.store(y_ptr + row * stride + cols,
             (x * rrms * w).to(y_ptr.dtype.element_ty), mask=mask)


def run_rmsnorm(x, w, y, eps):
    rows, cols = x.shape
    _rmsnorm_kernel[(rows,)](x, w, y, x.stride(0), cols, eps,
                             BLOCK=triton.next_power_of_2(cols), num_warps=8)


@triton.jit
def _rope_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, heads,
                 HEADS: tl.constexpr, HALF: tl.constexpr):
    tok = tl.program_id(0)
    h = tl.arange(0, HEADS)[:, None]
    d = tl.arange(0, HALF)[None, :]
    mask = h < heads
    base = tok * heads * 2 * HALF + h * 2 * HALF + d
    x1 = tl.load(x_ptr + base, mask=mask).to(tl.float32)
    x2 = tl.load(x_ptr + base + HALF, mask=mask).to(tl.float32)
    c = tl.load(cos_ptr + tok * HALF + d)
    s = tl.load(sin_ptr + tok * HALF + d)
    ty = out_ptr.dtype.element_ty
    tl.store(out_ptr + base, (x1 * c - x2 * s).to(ty), mask=mask)
    tl.store(out_ptr + base + HALF, (x2 * c + x1 * s).to(ty), mask=mask)


def run_rope(x, cos, sin, out):
    tokens, heads, dim = x.shape
    _rope_kernel[(tokens,)](x, cos, sin, out, heads,
                            HEADS=triton.next_power_of_2(heads),
                            HALF=dim // 2, num_warps=4)


def rope_torch(x, cos, sin, out):
    """The PyTorch baseline of RoPE (rotate-half), writing into `out`."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half].float(), x[..., half:].float()
    c, s = cos[:, None, :], sin[:, None, :]
    out[..., :half] = x1 * c - x2 * s
    out[..., half:] = x2 * c + x1 * s


@triton.jit
def _rope_inplace_kernel(t_ptr, cos_ptr, sin_ptr, stride_s, stride_b,
                         stride_h, cos_stride, heads,
                         HALF: tl.constexpr, BLOCK_H: tl.constexpr,
                         BLOCK_D: tl.constexpr, BACKWARD: tl.constexpr):
    """TritonRoPE-style RoPE (rotate-half), in place on t (seq, batch,
    heads, head_dim): one program per (token, batch) reads the x1 and x2
    halves of all its heads (heads padded to BLOCK_H and masked) and the
    token's cos/sin row; BACKWARD rotates by -theta (sin negated)."""
    s = tl.program_id(0)
    b = tl.program_id(1)
    h = tl.arange(0, BLOCK_H)[:, None]
    d = tl.arange(0, BLOCK_D)[None, :]
    mask = (h < heads) & (d < HALF)
    ptr = t_ptr + s * stride_s + b * stride_b + h * stride_h + d
    x1 = tl.load(ptr, mask=mask).to(tl.float32)
    x2 = tl.load(ptr + HALF, mask=mask).to(tl.float32)
    c = tl.load(cos_ptr + s * cos_stride + d, mask=d < HALF)
    sn = tl.load(sin_ptr + s * cos_stride + d, mask=d < HALF)
    if BACKWARD:
        sn = -sn
    ty = t_ptr.dtype.element_ty
    tl.store(ptr, (x1 * c - x2 * sn).to(ty), mask=mask)
    tl.store(ptr + HALF, (x2 * c + x1 * sn).to(ty), mask=mask)


def rope_inplace_triton(t, cos, sin, backward=False, num_warps=4):
    """Rotates t (seq, batch, heads, head_dim; last dim contiguous) in
    place by cos/sin (max_seq, rot_dim/2) fp32 (or (max_seq, 1, 1,
    rot_dim/2)); the channels past rot_dim are left alone."""
    seq, batch, heads, dim = t.shape
    cos = cos.reshape(cos.shape[0], -1)
    sin = sin.reshape(sin.shape[0], -1)
    half = cos.shape[1]
    assert t.stride(3) == 1 and cos.stride(1) == 1 and sin.stride(1) == 1
    assert cos.stride(0) == sin.stride(0) and 2 * half <= dim
    assert cos.shape[0] >= seq
    if t.numel() == 0:
        return t
    _rope_inplace_kernel[(seq, batch)](
        t, cos, sin, t.stride(0), t.stride(1), t.stride(2), cos.stride(0),
        heads, HALF=half, BLOCK_H=triton.next_power_of_2(heads),
        BLOCK_D=triton.next_power_of_2(half), BACKWARD=backward,
        num_warps=num_warps)
    return t


class TritonRoPE(torch.autograd.Function):
    """RoPE with the Triton kernel, in place: forward rotates t and returns
    it; backward rotates the incoming gradient by -theta in place."""

    @staticmethod
    def forward(ctx, t, cos, sin):
        rope_inplace_triton(t, cos, sin)
        ctx.mark_dirty(t)
        ctx.save_for_backward(cos, sin)
        return t

    @staticmethod
    def backward(ctx, grad):
        cos, sin = ctx.saved_tensors
        if not grad.is_contiguous():   # e.g. the expanded grad of a sum
            grad = grad.contiguous()
        rope_inplace_triton(grad, cos, sin, backward=True)
        return grad, None, None


__all__ = ["run_vector_add", "run_softmax", "run_layernorm", "run_rmsnorm",
           "run_rope", "rope_torch", "rope_inplace_triton", "TritonRoPE",
           "torch"]


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs, stride_kn, stride_vn,
                    start_m, lo, hi, seq, qk_scale,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    MASKED: tl.constexpr, CAUSAL: tl.constexpr):
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    k_ptrs += lo * stride_kn
    v_ptrs += lo * stride_vn
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + offs_n
        if MASKED:
            k = tl.load(k_ptrs, mask=cols[None, :] < seq, other=0.0)
        else:
            k = tl.load(k_ptrs)
        qk = tl.dot(q, k)
        if MASKED:
            keep = cols[None, :] < seq
            if CAUSAL:
                keep = keep & (offs_m[:, None] >= cols[None, :])
            qk = tl.where(keep, qk * qk_scale, -1.0e6)
        else:
            qk = qk * qk_scale
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        qk -= m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        if MASKED:
            v = tl.load(v_ptrs, mask=cols[:, None] < seq, other=0.0)
        else:
            v = tl.load(v_ptrs)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
        k_ptrs += BLOCK_N * stride_kn
        v_ptrs += BLOCK_N * stride_vn
    return acc, l_i, m_i


_ATTN_CONFIGS = [
    triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_stages=s, num_warps=w)
    for bm in (64, 128) for bn in (64, 128) for s in (2, 3, 4)
    for w in (4, 8)]


@triton.autotune(configs=_ATTN_CONFIGS, key=["seq", "HEAD_DIM", "CAUSAL"])
@triton.jit
def _attn_fwd(Q, K, V, O, LSE, sm_scale, seq,
              stride_qh, stride_qm, stride_kh, stride_kn, stride_vh,
              stride_vn, stride_oh, stride_om,
              HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """The structure of Triton's fused-attention tutorial (forward): one
    program per BLOCK_M queries of one (batch x head), an online softmax in
    base 2 over key blocks; blocks wholly below the diagonal run unmasked,
    the diagonal (causal) and the sequence's tail masked."""
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    offs_n = tl.arange(0, BLOCK_N)
    q = tl.load(Q + bh * stride_qh + offs_m[:, None] * stride_qm
                + offs_d[None, :], mask=offs_m[:, None] < seq, other=0.0)
    k_ptrs = K + bh * stride_kh + offs_n[None, :] * stride_kn \
        + offs_d[:, None]
    v_ptrs = V + bh * stride_vh + offs_n[:, None] * stride_vn \
        + offs_d[None, :]
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    qk_scale = sm_scale * 1.44269504
    if CAUSAL:
        end = tl.minimum((start_m + 1) * BLOCK_M, seq)
        full = (start_m * BLOCK_M) // BLOCK_N * BLOCK_N
    else:
        end = seq
        full = seq // BLOCK_N * BLOCK_N
    acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs,
                                    stride_kn, stride_vn, start_m, 0, full,
                                    seq, qk_scale, BLOCK_M, BLOCK_N, False,
                                    CAUSAL)
    acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, k_ptrs, v_ptrs,
                                    stride_kn, stride_vn, start_m, full, end,
                                    seq, qk_scale, BLOCK_M, BLOCK_N, True,
                                    CAUSAL)
    acc = acc / l_i[:, None]
    lse = (m_i + tl.math.log2(l_i)) * 0.69314718056
    tl.store(LSE + bh * seq + offs_m, lse, mask=offs_m < seq)
    tl.store(O + bh * stride_oh + offs_m[:, None] * stride_om
             + offs_d[None, :], acc.to(O.dtype.element_ty),
             mask=offs_m[:, None] < seq)


def attention_triton(q, k, v, o, lse, sm_scale, causal):
    """q, k, v, o: (batch * heads, seq, head_dim), last dim contiguous;
    lse: (batch * heads, seq) fp32."""
    bh, seq, dim = q.shape

    def grid(meta):
        return (triton.cdiv(seq, meta["BLOCK_M"]), bh)
    _attn_fwd[grid](q, k, v, o, lse, sm_scale, seq,
                    q.stride(0), q.stride(1), k.stride(0), k.stride(1),
                    v.stride(0), v.stride(1), o.stride(0), o.stride(1),
                    HEAD_DIM=dim, CAUSAL=causal)
    return o
