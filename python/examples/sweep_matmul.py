"""Sweeps matmul tile sizes: builds and compiles each configuration and
reports which fit the SM.

    PYTHONPATH=build/python_packages:python/examples \\
        python3 python/examples/sweep_matmul.py [--chip sm_90a] [--stages 3]

Every configuration is built from Python and verified, then compiled: to PTX
through the ism-to-ptx pipeline when this build has it, else only through
the tile-level pipeline (ism-combine, canonicalize, cse). Shared memory and
register use are ESTIMATES from the tile sizes (software-pipelined A and B
slices in shared memory, an fp32 accumulator spread over the CTA's threads)
until the lowering reports real numbers; the output marks which is which.
"""

import argparse
import itertools

import ism
from matmul import build_matmul

# Per-CTA limits: shared memory (bytes), registers per thread and per SM.
LIMITS = {
    "sm_90a": {"smem": 227 * 1024, "regs_per_thread": 255, "regs_per_sm": 65536},
    "sm_80": {"smem": 163 * 1024, "regs_per_thread": 255, "regs_per_sm": 65536},
}
ELEMENT_BYTES = {"bf16": 2, "f16": 2, "f32": 4}
# Registers a thread needs besides the accumulator (addresses, loop state,
# operand fragments): a rough allowance, part of the estimate.
OVERHEAD_REGS = 40


def estimate(bm, bn, bk, num_warps, stages, element):
    threads = num_warps * 32
    smem = stages * (bm * bk + bk * bn) * ELEMENT_BYTES[element]
    regs = -(-bm * bn // threads) + OVERHEAD_REGS
    return smem, regs, threads


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chip", default="sm_90a", choices=sorted(LIMITS))
    parser.add_argument("--stages", type=int, default=3,
                        help="software-pipelining depth assumed for the "
                             "shared-memory estimate")
    parser.add_argument("--element", default="bf16", choices=sorted(ELEMENT_BYTES))
    parser.add_argument("--quick", action="store_true",
                        help="a few configurations only")
    args = parser.parse_args()
    limits = LIMITS[args.chip]

    sizes = [64, 128, 256]
    configs = [(bm, bn, bk, w) for bm, bn, bk, w in
               itertools.product(sizes, sizes, [32, 64, 128], [4, 8])]
    if args.quick:
        configs = [(128, 128, 64, 8), (64, 64, 32, 4), (256, 256, 128, 8)]

    lowering = ism.has_pass(ism.PTX_PIPELINE)
    print(f"matmul tile sweep for {args.chip}, {args.element} inputs, fp32 "
          f"accumulator, {args.stages} pipeline stages")
    if lowering:
        print(f"compiled to PTX through {ism.PTX_PIPELINE}; shared memory and "
              "threads come from the lowering where it reports them")
    else:
        print(f"this build has no {ism.PTX_PIPELINE} pipeline: configurations "
              "are built, verified and compiled at the tile level only")
    print("smem and regs/thread are estimates from the tile sizes, not "
          "measurements (marked '~')\n")
    print(f"{'tile MxNxK':>13} {'warps':>5} {'smem (B)':>10} {'regs/thr':>9} "
          f"{'compiled':>9}  fits")
    fitting = 0
    for bm, bn, bk, warps in configs:
        smem, regs, threads = estimate(bm, bn, bk, warps, args.stages, args.element)
        module = build_matmul(bm, bn, bk, warps, args.element)
        smem_text = f"~{smem}"
        try:
            if lowering:
                compiled = ism.compile_ptx(module, chip=args.chip)
                info = compiled.kernels.get("matmul")
                if info and info.shared_memory_bytes:
                    smem = info.shared_memory_bytes
                    smem_text = str(smem)
                status = "ptx"
            else:
                ism.apply_pipeline(module, ism.DEFAULT_PIPELINE)
                status = "tile"
        except ism.IsmError as err:
            status = "error"
            print(f"  {bm}x{bn}x{bk}: {str(err).splitlines()[0]}")
        reasons = []
        if smem > limits["smem"]:
            reasons.append("smem")
        if regs > limits["regs_per_thread"] or regs * threads > limits["regs_per_sm"]:
            reasons.append("regs")
        fits = status != "error" and not reasons
        fitting += fits
        verdict = "yes" if fits else "no (" + ", ".join(reasons or ["compile"]) + ")"
        print(f"{f'{bm}x{bn}x{bk}':>13} {warps:>5} {smem_text:>10} {f'~{regs}':>9} "
              f"{status:>9}  {verdict}")
    print(f"\n{fitting} of {len(configs)} configurations fit (by the estimate)")


if __name__ == "__main__":
    main()
