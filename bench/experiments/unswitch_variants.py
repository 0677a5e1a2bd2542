#!/usr/bin/env python3
"""What ism-unswitch-access-tests does to the SIMT examples of bench/bench.py
(vector_add, softmax, layernorm, rmsnorm, rope) on the GPU: each example
timed by ism-run --bench (CUDA events, L2 flushed, median) as compiled
(the pass on) and lowered with the pass off (`ism-to-gpu{unswitch-access-
tests=false}` through the Python package, the access-test marks removed so
that ism-run's pipeline leaves the kernels alone), in interleaved rounds;
the compiled example is first checked with ism-run --check.

    python3 bench/experiments/unswitch_variants.py --ism-run RUNNER
        [--rounds 3] [--only softmax,rmsnorm] [--out DIR]

Prints one line per example: the rounds (us) of each version, their
medians and on/off speedup (off time / on time, above 1: the pass helps).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import ism  # noqa: E402
import bench  # noqa: E402


def bench_ms(run, path, spec, reps):
    cmd = [run, path, "--bench", "--json", "--warmup=20", f"--reps={reps}",
           f"--bytes={spec['bytes']}"]
    for a in spec["args"]:
        cmd += ["--arg", a]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{path}: ism-run failed: {proc.stderr.strip()}")
    return json.loads(proc.stdout)["bench"]["median_ms"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ism-run", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--reps", type=int, default=100)
    p.add_argument("--only", default="")
    p.add_argument("--out", default=tempfile.mkdtemp(prefix="unswitch-"))
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    only = set(filter(None, a.only.split(",")))
    print(f"{'kernel':<11} {'version':<8} rounds (us)"
          f"{'':<16} median    on vs off")
    for name, spec in bench.kernels(False).items():
        if only and name not in only:
            continue
        on = os.path.join(bench.EXAMPLES, spec["example"])
        check = subprocess.run(
            [a.ism_run, on, "--check"] + [x for arg in spec["args"]
                                          for x in ("--arg", arg)],
            capture_output=True, text=True)
        if check.returncode != 0:
            raise SystemExit(f"{name}: --check failed:\n{check.stdout}"
                             f"{check.stderr}")
        with open(on) as f:
            lowered = ism.apply_pipeline(
                ism.Module.parse(f.read()),
                "ism-to-gpu{unswitch-access-tests=false}")
        off = os.path.join(a.out, f"{name}-separate-tests.mlir")
        with open(off, "w") as f:
            f.write(str(lowered).replace(" {ism.access_test}", ""))
        times = {"off": [], "on": []}
        for _ in range(a.rounds):
            for version, path in (("off", off), ("on", on)):
                times[version].append(bench_ms(a.ism_run, path, spec, a.reps))
        med = {v: statistics.median(t) for v, t in times.items()}
        for version in ("off", "on"):
            rounds = " ".join(f"{t * 1e3:8.2f}" for t in times[version])
            ratio = (f"   {med['off'] / med['on']:.3f}" if version == "on"
                     else "")
            print(f"{name:<11} {version:<8} {rounds}   "
                  f"{med[version] * 1e3:8.2f}{ratio}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
