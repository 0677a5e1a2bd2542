#!/usr/bin/env python3
"""Host-side cost of one kernel launch from Python, ism against Triton (and
PyTorch's own elementwise add for scale), in one run on one GPU.

Each implementation launches a tiny vector add (4096 f32 elements: about two
microseconds of GPU time) `--calls` times back to back on the current torch
stream without synchronising; the time per call of that loop is host-bound,
so it is the launch overhead: Python argument handling, packing and
cuLaunchKernel. The loop is repeated `--reps` times and the median is
reported, after a warm-up that compiles and caches everything.

    python3 bench/launch_overhead.py [--calls 2000] [--reps 15] [--json F]

Rows: `ism k(x, y, z)` calls the module's host function (grid computed in
IR by the host executor); the "Python argument path" row makes the same
call with the arguments converted in Python (as CuPy and DLPack arrays
are) instead of read by the extension; `ism k.vector_add[grid](...)`
launches the kernel directly; `triton add[grid](...)` is the Triton tutorial's add kernel with
its JIT launcher; `torch.add(out=)` is PyTorch's native op.
"""

import argparse
import json
import os
import statistics
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def per_call_us(fn, calls, reps, sync):
    for _ in range(50):  # warm-up: compile, caches, descriptor packing
        fn()
    sync()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        end = time.perf_counter()
        sync()
        times.append((end - start) / calls * 1e6)
    return statistics.median(times), min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()

    import torch
    import ism

    n = args.n
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    z = torch.empty(n, device="cuda")
    sync = torch.cuda.synchronize

    with open(os.path.join(ROOT, "examples", "vector_add.mlir")) as f:
        k = ism.compile(f.read())
    block = 1024
    grid = ((n + block - 1) // block,)
    direct = k.vector_add[grid]
    rows = []

    z.fill_(float("nan"))
    k(x, y, z)
    torch.testing.assert_close(z, x + y)
    rows.append(("ism k(x, y, z)",
                 per_call_us(lambda: k(x, y, z), args.calls, args.reps, sync)))
    # The same call through the Python argument path (what CuPy and DLPack
    # arguments take; torch tensors took it too before the extension's
    # launch_fast), for the difference in the same run.
    entry = k._entry
    z.fill_(float("nan"))
    entry.convert_and_launch((x, y, z), None, ())
    torch.testing.assert_close(z, x + y)
    rows.append(("ism k(x, y, z), Python argument path",
                 per_call_us(lambda: entry.convert_and_launch((x, y, z), None,
                                                              ()),
                             args.calls, args.reps, sync)))
    z.fill_(float("nan"))
    direct(x, y, z)
    torch.testing.assert_close(z, x + y)
    rows.append(("ism k.vector_add[grid](...)",
                 per_call_us(lambda: direct(x, y, z), args.calls,
                             args.reps, sync)))

    try:
        import triton
        import triton.language as tl

        @triton.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n_elements,
                       BLOCK_SIZE: tl.constexpr):
            pid = tl.program_id(axis=0)
            offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
            mask = offsets < n_elements
            a = tl.load(x_ptr + offsets, mask=mask)
            b = tl.load(y_ptr + offsets, mask=mask)
            tl.store(out_ptr + offsets, a + b, mask=mask)

        z.fill_(float("nan"))
        add_kernel[grid](x, y, z, n, BLOCK_SIZE=block)
        torch.testing.assert_close(z, x + y)
        rows.append((f"triton {triton.__version__} add[grid](...)",
                     per_call_us(lambda: add_kernel[grid](x, y, z, n,
                                                          BLOCK_SIZE=block),
                                 args.calls, args.reps, sync)))
    except ImportError:
        print("triton is not installed: no Triton row", file=sys.stderr)

    rows.append(("torch.add(x, y, out=z)",
                 per_call_us(lambda: torch.add(x, y, out=z), args.calls,
                             args.reps, sync)))

    name = torch.cuda.get_device_name()
    print(f"launch overhead on {name}, {args.calls} calls x {args.reps} "
          f"loops, vector add of {n} f32 (us per call)")
    print(f"| launch | median us | min us |")
    print(f"| --- | --- | --- |")
    for label, (median, best) in rows:
        print(f"| {label} | {median:.2f} | {best:.2f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": name, "calls": args.calls, "reps": args.reps,
                       "rows": [{"launch": label, "median_us": m,
                                 "min_us": b} for label, (m, b) in rows]},
                      f, indent=1)


if __name__ == "__main__":
    main()
