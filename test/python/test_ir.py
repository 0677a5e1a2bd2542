"""Building every op from Python, and text round trips."""

import glob
import os

import pytest

import ism
from conftest import ROOT


def f32_buf(rank=1):
    return ism.memref((None,) * rank, "f32")


def test_types_from_dtype_names():
    assert str(ism.tile((128, 64), "f16")) == "tensor<128x64xf16>"
    assert str(ism.tile((8,), "float32")) == "tensor<8xf32>"
    assert str(ism.tile((8,), "bfloat16")) == "tensor<8xbf16>"
    assert str(ism.tile((8,), "bool")) == "tensor<8xi1>"
    assert str(ism.memref((None, None), "f16")) == "memref<?x?xf16>"
    assert str(ism.memref((None, 16), "int32")) == "memref<?x16xi32>"
    assert str(ism.scalar("index")) == "index"
    assert str(ism.scalar("f8e4m3fn")) == "f8E4M3FN"
    np = pytest.importorskip("numpy")
    assert ism.dtype(np.float16) == "f16"
    assert ism.dtype(np.dtype("int32")) == "i32"


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(ROOT, "examples", "*.mlir"))))
def test_examples_round_trip(path):
    m = ism.Module.parse_file(path)
    text = str(m)
    again = ism.Module.parse(text)
    assert str(again) == text


def test_every_tile_op():
    m = ism.Module()
    blk0 = ism.blocked([1], [32], [4], [0])
    blk1 = ism.blocked([2], [32], [4], [0])
    with m.kernel("every_op", [f32_buf(2), f32_buf(), ism.memref((None,), "i32"),
                               "f32", "index"], num_warps=4) as k:
        a, x, hist, s, n = k.args
        pid = k.program_id("x")
        npr = k.num_programs("y", "i32")
        r = k.range(0, 64)                          # tensor<64xi32>
        sp = k.splat(s, (64,))
        e = k.expand_dims(sp, 0)                    # 1x64
        bc = k.broadcast(e, (32, 64))
        rs = k.reshape(bc, (64, 32))
        tr = k.trans(rs)                            # 32x64
        mask = r < 48                               # cmpi -> i1 mask
        t = k.load(x, [pid], (64,), mask=mask, padding=-1.0)
        k.store(t, x, [pid], mask=mask)
        blockt = k.load(a, [pid, 0], (64, 32))
        g = k.gather(x, [r], mask=mask, padding=0.0)
        k.scatter(g, x, [r], mask=mask)
        old = k.atomic_rmw("add", hist, [r], 1, mask=mask)
        k.atomic_rmw("max", hist, [r], old, sem="acq_rel")
        d = k.dot(tr, blockt, precision="tf32")     # 32x64 * 64x32 -> 32x32 f32
        d2 = k.dot(tr, blockt, k.zeros((32, 32), "f32"))
        red = k.reduce(d, 1, lambda p, q: k.maximum(p, q))
        total = k.sum(red, 0)
        sc = k.scan(t, 0, lambda p, q: p + q, reverse=True)
        cs = k.cumsum(old)
        # arith/math with scalars auto-splat
        y = (t * 2.0 + s - 1.0) / total
        y = k.exp(y) + k.sqrt(k.abs(y)) + k.rsqrt(y * y + 1.0) + k.log(y)
        y = k.where(y > 0.0, y, 0.0)
        z = k.maximum(y, sc) - (-y)
        zi = z.to("i32")
        zb = zi.to("f32") + z.to("f16").to("f32")
        ri = (r * 2 + 1) // 3 % 5
        idx = pid + n * 2
        lay0 = k.load(x, [idx], (128,))
        conv = k.convert_layout(k.convert_layout(lay0, ism.tile((128,), "f32", blk0)),
                                ism.tile((128,), "f32", blk1))
        acc = k.for_range(0, n, 1, [zb, d2],
                          lambda i, u, v: (u + 1.0, k.dot(tr, blockt, v)))
        with k.for_range(0, 4, 1, [ri]) as loop:
            loop.yield_(loop.args[0] + 1)
        k.store(acc[0], x, [0])
        del npr, cs, conv
    text = str(m)
    for op in ["ism.program_id", "ism.num_programs", "ism.range", "ism.splat",
               "ism.expand_dims", "ism.broadcast", "ism.reshape", "ism.trans",
               "ism.load", "ism.store", "ism.gather", "ism.scatter",
               "ism.atomic_rmw", "sem = acq_rel", "ism.dot", "precision = tf32", "ism.reduce",
               "ism.scan", "reverse", "ism.yield", "ism.convert_layout",
               "ism.return", "arith.mulf", "arith.addf", "arith.subf",
               "arith.divf", "arith.cmpi", "arith.cmpf", "math.exp",
               "math.sqrt", "math.rsqrt", "math.absf", "math.log",
               "arith.select", "arith.maximumf", "arith.negf", "arith.fptosi",
               "arith.sitofp", "arith.truncf", "arith.extf", "arith.divsi",
               "arith.remsi", "scf.for", "scf.yield", "mask",
               "padding = -1.000000e+00"]:
        assert op in text, op
    m.verify()
    assert str(ism.Module.parse(text)) == text


