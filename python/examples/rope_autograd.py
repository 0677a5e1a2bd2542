"""RoPE forward + backward as a ``torch.autograd.Function`` built from ism
kernels, in place, checked against PyTorch and benchmarked against PyTorch
eager and Triton.

    PYTHONPATH=build/python_packages python3 python/examples/rope_autograd.py --check
    PYTHONPATH=build/python_packages python3 python/examples/rope_autograd.py --bench --out bench-out/rope
    PYTHONPATH=build/python_packages python3 python/examples/rope_autograd.py --tune
    PYTHONPATH=build/python_packages python3 python/examples/rope_autograd.py --print-mlir

Interface (after the "TritonRoPE" autograd Functions that implement RoPE
with Triton):

    y = RoPE.apply(t, cos, sin)      # y is t, rotated in place

- ``t``: (seq, batch, heads, head_dim), bf16 / f16 / f32, the sbhd layout of
  Megatron-LM and Transformer Engine.
- ``cos``, ``sin``: (max_seq, rot_dim / 2) float32 (or (max_seq, 1, 1,
  rot_dim / 2)), the precomputed cos(m * theta_i) and sin(m * theta_i) of
  positions m = 0 .. max_seq - 1, max_seq >= seq (rows past seq are not
  read); rot_dim <= head_dim, and
  the last head_dim - rot_dim channels pass through untouched (Megatron's
  ``t_pass``), which in place costs nothing. From Megatron-style freqs of
  shape (seq, 1, 1, rot_dim) = cat(f, f):
  ``cos = freqs[..., :rot_dim // 2].cos()``, likewise sin.
- Rotate-half (GPT-NeoX / Llama) form: with x1 = t[..., :rot/2] and
  x2 = t[..., rot/2:rot],
      forward:  x1' = x1 cos - x2 sin,  x2' = x2 cos + x1 sin
  which is Megatron's ``t * cos(freqs) + rotate_half(t) * sin(freqs)`` with
  rotate_half(t) = cat(-x2, x1). The map is a rotation by +theta per
  channel pair, so its Jacobian is orthogonal and the input gradient is the
  rotation by -theta (sin negated):
      backward: g1' = g1 cos + g2 sin,  g2' = g2 cos - g1 sin
- Forward writes into ``t`` (``ctx.mark_dirty``); backward writes into the
  incoming gradient when it is contiguous (else into a contiguous copy)
  and returns it. Like every in-place backward (Unsloth's RoPE does the
  same) this assumes the caller does not reuse the gradient tensor passed
  to ``backward`` (``y.backward(g)`` overwrites ``g``: pass ``g.clone()``
  if ``g`` is needed afterwards).
- Math is in fp32, rounded once to the tensor's type.

What this follows: no single canonical "TritonRoPE" project turned up;
several public ones share one shape, and that is what this matches. A
``class TritonRoPE(torch.autograd.Function)`` whose ``forward(ctx, x, cos,
sin)`` takes x as [SEQ_LEN, BATCH_SIZE, NUM_HEADS, HEAD_DIM] and
precomputed cos/sin as [MAX_SEQ_LEN, HEAD_DIM // 2], reads a whole head_dim
at once and pads the heads to a power of two (a block size over heads,
masked); ``TritonRoPEFunc`` variants written against Transformer Engine's
``apply_rotary_pos_emb(t, freqs, tensor_format="sbhd")``, freqs of shape
(s, 1, 1, d); the rotate-half form; and a backward that is the forward with
sin negated. Those projects write ``out = torch.empty_like(x)``; this one
works in place as asked. That moves the same bytes (t read once, written
once), but allocates nothing and keeps no second buffer.

Kernels (MLIR text generated below, ``module_text``): one program per
(block of ``block_s`` tokens, block of ``block_b`` batch indices), grid
(ceil(batch / block_b), ceil(seq / block_s)): batch blocks along x, so
that consecutive programs (the GPU starts them in x order) rotate
consecutive memory of t. With tokens along x they would rotate one batch
index's tokens, a token's stride apart, and the kernel ran up to 8% slower
at every length on the H200. A sequence of
more than 65535 token blocks (the grid's y limit) takes the token-major
grid (``batch_major`` in ``config_key``). A program loads cos/sin rows
(block_s x rot/2, fp32) once, shared by its batch indices, and the x1 and
x2 halves of all heads of its tokens as separate tiles (block_s x block_b x
heads x rot/2), so every access is a contiguous run of a row and, when the
tile is inside the tensor and aligned, one 16-byte vector per thread (the
lowering's fast path). Tiles are powers of two: head counts and half-dims
that are not are split into power-of-two chunks (40 heads = 32 + 8), each
its own in-bounds tile, rather than padded and masked, so every access
stays on the vector fast path; a sequence that is not a multiple of
``block_s`` leaves only the last program on the predicated (element-wise,
bounds-checked) path. ``block_b`` is up to 4 on small tensors (while a
program stays within 8 KB: 1 for a Llama token) and up to 2 on large ones
(``auto_config``: sharing the tables is worth up to 3% there). All loads
of a program are issued before its first store (in place, the compiler
could not move a load above a store to the same buffer). Every size is
dynamic; ``head_dim=`` makes a module specialized to the head count and
head_dim instead (static inner sizes, ``memref_types``), which measured
slower on the H200.
The same module holds ``@rope_fwd`` (launched by host function ``@main``)
and ``@rope_bwd`` (host function ``@backward``).

Nothing at import time needs torch, triton or a GPU: the kernels' text and
the NumPy reference are importable on their own (test/python/
test_rope_example.py runs them in ism's CPU interpreter); torch is imported
inside the functions that use it, and ``RoPE`` is created on first access.
"""

from __future__ import annotations

import argparse
import atexit
import os
import sys
from typing import Dict, List, Optional, Sequence, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

#: Element types of ``t`` the kernels are generated for.
DTYPES = ("bf16", "f16", "f32")

# ---------------------------------------------------------------------------
# Kernel generation (plain text; no torch, no ism needed)
# ---------------------------------------------------------------------------


def pow2_chunks(n: int) -> List[Tuple[int, int]]:
    """``n`` as consecutive power-of-two pieces, largest first:
    40 -> [(0, 32), (32, 8)] (offset, width)."""
    if n <= 0:
        raise ValueError(f"cannot split {n} into power-of-two chunks")
    out, off = [], 0
    for bit in reversed(range(n.bit_length())):
        w = 1 << bit
        if n & w:
            out.append((off, w))
            off += w
    return out


def token_bytes(heads: int, half: int, dtype: str) -> int:
    """Bytes of ``t`` one token of one batch index rotates (x1 and x2)."""
    return 2 * heads * half * (4 if dtype == "f32" else 2)


