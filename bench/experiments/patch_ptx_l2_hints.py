#!/usr/bin/env python3
"""Adds L2 cache hints to a fused kernel's PTX (the experiment of
bench/experiments/coschedule_l2_hints.sh; docs/coschedule.md).
usage: patch_ptx_l2_hints.py MODE < in.ptx > out.ptx; MODE: comma list of
  nf  (norm cp.async loads evict_first), ns (st.global.v4 streaming .cs),
  gl  (GEMM TMA loads evict_last)"""
import re, sys
mode = set(sys.argv[1].split(","))
s = sys.stdin.read()
# policy registers after the .reg .b64 declaration
m = re.search(r"\.reg \.b64 \t%rd<(\d+)>;", s)
first = s.index("\n", s.index("{", s.index(".entry")))  # after opening brace
decl = "\n\t.reg .b64 %pf, %pl;"
init = "\n\tcreatepolicy.fractional.L2::evict_first.b64 %pf, 1.0;\n\tcreatepolicy.fractional.L2::evict_last.b64 %pl, 1.0;"
# place after the last .reg declaration
end = m.end()
s = s[:end] + decl + init + s[end:]
if "nf" in mode:
    s = re.sub(r"cp\.async\.cg\.shared\.global (\[[^\]]+\]), (\[[^\]]+\]), 16((?:, [^;]+)?);",
               r"cp.async.cg.shared.global.L2::cache_hint \1, \2, 16\3, %pf;", s)
if "ns" in mode:
    s = s.replace("st.global.v4.b32", "st.global.cs.v4.b32")
if "gl" in mode:
    s = re.sub(r"(cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes)( [^;]+);",
               r"\1.L2::cache_hint\2, %pl;", s)
sys.stdout.write(s)
