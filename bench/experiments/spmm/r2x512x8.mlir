// Co-scheduling a tensor-core GEMM with a SIMT sparse kernel, the IntraSM
// engine's use case: the bf16 128x128x64 wgmma matmul and spmm.mlir's CSR
// SpMM (gathers, no tensor cores) share every SM in one fused launch
// (ism-coschedule, warp_specialized). This variant: two rows of A a
// program, their chunks of 8 nonzeros gathered side by side.

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
  %pr = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c512 = arith.constant 512 : index
  %c8 = arith.constant 8 : index
  %M = memref.dim %Y, %c0 : memref<?x?xf32>
  %row0 = arith.muli %pr, %c2 : index
  %row1 = arith.addi %row0, %c1 : index
  %n0 = arith.muli %pn, %c512 : index
  %b0 = ism.load %rowptr[%row0] : memref<?xi32> -> tensor<2xi32>
  %b1 = ism.load %rowptr[%row1] : memref<?xi32> -> tensor<2xi32>
  %s0 = ism.reduce %b0 axis = 0 : tensor<2xi32> -> i32 {
  ^bb0(%a: i32, %b: i32):
    %m = arith.minsi %a, %b : i32
    ism.yield %m : i32
  }
  %e0 = ism.reduce %b0 axis = 0 : tensor<2xi32> -> i32 {
  ^bb0(%a: i32, %b: i32):
    %m = arith.maxsi %a, %b : i32
    ism.yield %m : i32
  }
  %s1 = ism.reduce %b1 axis = 0 : tensor<2xi32> -> i32 {
  ^bb0(%a: i32, %b: i32):
    %m = arith.minsi %a, %b : i32
    ism.yield %m : i32
  }
  %e1x = ism.reduce %b1 axis = 0 : tensor<2xi32> -> i32 {
  ^bb0(%a: i32, %b: i32):
    %m = arith.maxsi %a, %b : i32
    ism.yield %m : i32
  }
  %has1 = arith.cmpi ult, %row1, %M : index
  %e1 = arith.select %has1, %e1x, %s1 : i32
  %l0 = arith.subi %e0, %s0 : i32
  %l1 = arith.subi %e1, %s1 : i32
  %len32 = arith.maxsi %l0, %l1 : i32
  %len = arith.index_cast %len32 : i32 to index
  %s0i = arith.index_cast %s0 : i32 to index
  %s1i = arith.index_cast %s1 : i32 to index
  %lane = ism.range 0 to 8 : tensor<8xi32>
  %cols = ism.range 0 to 512 : tensor<512xi32>
  %n032 = arith.index_cast %n0 : index to i32
  %n0s = ism.splat %n032 : i32 -> tensor<512xi32>
  %colsn = arith.addi %cols, %n0s : tensor<512xi32>
  %colsr = ism.expand_dims %colsn axis = 0 : tensor<512xi32> -> tensor<1x512xi32>
  %colb = ism.broadcast %colsr : tensor<1x512xi32> -> tensor<8x512xi32>
  %ends0 = ism.splat %e0 : i32 -> tensor<8xi32>
  %ends1 = ism.splat %e1 : i32 -> tensor<8xi32>
  %zero = arith.constant dense<0.0> : tensor<512xf32>
  %acc:2 = scf.for %k = %c0 to %len step %c8 iter_args(%a0 = %zero, %a1 = %zero)
      -> (tensor<512xf32>, tensor<512xf32>) {
    %k0 = arith.addi %s0i, %k : index
    %k1 = arith.addi %s1i, %k : index
    %k032 = arith.index_cast %k0 : index to i32
    %k132 = arith.index_cast %k1 : index to i32
    %ks0 = ism.splat %k032 : i32 -> tensor<8xi32>
    %ks1 = ism.splat %k132 : i32 -> tensor<8xi32>
    %idx0 = arith.addi %lane, %ks0 : tensor<8xi32>
    %idx1 = arith.addi %lane, %ks1 : tensor<8xi32>
    %live0 = arith.cmpi slt, %idx0, %ends0 : tensor<8xi32>
    %live1 = arith.cmpi slt, %idx1, %ends1 : tensor<8xi32>
    %ci0 = ism.load %colind[%k0] mask %live0 : memref<?xi32> -> tensor<8xi32>
    %ci1 = ism.load %colind[%k1] mask %live1 : memref<?xi32> -> tensor<8xi32>
    %v0 = ism.load %values[%k0] mask %live0 : memref<?xf32> -> tensor<8xf32>
    %v1 = ism.load %values[%k1] mask %live1 : memref<?xf32> -> tensor<8xf32>
    %cie0 = ism.expand_dims %ci0 axis = 1 : tensor<8xi32> -> tensor<8x1xi32>
    %cie1 = ism.expand_dims %ci1 axis = 1 : tensor<8xi32> -> tensor<8x1xi32>
    %rb0 = ism.broadcast %cie0 : tensor<8x1xi32> -> tensor<8x512xi32>
    %rb1 = ism.broadcast %cie1 : tensor<8x1xi32> -> tensor<8x512xi32>
    %bt0 = ism.gather %B[%rb0, %colb] : memref<?x?xf32>[tensor<8x512xi32>,
        tensor<8x512xi32>] -> tensor<8x512xf32>
    %bt1 = ism.gather %B[%rb1, %colb] : memref<?x?xf32>[tensor<8x512xi32>,
        tensor<8x512xi32>] -> tensor<8x512xf32>
    %ve0 = ism.expand_dims %v0 axis = 1 : tensor<8xf32> -> tensor<8x1xf32>
    %ve1 = ism.expand_dims %v1 axis = 1 : tensor<8xf32> -> tensor<8x1xf32>
    %vb0 = ism.broadcast %ve0 : tensor<8x1xf32> -> tensor<8x512xf32>
    %vb1 = ism.broadcast %ve1 : tensor<8x1xf32> -> tensor<8x512xf32>
    %p0 = arith.mulf %vb0, %bt0 : tensor<8x512xf32>
    %p1 = arith.mulf %vb1, %bt1 : tensor<8x512xf32>
    %r0 = ism.reduce %p0 axis = 0 : tensor<8x512xf32> -> tensor<512xf32> {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      ism.yield %s : f32
    }
    %r1 = ism.reduce %p1 axis = 0 : tensor<8x512xf32> -> tensor<512xf32> {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      ism.yield %s : f32
    }
    %n0a = arith.addf %a0, %r0 : tensor<512xf32>
    %n1a = arith.addf %a1, %r1 : tensor<512xf32>
    scf.yield %n0a, %n1a : tensor<512xf32>, tensor<512xf32>
  }
  %o0 = ism.expand_dims %acc#0 axis = 0 : tensor<512xf32> -> tensor<1x512xf32>
  %o1 = ism.expand_dims %acc#1 axis = 0 : tensor<512xf32> -> tensor<1x512xf32>
  ism.store %o0, %Y[%row0, %n0] : tensor<1x512xf32> -> memref<?x?xf32>
  ism.store %o1, %Y[%row1, %n0] : tensor<1x512xf32> -> memref<?x?xf32>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>,
                %rowptr: memref<?xi32>, %colind: memref<?xi32>,
                %values: memref<?xf32>, %D: memref<?x?xf32>,
                %Y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %block = arith.constant 128 : index
  %blockn = arith.constant 512 : index
  %M = memref.dim %A, %c0 : memref<?x?xbf16>
  %N = memref.dim %B, %c1 : memref<?x?xbf16>
  %gm = arith.ceildivui %M, %block : index
  %gn = arith.ceildivui %N, %block : index
  %rows = memref.dim %Y, %c0 : memref<?x?xf32>
  %cols = memref.dim %Y, %c1 : memref<?x?xf32>
  %gc = arith.ceildivui %cols, %blockn : index
  %c2h = arith.constant 2 : index
  %rows2 = arith.ceildivui %rows, %c2h : index
  ism.coschedule warp_specialized {
    ism.launch @matmul grid(%gm, %gn) (%A, %B, %C)
        : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
    ism.launch @spmm grid(%rows2, %gc) (%rowptr, %colind, %values, %D, %Y)
        : (memref<?xi32>, memref<?xi32>, memref<?xf32>, memref<?x?xf32>,
           memref<?x?xf32>)
  }
  return
}
