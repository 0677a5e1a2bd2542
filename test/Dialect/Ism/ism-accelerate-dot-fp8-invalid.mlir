// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot -split-input-file -verify-diagnostics

// 8-bit products run on wgmma only, which reads 8-bit A and B K-major: a B
// tile loaded as [K, N] (MN-major) is an error naming the layout to use.
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
    %b = ism.load %B[%k, %n0] : memref<?x?xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    // expected-error @+1 {{8-bit float products run on wgmma only: wgmma reads 8-bit A and B K-major only: load A as an [M, K] tile and B as an [N, K] tile, the dot's B its ism.trans}}
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

// -----

// BLOCK_K = 64 is 64-byte rows of 8-bit elements; wgmma's swizzled rows
// are 128 bytes.
ism.kernel @gemm(%A: memref<?x?xf8E4M3FN>, %B: memref<?x?xf8E4M3FN>, %C: memref<?x?xbf16>, %SA: memref<?xf32>,
                 %SB: memref<?xf32>) attributes {num_warps = 8 : i32, group_size = 8 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 128 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xf8E4M3FN>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<128x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xf8E4M3FN> -> tensor<128x64xf8E4M3FN>
    %w = ism.load %B[%n0, %k] : memref<?x?xf8E4M3FN> -> tensor<128x64xf8E4M3FN>
    %b = ism.trans %w order = [1, 0] : tensor<128x64xf8E4M3FN> -> tensor<64x128xf8E4M3FN>
    // expected-error @+1 {{8-bit float products run on wgmma only: the A tile's rows must be 128 bytes (BLOCK_K = 128 for 8-bit inputs)}}
    %d = ism.dot %a, %b, %acc : tensor<128x64xf8E4M3FN> * tensor<64x128xf8E4M3FN> -> tensor<128x128xf32>
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

// -----

// An 8-bit product outside a K loop has no lowering.
ism.kernel @product(%A: memref<?x?xf8E4M3FN>, %B: memref<?x?xf8E4M3FN>, %C: memref<?x?xf32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %a = ism.load %A[%c0, %c0] : memref<?x?xf8E4M3FN> -> tensor<64x128xf8E4M3FN>
  %b = ism.load %B[%c0, %c0] : memref<?x?xf8E4M3FN> -> tensor<128x64xf8E4M3FN>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  // expected-error @+1 {{8-bit float products run on wgmma only, in a K loop whose A and B tiles are loaded in it (A as [M, K], B as [N, K] and transposed)}}
  %d = ism.dot %a, %b, %zero : tensor<64x128xf8E4M3FN> * tensor<128x64xf8E4M3FN> -> tensor<64x64xf32>
  ism.store %d, %C[%c0, %c0] : tensor<64x64xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// A block-scaled loop scales C, not C^T: it is not swapped.
ism.kernel @gemm(%A: memref<?x?xf8E4M3FN>, %B: memref<?x?xf8E4M3FN>, %C: memref<?x?xbf16>, %SA: memref<?x?xf32>,
                 %SB: memref<?x?xf32>) attributes {num_warps = 4 : i32, group_size = 8 : i32, swap_ab = 1 : i32} {
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
    // expected-error @+1 {{swap_ab = 1: a K loop that scales each step's product before adding it (block scales) is not swapped}}
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
