"""The module text of a Llama decode step at batch 1: every layer's ten
launches and the LM head in one `ism.coschedule ordered` region, with
greedy sampling optionally (docs/coschedule.md, docs/results.md).

The kernels are the examples' (decode_rope_append.mlir, decode_gqa_attention.mlir,
decode_mlp.mlir, decode_argmax.mlir; the package carries copies under
ism/models/kernels/) and the projections written here: @proj (RMSNorm
inside, 4 output rows a program, written as heads of 64) for Q, K and V,
@head (the same with 8 rows a program) for the LM head, @o_proj (the
output projection and the residual, 2 rows a program) and @embed.

Plain text, no extension needed: bench/decode_layer.py and
bench/decode_step.py import this file by its path.
"""

import os

_HERE = os.path.dirname(os.path.abspath(__file__))
# The package's copies, then the source tree's examples/.
KERNEL_DIRS = (os.path.join(_HERE, "kernels"),
               os.path.normpath(os.path.join(_HERE, "..", "..", "..",
                                             "examples")))


def kernel_file(name):
    """The path of the decode kernel file `name` (e.g. decode_mlp.mlir)."""
    for d in KERNEL_DIRS:
        path = os.path.join(d, name)
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(f"decode kernel file {name} is in none of "
                            f"{', '.join(KERNEL_DIRS)}")


def kernels(path, names):
    """The text of the `ism.kernel`s `names` of an example (each runs from
    its `ism.kernel @name(` line to the next line that is `}`)."""
    lines = open(path).read().splitlines()
    found = {}
    for i, line in enumerate(lines):
        for name in names:
            if line.startswith(f"ism.kernel @{name}("):
                end = lines.index("}", i)
                found[name] = "\n".join(lines[i:end + 1])
    missing = [n for n in names if n not in found]
    if missing:
        raise ValueError(f"{path} has no kernel {', '.join(missing)}")
    return [found[n] for n in names]


def proj_kernel(name, rows):
    """@name: out[n / 64, n % 64] for `rows` rows of W a program (64 a
    multiple of rows), the RMSNorm of x inside: the Q, K and V projections
    (4 rows) and the LM head (8)."""
    text = """
// out[n / 64, n % 64] for the {R} rows n0 .. n0 + {R1} of W: (W (x w_norm)) / rms(x)
ism.kernel @{name}(%w: memref<?x?xbf16>, %x: memref<?x?xbf16>,
{pad}%wn: memref<?xbf16>, %out: memref<?x?xbf16>, %eps: f32)
    attributes {{num_warps = 8 : i32}} {{
  %pid = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cR = arith.constant {R} : index
  %c64 = arith.constant 64 : index
  %n0 = arith.muli %pid, %cR : index
  %w16 = ism.load %w[%n0, %c0] : memref<?x?xbf16> -> tensor<{R}x2048xbf16>
  %x16 = ism.load %x[%c0, %c0] : memref<?x?xbf16> -> tensor<1x2048xbf16>
  %wn16 = ism.load %wn[%c0] : memref<?xbf16> -> tensor<2048xbf16>
  %wn2 = ism.reshape %wn16 : tensor<2048xbf16> -> tensor<1x2048xbf16>
  %xv = arith.extf %x16 : tensor<1x2048xbf16> to tensor<1x2048xf32>
  %wnf = arith.extf %wn2 : tensor<1x2048xbf16> to tensor<1x2048xf32>
  %sq = arith.mulf %xv, %xv : tensor<1x2048xf32>
  %ssq = ism.reduce %sq axis = 1 : tensor<1x2048xf32> -> tensor<1xf32> {{
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    ism.yield %s : f32
  }}
  %n = memref.dim %x, %c1 : memref<?x?xbf16>
  %n32 = arith.index_cast %n : index to i32
  %nf = arith.uitofp %n32 : i32 to f32
  %nfs = ism.splat %nf : f32 -> tensor<1xf32>
  %epss = ism.splat %eps : f32 -> tensor<1xf32>
  %ms = arith.divf %ssq, %nfs : tensor<1xf32>
  %mseps = arith.addf %ms, %epss : tensor<1xf32>
  %rrms1 = math.rsqrt %mseps : tensor<1xf32>
  %rrms2 = ism.reshape %rrms1 : tensor<1xf32> -> tensor<1x1xf32>
  %rrmsR = ism.broadcast %rrms2 : tensor<1x1xf32> -> tensor<{R}x1xf32>
  %rrms = ism.reshape %rrmsR : tensor<{R}x1xf32> -> tensor<{R}xf32>
  %xw = arith.mulf %xv, %wnf : tensor<1x2048xf32>
  %xb = ism.broadcast %xw : tensor<1x2048xf32> -> tensor<{R}x2048xf32>
  %wf = arith.extf %w16 : tensor<{R}x2048xbf16> to tensor<{R}x2048xf32>
  %pr = arith.mulf %wf, %xb : tensor<{R}x2048xf32>
  %d = ism.reduce %pr axis = 1 : tensor<{R}x2048xf32> -> tensor<{R}xf32> {{
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    ism.yield %s : f32
  }}
  %r = arith.mulf %d, %rrms : tensor<{R}xf32>
  %r16 = arith.truncf %r : tensor<{R}xf32> to tensor<{R}xbf16>
  %row = ism.reshape %r16 : tensor<{R}xbf16> -> tensor<1x{R}xbf16>
  %head = arith.divui %n0, %c64 : index
  %col = arith.remui %n0, %c64 : index
  ism.store %row, %out[%head, %col] : tensor<1x{R}xbf16> -> memref<?x?xbf16>
  ism.return
}}
"""
    return text.format(R=rows, R1=rows - 1, name=name,
                       pad=" " * (len(name) + 13))


