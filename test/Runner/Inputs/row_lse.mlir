// Log-sum-exp of each row of any width, streamed in chunks of 4096 with
// per-lane running maxima and sums (an online log-sum-exp), as a user writes
// it: the loop the ism-pipeline-loads tests run (rows that are one partial
// chunk, whole chunks, a partial last chunk, none).
ism.kernel @row_lse(%x: memref<?x?xbf16>, %out: memref<?xf32>)
    attributes {num_warps = 4 : i32} {
  %row = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %chunk = arith.constant 4096 : index
  %n = memref.dim %x, %c1 : memref<?x?xbf16>
  %ninf = arith.constant -1.0e30 : f32
  %zero = arith.constant 0.0 : f32
  %m0 = ism.splat %ninf : f32 -> tensor<4096xf32>
  %s0 = ism.splat %zero : f32 -> tensor<4096xf32>
  %m, %s = scf.for %off = %c0 to %n step %chunk iter_args(%mi = %m0, %si = %s0) -> (tensor<4096xf32>, tensor<4096xf32>) {
    %t = ism.load %x[%row, %off] {padding = 0xFF80 : bf16} : memref<?x?xbf16> -> tensor<1x4096xbf16>
    %t1 = ism.reshape %t : tensor<1x4096xbf16> -> tensor<4096xbf16>
    %v = arith.extf %t1 : tensor<4096xbf16> to tensor<4096xf32>
    %mn = arith.maximumf %mi, %v : tensor<4096xf32>
    %d = arith.subf %mi, %mn : tensor<4096xf32>
    %ed = math.exp %d : tensor<4096xf32>
    %sc = arith.mulf %si, %ed : tensor<4096xf32>
    %dv = arith.subf %v, %mn : tensor<4096xf32>
    %ev = math.exp %dv : tensor<4096xf32>
    %sn = arith.addf %sc, %ev : tensor<4096xf32>
    scf.yield %mn, %sn : tensor<4096xf32>, tensor<4096xf32>
  }
  %mx = ism.reduce %m axis = 0 : tensor<4096xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.maximumf %a, %b : f32
    ism.yield %r : f32
  }
  %mxs = ism.splat %mx : f32 -> tensor<4096xf32>
  %dm = arith.subf %m, %mxs : tensor<4096xf32>
  %em = math.exp %dm : tensor<4096xf32>
  %ws = arith.mulf %s, %em : tensor<4096xf32>
  %tot = ism.reduce %ws axis = 0 : tensor<4096xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    ism.yield %r : f32
  }
  %lg = math.log %tot : f32
  %res = arith.addf %mx, %lg : f32
  %rt = ism.splat %res : f32 -> tensor<1xf32>
  ism.store %rt, %out[%row] : tensor<1xf32> -> memref<?xf32>
  ism.return
}

func.func @main(%x: memref<?x?xbf16>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %rows = memref.dim %x, %c0 : memref<?x?xbf16>
  %n = memref.dim %out, %c0 : memref<?xf32>
  %same = arith.cmpi eq, %n, %rows : index
  ism.assert %same, "x has {0} rows but out {1} elements" (%rows, %n)
      : index, index
  ism.launch @row_lse grid(%rows) (%x, %out) : (memref<?x?xbf16>, memref<?xf32>)
  return
}
