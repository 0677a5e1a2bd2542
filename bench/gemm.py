#!/usr/bin/env python3
"""GEMM on tensor cores: ism against cuBLAS (torch.matmul) and Triton.

ism's GEMMs are tile programs (`program()` below writes them: block sizes,
warps, stages, group size, data type and epilogue are parameters), compiled
and run by ism-run. Two modes:

    python3 bench/gemm.py check --ism-run ISM_RUN [--out DIR]
        every variant (data types, epilogues, odd shapes) through
        `ism-run --check` (float64 reference, outputs poisoned first)
    python3 bench/gemm.py bench --ism-run ISM_RUN [--out DIR] [--quick]
        TFLOP/s of ism, torch.matmul and Triton's tutorial matmul
        (autotuned) on the same inputs, CUDA events, L2 flushed, medians
    python3 bench/gemm.py tune [--out DIR] [--quick] [--dtypes bf16,f16]
        the same through ism.autotune on torch tensors (the ism wheel), by
        default on the GEMM issue's shapes (ISSUE_SHAPES), bf16 and f16,
        against cuBLAS and Triton (tutorial and persistent TMA): chosen
        configuration, tuning time, warm-cache lookup per shape; the table,
        the issue's targets (met or missed), gemm-tune.{json,csv,png}
    python3 bench/gemm.py summary --json RUN1/gemm-tune.json ... --out DIR
        the table, targets, CSV and chart of several tune runs together

`program` also writes the .mlir files: `python3 bench/gemm.py emit DIR`.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

DTYPES = {"bf16": "bf16", "f16": "f16"}


def kernel_attrs(warps, group, stages, ck, swap=None, tma_store=False):
    """The kernel attributes program() and splitk_program() share: warps,
    group size, stages (0: the compiler's choice), cluster_k, swap_ab
    (None: the compiler's choice, which swaps a BLOCK_M below 64) and
    tma_store (the epilogue's store through shared memory and TMA)."""
    attrs = [f"num_warps = {warps} : i32", f"group_size = {group} : i32"]
    if stages:
        attrs.append(f"num_stages = {stages} : i32")
    if ck != 1:
        attrs.append(f"cluster_k = {ck} : i32")
    if swap is not None:
        attrs.append(f"swap_ab = {int(swap)} : i32")
    if tma_store:
        attrs.append("tma_store = 1 : i32")
    return attrs


def program(dtype="bf16", bm=128, bn=256, bk=64, warps=8, stages=0, group=8,
            epilogue="none", out="same", cluster=(1, 1), groups=1, ck=1,
            swap=None, bt=False, tma=False):
    """The ism GEMM tile program C = epilogue(A x B) with A M x K, B K x N.

    epilogue: none | mask (the store under an explicit bounds mask) |
    alpha_beta (alpha * AB + beta * C) | bias_relu |
    gelu (tanh form) | silu | colsum (C = AB, and S[pid_m, n] = the sum of
    the tile's column n: a reduction across warps, through shared memory
    and the consumers' barrier). out: the output type (same: the input type, or
    f32). cluster: CTAs per thread-block cluster along x and y ((2, 1):
    pairs of programs along M share B by TMA multicast; (1, 2) share A).
    groups: consumer groups (2: ping-pong, each group of `warps` warps
    computes every other program of the CTA). ck: CTAs of a cluster along K
    (2: the pair splits each program's K steps and adds the accumulators in
    distributed shared memory, split-K without a workspace). swap: the
    kernel's swap_ab (None: the compiler swaps C = A B into C^T = B^T A^T
    when BLOCK_M is below wgmma's 64; True/False: always/never). bt: B is
    given as N x K (x @ W^T, PyTorch's linear layer) and each tile is
    loaded as [BLOCK_N, BLOCK_K] and transposed. tma: the kernel's
    tma_store (the accumulator tile stored through shared memory by TMA)."""
    t = DTYPES[dtype]
    o = t if out == "same" else out
    args = [f"%A: memref<?x?x{t}>", f"%B: memref<?x?x{t}>",
            f"%C: memref<?x?x{o}>"]
    host_args = ["%A", "%B", "%C"]
    host_types = [f"memref<?x?x{t}>", f"memref<?x?x{t}>", f"memref<?x?x{o}>"]
    if epilogue == "bias_relu":
        args.append("%bias: memref<?xf32>")
        host_args.append("%bias")
        host_types.append("memref<?xf32>")
    if epilogue == "colsum":
        args.append("%S: memref<?x?xf32>")
        host_args.append("%S")
        host_types.append("memref<?x?xf32>")
    if epilogue == "alpha_beta":
        args += ["%alpha: f32", "%beta: f32"]
        host_args += ["%alpha", "%beta"]
        host_types += ["f32", "f32"]
    acc = f"tensor<{bm}x{bn}xf32>"
    attrs = kernel_attrs(warps, group, stages, ck, swap, tma)
    if tuple(cluster) != (1, 1):
        attrs += [f"cluster_m = {cluster[0]} : i32",
                  f"cluster_n = {cluster[1]} : i32"]
    if groups != 1:
        attrs.append(f"consumer_groups = {groups} : i32")
    lines = [
        f"ism.kernel @gemm({', '.join(args)}) attributes {{{', '.join(attrs)}}} {{",
        "  %pm = ism.program_id x : index",
        "  %pn = ism.program_id y : index",
        "  %c0 = arith.constant 0 : index",
        "  %c1 = arith.constant 1 : index",
        f"  %bm = arith.constant {bm} : index",
        f"  %bn = arith.constant {bn} : index",
        f"  %bk = arith.constant {bk} : index",
        "  %m0 = arith.muli %pm, %bm : index",
        "  %n0 = arith.muli %pn, %bn : index",
        f"  %K = memref.dim %A, %c1 : memref<?x?x{t}>",
        f"  %zero = arith.constant dense<0.0> : {acc}",
        f"  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> ({acc}) {{",
        f"    %a = ism.load %A[%m0, %k] : memref<?x?x{t}> -> tensor<{bm}x{bk}x{t}>",
    ] + ([
        f"    %w = ism.load %B[%n0, %k] : memref<?x?x{t}> -> tensor<{bn}x{bk}x{t}>",
        f"    %b = ism.trans %w order = [1, 0] : tensor<{bn}x{bk}x{t}> -> tensor<{bk}x{bn}x{t}>",
    ] if bt else [
        f"    %b = ism.load %B[%k, %n0] : memref<?x?x{t}> -> tensor<{bk}x{bn}x{t}>",
    ]) + [
        f"    %d = ism.dot %a, %b, %acc : tensor<{bm}x{bk}x{t}> * tensor<{bk}x{bn}x{t}> -> {acc}",
        f"    scf.yield %d : {acc}",
        "  }",
    ]
    v = "%acc"

    def splat(name, value):
        lines.append(f"  {name} = arith.constant dense<{value}> : {acc}")

    if epilogue == "alpha_beta":
        lines.append(f"  %c_in = ism.load %C[%m0, %n0] : memref<?x?x{o}> -> tensor<{bm}x{bn}x{o}>")
        c = "%c_in"
        if o != "f32":
            lines.append(f"  %c = arith.extf %c_in : tensor<{bm}x{bn}x{o}> to {acc}")
            c = "%c"
        lines += [
            f"  %al = ism.splat %alpha : f32 -> {acc}",
            f"  %be = ism.splat %beta : f32 -> {acc}",
            f"  %x1 = arith.mulf %al, {v} : {acc}",
            f"  %x2 = arith.mulf %be, {c} : {acc}",
            f"  %x3 = arith.addf %x1, %x2 : {acc}",
        ]
        v = "%x3"
    elif epilogue == "bias_relu":
        lines += [
            f"  %bv = ism.load %bias[%n0] : memref<?xf32> -> tensor<{bn}xf32>",
            f"  %be = ism.expand_dims %bv axis = 0 : tensor<{bn}xf32> -> tensor<1x{bn}xf32>",
            f"  %bb = ism.broadcast %be : tensor<1x{bn}xf32> -> {acc}",
            f"  %x1 = arith.addf {v}, %bb : {acc}",
        ]
        splat("%z", "0.0")
        lines.append(f"  %x2 = arith.maximumf %x1, %z : {acc}")
        v = "%x2"
    elif epilogue == "gelu":
        # 0.5 x (1 + tanh(s (x + 0.044715 x^3))), tanh(y) = 1 - 2 / (e^{2y} + 1)
        splat("%h", "0.5")
        splat("%one", "1.0")
        splat("%two", "2.0")
        splat("%s", "0.7978845608")
        splat("%k3", "0.044715")
        lines += [
            f"  %x2 = arith.mulf {v}, {v} : {acc}",
            f"  %x3 = arith.mulf %x2, {v} : {acc}",
            f"  %t1 = arith.mulf %k3, %x3 : {acc}",
            f"  %t2 = arith.addf {v}, %t1 : {acc}",
            f"  %y = arith.mulf %s, %t2 : {acc}",
            f"  %y2 = arith.mulf %two, %y : {acc}",
            f"  %e = math.exp %y2 : {acc}",
            f"  %e1 = arith.addf %e, %one : {acc}",
            f"  %q = arith.divf %two, %e1 : {acc}",
            f"  %th = arith.subf %one, %q : {acc}",
            f"  %u = arith.addf %one, %th : {acc}",
            f"  %hx = arith.mulf %h, {v} : {acc}",
            f"  %g = arith.mulf %hx, %u : {acc}",
        ]
        v = "%g"
    elif epilogue == "silu":
        splat("%one", "1.0")
        lines += [
            f"  %nx = arith.negf {v} : {acc}",
            f"  %e = math.exp %nx : {acc}",
            f"  %d1 = arith.addf %one, %e : {acc}",
            f"  %sl = arith.divf {v}, %d1 : {acc}",
        ]
        v = "%sl"
    elif epilogue == "colsum":
        lines += [
            f"  %cs = ism.reduce {v} axis = 0 : {acc} -> tensor<{bn}xf32> {{",
            "  ^bb0(%l: f32, %r: f32):",
            "    %sum = arith.addf %l, %r : f32",
            "    ism.yield %sum : f32",
            "  }",
            f"  %cs2 = ism.expand_dims %cs axis = 0 : tensor<{bn}xf32> -> tensor<1x{bn}xf32>",
            f"  ism.store %cs2, %S[%pm, %n0] : tensor<1x{bn}xf32> -> memref<?x?xf32>",
        ]
    if o != "f32":
        lines.append(f"  %out = arith.truncf {v} : {acc} to tensor<{bm}x{bn}x{o}>")
        v = "%out"
    store = f"  ism.store {v}, %C[%m0, %n0] : tensor<{bm}x{bn}x{o}> -> memref<?x?x{o}>"
    if epilogue == "mask":
        # An explicit bounds mask (m0 + row < M and n0 + col < N), as a
        # Triton program writes it; the tile's edges need none in ism.
        i32 = lambda shape: f"tensor<{shape}xi32>"
        lines += [
            f"  %Mi = memref.dim %C, %c0 : memref<?x?x{o}>",
            f"  %Ni = memref.dim %C, %c1 : memref<?x?x{o}>",
            "  %mrem = arith.subi %Mi, %m0 : index",
            "  %nrem = arith.subi %Ni, %n0 : index",
            "  %mr = arith.index_cast %mrem : index to i32",
            "  %nr = arith.index_cast %nrem : index to i32",
            f"  %ri = ism.range 0 to {bm} : {i32(bm)}",
            f"  %ci = ism.range 0 to {bn} : {i32(bn)}",
            f"  %re = ism.expand_dims %ri axis = 1 : {i32(bm)} -> {i32(f'{bm}x1')}",
            f"  %ce = ism.expand_dims %ci axis = 0 : {i32(bn)} -> {i32(f'1x{bn}')}",
            f"  %rb = ism.broadcast %re : {i32(f'{bm}x1')} -> {i32(f'{bm}x{bn}')}",
            f"  %cb = ism.broadcast %ce : {i32(f'1x{bn}')} -> {i32(f'{bm}x{bn}')}",
            f"  %ms = ism.splat %mr : i32 -> {i32(f'{bm}x{bn}')}",
            f"  %ns = ism.splat %nr : i32 -> {i32(f'{bm}x{bn}')}",
            f"  %rin = arith.cmpi slt, %rb, %ms : {i32(f'{bm}x{bn}')}",
            f"  %cin = arith.cmpi slt, %cb, %ns : {i32(f'{bm}x{bn}')}",
            f"  %inside = arith.andi %rin, %cin : tensor<{bm}x{bn}xi1>",
        ]
        store = (f"  ism.store {v}, %C[%m0, %n0] mask %inside : "
                 f"tensor<{bm}x{bn}x{o}> -> memref<?x?x{o}>")
    lines += [
        store,
        "  ism.return",
        "}",
        "",
        f"func.func @main({', '.join(f'{a}: {ty}' for a, ty in zip(host_args, host_types))}) {{",
        "  %c0 = arith.constant 0 : index",
        "  %c1 = arith.constant 1 : index",
        f"  %bm = arith.constant {bm} : index",
        f"  %bn = arith.constant {bn} : index",
        f"  %M = memref.dim %A, %c0 : memref<?x?x{t}>",
        f"  %N = memref.dim %B, {'%c0' if bt else '%c1'} : memref<?x?x{t}>",
        "  %gm = arith.ceildivui %M, %bm : index",
        "  %gn = arith.ceildivui %N, %bn : index",
        f"  ism.launch @gemm grid(%gm, %gn) ({', '.join(host_args)}) : ({', '.join(host_types)})",
        "  return",
        "}",
    ]
    return "\n".join(lines) + "\n"


def ism_args(dtype, m, n, k, epilogue="none", out="same", bt=False, bm=128):
    o = dtype if out == "same" else out
    args = [f"{dtype}:{m}x{k}:randn",
            f"{dtype}:{n}x{k}:randn" if bt else f"{dtype}:{k}x{n}:randn",
            f"{o}:{m}x{n}" + (":randn" if epilogue == "alpha_beta" else "")]
    if epilogue == "bias_relu":
        args.append(f"f32:{n}:randn")
    if epilogue == "alpha_beta":
        args += ["f32:scalar=0.75", "f32:scalar=-0.5"]
    if epilogue == "colsum":
        args.append(f"f32:{-(-m // bm)}x{n}")  # a row per program along M
    return args


def write(out_dir, name, text):
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, name + ".mlir")
    with open(path, "w") as f:
        f.write(text)
    return path


def batched_program(dtype="bf16", bm=128, bn=256, bk=64, warps=8):
    """Batched GEMM C[z] = A[z] x B[z], one grid z per matrix: the batch is
    stacked in 2-D memrefs (A (batch*M) x K, B (batch*K) x N, C (batch*M) x
    N), so the usual TMA path applies. M and K must be multiples of the
    block sizes (a tile never reaches into the next matrix)."""
    t = DTYPES[dtype]
    acc = f"tensor<{bm}x{bn}xf32>"
    return f"""ism.kernel @bgemm(%A: memref<?x?x{t}>, %B: memref<?x?x{t}>, %C: memref<?x?x{t}>,
                  %Mi: i32, %Ki: i32) attributes {{num_warps = {warps} : i32}} {{
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %z = ism.program_id z : index
  %M = arith.index_cast %Mi : i32 to index
  %K = arith.index_cast %Ki : i32 to index
  %c0 = arith.constant 0 : index
  %bm = arith.constant {bm} : index
  %bn = arith.constant {bn} : index
  %bk = arith.constant {bk} : index
  %zm = arith.muli %z, %M : index
  %zk = arith.muli %z, %K : index
  %m = arith.muli %pm, %bm : index
  %m0 = arith.addi %zm, %m : index
  %n0 = arith.muli %pn, %bn : index
  %zero = arith.constant dense<0.0> : {acc}
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> ({acc}) {{
    %kb = arith.addi %zk, %k : index
    %a = ism.load %A[%m0, %k] : memref<?x?x{t}> -> tensor<{bm}x{bk}x{t}>
    %b = ism.load %B[%kb, %n0] : memref<?x?x{t}> -> tensor<{bk}x{bn}x{t}>
    %d = ism.dot %a, %b, %acc : tensor<{bm}x{bk}x{t}> * tensor<{bk}x{bn}x{t}> -> {acc}
    scf.yield %d : {acc}
  }}
  %out = arith.truncf %acc : {acc} to tensor<{bm}x{bn}x{t}>
  ism.store %out, %C[%m0, %n0] : tensor<{bm}x{bn}x{t}> -> memref<?x?x{t}>
  ism.return
}}

func.func @main(%A: memref<?x?x{t}>, %B: memref<?x?x{t}>, %C: memref<?x?x{t}>,
                %Mi: i32, %Ki: i32, %batch: i32) {{
  %c1 = arith.constant 1 : index
  %bm = arith.constant {bm} : index
  %bn = arith.constant {bn} : index
  %M = arith.index_cast %Mi : i32 to index
  %N = memref.dim %B, %c1 : memref<?x?x{t}>
  %gz = arith.index_cast %batch : i32 to index
  %gm = arith.ceildivui %M, %bm : index
  %gn = arith.ceildivui %N, %bn : index
  ism.launch @bgemm grid(%gm, %gn, %gz) (%A, %B, %C, %Mi, %Ki)
      : (memref<?x?x{t}>, memref<?x?x{t}>, memref<?x?x{t}>, i32, i32)
  return
}}
"""


def sum_bands(splits, band, m0, tile, indent):
    """The sum of the `splits` partial tiles at rows s * band + m0, column
    %n0, of the workspace %W, as %sum: every load written out (the split
    count is a constant of the program), so that all of them are in flight
    before the first add rather than one round trip per split (the
    summing kernel's; the one-pass form's last program keeps its loop: its
    tiles are the GEMM's, too large to hold every split's at once)."""
    lines = []
    for s in range(splits):
        lines.append(f"%ks{s} = arith.constant {s} : index")
        lines.append(f"%off{s} = arith.muli %ks{s}, {band} : index")
        lines.append(f"%row{s} = arith.addi %off{s}, {m0} : index")
        lines.append(f"%part{s} = ism.load %W[%row{s}, %n0] : "
                     f"memref<?x?xf32> -> {tile}")
    last = "%part0"
    for s in range(1, splits):
        name = "%sum" if s == splits - 1 else f"%acc{s}"
        lines.append(f"{name} = arith.addf {last}, %part{s} : {tile}")
        last = name
    return "\n".join(indent + line for line in lines)


def split_bounds(t):
    """Kernel text: the K chunk [%lo, %hi) of grid-z split %z of %splits,
    whole %bk steps, of A's K columns (%c1, %bk, %z, %splits defined)."""
    return f"""  %K = memref.dim %A, %c1 : memref<?x?x{t}>
  %steps = arith.ceildivui %K, %bk : index
  %per = arith.ceildivui %steps, %splits : index
  %chunk = arith.muli %per, %bk : index
  %lo = arith.muli %z, %chunk : index
  %hi0 = arith.addi %lo, %chunk : index
  %hi = arith.minui %hi0, %K : index
"""


# Kernel text: %is_last, whether this program took the last of %splits
# tickets from its counter %Count[%slot], %tile's (acq_rel: what the
# program stored before is visible to the last one, which reads it after).
LAST_TICKET = """  %tile_i = arith.index_cast %tile : index to i32
  %slot = ism.splat %tile_i : i32 -> tensor<1xi32>
  %one = arith.constant dense<1> : tensor<1xi32>
  %t1 = ism.atomic_rmw add %Count[%slot], %one sem = acq_rel
      : memref<?xi32>[tensor<1xi32>], tensor<1xi32>
  %ticket = ism.reduce %t1 axis = 0 : tensor<1xi32> -> i32 {
  ^bb0(%x: i32, %y: i32):
    %s = arith.addi %x, %y : i32
    ism.yield %s : i32
  }
  %splits_i = arith.index_cast %splits : index to i32
  %c1_i = arith.constant 1 : i32
  %last = arith.subi %splits_i, %c1_i : i32
  %is_last = arith.cmpi eq, %ticket, %last : i32
"""


def splitk_program(dtype="bf16", bm=128, bn=256, bk=64, warps=8, splits=4,
                   stages=0, group=8, fixup=True, sum_rows=0, ck=1):
    """Split-K, C = A x B: grid z splits K into `splits` chunks (whole
    BLOCK_K steps); each program writes its f32 partial tile to a workspace
    the host function allocates (memref.alloc: `splits` bands of
    ceil(M / BLOCK_M) * BLOCK_M rows x N). With `fixup` (one pass), each
    program then takes a ticket from its tile's counter (an ism.zeroed
    temporary, one int32 per tile, left at zero) and the program with the
    last ticket sums the tile's bands into C; without it (two passes), a
    second kernel sums them. Same signature as program(): (A, B, C), any
    M, N, K. ck = 2 also splits each program's K chunk over a cluster's two
    CTAs (cluster_k, program())."""
    if splits < 2:
        raise ValueError(f"split-K needs at least 2 splits, not {splits} "
                         f"(program() computes the whole K)")
    t = DTYPES[dtype]
    acc = f"tensor<{bm}x{bn}xf32>"
    attrs = kernel_attrs(warps, group, stages, ck)
    # The summing kernel's tile: its loads of every split are in flight at
    # once, at most 64 f32 values a thread in all (4 warps), and 4 rows at
    # most: many small programs finish sooner than few large ones
    # (on the H200, 4 rows were 0-8% faster than 32 on the skinny shapes).
    sr, sc = min(4, 1 << max(0, (64 // splits).bit_length() - 1)), 128
    if sum_rows:  # an explicit height (a power of two), for experiments
        sr = sum_rows
    main_loop = f"""  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %z = ism.program_id z : index
  %gm = ism.num_programs x : index
  %splits = ism.num_programs z : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant {bm} : index
  %bn = arith.constant {bn} : index
  %bk = arith.constant {bk} : index
{split_bounds(t)}  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %zero = arith.constant dense<0.0> : {acc}
  %acc = scf.for %k = %lo to %hi step %bk iter_args(%acc = %zero) -> ({acc}) {{
    %a = ism.load %A[%m0, %k] : memref<?x?x{t}> -> tensor<{bm}x{bk}x{t}>
    %b = ism.load %B[%k, %n0] : memref<?x?x{t}> -> tensor<{bk}x{bn}x{t}>
    %d = ism.dot %a, %b, %acc : tensor<{bm}x{bk}x{t}> * tensor<{bk}x{bn}x{t}> -> {acc}
    scf.yield %d : {acc}
  }}
  %band = arith.muli %gm, %bm : index
  %zm = arith.muli %z, %band : index
  %row = arith.addi %zm, %m0 : index
  ism.store %acc, %W[%row, %n0] : {acc} -> memref<?x?xf32>
"""
    host_head = f"""func.func @main(%A: memref<?x?x{t}>, %B: memref<?x?x{t}>, %C: memref<?x?x{t}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant {bm} : index
  %bn = arith.constant {bn} : index
  %gs = arith.constant {splits} : index
  %M = memref.dim %A, %c0 : memref<?x?x{t}>
  %N = memref.dim %B, %c1 : memref<?x?x{t}>
  %gm = arith.ceildivui %M, %bm : index
  %gn = arith.ceildivui %N, %bn : index
  %band = arith.muli %gm, %bm : index
  %rows = arith.muli %band, %gs : index
  %W = memref.alloc(%rows, %N) : memref<?x?xf32>
"""
    if fixup:
        return f"""ism.kernel @gemm_split(%A: memref<?x?x{t}>, %B: memref<?x?x{t}>, %W: memref<?x?xf32>,
                      %C: memref<?x?x{t}>, %Count: memref<?xi32>)
    attributes {{{', '.join(attrs)}}} {{
{main_loop}
  // A ticket from the tile's counter (acq_rel: this program's partial is
  // stored before it; the last program reads every partial after it).
  %gn = ism.num_programs y : index
  %tm = arith.muli %pm, %gn : index
  %tile = arith.addi %tm, %pn : index
{LAST_TICKET}  scf.if %is_last {{
    %sum = scf.for %s = %c0 to %splits step %c1 iter_args(%sa = %zero) -> ({acc}) {{
      %sm = arith.muli %s, %band : index
      %srow = arith.addi %sm, %m0 : index
      %p = ism.load %W[%srow, %n0] : memref<?x?xf32> -> {acc}
      %r = arith.addf %sa, %p : {acc}
      scf.yield %r : {acc}
    }}
    %out = arith.truncf %sum : {acc} to tensor<{bm}x{bn}x{t}>
    ism.store %out, %C[%m0, %n0] : tensor<{bm}x{bn}x{t}> -> memref<?x?x{t}>
    // Every split of the tile has its ticket: reset the counter.
    %zero_t = arith.constant dense<0> : tensor<1xi32>
    ism.scatter %zero_t, %Count[%slot] : tensor<1xi32> -> memref<?xi32>[tensor<1xi32>]
  }}
  ism.return
}}

{host_head}  %tiles = arith.muli %gm, %gn : index
  %Count = memref.alloc(%tiles) {{ism.zeroed}} : memref<?xi32>
  ism.launch @gemm_split grid(%gm, %gn, %gs) (%A, %B, %W, %C, %Count)
      : (memref<?x?x{t}>, memref<?x?x{t}>, memref<?x?xf32>, memref<?x?x{t}>,
         memref<?xi32>)
  memref.dealloc %W : memref<?x?xf32>
  memref.dealloc %Count : memref<?xi32>
  return
}}
"""
    return f"""ism.kernel @gemm_split(%A: memref<?x?x{t}>, %B: memref<?x?x{t}>, %W: memref<?x?xf32>)
    attributes {{{', '.join(attrs)}}} {{
{main_loop}  ism.return
}}

ism.kernel @split_sum(%W: memref<?x?xf32>, %C: memref<?x?x{t}>, %band: index)
    attributes {{num_warps = 4 : i32}} {{
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %br = arith.constant {sr} : index
  %bc = arith.constant {sc} : index
  %m0 = arith.muli %pm, %br : index
  %n0 = arith.muli %pn, %bc : index
{sum_bands(splits, "%band", "%m0", f"tensor<{sr}x{sc}xf32>", "  ")}
  %out = arith.truncf %sum : tensor<{sr}x{sc}xf32> to tensor<{sr}x{sc}x{t}>
  ism.store %out, %C[%m0, %n0] : tensor<{sr}x{sc}x{t}> -> memref<?x?x{t}>
  ism.return
}}

{host_head}  %br = arith.constant {sr} : index
  %bc = arith.constant {sc} : index
  ism.launch @gemm_split grid(%gm, %gn, %gs) (%A, %B, %W)
      : (memref<?x?x{t}>, memref<?x?x{t}>, memref<?x?xf32>)
  %hm = arith.ceildivui %M, %br : index
  %hn = arith.ceildivui %N, %bc : index
  ism.launch @split_sum grid(%hm, %hn) (%W, %C, %band)
      : (memref<?x?xf32>, memref<?x?x{t}>, index)
  memref.dealloc %W : memref<?x?xf32>
  return
}}
"""


def gemv_program(dtype="bf16", bk=128, bn=64, warps=4, splits=8):
    """Decode-shaped C = A x B (M of 1 to a few rows) on the CUDA cores,
    no tensor cores: program (m, n, z) multiplies row m of A by a
    BLOCK_K x BLOCK_N tile of B at a time over the z-th of `splits` K
    chunks, keeping the products in a BLOCK_K x BLOCK_N f32 tile (no
    reduction inside the loop), sums the tile's rows once after it, and
    stores the partial row in an f32 workspace (`splits` bands of M rows x
    N). The program with the last ticket of its (m, n) counter sums the
    bands into C (split-K's one-pass fix-up, splitk_program()). Same
    signature as program(): (A, B, C), any M, N, K. Measured on the H200
    it is slower than the swapped tensor-core kernels at M = 1 (0.85-0.89x
    cuBLAS): each K step waits for its own loads in registers, where their
    TMA rings keep 8 stages in flight; so it is an experiment, not a tuner
    candidate."""
    if splits < 1:
        raise ValueError(f"gemv needs at least 1 split, not {splits}")
    t = DTYPES[dtype]
    acc = f"tensor<{bk}x{bn}xf32>"
    row = f"tensor<1x{bn}xf32>"
    return f"""ism.kernel @gemv(%A: memref<?x?x{t}>, %B: memref<?x?x{t}>, %W: memref<?x?xf32>,
                 %C: memref<?x?x{t}>, %Count: memref<?xi32>)
    attributes {{num_warps = {warps} : i32}} {{
  %m = ism.program_id x : index
  %pn = ism.program_id y : index
  %z = ism.program_id z : index
  %M = ism.num_programs x : index
  %gn = ism.num_programs y : index
  %splits = ism.num_programs z : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bn = arith.constant {bn} : index
  %bk = arith.constant {bk} : index
{split_bounds(t)}  %n0 = arith.muli %pn, %bn : index
  %zero = arith.constant dense<0.0> : {acc}
  %acc = scf.for %k = %lo to %hi step %bk iter_args(%acc = %zero) -> ({acc}) {{
    %b = ism.load %B[%k, %n0] : memref<?x?x{t}> -> tensor<{bk}x{bn}x{t}>
    %a = ism.load %A[%m, %k] : memref<?x?x{t}> -> tensor<1x{bk}x{t}>
    %af = arith.extf %a : tensor<1x{bk}x{t}> to tensor<1x{bk}xf32>
    %a1 = ism.reshape %af : tensor<1x{bk}xf32> -> tensor<{bk}xf32>
    %ac = ism.expand_dims %a1 axis = 1 : tensor<{bk}xf32> -> tensor<{bk}x1xf32>
    %ab = ism.broadcast %ac : tensor<{bk}x1xf32> -> {acc}
    %bf = arith.extf %b : tensor<{bk}x{bn}x{t}> to {acc}
    %p = math.fma %ab, %bf, %acc : {acc}
    scf.yield %p : {acc}
  }}
  %r = ism.reduce %acc axis = 0 : {acc} -> tensor<{bn}xf32> {{
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    ism.yield %s : f32
  }}
  %part = ism.expand_dims %r axis = 0 : tensor<{bn}xf32> -> {row}
  %zm = arith.muli %z, %M : index
  %wrow = arith.addi %zm, %m : index
  ism.store %part, %W[%wrow, %n0] : {row} -> memref<?x?xf32>
  // A ticket from the (m, n) counter (acq_rel: the partial row is stored
  // before it; the last program reads every partial after it).
  %tm = arith.muli %m, %gn : index
  %tile = arith.addi %tm, %pn : index
{LAST_TICKET}  scf.if %is_last {{
    %z1 = arith.constant dense<0.0> : {row}
    %sum = scf.for %s = %c0 to %splits step %c1 iter_args(%sa = %z1) -> ({row}) {{
      %sm = arith.muli %s, %M : index
      %srow = arith.addi %sm, %m : index
      %q = ism.load %W[%srow, %n0] : memref<?x?xf32> -> {row}
      %u = arith.addf %sa, %q : {row}
      scf.yield %u : {row}
    }}
    %out = arith.truncf %sum : {row} to tensor<1x{bn}x{t}>
    ism.store %out, %C[%m, %n0] : tensor<1x{bn}x{t}> -> memref<?x?x{t}>
    // Every split has its ticket: reset the counter.
    %zero_t = arith.constant dense<0> : tensor<1xi32>
    ism.scatter %zero_t, %Count[%slot] : tensor<1xi32> -> memref<?xi32>[tensor<1xi32>]
  }}
  ism.return
}}

func.func @main(%A: memref<?x?x{t}>, %B: memref<?x?x{t}>, %C: memref<?x?x{t}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bn = arith.constant {bn} : index
  %gs = arith.constant {splits} : index
  %M = memref.dim %A, %c0 : memref<?x?x{t}>
  %N = memref.dim %B, %c1 : memref<?x?x{t}>
  %gn = arith.ceildivui %N, %bn : index
  %rows = arith.muli %M, %gs : index
  %W = memref.alloc(%rows, %N) : memref<?x?xf32>
  %tiles = arith.muli %M, %gn : index
  %Count = memref.alloc(%tiles) {{ism.zeroed}} : memref<?xi32>
  ism.launch @gemv grid(%M, %gn, %gs) (%A, %B, %W, %C, %Count)
      : (memref<?x?x{t}>, memref<?x?x{t}>, memref<?x?xf32>, memref<?x?x{t}>,
         memref<?xi32>)
  memref.dealloc %W : memref<?x?xf32>
  memref.dealloc %Count : memref<?xi32>
  return
}}
"""


# name, program text, ism-run --arg list: batched and split-K.
def extra_checks():
    b, m, n, k = 3, 256, 384, 512
    s = 4
    return [
        ("bf16_batched_3x256x384x512", batched_program(),
         [f"bf16:{b * m}x{k}:randn", f"bf16:{b * k}x{n}:randn",
          f"bf16:{b * m}x{n}", f"i32:scalar={m}", f"i32:scalar={k}",
          f"i32:scalar={b}"]),
        ("bf16_splitk4_256x512x4096", splitk_program(splits=s),
         [f"bf16:256x4096:randn", f"bf16:4096x512:randn", f"bf16:256x512"]),
        # Skinny: M below the block, K not a multiple of the splits' chunks.
        ("bf16_splitk3_16x1000x4000", splitk_program(
            bm=64, bn=128, warps=4, splits=3),
         [f"bf16:16x4000:randn", f"bf16:4000x1000:randn", f"bf16:16x1000"]),
        # 128x128 on 8 consumer warps, more tiles than SMs (persistent).
        ("bf16_splitk8_128x128_1000x2000x4096", splitk_program(
            bm=128, bn=128, warps=8, splits=8),
         [f"bf16:1000x4096:randn", f"bf16:4096x2000:randn",
          f"bf16:1000x2000"]),
        # The two-pass form (a second kernel sums the partials).
        ("bf16_splitk3_2pass_16x1000x4000", splitk_program(
            bm=64, bn=128, warps=4, splits=3, fixup=False),
         [f"bf16:16x4000:randn", f"bf16:4000x1000:randn", f"bf16:16x1000"]),
        # Deep pipelines (the skinny shapes' candidates).
        ("bf16_64x128_s8_300x1000x2000", program(
            bm=64, bn=128, warps=4, stages=8),
         [f"bf16:300x2000:randn", f"bf16:2000x1000:randn", f"bf16:300x1000"]),
        ("bf16_splitk3_64x64_s12_16x1000x4000", splitk_program(
            bm=64, bn=64, warps=4, splits=3, stages=12),
         [f"bf16:16x4000:randn", f"bf16:4000x1000:randn", f"bf16:16x1000"]),
        ("bf16_splitk3_64x32_s16_16x1000x4000", splitk_program(
            bm=64, bn=32, warps=4, splits=3, stages=16, fixup=False),
         [f"bf16:16x4000:randn", f"bf16:4000x1000:randn", f"bf16:16x1000"]),
        # Grid z splits whose K chunks are each split over a cluster's two
        # CTAs (cluster_k = 2), two passes and one (the ticket taken by the
        # first CTA of each pair only).
        ("bf16_splitk3_ck2_2pass_16x1000x4000", splitk_program(
            bm=64, bn=128, warps=4, splits=3, stages=8, fixup=False, ck=2),
         [f"bf16:16x4000:randn", f"bf16:4000x1000:randn", f"bf16:16x1000"]),
        ("bf16_splitk2_ck2_300x1000x2000", splitk_program(
            bm=64, bn=128, warps=4, splits=2, stages=8, ck=2),
         [f"bf16:300x2000:randn", f"bf16:2000x1000:randn", f"bf16:300x1000"]),
        # Split-K of a swapped product (BLOCK_M 16).
        ("bf16_splitk3_swap_16x1000x4000", splitk_program(
            bm=16, bn=128, warps=4, splits=3, stages=8),
         [f"bf16:16x4000:randn", f"bf16:4000x1000:randn", f"bf16:16x1000"]),
    ]


# Skinny and decode shapes: M = 1, 16, 64, 128 with N = K = 4096 and 8192.
SKINNY = [(m, nk, nk) for nk in (4096, 8192) for m in (1, 16, 64, 128)]
# The GEMM issue's benchmark: the squares 1024-8192 (6144 included), the
# LLM shapes (M = 4096 and 8192 with N x K = 4096x4096, 14336x4096,
# 4096x14336, 11008x4096), 8192x1024x8192 and the skinny shapes.
SQUARES = [(s, s, s) for s in (1024, 2048, 4096, 6144, 8192)]
LLM = [(m, n, k) for m in (4096, 8192)
       for n, k in ((4096, 4096), (14336, 4096), (4096, 14336), (11008, 4096))]
ISSUE_SHAPES = list(dict.fromkeys(SQUARES + LLM + [(8192, 1024, 8192)] +
                                  SKINNY))  # 4096^3 once

# name, program kwargs, (M, N, K)
CHECKS = [
    ("bf16_128x256_4096", dict(), (512, 1024, 4096)),
    ("bf16_odd_4095x4097x1000", dict(), (4095, 4097, 1000)),
    ("bf16_aligned_partial_1000x1000x1000", dict(), (1000, 1000, 1000)),
    ("bf16_128x128", dict(bn=128), (640, 384, 512)),
    ("f16_128x256", dict(dtype="f16"), (512, 512, 768)),
    ("bf16_out_f32", dict(out="f32"), (256, 512, 512)),
    ("bf16_64x128_4warps", dict(bm=64, bn=128, warps=4), (320, 384, 256)),
    # 32-column B tiles (64-byte swizzle): partial tiles (N = 1000), a
    # 16-stage ring; element copies of B (N = 1001: rows of 2002 bytes are
    # not TMA's); f16 at a decode shape.
    ("bf16_64x32_s16", dict(bm=64, bn=32, warps=4, stages=16),
     (300, 1000, 2000)),
    ("bf16_64x32_copies", dict(bm=64, bn=32, warps=4), (200, 1001, 512)),
    ("f16_64x32_decode", dict(dtype="f16", bm=64, bn=32, warps=4, stages=12),
     (16, 4096, 1024)),
    # ... in 2-CTA clusters: 2x1 multicasts B's 64-byte rows in halves of
    # 32 rows, 1x2 multicasts A.
    ("bf16_64x32_cluster2x1", dict(bm=64, bn=32, warps=4, stages=12,
                                   cluster=(2, 1)), (1100, 1000, 512)),
    ("bf16_64x32_cluster1x2", dict(bm=64, bn=32, warps=4, stages=12,
                                   cluster=(1, 2)), (130, 1000, 512)),
    ("bf16_alpha_beta", dict(epilogue="alpha_beta"), (384, 512, 512)),
    ("bf16_bias_relu", dict(epilogue="bias_relu"), (384, 512, 512)),
    # The accumulator stored under a mask (partial tiles at both edges).
    ("bf16_masked_store", dict(bn=128, epilogue="mask"), (1000, 1000, 512)),
    ("bf16_gelu", dict(epilogue="gelu"), (384, 512, 512)),
    ("bf16_silu", dict(epilogue="silu"), (384, 512, 512)),
    ("bf16_decode_m16", dict(), (16, 4096, 4096)),
    # Clusters of two CTAs with TMA multicast: an odd number of programs
    # along the paired dimension (the last pair is one short), and rows
    # TMA cannot describe (element copies inside a cluster).
    ("bf16_cluster2x1_4096", dict(cluster=(2, 1)), (512, 1024, 4096)),
    ("bf16_cluster2x1_odd", dict(cluster=(2, 1)), (1100, 1000, 1000)),
    ("bf16_cluster1x2_odd", dict(bn=128, cluster=(1, 2)), (1000, 1100, 1000)),
    ("bf16_cluster2x1_copies", dict(cluster=(2, 1)), (1100, 1001, 1000)),
    # Two consumer groups (ping-pong), each taking every other program of
    # its CTA: more programs than SMs so that both groups work, partial
    # tiles and K not a multiple of 64, element copies, a 2-CTA cluster,
    # and an epilogue that synchronises (each group on its own barrier, with
    # its own shared-memory scratch).
    ("bf16_pingpong_128x128", dict(bn=128, warps=4, groups=2),
     (2000, 2100, 1000)),
    ("bf16_pingpong_64x256", dict(bm=64, warps=4, groups=2),
     (1000, 4096, 512)),
    ("bf16_pingpong_copies", dict(bn=128, warps=4, groups=2),
     (2000, 2001, 1000)),
    ("bf16_pingpong_cluster2x1", dict(bn=128, warps=4, groups=2,
                                      cluster=(2, 1)), (2100, 2000, 1000)),
    ("bf16_pingpong_colsum", dict(bn=128, warps=4, groups=2,
                                  epilogue="colsum"), (2000, 2048, 512)),
    # A K loop split over a cluster's two CTAs (cluster_k = 2), the second
    # adding its accumulator into the first's through distributed shared
    # memory: a skinny shape; partial tiles and K = 1000 (16 steps, the last
    # partial: 9 + 7, the first CTA leads by two); an odd number of K steps
    # (5: 4 + 1) and a single step (the second CTA adds zeros); more
    # programs than clusters (the exchange's phases alternate); 128x128 on 8
    # warps; f16; element copies; an epilogue that reads C and one that
    # reduces across warps.
    ("bf16_ck2_64x128_s8", dict(bm=64, bn=128, warps=4, stages=8, ck=2),
     (64, 4096, 4096)),
    ("bf16_ck2_partial", dict(bm=64, bn=128, warps=4, stages=8, ck=2),
     (100, 1000, 1000)),
    ("bf16_ck2_odd_steps", dict(bm=64, bn=128, warps=4, stages=8, ck=2),
     (130, 1100, 320)),
    ("bf16_ck2_one_step", dict(bm=64, bn=128, warps=4, stages=8, ck=2),
     (64, 512, 64)),
    ("bf16_ck2_many", dict(bm=64, bn=128, warps=4, stages=6, ck=2),
     (1000, 2000, 1000)),
    ("bf16_ck2_128x128", dict(bn=128, stages=4, ck=2), (300, 1000, 2000)),
    ("f16_ck2_decode", dict(dtype="f16", bm=64, bn=128, warps=4, stages=8,
                            ck=2), (1, 4096, 4096)),
    ("bf16_ck2_copies", dict(bm=64, bn=128, warps=4, stages=8, ck=2),
     (100, 1001, 1000)),
    ("bf16_ck2_alpha_beta", dict(bm=64, bn=128, warps=4, stages=8, ck=2,
                                 epilogue="alpha_beta"), (200, 512, 1000)),
    ("bf16_ck2_colsum", dict(bn=128, stages=4, ck=2, epilogue="colsum"),
     (200, 1024, 512)),
    # Swap-AB (C^T = B^T A^T, the small M as the instruction's N; the
    # compiler's choice below BLOCK_M = 64): M = 16 and 1 (BLOCK_M 8, one
    # m64n8k16 per 64 columns), partial tiles and K = 1000, two warpgroups
    # along the swapped M, forced at BLOCK_M = 64, split over a cluster's
    # two CTAs, in 2x1 and 1x2 clusters (the shared tiles swap roles: a 2x1
    # pair multicasts the dot's A, B's tile), element copies, ping-pong, an
    # epilogue that reads C, f16.
    ("bf16_swap_16x128", dict(bm=16, bn=128, warps=4, stages=8),
     (16, 4096, 4096)),
    ("bf16_swap_m1_8x64", dict(bm=8, bn=64, warps=4, stages=8),
     (1, 4096, 4096)),
    ("bf16_swap_partial", dict(bm=16, bn=128, warps=4), (100, 1000, 1000)),
    ("f16_swap_32x256_w8", dict(dtype="f16", bm=32, bn=256, warps=8),
     (200, 1000, 2000)),
    ("bf16_swap_forced_64x128", dict(bm=64, bn=128, warps=4, swap=True),
     (300, 1000, 512)),
    ("bf16_swap_ck2", dict(bm=16, bn=128, warps=4, stages=8, ck=2),
     (100, 1000, 1000)),
    ("bf16_swap_cluster2x1", dict(bm=16, bn=128, warps=4,
                                  cluster=(2, 1)), (100, 1000, 1000)),
    ("bf16_swap_cluster1x2", dict(bm=16, bn=128, warps=4,
                                  cluster=(1, 2)), (100, 1000, 1000)),
    ("bf16_swap_copies", dict(bm=16, bn=128, warps=4), (100, 1001, 1000)),
    ("bf16_swap_pingpong", dict(bm=16, bn=128, warps=4, groups=2),
     (300, 2000, 1000)),
    ("bf16_swap_alpha_beta", dict(bm=16, bn=128, warps=4,
                                  epilogue="alpha_beta"), (100, 1000, 512)),
    # Four m64n8 pieces a warpgroup (BLOCK_N 256 over 4 warps), an f32
    # output and K = 700; eight warps with a column-sum epilogue; gelu.
    ("bf16_swap_8x256_f32", dict(bm=8, bn=256, warps=4, out="f32"),
     (5, 1000, 700)),
    ("bf16_swap_16x128_w8_colsum", dict(bm=16, bn=128, warps=8,
                                        epilogue="colsum"), (40, 1024, 512)),
    ("bf16_swap_32x64_gelu", dict(bm=32, bn=64, warps=4, epilogue="gelu"),
     (100, 1000, 512)),
    # B given as N x K (x @ W^T) and transposed in the program: the wgmma
    # reads it K-major; swapped, both operands are K-major.
    ("bf16_bt_128x128", dict(bn=128, bt=True), (640, 384, 512)),
    ("bf16_bt_swap_16x128", dict(bm=16, bn=128, warps=4, bt=True),
     (16, 1000, 1000)),
    # The TMA-store epilogue (tma_store = 1): whole tiles, partial tiles
    # (TMA clips them), a C whose rows TMA cannot describe (stored from
    # registers), 64x128 on 4 warps, f16, an epilogue before the store,
    # ping-pong (each group's warps their own boxes), cluster_k and a 2x1
    # cluster (only the programs of the grid store).
    ("bf16_tma_128x256", dict(stages=4, tma=True), (512, 1024, 4096)),
    ("bf16_tma_partial", dict(stages=4, tma=True), (1000, 1000, 1000)),
    ("bf16_tma_copies", dict(stages=4, tma=True), (1000, 1001, 512)),
    ("bf16_tma_64x128", dict(bm=64, bn=128, warps=4, stages=8, tma=True),
     (300, 1000, 2000)),
    ("f16_tma_128x128", dict(dtype="f16", bn=128, tma=True),
     (640, 384, 512)),
    ("bf16_tma_bias_relu", dict(stages=4, epilogue="bias_relu", tma=True),
     (384, 512, 512)),
    ("bf16_tma_pingpong", dict(bn=128, warps=4, groups=2, tma=True),
     (2000, 2100, 1000)),
    ("bf16_tma_ck2", dict(bm=64, bn=128, warps=4, stages=6, ck=2, tma=True),
     (100, 1000, 1000)),
    ("bf16_tma_cluster2x1", dict(stages=3, cluster=(2, 1), tma=True),
     (1100, 1000, 1000)),
]

# The Ampere path (mma.sync, ldmatrix, cp.async), compiled for sm_80 and run
# on the same GPU: name, program kwargs, (M, N, K).
AMPERE_CHECKS = [
    ("bf16_128x128", dict(bn=128), (640, 384, 512)),
    ("bf16_odd_4095x4097x1000", dict(), (4095, 4097, 1000)),
    ("f16_128x256", dict(dtype="f16"), (512, 512, 768)),
    ("bf16_bias_relu", dict(epilogue="bias_relu"), (384, 512, 512)),
    # Transposed tiles in the K loop: products of their own on mma.sync.
    ("bf16_swap_16x128", dict(bm=16, bn=128, warps=4), (100, 1000, 1000)),
    ("bf16_bt_128x128", dict(bn=128, bt=True), (640, 384, 512)),
]


def run(cmd, timeout=180):
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {timeout} s"
    return proc.returncode, proc.stdout, proc.stderr


def selected(args, name):
    """Whether --only (comma-separated substrings) keeps `name`."""
    return not args.only or any(w in name for w in args.only.split(","))


def check(args):
    rows = []
    runs = [(name, kw, shape, None) for name, kw, shape in CHECKS]
    runs += [("sm80_" + name, kw, shape, "sm_80")
             for name, kw, shape in AMPERE_CHECKS]
    runs = [r for r in runs if selected(args, r[0])]
    for name, kw, (m, n, k), chip in runs:
        path = write(args.out, name, program(**kw))
        cmd = [args.ism_run, path, "--check"]
        if chip:
            cmd.append(f"--chip={chip}")
        for a in ism_args(kw.get("dtype", "bf16"), m, n, k,
                          kw.get("epilogue", "none"), kw.get("out", "same"),
                          kw.get("bt", False), kw.get("bm", 128)):
            cmd += ["--arg", a]
        rc, out, err = run(cmd, args.timeout)
        status = "PASS" if rc == 0 else "FAIL"
        detail = (out + err).strip().splitlines()
        rows.append((name, f"{m}x{n}x{k}", status, detail[-1] if detail else ""))
        print(f"{status} {name} {m}x{n}x{k}: {detail[-1] if detail else ''}",
              flush=True)
    for name, text, margs in extra_checks():
        if not selected(args, name):
            continue
        path = write(args.out, name, text)
        cmd = [args.ism_run, path, "--check"]
        for a in margs:
            cmd += ["--arg", a]
        rc, out, err = run(cmd)
        status = "PASS" if rc == 0 else "FAIL"
        detail = (out + err).strip().splitlines()
        rows.append((name, "", status, detail[-1] if detail else ""))
        print(f"{status} {name}: {' | '.join(detail[-2:])}", flush=True)
    failed = [r for r in rows if r[2] != "PASS"]
    print(f"gemm checks: {len(rows) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


def bench(args):
    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench import Timer
    import triton_matmul

    timer = Timer(args.warmup, args.reps)
    shapes = [(4096, 4096, 4096), (8192, 8192, 8192)]
    if not args.quick:
        shapes = [(s, s, s) for s in (1024, 2048, 4096, 8192)] + [
            (8192, 4096, 4096), (8192, 11008, 4096), (8192, 4096, 11008),
            (16, 4096, 4096), (128, 4096, 4096)]
    dtypes = args.dtypes.split(",") if args.dtypes else (
        ["bf16"] if args.quick else ["bf16", "f16"])
    if args.skinny:
        shapes = SKINNY
    if args.shapes:
        shapes = [tuple(int(d) for d in s.split("x"))
                  for s in args.shapes.split(",")]
    configs = [dict(bm=128, bn=256, warps=8), dict(bm=128, bn=128, warps=8),
               dict(bm=64, bn=128, warps=4), dict(bm=64, bn=64, warps=4),
               dict(bm=128, bn=256, warps=8, cluster=(2, 1)),
               dict(bm=128, bn=256, warps=8, cluster=(1, 2)),
               dict(bm=128, bn=128, warps=8, cluster=(2, 1)),
               # Ping-pong: two consumer groups of 4 warps.
               dict(bm=128, bn=128, warps=4, groups=2),
               dict(bm=128, bn=128, warps=4, groups=2, stages=6),
               dict(bm=64, bn=256, warps=4, groups=2),
               dict(bm=128, bn=128, warps=4, groups=2, cluster=(2, 1))]
    # Split-K, for shapes whose tiles do not fill the SMs.
    # One pass (the last split of a tile sums the partials) and two passes
    # (a second kernel does), side by side.
    split_tiles = ((64, 128, 4), (64, 64, 4), (128, 128, 8))
    # Split over a cluster's two CTAs (cluster_k = 2), also for small grids.
    ck_configs = [dict(bm=64, bn=128, warps=4, ck=2),
                  dict(bm=128, bn=128, warps=8, ck=2)]
    if args.tiles:
        # BMxBNxWARPS[cCMxCN|k2][t],...: these tiles, whole K (in a cluster
        # when given; k2: split over a cluster's two CTAs; t: with the
        # TMA-store epilogue) and split (without), instead.
        configs, split_tiles, ck_configs = [], [], []
        for t in args.tiles.split(","):
            if t.endswith("k2"):
                bm, bn, w = (int(d) for d in t[:-2].split("x"))
                ck_configs.append(dict(bm=bm, bn=bn, warps=w, ck=2))
                # ... and with grid z splits too (each split's K chunk over
                # the pair), two passes.
                ck_configs += [dict(bm=bm, bn=bn, warps=w, ck=2, splits=sp,
                                    fixup=False)
                               for sp in (int(x) for x in
                                          args.splits.split(","))]
                continue
            tma = t.endswith("t")  # the TMA-store epilogue
            tile, _, cluster = t.rstrip("t").partition("c")
            bm, bn, w = (int(d) for d in tile.split("x"))
            cfg = dict(bm=bm, bn=bn, warps=w)
            if tma:
                cfg["tma"] = True
            if cluster:
                cfg["cluster"] = tuple(int(d) for d in cluster.split("x"))
            configs.append(cfg)
            if (bm, bn, w) not in split_tiles:
                split_tiles.append((bm, bn, w))
    split_configs = [dict(bm=bm, bn=bn, warps=w, splits=sp, fixup=fixup)
                     for bm, bn, w in split_tiles
                     for sp in (int(x) for x in args.splits.split(","))
                     for fixup in (True, False)]
    # Every candidate without stages of its own at each of --stages.
    stage_counts = [int(x) for x in args.stages.split(",")]
    configs, split_configs, ck_configs = (
        [dict(cfg, stages=st) if "stages" not in cfg else cfg
         for cfg in group for st in
         (stage_counts if "stages" not in cfg else [cfg["stages"]])]
        for group in (configs, split_configs, ck_configs))
    results = []
    for dtype in dtypes:
        tdt = torch.bfloat16 if dtype == "bf16" else torch.float16
        for (m, n, k) in shapes:
            flops = 2.0 * m * n * k
            a = torch.randn(m, k, dtype=tdt, device="cuda")
            b = torch.randn(k, n, dtype=tdt, device="cuda")
            t_torch = timer(lambda: torch.matmul(a, b))
            t_triton = timer(triton_matmul.matmul_fn(a, b))
            try:
                t_tp = timer(triton_matmul.persistent_matmul_fn(a, b))
            except Exception as e:  # report, keep benchmarking
                print(f"triton persistent TMA failed on {m}x{n}x{k}: {e}")
                t_tp = float("nan")
            best = None
            best_pass = {}  # split-K's best per form: True (one pass), False
            few_tiles = -(-m // 128) * -(-n // 128) < 132
            candidates = [] if args.split_only and few_tiles else configs
            candidates = candidates + (split_configs + ck_configs
                                       if few_tiles else [])
            for cfg in candidates:
                if not selected(args, config_name(cfg)):
                    continue
                kw = dict(cfg, dtype=dtype)
                path = write(args.out, f"gemm_{dtype}_{config_name(cfg)}",
                             candidate_program(**kw))
                cmd = [args.ism_run, path, "--bench", "--json",
                       f"--warmup={args.warmup}", f"--reps={args.reps}",
                       f"--flops={flops}"]
                for x in ism_args(dtype, m, n, k):
                    cmd += ["--arg", x]
                rc, out, err = run(cmd)
                if rc != 0:
                    print(f"ism failed on {dtype} {m}x{n}x{k}: {err.strip()[-300:]}")
                    continue
                ms = json.loads(out)["bench"]["median_ms"]
                print(f"  {dtype} {m}x{n}x{k} {config_name(cfg)}: "
                      f"{flops / ms / 1e9:.1f} TFLOP/s ({ms * 1e3:.1f} us)",
                      flush=True)
                if best is None or ms < best[0]:
                    best = (ms, cfg)
                if "fixup" in cfg and (cfg["fixup"] not in best_pass or
                                       ms < best_pass[cfg["fixup"]][0]):
                    best_pass[cfg["fixup"]] = (ms, cfg)
                if cfg.get("ck", 1) > 1 and ("ck" not in best_pass or
                                             ms < best_pass["ck"][0]):
                    best_pass["ck"] = (ms, cfg)
            if best is None:
                continue
            ampere = float("nan")
            if (m, n, k) in [(4096, 4096, 4096), (8192, 8192, 8192)]:
                path = write(args.out, f"gemm_{dtype}_sm80", program(
                    dtype=dtype, bm=128, bn=128, warps=8))
                cmd = [args.ism_run, path, "--bench", "--json", "--chip=sm_80",
                       f"--warmup={args.warmup}", f"--reps={args.reps}",
                       f"--flops={flops}"]
                for x in ism_args(dtype, m, n, k):
                    cmd += ["--arg", x]
                rc, out, err = run(cmd)
                if rc == 0:
                    ampere = flops / json.loads(out)["bench"]["median_ms"] / 1e9
                else:
                    print(f"ism sm_80 failed on {m}x{n}x{k}: {err.strip()[-300:]}")
            tf = lambda ms: flops / ms / 1e9
            row = dict(dtype=dtype, shape=f"{m}x{n}x{k}",
                       ism=tf(best[0]), torch=tf(t_torch), triton=tf(t_triton),
                       triton_tma=tf(t_tp), ampere=ampere,
                       config=config_name(best[1]))
            for fixup, key in ((True, "ism_1pass"), (False, "ism_2pass"),
                               ("ck", "ism_k2")):
                if fixup in best_pass:
                    row[key] = tf(best_pass[fixup][0])
                    row[key + "_config"] = config_name(best_pass[fixup][1])
            results.append(row)
            print(f"{dtype} {row['shape']}: ism {row['ism']:.0f} TFLOP/s, "
                  f"torch {row['torch']:.0f}, triton {row['triton']:.0f}, "
                  f"triton TMA persistent {row['triton_tma']:.0f}", flush=True)
    with open(os.path.join(args.out, "gemm.json"), "w") as f:
        json.dump(results, f, indent=1)
    print()
    print("| dtype | M x N x K | ism TFLOP/s | cuBLAS | Triton | Triton TMA pers. "
          "| x cuBLAS | x Triton | x Triton TMA | ism config | ism sm_80 path |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        print(f"| {r['dtype']} | {r['shape']} | {r['ism']:.0f} | {r['torch']:.0f} "
              f"| {r['triton']:.0f} | {r['triton_tma']:.0f} "
              f"| {r['ism'] / r['torch']:.2f} | {r['ism'] / r['triton']:.2f} "
              f"| {r['ism'] / r['triton_tma']:.2f} | {r['config']} "
              f"| {r['ampere']:.0f} |")
    split_rows = [r for r in results if "ism_1pass" in r and "ism_2pass" in r]
    if split_rows:
        print()
        print("| dtype | M x N x K | split-K one pass | two passes | one / two "
              "| x cuBLAS (one pass) | one-pass config | two-pass config |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in split_rows:
            print(f"| {r['dtype']} | {r['shape']} | {r['ism_1pass']:.0f} "
                  f"| {r['ism_2pass']:.0f} "
                  f"| {r['ism_1pass'] / r['ism_2pass']:.2f} "
                  f"| {r['ism_1pass'] / r['torch']:.2f} "
                  f"| {r['ism_1pass_config']} | {r['ism_2pass_config']} |")
    ck_rows = [r for r in results if "ism_k2" in r]
    if ck_rows:
        print()
        print("| dtype | M x N x K | cluster_k = 2 | best split-K | k2 / split-K "
              "| x cuBLAS (k2) | k2 config | split-K config |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in ck_rows:
            split = max(((r[k], r[k + "_config"]) for k in
                         ("ism_1pass", "ism_2pass") if k in r),
                        default=(float("nan"), "-"))
            print(f"| {r['dtype']} | {r['shape']} | {r['ism_k2']:.1f} "
                  f"| {split[0]:.1f} | {r['ism_k2'] / split[0]:.2f} "
                  f"| {r['ism_k2'] / r['torch']:.2f} "
                  f"| {r['ism_k2_config']} | {split[1]} |")
    return 0


def config_name(cfg):
    """A configuration of program() or splitk_program() as one word."""
    name = f"{cfg['bm']}x{cfg['bn']}x64_w{cfg['warps']}"
    cluster = tuple(cfg.get("cluster", (cfg.get("cm", 1), cfg.get("cn", 1))))
    if cluster != (1, 1):
        name += f"_c{cluster[0]}x{cluster[1]}"
    if cfg.get("ck", 1) > 1:
        name += f"_k{cfg['ck']}"
    if cfg.get("groups", 1) > 1:
        name += f"_pingpong{cfg['groups']}"
    if cfg.get("tma"):
        name += "_tma"
    if cfg.get("stages", 0):
        name += f"_s{cfg['stages']}"
    if cfg.get("splits", 1) > 1:
        name += f"_split{cfg['splits']}"
        if not cfg.get("fixup", True):
            name += "_2pass"
    return name


def tune_configs():
    """ism.autotune's candidates: block shapes, warps, pipeline stages (0:
    the compiler's choice), the L2 group size, 2-CTA clusters (cm x cn),
    split-K (splits > 1: splitk_program) and K split over a cluster (ck)."""
    import ism
    out = []
    for bm, bn, warps in ((128, 256, 8), (128, 128, 8), (128, 128, 4),
                          (64, 128, 4), (64, 256, 8)):
        for stages in (0, 3, 4):
            for group in (8, 16):
                out.append(ism.Config(bm=bm, bn=bn, warps=warps,
                                      stages=stages, group=group, cm=1, cn=1,
                                      splits=1))
    # Two-CTA clusters (TMA multicast of the shared operand).
    for bm, bn in ((128, 256), (128, 128)):
        for cm, cn in ((2, 1), (1, 2)):
            out.append(ism.Config(bm=bm, bn=bn, warps=8, stages=0, group=8,
                                  cm=cm, cn=cn, splits=1))
    # Ping-pong: two consumer groups of 4 warps, each computing every
    # other program of its CTA.
    for bm, bn, stages in ((128, 128, 0), (128, 128, 6), (64, 256, 0),
                           (64, 256, 5)):
        out.append(ism.Config(bm=bm, bn=bn, warps=4, stages=stages, group=8,
                              cm=1, cn=1, splits=1, groups=2))
    # Split-K for small grids (skinny and decode shapes).
    for bm, bn, warps in ((64, 128, 4), (64, 64, 4), (128, 128, 8)):
        for splits in (2, 4, 8):
            out.append(ism.Config(bm=bm, bn=bn, warps=warps, stages=0,
                                  group=8, cm=1, cn=1, splits=splits))
    # Deep pipelines for the skinny shapes: the small tiles' rings filled
    # (8 stages of 64x128, 12 of 64x64), whole K and split in one or two
    # passes: 1.1-1.3x faster than 4 stages on the skinny shapes (H200).
    out.append(ism.Config(bm=64, bn=128, warps=4, stages=8, group=8, cm=1,
                          cn=1, splits=1))
    out.append(ism.Config(bm=64, bn=64, warps=4, stages=12, group=8, cm=1,
                          cn=1, splits=1))
    for splits in (2, 4):
        for fixup in (True, False):
            out.append(ism.Config(bm=64, bn=128, warps=4, stages=8, group=8,
                                  cm=1, cn=1, splits=splits, fixup=fixup))
    # K split over a cluster's two CTAs (cluster_k = 2: no workspace, no
    # second pass; docs/gemm.md, "K split over a cluster"): 128x64
    # tiles for M = 128 (one tile reads each column of B), 64x64 for
    # M = 64 at N = 4096 (128 programs).
    for bm, bn, warps, stages in ((64, 128, 4, 8), (64, 128, 4, 6),
                                  (64, 64, 4, 8), (128, 64, 4, 8),
                                  (128, 128, 8, 4)):
        out.append(ism.Config(bm=bm, bn=bn, warps=warps, stages=stages,
                              group=8, cm=1, cn=1, splits=1, ck=2))
    # Swap-AB for M <= 16 (C^T = B^T A^T: BLOCK_M 8 or 16 is the wgmma's N,
    # which the compiler swaps by itself below 64), the K loop split over a
    # cluster (docs/gemm.md, "Swap-AB and transposed tiles").
    for bm, bn in ((8, 64), (16, 64), (16, 128)):
        out.append(ism.Config(bm=bm, bn=bn, warps=4, stages=8, group=8, cm=1,
                              cn=1, splits=1, ck=2))
    return out


def candidate_program(**kw):
    """The program of one bench candidate: splitk_program() when it has
    splits, else program()."""
    return splitk_program(**kw) if "splits" in kw else program(**kw)


def tuned_program(dtype, bm, bn, warps, stages, group, cm, cn, splits,
                  groups=1, fixup=True, ck=1):
    """The program of one tune_configs() candidate."""
    if splits > 1:
        return splitk_program(dtype=dtype, bm=bm, bn=bn, warps=warps,
                              splits=splits, stages=stages, group=group,
                              fixup=fixup, ck=ck)
    return program(dtype=dtype, bm=bm, bn=bn, warps=warps, stages=stages,
                   group=group, cluster=(cm, cn), groups=groups, ck=ck)


def tune(args):
    """ism through ism.autotune on torch tensors (the Python path: the
    candidates compile in parallel, the winner is cached on disk) against
    torch.matmul and Triton's autotuned tutorial matmul. Prints per shape
    the chosen configuration, the tuning time and the time a warm cache
    takes to answer (a new tuner reading the disk cache: no timing)."""
    import time
    import torch
    import ism
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench import Timer
    import triton_matmul

    timer = Timer(args.warmup, args.reps)
    shapes = [(4096, 4096, 4096), (8192, 8192, 8192), (128, 4096, 4096)]
    if args.shapes:
        shapes = [tuple(int(d) for d in s.split("x"))
                  for s in args.shapes.split(",")]
    elif args.skinny:
        shapes = SKINNY
    elif not args.quick:
        shapes = ISSUE_SHAPES
    dtypes = args.dtypes.split(",") if args.dtypes else (
        ["bf16"] if args.quick else ["bf16", "f16"])
    cache = os.path.join(args.out, "autotune-cache")

    def make():
        return ism.autotune(configs=tune_configs(), cache=cache,
                            reps=max(10, args.reps // 2))(
            lambda **cfg: tuned_program(dtype, **cfg))

    rows = []
    for dtype in dtypes:
        tdt = torch.bfloat16 if dtype == "bf16" else torch.float16
        tuned = make()
        for (m, n, k) in shapes:
            flops = 2.0 * m * n * k
            a = torch.randn(m, k, dtype=tdt, device="cuda")
            b = torch.randn(k, n, dtype=tdt, device="cuda")
            c = torch.full((m, n), float("nan"), dtype=tdt, device="cuda")
            r = tuned.tune(a, b, c)
            tuned(a, b, c)
            ref = (a.double() @ b.double())
            err = ((c.double() - ref).abs().max() /
                   ref.abs().max().clamp_min(1e-30)).item()
            t0 = time.perf_counter()
            warm = make().tune(a, b, c)
            lookup_s = time.perf_counter() - t0
            fns = {"ism": lambda: tuned(a, b, c),
                   "torch": lambda: torch.matmul(a, b),
                   "triton": triton_matmul.matmul_fn(a, b)}
            try:
                # (autotunes and runs once: fails here if it cannot run)
                fns["triton_tma"] = triton_matmul.persistent_matmul_fn(a, b)
            except Exception as e:  # report, keep benchmarking
                print(f"triton persistent TMA failed on {m}x{n}x{k}: {e}")
            # Interleaved rounds: the H200's clock drifts by 10-20% between
            # runs of the same kernel minutes apart (power, temperature),
            # so each implementation gets a share of every round.
            t = timer.interleaved(fns)
            t_ism, t_torch, t_triton = t["ism"], t["torch"], t["triton"]
            t_tp = t.get("triton_tma", float("nan"))
            tf = lambda ms: flops / ms / 1e9
            best = r.best.kwargs
            row = dict(dtype=dtype, shape=f"{m}x{n}x{k}", ism=tf(t_ism),
                       torch=tf(t_torch), triton=tf(t_triton),
                       triton_tma=tf(t_tp),
                       config=f"{config_name(best)} g{best['group']}",
                       tuning_s=r.tuning_s, timed=len(r.timings_ms),
                       pruned=len(r.pruned), warm_hit=warm.from_cache,
                       lookup_ms=lookup_s * 1e3, rel_err=err)
            rows.append(row)
            print(f"{dtype} {row['shape']}: ism {row['ism']:.0f} TFLOP/s "
                  f"({row['config']}, tuned in {r.tuning_s:.1f} s, "
                  f"{row['timed']} timed, {row['pruned']} pruned; warm cache "
                  f"hit {warm.from_cache} in {row['lookup_ms']:.1f} ms), "
                  f"cuBLAS {row['torch']:.0f}, Triton {row['triton']:.0f}, "
                  f"Triton TMA {row['triton_tma']:.0f}, "
                  f"max rel err {err:.1e}", flush=True)
            assert err < 2e-2, f"ism result wrong on {m}x{n}x{k}: {err}"
            # After every shape, so that a run cut short keeps its rows.
            with open(os.path.join(args.out, "gemm-tune.json"), "w") as f:
                json.dump(rows, f, indent=1)
    print()
    report(rows, args.out)
    return 0


def shape_group(shape):
    """The GEMM issue's target a shape counts for: 'large' (the squares
    >= 2048 and the LLM shapes), 'skinny', or None (measured, no target:
    1024^3, 8192x1024x8192, anything else)."""
    mnk = tuple(int(d) for d in shape.split("x"))
    if mnk in SKINNY:
        return "skinny"
    if mnk in LLM or (mnk in SQUARES and mnk[0] >= 2048):
        return "large"
    return None


def targets(rows):
    """The GEMM issue's targets, per data type, on tune() rows: on the
    large shapes the median of ism / cuBLAS >= 1.0 with no shape below
    0.95 and the median of ism / Triton's tutorial matmul >= 1.1 (each
    shape's own ratio is in the table); on the skinny shapes ism / cuBLAS
    >= 0.9 on every one. Returns (lines, all met)."""
    lines, ok = [], True
    for dtype in sorted({r["dtype"] for r in rows}):
        mine = [r for r in rows if r["dtype"] == dtype]
        large = [r for r in mine if shape_group(r["shape"]) == "large"]
        skinny = [r for r in mine if shape_group(r["shape"]) == "skinny"]
        if large:
            xc = [r["ism"] / r["torch"] for r in large]
            xt = [r["ism"] / r["triton"] for r in large]
            mc, mt = statistics.median(xc), statistics.median(xt)
            met = mc >= 1.0 and min(xc) >= 0.95 and mt >= 1.1
            ok &= met
            below = [r["shape"] for r, x in zip(large, xt) if x < 1.1]
            lines.append(
                f"{dtype} large ({len(large)} shapes): x cuBLAS median "
                f"{mc:.2f} (>= 1.0), lowest {min(xc):.2f} "
                f"(>= 0.95); x Triton median {mt:.2f} "
                f"(>= 1.1), lowest {min(xt):.2f}"
                + (f", below 1.1 on {', '.join(below)}" if below else "")
                + f": {'met' if met else 'MISSED'}")
        if skinny:
            xc = [r["ism"] / r["torch"] for r in skinny]
            met = min(xc) >= 0.9
            ok &= met
            lines.append(f"{dtype} skinny ({len(skinny)} shapes): x cuBLAS "
                         f"lowest {min(xc):.2f} (>= 0.9 on every one): "
                         f"{'met' if met else 'MISSED'}")
    return lines, ok


def report(rows, out):
    """The table (markdown), the targets, gemm-tune.csv and the chart
    gemm-tune.png (ism / cuBLAS and ism / Triton per shape) in `out`."""
    print("| dtype | M x N x K | ism autotuned TFLOP/s | cuBLAS | Triton | "
          "Triton TMA | x cuBLAS | x Triton | x Triton TMA | ism config | "
          "tuning s (timed/pruned) | warm cache |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- "
          "| --- |")
    for r in rows:
        tma = r.get("triton_tma", float("nan"))
        print(f"| {r['dtype']} | {r['shape']} | {r['ism']:.1f} | "
              f"{r['torch']:.1f} | {r['triton']:.1f} | {tma:.1f} | "
              f"{r['ism'] / r['torch']:.2f} | {r['ism'] / r['triton']:.2f} | "
              f"{r['ism'] / tma:.2f} | "
              f"{r['config']} | {r['tuning_s']:.1f} ({r['timed']}/"
              f"{r['pruned']}) | {'hit' if r['warm_hit'] else 'MISS'} "
              f"{r['lookup_ms']:.0f} ms |")
    lines, ok = targets(rows)
    print()
    for line in lines:
        print(line)
    os.makedirs(out, exist_ok=True)
    keys = ["dtype", "shape", "ism", "torch", "triton", "triton_tma",
            "config", "tuning_s", "timed", "pruned", "warm_hit", "lookup_ms",
            "rel_err"]
    with open(os.path.join(out, "gemm-tune.csv"), "w") as f:
        f.write(",".join(keys) + "\n")
        for r in rows:
            f.write(",".join(f'"{r.get(k, "")}"' if k == "config"
                             else str(r.get(k, "")) for k in keys) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no chart", file=sys.stderr)
        return ok
    dtypes = sorted({r["dtype"] for r in rows})
    fig, axes = plt.subplots(len(dtypes), 1, squeeze=False,
                             figsize=(max(8, 0.42 * len(rows) / len(dtypes)
                                          + 2), 4 * len(dtypes)))
    for ax, dtype in zip(axes[:, 0], dtypes):
        mine = [r for r in rows if r["dtype"] == dtype]
        xs = range(len(mine))
        for i, (key, label) in enumerate((("torch", "x cuBLAS"),
                                          ("triton", "x Triton tutorial"))):
            vals = [r["ism"] / r[key] for r in mine]
            bars = ax.bar([x + (i - 0.5) * 0.4 for x in xs],
                          [min(v, 2.0) for v in vals], 0.4, label=label)
            for b, v in zip(bars, vals):
                if v > 2.0:
                    ax.text(b.get_x() + b.get_width() / 2, 1.95, f"{v:.1f}",
                            ha="center", va="top", fontsize=6, rotation=90)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.axhline(1.1, color="gray", linewidth=0.6, linestyle="--")
        ax.axhline(0.9, color="gray", linewidth=0.6, linestyle=":")
        ax.set_xticks(list(xs))
        ax.set_xticklabels([r["shape"] for r in mine], rotation=60,
                           ha="right", fontsize=7)
        ax.set_ylim(0, 2.0)
        ax.set_ylabel("ism autotuned / baseline")
        ax.set_title(f"{dtype}: ism (ism.autotune) against cuBLAS and "
                     f"Triton, H200, L2 flushed, medians")
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(os.path.join(out, "gemm-tune.png"), dpi=120)
    print(f"chart: {os.path.join(out, 'gemm-tune.png')}")
    return ok


def summary(args):
    """The table, targets, CSV and chart of one or more gemm-tune.json
    files (runs of `tune`, e.g. one per data type), into --out."""
    rows = []
    for path in args.json:
        with open(path) as f:
            rows += json.load(f)
    return 0 if report(rows, args.out) else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["check", "bench", "tune", "emit",
                                         "summary"])
    parser.add_argument("dir", nargs="?", help="emit: where to write")
    parser.add_argument("--json", nargs="+", default=[],
                        help="summary: gemm-tune.json files of tune runs")
    parser.add_argument("--ism-run", default="build/bin/ism-run")
    parser.add_argument("--out", default="gemm-out")
    parser.add_argument("--reps", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--shapes", help="bench: comma-separated MxNxK "
                        "shapes instead of the default set")
    parser.add_argument("--only", help="check: the variants, bench: the "
                        "configurations whose names contain one of these "
                        "comma-separated words")
    parser.add_argument("--timeout", type=int, default=180,
                        help="check: seconds before a variant counts as hung")
    parser.add_argument("--skinny", action="store_true",
                        help="bench/tune: only the skinny and decode shapes")
    parser.add_argument("--dtypes", help="comma-separated: bf16,f16")
    parser.add_argument("--stages", default="0",
                        help="bench: comma-separated pipeline stages for the "
                        "candidates that do not set their own (0: the "
                        "compiler's choice)")
    parser.add_argument("--tiles", help="bench: comma-separated "
                        "BMxBNxWARPS[cCMxCN|k2][t] tiles to try (whole K, in "
                        "a cluster when given, over a cluster's two CTAs "
                        "with k2, with the TMA-store epilogue with t; and "
                        "split-K) instead of the default candidates")
    parser.add_argument("--splits", default="2,4,8",
                        help="bench: comma-separated split-K factors of the "
                        "split-K candidates")
    parser.add_argument("--split-only", action="store_true",
                        help="bench: only split-K candidates on shapes whose "
                        "128x128 tiles do not fill the SMs")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.mode == "emit":
        for name, kw, _ in CHECKS:
            write(args.dir or args.out, name, program(**kw))
        for name, text, _ in extra_checks():
            write(args.dir or args.out, name, text)
        return 0
    if args.mode == "tune":
        return tune(args)
    if args.mode == "summary":
        return summary(args)
    return check(args) if args.mode == "check" else bench(args)


if __name__ == "__main__":
    sys.exit(main())