def _tokens_and_warps(unit: int, min_bytes: int, per_warp: int,
                      max_warps: int) -> Tuple[int, int]:
    """(block_s, num_warps) for programs of ``unit`` bytes a token: tokens
    (a power of two, up to 16) until a program has ``min_bytes``, then a
    warp per ``per_warp`` bytes of it (a power of two, up to
    ``max_warps``)."""
    block_s = 1
    while block_s * unit < min_bytes and block_s < 16:
        block_s *= 2
    num_warps = 1
    while num_warps * per_warp < block_s * unit and num_warps < max_warps:
        num_warps *= 2
    return block_s, num_warps


def default_config(heads: int, half: int, dtype: str = "bf16",
                   min_bytes: int = 2048) -> Tuple[int, int]:
    """(block_s, num_warps) for one batch index a program: enough tokens per
    program (up to 16) that a program reads at least ``min_bytes`` of ``t``,
    and one warp per 1 KB of it, 1 to 8 warps. One Llama token (32 heads x
    128 dims) is 8 KB in bf16: one token per program and 8 warps (measured
    on the H200 at seq 512-16384: 8 warps (38 registers a thread) beat 4
    (54) by up to 4%, with the tiles of t loaded before cos/sin); 8 heads (2
    KB) take one token and 2 warps (``auto_config`` takes more on large
    tensors)."""
    return _tokens_and_warps(token_bytes(heads, half, dtype), min_bytes,
                             1024, 8)


#: Bytes of ``t`` per SM from which a tensor counts as large
#: (``auto_config``): 24.75 MiB on the H200's 132 SMs. With the batch-major
#: grid, bf16 Llama t (32 heads x 128) of batch 4 is fastest with one
#: batch index and 8 warps a program up to 1024 tokens (32 MiB) and two
#: with 16 warps from 2048, by 2-3%; 8 heads of batch 4 take two batch
#: indices and 4 warps from 4096 tokens (32 MiB), 1.5-5% ahead of four.
#: The threshold sits between them: at 32 MiB either choice is within
#: 1.5% of the best on the H200.
BATCH_BLOCK_MIN_BYTES_PER_SM = 192 * 1024


def auto_config(heads: int, half: int, dtype: str, seq: int, batch: int,
                sms: int) -> Tuple[int, int, int]:
    """(block_s, num_warps, block_b) for a (seq, batch) ``t`` on a GPU with
    ``sms`` SMs. A program handles the same tokens of ``block_b`` batch
    indices, which share their cos/sin rows: the tables are then loaded
    (and held in registers, one copy per thread's columns) once for all of
    them. ``block_b`` is the largest power of two that divides ``batch``
    (so no program takes the bounds-checked path for a partial block) and
    keeps a program's share of ``t`` within 8 KB, up to 4 batch indices;
    on a large tensor (``BATCH_BLOCK_MIN_BYTES_PER_SM``) within 32 KB, up
    to 2 (with the batch-major grid, four measured 2-5% slower than two
    on every large shape tried). Batch
    indices come before tokens (several tokens a program share nothing);
    only a program still under 2 KB takes more tokens (``default_config``),
    or, on a large tensor that cannot block the batch, under 4 KB.
    A program of several batch indices takes a warp per 2 KB on a small
    tensor, per KB on a large one, at most 16 (the best measured on the
    H200)."""
    per_token = token_bytes(heads, half, dtype)
    large = seq * batch * per_token >= BATCH_BLOCK_MIN_BYTES_PER_SM * sms
    limit, max_b = (32768, 2) if large else (8192, 4)
    block_b = 1
    while (block_b < max_b and batch % (2 * block_b) == 0
           and 2 * block_b * per_token <= limit):
        block_b *= 2
    if block_b == 1:
        # No batch indices to share the tables: on a large tensor, tokens
        # up to 4 KB a program, a warp per KB (8 heads at batch 1: 2 tokens
        # and 4 warps, 0.98-1.00x Triton at 16384-65536 tokens against
        # 0.92-0.96x for one token and 2 warps).
        block_s, num_warps = default_config(heads, half, dtype,
                                            4096 if large else 2048)
        return block_s, num_warps, 1
    block_s, num_warps = _tokens_and_warps(
        block_b * per_token, 2048, 1024 if large else 2048, 16)
    return block_s, num_warps, block_b


def memref_types(dtype: str, heads: int, half: int,
                 head_dim: Optional[int] = None) -> Tuple[str, str]:
    """The memref types of t and of cos/sin. With ``head_dim`` the kernel is
    specialized: t is memref<?x?xHEADSxHEAD_DIMxDTYPE> and the tables
    memref<?xHALFxf32>, so only the sequence and batch sizes (and the
    strides of t over them) are runtime values -- ism's counterpart of
    Triton's constexpr and 16-divisibility specialization. The launcher
    checks the static sizes. Without it every size is dynamic: one module
    for any head count and head_dim (t: memref<?x?x?x?>, tables
    memref<?x?> with >= half columns), with a longer prologue (bounds and
    alignment tests on all four dimensions: first global load at SASS
    instruction 61 against 37 specialized) -- and yet, on the H200, 0.1-2%
    faster than the specialized module, so the example runs the dynamic
    one."""
    if head_dim is None:
        return f"memref<?x?x?x?x{dtype}>", "memref<?x?xf32>"
    if head_dim < 2 * half:
        raise ValueError(f"head_dim {head_dim} is smaller than rot_dim "
                         f"{2 * half}")
    return (f"memref<?x?x{heads}x{head_dim}x{dtype}>",
            f"memref<?x{half}xf32>")


