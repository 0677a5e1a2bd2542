"""SpMM block-shape experiment: each variant's SpMM alone, the pair
sequential / streams / fused at fixed rows, after a --check at small sizes."""
import os, subprocess, sys, tempfile, json
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import coschedule as C
ism_run = sys.argv[1]
rows = int(sys.argv[2]) if len(sys.argv) > 2 else 8704
names = sys.argv[3].split(",") if len(sys.argv) > 3 else None
here = os.path.dirname(os.path.abspath(__file__))
tmp = tempfile.mkdtemp()
res = []
# small check data
sys.path.insert(0, os.path.join(here, "..", "..", "..", "test", "Runner", "Inputs"))
subprocess.run([sys.executable, os.path.join(here, "..", "..", "..", "test", "Runner", "Inputs", "make_csr.py"), "1500", "700", "40", "7", tmp + "/c."], check=True)
for f in sorted(os.listdir(here)):
    if not f.endswith(".mlir") or (names and f[:-5] not in names):
        continue
    path = os.path.join(here, f)
    text = open(path).read()
    chk = subprocess.run([ism_run, path, "--check", "--verbose",
        "--arg=bf16:1000x512:randn", "--arg=bf16:512x777:randn", "--arg=bf16:1000x777:poison",
        f"--arg=npy:{tmp}/c.rowptr.npy", f"--arg=npy:{tmp}/c.colind.npy", f"--arg=npy:{tmp}/c.values.npy",
        "--arg=f32:700x300:randn", "--arg=f32:1500x300:poison"], capture_output=True, text=True)
    ok = chk.returncode == 0 and chk.stdout.count(": ok") == 2
    a1, _ = C.gemm_part(4096)
    a2, _ = C.other_part("matmul_spmm", rows, tmp)
    alone = os.path.join(tmp, f + ".alone.mlir")
    open(alone, "w").write(C.variant(text, keep="spmm"))
    t2 = C.run_ism(ism_run, alone, a1 + a2, 50, 5, "sequential")["bench"]["median_ms"]
    co = C.run_ism(ism_run, path, a1 + a2, 50, 5, "fused", ["--verbose"])
    r = dict(v=f[:-5], check=ok, spmm=t2, seq=co["coschedule"]["sequential"]["median_ms"],
             streams=co["coschedule"]["streams"]["median_ms"], fused=co["coschedule"]["fused"]["median_ms"])
    r["xseq"] = r["seq"] / r["fused"]
    print(json.dumps(r), flush=True)
    if not ok:
        print(chk.stdout[-2000:], chk.stderr[-2000:])
    res.append(r)
print(f"{'variant':10} {'check':5} {'spmm':>7} {'seq':>7} {'streams':>7} {'fused':>7} {'xseq':>5}")
for r in res:
    print(f"{r['v']:10} {str(r['check']):5} {r['spmm']:7.4f} {r['seq']:7.4f} {r['streams']:7.4f} {r['fused']:7.4f} {r['xseq']:5.2f}")
