#!/usr/bin/env python3
"""Flash-attention forward: ism against PyTorch's SDPA backends and Triton's
fused-attention kernel, on the H200, in one run.

ism runs examples/attention.mlir's program (built here for head dims 64 and
128) from the Python package on torch tensors; SDPA runs with each backend
it has (flash, cuDNN, memory-efficient); Triton runs the tutorial's kernel
(bench/triton_kernels.py, autotuned). Every implementation is checked first
against a float64 reference on fresh random data (output poisoned before
the call), then timed with bench/bench.py's method (CUDA events, L2 flushed,
median). TFLOP/s count 4 * batch * heads * seq^2 * head_dim, halved for
causal.

    python3 bench/attention.py [--shapes 4x32x4096x128,...] [--reps 20]
        [--rounds 3]
        [--out DIR]
    python3 bench/attention.py --decode [--decode-seqs 4096,...]

--decode times examples/decode_attention.mlir (split-KV decode, the best of
8-64 splits) in GB/s against SDPA's backends and a same-size copy.
"""
import argparse
import json
import math
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))

SHAPES = "4x32x4096x128,2x32x8192x128,1x32x16384x128,8x32x2048x64"


# Where the loops over key blocks split: blocks below n_full need no mask
# (every key inside the sequence and, when causal, before the program's
# first query row); n_rest is where the masked blocks end.
BLOCK_BOUNDS = """
  %s_blocks = arith.divui %S, %bn : index
  %s_full = arith.muli %s_blocks, %bn : index
  %m_blocks = arith.divui %m0, %bn : index
  %m_full = arith.muli %m_blocks, %bn : index
  %c_full = arith.minui %m_full, %s_full : index
  %n_full = arith.select %is_causal, %c_full, %s_full : index
  %n_rest = arith.maxui %n_full, %n_end : index"""


