"""The Run API: ism.run on the GPU (or RuntimeUnavailable without one) and
ism.interpret in the runner's float64 reference interpreter."""

import functools
import os

import pytest

import ism
from conftest import ROOT

np = pytest.importorskip("numpy")


def example(name):
    return os.path.join(ROOT, "examples", name)


def vector_add():
    return ism.Module.parse_file(example("vector_add.mlir"))


def softmax():
    return ism.Module.parse_file(example("softmax.mlir"))


@functools.lru_cache(maxsize=None)
def gpu_error():
    """None when ism.run reaches a GPU, else RuntimeUnavailable's message."""
    x = np.zeros(4, np.float32)
    try:
        ism.run(vector_add(), "main", x, x.copy(), x.copy())
    except ism.RuntimeUnavailable as e:
        return str(e)
    return None


def softmax_reference(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_run_without_gpu_raises_runtime_unavailable():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1000).astype(np.float32)
    y = rng.standard_normal(1000).astype(np.float32)
    z = np.zeros(1000, np.float32)
    if gpu_error() is None:
        ism.run(vector_add(), "main", x, y, z)
        np.testing.assert_allclose(z, x + y, rtol=1e-6)
        return
    with pytest.raises(ism.RuntimeUnavailable) as info:
        ism.run(vector_add(), "main", x, y, z)
    message = str(info.value)
    assert "CUDA" in message or "GPU" in message
    assert "\n" not in message
    assert isinstance(info.value, RuntimeError)
    assert not z.any()  # nothing was written back


@pytest.mark.parametrize("n", [1000, 3000])
def test_interpret_vector_add(n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    z = np.full(n, np.nan, np.float32)
    ism.interpret(vector_add(), "main", x, y, z)
    expected = (x.astype(np.float64) + y.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(z, expected)


def test_interpret_strided_arrays():
    """Views with strides go in and come back element by element."""
    rng = np.random.default_rng(1)
    xs = rng.standard_normal(2000).astype(np.float32)
    ys = rng.standard_normal(3000).astype(np.float32)
    zs = np.zeros(3000, np.float32)
    x, y, z = xs[::2], ys[::-3], zs[1::3]
    ism.interpret(vector_add(), "main", x, y, z)
    np.testing.assert_allclose(z, x + y, rtol=1e-6)
    assert not zs[0::3].any() and not zs[2::3].any()


def test_interpret_softmax_partial_tiles():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 1000)).astype(np.float16)
    x0 = x.copy()
    y = np.zeros_like(x)
    ism.interpret(softmax(), "main", x, y)
    np.testing.assert_allclose(y.astype(np.float64), softmax_reference(x),
                               rtol=1e-3, atol=1e-6)
    np.testing.assert_array_equal(x, x0)  # inputs come back unchanged


