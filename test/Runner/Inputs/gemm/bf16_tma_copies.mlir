ism.kernel @gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32, group_size = 8 : i32, num_stages = 4 : i32, tma_store = 1 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 256 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<128x256xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x256xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x256xbf16> -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %out = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<128x256xbf16> -> memref<?x?xbf16>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 256 : index
  %M = memref.dim %A, %c0 : memref<?x?xbf16>
  %N = memref.dim %B, %c1 : memref<?x?xbf16>
  %gm = arith.ceildivui %M, %bm : index
  %gn = arith.ceildivui %N, %bn : index
  ism.launch @gemm grid(%gm, %gn) (%A, %B, %C) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
  return
}
