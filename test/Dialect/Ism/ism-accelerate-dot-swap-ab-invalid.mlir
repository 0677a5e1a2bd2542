// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot -split-input-file -verify-diagnostics
// RUN: not ism-opt %s --ism-assign-layouts --ism-accelerate-dot=chip=sm_80 -split-input-file 2>&1 | FileCheck %s --check-prefix=SM80

// On a chip without wgmma the value is still checked, and swap_ab = 1 is an
// error rather than ignored.
// SM80: error: 'ism.kernel' op swap_ab = 2: 0 (never swap)
// SM80: error: 'ism.kernel' op swap_ab = 1 swaps wgmma products, which chip 'sm_80' does not have (sm_90a)

// expected-error @+1 {{swap_ab = 2: 0 (never swap), 1 (compute C^T = B^T A^T on wgmma), or no attribute (swap when only the swapped product fits wgmma)}}
ism.kernel @bad_value(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xf32>) attributes {num_warps = 4 : i32, swap_ab = 2 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant dense<0.0> : tensor<64x128xf32>
  %acc = scf.for %k = %c0 to %c1024 step %c64 iter_args(%acc = %zero) -> (tensor<64x128xf32>) {
    %a = ism.load %A[%c0, %k] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %b = ism.load %B[%k, %c0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<64x64xbf16> * tensor<64x128xbf16> -> tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  ism.store %acc, %C[%c0, %c0] : tensor<64x128xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// Swapped, BLOCK_N = 32 would be the instruction's M, which is 64 rows.
ism.kernel @cannot_swap(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xf32>) attributes {num_warps = 4 : i32, swap_ab = 1 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant dense<0.0> : tensor<64x32xf32>
  %acc = scf.for %k = %c0 to %c1024 step %c64 iter_args(%acc = %zero) -> (tensor<64x32xf32>) {
    %a = ism.load %A[%c0, %k] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %b = ism.load %B[%k, %c0] : memref<?x?xbf16> -> tensor<64x32xbf16>
    // expected-error @+1 {{swap_ab = 1: the swapped product C^T = B^T A^T (32x64) cannot use wgmma: BLOCK_M must be a multiple of 64}}
    %d = ism.dot %a, %b, %acc : tensor<64x64xbf16> * tensor<64x32xbf16> -> tensor<64x32xf32>
    scf.yield %d : tensor<64x32xf32>
  }
  ism.store %acc, %C[%c0, %c0] : tensor<64x32xf32> -> memref<?x?xf32>
  ism.return
}
