"""ism.compile / ism.jit on the CPU: compiling without a GPU, the compile
cache (hit, miss, corrupt entry), argument checking for CUDA tensors
(through stand-ins with __cuda_array_interface__ and DLPack), direct kernel
launches and their grids. The launches themselves run in
test_launch_gpu.py."""

import glob
import os

import numpy as np
import pytest

import ism
from ism import launch as launch_module

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def read(name):
    with open(os.path.join(ROOT, "examples", name)) as f:
        return f.read()


class FakeCudaArray:
    """A stand-in for a CuPy array: only __cuda_array_interface__."""

    def __init__(self, shape, typestr="<f2", strides=None, ptr=0x7f0000000000,
                 **extra):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape), "typestr": typestr, "strides": strides,
            "data": (ptr, False), "version": 3, **extra}


@pytest.fixture
def cache(tmp_path):
    launch_module._compiled.clear()
    yield str(tmp_path / "cache")
    launch_module._compiled.clear()


def compile_softmax(cache, **kw):
    return ism.compile(read("softmax.mlir"), chip="sm_90a", cache=cache, **kw)


def test_compile_without_gpu_gives_ptx_and_kernels(cache):
    k = compile_softmax(cache)
    assert k.chip == "sm_90a"
    assert ".visible .entry softmax(" in k.ptx
    assert set(k.kernels) == {"softmax"}
    info = k.kernel_info()["softmax"]
    assert info["threads"] > 0
    assert k.signature == ["memref<?x?xf16>", "memref<?x?xf16>"]


def test_disk_cache_miss_then_hit(cache):
    first = compile_softmax(cache)
    assert not first.cache_hit
    assert glob.glob(os.path.join(cache, "**", "*.json"), recursive=True)
    launch_module._compiled.clear()  # a new process, as far as the cache knows
    second = compile_softmax(cache)
    assert second is not first
    assert second.cache_hit
    assert second.ptx == first.ptx
    assert second.cache_key == first.cache_key
    # Another chip is another entry.
    other = ism.compile(read("softmax.mlir"), chip="sm_80", cache=cache)
    assert not other.cache_hit and other.cache_key != first.cache_key


def test_compiler_warning_is_a_python_warning_also_from_the_cache(cache):
    # A co-scheduled kernel's min_ctas_per_sm cannot carry into the fused
    # kernel: ism-coschedule warns, and the warning comes back on a hit.
    text = read("coschedule_matmul_rmsnorm.mlir").replace(
        "    attributes {num_warps = 4 : i32} {",
        "    attributes {num_warps = 4 : i32, min_ctas_per_sm = 2 : i32} {", 1)
    assert "min_ctas_per_sm = 2" in text
    for hit in (False, True):
        launch_module._compiled.clear()
        with pytest.warns(ism.IsmWarning) as record:
            k = ism.compile(text, chip="sm_90a", cache=cache)
        assert k.cache_hit == hit
        messages = [str(w.message) for w in record]
        assert len(messages) == 1
        assert "warning: @rmsnorm's min_ctas_per_sm = 2 does not apply " \
            "inside the fused kernel" in messages[0]
    # Without the attribute: no warning.
    launch_module._compiled.clear()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", ism.IsmWarning)
        ism.compile(read("coschedule_matmul_rmsnorm.mlir"), chip="sm_90a",
                    cache=cache)


def test_same_module_is_compiled_once_per_process(cache):
    assert compile_softmax(cache) is compile_softmax(cache)


def test_corrupt_cache_entry_is_ignored_with_a_warning(cache):
    first = compile_softmax(cache)
    for path in glob.glob(os.path.join(cache, "**", "*.json"), recursive=True):
        with open(path, "w") as f:
            f.write("{ not json")
    launch_module._compiled.clear()
    again = compile_softmax(cache)
    assert not again.cache_hit
    assert again.ptx == first.ptx
    assert any("corrupt" in w for w in again.warnings), again.warnings


def test_no_cache_writes_nothing(cache):
    k = compile_softmax(False)
    assert not k.cache_hit
    assert not os.path.exists(cache)


