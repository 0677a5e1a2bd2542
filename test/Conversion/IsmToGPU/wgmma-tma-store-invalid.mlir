// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu -split-input-file -verify-diagnostics

// tma_store = 1 stores 16-bit accumulator tiles: an f32 output is not one.
ism.kernel @f32_out(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xf32>) attributes {num_warps = 8 : i32, tma_store = 1 : i32, num_stages = 3 : i32} {
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
  // expected-error @-5 {{tma_store = 1: the stored tile must have 16-bit elements, 64-column boxes and its warps along M only (each a whole 16-row stripe)}}
  }
  ism.store %acc, %C[%m0, %n0] : tensor<128x256xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// ... nor a kernel whose tile is stored masked.
ism.kernel @masked(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32, tma_store = 1 : i32, num_stages = 3 : i32} {
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
  // expected-error @-5 {{tma_store = 1: the store must be unmasked, into a memref the kernel receives}}
  }
  %out = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xbf16>
  %mask = arith.constant dense<true> : tensor<128x256xi1>
  ism.store %out, %C[%m0, %n0] mask %mask : tensor<128x256xbf16> -> memref<?x?xbf16>
  ism.return
}
