// Softmax of each row of any width in f16, streamed in chunks of 2048: a
// pass for the per-lane running maxima and sums (online), then a pass that
// normalises each chunk and stores it where it was read (in place when y
// is x). Both loops are what ism-pipeline-loads issues ahead; the second
// one stores, at the offsets it loads.
ism.kernel @row_softmax(%x: memref<?x?xf16>, %y: memref<?x?xf16>)
    attributes {num_warps = 4 : i32} {
  %row = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %chunk = arith.constant 2048 : index
  %n = memref.dim %x, %c1 : memref<?x?xf16>
  %m0 = arith.constant dense<-1.0e30> : tensor<1x2048xf32>
  %s0 = arith.constant dense<0.0> : tensor<1x2048xf32>
  %m, %s = scf.for %off = %c0 to %n step %chunk iter_args(%mi = %m0, %si = %s0)
      -> (tensor<1x2048xf32>, tensor<1x2048xf32>) {
    %t = ism.load %x[%row, %off] {padding = 0xFC00 : f16}
        : memref<?x?xf16> -> tensor<1x2048xf16>
    %v = arith.extf %t : tensor<1x2048xf16> to tensor<1x2048xf32>
    %mn = arith.maximumf %mi, %v : tensor<1x2048xf32>
    %d = arith.subf %mi, %mn : tensor<1x2048xf32>
    %ed = math.exp %d : tensor<1x2048xf32>
    %sc = arith.mulf %si, %ed : tensor<1x2048xf32>
    %dv = arith.subf %v, %mn : tensor<1x2048xf32>
    %ev = math.exp %dv : tensor<1x2048xf32>
    %sn = arith.addf %sc, %ev : tensor<1x2048xf32>
    scf.yield %mn, %sn : tensor<1x2048xf32>, tensor<1x2048xf32>
  }
  %m1 = ism.reshape %m : tensor<1x2048xf32> -> tensor<2048xf32>
  %mx = ism.reduce %m1 axis = 0 : tensor<2048xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.maximumf %a, %b : f32
    ism.yield %r : f32
  }
  %mxs = ism.splat %mx : f32 -> tensor<1x2048xf32>
  %dm = arith.subf %m, %mxs : tensor<1x2048xf32>
  %em = math.exp %dm : tensor<1x2048xf32>
  %ws = arith.mulf %s, %em : tensor<1x2048xf32>
  %ws1 = ism.reshape %ws : tensor<1x2048xf32> -> tensor<2048xf32>
  %tot = ism.reduce %ws1 axis = 0 : tensor<2048xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    ism.yield %r : f32
  }
  %one = arith.constant 1.0 : f32
  %inv = arith.divf %one, %tot : f32
  %invs = ism.splat %inv : f32 -> tensor<1x2048xf32>
  scf.for %off = %c0 to %n step %chunk {
    %t = ism.load %x[%row, %off] : memref<?x?xf16> -> tensor<1x2048xf16>
    %v = arith.extf %t : tensor<1x2048xf16> to tensor<1x2048xf32>
    %dv = arith.subf %v, %mxs : tensor<1x2048xf32>
    %e = math.exp %dv : tensor<1x2048xf32>
    %p = arith.mulf %e, %invs : tensor<1x2048xf32>
    %p16 = arith.truncf %p : tensor<1x2048xf32> to tensor<1x2048xf16>
    ism.store %p16, %y[%row, %off] : tensor<1x2048xf16> -> memref<?x?xf16>
  }
  ism.return
}

func.func @main(%x: memref<?x?xf16>, %y: memref<?x?xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %x, %c0 : memref<?x?xf16>
  %cols = memref.dim %x, %c1 : memref<?x?xf16>
  %yrows = memref.dim %y, %c0 : memref<?x?xf16>
  %ycols = memref.dim %y, %c1 : memref<?x?xf16>
  %same_r = arith.cmpi eq, %yrows, %rows : index
  %same_c = arith.cmpi eq, %ycols, %cols : index
  %same = arith.andi %same_r, %same_c : i1
  ism.assert %same, "x is {0}x{1} and y is {2}x{3}: they must have the same shape"
      (%rows, %cols, %yrows, %ycols) : index, index, index, index
  ism.launch @row_softmax grid(%rows) (%x, %y) : (memref<?x?xf16>, memref<?x?xf16>)
  return
}
