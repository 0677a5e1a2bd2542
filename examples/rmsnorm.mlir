// RMSNorm forward in bf16 with fp32 statistics:
//   y[r, :] = x[r, :] / sqrt(mean(x[r, :]^2) + eps) * w
// One program per row of up to 4096 columns; padding columns read 0 and add
// nothing to the sum of squares. The weight is loaded with the row, so that
// both loads are in flight before the reduction's barrier.

ism.kernel @rmsnorm(%x: memref<?x?xbf16>, %w: memref<?xbf16>,
                    %y: memref<?x?xbf16>, %eps: f32)
    attributes {num_warps = 8 : i32} {
  %row = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c1 : memref<?x?xbf16>
  %n32 = arith.index_cast %n : index to i32
  %nf = arith.uitofp %n32 : i32 to f32

  %t = ism.load %x[%row, %c0] : memref<?x?xbf16> -> tensor<1x4096xbf16>
  %wt = ism.load %w[%c0] : memref<?xbf16> -> tensor<4096xbf16>
  %t1 = ism.reshape %t : tensor<1x4096xbf16> -> tensor<4096xbf16>
  %v = arith.extf %t1 : tensor<4096xbf16> to tensor<4096xf32>
  %sq = arith.mulf %v, %v : tensor<4096xf32>
  %ssq = ism.reduce %sq axis = 0 : tensor<4096xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    ism.yield %s : f32
  }
  %ms = arith.divf %ssq, %nf : f32
  %mseps = arith.addf %ms, %eps : f32
  %rrms = math.rsqrt %mseps : f32
  %rrmss = ism.splat %rrms : f32 -> tensor<4096xf32>
  %normed = arith.mulf %v, %rrmss : tensor<4096xf32>
  %wf = arith.extf %wt : tensor<4096xbf16> to tensor<4096xf32>
  %scaled = arith.mulf %normed, %wf : tensor<4096xf32>
  %o16 = arith.truncf %scaled : tensor<4096xf32> to tensor<4096xbf16>
  %out = ism.reshape %o16 : tensor<4096xbf16> -> tensor<1x4096xbf16>
  ism.store %out, %y[%row, %c0] : tensor<1x4096xbf16> -> memref<?x?xbf16>
  ism.return
}

func.func @main(%x: memref<?x?xbf16>, %w: memref<?xbf16>, %y: memref<?x?xbf16>,
                %eps: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %x, %c0 : memref<?x?xbf16>
  %cols = memref.dim %x, %c1 : memref<?x?xbf16>
  %wn = memref.dim %w, %c0 : memref<?xbf16>
  %yrows = memref.dim %y, %c0 : memref<?x?xbf16>
  %ycols = memref.dim %y, %c1 : memref<?x?xbf16>
  %same_r = arith.cmpi eq, %yrows, %rows : index
  %same_c = arith.cmpi eq, %ycols, %cols : index
  %same = arith.andi %same_r, %same_c : i1
  ism.assert %same, "x is {0}x{1} and y is {2}x{3}: they must have the same shape"
      (%rows, %cols, %yrows, %ycols) : index, index, index, index
  %wok = arith.cmpi eq, %wn, %cols : index
  ism.assert %wok, "w has {0} elements but rows have {1} columns" (%wn, %cols)
      : index, index
  %tile = arith.constant 4096 : index
  %fits = arith.cmpi sle, %cols, %tile : index
  ism.assert %fits, "rows of {0} columns: this rmsnorm takes rows of up to 4096"
      (%cols) : index
  ism.launch @rmsnorm grid(%rows) (%x, %w, %y, %eps)
      : (memref<?x?xbf16>, memref<?xbf16>, memref<?x?xbf16>, f32)
  return
}
