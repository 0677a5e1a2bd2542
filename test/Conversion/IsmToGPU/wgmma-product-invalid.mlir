// RUN: ism-opt %s --split-input-file --convert-ism-to-gpu -verify-diagnostics

// A wgmma product outside a K loop takes whole rows per warp: its
// accumulator layout must be #ism.mma<3, [num_warps, 1]> (ism-accelerate-dot
// gives it no other; hand-written IR may).
#blocked = #ism.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ism.mma<{version = 3, warpsPerCTA = [2, 2], instrShape = [16, 32, 16]}>
ism.kernel @warps(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xf32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %a = ism.load %A[%c0, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16, #blocked>
  %b = ism.load %B[%c0, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16, #blocked>
  %z = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
  // expected-error @+1 {{a wgmma product outside a K loop needs the layout #ism.mma<3, [num_warps, 1]> (4 warps), got #ism.mma<{version = 3, warpsPerCTA = [2, 2], instrShape = [16, 32, 16]}>}}
  %d = ism.dot %a, %b, %z : tensor<64x64xbf16, #blocked> * tensor<64x64xbf16, #blocked> -> tensor<64x64xf32, #mma>
  ism.store %d, %C[%c0, %c0] : tensor<64x64xf32, #mma> -> memref<?x?xf32>
  ism.return
}

// -----

// A product whose K is not a multiple of 64: wgmma reads its operands from
// 128-byte swizzled rows.
#blocked = #ism.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#mma = #ism.mma<{version = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
ism.kernel @narrow(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xf32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %a = ism.load %A[%c0, %c0] : memref<?x?xbf16> -> tensor<64x32xbf16, #blocked>
  %b = ism.load %B[%c0, %c0] : memref<?x?xbf16> -> tensor<32x64xbf16, #blocked>
  %z = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
  // expected-error @+1 {{cannot run on wgmma: the product's K must be a multiple of 64 (128-byte rows)}}
  %d = ism.dot %a, %b, %z : tensor<64x32xbf16, #blocked> * tensor<32x64xbf16, #blocked> -> tensor<64x64xf32, #mma>
  ism.store %d, %C[%c0, %c0] : tensor<64x64xf32, #mma> -> memref<?x?xf32>
  ism.return
}
