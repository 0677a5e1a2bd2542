#!/usr/bin/env python3
"""Attention kernel variants through ism-run, side by side in one run.

Each variant's module is bench/attention.py's module_text with the given
head dim, blocks, warps, stages and loop order, plus kernel attributes.
Steps: check runs it against the float64 reference at sequence lengths
that are not multiples of the block (1000, 4097), causal and not;
sanitize runs compute-sanitizer's memcheck, racecheck and synccheck on one
such check (both on --ctas CTAs for variants with persistent = true, so
that each walks several programs); bench times every variant in interleaved rounds (ism-run
--bench: median of --reps, L2 flushed) at B*H x S = 128 x 4096 (head dim
128) or 256 x 2048 (64), causal and not.

    python3 bench/experiments/attention_variants.py --ism-run BIN --out DIR \\
        [--steps check,sanitize,bench] [--rounds 2] \\
        VARIANT...   (d,bm,bn,warps,stages,pipelined[,attr=value...][,wide_p]
                      [,peeled])

e.g. 128,128,128,8,2,1 128,128,128,8,2,1,ping_pong=false 128,128,128,8,2,0

With --ism-run given several times as NAME=BIN (two builds of the
compiler), every variant runs with each, interleaved in the same rounds,
and is reported as NAME:VARIANT.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
from attention import module_text  # noqa: E402


def module(spec):
    """The module text of a variant spec, and its head dim."""
    fields = spec.split(",")
    d, bm, bn, w, st, pipe = map(int, fields[:6])
    flags = ("wide_p", "peeled")
    text = module_text(d, bm, bn, w, False, st, pipelined=bool(pipe),
                       wide_p="wide_p" in fields[6:],
                       peeled="peeled" in fields[6:])
    attrs = "".join(f", {a.replace('=', ' = ')}" for a in fields[6:]
                    if a not in flags)
    text = text.replace(f"num_warps = {w} : i32", f"num_warps = {w} : i32{attrs}",
                        1)
    return text, d


def args(bh, s, d, causal):
    return ["--arg", f"bf16:{bh}x{s}x{d}:randn"] * 3 + [
        "--arg", f"bf16:{bh}x{s}x{d}:poison", "--arg", f"f32:{bh}x{s}:poison",
        "--arg", "f32:scalar=0.1", "--arg", f"i32:scalar={causal}"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ism-run", required=True, action="append")
    p.add_argument("--out", required=True)
    p.add_argument("--steps", default="check,bench")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--reps", type=int, default=50)
    p.add_argument("--ctas", type=int, default=5,
                   help="--check and sanitize: persistent kernels run on "
                        "this many CTAs (ism-run --persistent-ctas)")
    p.add_argument("variants", nargs="+")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    runners = dict(r.split("=", 1) if "=" in r else ("", r)
                   for r in a.ism_run)
    if len(runners) != len(a.ism_run) or (len(runners) > 1 and "" in runners):
        p.error("--ism-run: give each build as NAME=BIN, with distinct names")
    files = {}
    for i, spec in enumerate(a.variants):
        text, d = module(spec)
        path = os.path.join(a.out, f"variant{i}.mlir")
        with open(path, "w") as f:
            f.write(text)
        for name, binary in runners.items():
            files[f"{name}:{spec}" if name else spec] = (path, d, binary)
    failed = 0
    steps = a.steps.split(",")
    if "check" in steps:
        for i, (spec, (path, d, ism_run)) in enumerate(files.items()):
            for s in (1000, 4097):
                for causal in (0, 1):
                    r = subprocess.run([ism_run, path, "--check",
                                        f"--persistent-ctas={a.ctas}"] +
                                       args(3, s, d, causal),
                                       capture_output=True, text=True)
                    log = os.path.join(a.out, f"check{i}-{s}-{causal}.log")
                    with open(log, "w") as f:
                        f.write(r.stdout + r.stderr)
                    ok = r.returncode == 0 and ": ok" in r.stdout
                    failed += not ok
                    print(f"check {spec} S={s} causal={causal}: "
                          f"{'ok' if ok else 'FAILED rc=%d' % r.returncode}",
                          flush=True)
    if "sanitize" in steps:
        # compute-sanitizer's memcheck, racecheck and synccheck on each
        # variant's --check at 1000 tokens (3 heads), causal.
        for i, (spec, (path, d, ism_run)) in enumerate(files.items()):
            for tool in ("memcheck", "racecheck", "synccheck"):
                r = subprocess.run(["compute-sanitizer", "--tool", tool,
                                    "--error-exitcode", "3", ism_run, path,
                                    "--check", f"--persistent-ctas={a.ctas}"]
                                   + args(3, 1000, d, 1),
                                   capture_output=True, text=True)
                log = os.path.join(a.out, f"sanitize{i}-{tool}.log")
                with open(log, "w") as f:
                    f.write(r.stdout + r.stderr)
                summary = re.findall(r"ERROR SUMMARY: .*|RACECHECK SUMMARY: .*",
                                     r.stdout + r.stderr)
                ok = r.returncode == 0 and ": ok" in r.stdout
                failed += not ok
                print(f"{tool} {spec}: {'ok' if ok else 'FAILED rc=%d' % r.returncode}"
                      f" {'; '.join(summary)}", flush=True)
    if "bench" in steps:
        times = {}
        # A discarded first run: the GPU's clocks settle (the first second
        # of a cold GPU runs faster than the rest).
        path, d, ism_run = next(iter(files.values()))
        bh, s = (128, 4096) if d == 128 else (256, 2048)
        subprocess.run([ism_run, path, "--bench", "--reps", str(4 * a.reps)]
                       + args(bh, s, d, 0), capture_output=True)
        for rnd in range(a.rounds):
            for i, (spec, (path, d, ism_run)) in enumerate(files.items()):
                bh, s = (128, 4096) if d == 128 else (256, 2048)
                for causal in (0, 1):
                    r = subprocess.run([ism_run, path, "--bench", "--reps",
                                        str(a.reps)] + args(bh, s, d, causal),
                                       capture_output=True, text=True)
                    log = os.path.join(a.out, f"bench{i}-{causal}-{rnd}.log")
                    with open(log, "w") as f:
                        f.write(r.stdout + r.stderr)
                    m = re.search(r"median ([0-9.]+)", r.stdout + r.stderr)
                    if r.returncode or not m:
                        failed += 1
                        print(f"bench {spec} causal={causal}: FAILED "
                              f"rc={r.returncode}", flush=True)
                        continue
                    ms = float(m.group(1))
                    tf = 4 * bh * s * s * d / (2 if causal else 1) / ms / 1e9
                    times.setdefault((spec, causal), []).append((ms, tf))
        print(f"\n{'variant':<48} {'causal':>6} {'median ms':>9} "
              f"{'TFLOP/s':>7}  TFLOP/s by round")
        for (spec, causal), runs in times.items():
            ms = statistics.median(m for m, _ in runs)
            tf = statistics.median(t for _, t in runs)
            print(f"{spec:<48} {causal:>6} {ms:9.4f} {tf:7.0f}  " +
                  " ".join(f"{t:.0f}" for _, t in runs))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
