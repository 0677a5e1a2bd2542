"""Tutorial 3: calling kernels from PyTorch, with constexprs and autotuning.

`ism.jit` turns a module builder into a function called on torch tensors,
its keyword arguments compile-time constants; `ism.autotune` picks those
constants by timing candidate configurations on the call's own tensors and
remembers the winner on disk. The CPU part compiles every candidate for the
H200's chip and shows what the tuner prunes on (threads, shared memory);
the GPU part tunes, checks and times the GEMM of tutorial 2.

    PYTHONPATH=build/python_packages python3 python/tutorials/03_pytorch_autotune.py

The page that explains it: docs/guide/03-pytorch-autotune.md.
"""

import importlib.util
import os

import ism

HERE = os.path.dirname(os.path.abspath(__file__))


def tutorial(name):
    """Another tutorial script, as a module (their names start with digits)."""
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(HERE, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build_matmul = tutorial("02_matmul").build_matmul

# --8<-- [start:configs]
CONFIGS = [
    ism.Config(bm=128, bn=256, bk=64, num_warps=8),
    ism.Config(bm=128, bn=128, bk=64, num_warps=8),
    ism.Config(bm=64, bn=128, bk=64, num_warps=4),
    ism.Config(bm=64, bn=64, bk=64, num_warps=4),
]


@ism.autotune(configs=CONFIGS)
def matmul(bm, bn, bk, num_warps):
    """One configuration's module; the tuner calls this once per Config."""
    return build_matmul(bm, bn, bk, num_warps)
# --8<-- [end:configs]


def cpu():
    # --8<-- [start:cpu]
    sizes = {}
    for config in CONFIGS:      # what the tuner compiles, here for the H200
        program = ism.compile(build_matmul(**config.kwargs), chip="sm_90a")
        info = program.kernel_info()["matmul"]
        sizes[config] = info
        print(f"{config}: {info['threads']} threads, "
              f"{info['shared_memory_bytes'] // 1024} KiB of shared memory")
    # --8<-- [end:cpu]
    return sizes


def gpu():
    # --8<-- [start:gpu]
    import torch

    M, N, K = 8192, 8192, 4096
    a = torch.randn(M, K, dtype=torch.float16, device="cuda")
    b = torch.randn(K, N, dtype=torch.float16, device="cuda")
    c = torch.empty(M, N, dtype=torch.float16, device="cuda")

    result = matmul.tune(a, b, c)        # the first call for this shape does it
    print(f"tuned in {result.tuning_s:.1f} s, best {result.best}")
    for config, ms in sorted(result.timings_ms.items(), key=lambda t: t[1]):
        print(f"  {config}: {ms:.3f} ms")
    matmul(a, b, c)                      # the winner; later calls: a lookup
    torch.testing.assert_close(c, a @ b, atol=0.1, rtol=1e-2)

    # One configuration by hand: ism.jit compiles once per distinct set of
    # keyword arguments, and k.<kernel>[grid](...) launches one kernel.
    jitted = ism.jit(build_matmul)
    jitted(a, b, c, bm=128, bn=128, bk=64, num_warps=8)
    program = jitted.compile(bm=128, bn=128, bk=64, num_warps=8)
    program.matmul[(M // 128, N // 128)](a, b, c)

    with torch.cuda.stream(torch.cuda.Stream()):   # any current stream
        matmul(a, b, c)
    torch.cuda.synchronize()
    # --8<-- [end:gpu]
    return result


if __name__ == "__main__":
    cpu()
    have_gpu = tutorial("01_first_kernel").have_gpu
    if have_gpu():
        gpu()
    else:
        print("no CUDA GPU with PyTorch here: the GPU part is skipped")
