// Sparse x dense matrix product (CSR SpMM): Y = A x B, A an M x K CSR
// matrix (rowptr, colind, values), B dense K x N. One program computes one
// row of Y over BLOCK_N = 512 columns, taking A's nonzeros of the row 8 at
// a time and gathering the 8 rows of B they select with ism.gather, so
// the kernel's memory accesses are irregular (SIMT, no tensor cores). Each
// thread holds 4 consecutive columns of each gathered row (one 16-byte
// load) and all 8 rows, so the sum over them stays in its registers.
// (512 x 8 measured 1.14x faster than 128 columns x 32 nonzeros on the
// H200, alone and beside a GEMM: docs/coschedule.md, SpMM block shapes.)
// rowptr is non-decreasing, so the smaller and larger of rowptr[row] and
// rowptr[row + 1] are the row's first and last nonzero.

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

func.func @main(%rowptr: memref<?xi32>, %colind: memref<?xi32>,
                %values: memref<?xf32>, %B: memref<?x?xf32>,
                %Y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %M = memref.dim %Y, %c0 : memref<?x?xf32>
  %N = memref.dim %Y, %c1 : memref<?x?xf32>
  %BN = memref.dim %B, %c1 : memref<?x?xf32>
  %n_ok = arith.cmpi eq, %BN, %N : index
  ism.assert %n_ok, "B has {0} columns and Y {1}: they must be equal" (%BN, %N)
      : index, index
  %R = memref.dim %rowptr, %c0 : memref<?xi32>
  %M1 = arith.addi %M, %c1 : index
  %r_ok = arith.cmpi eq, %R, %M1 : index
  ism.assert %r_ok, "rowptr has {0} entries but Y has {1} rows: it needs {2}"
      (%R, %M, %M1) : index, index, index
  %NC = memref.dim %colind, %c0 : memref<?xi32>
  %NV = memref.dim %values, %c0 : memref<?xf32>
  %nnz_ok = arith.cmpi eq, %NC, %NV : index
  ism.assert %nnz_ok, "colind has {0} entries and values {1}: they must be equal"
      (%NC, %NV) : index, index
  %gn = arith.ceildivui %N, %c512 : index
  ism.launch @spmm grid(%M, %gn) (%rowptr, %colind, %values, %B, %Y)
      : (memref<?xi32>, memref<?xi32>, memref<?xf32>, memref<?x?xf32>,
         memref<?x?xf32>)
  return
}
