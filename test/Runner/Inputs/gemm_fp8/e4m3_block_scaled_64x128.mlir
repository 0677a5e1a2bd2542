// FP8 GEMM (bench/fp8_gemm.py): e4m3 x e4m3 -> bf16, 64x128x128, 4 warps
ism.kernel @gemm(%A: memref<?x?xf8E4M3FN>, %B: memref<?x?xf8E4M3FN>, %C: memref<?x?xbf16>, %SA: memref<?x?xf32>,
                 %SB: memref<?x?xf32>) attributes {num_warps = 4 : i32, group_size = 8 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 64 : index
  %bn = arith.constant 128 : index
  %bk = arith.constant 128 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xf8E4M3FN>
  %zero = arith.constant dense<0.0> : tensor<64x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<64x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xf8E4M3FN> -> tensor<64x128xf8E4M3FN>
    %w = ism.load %B[%n0, %k] : memref<?x?xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %b = ism.trans %w order = [1, 0] : tensor<128x128xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    // This K block's product from zero, scaled per row of A and per
    // 128 x 128 block of B, then added (promoted) to the accumulator.
    %p = ism.dot %a, %b, %zero : tensor<64x128xf8E4M3FN> * tensor<128x128xf8E4M3FN> -> tensor<64x128xf32>
    %kb = arith.divui %k, %bk : index
    %nb = arith.divui %n0, %bn : index
    %sa = ism.load %SA[%m0, %kb] : memref<?x?xf32> -> tensor<64x1xf32>
    %sb = ism.load %SB[%nb, %kb] : memref<?x?xf32> -> tensor<1x1xf32>
    %sac = ism.broadcast %sa : tensor<64x1xf32> -> tensor<64x128xf32>
    %sbc = ism.broadcast %sb : tensor<1x1xf32> -> tensor<64x128xf32>
    %p1 = arith.mulf %p, %sac : tensor<64x128xf32>
    %p2 = arith.mulf %p1, %sbc : tensor<64x128xf32>
    %d = arith.addf %acc, %p2 : tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  %o = arith.truncf %acc : tensor<64x128xf32> to tensor<64x128xbf16>
  ism.store %o, %C[%m0, %n0] : tensor<64x128xbf16> -> memref<?x?xbf16>
  ism.return
}

func.func @main(%A: memref<?x?xf8E4M3FN>, %B: memref<?x?xf8E4M3FN>, %C: memref<?x?xbf16>, %SA: memref<?x?xf32>,
                %SB: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 64 : index
  %bn = arith.constant 128 : index
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
  %c128 = arith.constant 128 : index
  %KT = arith.ceildivui %K, %c128 : index
  %NT = arith.ceildivui %N, %c128 : index
  %SAR = memref.dim %SA, %c0 : memref<?x?xf32>
  %SAC = memref.dim %SA, %c1 : memref<?x?xf32>
  %SBR = memref.dim %SB, %c0 : memref<?x?xf32>
  %SBC = memref.dim %SB, %c1 : memref<?x?xf32>
  %sa1 = arith.cmpi eq, %SAR, %M : index
  %sa2 = arith.cmpi eq, %SAC, %KT : index
  %sb1 = arith.cmpi eq, %SBR, %NT : index
  %sb2 = arith.cmpi eq, %SBC, %KT : index
  %sa = arith.andi %sa1, %sa2 : i1
  %sb = arith.andi %sb1, %sb2 : i1
  %scales = arith.andi %sa, %sb : i1
  ism.assert %scales, "the scales are {0}x{1} and {2}x{3}; A's need {4}x{5} (a row by 128-wide K blocks), B's {6}x{5} (128 x 128 blocks)"
      (%SAR, %SAC, %SBR, %SBC, %M, %KT, %NT) : index, index, index, index, index, index, index
  %gm = arith.ceildivui %M, %bm : index
  %gn = arith.ceildivui %N, %bn : index
  ism.launch @gemm grid(%gm, %gn) (%A, %B, %C, %SA, %SB)
      : (memref<?x?xf8E4M3FN>, memref<?x?xf8E4M3FN>, memref<?x?xbf16>, memref<?x?xf32>, memref<?x?xf32>)
  return
}
