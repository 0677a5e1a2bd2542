#!/usr/bin/env python3
"""Does the PTX assembler explain ism's per-launch gap to Triton on RoPE?

ism hands its PTX to the driver's JIT; Triton assembles its own with the
ptxas it ships. This times ism's RoPE (1 token, 8 warps, dynamic sizes)
loaded three ways: through the driver's JIT, and assembled by each ptxas
given with --ptxas (ISM_PTXAS, read when a kernel is first loaded), beside
Triton's kernel with 8 warps, in interleaved rounds (median of --reps calls
each, L2 flushed, GPU time). With --sass DIR it also writes each
assembler's SASS of the forward kernel and its register count.

    python3 bench/experiments/rope_ptxas.py [--seqs 512,1024,2048,8192]
        [--ptxas /usr/local/cuda/bin/ptxas,triton] [--sass DIR]
"""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python", "examples"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import torch  # noqa: E402
import ism  # noqa: E402
import rope_autograd as R  # noqa: E402
import triton_kernels as tk  # noqa: E402
from rope_variants import print_rounds, time_rounds  # noqa: E402


def triton_ptxas() -> str:
    import triton.backends.nvidia as nv
    return os.path.join(os.path.dirname(nv.__file__), "bin", "ptxas")


def version(ptxas: str) -> str:
    out = subprocess.run([ptxas, "--version"], capture_output=True,
                         text=True).stdout.strip().splitlines()
    return out[-1] if out else "?"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seqs", default="512,1024,2048,8192")
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--reps", type=int, default=200)
    p.add_argument("--ptxas", default="/usr/local/cuda/bin/ptxas,triton")
    p.add_argument("--sass", default=None)
    a = p.parse_args()
    dim, half = 128, 64
    text = R.module_text("bf16", a.heads, half, 1, 8)
    assemblers = {"driver JIT": ""}
    for x in a.ptxas.split(","):
        path = triton_ptxas() if x == "triton" else x
        assemblers[f"ptxas {version(path).split(',')[-1].strip()}"
                   f" ({'triton' if x == 'triton' else path})"] = path
    drv = torch.cuda.get_device_properties(0)
    print(f"device: {drv.name}; torch CUDA {torch.version.cuda}")
    for n, path in assemblers.items():
        print(f"  {n}: {path or '(cuModuleLoadDataEx on the PTX)'}")
    seq0 = 512
    c_np, s_np = R.rope_tables(seq0, dim)
    cos, sin = torch.from_numpy(c_np).cuda(), torch.from_numpy(s_np).cuda()
    t = torch.randn(seq0, a.batch, a.heads, dim, device="cuda").bfloat16()
    ref = t.clone()
    kern = {}
    for n, path in assemblers.items():
        os.environ["ISM_PTXAS"] = path
        for e in ("main", "backward"):
            k = ism.compile(ism.Module.parse(text), entry=e)
            k(t, cos, sin)  # loads the module now, with this ISM_PTXAS
            kern[(n, e)] = k
        torch.cuda.synchronize()
    os.environ.pop("ISM_PTXAS", None)
    # Every variant ran forward then backward once: t is back where it was.
    torch.testing.assert_close(t, ref, atol=0.1, rtol=0.02)
    if a.sass:
        os.makedirs(a.sass, exist_ok=True)
        ptx = ism.to_ptx(ism.Module.parse(text))
        src = os.path.join(a.sass, "rope.ptx")
        open(src, "w").write(ptx)
        for n, path in assemblers.items():
            if not path:
                continue
            tag = "triton" if "triton" in n else "cuda"
            cubin = os.path.join(a.sass, f"rope-{tag}.cubin")
            r = subprocess.run([path, "-arch=sm_90a", "-v", "-o", cubin, src],
                               capture_output=True, text=True)
            print(f"{n}:\n{r.stderr.strip()}")
            with open(os.path.join(a.sass, f"rope-{tag}.sass"), "w") as f:
                subprocess.run(["cuobjdump", "-sass", cubin], stdout=f)
    timer = R.Timer(20, a.reps)
    for seq in map(int, a.seqs.split(",")):
        c_np, s_np = R.rope_tables(seq, dim)
        cos, sin = torch.from_numpy(c_np).cuda(), torch.from_numpy(s_np).cuda()
        t = torch.randn(seq, a.batch, a.heads, dim, device="cuda").bfloat16()
        for direction in ("fwd", "bwd"):
            bwd = direction == "bwd"
            variants = {
                "ism, " + n: (lambda k=kern[(n, "backward" if bwd else "main")]:
                              k(t, cos, sin))
                for n in assemblers}
            variants["triton 8 warps"] = lambda: tk.rope_inplace_triton(
                t, cos, sin, backward=bwd, num_warps=8)
            print_rounds(f"seq {seq} {direction}",
                         time_rounds(timer, variants, a.rounds),
                         "triton 8 warps", 60)

if __name__ == "__main__":
    main()
