"""The RoPE kernels of python/examples/rope_autograd.py, on the CPU: forward
and backward in ism's float64 reference interpreter against a NumPy float64
reference (written as complex multiplication, independently of the
kernels' formula), the forward-then-backward round trip, bf16 through
uint16 bit patterns, and that the module lowers to PTX with 16-byte vector
accesses. No torch, no GPU. The GPU half (the autograd Function against
PyTorch, and the benchmark) is rope_autograd.check() / bench()."""

import os
import subprocess
import sys

import numpy as np
import pytest

import ism
from conftest import ROOT

import rope_autograd as rope

# (seq, batch, heads, head_dim, rot_dim, block_s; None: the default):
# one token per program; heads that are not a power of two (5 = 4 + 1) with
# a sequence that is not a multiple of the token block; partial rotary (rot
# 8 of 16); a half-dim that is not a power of two (12 = 8 + 4); Llama's
# 32 x 128 with its default (one token per program) and with two.
CASES = [
    (4, 2, 4, 16, 16, 1),
    (5, 2, 5, 16, 16, 2),
    (3, 3, 2, 16, 8, None),
    (7, 1, 3, 24, 24, 4),
    (3, 2, 32, 128, 128, None),
    (3, 2, 32, 128, 128, 2),
]


def tables(seq, rot):
    # Two rows more than the sequence: rows past it must not be read.
    return rope.rope_tables(seq + 2, rot)


def run(module, entry, t, cos, sin):
    out = t.copy()
    ism.interpret(module, entry, out, cos, sin)
    return out


@pytest.mark.parametrize("specialized", [False, True],
                         ids=["dynamic", "specialized"])
@pytest.mark.parametrize("seq,batch,heads,dim,rot,block_s", CASES)
def test_f32_forward_backward_roundtrip(seq, batch, heads, dim, rot, block_s,
                                        specialized):
    # Both forms of the module: every size dynamic, and specialized to the
    # head count and head_dim (static inner sizes, what rope_ism_ runs).
    rng = np.random.default_rng(seq * 100 + heads)
    m = rope.build_module("f32", heads, rot // 2, block_s,
                          head_dim=dim if specialized else None)
    x = rng.standard_normal((seq, batch, heads, dim)).astype(np.float32)
    cos, sin = tables(seq, rot)

    y = run(m, "main", x, cos, sin)
    np.testing.assert_allclose(y, rope.rope_reference_np(x, cos, sin),
                               rtol=1e-6, atol=1e-6)
    if rot < dim:  # the channels past rot_dim pass through untouched
        np.testing.assert_array_equal(y[..., rot:], x[..., rot:])

    g = rng.standard_normal(x.shape).astype(np.float32)
    dg = run(m, "backward", g, cos, sin)
    np.testing.assert_allclose(
        dg, rope.rope_reference_np(g, cos, sin, backward=True),
        rtol=1e-6, atol=1e-6)

    # Rotation by +theta then -theta is the identity.
    np.testing.assert_allclose(run(m, "backward", y, cos, sin), x,
                               rtol=1e-5, atol=1e-6)


def test_backward_is_the_transposed_jacobian():
    # <J x, g> == <x, J^T g>: the backward kernel is the adjoint of the
    # forward one (what autograd needs), not merely its inverse.
    rng = np.random.default_rng(7)
    seq, batch, heads, dim = 5, 2, 3, 16
    m = rope.build_module("f32", heads, dim // 2, block_s=1)
    x = rng.standard_normal((seq, batch, heads, dim)).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    cos, sin = tables(seq, dim)
    jx = run(m, "main", x, cos, sin).astype(np.float64)
    jtg = run(m, "backward", g, cos, sin).astype(np.float64)
    assert np.isclose((jx * g).sum(), (x * jtg).sum(), rtol=1e-5)


def to_bf16_bits(a):
    """float32 -> bf16 bit patterns (uint16), rounded to nearest even."""
    u = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16)