PROJ = proj_kernel("proj", 4) + """
// y[r0 .. r0 + 2) = W_o[r0 ..] o + x[r0 ..], o: the heads' outputs, heads x 64
ism.kernel @o_proj(%w: memref<?x?xbf16>, %o: memref<?x?xbf16>,
                   %x: memref<?x?xbf16>, %y: memref<?x?xbf16>)
    attributes {num_warps = 8 : i32} {
  %pid = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %r0 = arith.muli %pid, %c2 : index
  %w16 = ism.load %w[%r0, %c0] : memref<?x?xbf16> -> tensor<2x2048xbf16>
  %o16 = ism.load %o[%c0, %c0] : memref<?x?xbf16> -> tensor<32x64xbf16>
  %o1 = ism.reshape %o16 : tensor<32x64xbf16> -> tensor<1x2048xbf16>
  %of1 = arith.extf %o1 : tensor<1x2048xbf16> to tensor<1x2048xf32>
  %of = ism.broadcast %of1 : tensor<1x2048xf32> -> tensor<2x2048xf32>
  %wf = arith.extf %w16 : tensor<2x2048xbf16> to tensor<2x2048xf32>
  %pr = arith.mulf %wf, %of : tensor<2x2048xf32>
  %d = ism.reduce %pr axis = 1 : tensor<2x2048xf32> -> tensor<2xf32> {
  ^bb0(%l: f32, %r: f32):
    %s = arith.addf %l, %r : f32
    ism.yield %s : f32
  }
  %x16 = ism.load %x[%c0, %r0] : memref<?x?xbf16> -> tensor<1x2xbf16>
  %xf = arith.extf %x16 : tensor<1x2xbf16> to tensor<1x2xf32>
  %xr = ism.reshape %xf : tensor<1x2xf32> -> tensor<2xf32>
  %sum = arith.addf %d, %xr : tensor<2xf32>
  %s16 = arith.truncf %sum : tensor<2xf32> to tensor<2xbf16>
  %out = ism.reshape %s16 : tensor<2xbf16> -> tensor<1x2xbf16>
  ism.store %out, %y[%c0, %r0] : tensor<1x2xbf16> -> memref<?x?xbf16>
  ism.return
}
"""


M2 = "memref<?x?xbf16>"
M3 = "memref<?x?x?xbf16>"
F2 = "memref<?x?xf32>"
LAYER_ARGS = ["wn_attn", "wq", "wk", "wv", "wo", "wn_mlp", "wg", "wu", "wd",
              "kc", "vc"]
