"""Pipelined SpMM variants: the next chunk's column indices and values
(depth 1) -- and with `gather`, the next chunk's rows of B too -- are
loaded before this chunk's product."""
import sys
src = open("examples/coschedule_matmul_spmm.mlir").read()
bn, ch = int(sys.argv[1]), int(sys.argv[2])
deep = len(sys.argv) > 3 and sys.argv[3] == "gather"
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
if deep:
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
  %acc:{4 if deep else 3} = scf.for %k = %start to %end step %cch iter_args({iters}) {{
    %kn = arith.addi %k, %cch : index{body}
    %ve = ism.expand_dims {use_v} axis = 1 : {V("f32")} -> tensor<{ch}x1xf32>
    %vb = ism.broadcast %ve : tensor<{ch}x1xf32> -> {T("f32")}
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