def kernel_text(name: str, dtype: str, heads: int, half: int,
                block_s: int = 1, num_warps: int = 4,
                backward: bool = False,
                head_dim: Optional[int] = None, block_b: int = 1,
                batch_major: bool = True) -> str:
    """One ``ism.kernel`` rotating t[s, b, :, :2*half] in place.

    t: (seq, batch, heads, head_dim >= 2*half); cos, sin: (rows >= seq,
    columns >= half), fp32; static or dynamic sizes as ``memref_types``
    says. Program (x, y) handles batch indices [x*block_b, x*block_b +
    block_b) of tokens [y*block_s, y*block_s + block_s) (with
    ``batch_major`` False, tokens along x and batch indices along y):
    ``block_b`` > 1 shares each cos/sin row among that many batch
    indices."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    if block_s < 1 or block_s & (block_s - 1):
        raise ValueError(f"block_s must be a power of two, got {block_s}")
    if block_b < 1 or block_b & (block_b - 1):
        raise ValueError(f"block_b must be a power of two, got {block_b}")
    mem, tab = memref_types(dtype, heads, half, head_dim)
    lines: List[str] = []
    emit = lines.append
    hchunks, dchunks = pow2_chunks(heads), pow2_chunks(half)

    def idx(v: int) -> str:
        return f"%c{v}"

    emit(f"ism.kernel @{name}(%t: {mem}, %cos: {tab}, %sin: {tab})")
    emit(f"    attributes {{num_warps = {num_warps} : i32}} {{")
    token_axis, batch_axis = ("y", "x") if batch_major else ("x", "y")
    emit(f"  %pid = ism.program_id {token_axis} : index")
    consts = {0} | {h0 for h0, _ in hchunks} | {d0 for d0, _ in dchunks} \
        | {half + d0 for d0, _ in dchunks} | ({block_s} if block_s > 1
                                              else set()) \
        | ({block_b} if block_b > 1 else set())
    for v in sorted(consts):
        emit(f"  %c{v} = arith.constant {v} : index")
    if block_b == 1:
        emit(f"  %b = ism.program_id {batch_axis} : index")
    else:
        emit(f"  %by = ism.program_id {batch_axis} : index")
        emit(f"  %b = arith.muli %by, {idx(block_b)} : index")
    if block_s == 1:
        s0 = "%pid"
    else:
        emit(f"  %s0 = arith.muli %pid, {idx(block_s)} : index")
        s0 = "%s0"
    tiles = [(i, j, h0, d0, f"{block_s}x{block_b}x{hw}x{dw}")
             for i, (h0, hw) in enumerate(hchunks)
             for j, (d0, dw) in enumerate(dchunks)]
    # Every load before any store (in place: no load may move above a store),
    # and the tiles of t (DRAM) before the cos/sin rows (shared by the batch,
    # mostly L2 hits): issued first, the long-latency reads overlap the
    # short ones (2-3% on the H200 with 8 warps).
    for i, j, h0, d0, shape in tiles:
        tt = f"tensor<{shape}x{dtype}>"
        for part, off in (("x1", d0), ("x2", half + d0)):
            emit(f"  %{part}_{i}_{j} = ism.load %t[{s0}, %b, {idx(h0)}, "
                 f"{idx(off)}] : {mem} -> {tt}")
    # cos/sin of the block's tokens, one tile per half-dim chunk, shaped
    # block_s x 1 x 1 x width to broadcast over the batch indices and
    # heads.
    for j, (d0, dw) in enumerate(dchunks):
        t2 = f"tensor<{block_s}x{dw}xf32>"
        t3 = f"tensor<{block_s}x1x{dw}xf32>"
        t4 = f"tensor<{block_s}x1x1x{dw}xf32>"
        for tbl in ("cos", "sin"):
            emit(f"  %{tbl}{j} = ism.load %{tbl}[{s0}, {idx(d0)}] : "
                 f"{tab} -> {t2}")
            emit(f"  %{tbl}{j}_3 = ism.expand_dims %{tbl}{j} axis = 1 : "
                 f"{t2} -> {t3}")
            emit(f"  %{tbl}{j}_4 = ism.expand_dims %{tbl}{j}_3 axis = 2 : "
                 f"{t3} -> {t4}")
    # cos/sin stretched over each head chunk's tile shape.
    for i, j, h0, d0, shape in tiles:
        t4 = f"tensor<{block_s}x1x1x{dchunks[j][1]}xf32>"
        emit(f"  %c_{i}_{j} = ism.broadcast %cos{j}_4 : {t4} -> "
             f"tensor<{shape}xf32>")
        emit(f"  %s_{i}_{j} = ism.broadcast %sin{j}_4 : {t4} -> "
             f"tensor<{shape}xf32>")
    # Forward (rotation by +theta):  y1 = x1 c - x2 s,  y2 = x2 c + x1 s;
    # backward (by -theta, sin negated): y1 = x1 c + x2 s,  y2 = x2 c - x1 s;
    # each as a product and an fma, y1 finished (and rounded) before y2:
    # that order keeps fewer values live (54 registers a thread for 32 x 128
    # bf16 and 4 warps, against 79 with the four products first).
    for i, j, h0, d0, shape in tiles:
        tf = f"tensor<{shape}xf32>"
        tt = f"tensor<{shape}x{dtype}>"
        v = f"{i}_{j}"
        x1, x2 = f"%x1_{v}", f"%x2_{v}"
        if dtype != "f32":
            emit(f"  %x1f_{v} = arith.extf %x1_{v} : {tt} to {tf}")
            emit(f"  %x2f_{v} = arith.extf %x2_{v} : {tt} to {tf}")
            x1, x2 = f"%x1f_{v}", f"%x2f_{v}"
        c, sn = f"%c_{v}", f"%s_{v}"
        emit(f"  %x2s_{v} = arith.mulf {x2}, {sn} : {tf}")
        if not backward:
            emit(f"  %nx2s_{v} = arith.negf %x2s_{v} : {tf}")
            emit(f"  %y1_{v} = math.fma {x1}, {c}, %nx2s_{v} : {tf}")
        else:
            emit(f"  %y1_{v} = math.fma {x1}, {c}, %x2s_{v} : {tf}")
        if dtype != "f32":
            emit(f"  %o1_{v} = arith.truncf %y1_{v} : {tf} to {tt}")
        emit(f"  %x1s_{v} = arith.mulf {x1}, {sn} : {tf}")
        if not backward:
            emit(f"  %y2_{v} = math.fma {x2}, {c}, %x1s_{v} : {tf}")
        else:
            emit(f"  %nx1s_{v} = arith.negf %x1s_{v} : {tf}")
            emit(f"  %y2_{v} = math.fma {x2}, {c}, %nx1s_{v} : {tf}")
        if dtype != "f32":
            emit(f"  %o2_{v} = arith.truncf %y2_{v} : {tf} to {tt}")
    for i, j, h0, d0, shape in tiles:
        v = f"{i}_{j}"
        tt = f"tensor<{shape}x{dtype}>"
        o1 = f"%y1_{v}" if dtype == "f32" else f"%o1_{v}"
        o2 = f"%y2_{v}" if dtype == "f32" else f"%o2_{v}"
        emit(f"  ism.store {o1}, %t[{s0}, %b, {idx(h0)}, {idx(d0)}] : "
             f"{tt} -> {mem}")
        emit(f"  ism.store {o2}, %t[{s0}, %b, {idx(h0)}, {idx(half + d0)}] : "
             f"{tt} -> {mem}")
    emit("  ism.return")
    emit("}")
    return "\n".join(lines)


def host_text(entry: str, kernel: str, block_s: int, mem: str,
              tab: str, block_b: int = 1, batch_major: bool = True) -> str:
    """Host function ``@entry(t, cos, sin)`` launching ``@kernel`` on grid
    (ceil(batch / block_b), ceil(seq / block_s)), or with
    ``batch_major`` False (ceil(seq / block_s), ceil(batch / block_b));
    ``mem``/``tab``: the types of t and of the tables
    (``memref_types``)."""
    grid = "(%gb, %gs)" if batch_major else "(%gs, %gb)"
    return "\n".join([
        f"func.func @{entry}(%t: {mem}, %cos: {tab}, %sin: {tab}) {{",
        "  %c0 = arith.constant 0 : index",
        "  %c1 = arith.constant 1 : index",
        f"  %bs = arith.constant {block_s} : index",
        f"  %bb = arith.constant {block_b} : index",
        f"  %seq = memref.dim %t, %c0 : {mem}",
        f"  %batch = memref.dim %t, %c1 : {mem}",
        "  %gs = arith.ceildivui %seq, %bs : index",
        "  %gb = arith.ceildivui %batch, %bb : index",
        f"  ism.launch @{kernel} grid{grid} (%t, %cos, %sin)",
        f"      : ({mem}, {tab}, {tab})",
        "  return",
        "}"])


def module_text(dtype: str, heads: int, half: int,
                block_s: Optional[int] = None,
                num_warps: Optional[int] = None,
                head_dim: Optional[int] = None, block_b: int = 1,
                batch_major: bool = True) -> str:
    """The whole module: ``@rope_fwd`` + ``@main`` (forward) and
    ``@rope_bwd`` + ``@backward`` (input gradient), each
    ``(t, cos, sin)``, in place on ``t``; specialized to ``head_dim``
    when it is given (see ``memref_types``); ``block_b`` batch indices a
    program and ``batch_major`` the grid's order (``kernel_text``)."""
    dbs, dnw = default_config(heads, half, dtype)
    block_s = block_s or dbs
    num_warps = num_warps or dnw
    mem, tab = memref_types(dtype, heads, half, head_dim)
    header = (f"// RoPE (rotate-half), in place: {dtype}, {heads} heads, "
              f"rot_dim {2 * half}, head_dim "
              f"{head_dim if head_dim else 'dynamic'}, {block_s} token(s) "
              f"x {block_b} batch per program, {num_warps} warps, "
              f"{'batch' if batch_major else 'token'} blocks along x.")
    return "\n\n".join([
        header,
        kernel_text("rope_fwd", dtype, heads, half, block_s, num_warps,
                    head_dim=head_dim, block_b=block_b,
                    batch_major=batch_major),
        kernel_text("rope_bwd", dtype, heads, half, block_s, num_warps,
                    backward=True, head_dim=head_dim, block_b=block_b,
                    batch_major=batch_major),
        host_text("main", "rope_fwd", block_s, mem, tab, block_b,
                  batch_major),
        host_text("backward", "rope_bwd", block_s, mem, tab,
                  block_b, batch_major)]) + "\n"


