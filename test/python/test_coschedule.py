"""ism.coschedule from Python: options, fusion into one kernel, errors."""
import pytest

import ism


def f32_buf():
    return ism.memref((None, None), "f32")


def row_kernel(m, name):
    with m.kernel(name, [f32_buf(), f32_buf()], num_warps=4) as k:
        row = k.program_id()
        t = k.load(k.args[0], [row, 0], (1, 1024))
        k.store(k.exp(t), k.args[1], [row, 0])
    return k


def pair(policy="warp_specialized", **options):
    m = ism.Module()
    row_kernel(m, "first")
    row_kernel(m, "second")
    with m.host("main", [f32_buf()] * 4) as h:
        a, b, c, d = h.args
        rows = h.dim(a, 0)
        with h.coschedule(policy, **options):
            h.launch("first", [rows], [a, b])
            h.launch("second", [rows], [c, d])
    return m


def test_options_become_attributes():
    m = pair(fallback=False, work_counters=False, prefetch=False, ctas_per_sm=2,
             join=False)
    text = str(m)
    assert "join = false" in text
    assert "ctas_per_sm = 2 : i32" in text
    assert "fallback = false" in text
    assert "work_counters = false" in text
    assert "prefetch = false" in text
    assert str(ism.Module.parse(text)) == text


def test_compile_fuses_the_region_into_one_kernel():
    m = pair(fallback=False)
    lowered = str(ism.apply_pipeline(m, "builtin.module(ism-to-gpu)"))
    assert "gpu.func @first__second" in lowered
    assert "gpu.func @first(" not in lowered
    assert "ism.coschedule warp_specialized" not in lowered
    assert lowered.count("gpu.launch_func") == 1
    ptx = ism.to_ptx(m)
    assert ".entry first__second" in ptx
    assert "atom.global.add" in ptx  # the work counters


def test_fallback_without_tensor_cores():
    lowered = str(ism.apply_pipeline(pair(), "builtin.module(ism-to-gpu)"))
    assert "ism.unfused_coschedules = array<i32: 0>" in lowered
    assert lowered.count("gpu.launch_func") == 2
    assert "first__second" not in lowered


def test_block_interleaved_policy_fuses():
    lowered = str(ism.apply_pipeline(pair("block_interleaved"),
                              "builtin.module(ism-to-gpu)"))
    assert 'policy = "block_interleaved"' in lowered
    assert lowered.count("gpu.launch_func") == 1


@pytest.mark.parametrize("options, message", [
    (dict(stages=0), "stages must be a positive int"),
    (dict(registers=[]), "registers must be a non-empty list"),
    (dict(replicas=[1, "2"]), "replicas must be a non-empty list"),
    (dict(prefetch="yes"), "prefetch must be a bool"),
])
def test_bad_options(options, message):
    with pytest.raises(ValueError, match=message):
        pair(**options)


def test_resource_errors_name_the_resource():
    m = pair(fallback=False, replicas=[1, 9])
    with pytest.raises(ism.CompileError, match="replicas"):
        ism.apply_pipeline(m, "builtin.module(ism-to-gpu)")


def test_run_rejects_an_unknown_mode():
    import numpy as np
    a = np.ones((4, 1024), np.float32)
    with pytest.raises(ValueError, match="coschedule must be one of"):
        ism.run(pair(), "main", a, a.copy(), a.copy(), a.copy(),
                coschedule="parallel")