def module_text(head_dim: int, block_m: int = 64, block_n: int = 64,
                num_warps: int = 4, prefetch: bool = False,
                stages: int = 0, split: bool = True,
                pipelined: bool = False, ping_pong: bool = False,
                wide_p: bool = False, peeled: bool = False) -> str:
    """examples/attention.mlir with the head dim and blocks as parameters.
    ``prefetch`` loads the next K and V tiles one iteration ahead (the loop
    carries them), so that their latency overlaps the current block's
    math. ``stages`` (num_stages) sets the ring that the lowering copies K
    and V into ahead of time (1: none; 0: the lowering's choice). ``split``
    walks the key blocks that need no mask (all keys inside the sequence
    and, when causal, before the program's first query row) in a loop of
    their own, and only the rest (the diagonal and the sequence's end) in
    a loop that masks; without it one loop masks every block.
    ``pipelined`` (with ``split``, without ``prefetch``) software-pipelines
    the loops: block 0's scores and softmax come before them, and each
    iteration issues the next block's S = Q K^T before the previous block's
    O += P V, so that the softmax of S runs while P V is on the tensor
    cores (the lowering waits for each product where it is first used);
    the last P V comes after the loops. ``ping_pong`` (with ``pipelined``
    and two warpgroups) has the warpgroups take turns issuing each
    iteration's products (the kernel attribute, docs/gemm.md).
    ``wide_p`` (with ``pipelined``) carries P to the next iteration in f32
    and converts it to bf16 just before its P V, so that the softmax writes
    no register the running P V reads (else ptxas waits for P V before the
    softmax, docs/gemm.md). ``peeled`` (with ``pipelined``) gives
    block 0's S and softmax and the last block's P V loops of their own
    (one iteration each, K only and V only in the ring), instead of a
    first iteration whose P V adds a zero P and a last one whose S is all
    masked: a block's worth of products and a softmax less per program
    (3% of the work at 4096 tokens with 128-key blocks)."""
    d, bm, bn = head_dim, block_m, block_n
    stage_attr = f", num_stages = {stages} : i32" if stages else ""
    if ping_pong:
        stage_attr += ", ping_pong = true"
    mem = "memref<?x?x?xbf16>"
    kv = f"tensor<{bn}x{d}xbf16>"
    load = lambda t, n, name: f"""
    %{name}3 = ism.load %{t}[%bh, {n}, %c0] : {mem} -> tensor<1x{bn}x{d}xbf16>
    %{name} = ism.reshape %{name}3 : tensor<1x{bn}x{d}xbf16> -> {kv}"""
    if prefetch:
        first = (load("K", "%c0", "k0").replace("\n    ", "\n  ") +
                 load("V", "%c0", "v0").replace("\n    ", "\n  "))
        carried_types = f", {kv}, {kv}"
        load_k = load_v = ""
        next_kv = f"""
    %n_next = arith.addi %n, %bn : index""" + load("K", "%n_next", "k_next") \
            + load("V", "%n_next", "v_next")
        yielded = ", %k_next, %v_next"
    else:
        first = carried_types = next_kv = yielded = ""
        load_k, load_v = load("K", "%n", "k"), load("V", "%n", "v")
    results = 5 if prefetch else 3
    types = (f"tensor<{bm}xf32>, tensor<{bm}xf32>, tensor<{bm}x{d}xf32>"
             f"{carried_types}")

    def loop(name, lo, hi, inits, masked):
        carried = (", %k = " + inits[3] + ", %v = " + inits[4]
                   if prefetch else "")
        mask = f"""
    %ni = arith.index_cast %n : index to i32
    %ns = ism.splat %ni : i32 -> tensor<{bn}xi32>
    %cols1 = arith.addi %iota_n, %ns : tensor<{bn}xi32>
    %cols2 = ism.expand_dims %cols1 axis = 0 : tensor<{bn}xi32> -> tensor<1x{bn}xi32>
    %cols = ism.broadcast %cols2 : tensor<1x{bn}xi32> -> tensor<{bm}x{bn}xi32>
    %in_seq = arith.cmpi slt, %cols, %Ss : tensor<{bm}x{bn}xi32>
    %past = arith.cmpi sgt, %cols, %rows : tensor<{bm}x{bn}xi32>
    %hidden = arith.andi %past, %causals : tensor<{bm}x{bn}xi1>
    %visible = arith.xori %hidden, %all : tensor<{bm}x{bn}xi1>
    %keep = arith.andi %in_seq, %visible : tensor<{bm}x{bn}xi1>
    %s = arith.select %keep, %qk, %ninf_s
        : tensor<{bm}x{bn}xi1>, tensor<{bm}x{bn}xf32>""" if masked else ""
        s = "%s" if masked else "%qk"
        return f"""
  %{name}:{results} = scf.for %n = {lo} to {hi} step %bn
      iter_args(%m = {inits[0]}, %l = {inits[1]}, %acc = {inits[2]}{carried})
      -> ({types}) {{{load_k}{next_kv}
    %kt = ism.trans %k order = [1, 0] : {kv} -> tensor<{d}x{bn}xbf16>
    %qk = ism.dot %q, %kt, %zero_s
        : tensor<{bm}x{d}xbf16> * tensor<{d}x{bn}xbf16> -> tensor<{bm}x{bn}xf32>
{mask}
    %rowmax = ism.reduce {s} axis = 1 : tensor<{bm}x{bn}xf32> -> tensor<{bm}xf32> {{
    ^bb0(%a: f32, %b: f32):
      %x = arith.maximumf %a, %b : f32
      ism.yield %x : f32
    }}
    %rowmax2 = arith.mulf %rowmax, %scales1 : tensor<{bm}xf32>
    %m_new = arith.maximumf %m, %rowmax2 : tensor<{bm}xf32>
    %neg_m = arith.negf %m_new : tensor<{bm}xf32>
    %neg_m2 = ism.expand_dims %neg_m axis = 1 : tensor<{bm}xf32> -> tensor<{bm}x1xf32>
    %neg_mb = ism.broadcast %neg_m2 : tensor<{bm}x1xf32> -> tensor<{bm}x{bn}xf32>
    %shifted = math.fma {s}, %scales, %neg_mb : tensor<{bm}x{bn}xf32>
    %p = math.exp2 %shifted : tensor<{bm}x{bn}xf32>
    %m_diff = arith.subf %m, %m_new : tensor<{bm}xf32>
    %alpha = math.exp2 %m_diff : tensor<{bm}xf32>
    %rowsum = ism.reduce %p axis = 1 : tensor<{bm}x{bn}xf32> -> tensor<{bm}xf32> {{
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }}
    %l_scaled = arith.mulf %l, %alpha : tensor<{bm}xf32>
    %l_new = arith.addf %l_scaled, %rowsum : tensor<{bm}xf32>
    %alpha2 = ism.expand_dims %alpha axis = 1 : tensor<{bm}xf32> -> tensor<{bm}x1xf32>
    %alphab = ism.broadcast %alpha2 : tensor<{bm}x1xf32> -> tensor<{bm}x{d}xf32>
    %acc_scaled = arith.mulf %acc, %alphab : tensor<{bm}x{d}xf32>
    %p16 = arith.truncf %p : tensor<{bm}x{bn}xf32> to tensor<{bm}x{bn}xbf16>{load_v}
    %acc_new = ism.dot %p16, %v, %acc_scaled
        : tensor<{bm}x{bn}xbf16> * tensor<{bn}x{d}xbf16> -> tensor<{bm}x{d}xf32>
    scf.yield %m_new, %l_new, %acc_new{yielded} : {types}
  }}"""

    inits = ["%ninf", "%zero_l", "%zero_acc", "%k0", "%v0"]
    if split:
        # Blocks below n_full need no mask: every key is inside the
        # sequence and, when causal, before the program's first query row.
        loops = BLOCK_BOUNDS + \
            loop("r0", "%c0", "%n_full", inits, False) + \
            loop("r", "%n_full", "%n_rest",
                 [f"%r0#{i}" for i in range(results)], True)
    else:
        loops = loop("r", "%c0", "%n_end", inits, True)
    fin = ["%r#0", "%r#1", "%r#2"]
    if pipelined:
        if prefetch or not split:
            raise ValueError("pipelined needs split and no prefetch")
        if peeled and wide_p:
            raise ValueError("peeled and wide_p do not go together")
        loops, fin = _pipelined_loops(d, bm, bn, mem, kv, wide_p, peeled)
    return f"""
ism.kernel @attention(%Q: {mem}, %K: {mem}, %V: {mem}, %O: {mem},
                      %LSE: memref<?x?xf32>, %scale: f32, %causal: i32)
    attributes {{num_warps = {num_warps} : i32{stage_attr}}} {{
  %pm = ism.program_id x : index
  %bh = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0i = arith.constant 0 : i32
  %bm = arith.constant {bm} : index
  %bn = arith.constant {bn} : index
  %m0 = arith.muli %pm, %bm : index
  %S = memref.dim %K, %c1 : {mem}
  %is_causal = arith.cmpi ne, %causal, %c0i : i32
  %m_end = arith.addi %m0, %bm : index
  %diag_end = arith.minui %m_end, %S : index
  %n_end = arith.select %is_causal, %diag_end, %S : index
  %q3 = ism.load %Q[%bh, %m0, %c0] : {mem} -> tensor<1x{bm}x{d}xbf16>
  %q = ism.reshape %q3 : tensor<1x{bm}x{d}xbf16> -> tensor<{bm}x{d}xbf16>
  %ninf = arith.constant dense<0xFF800000> : tensor<{bm}xf32>
  %zero_l = arith.constant dense<0.0> : tensor<{bm}xf32>
  %zero_acc = arith.constant dense<0.0> : tensor<{bm}x{d}xf32>
  %zero_s = arith.constant dense<0.0> : tensor<{bm}x{bn}xf32>
  %ninf_s = arith.constant dense<0xFF800000> : tensor<{bm}x{bn}xf32>
  // Scores in base 2: exp(x) = exp2(x * log2(e)), folded into the scale
  // (positive, so the row maximum of the scaled scores is the scaled
  // maximum, and each p = exp2(qk * scale2 - m) is one FMA and one ex2).
  %log2e = arith.constant 1.44269504088896340736 : f32
  %scale2 = arith.mulf %scale, %log2e : f32
  %scales = ism.splat %scale2 : f32 -> tensor<{bm}x{bn}xf32>
  %scales1 = ism.splat %scale2 : f32 -> tensor<{bm}xf32>
  %iota_m = ism.range 0 to {bm} : tensor<{bm}xi32>
  %iota_n = ism.range 0 to {bn} : tensor<{bn}xi32>
  %m0i = arith.index_cast %m0 : index to i32
  %m0s = ism.splat %m0i : i32 -> tensor<{bm}xi32>
  %rows1 = arith.addi %iota_m, %m0s : tensor<{bm}xi32>
  %rows2 = ism.expand_dims %rows1 axis = 1 : tensor<{bm}xi32> -> tensor<{bm}x1xi32>
  %rows = ism.broadcast %rows2 : tensor<{bm}x1xi32> -> tensor<{bm}x{bn}xi32>
  %Si = arith.index_cast %S : index to i32
  %Ss = ism.splat %Si : i32 -> tensor<{bm}x{bn}xi32>
  %causals = ism.splat %is_causal : i1 -> tensor<{bm}x{bn}xi1>
  %all = arith.constant dense<true> : tensor<{bm}x{bn}xi1>{first}{loops}
  %l2 = ism.expand_dims {fin[1]} axis = 1 : tensor<{bm}xf32> -> tensor<{bm}x1xf32>
  %lb = ism.broadcast %l2 : tensor<{bm}x1xf32> -> tensor<{bm}x{d}xf32>
  %o = arith.divf {fin[2]}, %lb : tensor<{bm}x{d}xf32>
  %o16 = arith.truncf %o : tensor<{bm}x{d}xf32> to tensor<{bm}x{d}xbf16>
  %o3 = ism.reshape %o16 : tensor<{bm}x{d}xbf16> -> tensor<1x{bm}x{d}xbf16>
  ism.store %o3, %O[%bh, %m0, %c0] : tensor<1x{bm}x{d}xbf16> -> {mem}
  // LSE = m + ln(l), m in base 2: m * ln(2) + ln(l).
  %ln2 = arith.constant dense<0.69314718055994530942> : tensor<{bm}xf32>
  %m_nat = arith.mulf {fin[0]}, %ln2 : tensor<{bm}xf32>
  %log_l = math.log {fin[1]} : tensor<{bm}xf32>
  %lse1 = arith.addf %m_nat, %log_l : tensor<{bm}xf32>
  %lse = ism.reshape %lse1 : tensor<{bm}xf32> -> tensor<1x{bm}xf32>
  ism.store %lse, %LSE[%bh, %m0] : tensor<1x{bm}xf32> -> memref<?x?xf32>
  ism.return
}}

func.func @main(%Q: {mem}, %K: {mem}, %V: {mem}, %O: {mem},
                %LSE: memref<?x?xf32>, %scale: f32, %causal: i32) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %block = arith.constant {bm} : index
  %BH = memref.dim %Q, %c0 : {mem}
  %S = memref.dim %Q, %c1 : {mem}
  %gm = arith.ceildivui %S, %block : index
  ism.launch @attention grid(%gm, %BH) (%Q, %K, %V, %O, %LSE, %scale, %causal)
      : ({mem}, {mem}, {mem}, {mem}, memref<?x?xf32>, f32, i32)
  return
}}
"""


