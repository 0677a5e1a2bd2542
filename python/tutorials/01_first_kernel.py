"""Tutorial 1: a first kernel (vector add) and a row softmax.

Builds two tile programs with the Python builder, compiles them to PTX, runs
them in the float64 reference interpreter on NumPy arrays and, when a GPU
and PyTorch are there, on CUDA tensors against PyTorch.

    PYTHONPATH=build/python_packages python3 python/tutorials/01_first_kernel.py

The page that explains it: docs/guide/01-first-kernel.md.
"""

import math

import numpy as np

import ism


# --8<-- [start:vector_add]
def build_vector_add(block: int = 1024) -> ism.Module:
    """z = x + y: program i adds elements [i * block, (i + 1) * block)."""
    m = ism.Module()
    vec = ism.memref((None,), "f32")               # memref<?xf32>
    with m.kernel("vector_add", [vec, vec, vec], num_warps=4) as k:
        x, y, z = k.args
        start = k.program_id("x") * k.const(block, "index")
        a = k.load(x, [start], (block,))            # a tile of 1024 f32
        b = k.load(y, [start], (block,))
        k.store(a + b, z, [start])                  # elements past n: skipped
    with m.host("main", [vec, vec, vec]) as h:
        x, y, z = h.args
        n = h.dim(x, 0)
        h.launch("vector_add", [h.ceildiv(n, h.const(block, "index"))],
                 [x, y, z])
    return m
# --8<-- [end:vector_add]


# --8<-- [start:softmax]
def build_softmax(cols: int = 1024, num_warps: int = 4) -> ism.Module:
    """Row softmax of an f16 matrix with up to `cols` columns: one program
    per row, the row one tile, the arithmetic in f32."""
    m = ism.Module()
    mat = ism.memref((None, None), "f16")           # memref<?x?xf16>
    with m.kernel("softmax", [mat, mat], num_warps=num_warps) as k:
        x, y = k.args
        row = k.program_id("x")
        c0 = k.const(0, "index")
        t = k.load(x, [row, c0], (1, cols), padding=-math.inf)
        v = k.reshape(t, (cols,)).to("f32")
        e = k.exp(v - k.max(v, axis=0))             # the row maximum, splat
        p = (e / k.sum(e, axis=0)).to("f16")
        k.store(k.reshape(p, (1, cols)), y, [row, c0])
    with m.host("main", [mat, mat]) as h:
        x, y = h.args
        h.launch("softmax", [h.dim(x, 0)], [x, y])
    return m
# --8<-- [end:softmax]


def softmax_reference(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def cpu():
    """Build, compile to PTX and interpret both programs; returns what a
    test checks."""
    # --8<-- [start:cpu]
    add = build_vector_add()
    print(add)                                      # the module's MLIR
    ptx = ism.to_ptx(add, chip="sm_90a")            # no GPU needed
    print(f"vector_add: {len(ptx.splitlines())} lines of PTX")

    rng = np.random.default_rng(0)
    x = rng.standard_normal(5000).astype(np.float32)    # 5 programs, 1 partial
    y = rng.standard_normal(5000).astype(np.float32)
    z = np.zeros_like(x)
    ism.interpret(add, "main", x, y, z)             # float64 reference, on the CPU
    assert np.array_equal(z, x + y)

    soft = build_softmax()
    a = rng.standard_normal((6, 1000)).astype(np.float16)  # rows < the tile
    out = np.zeros_like(a)
    ism.interpret(soft, "main", a, out)
    err = np.abs(out.astype(np.float64) - softmax_reference(a)).max()
    print(f"softmax: max error {err:.2e} against NumPy in float64")
    assert err < 1e-3
    # --8<-- [end:cpu]
    return dict(ptx=ptx, softmax_error=err)


def gpu():
    """The same programs on CUDA tensors, checked against PyTorch."""
    # --8<-- [start:gpu]
    import torch

    add = ism.compile(build_vector_add())           # PTX for this GPU, cached on disk
    x = torch.randn(1 << 20, device="cuda")
    y = torch.randn(1 << 20, device="cuda")
    z = torch.empty_like(x)
    add(x, y, z)                                    # @main on torch's current stream
    torch.testing.assert_close(z, x + y)

    soft = ism.compile(build_softmax(cols=4096))
    a = torch.randn(16384, 4096, dtype=torch.float16, device="cuda")
    out = torch.empty_like(a)
    soft(a, out)
    torch.testing.assert_close(out, torch.softmax(a.float(), dim=1).half(),
                               atol=1e-3, rtol=1e-2)
    for name, fn in (("ism", lambda: soft(a, out)),
                     ("torch", lambda: torch.softmax(a, dim=1))):
        ms = median_ms(fn)
        print(f"softmax 16384x4096 f16, {name}: {ms:.3f} ms, "
              f"{2 * a.numel() * 2 / ms / 1e6:.0f} GB/s")
    # --8<-- [end:gpu]


def median_ms(fn, reps=50):
    """Median time of `fn` on the GPU (CUDA events, after a warm-up)."""
    import torch
    fn()
    times = []
    for _ in range(reps):
        start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def have_gpu():
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


if __name__ == "__main__":
    cpu()
    if have_gpu():
        gpu()
    else:
        print("no CUDA GPU with PyTorch here: the GPU part is skipped")
