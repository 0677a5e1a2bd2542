"""Dependent launches in one kernel (ism.coschedule ordered):
examples/decode_mlp.mlir (the norm inside the gate/up programs) and
test/Runner/Inputs/ordered_chain3.mlir (the norm a launch of its own) in
the reference interpreter against a float64 NumPy MLP block, the example's
PTX (task tickets, waits with a timeout, done counters), and an ordered
chain built and run from Python."""

import os

import numpy as np
import pytest

import ism
from test_grouped_gemm import bf16

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "decode_mlp.mlir")
CHAIN3 = os.path.join(ROOT, "test", "Runner", "Inputs", "ordered_chain3.mlir")


def rounded(a):
    return bf16(a)[1]


def mlp_reference(x, wn, wg, wu, wd, eps, round_h):
    """float64 RMSNorm -> SiLU(W_gate h) * (W_up h) -> W_down a + x, with
    a (and h where a launch stores it: `round_h`) rounded to bf16 as the
    kernels store them."""
    h = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps) * wn
    if round_h:
        h = rounded(h)
    g, u = h @ wg.T, h @ wu.T
    a = rounded(g / (1 + np.exp(-g)) * u)
    return a @ wd.T + x


@pytest.mark.parametrize("path,round_h", [(EXAMPLE, False), (CHAIN3, True)],
                         ids=["example", "chain3"])
@pytest.mark.parametrize("hidden,ffn", [(200, 500), (64, 37), (65, 37)])
def test_example_matches_numpy(hidden, ffn, path, round_h):
    rng = np.random.default_rng(hidden)
    x, x64 = bf16(rng.standard_normal((1, hidden)))
    wn, wn64 = bf16(rng.standard_normal(hidden))
    wg, wg64 = bf16(rng.standard_normal((ffn, hidden)) / np.sqrt(hidden))
    wu, wu64 = bf16(rng.standard_normal((ffn, hidden)) / np.sqrt(hidden))
    wd, wd64 = bf16(rng.standard_normal((hidden, ffn)) / np.sqrt(ffn))
    y = np.full((1, hidden), 0x7FC0, np.uint16)          # NaN bits
    m = ism.Module.parse_file(path)
    ism.interpret(m, "main", x, wn, wg, wu, wd, y, np.float32(1e-5))
    got = (y.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    ref = mlp_reference(x64, wn64, wg64, wu64, wd64, 1e-5, round_h)
    np.testing.assert_allclose(got, ref, rtol=2e-2,
                               atol=2e-2 * np.abs(ref).max())


def test_example_ptx_takes_tickets_waits_and_counts():
    ptx = ism.to_ptx(ism.Module.parse_file(EXAMPLE), chip="sm_90a")
    assert ptx.count(".entry ") == 1
    assert ".entry gate_up__down" in ptx
    # The task ticket and the done counters.
    assert "atom.global.add.u32" in ptx
    # A wait: relaxed reads of the counter, %globaltimer, the error record
    # claimed by compare-and-swap, fences on both sides.
    assert "ld.relaxed.gpu.global" in ptx
    assert "%globaltimer" in ptx
    assert "atom.relaxed.gpu.global.cas.b32" in ptx
    assert "fence.acq_rel.gpu" in ptx


def f32_buf():
    return ism.memref((None,), "f32")


def chain():
    """@double writes b = 2a; @add_one reads b (so it waits) and writes
    c = b + 1."""
    m = ism.Module()
    with m.kernel("double", [f32_buf(), f32_buf()]) as k:
        i = k.program_id() * 128
        t = k.load(k.args[0], [i], (128,))
        k.store(t + t, k.args[1], [i])
    with m.kernel("add_one", [f32_buf(), f32_buf()]) as k:
        i = k.program_id() * 128
        t = k.load(k.args[0], [i], (128,))
        k.store(t + k.full((128,), 1.0, "f32"), k.args[1], [i])
    with m.host("main", [f32_buf()] * 3) as h:
        a, b, c = h.args
        n = h.ceildiv(h.dim(a, 0), 128)
        with h.coschedule("ordered", timeout_ms=50):
            h.launch("double", [n], [a, b])
            h.launch("add_one", [n], [b, c])
    return m


def test_builder_ordered_chain():
    m = chain()
    text = str(m)
    assert "ism.coschedule ordered" in text
    assert "timeout_ms = 50 : i32" in text
    assert str(ism.Module.parse(text)) == text
    fused = str(ism.apply_pipeline(
        m, "builtin.module(ism-assign-layouts, ism-coschedule)"))
    assert "ism.task_wait [0]" in fused
    assert "policy = \"ordered\"" in fused
    lowered = str(ism.apply_pipeline(m, "builtin.module(ism-to-gpu)"))
    assert lowered.count("gpu.launch_func") == 1
    a = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    b = np.full(1000, np.nan, np.float32)
    c = np.full(1000, np.nan, np.float32)
    ism.interpret(m, "main", a, b, c)
    np.testing.assert_allclose(c, 2 * a + 1, rtol=1e-6)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_timeout_ms_must_be_a_positive_int(bad):
    m = ism.Module()
    with m.host("main", []) as h:
        with pytest.raises(ValueError, match="timeout_ms"):
            h.coschedule("ordered", timeout_ms=bad)


def test_builder_ring_stages():
    """ring_stages reaches the region: with ordered, the task ring's depth
    (the lowered kernel copies the tasks' weights with cp.async)."""
    def lowered(**kw):
        m = ism.Module()
        with m.kernel("double", [f32_buf(), f32_buf()]) as k:
            i = k.program_id() * 128
            t = k.load(k.args[0], [i], (128,))
            k.store(t + t, k.args[1], [i])
        with m.host("main", [f32_buf()] * 3) as h:
            a, b, c = h.args
            n = h.ceildiv(h.dim(a, 0), 128)
            with h.coschedule("ordered", **kw):
                h.launch("double", [n], [a, b])
                h.launch("double", [n], [b, c])
        return str(m), str(ism.apply_pipeline(
            m, "builtin.module(ism-assign-layouts, ism-coschedule, "
               "convert-ism-to-gpu)"))
    text, gpu = lowered(ring_stages=2)
    assert "ring_stages = 2 : i32" in text
    assert "ring_stages = 2 : i32" in gpu
    assert "nvvm.cp.async.shared.global" in gpu
    _, gpu = lowered()
    assert "nvvm.cp.async.shared.global" not in gpu


@pytest.mark.parametrize("bad", [1, 9, -1, 2.0, True])
def test_ring_stages_must_be_0_or_2_to_8(bad):
    m = ism.Module()
    with m.host("main", []) as h:
        with pytest.raises(ValueError, match="ring_stages must be 0 or an int "
                                             "from 2 to 8"):
            h.coschedule("ordered", ring_stages=bad)
