// Co-scheduling a tensor-core GEMM with a row softmax: the bf16 128x128x64
// wgmma matmul and the f16 softmax of softmax.mlir share every SM in one
// fused launch (ism-coschedule, warp_specialized).

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

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>,
                %x: memref<?x?xf16>, %y: memref<?x?xf16>) {
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
  %s_rows = memref.dim %x, %c0 : memref<?x?xf16>
  %s_cols = memref.dim %x, %c1 : memref<?x?xf16>
  %s_yrows = memref.dim %y, %c0 : memref<?x?xf16>
  %s_ycols = memref.dim %y, %c1 : memref<?x?xf16>
  %s_same_r = arith.cmpi eq, %s_yrows, %s_rows : index
  %s_same_c = arith.cmpi eq, %s_ycols, %s_cols : index
  %s_same = arith.andi %s_same_r, %s_same_c : i1
  ism.assert %s_same, "x is {0}x{1} and y is {2}x{3}: they must have the same shape"
      (%s_rows, %s_cols, %s_yrows, %s_ycols) : index, index, index, index
  %s_tile = arith.constant 4096 : index
  %s_fits = arith.cmpi sle, %s_cols, %s_tile : index
  ism.assert %s_fits, "rows of {0} columns: this softmax takes rows of up to 4096"
      (%s_cols) : index
  %rows = memref.dim %x, %c0 : memref<?x?xf16>
  ism.coschedule warp_specialized {
    ism.launch @matmul grid(%gm, %gn) (%A, %B, %C)
        : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
    ism.launch @softmax grid(%rows) (%x, %y)
        : (memref<?x?xf16>, memref<?x?xf16>)
  }
  return
}
