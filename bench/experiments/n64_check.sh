#!/usr/bin/env bash
# --check of the GEMM + RMSNorm and GEMM + SpMM pairs with a 128x64 GEMM
# tile (bench/coschedule.py's wide_gemm(text, 64)): the GEMM alone, the
# pair as the pass decides it (three copies of the other kernel, 768
# threads: the consumers get fewer registers than at launch), with
# `join = false`, and with two copies. From a checkout on the H200 with the
# runner package in dist/ and OUT set:
#   OUT=/tmp/out bash bench/experiments/n64_check.sh
set -uo pipefail
source "$(dirname "$0")/h200_setup.sh"
python3 test/Runner/Inputs/make_csr.py 1500 700 40 7 /tmp/csr.
python3 - <<'PY'
import sys,types; sys.modules['torch']=types.ModuleType('torch'); sys.path.insert(0,'bench'); import coschedule as C
for p in ["spmm","rmsnorm"]:
    t=C.wide_gemm(open(f'examples/coschedule_matmul_{p}.mlir').read(),64)
    open(f'/tmp/n_{p}.mlir','w').write(t)
    open(f'/tmp/n_{p}_nojoin.mlir','w').write(t.replace("ism.coschedule warp_specialized {","ism.coschedule warp_specialized attributes {join = false} {"))
    open(f'/tmp/n_{p}_r2.mlir','w').write(t.replace("ism.coschedule warp_specialized {","ism.coschedule warp_specialized attributes {replicas = array<i32: 1, 2>} {"))
    # alone: only the matmul launch
    open(f'/tmp/n_{p}_alone.mlir','w').write(C.variant(t, keep="matmul"))
PY
mm="--arg bf16:1000x520:randn --arg bf16:520x777:randn --arg bf16:1000x777:poison"
rms="--arg bf16:3000x4000:randn --arg bf16:4000:randn --arg bf16:3000x4000:poison --arg 1e-5"
sp="--arg npy:/tmp/csr.rowptr.npy --arg npy:/tmp/csr.colind.npy --arg npy:/tmp/csr.values.npy --arg f32:700x300:randn --arg f32:1500x300:poison"
for v in n_rmsnorm_alone n_rmsnorm n_rmsnorm_nojoin n_rmsnorm_r2; do
  printf '%-20s ' $v; $run /tmp/$v.mlir --check --verbose $mm $rms 2>&1 | grep -iE "check: arg|error|threads" | sed 's/; max abs.*//; s/ism.coschedule.*partitions/partitions/' | tr '\n' ' '; echo
done
for v in n_spmm n_spmm_nojoin n_spmm_r2; do
  printf '%-20s ' $v; $run /tmp/$v.mlir --check --verbose $mm $sp 2>&1 | grep -iE "check: arg|error|threads" | sed 's/; max abs.*//' | tr '\n' ' '; echo
done