def _pipelined_loops(d, bm, bn, mem, kv, wide_p=False, peeled=False):
    """module_text's loops, software-pipelined (see ``pipelined``): their
    text and the names of the final row maximum, row sum and
    accumulator."""
    S = f"tensor<{bm}x{bn}xf32>"
    row = f"tensor<{bm}xf32>"

    def scores(p, n, masked):
        """S of the block at `n` (its K loaded and transposed), the mask's
        text (empty when not masked) and the name of the scores to use."""
        text = f"""
    %{p}k3 = ism.load %K[%bh, {n}, %c0] : {mem} -> tensor<1x{bn}x{d}xbf16>
    %{p}k = ism.reshape %{p}k3 : tensor<1x{bn}x{d}xbf16> -> {kv}
    %{p}kt = ism.trans %{p}k order = [1, 0] : {kv} -> tensor<{d}x{bn}xbf16>
    %{p}qk = ism.dot %q, %{p}kt, %zero_s
        : tensor<{bm}x{d}xbf16> * tensor<{d}x{bn}xbf16> -> {S}"""
        if not masked:
            return text, "", f"%{p}qk"
        return text, f"""
    %{p}ni = arith.index_cast {n} : index to i32
    %{p}ns = ism.splat %{p}ni : i32 -> tensor<{bn}xi32>
    %{p}cols1 = arith.addi %iota_n, %{p}ns : tensor<{bn}xi32>
    %{p}cols2 = ism.expand_dims %{p}cols1 axis = 0 : tensor<{bn}xi32> -> tensor<1x{bn}xi32>
    %{p}cols = ism.broadcast %{p}cols2 : tensor<1x{bn}xi32> -> tensor<{bm}x{bn}xi32>
    %{p}in_seq = arith.cmpi slt, %{p}cols, %Ss : tensor<{bm}x{bn}xi32>
    %{p}past = arith.cmpi sgt, %{p}cols, %rows : tensor<{bm}x{bn}xi32>
    %{p}hidden = arith.andi %{p}past, %causals : tensor<{bm}x{bn}xi1>
    %{p}visible = arith.xori %{p}hidden, %all : tensor<{bm}x{bn}xi1>
    %{p}keep = arith.andi %{p}in_seq, %{p}visible : tensor<{bm}x{bn}xi1>
    %{p}s = arith.select %{p}keep, %{p}qk, %ninf_s
        : tensor<{bm}x{bn}xi1>, {S}""", f"%{p}s"

    def softmax(p, s, m):
        """The row maximum %{p}m_new (from `m`), %{p}p = exp2(s c - m_new)
        and its row sum %{p}rowsum."""
        return f"""
    %{p}rowmax = ism.reduce {s} axis = 1 : {S} -> {row} {{
    ^bb0(%a: f32, %b: f32):
      %x = arith.maximumf %a, %b : f32
      ism.yield %x : f32
    }}
    %{p}rowmax2 = arith.mulf %{p}rowmax, %scales1 : {row}
    %{p}m_new = arith.maximumf {m}, %{p}rowmax2 : {row}
    %{p}neg_m = arith.negf %{p}m_new : {row}
    %{p}neg_m2 = ism.expand_dims %{p}neg_m axis = 1 : {row} -> tensor<{bm}x1xf32>
    %{p}neg_mb = ism.broadcast %{p}neg_m2 : tensor<{bm}x1xf32> -> {S}
    %{p}shifted = math.fma {s}, %scales, %{p}neg_mb : {S}
    %{p}p = math.exp2 %{p}shifted : {S}
    %{p}rowsum = ism.reduce %{p}p axis = 1 : {S} -> {row} {{
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }}"""

    def pv(p, n, p16, acc):
        """%{p}acc_pv = acc + P V, V the block at `n`."""
        return f"""
    %{p}v3 = ism.load %V[%bh, {n}, %c0] : {mem} -> tensor<1x{bn}x{d}xbf16>
    %{p}v = ism.reshape %{p}v3 : tensor<1x{bn}x{d}xbf16> -> {kv}
    %{p}acc_pv = ism.dot {p16}, %{p}v, {acc}
        : tensor<{bm}x{bn}xbf16> * {kv} -> tensor<{bm}x{d}xf32>"""

    p_type = f"tensor<{bm}x{bn}x{'f32' if wide_p else 'bf16'}>"
    types = f"{row}, {row}, tensor<{bm}x{d}xf32>, {p_type}"

    def loop(name, lo, hi, inits, masked):
        text, mask, s = scores("", "%n", masked)
        # wide_p: the loop carries P in f32, converted here, before its P V.
        narrow = f"""
    %p_prev16 = arith.truncf %p_prev : {p_type} to tensor<{bm}x{bn}xbf16>""" \
            if wide_p else ""
        p_in = "%p_prev16" if wide_p else "%p_prev"
        carried = "" if wide_p else f"""
    // P in bf16 only now, after P V is done with the previous one (the
    // loop carries both in the same registers).
    %p16 = arith.truncf %p : {S} to tensor<{bm}x{bn}xbf16>"""
        return f"""
  %{name}:4 = scf.for %n = {lo} to {hi} step %bn
      iter_args(%m = {inits[0]}, %l = {inits[1]}, %acc = {inits[2]},
                %p_prev = {inits[3]}) -> ({types}) {{
    // This block's S first, then the previous block's P V: the softmax
    // below runs while P V is on the tensor cores.{narrow}{text}
    %n_prev = arith.subi %n, %bn : index{pv("", "%n_prev", p_in, "%acc")}{mask}
{softmax("", s, "%m")}
    %m_diff = arith.subf %m, %m_new : {row}
    %alpha = math.exp2 %m_diff : {row}
    %l_scaled = arith.mulf %l, %alpha : {row}
    %l_new = arith.addf %l_scaled, %rowsum : {row}
    %alpha2 = ism.expand_dims %alpha axis = 1 : {row} -> tensor<{bm}x1xf32>
    %alphab = ism.broadcast %alpha2 : tensor<{bm}x1xf32> -> tensor<{bm}x{d}xf32>
    %acc_scaled = arith.mulf %acc_pv, %alphab : tensor<{bm}x{d}xf32>
{carried}
    scf.yield %m_new, %l_new, %acc_scaled, {"%p" if wide_p else "%p16"} : {types}
  }}"""

    if peeled:
        # Block 0's S and softmax (masked: the diagonal or the sequence's
        # end may fall in it), the loops over blocks 1.. (S of the block,
        # P V of the one before), and the last block's P V, each a ring
        # loop of its own: no product outside a loop.
        text0, mask0, s0 = scores("", "%n", True)
        acc_t = f"tensor<{bm}x{d}xf32>"
        first = f"""
  %rf:3 = scf.for %n = %c0 to %one_block step %bn
      iter_args(%m = %ninf, %l = %zero_l, %p_prev = %zero_p)
      -> ({row}, {row}, {p_type}) {{{text0}{mask0}
{softmax("", s0, "%m")}
    %p16 = arith.truncf %p : {S} to tensor<{bm}x{bn}xbf16>
    scf.yield %m_new, %rowsum, %p16 : {row}, {row}, {p_type}
  }}"""
        last = f"""
  %rl = scf.for %n = %n_last to %n_last1 step %bn
      iter_args(%acc = %r#2) -> ({acc_t}) {{
    %n_prev = arith.subi %n, %bn : index{pv("", "%n_prev", "%r#3", "%acc")}
    scf.yield %acc_pv : {acc_t}
  }}"""
        text = BLOCK_BOUNDS + f"""
  %blocks = arith.ceildivui %n_rest, %bn : index
  %n_last = arith.muli %blocks, %bn : index
  // One trip each, bounds that the canonicalizer does not fold to one
  // trip (it would inline the loop and leave its product outside any ring
  // loop): min(bn, S) is at least 1 and at most the step.
  %one_block = arith.minui %bn, %S : index
  %n_last1 = arith.addi %n_last, %one_block : index
  %n_mid = arith.maxui %n_full, %bn : index
  %zero_p = arith.constant dense<0.0> : {p_type}""" + first + \
            loop("r0", "%bn", "%n_full",
                 ["%rf#0", "%rf#1", "%zero_acc", "%rf#2"], False) + \
            loop("r", "%n_mid", "%n_last",
                 ["%r0#0", "%r0#1", "%r0#2", "%r0#3"], True) + last
        return text, ["%r#0", "%r#1", "%rl"]

    # No product outside the loops (they would write their operands to
    # shared memory beside the ring): the first iteration's P V adds a
    # zero P times the block before 0 (zero-filled), and one more
    # iteration past the last block, all masked (m and l unchanged,
    # alpha = 1), adds the last block's P V.
    text = BLOCK_BOUNDS + f"""
  %blocks = arith.ceildivui %n_rest, %bn : index
  %blocks1 = arith.addi %blocks, %c1 : index
  %n_stop = arith.muli %blocks1, %bn : index
  %zero_p = arith.constant dense<0.0> : {p_type}""" + \
        loop("r0", "%c0", "%n_full",
             ["%ninf", "%zero_l", "%zero_acc", "%zero_p"], False) + \
        loop("r", "%n_full", "%n_stop",
             ["%r0#0", "%r0#1", "%r0#2", "%r0#3"], True)
    return text, ["%r#0", "%r#1", "%r#2"]


