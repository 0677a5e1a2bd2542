"""ism-pipeline-gathers on the H200: the CSR SpMM alone (examples/spmm.mlir)
with gather_stages 1 (not pipelined), 2 and 3, at row counts from a few
programs an SM (latency-bound chains) to the balanced pair's 12288
(L2-bound), medians of 50 with the L2 flushed (ism-run --bench).
    python3 bench/experiments/spmm/stages_h200.py ISM_RUN [ROWS,...] [tune]
With `tune`: instead, what `ism-run --tune` (the default set: num_warps 2,
4, 8, 16 x gather_stages 1, 2, 3) picks at each row count, and its time."""
import os, sys, tempfile
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import coschedule as C

ism_run = sys.argv[1]
rows_list = [int(r) for r in (sys.argv[2] if len(sys.argv) > 2
                              else "132,264,1056,4096,12288").split(",")]
tmp = tempfile.mkdtemp()
if "tune" in sys.argv[3:]:
    import json, subprocess
    example = os.path.join(os.path.dirname(__file__), "..", "..", "..",
                           "examples", "spmm.mlir")
    print(f"{'rows':>6}  {'ism-run --tune picks':<32} {'ms':>8}  (others: ms)")
    for rows in rows_list:
        args, _ = C.other_part("matmul_spmm", rows, tmp)
        out = subprocess.run([ism_run, example, "--tune", "--no-cache", "--json",
                              "--bench", "--reps=50", "--warmup=5"] +
                             [f"--arg={a}" for a in args],
                             capture_output=True, text=True, check=True)
        r = json.loads(out.stdout)
        best = " ".join(f"{k}={v}" for k, v in sorted(r["tune"]["best"].items()))
        others = ", ".join(f"{c['config']}: {c['median_ms']:.4f}"
                           for c in r["tune"]["candidates"] if "median_ms" in c)
        print(f"{rows:6d}  {best:<32} {r['bench']['median_ms']:8.4f}  ({others})",
              flush=True)
    sys.exit(0)
text = open(os.path.join(os.path.dirname(__file__), "..", "..", "..",
                         "examples", "spmm.mlir")).read()
paths = {}
for s in (1, 2, 3):
    paths[s] = os.path.join(tmp, f"spmm-s{s}.mlir")
    open(paths[s], "w").write(text.replace(
        "num_warps = 4 : i32}", f"num_warps = 4 : i32, gather_stages = {s} : i32}}", 1))
print(f"{'rows':>6} {'s1 ms':>8} {'s2 ms':>8} {'s3 ms':>8} {'s1/s2':>6} {'s1/s3':>6}")
for rows in rows_list:
    args, _ = C.other_part("matmul_spmm", rows, tmp)
    t = {s: C.run_ism(ism_run, paths[s], args, 50, 5, "sequential")["bench"]["median_ms"]
         for s in (1, 2, 3)}
    print(f"{rows:6d} {t[1]:8.4f} {t[2]:8.4f} {t[3]:8.4f} {t[1] / t[2]:6.2f} {t[1] / t[3]:6.2f}", flush=True)
