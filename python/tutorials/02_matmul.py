"""Tutorial 2: a tiled matrix product on the tensor cores.

One program computes a BLOCK_M x BLOCK_N tile of C = A x B, stepping through
K in BLOCK_K slices with `ism.dot` in an `scf.for` loop. The compiler puts
the loop on the tensor cores: wgmma fed by TMA on sm_90a (Hopper), mma.sync
on sm_80 (Ampere). The CPU part compiles for both and checks the program in
the float64 interpreter; the GPU part checks it against torch.matmul and
times both.

    PYTHONPATH=build/python_packages python3 python/tutorials/02_matmul.py

The page that explains it: docs/guide/02-matmul.md.
"""

import numpy as np

import ism


# --8<-- [start:build]
def build_matmul(bm=128, bn=128, bk=64, num_warps=8, dtype="f16") -> ism.Module:
    """C = A x B, A M x K, B K x N, f32 accumulation, any M, N, K."""
    m = ism.Module()
    mat = ism.memref((None, None), dtype)
    with m.kernel("matmul", [mat, mat, mat], num_warps=num_warps) as k:
        a_buf, b_buf, c_buf = k.args
        m0 = k.program_id("x") * k.const(bm, "index")   # this program's tile
        n0 = k.program_id("y") * k.const(bn, "index")
        c0 = k.const(0, "index")
        K = k.dim(a_buf, 1)

        def step(kk, acc):                           # one BLOCK_K slice
            a = k.load(a_buf, [m0, kk], (bm, bk))
            b = k.load(b_buf, [kk, n0], (bk, bn))
            return k.dot(a, b, acc)                  # acc += a @ b, in f32

        acc = k.for_range(c0, K, k.const(bk, "index"),
                          [k.zeros((bm, bn), "f32")], step)
        k.store(acc.to(dtype), c_buf, [m0, n0])
    with m.host("main", [mat, mat, mat]) as h:
        a_buf, b_buf, c_buf = h.args
        grid = [h.ceildiv(h.dim(a_buf, 0), h.const(bm, "index")),
                h.ceildiv(h.dim(b_buf, 1), h.const(bn, "index"))]
        h.launch("matmul", grid, [a_buf, b_buf, c_buf])
    return m
# --8<-- [end:build]


def cpu():
    # --8<-- [start:cpu]
    m = build_matmul()
    hopper = ism.to_ptx(m, chip="sm_90a")
    ampere = ism.to_ptx(m, chip="sm_80")
    print("sm_90a uses wgmma:", "wgmma.mma_async" in hopper,
          "| sm_80 uses mma.sync:", "mma.sync" in ampere)
    # Compiled for a chip, a program needs no GPU; its launch facts:
    info = ism.compile(m, chip="sm_90a").kernel_info()["matmul"]
    print(f"sm_90a kernel: {info['threads']} threads (a producer warpgroup "
          f"and 8 consumer warps), {info['shared_memory_bytes']} bytes of "
          f"shared memory, persistent: {info['persistent']}")

    rng = np.random.default_rng(0)
    M, N, K = 200, 136, 160                  # partial tiles on every side
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    ism.interpret(m, "main", a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    err = np.abs(c - ref).max() / np.abs(ref).max()
    print(f"interpreted {M}x{N}x{K}: max error {err:.1e} of the largest value")
    assert err < 1e-2
    # --8<-- [end:cpu]
    return dict(hopper=hopper, ampere=ampere, info=info, error=err)


def gpu():
    # --8<-- [start:gpu]
    import torch

    mm = ism.compile(build_matmul())
    for M, N, K in ((1000, 1000, 1000), (4096, 4096, 4096)):
        a = torch.randn(M, K, dtype=torch.float16, device="cuda")
        b = torch.randn(K, N, dtype=torch.float16, device="cuda")
        c = torch.empty(M, N, dtype=torch.float16, device="cuda")
        mm(a, b, c)
        torch.testing.assert_close(c, a @ b, atol=0.1, rtol=1e-2)
    for name, fn in (("ism", lambda: mm(a, b, c)),
                     ("cuBLAS", lambda: torch.matmul(a, b))):
        ms = median_ms(fn)
        print(f"4096^3 f16, {name}: {ms:.3f} ms, "
              f"{2 * 4096 ** 3 / ms / 1e9:.0f} TFLOP/s")
    # --8<-- [end:gpu]


def median_ms(fn, reps=50):
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