DECODE_SEQS = "4096,16384,32768,65536,131072"


def decode(a):
    """Split-KV decode (examples/decode_attention.mlir): one query token per
    (batch x head) against a KV cache of each length, GB/s of K and V read
    once, against SDPA (each backend) and a device-to-device copy moving
    the same number of bytes (half read, half written)."""
    import torch
    import ism
    from bench import Timer
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F
    dev = torch.cuda.get_device_name()
    text = open(os.path.join(ROOT, "examples", "decode_attention.mlir")).read()
    kernel = ism.compile(ism.Module.parse(text))
    backends = {"flash": SDPBackend.FLASH_ATTENTION,
                "cudnn": SDPBackend.CUDNN_ATTENTION,
                "efficient": SDPBackend.EFFICIENT_ATTENTION,
                "math": SDPBackend.MATH}
    timer = Timer(a.warmup, a.reps)
    bh, d = a.decode_heads, 128
    scale = 1 / math.sqrt(d)
    rows = []
    print(f"device: {dev}; bf16 decode, {bh} (batch x heads), head dim {d}")
    for seq in map(int, a.decode_seqs.split(",")):
        torch.manual_seed(seq)
        q = torch.randn(bh, d, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(bh, seq, d, device="cuda", dtype=torch.bfloat16)
        v = torch.randn(bh, seq, d, device="cuda", dtype=torch.bfloat16)
        nbytes = 2 * k.numel() * k.element_size()
        ref = reference(q[:, None], k, v, scale, False)[0][:, 0]
        row = {"seq": seq}
        best = None
        for splits in (8, 16, 32, 64):
            if splits * 64 > seq and splits > 8:
                continue
            o = torch.full_like(q, float("nan"))
            mp = torch.empty(bh, splits, device="cuda")
            lp = torch.empty(bh, splits, device="cuda")
            op = torch.empty(bh, splits, d, device="cuda")
            def check(when):
                err = (o.double() - ref).abs().max().item()
                if not err < 2e-2 * ref.abs().max().item() + 1e-2:
                    print(f"  seq {seq} splits {splits}: MISMATCH {when} "
                          f"{err:.2e}")
                    row["mismatch"] = True
            kernel(q, k, v, o, mp, lp, op, scale)
            check("on the first run")
            o.fill_(float("nan"))
            ms = timer(lambda: kernel(q, k, v, o, mp, lp, op, scale))
            # The timed runs reused the ticket counters (the kernel resets them).
            check("after the timed runs")
            if best is None or ms < best[0]:
                best = (ms, splits)
        row["ism"] = nbytes / best[0] / 1e6
        row["splits"] = best[1]
        for name, be in backends.items():
            try:
                def run(be=be):
                    with sdpa_kernel(be):
                        return F.scaled_dot_product_attention(
                            q[None, :, None], k[None], v[None], scale=scale)
                run()
                row["sdpa-" + name] = nbytes / timer(run) / 1e6
            except RuntimeError:
                row["sdpa-" + name] = None
        src = torch.empty(nbytes // 2, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        row["copy"] = nbytes / timer(lambda: dst.copy_(src)) / 1e6
        del src, dst, k, v
        rows.append(row)
        print(row, flush=True)
    names = ["ism", "sdpa-flash", "sdpa-cudnn", "sdpa-efficient",
             "sdpa-math", "copy"]
    print(f"\n{dev}, bf16 decode GB/s (K and V read once; median of "
          f"{a.reps}, L2 flushed)")
    print("| KV length | " + " | ".join(names) +
          " | ism % copy | x best SDPA | splits |")
    print("|" + " --- |" * (len(names) + 4))
    for r in rows:
        sdpa = [r[n] for n in names if n.startswith("sdpa") and r[n]]
        print(f"| {r['seq']} | " + " | ".join(
            f"{r[n]:.0f}" if r[n] else "n/a" for n in names) +
            f" | {100 * r['ism'] / r['copy']:.0f} | "
            f"{r['ism'] / max(sdpa):.2f} | {r['splits']} |")
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "decode.json"), "w") as f:
            json.dump({"device": dev, "rows": rows}, f, indent=1)
    return 1 if any(r.get("mismatch") for r in rows) else 0


