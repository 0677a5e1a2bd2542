// Co-scheduling a tensor-core GEMM with a SIMT sparse kernel, the IntraSM
// engine's use case: the bf16 128x128x64 wgmma matmul and spmm.mlir's CSR
// SpMM (gathers, no tensor cores) share every SM in one fused launch
// (ism-coschedule, warp_specialized).

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

ism.kernel @spmm(%rowptr: memref<?xi32>, %colind: memref<?xi32>,
                 %values: memref<?xf32>, %B: memref<?x?xf32>,
                 %Y: memref<?x?xf32>) attributes {num_warps = 4 : i32} {
  %row = ism.program_id x : index
  %pn = ism.program_id y : index
  %c512 = arith.constant 512 : index
  %c8 = arith.constant 8 : index
  %n0 = arith.muli %pn, %c512 : index
  %bounds = ism.load %rowptr[%row] : memref<?xi32> -> tensor<2xi32>
  %start32 = ism.reduce %bounds axis = 0 : tensor<2xi32> -> i32 {
  ^bb0(%a: i32, %b: i32):
    %m = arith.minsi %a, %b : i32
    ism.yield %m : i32
  }
  %end32 = ism.reduce %bounds axis = 0 : tensor<2xi32> -> i32 {
  ^bb0(%a: i32, %b: i32):
    %m = arith.maxsi %a, %b : i32
    ism.yield %m : i32
  }
  %start = arith.index_cast %start32 : i32 to index
  %end = arith.index_cast %end32 : i32 to index
  %lane = ism.range 0 to 8 : tensor<8xi32>
  %cols = ism.range 0 to 512 : tensor<512xi32>
  %n032 = arith.index_cast %n0 : index to i32
  %n0s = ism.splat %n032 : i32 -> tensor<512xi32>
  %colsn = arith.addi %cols, %n0s : tensor<512xi32>
  %colsr = ism.expand_dims %colsn axis = 0 : tensor<512xi32> -> tensor<1x512xi32>
  %colb = ism.broadcast %colsr : tensor<1x512xi32> -> tensor<8x512xi32>
  %ends = ism.splat %end32 : i32 -> tensor<8xi32>
  %zero = arith.constant dense<0.0> : tensor<512xf32>
  %acc = scf.for %k = %start to %end step %c8 iter_args(%acc = %zero)
      -> (tensor<512xf32>) {
    %k32 = arith.index_cast %k : index to i32
    %ks = ism.splat %k32 : i32 -> tensor<8xi32>
    %idx = arith.addi %lane, %ks : tensor<8xi32>
    %live = arith.cmpi slt, %idx, %ends : tensor<8xi32>
    %ci = ism.load %colind[%k] mask %live : memref<?xi32> -> tensor<8xi32>
    %v = ism.load %values[%k] mask %live : memref<?xf32> -> tensor<8xf32>
    %cie = ism.expand_dims %ci axis = 1 : tensor<8xi32> -> tensor<8x1xi32>
    %rowb = ism.broadcast %cie : tensor<8x1xi32> -> tensor<8x512xi32>
    %bt = ism.gather %B[%rowb, %colb] : memref<?x?xf32>[tensor<8x512xi32>,
        tensor<8x512xi32>] -> tensor<8x512xf32>
    %ve = ism.expand_dims %v axis = 1 : tensor<8xf32> -> tensor<8x1xf32>
    %vb = ism.broadcast %ve : tensor<8x1xf32> -> tensor<8x512xf32>
    %prod = arith.mulf %vb, %bt : tensor<8x512xf32>
    %part = ism.reduce %prod axis = 0 : tensor<8x512xf32> -> tensor<512xf32> {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      ism.yield %s : f32
    }
    %next = arith.addf %acc, %part : tensor<512xf32>
    scf.yield %next : tensor<512xf32>
  }
  %out = ism.expand_dims %acc axis = 0 : tensor<512xf32> -> tensor<1x512xf32>
  ism.store %out, %Y[%row, %n0] : tensor<1x512xf32> -> memref<?x?xf32>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>,
                %rowptr: memref<?xi32>, %colind: memref<?xi32>,
                %values: memref<?xf32>, %D: memref<?x?xf32>,
                %Y: memref<?x?xf32>) {
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
  %BN2 = memref.dim %D, %c1 : memref<?x?xf32>
  %YN = memref.dim %Y, %c1 : memref<?x?xf32>
  %YM = memref.dim %Y, %c0 : memref<?x?xf32>
  %n_ok = arith.cmpi eq, %BN2, %YN : index
  ism.assert %n_ok, "D has {0} columns and Y {1}: they must be equal" (%BN2, %YN)
      : index, index
  %R = memref.dim %rowptr, %c0 : memref<?xi32>
  %M1 = arith.addi %YM, %c1 : index
  %r_ok = arith.cmpi eq, %R, %M1 : index
  ism.assert %r_ok, "rowptr has {0} entries but Y has {1} rows: it needs {2}"
      (%R, %YM, %M1) : index, index, index
  %rows = memref.dim %Y, %c0 : memref<?x?xf32>
  %cols = memref.dim %Y, %c1 : memref<?x?xf32>
  %blockn = arith.constant 512 : index
  %gc = arith.ceildivui %cols, %blockn : index
  ism.coschedule warp_specialized {
    ism.launch @matmul grid(%gm, %gn) (%A, %B, %C)
        : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
    ism.launch @spmm grid(%rows, %gc) (%rowptr, %colind, %values, %D, %Y)
        : (memref<?xi32>, memref<?xi32>, memref<?xf32>, memref<?x?xf32>,
           memref<?x?xf32>)
  }
  return
}
