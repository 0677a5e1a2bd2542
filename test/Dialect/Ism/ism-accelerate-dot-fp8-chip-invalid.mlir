// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot=chip=sm_80 -verify-diagnostics

// sm_80 has no wgmma, and nothing else multiplies 8-bit floats.
ism.kernel @gemm(%A: memref<?x?xf8E4M3FN>, %B: memref<?x?xf8E4M3FN>, %C: memref<?x?xbf16>, %SA: memref<?xf32>,
                 %SB: memref<?xf32>) attributes {num_warps = 8 : i32, group_size = 8 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 128 : index
  %bk = arith.constant 128 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xf8E4M3FN>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<128x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %w = ism.load %B[%n0, %k] : memref<?x?xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %b = ism.trans %w order = [1, 0] : tensor<128x128xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    // expected-error @+1 {{8-bit float products run on wgmma only: chip 'sm_80' has no wgmma (sm_90a)}}
    %d = ism.dot %a, %b, %acc : tensor<128x128xf8E4M3FN> * tensor<128x128xf8E4M3FN> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  // The per-tensor scales, applied once to the f32 accumulator.
  %sa = ism.load %SA[%c0] : memref<?xf32> -> tensor<1xf32>
  %sb = ism.load %SB[%c0] : memref<?xf32> -> tensor<1xf32>
  %s = arith.mulf %sa, %sb : tensor<1xf32>
  %s2 = ism.expand_dims %s axis = 0 : tensor<1xf32> -> tensor<1x1xf32>
  %sc = ism.broadcast %s2 : tensor<1x1xf32> -> tensor<128x128xf32>
  %r = arith.mulf %acc, %sc : tensor<128x128xf32>
  %o = arith.truncf %r : tensor<128x128xf32> to tensor<128x128xbf16>
  ism.store %o, %C[%m0, %n0] : tensor<128x128xbf16> -> memref<?x?xbf16>
  ism.return
}