def test_compile_with_a_pipeline_string_points_to_apply_pipeline():
    with pytest.raises(TypeError, match="apply_pipeline"):
        ism.compile(ism.Module.parse(read("softmax.mlir")), "canonicalize")


def test_bad_module_and_options(cache):
    with pytest.raises(ism.ParseError):
        ism.compile("ism.kernel @k(", chip="sm_90a", cache=cache)
    with pytest.raises(ValueError, match="coschedule"):
        compile_softmax(cache, coschedule="parallel")
    with pytest.raises(ism.RunError, match="no host function @nope"):
        compile_softmax(cache, entry="nope")


def test_argument_checks(cache):
    k = compile_softmax(cache)
    x = FakeCudaArray((4, 64))
    with pytest.raises(TypeError, match=r"takes 2 argument\(s\)"):
        k(x)
    with pytest.raises(TypeError, match="holds <f4 elements"):
        k(x, FakeCudaArray((4, 64), "<f4"))
    with pytest.raises(ValueError, match="takes 2 dimension"):
        k(x, FakeCudaArray((4, 8, 8)))
    with pytest.raises(ValueError, match="not contiguous"):
        k(x, FakeCudaArray((4, 64), strides=(2, 256)))
    with pytest.raises(TypeError, match="host arrays run with ism.run"):
        k(x, np.zeros((4, 64), np.float16))
    with pytest.raises(TypeError, match="must be a CUDA tensor"):
        k(x, [1, 2])
    with pytest.raises(TypeError, match="stream must be"):
        k(x, x, stream="default")


class RecordingProgram:
    """Stands in for the extension's Program: records waits and launches."""

    def __init__(self):
        self.calls = []

    def wait_for(self, stream, producers):
        self.calls.append(("wait_for", stream, list(producers)))

    def launch(self, index, args, stream):
        self.calls.append(("launch", index, stream))


def test_cuda_array_interface_streams_are_waited_for(cache):
    """A __cuda_array_interface__ (v3) producer's stream orders the launch
    after the producer's work: the launch stream waits for each one named
    (None: ready now), before the launch; 0 is ambiguous and an error."""
    k = compile_softmax(cache)
    fn = k._entry
    recorder = RecordingProgram()
    fn.program = recorder
    x = FakeCudaArray((4, 64), stream=0x1234)
    y = FakeCudaArray((4, 64), stream=None)
    fn((x, y), stream=0x77)
    assert recorder.calls == [("wait_for", 0x77, [0x1234]),
                              ("launch", 0, 0x77)]
    recorder.calls.clear()
    fn((FakeCudaArray((4, 64)), y), stream=0x77)  # no stream key at all
    assert recorder.calls == [("launch", 0, 0x77)]
    recorder.calls.clear()
    fn((FakeCudaArray((4, 64), stream=1), FakeCudaArray((4, 64), stream=2)),
       stream=0x77)
    assert recorder.calls[0] == ("wait_for", 0x77, [1, 2])
    with pytest.raises(ValueError, match="stream 0 is ambiguous"):
        fn((FakeCudaArray((4, 64), stream=0), y), stream=0x77)
    with pytest.raises(TypeError, match="stream must be an int or None"):
        fn((FakeCudaArray((4, 64), stream="s"), y), stream=0x77)


def test_contiguity_rule_ignores_unit_dimensions():
    assert launch_module._is_contiguous((4, 1, 8), (8, 123, 1))
    assert launch_module._is_contiguous((3, 5), (5, 1))
    assert not launch_module._is_contiguous((3, 5), (1, 3))
    assert not launch_module._is_contiguous((3, 5), (10, 2))


def test_static_sizes_are_checked(cache):
    text = read("softmax.mlir").replace("memref<?x?xf16>", "memref<?x64xf16>")
    k = ism.compile(text, chip="sm_90a", cache=cache)
    with pytest.raises(ValueError, match="dimension 1 is 32, not 64"):
        k(FakeCudaArray((4, 32)), FakeCudaArray((4, 32)))


SCALARS = """
ism.kernel @scale(%x: memref<?xf32>, %n: index, %v: f32)
    attributes {num_warps = 4 : i32} {
  ism.return
}
"""