def build_module(dtype: str, heads: int, half: int,
                 block_s: Optional[int] = None,
                 num_warps: Optional[int] = None,
                 head_dim: Optional[int] = None, block_b: int = 1,
                 batch_major: bool = True):
    """``module_text`` parsed into an ``ism.Module``."""
    import ism
    return ism.Module.parse(module_text(dtype, heads, half, block_s,
                                        num_warps, head_dim, block_b,
                                        batch_major))


# ---------------------------------------------------------------------------
# NumPy reference (float64), for the CPU test
# ---------------------------------------------------------------------------


def rope_reference_np(t, cos, sin, backward: bool = False):
    """float64 RoPE of t (seq, batch, heads, head_dim) with cos/sin
    (>= seq, half): a new array. Written as complex multiplication
    (x1 + i x2) * exp(+-i theta), independently of the kernels' formula."""
    import numpy as np
    t = np.asarray(t, dtype=np.float64)
    seq, half = t.shape[0], np.shape(cos)[1]
    c = np.asarray(cos, np.float64)[:seq, None, None, :]
    s = np.asarray(sin, np.float64)[:seq, None, None, :]
    z = (t[..., :half] + 1j * t[..., half:2 * half]) * (c + (-1j if backward
                                                            else 1j) * s)
    out = t.copy()
    out[..., :half] = z.real
    out[..., half:2 * half] = z.imag
    return out


def rope_tables(max_seq: int, rot_dim: int, base: float = 10000.0):
    """NumPy cos, sin of m * base^(-2i / rot_dim) for positions m <
    max_seq and i < rot_dim / 2: (max_seq, rot_dim / 2) float32 each."""
    import numpy as np
    inv = 1.0 / base ** (np.arange(0, rot_dim, 2, dtype=np.float64) / rot_dim)
    ang = np.arange(max_seq, dtype=np.float64)[:, None] * inv[None, :]
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


# ---------------------------------------------------------------------------
# torch: the ism launches, the autograd Function, references
# ---------------------------------------------------------------------------

_TORCH_DTYPES = {"bfloat16": "bf16", "float16": "f16", "float32": "f32"}
_MODULES: Dict[tuple, object] = {}
_COMPILED: Dict[tuple, tuple] = {}


def _dtype_name(t) -> str:
    name = str(t.dtype).replace("torch.", "")
    if name not in _TORCH_DTYPES:
        raise TypeError(f"RoPE: t must be bfloat16, float16 or float32, got "
                        f"{t.dtype}")
    return _TORCH_DTYPES[name]


def torch_dtype(dtype: str):
    """The torch dtype of one of ``DTYPES`` ("bf16" -> torch.bfloat16)."""
    import torch
    return getattr(torch, {v: k for k, v in _TORCH_DTYPES.items()}[dtype])


def _table(x, seq: int, what: str):
    """cos/sin as a contiguous fp32 (rows, half) tensor."""
    import torch
    if x.dim() != 2:
        x = x.reshape(x.shape[0], -1)
    if x.dtype != torch.float32:
        raise TypeError(f"RoPE: {what} must be float32, got {x.dtype}")
    if x.shape[0] < seq:
        raise ValueError(f"RoPE: {what} has {x.shape[0]} rows, fewer than "
                         f"the sequence length {seq}")
    return x.contiguous()


def config_key(dtype: str, heads: int, half: int,
               block_s: Optional[int] = None,
               num_warps: Optional[int] = None,
               head_dim: Optional[int] = None, block_b: int = 1,
               batch_major: bool = True) -> tuple:
    """(dtype, heads, half, block_s, num_warps, head_dim, block_b,
    batch_major) with the defaults filled: ``module_text``'s arguments
    (head_dim None: dynamic sizes)."""
    dbs, dnw = default_config(heads, half, dtype)
    return (dtype, heads, half, block_s or dbs, num_warps or dnw, head_dim,
            block_b, batch_major)


#: The largest grid y (and z) a CUDA launch takes.
MAX_GRID_Y = 65535


def fits_batch_major(seq: int, block_s: int) -> bool:
    """Whether the token blocks of ``seq`` tokens fit the grid's y
    dimension, where the batch-major grid puts them."""
    return (seq + block_s - 1) // block_s <= MAX_GRID_Y


_SMS: Dict[int, int] = {}
_AUTO_KEYS: Dict[tuple, tuple] = {}


def sm_count(device) -> int:
    """The number of SMs of CUDA ``device`` (queried once)."""
    import torch
    i = torch.device(device).index
    i = torch.cuda.current_device() if i is None else i
    if i not in _SMS:
        _SMS[i] = torch.cuda.get_device_properties(i).multi_processor_count
    return _SMS[i]


