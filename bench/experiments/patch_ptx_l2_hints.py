#!/usr/bin/env python3
"""Adds L2 cache hints to a fused kernel's PTX (the experiment of
bench/experiments/coschedule_l2_hints.sh; docs/coschedule.md).
usage: patch_ptx_l2_hints.py MODE < in.ptx > out.ptx; MODE: comma list of
  nf  (norm cp.async loads evict_first), ns (st.global.v4 streaming .cs),
  gl  (GEMM TMA loads evict_last), none (unchanged)
Each kernel (.entry) that gets a hint declares its own policy registers and
creates them before its first instruction (with the first version of this
script, which inserted them after the first `.reg .b64` line of the file,
the patched kernel raised an illegal instruction)."""
import re
import sys


def patch_body(body, mode):
    """`body`: one kernel from the line after its `{`; returns it patched
    and whether any hint went in."""
    hinted = False
    if "nf" in mode:
        body, n = re.subn(
            r"cp\.async\.cg\.shared\.global (\[[^\]]+\]), (\[[^\]]+\]), 16"
            r"((?:, [^;]+)?);",
            r"cp.async.cg.shared.global.L2::cache_hint \1, \2, 16\3, %pf;",
            body)
        hinted |= n > 0
    if "ns" in mode:
        body = body.replace("st.global.v4.b32", "st.global.cs.v4.b32")
    if "gl" in mode:
        body, n = re.subn(
            r"(cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile"
            r"\.mbarrier::complete_tx::bytes)( [^;]+);",
            r"\1.L2::cache_hint\2, %pl;", body)
        hinted |= n > 0
    if not hinted:
        return body
    # After the body's leading .reg declarations.
    lines = body.split("\n")
    i = 0
    while i < len(lines) and (not lines[i].strip()
                              or lines[i].strip().startswith(".reg")):
        i += 1
    lines[i:i] = ["\t.reg .b64 \t%pf, %pl;",
                  "\tcreatepolicy.fractional.L2::evict_first.b64 %pf, 1.0;",
                  "\tcreatepolicy.fractional.L2::evict_last.b64 %pl, 1.0;"]
    return "\n".join(lines)


def main():
    mode = set(sys.argv[1].split(","))
    s = sys.stdin.read()
    out, pos = [], 0
    entries = list(re.finditer(r"\.entry [^\n]*\n", s))
    for k, m in enumerate(entries):
        start = s.index("{\n", m.end()) + 2
        # The kernel's closing brace: the last one at a line start before
        # the next kernel (inline-asm blocks close at line starts too).
        limit = entries[k + 1].start() if k + 1 < len(entries) else len(s)
        end = s.rindex("\n}", start, limit)
        out.append(s[pos:start])
        out.append(patch_body(s[start:end], mode))
        pos = end
    out.append(s[pos:])
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    main()