def test_scalar_checks(cache):
    k = ism.compile(SCALARS, entry=None, chip="sm_90a", cache=cache)
    x = FakeCudaArray((100,), "<f4")
    assert k.scale.signature == ["memref<?xf32>", "index", "f32"]
    with pytest.raises(TypeError, match="must be an integer"):
        k.scale[(1,)](x, 2.5, 1.0)
    with pytest.raises(TypeError, match="must be a number"):
        k.scale[(1,)](x, True, 1.0)
    with pytest.raises(TypeError, match="must be a number"):
        k.scale[(1,)](x, 3, "1.0")
    with pytest.raises(TypeError, match="no host function"):
        k(x, 3, 1.0)


def test_dlpack_description_of_a_host_array():
    a = np.zeros((3, 8), np.float16)[:, ::2]
    ptr, shape, strides, dtype, device = ism._dlpack.describe(a)
    assert ptr == a.__array_interface__["data"][0]
    assert shape == (3, 4) and strides == (8, 2)
    assert dtype == (2, 16) and device[0] == 1  # kDLCPU


def test_direct_launch_grid_and_names(cache):
    k = compile_softmax(cache)
    assert k.softmax is k.kernels["softmax"]
    with pytest.raises(AttributeError, match="its kernels: softmax"):
        k.rmsnorm
    with pytest.raises(TypeError, match="tuple of 1 to 3 ints"):
        k.softmax[(1, 2, 3, 4)]
    with pytest.raises(TypeError, match="tuple of 1 to 3 ints"):
        k.softmax[1.5]
    with pytest.raises(ValueError, match="negative"):
        k.softmax[(-1,)]
    with pytest.raises(TypeError, match=r"takes 2 argument\(s\)"):
        k.softmax[4](FakeCudaArray((4, 64)))


def test_launch_without_a_gpu_says_so(cache):
    if ism.runtime_available() and os.path.exists("/dev/nvidia0"):
        pytest.skip("this machine has a GPU")
    k = compile_softmax(cache)
    x = FakeCudaArray((4, 64))
    with pytest.raises(ism.RuntimeUnavailable):
        k(x, x)


class FakeTensor:
    """A stand-in for a torch tensor, as the extension's fast path reads one:
    dtype, get_device(), is_contiguous(), data_ptr(), shape."""

    def __init__(self, shape, dtype, device=0, contiguous=True,
                 ptr=0x7f0000000000):
        self.shape = tuple(shape)
        self.dtype = dtype
        self._device = device
        self._contiguous = contiguous
        self._ptr = ptr

    def get_device(self):
        return self._device

    def is_contiguous(self):
        return self._contiguous

    def data_ptr(self):
        return self._ptr


class FakeTensorSubclass(FakeTensor):
    """Like torch.nn.Parameter: a subclass of the tensor type."""


def no_gpu():
    return not (ism.runtime_available() and os.path.exists("/dev/nvidia0"))


def test_fast_path_declines_what_it_does_not_take(cache):
    """launch_fast answers False (nothing raised, nothing launched) for any
    argument or stream it does not take as it is, so that the Python path
    converts it or raises the error naming it; before bind_torch it takes
    nothing."""
    half, single = object(), object()
    text = read("softmax.mlir").replace("memref<?x?xf16>", "memref<?x64xf16>")
    k = ism.compile(text, chip="sm_90a", cache=cache)
    program = k._program
    x = FakeTensor((4, 64), half)
    if not program.torch_bound:  # torch not imported here
        assert not program.launch_fast(0, (x, x), (), 0x77)
    streams = []
    program.bind_torch(FakeTensor, lambda device: streams.append(device) or
                       0x55, {"f16": (half,), "f32": (single,)})
    assert program.torch_bound
    declined = [
        ((x, FakeTensor((4, 64), single)), None),          # dtype
        ((x, FakeTensor((4, 64), half, device=1)), None),  # device
        ((x, FakeTensor((4, 64), half, device=-1)), None),  # the CPU
        ((x, FakeTensor((4, 64), half, contiguous=False)), None),
        ((x, FakeTensor((4, 8, 8), half)), None),          # rank
        ((x, FakeTensor((4, 32), half)), None),            # static size
        ((x, FakeCudaArray((4, 64))), None),               # not a tensor
        ((x,), None),                                      # too few
        ((x, x, x), None),                                 # too many
        ((x, x), "default"),                               # a stream object
        ((x, x), True),                                    # a bool stream
    ]
    for args, stream in declined:
        assert program.launch_fast(0, args, (), stream) is False, (args,
                                                                   stream)
    # The Python path still names the problem.
    with pytest.raises(ValueError, match="dimension 1 is 32, not 64"):
        k(FakeCudaArray((4, 64)), FakeCudaArray((4, 32)))
    if no_gpu():
        # Taken: it gets as far as the GPU, on torch's current stream.
        for args in ((x, x), (x, FakeTensorSubclass((4, 64), half))):
            with pytest.raises(ism.RuntimeUnavailable):
                program.launch_fast(0, args, (), None)
        assert streams == [0, 0]