def from_bf16_bits(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


@pytest.mark.parametrize("backward", [False, True])
def test_bf16(backward):
    rng = np.random.default_rng(3)
    seq, batch, heads, dim = 5, 2, 6, 32          # 6 heads = 4 + 2
    m = rope.build_module("bf16", heads, dim // 2, block_s=2)
    xb = to_bf16_bits(rng.standard_normal((seq, batch, heads, dim)))
    cos, sin = tables(seq, dim)
    out = run(m, "backward" if backward else "main", xb, cos, sin)
    ref = to_bf16_bits(rope.rope_reference_np(from_bf16_bits(xb), cos, sin,
                                              backward=backward))
    # The kernel rounds its fp32 (here float64) result to bf16 once: the
    # same bits as the rounded reference, give or take one ulp.
    diff = np.abs(out.astype(np.int32) - ref.astype(np.int32))
    assert diff.max() <= 1, f"{(diff > 1).sum()} elements off by > 1 ulp"
    assert (diff == 0).mean() > 0.99


def test_f16_forward():
    rng = np.random.default_rng(4)
    seq, batch, heads, dim = 3, 2, 4, 16
    m = rope.build_module("f16", heads, dim // 2, block_s=1)
    x = rng.standard_normal((seq, batch, heads, dim)).astype(np.float16)
    cos, sin = tables(seq, dim)
    y = run(m, "main", x, cos, sin)
    ref = rope.rope_reference_np(x, cos, sin).astype(np.float16)
    np.testing.assert_allclose(y.astype(np.float32), ref.astype(np.float32),
                               rtol=1e-3, atol=1e-3)


# (seq, batch, heads, head_dim, block_s, block_b): programs over 2 and 4
# batch indices of their tokens, sharing one cos/sin row; a batch that is
# not a multiple of block_b (the last program's tiles partly outside t:
# the bounds-checked path); block_b larger than the batch; tokens and
# batch indices blocked together.
BATCH_BLOCK_CASES = [
    (3, 4, 4, 16, 1, 2),
    (3, 4, 32, 128, 1, 4),
    (4, 3, 5, 16, 1, 2),
    (2, 1, 4, 16, 1, 4),
    (5, 6, 3, 24, 2, 2),
]


@pytest.mark.parametrize("batch_major", [True, False],
                         ids=["batch-major", "token-major"])
@pytest.mark.parametrize("seq,batch,heads,dim,block_s,block_b",
                         BATCH_BLOCK_CASES)
def test_batch_blocks(seq, batch, heads, dim, block_s, block_b, batch_major):
    # Both grid orders: batch blocks along x (the default) and tokens
    # along x (what sequences of more than 65535 token blocks take).
    rng = np.random.default_rng(seq * 10 + batch)
    m = rope.build_module("f32", heads, dim // 2, block_s, block_b=block_b,
                          batch_major=batch_major)
    x = rng.standard_normal((seq, batch, heads, dim)).astype(np.float32)
    cos, sin = tables(seq, dim)
    for entry, backward in (("main", False), ("backward", True)):
        np.testing.assert_allclose(
            run(m, entry, x, cos, sin),
            rope.rope_reference_np(x, cos, sin, backward=backward),
            rtol=1e-6, atol=1e-6)


def test_auto_config():
    # (block_s, num_warps, block_b). Llama's 32 x 128 in bf16 on 132 SMs
    # (the H200): 512 and 768 tokens of batch 4 (16 and 24 MiB, small)
    # keep one batch index a program (8 KB already), 1024 (32 MiB, large)
    # take two (16 KB a program, 16 warps), never four; an odd batch, or
    # one batch index, cannot be blocked; batch 2 takes two; f32 (16 KB a
    # token) takes two (32 KB); never more than 32 KB a program.
    assert rope.auto_config(32, 64, "bf16", 512, 4, 132) == (1, 8, 1)
    assert rope.auto_config(32, 64, "bf16", 768, 4, 132) == (1, 8, 1)
    assert rope.auto_config(32, 64, "bf16", 1024, 4, 132) == (1, 16, 2)
    assert rope.auto_config(32, 64, "bf16", 8192, 4, 132) == (1, 16, 2)
    assert rope.auto_config(32, 64, "bf16", 8192, 3, 132) == (1, 8, 1)
    assert rope.auto_config(32, 64, "bf16", 8192, 1, 132) == (1, 8, 1)
    assert rope.auto_config(32, 64, "bf16", 8192, 2, 132) == (1, 16, 2)
    assert rope.auto_config(32, 64, "f32", 8192, 4, 132) == (1, 16, 2)
    assert rope.auto_config(64, 64, "bf16", 8192, 8, 132) == (1, 16, 2)
    # The threshold scales with the SM count.
    assert rope.auto_config(32, 64, "bf16", 1024, 4, 264) == (1, 8, 1)
    # 8 heads (2 KB a token, a GQA model's keys): batch indices first, four
    # (8 KB) on a small tensor (a warp per 2 KB), two on a large one (a
    # warp per KB); alone, one token and 2 warps on a small tensor, 2
    # tokens and 4 warps on a large one.
    assert rope.auto_config(8, 64, "bf16", 1024, 4, 132) == (1, 4, 4)
    assert rope.auto_config(8, 64, "bf16", 16384, 4, 132) == (1, 4, 2)
    assert rope.auto_config(8, 64, "bf16", 4096, 1, 132) == (1, 2, 1)
    assert rope.auto_config(8, 64, "bf16", 16384, 1, 132) == (2, 4, 1)
    # 2 heads (512 B a token): 4 batch indices, then tokens up to 2 KB.
    assert rope.auto_config(2, 64, "bf16", 4096, 4, 132) == (1, 1, 4)
    assert rope.auto_config(1, 64, "bf16", 4096, 4, 132) == (2, 1, 4)
    # Warps stay a power of two: 40 heads x 32 x 2 bytes = 5 KB a token.
    assert rope.auto_config(40, 32, "bf16", 8192, 2, 132) == (1, 16, 2)
    with pytest.raises(ValueError, match="block_b must be a power of two"):
        rope.module_text("bf16", 32, 64, block_b=3)


@pytest.mark.parametrize("flag", [["--block-b", "3"], ["--block-s", "0"],
                                  ["--num-warps", "x"],
                                  ["--num-warps", "64"]])
def test_bad_tile_flags(flag, capsys):
    # A tile flag that is not a power of two from 1 to 32 is a one-line
    # usage error (exit 2), not a traceback from the module generator.
    with pytest.raises(SystemExit) as e:
        rope.main(["--print-mlir"] + flag)
    assert e.value.code == 2
    assert "must be a power of two from 1 to 32" in capsys.readouterr().err


def test_pow2_chunks_and_config():
    assert rope.pow2_chunks(40) == [(0, 32), (32, 8)]
    assert rope.pow2_chunks(64) == [(0, 64)]
    assert rope.pow2_chunks(7) == [(0, 4), (4, 2), (6, 1)]
    assert rope.default_config(32, 64) == (1, 8)
    assert rope.default_config(8, 64) == (1, 2)        # 2 KB a token
    bs, nw = rope.default_config(8, 32)               # 1 KB a token (bf16)
    assert bs * 2 * 8 * 32 * 2 >= 2048 and 1 <= nw <= 8


def test_specialized_types_and_shape_checks():
    # The specialized module fixes heads, head_dim and the tables' width
    # in the types; the sequence and batch stay dynamic.
    mem, tab = rope.memref_types("bf16", 32, 64, head_dim=128)
    assert mem == "memref<?x?x32x128xbf16>" and tab == "memref<?x64xf32>"
    assert rope.memref_types("f32", 5, 8) == ("memref<?x?x?x?xf32>",
                                              "memref<?x?xf32>")
    with pytest.raises(ValueError, match="head_dim 64 is smaller than "
                                         "rot_dim 128"):
        rope.memref_types("bf16", 32, 64, head_dim=64)
    # A tensor of another head count is rejected, not misread.
    m = rope.build_module("f32", 4, 8, head_dim=16)
    cos, sin = tables(3, 16)
    with pytest.raises(Exception, match="dimension 2 is 5 but the function "
                       r"takes memref<\?x\?x4x16xf32>"):
        ism.interpret(m, "main", np.ones((3, 2, 5, 16), np.float32), cos,
                      sin)
    assert rope.config_key("bf16", 32, 64, head_dim=128) == (
        "bf16", 32, 64, 1, 8, 128, 1, True)


def test_grid_order():
    # The batch-major grid: batch blocks along x, token blocks along y,
    # launched on (ceil(batch / block_b), ceil(seq / block_s)); the
    # token-major one the other way round.
    text = rope.module_text("bf16", 32, 64, 2, 8, block_b=2)
    assert "%pid = ism.program_id y" in text
    assert "%by = ism.program_id x" in text
    assert "grid(%gb, %gs)" in text and "batch blocks along x" in text
    text = rope.module_text("bf16", 32, 64, 2, 8, block_b=2,
                            batch_major=False)
    assert "%pid = ism.program_id x" in text
    assert "%by = ism.program_id y" in text
    assert "grid(%gs, %gb)" in text and "token blocks along x" in text
    # y takes at most 65535 token blocks: longer sequences are token-major.
    assert rope.fits_batch_major(65535, 1)
    assert not rope.fits_batch_major(65536, 1)
    assert rope.fits_batch_major(65536, 2)
    assert rope.fits_batch_major(2 * 65535 + 1, 2) is False


def test_lowers_to_ptx_with_vector_accesses():
    if not ism.has_pass(ism.PTX_PIPELINE):
        pytest.skip("this build has no ism-to-ptx pipeline")
    for head_dim in (None, 128):
        ptx = rope.build_module("bf16", 32, 64,
                                head_dim=head_dim).to_ptx(chip="sm_90a")
        assert ".entry rope_fwd" in ptx and ".entry rope_bwd" in ptx
        # The in-bounds fast path moves 16 bytes per thread and access.
        assert "ld.global.v4.b32" in ptx and "st.global.v4.b32" in ptx
        assert ".extern .func" not in ptx     # no libdevice calls
    # Four batch indices a program: the same 16-byte accesses.
    ptx = rope.build_module("bf16", 32, 64, 1, 16,
                            block_b=4).to_ptx(chip="sm_90a")
    assert "ld.global.v4.b32" in ptx and "st.global.v4.b32" in ptx


def test_imports_without_torch():
    # The example's kernels must be importable where torch and triton are
    # not (CI): block both and build the module text.
    code = ("import sys; sys.modules['torch'] = None; "
            "sys.modules['triton'] = None; import rope_autograd as r; "
            "t = r.module_text('bf16', 32, 64); "
            "assert '@rope_fwd' in t and '@backward' in t")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.join(ROOT, "python", "examples")] + sys.path))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


# The torch side, where torch is installed (CI has none: skipped there).
SMALL_SHAPES = ((2, 4, 16, 16), (1, 3, 24, 16))


def test_autograd_function_on_cpu():
    # RoPE.apply on CPU tensors runs the same module in the interpreter:
    # the autograd wiring (in-place forward, in-place backward) against
    # PyTorch's fp32 eager reference.
    pytest.importorskip("torch")
    assert rope.check(device="cpu", seqs=(1, 5), dtypes=("bf16", "f32"),
                      shapes=SMALL_SHAPES, verbose=False) == 16


def test_autograd_function_on_gpu():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    # ism only (the --check command line compares Triton's too).
    assert rope.check(device="cuda", seqs=(1, 77, 1000), triton=False) > 0
