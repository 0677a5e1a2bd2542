// FP8 GEMM (bench/fp8_gemm.py): e4m3 x e4m3 -> bf16, 128x256x128, 8 warps, cluster_m = 2 : i32, cluster_n = 1 : i32
ism.kernel @gemm(%A: memref<?x?xf8E4M3FN>, %B: memref<?x?xf8E4M3FN>, %C: memref<?x?xbf16>, %SA: memref<?xf32>,
                 %SB: memref<?xf32>) attributes {num_warps = 8 : i32, group_size = 8 : i32, cluster_m = 2 : i32, cluster_n = 1 : i32} {
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
  // The per-tensor scales, applied once to the f32 accumulator.
  %sa = ism.load %SA[%c0] : memref<?xf32> -> tensor<1xf32>
  %sb = ism.load %SB[%c0] : memref<?xf32> -> tensor<1xf32>
  %s = arith.mulf %sa, %sb : tensor<1xf32>
  %s2 = ism.expand_dims %s axis = 0 : tensor<1xf32> -> tensor<1x1xf32>
  %sc = ism.broadcast %s2 : tensor<1x1xf32> -> tensor<128x256xf32>
  %r = arith.mulf %acc, %sc : tensor<128x256xf32>
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
  %sa1 = arith.cmpi sge, %SAN, %c1 : index
  %sb1 = arith.cmpi sge, %SBN, %c1 : index
  %scales = arith.andi %sa1, %sb1 : i1
  ism.assert %scales, "the scales hold {0} and {1} elements; each needs one" (%SAN, %SBN) : index, index
  %gm = arith.ceildivui %M, %bm : index
  %gn = arith.ceildivui %N, %bn : index
  ism.launch @gemm grid(%gm, %gn) (%A, %B, %C, %SA, %SB)
      : (memref<?x?xf8E4M3FN>, memref<?x?xf8E4M3FN>, memref<?x?xbf16>, memref<?xf32>, memref<?xf32>)
  return
}