def test_fast_path_scalars(cache):
    """Scalars: an int for an integer parameter, an int or a float for a
    float one; a bool, a float for an integer or a string is declined."""
    half = object()
    k = ism.compile(SCALARS.replace("f32>", "f16>"), entry=None,
                    chip="sm_90a", cache=cache)
    program = k._program
    program.bind_torch(FakeTensor, lambda device: 0, {"f16": (half,)})
    x = FakeTensor((100,), half)
    grid = (1, 1, 1)
    for scalars in ((True, 1.0), (2.5, 1.0), (3, "1.0"), (3, None),
                    (2 ** 64, 1.0)):
        assert not program.launch_fast(0, (x,) + scalars, grid, 0x77)
    if no_gpu():
        for scalars in ((3, 1.0), (3, 1), (-2, 0.5)):
            with pytest.raises(ism.RuntimeUnavailable):
                program.launch_fast(0, (x,) + scalars, grid, 0x77)


def test_jit_compiles_once_per_constexpr_set(cache):
    calls = []

    @ism.jit(chip="sm_90a", cache=cache)
    def softmax(WARPS=4):
        calls.append(WARPS)
        return read("softmax.mlir").replace("num_warps = 4", f"num_warps = "
                                            f"{WARPS}")

    a = softmax.compile(WARPS=4)
    assert softmax.compile(WARPS=4) is a
    b = softmax.compile(WARPS=8)
    assert b is not a and calls == [4, 8]
    assert softmax.__name__ == "softmax"


def test_nvtx_range_is_a_context_manager():
    with ism.nvtx_range("test"):
        pass


def test_threads_loading_the_driver_at_once(tmp_path):
    """The first compiles of a process, on several threads at once (as
    ism.autotune does), all load the CUDA driver. Each must wait for the one
    load to finish, not call into a half-loaded driver (that crashed on the
    H200). The driver here is test/Runner/Inputs/fake_libcuda.c, whose cuInit
    takes 300 ms, and which fails device queries made before cuInit has
    returned, as the real driver does."""
    import shutil
    import subprocess
    import sys
    cc = shutil.which(os.environ.get("CC", "cc"))
    if not cc:
        pytest.skip("no C compiler for the fake CUDA driver")
    here = os.path.dirname(os.path.abspath(__file__))
    fake = os.path.join(here, "..", "Runner", "Inputs", "fake_libcuda.c")
    subprocess.run([cc, "-shared", "-fPIC", fake, "-o",
                    str(tmp_path / "libcuda.so.1")], check=True)
    example = os.path.join(here, "..", "..", "examples", "vector_add.mlir")
    script = f"""
import threading, ism
text = open({example!r}).read()
chips = []
def compile_one():
    chips.append(ism.compile(ism.Module.parse(text)).chip)
threads = [threading.Thread(target=compile_one) for _ in range(6)]
for t in threads: t.start()
for t in threads: t.join()
print(len(chips), sorted(set(chips)))
"""
    env = dict(os.environ,
               LD_LIBRARY_PATH=os.pathsep.join(
                   [str(tmp_path), os.environ.get("LD_LIBRARY_PATH", "")]),
               FAKE_CUDA_INIT_MS="300", ISM_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", script], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    assert r.stdout.strip() == "6 ['sm_90a']"