def choose_key(t, half: int, block_s: Optional[int] = None,
               num_warps: Optional[int] = None,
               block_b: Optional[int] = None) -> tuple:
    """The ``config_key`` for rotating ``t``: the given configuration, or,
    when none of it is given and ``t`` is on a GPU, ``auto_config``'s
    choice for t's size (on the CPU ``default_config``, one batch index a
    program); the batch-major grid unless t has more token blocks than
    the grid's y dimension takes."""
    seq, batch, heads, _ = t.shape
    dt = _dtype_name(t)
    if (block_s is None and num_warps is None and block_b is None
            and t.device.type == "cuda"):
        # Memoized: a call's host time matters on the short tensors.
        auto = (dt, heads, half, seq, batch, t.device.index)
        key = _AUTO_KEYS.get(auto)
        if key is None:
            block_s, num_warps, block_b = auto_config(
                heads, half, dt, seq, batch, sm_count(t.device))
            key = _AUTO_KEYS[auto] = config_key(
                dt, heads, half, block_s, num_warps, None, block_b,
                fits_batch_major(seq, block_s))
        return key
    block_s = block_s or default_config(heads, half, dt)[0]
    return config_key(dt, heads, half, block_s, num_warps, None, block_b or 1,
                      fits_batch_major(seq, block_s))


def _clear_caches() -> None:
    # Frees the cached ism objects before the interpreter tears the
    # extension down (else nanobind reports them as leaked at exit).
    _COMPILED.clear()
    _MODULES.clear()


atexit.register(_clear_caches)


def _module(key: tuple):
    import ism
    if key not in _MODULES:
        _MODULES[key] = ism.Module.parse(module_text(*key))
    return _MODULES[key]


def ism_kernels(key: tuple):
    """(forward, backward): the module of ``key`` (see ``config_key``)
    compiled for its two host functions, once per process (ism caches the
    PTX on disk)."""
    import ism
    if key not in _COMPILED:
        m = _module(key)
        _COMPILED[key] = (ism.compile(m, entry="main"),
                          ism.compile(m, entry="backward"))
    return _COMPILED[key]


def _numpy_view(x):
    """A NumPy array sharing ``x``'s (CPU) memory; bf16 as uint16 bits."""
    import numpy as np
    import torch
    x = x.detach()
    if x.dtype == torch.bfloat16:
        return x.view(torch.int16).numpy().view(np.uint16)
    return x.numpy()


