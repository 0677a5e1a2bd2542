// Tiled matrix product in bf16 with fp32 accumulation: C = A x B, with A
// M x K, B K x N and C M x N. Each program computes one 128 x 128 block of C,
// stepping through K in 64-wide slices. Blocks on the edges are partial: the
// loads read zeros past the matrices' ends (adding nothing to the product)
// and the store skips them.

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

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %block = arith.constant 128 : index
  %M = memref.dim %A, %c0 : memref<?x?xbf16>
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %KB = memref.dim %B, %c0 : memref<?x?xbf16>
  %N = memref.dim %B, %c1 : memref<?x?xbf16>
  %CM = memref.dim %C, %c0 : memref<?x?xbf16>
  %CN = memref.dim %C, %c1 : memref<?x?xbf16>
  %inner = arith.cmpi eq, %K, %KB : index
  ism.assert %inner, "A is {0}x{1} and B is {2}x{3}: inner dimensions differ"
      (%M, %K, %KB, %N) : index, index, index, index
  %cm = arith.cmpi eq, %CM, %M : index
  %cn = arith.cmpi eq, %CN, %N : index
  %cshape = arith.andi %cm, %cn : i1
  ism.assert %cshape, "C is {0}x{1} but A x B is {2}x{3}" (%CM, %CN, %M, %N)
      : index, index, index, index
  %gm = arith.ceildivui %M, %block : index
  %gn = arith.ceildivui %N, %block : index
  ism.launch @matmul grid(%gm, %gn) (%A, %B, %C)
      : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
  return
}
