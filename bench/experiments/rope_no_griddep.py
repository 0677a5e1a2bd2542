#!/usr/bin/env python3
"""Does the dependent-launch prologue cost the RoPE kernel? Every ism kernel
for sm_90 starts with griddepcontrol.wait and griddepcontrol.launch_dependents
(ism-dependent-launch; SASS ACQBULK and PREEXIT), which Triton's kernels do
not have. This compiles the RoPE module into a compile cache, makes a second
cache entry whose PTX lacks those two instructions (the runtime then
launches the kernels plainly: it looks for griddepcontrol.wait), and times
both against Triton in interleaved rounds, as rope_variants.py does.

    python3 bench/experiments/rope_no_griddep.py [--seqs 512,1024,2048,8192]
"""
import argparse
import glob
import json
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python", "examples"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import ism  # noqa: E402
from ism import launch as launch_module  # noqa: E402
import rope_autograd as R  # noqa: E402
import triton_kernels as tk  # noqa: E402
from rope_variants import rope_inputs, time_against_triton  # noqa: E402


def stripped_program(text, entry):
    """The program of `text` loaded from a cache entry whose PTX has no
    griddepcontrol instructions."""
    cache = tempfile.mkdtemp(prefix="ism-nogriddep-")
    ism.compile(text, entry=entry, cache=cache)
    (path,) = glob.glob(os.path.join(cache, "**", "*.json"), recursive=True)
    with open(path) as f:
        entry_json = json.load(f)
    ptx = entry_json["module"]["ptx"]
    lines = [ln for ln in ptx.splitlines() if "griddepcontrol" not in ln]
    assert len(lines) < len(ptx.splitlines()), "no griddepcontrol in the PTX"
    entry_json["module"]["ptx"] = "\n".join(lines) + "\n"
    with open(path, "w") as f:
        json.dump(entry_json, f)
    launch_module._compiled.clear()
    k = ism.compile(text, entry=entry, cache=cache)
    assert k.cache_hit and "griddepcontrol" not in k.ptx
    return k


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seqs", default="512,1024,2048,8192")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--reps", type=int, default=200)
    a = p.parse_args()
    batch, heads, dim = 4, 32, 128
    text = R.module_text("bf16", heads, dim // 2)
    kern = {}
    for e in ("main", "backward"):
        kern[("ism", e)] = ism.compile(text, entry=e, cache=False)
        kern[("ism, no griddepcontrol", e)] = stripped_program(text, e)
    timer = R.Timer(20, a.reps)
    print(f"device: {torch.cuda.get_device_name()}; bf16 (seq, {batch}, "
          f"{heads}, {dim}); us per round (median of {a.reps} calls each)")
    for seq in map(int, a.seqs.split(",")):
        t, cos, sin = rope_inputs(seq, batch, heads, dim)
        ref = t.clone()
        for name in ("ism", "ism, no griddepcontrol"):
            x = ref.clone()
            kern[(name, "main")](x, cos, sin)
            y = ref.clone()
            tk.rope_inplace_triton(y, cos, sin)
            torch.testing.assert_close(x, y)
        for direction in ("fwd", "bwd"):
            bwd = direction == "bwd"
            e = "backward" if bwd else "main"
            time_against_triton(
                timer, f"seq {seq} {direction}",
                {n: kern[(n, e)] for n in ("ism", "ism, no griddepcontrol")},
                t, cos, sin, bwd, a.rounds, 24)


if __name__ == "__main__":
    main()
