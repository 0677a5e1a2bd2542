// FP8 GEMM (bench/fp8_gemm.py): e4m3 x e4m3 -> bf16, 128x256x128, 8 warps
ism.kernel @gemm(%A: memref<?x?xf8E4M3FN>, %B: memref<?x?xf8E4M3FN>, %C: memref<?x?xbf16>, %SA: memref<?xf32>,
                 %SB: memref<?xf32>) attributes {num_warps = 8 : i32, group_size = 8 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 256 : index
  %bk = arith.constant 128 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xf8E4M3FN>
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<128x256xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %w = ism.load %B[%n0, %k] : memref<?x?xf8E4M3FN> -> tensor<256x128xf8E4M3FN>
    %b = ism.trans %w order = [1, 0] : tensor<256x128xf8E4M3FN> -> tensor<128x256xf8E4M3FN>
    %d = ism.dot %a, %b, %acc : tensor<128x128xf8E4M3FN> * tensor<128x256xf8E4M3FN> -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  // The row-wise scales: A's rows' down the tile, B's rows' across.
  %sa = ism.load %SA[%m0] : memref<?xf32> -> tensor<128xf32>
  %sb = ism.load %SB[%n0] : memref<?xf32> -> tensor<256xf32>
  %sa2 = ism.expand_dims %sa axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %sb2 = ism.expand_dims %sb axis = 0 : tensor<256xf32> -> tensor<1x256xf32>
  %sac = ism.broadcast %sa2 : tensor<128x1xf32> -> tensor<128x256xf32>
  %sbc = ism.broadcast %sb2 : tensor<1x256xf32> -> tensor<128x256xf32>
  %r0 = arith.mulf %acc, %sac : tensor<128x256xf32>
  %r = arith.mulf %r0, %sbc : tensor<128x256xf32>
  %o = arith.truncf %r : tensor<128x256xf32> to tensor<128x256xbf16>
  ism.store %o, %C[%m0, %n0] : tensor<128x256xbf16> -> memref<?x?xbf16>
  ism.return
}

func.func @main(%A: memref<?x?xf8E4M3FN>, %B: memref<?x?xf8E4M3FN>, %C: memref<?x?xbf16>, %SA: memref<?xf32>,
                %SB: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 256 : index
  %M = memref.dim %A, %c0 : memref<?x?xf8E4M3FN>
  %K = memref.dim %A, %c1 : memref<?x?xf8E4M3FN>
  %N = memref.dim %B, %c0 : memref<?x?xf8E4M3FN>
  %KB = memref.dim %B, %c1 : memref<?x?xf8E4M3FN>
  %CM = memref.dim %C, %c0 : memref<?x?xbf16>
  %CN = memref.dim %C, %c1 : memref<?x?xbf16>
  %inner = arith.cmpi eq, %K, %KB : index
  ism.assert %inner, "A is {0}x{1} and B is {2}x{3}: both must be K wide (B is N x K)"
      (%M, %K, %N, %KB) : index, index, index, index
  %cm = arith.cmpi eq, %CM, %M : index
  %cn = arith.cmpi eq, %CN, %N : index
  %cshape = arith.andi %cm, %cn : i1
  ism.assert %cshape, "C is {0}x{1} but A x B^T is {2}x{3}"
      (%CM, %CN, %M, %N) : index, index, index, index
  %SAN = memref.dim %SA, %c0 : memref<?xf32>
  %SBN = memref.dim %SB, %c0 : memref<?xf32>
  %sa1 = arith.cmpi sge, %SAN, %M : index
  %sb1 = arith.cmpi sge, %SBN, %N : index
  %scales = arith.andi %sa1, %sb1 : i1
  ism.assert %scales, "the scales hold {0} and {1} elements for {2} rows of A and {3} of B" (%SAN, %SBN, %M, %N) : index, index, index, index
  %gm = arith.ceildivui %M, %bm : index
  %gn = arith.ceildivui %N, %bn : index
  ism.launch @gemm grid(%gm, %gn) (%A, %B, %C, %SA, %SB)
      : (memref<?x?xf8E4M3FN>, memref<?x?xf8E4M3FN>, memref<?x?xbf16>, memref<?xf32>, memref<?xf32>)
  return
}
