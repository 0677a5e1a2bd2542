"""SpMM variants of examples/coschedule_matmul_spmm.mlir with BN columns a
program and CH nonzeros a chunk (run from the repository root):
    python3 bench/experiments/spmm/gen3.py BN CH [pipe|gather|direct] > V.mlir
pipe (default): the next chunk's column indices and values are loaded
(depth 1) before this chunk's product; gather: the next chunk's rows of B
too; direct: no lookahead, the indices and values gathered straight into
the product's layout (CH x BN index tiles) instead of loaded as CH-element
tiles and broadcast. (gen.py makes the example itself at other sizes.)"""
import sys
src = open("examples/coschedule_matmul_spmm.mlir").read()
bn, ch = int(sys.argv[1]), int(sys.argv[2])
mode = sys.argv[3] if len(sys.argv) > 3 else "pipe"
deep = mode == "gather"
T = lambda t: f"tensor<{ch}x{bn}x{t}>"
V = lambda t: f"tensor<{ch}x{t}>"
load = lambda k, s: f"""
    %k32{s} = arith.index_cast {k} : index to i32
    %ks{s} = ism.splat %k32{s} : i32 -> {V("i32")}
    %idx{s} = arith.addi %lane, %ks{s} : {V("i32")}
    %live{s} = arith.cmpi slt, %idx{s}, %ends : {V("i32")}
    %ci{s} = ism.load %colind[{k}] mask %live{s} : memref<?xi32> -> {V("i32")}
    %v{s} = ism.load %values[{k}] mask %live{s} : memref<?xf32> -> {V("f32")}"""
gather = lambda s: f"""
    %cie{s} = ism.expand_dims %ci{s} axis = 1 : {V("i32")} -> tensor<{ch}x1xi32>
    %rowb{s} = ism.broadcast %cie{s} : tensor<{ch}x1xi32> -> {T("i32")}
    %bt{s} = ism.gather %B[%rowb{s}, %colb] : memref<?x?xf32>[{T("i32")},
        {T("i32")}] -> {T("f32")}"""
direct_body = f"""
    %k32 = arith.index_cast %k : index to i32
    %ks = ism.splat %k32 : i32 -> {T("i32")}
    %idx = arith.addi %laneb, %ks : {T("i32")}
    %live = arith.cmpi slt, %idx, %endsb : {T("i32")}
    %ci = ism.gather %colind[%idx] mask %live : memref<?xi32>[{T("i32")}] -> {T("i32")}
    %vb = ism.gather %values[%idx] mask %live : memref<?xf32>[{T("i32")}] -> {T("f32")}
    %bt = ism.gather %B[%ci, %colb] : memref<?x?xf32>[{T("i32")},
        {T("i32")}] -> {T("f32")}"""
if mode == "direct":
    iters = f"%acc = %zero) -> (tensor<{bn}xf32>"
    pre = f"""
  %lanec = ism.expand_dims %lane axis = 1 : {V("i32")} -> tensor<{ch}x1xi32>
  %laneb = ism.broadcast %lanec : tensor<{ch}x1xi32> -> {T("i32")}
  %endsb = ism.splat %end32 : i32 -> {T("i32")}"""
    body = direct_body
    use_v, use_bt = None, "%bt"
    yld = f"%next : tensor<{bn}xf32>"
elif deep:
    iters = f"%acc = %zero, %cc = %ci0, %vc = %v0, %btc = %bt0) -> (tensor<{bn}xf32>, {V('i32')}, {V('f32')}, {T('f32')}"
    pre = load("%start", "0") + gather("0")
    body = load("%kn", "n") + gather("n")
    use_v, use_bt = "%vc", "%btc"
    yld = f"%next, %cin, %vn, %btn : tensor<{bn}xf32>, {V('i32')}, {V('f32')}, {T('f32')}"
else:
    iters = f"%acc = %zero, %ci = %ci0, %vc = %v0) -> (tensor<{bn}xf32>, {V('i32')}, {V('f32')}"
    pre = load("%start", "0")
    body = load("%kn", "n") + gather("")
    use_v, use_bt = "%vc", "%bt"
    yld = f"%next, %cin, %vn : tensor<{bn}xf32>, {V('i32')}, {V('f32')}"
vpart = "" if use_v is None else f"""
    %ve = ism.expand_dims {use_v} axis = 1 : {V("f32")} -> tensor<{ch}x1xf32>
    %vb = ism.broadcast %ve : tensor<{ch}x1xf32> -> {T("f32")}"""
kernel = f"""ism.kernel @spmm(%rowptr: memref<?xi32>, %colind: memref<?xi32>,
                 %values: memref<?xf32>, %B: memref<?x?xf32>,
                 %Y: memref<?x?xf32>) attributes {{num_warps = 4 : i32}} {{
  %row = ism.program_id x : index
  %pn = ism.program_id y : index
  %cbn = arith.constant {bn} : index
  %cch = arith.constant {ch} : index
  %n0 = arith.muli %pn, %cbn : index
  %bounds = ism.load %rowptr[%row] : memref<?xi32> -> tensor<2xi32>
  %start32 = ism.reduce %bounds axis = 0 : tensor<2xi32> -> i32 {{
  ^bb0(%a: i32, %b: i32):
    %m = arith.minsi %a, %b : i32
    ism.yield %m : i32
  }}
  %end32 = ism.reduce %bounds axis = 0 : tensor<2xi32> -> i32 {{
  ^bb0(%a: i32, %b: i32):
    %m = arith.maxsi %a, %b : i32
    ism.yield %m : i32
  }}
  %start = arith.index_cast %start32 : i32 to index
  %end = arith.index_cast %end32 : i32 to index
  %lane = ism.range 0 to {ch} : {V("i32")}
  %cols = ism.range 0 to {bn} : tensor<{bn}xi32>
  %n032 = arith.index_cast %n0 : index to i32
  %n0s = ism.splat %n032 : i32 -> tensor<{bn}xi32>
  %colsn = arith.addi %cols, %n0s : tensor<{bn}xi32>
  %colsr = ism.expand_dims %colsn axis = 0 : tensor<{bn}xi32> -> tensor<1x{bn}xi32>
  %colb = ism.broadcast %colsr : tensor<1x{bn}xi32> -> {T("i32")}
  %ends = ism.splat %end32 : i32 -> {V("i32")}
  %zero = arith.constant dense<0.0> : tensor<{bn}xf32>{pre}
  %acc:{ {"direct": 1, "gather": 4}.get(mode, 3) } = scf.for %k = %start to %end step %cch iter_args({iters}) {{
    %kn = arith.addi %k, %cch : index{body}{vpart}
    %prod = arith.mulf %vb, {use_bt} : {T("f32")}
    %part = ism.reduce %prod axis = 0 : {T("f32")} -> tensor<{bn}xf32> {{
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      ism.yield %s : f32
    }}
    %next = arith.addf %acc, %part : tensor<{bn}xf32>
    scf.yield {yld}
  }}
  %out = ism.expand_dims %acc#0 axis = 0 : tensor<{bn}xf32> -> tensor<1x{bn}xf32>
  ism.store %out, %Y[%row, %n0] : tensor<1x{bn}xf32> -> memref<?x?xf32>
  ism.return
}}

"""
a = src.index("ism.kernel @spmm"); b = src.index("func.func @main")
out = src[:a] + kernel + src[b:]
out = out.replace("%block = arith.constant 128 : index", f"%block = arith.constant 128 : index\n  %blockn = arith.constant {bn} : index").replace("%gc = arith.ceildivui %cols, %block", "%gc = arith.ceildivui %cols, %blockn")
sys.stdout.write(out)