def test_host_launch_and_coschedule():
    m = ism.Module()
    with m.kernel("k1", [f32_buf()]) as k:
        k.store(k.zeros((128,), "f32"), k.args[0], [k.program_id() * 128])
    with m.kernel("k2", [f32_buf(), "index"]) as k2:
        k2.store(k2.full((64,), 1.5, "f32"), k2.args[0], [k2.args[1]])
    with m.host("main", [f32_buf(), f32_buf()]) as h:
        x, y = h.args
        n = h.dim(x, 0)
        h.launch(k, [h.ceildiv(n, 128)], [x])
        with h.coschedule("block_interleaved"):
            h.launch("k1", [n], [x])
            h.launch("k2", [n, 1, 1], [y, n])
    text = str(m)
    assert "ism.coschedule block_interleaved" in text
    assert text.count("ism.launch") == 3
    assert "func.func @main" in text
    assert str(ism.Module.parse(text)) == text


def test_print_with_locations_names_the_python_line():
    m = ism.Module()
    with m.kernel("k", [f32_buf()]) as k:
        k.program_id()
    assert "test_ir.py" in m.print(debug_info=True)


def test_separate_contexts():
    ctx = ism.Context()
    m = ism.Module(ctx)
    with m.kernel("k", [ism.memref((None,), "f32", ctx)]) as k:
        k.store(k.zeros((16,), "f32"), k.args[0], [0])
    m.verify()
    assert "ism.kernel @k" in str(m.clone())


def test_kernel_gather_stages():
    # The kernel option of ism-pipeline-gathers, range-checked by the
    # kernel's verifier.
    m = ism.Module()
    with m.kernel("k", [f32_buf()], gather_stages=2) as k:
        k.store(k.zeros((256,), "f32"), k.args[0], [0])
    assert "gather_stages = 2 : i32" in str(m)
    bad = ism.Module()
    with pytest.raises(ism.VerificationError,
                       match="gather_stages must be an integer from 1"):
        with bad.kernel("k", [f32_buf()], gather_stages=9) as k:
            k.store(k.zeros((256,), "f32"), k.args[0], [0])


def test_kernel_min_ctas_per_sm():
    m = ism.Module()
    with m.kernel("k", [f32_buf()], num_warps=8, min_ctas_per_sm=8) as k:
        k.store(k.zeros((256,), "f32"), k.args[0], [0])
    assert "min_ctas_per_sm = 8 : i32" in str(m)
    plain = ism.Module()
    with plain.kernel("k", [f32_buf()]) as k:
        k.store(k.zeros((256,), "f32"), k.args[0], [0])
    assert "min_ctas_per_sm" not in str(plain)
    # 8 warps x 9 CTAs = 2304 threads: more than an SM holds.
    bad = ism.Module()
    with pytest.raises(ism.VerificationError,
                       match="min_ctas_per_sm = 9 with 8 warps asks for 2304"):
        with bad.kernel("k", [f32_buf()], num_warps=8,
                        min_ctas_per_sm=9) as k:
            k.store(k.zeros((256,), "f32"), k.args[0], [0])
