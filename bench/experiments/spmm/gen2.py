import sys
src = open("examples/coschedule_matmul_spmm.mlir").read()
bn, ch = int(sys.argv[1]), int(sys.argv[2])
T = lambda t: f"tensor<{ch}x{bn}x{t}>"
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
  %lane = ism.range 0 to {ch} : tensor<{ch}xi32>
  %lanec = ism.expand_dims %lane axis = 1 : tensor<{ch}xi32> -> tensor<{ch}x1xi32>
  %laneb = ism.broadcast %lanec : tensor<{ch}x1xi32> -> {T("i32")}
  %cols = ism.range 0 to {bn} : tensor<{bn}xi32>
  %n032 = arith.index_cast %n0 : index to i32
  %n0s = ism.splat %n032 : i32 -> tensor<{bn}xi32>
  %colsn = arith.addi %cols, %n0s : tensor<{bn}xi32>
  %colsr = ism.expand_dims %colsn axis = 0 : tensor<{bn}xi32> -> tensor<1x{bn}xi32>
  %colb = ism.broadcast %colsr : tensor<1x{bn}xi32> -> {T("i32")}
  %ends = ism.splat %end32 : i32 -> {T("i32")}
  %zero = arith.constant dense<0.0> : tensor<{bn}xf32>
  %acc = scf.for %k = %start to %end step %cch iter_args(%acc = %zero)
      -> (tensor<{bn}xf32>) {{
    %k32 = arith.index_cast %k : index to i32
    %ks = ism.splat %k32 : i32 -> {T("i32")}
    %idx = arith.addi %laneb, %ks : {T("i32")}
    %live = arith.cmpi slt, %idx, %ends : {T("i32")}
    %ci = ism.gather %colind[%idx] mask %live : memref<?xi32>[{T("i32")}] -> {T("i32")}
    %v = ism.gather %values[%idx] mask %live : memref<?xf32>[{T("i32")}] -> {T("f32")}
    %bt = ism.gather %B[%ci, %colb] : memref<?x?xf32>[{T("i32")},
        {T("i32")}] -> {T("f32")}
    %prod = arith.mulf %v, %bt : {T("f32")}
    %part = ism.reduce %prod axis = 0 : {T("f32")} -> tensor<{bn}xf32> {{
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      ism.yield %s : f32
    }}
    %next = arith.addf %acc, %part : tensor<{bn}xf32>
    scf.yield %next : tensor<{bn}xf32>
  }}
  %out = ism.expand_dims %acc axis = 0 : tensor<{bn}xf32> -> tensor<1x{bn}xf32>
  ism.store %out, %Y[%row, %n0] : tensor<1x{bn}xf32> -> memref<?x?xf32>
  ism.return
}}

"""
a = src.index("ism.kernel @spmm"); b = src.index("func.func @main")
out = src[:a] + kernel + src[b:]
out = out.replace("%block = arith.constant 128 : index", f"%block = arith.constant 128 : index\n  %blockn = arith.constant {bn} : index").replace("%gc = arith.ceildivui %cols, %block", "%gc = arith.ceildivui %cols, %blockn")
sys.stdout.write(out)