VEC = "memref<?xbf16>"
TYPES = dict(wn_attn=VEC, wq=M2, wk=M2, wv=M2, wo=M2, wn_mlp=VEC, wg=M2,
             wu=M2, wd=M2, kc=M3, vc=M3)


def layer_checks(l):
    """Host asserts on layer l's weights and caches (H, Hkv, ctx, F from
    layer 0's)."""
    s = f"_{l}"
    dims = [("wq", 0, "%H"), ("wq", 1, "%H"), ("wk", 0, "%kvr"),
            ("wk", 1, "%H"), ("wv", 0, "%kvr"), ("wv", 1, "%H"),
            ("wo", 0, "%H"), ("wo", 1, "%H"), ("wg", 0, "%F"),
            ("wg", 1, "%H"), ("wu", 0, "%F"), ("wu", 1, "%H"),
            ("wd", 0, "%H"), ("wd", 1, "%F"), ("wn_attn", 0, "%H"),
            ("wn_mlp", 0, "%H"), ("kc", 0, "%Hkv"), ("kc", 1, "%ctx"),
            ("kc", 2, "%c64"), ("vc", 0, "%Hkv"), ("vc", 1, "%ctx"),
            ("vc", 2, "%c64")]
    out, ok = [], None
    for k, (name, d, want) in enumerate(dims):
        c = "%c0" if d == 0 else "%c1" if d == 1 else "%c2"
        out.append(f"  %d{s}_{k} = memref.dim %{name}{s}, {c} : "
                   f"{TYPES[name]}")
        out.append(f"  %e{s}_{k} = arith.cmpi eq, %d{s}_{k}, {want} : index")
        if ok is None:
            ok = f"%e{s}_{k}"
        else:
            out.append(f"  %ok{s}_{k} = arith.andi {ok}, %e{s}_{k} : i1")
            ok = f"%ok{s}_{k}"
    shapes = ", ".join(f"{n}[{d}] {{{k}}}" for k, (n, d, _) in
                       enumerate(dims))
    args = ", ".join(f"%d{s}_{k}" for k in range(len(dims)))
    out.append(f'  ism.assert {ok}, "layer {l}: {shapes}: each layer '
               f'takes W_q, W_o H x H, W_k, W_v 64 Hkv x H, W_gate, W_up '
               f'F x H, W_down H x F, norms H, caches Hkv x max_ctx x 64 '
               f'(H, Hkv, F, max_ctx: layer 0\'s)"')
    out.append(f"      ({args}) : " + ", ".join(["index"] * len(dims)))
    return out


def layer_launches(l, layers, x, y):
    """Layer l's ten launches, from residual x to residual y."""
    s = f"_{l}"
    return f"""    ism.launch @proj grid(%gq) (%wq{s}, {x}, %wn_attn{s}, %q, %eps)
        : ({M2}, {M2}, {VEC}, {M2}, f32)
    ism.launch @proj grid(%gkv) (%wk{s}, {x}, %wn_attn{s}, %k, %eps)
        : ({M2}, {M2}, {VEC}, {M2}, f32)
    ism.launch @proj grid(%gkv) (%wv{s}, {x}, %wn_attn{s}, %v, %eps)
        : ({M2}, {M2}, {VEC}, {M2}, f32)
    ism.launch @rope grid(%Hq) (%q, %cos, %sin, %pos, %qo, %no)
        : ({M2}, {F2}, {F2}, memref<?xi32>, {M3}, i32)
    ism.launch @rope grid(%Hkv) (%k, %cos, %sin, %pos, %kc{s}, %yes)
        : ({M2}, {F2}, {F2}, memref<?xi32>, {M3}, i32)
    ism.launch @copy_row grid(%Hkv) (%v, %pos, %vc{s})
        : ({M2}, memref<?xi32>, {M3})
    ism.launch @decode grid(%splits, %Hq)
        (%qo, %kc{s}, %vc{s}, %pos, %o, %mp, %lp, %op, %count, %scale)
        : ({M3}, {M3}, {M3}, memref<?xi32>, {M2}, {F2}, {F2},
           memref<?x?x?xf32>, memref<?xi32>, f32)
    ism.launch @o_proj grid(%go) (%wo{s}, %o, {x}, %x1)
        : ({M2}, {M2}, {M2}, {M2})
    ism.launch @gate_up grid(%gf) (%wg{s}, %wu{s}, %x1, %wn_mlp{s}, %a, %eps)
        : ({M2}, {M2}, {M2}, {VEC}, {M2}, f32)
    ism.launch @down grid(%go) (%wd{s}, %a, %x1, {y})
        : ({M2}, {M2}, {M2}, {M2})
"""