def reference(q, k, v, scale, causal):
    """float64 O and LSE of (bh, seq, d) tensors."""
    import torch
    s = (q.double() @ k.double().transpose(1, 2)) * scale
    if causal:
        n = s.shape[-1]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool,
                                     device=s.device).triu(1), float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    return torch.softmax(s, dim=-1) @ v.double(), lse


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", default=SHAPES,
                   help="BATCHxHEADSxSEQxDIM, comma-separated")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--rounds", type=int, default=3,
                   help="interleaved rounds: each times every "
                        "implementation once (median of --reps); the table "
                        "gives the median over rounds")
    p.add_argument("--check-seq", type=int, default=1000,
                   help="sequence length of the correctness checks")
    p.add_argument("--out", default=None)
    p.add_argument("--decode", action="store_true",
                   help="split-KV decode instead of the prefill forward")
    p.add_argument("--decode-seqs", default=DECODE_SEQS)
    p.add_argument("--decode-heads", type=int, default=32,
                   help="batch x heads of the decode runs")
    a = p.parse_args()
    if a.decode:
        return decode(a)
    import torch
    import ism
    import triton_kernels as tk
    from bench import Timer
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F

    dev = torch.cuda.get_device_name()
    shapes = [tuple(map(int, s.split("x"))) for s in a.shapes.split(",")]
    # ism's block and warp counts, chosen per shape by ism.autotune (as
    # Triton's kernel is autotuned); the tuning key includes the shapes.
    # On the H200 both products run on wgmma where the warps take 64-row
    # blocks per warpgroup (64 rows on 4 warps, 128 on 8), K and V copied
    # ahead into a ring of num_stages stages (64 rows on 8 warps: mma.sync;
    # prefetch: the loop carries the next K and V in registers instead).
    # pipelined: the next block's S issued before this block's P V;
    # ping_pong: with the two warpgroups of a 128-row block taking turns at
    # the tensor cores; peeled: block 0's S and the last block's P V in
    # loops of their own.
    configs = [ism.Config(bm=bm, bn=bn, warps=w, prefetch=p, stages=st,
                          pipelined=pl, ping_pong=pp, peeled=pe)
               for bm, bn, w, p, st, pl, pp, pe in (
                   (64, 64, 4, False, 1, False, False, False),
                   (64, 64, 4, False, 2, False, False, False),
                   (64, 64, 4, False, 3, False, False, False),
                   (64, 128, 4, False, 2, False, False, False),
                   (64, 64, 8, False, 3, False, False, False),
                   (128, 64, 8, False, 2, False, False, False),
                   (128, 64, 8, False, 3, False, False, False),
                   (128, 128, 8, False, 2, False, False, False),
                   (128, 64, 8, True, 1, False, False, False),
                   (128, 64, 8, False, 2, True, False, False),
                   (128, 128, 8, False, 2, True, False, False),
                   (128, 128, 8, False, 2, True, True, False),
                   (128, 128, 8, False, 2, True, False, True),
                   (128, 128, 8, False, 2, True, True, True))]

    def tuned(d):
        @ism.autotune(configs=configs, key=lambda q, k, v, o, lse, scale,
                      causal: (tuple(q.shape), causal))
        def attention(bm, bn, warps, prefetch, stages, pipelined, ping_pong,
                      peeled):
            return module_text(d, bm, bn, warps, prefetch, stages,
                               pipelined=pipelined, ping_pong=ping_pong,
                               peeled=peeled)
        return attention
    kernels = {d: tuned(d) for d in sorted({s[3] for s in shapes})}
    backends = {"flash": SDPBackend.FLASH_ATTENTION,
                "cudnn": SDPBackend.CUDNN_ATTENTION,
                "efficient": SDPBackend.EFFICIENT_ATTENTION}

    def impls(d, causal, scale):
        def run_ism(q, k, v, o, lse):
            kernels[d](q, k, v, o, lse, scale, int(causal))

        def run_triton(q, k, v, o, lse):
            tk.attention_triton(q, k, v, o, lse, scale, causal)
        out = {"ism": run_ism, "triton": run_triton}
        for name, be in backends.items():
            def run_sdpa(q, k, v, o, lse, be=be):
                with sdpa_kernel(be):
                    o.copy_(F.scaled_dot_product_attention(
                        q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0),
                        is_causal=causal, scale=scale)[0])
            out["sdpa-" + name] = run_sdpa
        return out

    # Correctness: every implementation against float64, outputs poisoned.
    print(f"device: {dev}; bf16; checks at seq {a.check_seq} (bh 4)")
    failed = False
    for d in sorted(kernels):
        for causal in (False, True):
            torch.manual_seed(d + causal)
            q, k, v = (torch.randn(4, a.check_seq, d, device="cuda",
                                   dtype=torch.bfloat16) for _ in range(3))
            scale = 1 / math.sqrt(d)
            ref_o, ref_lse = reference(q, k, v, scale, causal)
            for name, fn in impls(d, causal, scale).items():
                o = torch.full_like(q, float("nan"))
                lse = torch.full((4, a.check_seq), float("nan"),
                                 device="cuda")
                try:
                    fn(q, k, v, o, lse)
                    torch.cuda.synchronize()
                except RuntimeError as e:
                    print(f"  d={d} causal={int(causal)} {name}: "
                          f"unavailable ({str(e).splitlines()[0][:80]})")
                    continue
                err = (o.double() - ref_o).abs().max().item()
                ok = err < 2e-2 * ref_o.abs().max().item() + 1e-2
                line = f"  d={d} causal={int(causal)} {name}: O max err " \
                       f"{err:.2e}"
                if name in ("ism", "triton"):
                    lerr = (lse.double() - ref_lse).abs().max().item()
                    ok = ok and lerr < 1e-3
                    line += f", LSE max err {lerr:.2e}"
                print(line + ("" if ok else "  MISMATCH"))
                failed |= not ok

    timer = Timer(a.warmup, a.reps)
    rows = []
    for (b, h, s, d) in shapes:
        for causal in (False, True):
            flops = 4 * b * h * s * s * d / (2 if causal else 1)
            q, k, v = (torch.randn(b * h, s, d, device="cuda",
                                   dtype=torch.bfloat16) for _ in range(3))
            o = torch.empty_like(q)
            lse = torch.empty(b * h, s, device="cuda")
            scale = 1 / math.sqrt(d)
            row = {"shape": f"{b}x{h}x{s}x{d}", "causal": int(causal)}
            best = kernels[d].tune(q, k, v, o, lse, scale, int(causal))
            row["ism config"] = str(best.best)
            fns = {}
            for name, fn in impls(d, causal, scale).items():
                try:
                    fn(q, k, v, o, lse)  # Triton's autotuning happens here
                    fns[name] = fn
                except RuntimeError:
                    row[name] = None
            # Interleaved rounds: the GPU's clocks drift over a run (power,
            # temperature), by several percent at these loads; each round
            # times every implementation once, in the same order.
            rounds = {name: [] for name in fns}
            for _ in range(a.rounds):
                for name, fn in fns.items():
                    ms = timer(lambda: fn(q, k, v, o, lse))
                    rounds[name].append(flops / ms / 1e9)
            for name, tf in rounds.items():
                row[name] = statistics.median(tf)
                row[name + " rounds"] = [round(t, 1) for t in tf]
            rows.append(row)
            print(row, flush=True)

    names = ["ism", "triton", "sdpa-flash", "sdpa-cudnn", "sdpa-efficient"]
    print(f"\n{dev}, bf16 forward TFLOP/s (median over {a.rounds} "
          f"interleaved rounds of the median of {a.reps}, L2 flushed)")
    # "by round": ism against the best SDPA backend of the same round, the
    # median (and range) over rounds: the clock's drift between rounds
    # cancels.
    print("| B x H x S x D | causal | " + " | ".join(names) +
          " | x Triton | x best SDPA | x best SDPA by round | ism config |")
    print("|" + " --- |" * (len(names) + 6))
    for r in rows:
        sdpa = [n for n in names if n.startswith("sdpa") and r.get(n)]
        fmt = [f"{r[n]:.0f}" if r.get(n) else "n/a" for n in names]
        xt = r["ism"] / r["triton"] if r.get("triton") else float("nan")
        xs = r["ism"] / max(r[n] for n in sdpa) if sdpa else float("nan")
        by = [i / max(r[n + " rounds"][j] for n in sdpa)
              for j, i in enumerate(r["ism rounds"])] if sdpa else []
        br = (f"{statistics.median(by):.2f} ({min(by):.2f}-{max(by):.2f})"
              if by else "n/a")
        print(f"| {r['shape']} | {r['causal']} | " + " | ".join(fmt) +
              f" | {xt:.2f} | {xs:.2f} | {br} | {r['ism config']} |")
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "attention.json"), "w") as f:
            json.dump({"device": dev, "rows": rows}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
