// Co-scheduling: the compute-bound bf16 matmul and the memory-bound bf16
// rmsnorm run concurrently on the same SMs in one fused launch. With the
// warp_specialized policy every CTA holds warps of both kernels, each looping
// over its own grid, so the tensor cores and the memory system are busy at
// the same time (ism-coschedule; docs/coschedule.md). The matmul is the
// 128x128x64 wgmma kernel with 8 consumer warps (a producer warpgroup is
// added); the rmsnorm is rmsnorm.mlir's on 4 warps.

ism.kernel @matmul(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>,
                   %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 128 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero)
      -> (tensor<128x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x128xbf16>
        -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<128x128xbf16> -> memref<?x?xbf16>
  ism.return
}

ism.kernel @rmsnorm(%x: memref<?x?xbf16>, %w: memref<?xbf16>,
                    %y: memref<?x?xbf16>, %eps: f32)
    attributes {num_warps = 4 : i32} {
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

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>,
                %x: memref<?x?xbf16>, %w: memref<?xbf16>, %y: memref<?x?xbf16>,
                %eps: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %block = arith.constant 128 : index
  %M = memref.dim %A, %c0 : memref<?x?xbf16>
  %N = memref.dim %B, %c1 : memref<?x?xbf16>
  %gm = arith.ceildivui %M, %block : index
  %gn = arith.ceildivui %N, %block : index
  %mm_K = memref.dim %A, %c1 : memref<?x?xbf16>
  %mm_KB = memref.dim %B, %c0 : memref<?x?xbf16>
  %mm_CM = memref.dim %C, %c0 : memref<?x?xbf16>
  %mm_CN = memref.dim %C, %c1 : memref<?x?xbf16>
  %mm_inner = arith.cmpi eq, %mm_K, %mm_KB : index
  ism.assert %mm_inner, "A is {0}x{1} and B is {2}x{3}: inner dimensions differ"
      (%M, %mm_K, %mm_KB, %N) : index, index, index, index
  %mm_cm = arith.cmpi eq, %mm_CM, %M : index
  %mm_cn = arith.cmpi eq, %mm_CN, %N : index
  %mm_cshape = arith.andi %mm_cm, %mm_cn : i1
  ism.assert %mm_cshape, "C is {0}x{1} but A x B is {2}x{3}" (%mm_CM, %mm_CN, %M, %N)
      : index, index, index, index
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
  %rows = memref.dim %x, %c0 : memref<?x?xbf16>
  ism.coschedule warp_specialized {
    ism.launch @matmul grid(%gm, %gn) (%A, %B, %C)
        : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
    ism.launch @rmsnorm grid(%rows) (%x, %w, %y, %eps)
        : (memref<?x?xbf16>, memref<?xbf16>, memref<?x?xbf16>, f32)
  }
  return
}
