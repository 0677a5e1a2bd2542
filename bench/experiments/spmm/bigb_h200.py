"""The GEMM + SpMM pair with B (f32, K x 512) resident in the L2 (K = 4096,
8 MB: the benchmark's, L2-bound) and streamed from DRAM (K = 65536,
128 MB: larger than the 60 MB L2). For each K the SpMM's rows are
calibrated so that it takes about as long alone as the GEMM (balanced),
then the pair runs sequential, on two streams and fused (ism-run --bench,
medians of 50, L2 flushed).
    python3 bench/experiments/spmm/bigb_h200.py ISM_RUN [K,...]"""
import os, sys, tempfile
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import coschedule as C

ism_run = sys.argv[1]
ks = [int(k) for k in (sys.argv[2] if len(sys.argv) > 2 else "4096,65536").split(",")]
root = os.path.join(os.path.dirname(__file__), "..", "..", "..")
example = os.path.join(root, "examples", "coschedule_matmul_spmm.mlir")
tmp = tempfile.mkdtemp()
alone = os.path.join(tmp, "alone.mlir")
open(alone, "w").write(C.variant(open(example).read(), keep="spmm"))
gemm_args, _ = C.gemm_part(4096)


def spmm_args(rows, k):
    paths, _ = C.csr(rows, k, 64, rows + k, tmp)
    return [f"npy:{p}" for p in paths] + [f"f32:{k}x512:randn", f"f32:{rows}x512"]


def time_alone(path, args):
    return C.run_ism(ism_run, path, args, 50, 5, "sequential")["bench"]["median_ms"]


gemm_alone = None
print(f"{'K':>6} {'rows':>6} {'gemm':>7} {'spmm':>7} {'seq':>7} {'streams':>7} {'fused':>7} {'xseq':>5} {'xstr':>5}")
for k in ks:
    base = 4096
    t = time_alone(alone, gemm_args + spmm_args(base, k))
    co = C.run_ism(ism_run, example, gemm_args + spmm_args(base, k), 20, 3, "fused")
    gemm_alone = co["coschedule"]["sequential"]["median_ms"] - t
    rows = max(256, int(round(base * gemm_alone / t / 256)) * 256)
    args = gemm_args + spmm_args(rows, k)
    t2 = time_alone(alone, args)
    co = C.run_ism(ism_run, example, args, 50, 5, "fused")["coschedule"]
    s, st, f = (co[m]["median_ms"] for m in ("sequential", "streams", "fused"))
    print(f"{k:6d} {rows:6d} {s - t2:7.4f} {t2:7.4f} {s:7.4f} {st:7.4f} {f:7.4f} {s / f:5.2f} {st / f:5.2f}", flush=True)
