// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot=chip=sm_80 --ism-pipeline -split-input-file -verify-diagnostics

// A 128x256 f32 accumulator over 4 warps is 256 registers a thread, more
// than mma.sync leaves room for: the error says what to reduce.
ism.kernel @gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bk = arith.constant 64 : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<128x256xf32>) {
    %a = ism.load %A[%c0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %c0] : memref<?x?xbf16> -> tensor<64x256xbf16>
    // expected-error @+1 {{the 128x256 f32 accumulator needs 256 registers per thread with 4 warps, more than the 128 an mma.sync thread can give it; use more warps (num_warps) or a smaller BLOCK_M x BLOCK_N}}
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x256xbf16> -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %out = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xbf16>
  ism.store %out, %C[%c0, %c0] : tensor<128x256xbf16> -> memref<?x?xbf16>
  ism.return
}

// -----

// The cp.async pipeline needs a second stage to load into while the first
// is read.
ism.kernel @gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 4 : i32, num_stages = 1 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bk = arith.constant 32 : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
    %a = ism.load %A[%c0, %k] : memref<?x?xbf16> -> tensor<64x32xbf16>
    %b = ism.load %B[%k, %c0] : memref<?x?xbf16> -> tensor<32x64xbf16>
    // expected-error @+1 {{num_stages = 1: the cp.async pipeline of an mma.sync K loop needs at least 2 stages}}
    %d = ism.dot %a, %b, %acc : tensor<64x32xbf16> * tensor<32x64xbf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %out = arith.truncf %acc : tensor<64x64xf32> to tensor<64x64xbf16>
  ism.store %out, %C[%c0, %c0] : tensor<64x64xbf16> -> memref<?x?xbf16>
  ism.return
}