def rope_ism_(t, cos, sin, backward: bool = False,
              block_s: Optional[int] = None, num_warps: Optional[int] = None,
              direct: bool = False, block_b: Optional[int] = None):
    """Rotates ``t`` (seq, batch, heads, head_dim) in place by +theta
    (forward) or -theta (``backward``) with the ism kernels and returns it.

    CUDA tensors: the compiled module on torch's current stream (``direct``
    launches the kernel itself, ``k.rope_fwd[grid](...)``, instead of the
    host function). CPU tensors: the same module in ism's reference
    interpreter (slow; for tests without a GPU). ``block_s``,
    ``num_warps``, ``block_b``: a configuration (``choose_key``; by
    default chosen from t's size)."""
    if t.dim() != 4:
        raise ValueError(f"RoPE: t must be (seq, batch, heads, head_dim), "
                         f"got shape {tuple(t.shape)}")
    seq, batch, heads, dim = t.shape
    cos, sin = _table(cos, seq, "cos"), _table(sin, seq, "sin")
    half = cos.shape[1]
    if sin.shape[1] != half or 2 * half > dim or half == 0:
        raise ValueError(f"RoPE: cos/sin have {half} and {sin.shape[1]} "
                         f"columns; need the same rot_dim/2 with rot_dim <= "
                         f"head_dim ({dim})")
    if cos.device != t.device or sin.device != t.device:
        raise ValueError(f"RoPE: t is on {t.device} but cos/sin on "
                         f"{cos.device}/{sin.device}")
    if t.numel() == 0:
        return t
    # Every size dynamic: the module specialized to the head count and
    # head_dim (head_dim=dim) has a shorter prologue but ran 0.1-2% slower
    # on the H200.
    key = choose_key(t, half, block_s, num_warps, block_b)
    work = t if t.is_contiguous() else t.contiguous()
    entry = "backward" if backward else "main"
    if t.device.type == "cpu":
        import ism
        ism.interpret(_module(key), entry, _numpy_view(work),
                      _numpy_view(cos), _numpy_view(sin))
    else:
        fwd, bwd = ism_kernels(key)
        k = bwd if backward else fwd
        if direct:
            bs, bb = key[3], key[6]
            kernel = getattr(k, "rope_bwd" if backward else "rope_fwd")
            grid = ((seq + bs - 1) // bs, (batch + bb - 1) // bb)
            kernel[grid[::-1] if key[7] else grid](work, cos, sin)
        else:
            k(work, cos, sin)
    if work is not t:
        t.copy_(work)
    return t


def _make_rope_function():
    import torch

    class RoPE(torch.autograd.Function):
        """RoPE with ism kernels, in place: ``RoPE.apply(t, cos, sin)``
        rotates ``t`` and returns it; backward rotates the incoming
        gradient back in place (see the module docstring)."""

        @staticmethod
        def forward(ctx, t, cos, sin):
            rope_ism_(t, cos, sin)
            ctx.mark_dirty(t)
            ctx.save_for_backward(cos, sin)
            return t

        @staticmethod
        def backward(ctx, grad):
            cos, sin = ctx.saved_tensors
            if not grad.is_contiguous():   # e.g. the expanded grad of a sum
                grad = grad.contiguous()
            rope_ism_(grad, cos, sin, backward=True)
            return grad, None, None

    return RoPE


_LAZY = {}


def __getattr__(name):
    """``RoPE`` is made on first access, so that importing this module needs
    no torch."""
    if name == "RoPE":
        if name not in _LAZY:
            _LAZY[name] = _make_rope_function()
        return _LAZY[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def rope(t, cos, sin):
    """``RoPE.apply(t, cos, sin)``."""
    return __getattr__("RoPE").apply(t, cos, sin)


def eager_tables(cos, sin, seq: int, dtype):
    """cos/sin widened to the (seq, 1, 1, rot_dim) form that eager
    implementations (Megatron, Hugging Face) keep, cast to ``dtype``."""
    import torch
    c = _table(cos, seq, "cos")[:seq]
    s = _table(sin, seq, "sin")[:seq]
    c = torch.cat([c, c], dim=-1)[:, None, None, :].to(dtype)
    s = torch.cat([s, s], dim=-1)[:, None, None, :].to(dtype)
    return c, s


def rope_torch(t, cos_full, sin_full):
    """PyTorch eager RoPE, out of place, as Megatron's
    ``_apply_rotary_pos_emb_bshd``: t * cos + rotate_half(t) * sin on the
    first rot_dim channels, the rest passed through."""
    import torch
    rot = cos_full.shape[-1]
    x, x_pass = t[..., :rot], t[..., rot:]
    x1, x2 = torch.chunk(x, 2, dim=-1)
    out = x * cos_full + torch.cat((-x2, x1), dim=-1) * sin_full
    return torch.cat((out, x_pass), dim=-1) if x_pass.shape[-1] else out


def _triton():
    """bench/triton_kernels.py (the Triton TritonRoPE), or None."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        import triton_kernels
        return triton_kernels
    except ImportError as e:
        print(f"rope: Triton unavailable ({e}); skipping it")
        return None


def _check_long_sequence(device, gen) -> int:
    """More token blocks than the grid's y dimension takes (65535): one
    token a program over 65543 tokens runs on the token-major grid, through
    the host function and launched directly; the chosen configuration
    (16 tokens a program) on the batch-major one. Small heads keep it
    quick. Returns the number of comparisons."""
    import torch
    seq, batch, heads, dim = 65536 + 7, 2, 2, 16
    c_np, s_np = rope_tables(seq, dim)
    cos = torch.from_numpy(c_np).to(device)
    sin = torch.from_numpy(s_np).to(device)
    x = torch.randn(seq, batch, heads, dim, device=device,
                    generator=gen).to(torch.bfloat16)
    c32, s32 = eager_tables(cos, sin, seq, torch.float32)
    ref = rope_torch(x.float(), c32, s32).to(torch.bfloat16)
    n = 0
    for block_s, direct in ((1, False), (1, True), (None, False)):
        t = x.clone()
        rope_ism_(t, cos, sin, block_s=block_s, direct=direct)
        torch.testing.assert_close(
            t, ref, msg=lambda m: f"ism seq={seq} block_s={block_s} "
            f"direct={direct}: {m}")
        n += 1
    return n


# ---------------------------------------------------------------------------
# --check: ism (and Triton) against PyTorch, forward output and input grad
# ---------------------------------------------------------------------------

#: (batch, heads, head_dim, rot_dim) cases: Llama-like, a head count that is
#: not a power of two (12 = 8 + 4), partial rotary (rot 64 of 128, 40 heads
#: = 32 + 8), a half-dim that is not a power of two (48 = 32 + 16), and
#: 8 heads of batch 4 (the programs take 4 batch indices at 1000 tokens
#: and 2 at 4096, 2 at batch 2: ``auto_config``).
CHECK_SHAPES = ((2, 32, 128, 128), (3, 12, 64, 64), (2, 40, 128, 64),
                (1, 6, 96, 96), (4, 8, 128, 128))
#: Sequence lengths: 1, odd and not a multiple of any block, a power of two.
CHECK_SEQS = (1, 77, 1000, 4096)


def check(device: str = "cuda", seqs: Sequence[int] = CHECK_SEQS,
          dtypes: Sequence[str] = ("bf16", "f32", "f16"),
          shapes=CHECK_SHAPES, triton: bool = True, verbose: bool = True
          ) -> int:
    """Runs ism's RoPE through autograd (and, on CUDA when importable, the
    Triton one) and compares the forward output and the input gradient with
    a float32 PyTorch eager reference rounded to the dtype
    (torch.testing.assert_close at the dtype's default tolerances). On CUDA
    everything runs inside ``with torch.cuda.stream(torch.cuda.Stream())``;
    on ``device="cpu"`` the ism kernels run in the reference interpreter
    (use small ``seqs``). Returns the number of comparisons; raises
    AssertionError on a mismatch."""
    import contextlib
    import torch
    RoPE = __getattr__("RoPE")
    cuda = torch.device(device).type == "cuda"
    tk = _triton() if triton and cuda else None
    gen = torch.Generator(device=device).manual_seed(0)
    n = 0
    stream = torch.cuda.Stream(device=device) if cuda else None
    with torch.cuda.stream(stream) if cuda else contextlib.nullcontext():
        for dt in dtypes:
            dtype = torch_dtype(dt)
            for batch, heads, dim, rot in shapes:
                for seq in seqs:
                    max_seq = seq + 3          # rows past seq are not read
                    c_np, s_np = rope_tables(max_seq, rot)
                    cos = torch.from_numpy(c_np).to(device)
                    sin = torch.from_numpy(s_np).to(device)
                    x = torch.randn(seq, batch, heads, dim, device=device,
                                    generator=gen).to(dtype)
                    g = torch.randn(seq, batch, heads, dim, device=device,
                                    generator=gen).to(dtype)
                    # Reference: fp32 eager with autograd, rounded to dtype.
                    c32, s32 = eager_tables(cos, sin, seq, torch.float32)
                    xr = x.float().clone().requires_grad_()  # x stays
                    yr = rope_torch(xr, c32, s32)
                    yr.backward(g.float())
                    ref_y, ref_g = yr.detach().to(dtype), xr.grad.to(dtype)
                    impls = [("ism", RoPE)]
                    if tk is not None:
                        impls.append(("triton", tk.TritonRoPE))
                    for name, fn in impls:
                        what = (f"{name} {dt} seq={seq} batch={batch} "
                                f"heads={heads} head_dim={dim} rot={rot}")
                        leaf = x.clone().requires_grad_()
                        t = leaf.clone()            # a non-leaf to rotate
                        y = fn.apply(t, cos, sin)
                        assert y.data_ptr() == t.data_ptr(), \
                            f"{what}: the forward is not in place"
                        torch.testing.assert_close(
                            y.detach(), ref_y,
                            msg=lambda m: f"{what}, forward: {m}")
                        y.backward(g.clone())
                        torch.testing.assert_close(
                            leaf.grad, ref_g,
                            msg=lambda m: f"{what}, input grad: {m}")
                        n += 2
                    if cuda and seq == seqs[-1]:
                        # The kernel launched directly (k.rope_fwd[grid]),
                        # and a non-contiguous t (rotated through a copy).
                        t2 = x.clone()
                        rope_ism_(t2, cos, sin, direct=True)
                        torch.testing.assert_close(
                            t2, ref_y, msg=lambda m: f"ism direct launch "
                            f"{dt} seq={seq}: {m}")
                        t3 = x.transpose(0, 1).contiguous().transpose(0, 1)
                        rope_ism_(t3, cos, sin)
                        torch.testing.assert_close(
                            t3, ref_y, msg=lambda m: f"ism non-contiguous "
                            f"{dt} seq={seq}: {m}")
                        n += 2
        if cuda:
            n += _check_long_sequence(device, gen)
            stream.synchronize()
    if verbose:
        print(f"rope check: {n} comparisons passed (forward output and "
              f"input grad vs PyTorch fp32 eager; {', '.join(dtypes)}; "
              f"seqs {', '.join(map(str, seqs))}; "
              f"{'on a side stream' if cuda else 'ism interpreted on the CPU'}"
              f"{'; Triton too' if tk is not None else ''})")
    return n


# ---------------------------------------------------------------------------
# --bench: ism vs PyTorch eager vs Triton, forward and backward
# ---------------------------------------------------------------------------


class Timer:
    """bench/bench.py's method: CUDA events around each call, the L2 cache
    flushed before every repetition (a buffer of twice the L2 size
    written), the median over ``reps`` after ``warmup`` calls, in ms.

    ``gpu_only`` also queues a GPU sleep of ``sleep_us`` between the flush
    and the start event, so that the call's host-side work (Python
    argument checks, the launch) is done while the GPU is still busy and
    the events time what the GPU does, as ism-run --bench does from C++.
    Without it a call whose host side takes longer than the flush shows
    that time too (bench/launch_overhead.py measures it on its own).
    (On ``device="cpu"``, for smoke tests only: wall-clock medians.)"""

    def __init__(self, warmup: int = 10, reps: int = 100,
                 device: str = "cuda", gpu_only: bool = True,
                 sleep_us: float = 500.0):
        import torch
        self.warmup, self.reps = warmup, reps
        self.cuda = torch.device(device).type == "cuda"
        self.sleep_cycles = 0
        if self.cuda and gpu_only and hasattr(torch.cuda, "_sleep"):
            clock_khz = getattr(torch.cuda.get_device_properties(device),
                                "clock_rate", 2_000_000)
            self.sleep_cycles = int(sleep_us * 1e-3 * clock_khz)
        if self.cuda:
            l2 = torch.cuda.get_device_properties(device).L2_cache_size
            self.flush = torch.empty(2 * l2, dtype=torch.uint8,
                                     device=device)

    def __call__(self, fn) -> float:
        import statistics
        import time
        import torch
        times = []
        if not self.cuda:
            for i in range(self.warmup + self.reps):
                t0 = time.perf_counter()
                fn()
                if i >= self.warmup:
                    times.append(1e3 * (time.perf_counter() - t0))
            return statistics.median(times)
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        for i in range(self.warmup + self.reps):
            self.flush.fill_(i & 0xFF)
            if self.sleep_cycles:
                torch.cuda._sleep(self.sleep_cycles)
            start.record()
            fn()
            end.record()
            end.synchronize()
            if i >= self.warmup:
                times.append(start.elapsed_time(end))
        return statistics.median(times)


BENCH_SEQS = (512, 1024, 2048, 4096, 8192, 16384)


def bench(seqs: Sequence[int] = BENCH_SEQS, batch: int = 4, heads: int = 32,
          head_dim: int = 128, dtype: str = "bf16", reps: int = 100,
          warmup: int = 10, out: Optional[str] = "bench-out/rope",
          triton: bool = True, block_s: Optional[int] = None,
          num_warps: Optional[int] = None, device: str = "cuda",
          gpu_only: bool = True, block_b: Optional[int] = None
          ) -> List[dict]:
    """Times the forward and the backward of ism, PyTorch eager and Triton
    on the same tensors, in one run. Forward: ism and Triton rotate ``t``
    in place (the kernels the autograd Functions launch); eager computes
    ``rope_torch`` (a new tensor). Backward: ism and Triton rotate a
    gradient in place; eager is ``torch.autograd.grad`` through
    ``rope_torch``. GB/s count the bytes the operation must move (t read
    and written once, cos and sin read once), the same for all three.
    Prints a table, writes rope.csv and rope.png under ``out``; returns the
    rows. ``gpu_only``: see ``Timer`` (False: host-side launch costs that
    outlast the L2 flush count too). (``device="cpu"`` runs ism in the
    interpreter: a smoke test of this function, not a benchmark.)"""
    import torch
    tdt = torch_dtype(dtype)
    cuda = torch.device(device).type == "cuda"
    tk = _triton() if triton and cuda else None
    timer = Timer(warmup, reps, device, gpu_only)
    src = torch.empty(1 << (28 if cuda else 16), dtype=torch.float32,
                      device=device)
    dst = torch.empty_like(src)
    copy_ms = timer(lambda: dst.copy_(src))
    copy_gbps = 2 * src.numel() * 4 / copy_ms / 1e6
    src = dst = None
    dev = torch.cuda.get_device_name(device) if cuda else "cpu"
    print(f"device: {dev}; device-to-device copy {copy_gbps:.0f} GB/s "
          f"(roofline); {dtype} (seq, {batch}, {heads}, {head_dim}); ism: "
          f"tokens x batch indices a program, warps in column 'ism cfg'; "
          f"Triton: one (token, batch) per program, num_warps=4; "
          + ("GPU time (calls queued behind a GPU sleep)" if gpu_only
             else "host-side launch costs included"))
    rows = []
    for seq in seqs:
        c_np, s_np = rope_tables(seq, head_dim)
        cos = torch.from_numpy(c_np).to(device)
        sin = torch.from_numpy(s_np).to(device)
        t = torch.randn(seq, batch, heads, head_dim, device=device).to(tdt)
        g = torch.randn_like(t)
        nbytes = 2 * t.numel() * t.element_size() + 2 * cos.numel() * 4
        cf, sf = eager_tables(cos, sin, seq, tdt)
        key = choose_key(t, head_dim // 2, block_s, num_warps, block_b)
        if cuda:
            ism_kernels(key)               # compile before timing
        cfg = f"{key[3]}x{key[6]} {key[4]}w"
        res = {}
        res["ism", "fwd"] = timer(lambda: rope_ism_(
            t, cos, sin, False, block_s, num_warps, block_b=block_b))
        res["ism", "bwd"] = timer(lambda: rope_ism_(
            g, cos, sin, True, block_s, num_warps, block_b=block_b))
        with torch.no_grad():
            res["torch", "fwd"] = timer(lambda: rope_torch(t, cf, sf))
        tr = t.detach().clone().requires_grad_()
        yr = rope_torch(tr, cf, sf)
        res["torch", "bwd"] = timer(lambda: torch.autograd.grad(
            yr, tr, g, retain_graph=True))
        tr = yr = None
        if tk is not None:
            res["triton", "fwd"] = timer(lambda: tk.rope_inplace_triton(
                t, cos, sin))
            res["triton", "bwd"] = timer(lambda: tk.rope_inplace_triton(
                g, cos, sin, backward=True))
            # Triton's best warp count for this kernel (--tune): 8.
            res["triton8", "fwd"] = timer(lambda: tk.rope_inplace_triton(
                t, cos, sin, num_warps=8))
            res["triton8", "bwd"] = timer(lambda: tk.rope_inplace_triton(
                g, cos, sin, backward=True, num_warps=8))
        for d in ("fwd", "bwd"):
            r = dict(seq=seq, batch=batch, heads=heads, head_dim=head_dim,
                     dtype=dtype, direction=d, bytes=nbytes,
                     copy_gbps=copy_gbps, ism_cfg=cfg)
            for impl in ("ism", "torch", "triton", "triton8"):
                ms = res.get((impl, d))
                r[f"{impl}_ms"] = ms
                r[f"{impl}_gbps"] = nbytes / ms / 1e6 if ms else None
            r["ism_vs_torch"] = r["torch_ms"] / r["ism_ms"]
            r["ism_vs_triton"] = (r["triton_ms"] / r["ism_ms"]
                                  if r["triton_ms"] else None)
            r["ism_vs_triton8"] = (r["triton8_ms"] / r["ism_ms"]
                                   if r["triton8_ms"] else None)
            rows.append(r)
        t = g = cf = sf = None
        if cuda:
            torch.cuda.empty_cache()

    def fmt(v, spec=".3f"):
        return "-" if v is None else format(v, spec)

    print(f"{'seq':>6} {'dir':>4} {'MB':>7} {'ism cfg':>8} "
          f"{'ism ms':>8} {'GB/s':>6} "
          f"{'torch ms':>9} {'GB/s':>6} {'triton ms':>10} {'GB/s':>6} "
          f"{'x torch':>8} {'x triton':>9} {'x tr 8w':>8} {'% copy':>7}")
    for r in rows:
        print(f"{r['seq']:>6} {r['direction']:>4} {r['bytes'] / 1e6:>7.1f} "
              f"{r['ism_cfg']:>8} {fmt(r['ism_ms']):>8} "
              f"{fmt(r['ism_gbps'], '.0f'):>6} "
              f"{fmt(r['torch_ms']):>9} {fmt(r['torch_gbps'], '.0f'):>6} "
              f"{fmt(r['triton_ms']):>10} {fmt(r['triton_gbps'], '.0f'):>6} "
              f"{fmt(r['ism_vs_torch'], '.2f'):>8} "
              f"{fmt(r['ism_vs_triton'], '.2f'):>9} "
              f"{fmt(r['ism_vs_triton8'], '.2f'):>8} "
              f"{100 * r['ism_gbps'] / copy_gbps:>7.0f}")
    print("x torch / x triton: baseline time / ism time (> 1: ism faster); "
          "x tr 8w: against Triton with 8 warps, its fastest setting here; "
          "GB/s: t read + written once, cos/sin read once")
    if out:
        _write(rows, out, dev, copy_gbps)
    return rows


def _write(rows, out, dev, copy_gbps):
    import csv
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "rope.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"rope bench: wrote {out}/rope.csv (matplotlib missing: no "
              "plot)")
        return
    r0 = rows[0]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, d in zip(axes, ("fwd", "bwd")):
        rs = [r for r in rows if r["direction"] == d]
        xs = [r["seq"] for r in rs]
        for impl, label, style in (("ism", "ism", "o-"),
                                   ("torch", "PyTorch eager", "s-"),
                                   ("triton", "Triton", "^-")):
            ys = [r[f"{impl}_gbps"] for r in rs]
            if any(y is not None for y in ys):
                ax.plot(xs, [y or float("nan") for y in ys], style,
                        label=label)
        ax.axhline(copy_gbps, color="k", linestyle="--",
                   label="D2D copy (same run)")
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs)
        ax.set_xticklabels([str(x) for x in xs])
        ax.set_xlabel("sequence length")
        ax.set_title("forward (in place)" if d == "fwd"
                     else "backward (input grad, in place)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("GB/s (t read + written, cos/sin read)")
    axes[0].legend()
    fig.suptitle(f"RoPE {r0['dtype']} (seq, {r0['batch']}, {r0['heads']}, "
                 f"{r0['head_dim']}): ism vs PyTorch eager vs Triton, {dev}, "
                 f"median, L2 flushed")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "rope.png"), dpi=120)
    print(f"rope bench: wrote {out}/rope.csv and {out}/rope.png")


def tune(seq: int = 8192, batch: int = 4, heads: int = 32,
         head_dim: int = 128, dtype: str = "bf16", reps: int = 50,
         configs=((1, 4, 1), (1, 8, 1), (2, 8, 1), (1, 8, 2), (1, 16, 2),
                  (1, 8, 4), (1, 16, 4))):
    """Forward time of ism configurations (block_s, num_warps, block_b)
    next to Triton's num_warps 2/4/8, to pick the defaults."""
    import torch
    tdt = torch_dtype(dtype)
    tk = _triton()
    timer = Timer(5, reps)
    c_np, s_np = rope_tables(seq, head_dim)
    cos, sin = torch.from_numpy(c_np).cuda(), torch.from_numpy(s_np).cuda()
    t = torch.randn(seq, batch, heads, head_dim, device="cuda").to(tdt)
    nbytes = 2 * t.numel() * t.element_size() + 2 * cos.numel() * 4
    key = choose_key(t, head_dim // 2)
    print(f"{dtype} ({seq}, {batch}, {heads}, {head_dim}), forward, median "
          f"of {reps}, L2 flushed; default ism config: block_s={key[3]} "
          f"num_warps={key[4]} block_b={key[6]}")
    for bs, nw, bb in configs:
        ms = timer(lambda: rope_ism_(t, cos, sin, False, bs, nw,
                                     block_b=bb))
        print(f"  ism    block_s={bs} num_warps={nw:2d} block_b={bb}: "
              f"{ms:.4f} ms "
              f"{nbytes / ms / 1e6:.0f} GB/s")
    if tk is not None:
        for nw in (2, 4, 8):
            ms = timer(lambda: tk.rope_inplace_triton(t, cos, sin,
                                                      num_warps=nw))
            print(f"  triton num_warps={nw}:          {ms:.4f} ms "
                  f"{nbytes / ms / 1e6:.0f} GB/s")


def _power_of_two(text: str) -> int:
    """argparse type of the tile flags: a power of two from 1 to 32."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1 or value > 32 or value & (value - 1):
        raise argparse.ArgumentTypeError(
            f"must be a power of two from 1 to 32, got {text!r}")
    return value


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true",
                   help="compare fwd and input grad with PyTorch")
    p.add_argument("--bench", action="store_true",
                   help="time ism vs PyTorch eager vs Triton")
    p.add_argument("--tune", action="store_true",
                   help="time ism tile configurations")
    p.add_argument("--print-mlir", action="store_true",
                   help="print the module for --dtype/--heads/--head-dim")
    p.add_argument("--out", default="bench-out/rope")
    p.add_argument("--seqs", default=",".join(map(str, BENCH_SEQS)))
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--head-dim", type=int, default=128)
    p.add_argument("--dtype", default="bf16", choices=DTYPES)
    p.add_argument("--reps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--block-s", type=_power_of_two, default=None,
                   help="tokens a program (default: by t's size)")
    p.add_argument("--num-warps", type=_power_of_two, default=None)
    p.add_argument("--block-b", type=_power_of_two, default=None,
                   help="batch indices a program (default: by t's size)")
    p.add_argument("--no-triton", action="store_true")
    p.add_argument("--with-launch", action="store_true",
                   help="time without the GPU sleep that hides host-side "
                        "launch costs (see Timer)")
    a = p.parse_args(argv)
    if not (a.check or a.bench or a.tune or a.print_mlir):
        p.error("give --check, --bench, --tune or --print-mlir")
    if a.print_mlir:
        print(module_text(a.dtype, a.heads, a.head_dim // 2, a.block_s,
                          a.num_warps, block_b=a.block_b or 1), end="")
    if a.check:
        check(triton=not a.no_triton)
    if a.tune:
        tune(batch=a.batch, heads=a.heads, head_dim=a.head_dim,
             dtype=a.dtype)
    if a.bench:
        bench([int(s) for s in a.seqs.split(",")], a.batch, a.heads,
              a.head_dim, a.dtype, a.reps, a.warmup, a.out,
              not a.no_triton, a.block_s, a.num_warps,
              gpu_only=not a.with_launch, block_b=a.block_b)


if __name__ == "__main__":
    main()
