#!/usr/bin/env python3
"""Energy of a co-scheduled GEMM pair (bench/coschedule.py's PAIRS): each
kernel alone, the pair one after the other and fused, each run back to
back for about SECONDS seconds (ism-run --bench without the L2 flush:
steady state) while nvidia-smi samples the GPU's power, SM clock and
clock-event reasons every 100 ms.

    python3 bench/coschedule_energy.py ISM_RUN OUT PAIR ROWS [SECONDS] [flush]

With `flush`, every repetition is preceded by ism-run's L2 flush, as in
bench/coschedule.py (the energy a call then includes the flush's).

PAIR: matmul_rmsnorm, matmul_softmax or matmul_spmm (GEMM 4096^3); ROWS:
the other kernel's rows (the balanced sizes of the latest
bench/coschedule.py run: 46336, 46592, 12544). Prints per run: ms a call,
mean power, median clock, the share of samples with the software power
cap on (reason 0x4) and the energy a call. If the GPU holds its power cap
while the pair runs, the pair's time is at least (energy of the GEMM +
energy of the other kernel) / the cap's power: that bound is printed
against the kernels' times alone."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import coschedule  # noqa: E402
from power import PowerLog  # noqa: E402

ISM_RUN, OUT, PAIR, ROWS = (sys.argv[1], sys.argv[2], sys.argv[3],
                            int(sys.argv[4]))
SECONDS = float(sys.argv[5]) if len(sys.argv) > 5 else 3.0
FLUSH = "flush" in sys.argv[6:]
os.makedirs(OUT, exist_ok=True)
example, first, second, _ = coschedule.PAIRS[PAIR]
text = open(os.path.join(coschedule.EXAMPLES, example)).read()
files = {}
for name, t in ((first, coschedule.variant(text, keep=first)),
                (second, coschedule.variant(text, keep=second)),
                ("pair", text)):
    files[name] = os.path.join(OUT, f"{name}.mlir")
    with open(files[name], "w") as f:
        f.write(t)
ARGS = (coschedule.gemm_part(4096)[0] +
        coschedule.other_part(PAIR, ROWS, OUT)[0])


def run(name, path, mode):
    base = [ISM_RUN, path, "--json", f"--flush-l2={str(FLUSH).lower()}",
            f"--coschedule={mode}"] + [f"--arg={a}" for a in ARGS]
    # a short run for the time a call, then one of about SECONDS
    out = subprocess.run(base + ["--bench", "--reps=20", "--warmup=5"],
                         capture_output=True, text=True, check=True)
    ms = json.loads(out.stdout)["bench"]["median_ms"]
    reps = max(50, int(SECONDS * 1e3 / ms))
    log = PowerLog(os.path.join(OUT, f"smi-{name.replace(' ', '-')}.csv"))
    with log:
        out = subprocess.run(base + ["--bench", f"--reps={reps}",
                                     "--warmup=50"],
                             capture_output=True, text=True, check=True)
    ms = json.loads(out.stdout)["bench"]["median_ms"]
    # the middle of the run: past the ramp of the first second
    r = dict(log.summary(skip=0.25), name=name, ms=ms)
    r["mj"] = r["watts"] * ms
    print(f"{name}: {ms:.4f} ms, {r['watts']:.0f} W, {r['clock']:.0f} MHz, "
          f"power cap {100 * r['capped']:.0f}% of samples, "
          f"{r['mj']:.1f} mJ a call", flush=True)
    return r


res = {r["name"]: r for r in (
    run(f"{first} alone", files[first], "fused"),
    run(f"{second} alone", files[second], "fused"),
    run("pair sequential", files["pair"], "sequential"),
    run("pair fused", files["pair"], "fused"))}
seq = res[f"{first} alone"]["ms"] + res[f"{second} alone"]["ms"]
energy = res[f"{first} alone"]["mj"] + res[f"{second} alone"]["mj"]
cap = max(r["watts"] for r in res.values())
print()
print(f"{PAIR}, {ROWS} rows{', L2 flushed before each call' if FLUSH else ''}:")
print("| run | ms a call | W | SM MHz | power-capped samples | mJ a call |")
print("| --- | --- | --- | --- | --- | --- |")
for r in res.values():
    print(f"| {r['name']} | {r['ms']:.4f} | {r['watts']:.0f} | "
          f"{r['clock']:.0f} | {100 * r['capped']:.0f}% | {r['mj']:.1f} |")
print()
print(f"sum of the kernels alone: {seq:.4f} ms, {energy:.1f} mJ; fused "
      f"{res['pair fused']['ms']:.4f} ms ({seq / res['pair fused']['ms']:.2f}x), "
      f"{res['pair fused']['mj']:.1f} mJ")
if FLUSH:
    # The events time the kernels only, the power covers the flushes too:
    # no energy bound from these.
    print(f"(flushed: mJ a call counts the kernel's time only; sequential "
          f"{res['pair sequential']['ms']:.4f} ms, fused/sequential "
          f"{res['pair sequential']['ms'] / res['pair fused']['ms']:.2f}x)")
else:
    print(f"energy bound at {cap:.0f} W (the highest mean power measured): "
          f"{energy / cap:.4f} ms = {seq / (energy / cap):.2f}x the sum alone")
