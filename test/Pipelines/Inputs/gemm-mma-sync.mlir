// A GEMM that wgmma cannot take (two warps, 64-byte rows of the A tile)
// but mma.sync can, on sm_80 and on sm_90a: f16 inputs, f32 output,
// BLOCK 64x64x32.
ism.kernel @gemm_f16(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf32>) attributes {num_warps = 2 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 64 : index
  %bk = arith.constant 32 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bm : index
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xf16> -> tensor<64x32xf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xf16> -> tensor<32x64xf16>
    %d = ism.dot %a, %b, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  ism.store %acc, %C[%m0, %n0] : tensor<64x64xf32> -> memref<?x?xf32>
  ism.return
}

func.func @main(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 64 : index
  %M = memref.dim %A, %c0 : memref<?x?xf16>
  %N = memref.dim %B, %c1 : memref<?x?xf16>
  %gm = arith.ceildivui %M, %bm : index
  %gn = arith.ceildivui %N, %bm : index
  ism.launch @gemm_f16 grid(%gm, %gn) (%A, %B, %C) : (memref<?x?xf16>, memref<?x?xf16>, memref<?x?xf32>)
  return
}