EMBED = """
// x[0, :] = E[token[0], :]: the step's input, the embedding of the token
// the step before sampled (on the GPU: a token past the table reads zeros)
ism.kernel @embed(%e: memref<?x?xbf16>, %token: memref<?xi32>,
                  %x: memref<?x?xbf16>) attributes {num_warps = 8 : i32} {
  %c0 = arith.constant 0 : index
  %t32 = memref.load %token[%c0] : memref<?xi32>
  %t = arith.index_cast %t32 : i32 to index
  %row = ism.load %e[%t, %c0] : memref<?x?xbf16> -> tensor<1x2048xbf16>
  ism.store %row, %x[%c0, %c0] : tensor<1x2048xbf16> -> memref<?x?xbf16>
  ism.return
}
"""


def host(layers, sample=False):
    """@main: with `sample`, the step takes the embedding table and the
    token (1 x i32) instead of x, starts with the token's embedding and
    ends by writing the next token (greedy: examples/decode_argmax.mlir)
    into the same buffer."""
    params = (["%embed: " + M2, "%token: memref<?xi32>"] if sample else
              ["%x: " + M2])
    for l in range(layers):
        params += [f"%{n}_{l}: {TYPES[n]}" for n in LAYER_ARGS]
    params += [f"%cos: {F2}", f"%sin: {F2}", "%pos: memref<?xi32>",
               f"%wn_final: {VEC}", f"%w_lm: {M2}", f"%logits: {M2}",
               "%eps: f32", "%scale: f32"]
    body = [f"""func.func @main({', '.join(params)}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %H = memref.dim %{"embed" if sample else "x"}, %c1 : {M2}
  %Hq = arith.divui %H, %c64 : index
  %Hkv = memref.dim %kc_0, %c0 : {M3}
  %ctx = memref.dim %kc_0, %c1 : {M3}
  %F = memref.dim %wg_0, %c0 : {M2}
  %kvr = arith.muli %Hkv, %c64 : index
  %hrem = arith.remui %H, %c64 : index
  %h64 = arith.cmpi eq, %hrem, %c0 : index
  %maxH = arith.constant 2048 : index
  %maxF = arith.constant 8192 : index
  %hmax = arith.cmpi sle, %H, %maxH : index
  %fmax = arith.cmpi sle, %F, %maxF : index
  %hf = arith.andi %h64, %hmax : i1
  %sizes = arith.andi %hf, %fmax : i1
  ism.assert %sizes, "x is 1x{{0}} and W_gate has {{1}} rows: this step takes H = 64 x heads <= 2048 and F <= 8192"
      (%H, %F) : index, index
  %V = memref.dim %w_lm, %c0 : {M2}
  %VC = memref.dim %w_lm, %c1 : {M2}
  %LR = memref.dim %logits, %c0 : {M2}
  %LC = memref.dim %logits, %c1 : {M2}
  %vr = arith.remui %V, %c64 : index
  %v64 = arith.cmpi eq, %vr, %c0 : index
  %vc_ok = arith.cmpi eq, %VC, %H : index
  %vrows = arith.divui %V, %c64 : index
  %lr_ok = arith.cmpi eq, %LR, %vrows : index
  %lc_ok = arith.cmpi eq, %LC, %c64 : index
  %v1 = arith.andi %v64, %vc_ok : i1
  %v2 = arith.andi %lr_ok, %lc_ok : i1
  %head_ok = arith.andi %v1, %v2 : i1
  ism.assert %head_ok, "W_lm is {{0}}x{{1}} and logits {{2}}x{{3}}: the head takes W_lm V x H (V a multiple of 64) and logits V/64 x 64"
      (%V, %VC, %LR, %LC) : index, index, index, index"""]
    for l in range(layers):
        body += layer_checks(l)
    body.append(f"""  %splits = arith.ceildivui %ctx, %c128 : index
  %q = memref.alloc(%Hq, %c64) : {M2}
  %k = memref.alloc(%Hkv, %c64) : {M2}
  %v = memref.alloc(%Hkv, %c64) : {M2}
  %qo = memref.alloc(%Hq, %c1, %c64) : {M3}
  %o = memref.alloc(%Hq, %c64) : {M2}
  %mp = memref.alloc(%Hq, %splits) : {F2}
  %lp = memref.alloc(%Hq, %splits) : {F2}
  %op = memref.alloc(%Hq, %splits, %c64) : memref<?x?x?xf32>
  %count = memref.alloc(%Hq) {{ism.zeroed}} : memref<?xi32>
  %x1 = memref.alloc(%c1, %H) : {M2}
  %a = memref.alloc(%c1, %F) : {M2}""")
    if sample:
        body.append(f"""  %x = memref.alloc(%c1, %H) : {M2}
  %ER = memref.dim %embed, %c0 : {M2}
  %NT = memref.dim %token, %c0 : memref<?xi32>
  %blocks = arith.ceildivui %LR, %c64 : index
  %few = arith.cmpi sle, %blocks, %c64 : index
  %one = arith.cmpi eq, %NT, %c1 : index
  %sample_ok = arith.andi %few, %one : i1
  ism.assert %sample_ok, "the vocabulary has {{0}} rows (embedding table: {{1}}) and token {{2}} elements: greedy sampling takes at most 262144 logits and a 1-element token"
      (%V, %ER, %NT) : index, index, index
  %pm = memref.alloc(%blocks) : memref<?xf32>
  %pi = memref.alloc(%blocks) : memref<?xi32>""")
    for l in range(layers):
        body.append(f"  %h_{l + 1} = memref.alloc(%c1, %H) : {M2}")
    body.append("""  %gq = arith.ceildivui %H, %c4 : index
  %gkv = arith.ceildivui %kvr, %c4 : index
  %go = arith.ceildivui %H, %c2 : index
  %gf = arith.ceildivui %F, %c4 : index
  %c8 = arith.constant 8 : index
  %glm = arith.ceildivui %V, %c8 : index
  %no = arith.constant 0 : i32
  %yes = arith.constant 1 : i32
  ism.coschedule ordered attributes {ctas_per_sm = 3 : i32} {""")
    if sample:
        body.append(f"""    ism.launch @embed grid(%c1) (%embed, %token, %x)
        : ({M2}, memref<?xi32>, {M2})""")
    for l in range(layers):
        x = "%x" if l == 0 else f"%h_{l}"
        body.append(layer_launches(l, layers, x, f"%h_{l + 1}").rstrip("\n"))
    body.append(f"""    ism.launch @head grid(%glm) (%w_lm, %h_{layers}, %wn_final, %logits, %eps)
        : ({M2}, {M2}, {VEC}, {M2}, f32)""")
    if sample:
        body.append(f"""    ism.launch @argmax_blocks grid(%blocks) (%logits, %pm, %pi)
        : ({M2}, memref<?xf32>, memref<?xi32>)
    ism.launch @argmax_final grid(%c1) (%pm, %pi, %token)
        : (memref<?xf32>, memref<?xi32>, memref<?xi32>)""")
    body.append("""  }
  return
}""")
    return "\n".join(body) + "\n"


def step_module(layers, sample=False):
    """The step's module text (with `sample`: from a token to the next,
    host())."""
    parts = kernels(kernel_file("decode_rope_append.mlir"),
                    ["rope", "copy_row"])
    parts += kernels(kernel_file("decode_gqa_attention.mlir"),
                     ["decode"])
    parts += kernels(kernel_file("decode_mlp.mlir"),
                     ["gate_up", "down"])
    if sample:
        parts += kernels(kernel_file("decode_argmax.mlir"),
                         ["argmax_blocks", "argmax_final"])
        parts.append(EMBED.strip("\n"))
    return ("\n\n".join(parts) + "\n" + PROJ + "\n" + proj_kernel("head", 8) +
            "\n" + host(layers, sample))
