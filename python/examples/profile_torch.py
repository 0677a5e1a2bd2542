"""Profiles ism kernels launched from PyTorch with torch.profiler.

    PYTHONPATH=build/python_packages python3 python/examples/profile_torch.py
    PYTHONPATH=build/python_packages python3 python/examples/profile_torch.py --kernel rope
    nsys profile -t cuda,nvtx python3 python/examples/profile_torch.py   # the NVTX range

Compiles examples/softmax.mlir (``--kernel softmax``, the default) or the
RoPE forward of python/examples/rope_autograd.py (``--kernel rope``) with
``ism.compile``, launches it on torch's current stream next to the PyTorch
equivalent, inside ``torch.cuda.nvtx.range("ism-<kernel>")`` (for Nsight
Systems) and ``torch.profiler.record_function("ism-<kernel>")`` (the same
range as a row of the profiler's table), under
``torch.profiler.profile(activities=[CPU, CUDA])``, and prints
``prof.key_averages().table(sort_by="cuda_time_total", row_limit=10)``.
The ism kernel appears under its own name (``softmax``, ``rope_fwd``: the
``ism.kernel`` symbol is the PTX entry name); the script checks that it
does and that the results match PyTorch's, and exits non-zero otherwise.
``--trace trace.json`` also writes a Chrome trace.
"""

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))


def softmax_case(rows, cols):
    """(kernel name, launch, PyTorch equivalent, check) for softmax."""
    import torch
    import ism
    if cols > 4096:
        raise SystemExit("examples/softmax.mlir takes rows of up to 4096 "
                         "columns")
    m = ism.Module.parse_file(os.path.join(ROOT, "examples", "softmax.mlir"))
    k = ism.compile(m, entry="main")
    x = torch.randn(rows, cols, dtype=torch.float16, device="cuda")
    y = torch.empty_like(x)

    def check():
        torch.testing.assert_close(y, torch.softmax(x.float(), -1).half())

    return "softmax", lambda: k(x, y), lambda: torch.softmax(x, -1), check


def rope_case(seq, batch=4, heads=32, head_dim=128):
    """The same for the in-place RoPE forward (rope_fwd)."""
    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import rope_autograd as rope
    c, s = rope.rope_tables(seq, head_dim)
    cos, sin = torch.from_numpy(c).cuda(), torch.from_numpy(s).cuda()
    x = torch.randn(seq, batch, heads, head_dim, device="cuda").to(
        torch.bfloat16)
    t = x.clone()
    cf, sf = rope.eager_tables(cos, sin, seq, torch.bfloat16)
    rope.rope_ism_(t, cos, sin)        # compile and load before profiling

    def check():
        ref = x.clone()
        rope.rope_ism_(ref, cos, sin)
        c32, s32 = rope.eager_tables(cos, sin, seq, torch.float32)
        torch.testing.assert_close(
            ref, rope.rope_torch(x.float(), c32, s32).to(torch.bfloat16))

    return ("rope_fwd", lambda: rope.rope_ism_(t, cos, sin),
            lambda: rope.rope_torch(t, cf, sf), check)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kernel", choices=("softmax", "rope"),
                   default="softmax")
    p.add_argument("--rows", type=int, default=16384,
                   help="softmax rows (x is rows x 4096 fp16)")
    p.add_argument("--cols", type=int, default=4096)
    p.add_argument("--seq", type=int, default=4096,
                   help="RoPE sequence length (batch 4, 32 heads, dim 128)")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--trace", default=None,
                   help="also write a Chrome trace to this file")
    a = p.parse_args(argv)

    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    if a.kernel == "softmax":
        name, run_ism, run_torch, check = softmax_case(a.rows, a.cols)
    else:
        name, run_ism, run_torch, check = rope_case(a.seq)
    for _ in range(3):                 # warm up: module load, first launches
        run_ism()
        run_torch()
    torch.cuda.synchronize()

    with profile(activities=[ProfilerActivity.CPU,
                             ProfilerActivity.CUDA]) as prof:
        with torch.cuda.nvtx.range(f"ism-{a.kernel}"), \
                record_function(f"ism-{a.kernel}"):
            for _ in range(a.iters):
                run_ism()
        with torch.cuda.nvtx.range(f"torch-{a.kernel}"), \
                record_function(f"torch-{a.kernel}"):
            for _ in range(a.iters):
                run_torch()
        torch.cuda.synchronize()

    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=10))
    if a.trace:
        prof.export_chrome_trace(a.trace)
        print(f"profile_torch: wrote {a.trace}")

    keys = {e.key: e for e in prof.key_averages()}
    if name not in keys:
        print(f"profile_torch: no row named {name!r} in the profile (rows: "
              f"{', '.join(sorted(keys))})", file=sys.stderr)
        return 1
    if keys[name].count != a.iters:
        print(f"profile_torch: {name!r} ran {keys[name].count} times, "
              f"expected {a.iters}", file=sys.stderr)
        return 1
    check()
    print(f"profile_torch: the ism kernel {name!r} is in the profile under "
          f"its own name ({a.iters} launches) and matches PyTorch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