def test_interpret_bf16_as_uint16_bits():
    """bf16 buffers take uint16 arrays holding bf16 bit patterns."""
    text = open(example("vector_add.mlir")).read().replace("f32", "bf16")
    m = ism.Module.parse(text)
    a = np.arange(-8, 8, 0.5, dtype=np.float32)  # exact in bf16
    b = np.full_like(a, 0.25)

    def bits(v):
        return (v.view(np.uint32) >> 16).astype(np.uint16)

    z = np.zeros(a.shape, np.uint16)
    ism.interpret(m, "main", bits(a), bits(b), z)
    got = (z.astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(got, a + b)
    with pytest.raises(TypeError, match="bfloat16 or uint16"):
        ism.interpret(m, "main", a, b, np.zeros_like(a))


def test_wrong_arguments_raise():
    m = vector_add()
    x = np.zeros(8, np.float32)
    for call in (ism.run, ism.interpret):
        with pytest.raises(TypeError, match="takes 3 arguments"):
            call(m, "main", x, x)
        with pytest.raises(TypeError, match="dtype float64"):
            call(m, "main", x, x, np.zeros(8))
        with pytest.raises(TypeError, match="must be a NumPy array"):
            call(m, "main", x, x, 1.0)
        with pytest.raises(ValueError, match="2 dimensions"):
            call(m, "main", x, x, np.zeros((2, 4), np.float32))
        with pytest.raises(ValueError, match="read-only"):
            ro = np.zeros(8, np.float32)
            ro.flags.writeable = False
            call(m, "main", x, x, ro)
        with pytest.raises(ValueError, match="no host function @nope"):
            call(m, "nope", x, x, x)


def test_interpret_failure_raises_run_error():
    m = ism.Module.parse("""
func.func @main(%x: memref<?xf32>) {
  %a = memref.alloca() : memref<4xf32>
  return
}
""")
    with pytest.raises(ism.RunError, match="memref.alloca"):
        ism.interpret(m, "main", np.zeros(4, np.float32))


def test_interpret_past_the_memory_available_raises(monkeypatch):
    # The float64 copy of 3 x 1000 f32 elements (24000 bytes) does not fit in
    # the 10000 bytes ISM_MEMORY_LIMIT says are available.
    monkeypatch.setenv("ISM_MEMORY_LIMIT", "10000")
    x = np.zeros(1000, np.float32)
    with pytest.raises(ism.RunError, match=r"the float64 copy of the buffers "
                       r"for the reference interpreter needs 24000 bytes "
                       r"\(23.4 KiB\), more than the 10000 bytes \(9.8 KiB\) "
                       r"of memory available"):
        ism.interpret(vector_add(), "main", x, x.copy(), x.copy())


def test_interpret_grid_past_cuda_limits_raises():
    m = ism.Module.parse_file(
        os.path.join(ROOT, "test", "Runner", "Inputs", "limits.mlir"))
    x = np.zeros(8, np.float32)
    with pytest.raises(ism.RunError, match="grid y is 65536, more than the "
                       "65535 CUDA allows"):
        ism.interpret(m, "grid_y", x, x.copy(), x.copy())
    with pytest.raises(ism.RunError, match="1099511627264 program instances"):
        ism.interpret(m, "programs_2_40", x, x.copy(), x.copy())


def test_run_softmax_on_gpu():
    if gpu_error() is not None:
        pytest.skip(f"no GPU: {gpu_error()}")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((7, 1000)).astype(np.float16)
    y = np.zeros_like(x)
    result = ism.run(softmax(), "main", x, y, time=True, warmup=1, reps=3)
    np.testing.assert_allclose(y.astype(np.float64), softmax_reference(x),
                               rtol=1e-2, atol=1e-4)
    assert len(result.times_ms) == 3
    assert result.min_ms <= result.median_ms <= result.max_ms


def test_interpret_temporary_buffer():
    # memref.alloc in the host function: a buffer between two launches.
    m = ism.Module.parse("""
ism.kernel @scale(%x: memref<?xf32>, %t: memref<?xf32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %v = ism.load %x[%c0] : memref<?xf32> -> tensor<256xf32>
  %r = arith.addf %v, %v : tensor<256xf32>
  ism.store %r, %t[%c0] : tensor<256xf32> -> memref<?xf32>
  ism.return
}
ism.kernel @neg(%t: memref<?xf32>, %y: memref<?xf32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %v = ism.load %t[%c0] : memref<?xf32> -> tensor<256xf32>
  %r = arith.negf %v : tensor<256xf32>
  ism.store %r, %y[%c0] : tensor<256xf32> -> memref<?xf32>
  ism.return
}
func.func @main(%x: memref<?xf32>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %t = memref.alloc(%n) : memref<?xf32>
  ism.launch @scale grid(%c1) (%x, %t) : (memref<?xf32>, memref<?xf32>)
  ism.launch @neg grid(%c1) (%t, %y) : (memref<?xf32>, memref<?xf32>)
  memref.dealloc %t : memref<?xf32>
  return
}
""")
    x = np.random.default_rng(3).standard_normal(200).astype(np.float32)
    y = np.full(200, np.nan, np.float32)
    ism.interpret(m, "main", x, y)
    np.testing.assert_array_equal(y, -2 * x)


def test_run_result_energy_per_call():
    r = ism.RunResult([1.0, 3.0, 2.0], sm_clock_mhz=1500.0, power_w=700.0,
                      power_capped=1.0)
    assert r.median_ms == 2.0
    assert r.energy_per_call_mj == 1400.0
    assert ism.RunResult([1.0]).energy_per_call_mj is None


def test_power_monitor_says_why_it_has_no_figures():
    # Without a driver (or NVML) the monitor measures nothing and says why;
    # with both, start/stop give the clock and power.
    from ism import _ism
    monitor = _ism.PowerMonitor(0)
    monitor.start()
    power = monitor.stop()
    if "unavailable" in power:
        assert power["unavailable"]
    else:
        assert power["samples"] >= 2 and power["sm_clock_mhz"] > 0
