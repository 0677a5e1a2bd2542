// The control pair: two memory-bound kernels, the bf16 rmsnorm and the f16
// softmax. They share one memory system, so running them side by side on an
// SM cannot beat running them one after the other; ism-coschedule keeps the
// launches separate and says so (fallback = false fuses them anyway).

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

ism.kernel @softmax(%x: memref<?x?xf16>, %y: memref<?x?xf16>)
    attributes {num_warps = 4 : i32} {
  %row = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%row, %c0] {padding = 0xFC00 : f16}
      : memref<?x?xf16> -> tensor<1x4096xf16>
  %t1 = ism.reshape %t : tensor<1x4096xf16> -> tensor<4096xf16>
  %v = arith.extf %t1 : tensor<4096xf16> to tensor<4096xf32>
  %max = ism.reduce %v axis = 0 : tensor<4096xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maximumf %a, %b : f32
    ism.yield %m : f32
  }
  %maxs = ism.splat %max : f32 -> tensor<4096xf32>
  %shifted = arith.subf %v, %maxs : tensor<4096xf32>
  %e = math.exp %shifted : tensor<4096xf32>
  %sum = ism.reduce %e axis = 0 : tensor<4096xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    ism.yield %s : f32
  }
  %sums = ism.splat %sum : f32 -> tensor<4096xf32>
  %p = arith.divf %e, %sums : tensor<4096xf32>
  %p16 = arith.truncf %p : tensor<4096xf32> to tensor<4096xf16>
  %out = ism.reshape %p16 : tensor<4096xf16> -> tensor<1x4096xf16>
  ism.store %out, %y[%row, %c0] : tensor<1x4096xf16> -> memref<?x?xf16>
  ism.return
}

func.func @main(%x: memref<?x?xbf16>, %w: memref<?xbf16>, %y: memref<?x?xbf16>,
                %eps: f32, %s: memref<?x?xf16>, %t: memref<?x?xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n_rows = memref.dim %x, %c0 : memref<?x?xbf16>
  %n_cols = memref.dim %x, %c1 : memref<?x?xbf16>
  %n_yrows = memref.dim %y, %c0 : memref<?x?xbf16>
  %n_ycols = memref.dim %y, %c1 : memref<?x?xbf16>
  %n_same_r = arith.cmpi eq, %n_yrows, %n_rows : index
  %n_same_c = arith.cmpi eq, %n_ycols, %n_cols : index
  %n_same = arith.andi %n_same_r, %n_same_c : i1
  ism.assert %n_same, "x is {0}x{1} and y is {2}x{3}: they must have the same shape"
      (%n_rows, %n_cols, %n_yrows, %n_ycols) : index, index, index, index
  %n_tile = arith.constant 4096 : index
  %n_fits = arith.cmpi sle, %n_cols, %n_tile : index
  ism.assert %n_fits, "rows of {0} columns: this rmsnorm takes rows of up to 4096"
      (%n_cols) : index
  %n_wn = memref.dim %w, %c0 : memref<?xbf16>
  %n_wok = arith.cmpi eq, %n_wn, %n_cols : index
  ism.assert %n_wok, "w has {0} elements but rows have {1} columns" (%n_wn, %n_cols)
      : index, index
  %s_rows = memref.dim %s, %c0 : memref<?x?xf16>
  %s_cols = memref.dim %s, %c1 : memref<?x?xf16>
  %s_yrows = memref.dim %t, %c0 : memref<?x?xf16>
  %s_ycols = memref.dim %t, %c1 : memref<?x?xf16>
  %s_same_r = arith.cmpi eq, %s_yrows, %s_rows : index
  %s_same_c = arith.cmpi eq, %s_ycols, %s_cols : index
  %s_same = arith.andi %s_same_r, %s_same_c : i1
  ism.assert %s_same, "s is {0}x{1} and t is {2}x{3}: they must have the same shape"
      (%s_rows, %s_cols, %s_yrows, %s_ycols) : index, index, index, index
  %s_tile = arith.constant 4096 : index
  %s_fits = arith.cmpi sle, %s_cols, %s_tile : index
  ism.assert %s_fits, "rows of {0} columns: this softmax takes rows of up to 4096"
      (%s_cols) : index
  %rows = memref.dim %x, %c0 : memref<?x?xbf16>
  %srows = memref.dim %s, %c0 : memref<?x?xf16>
  ism.coschedule warp_specialized {
    ism.launch @rmsnorm grid(%rows) (%x, %w, %y, %eps)
        : (memref<?x?xbf16>, memref<?xbf16>, memref<?x?xbf16>, f32)
    ism.launch @softmax grid(%srows) (%s, %t)
        : (memref<?x?xf16>, memref<?x?xf16>)
  }
  return
}
