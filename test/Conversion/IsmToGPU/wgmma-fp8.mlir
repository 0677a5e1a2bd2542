// RUN: ism-opt %s -split-input-file --ism-assign-layouts --ism-accelerate-dot | FileCheck %s --check-prefix=LAYOUT
// RUN: ism-opt %s -split-input-file --ism-assign-layouts --ism-accelerate-dot --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu | FileCheck %s

// FP8 (e4m3 x e5m2, f32 accumulator): A loaded as [128, 128] and B as
// [N, K] = [128, 128], transposed, both read K-major (wgmma has no
// transpose for 8-bit operands). A K step is 128 bytes of each row, one
// TMA box of 128 rows x 128 bytes per tile (32 KiB a stage), and four
// m64n128k32 instructions a warpgroup (32 bytes of K each) with the same
// K-major descriptors as 16-bit tiles (LBO 16, SBO 1024, 128-byte swizzle).
// LAYOUT: #ism.mma<{version = 3, warpsPerCTA = [8, 1], instrShape = [16, 128, 32]}>
// LAYOUT-LABEL: ism.kernel @gemm
// CHECK-LABEL: gpu.func @gemm
// CHECK-SAME: ism.tma = [array<i64: 0, 128, 128>, array<i64: 1, 128, 128>]
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: %[[KMAJOR:.*]] = arith.constant 4611686293305360384 : i64
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 32>, D[<f32>, <one>], A[<e4m3>, <one>, <row>], B[<e5m2>, <one>, <col>]
// CHECK-NOT: nvvm.wgmma.mma_async
// The scales: one-element tiles in the accumulator's layout, which every
// thread holds whole (one f32 each, no trip through shared memory), then
// broadcast over its 64 accumulator registers.
// CHECK: memref.extract_aligned_pointer_as_index %arg3
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> vector<1xf32>
// CHECK: memref.extract_aligned_pointer_as_index %arg4
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> vector<1xf32>
// CHECK-NOT: !llvm.ptr<3>
// CHECK: vector.shuffle %{{.*}} [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] : vector<1xf32>, vector<1xf32>
// CHECK-NOT: !llvm.ptr<3>
// CHECK: memref.extract_aligned_pointer_as_index %arg2
ism.kernel @gemm(%A: memref<?x?xf8E4M3FN>, %B: memref<?x?xf8E5M2>, %C: memref<?x?xf32>, %SA: memref<?xf32>,
                 %SB: memref<?xf32>) attributes {num_warps = 8 : i32, group_size = 8 : i32, num_stages = 4 : i32} {
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
    %w = ism.load %B[%n0, %k] : memref<?x?xf8E5M2> -> tensor<128x128xf8E5M2>
    %b = ism.trans %w order = [1, 0] : tensor<128x128xf8E5M2> -> tensor<128x128xf8E5M2>
    %d = ism.dot %a, %b, %acc : tensor<128x128xf8E4M3FN> * tensor<128x128xf8E5M2> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  // The per-tensor scales, applied once to the f32 accumulator.
  %sa = ism.load %SA[%c0] : memref<?xf32> -> tensor<1xf32>
  %sb = ism.load %SB[%c0] : memref<?xf32> -> tensor<1xf32>
  %s = arith.mulf %sa, %sb : tensor<1xf32>
  %s2 = ism.expand_dims %s axis = 0 : tensor<1xf32> -> tensor<1x1xf32>
  %sc = ism.broadcast %s2 : tensor<1x1xf32> -> tensor<128x128xf32>
  %r = arith.mulf %acc, %sc : tensor<128x128xf32>
  ism.store %r, %C[%m0, %n0] : tensor<128x128xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// BLOCK_M = 16 swaps the product (C^T = B^T A^T): B's [1024-wide N] tile
// is the instruction's A, A's 16 rows its N; both still K-major. A stage is
// 16 KiB of B and 2 KiB of A; two m64n16k32 a warpgroup per 32 bytes of K.
// LAYOUT: ism.swap_ab
// CHECK-LABEL: gpu.func @gemm
// CHECK-SAME: ism.tma = [array<i64: 1, 128, 128>, array<i64: 0, 16, 128>]
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c18432_i32
// CHECK-COUNT-8: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 16, k = 32>, D[<f32>, <one>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK-NOT: nvvm.wgmma.mma_async
ism.kernel @gemm(%A: memref<?x?xf8E4M3FN>, %B: memref<?x?xf8E4M3FN>, %C: memref<?x?xbf16>, %SA: memref<?xf32>,
                 %SB: memref<?xf32>) attributes {num_warps = 4 : i32, group_size = 8 : i32, num_stages = 4 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 16 : index
  %bn = arith.constant 128 : index
  %bk = arith.constant 128 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xf8E4M3FN>
  %zero = arith.constant dense<0.0> : tensor<16x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<16x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xf8E4M3FN> -> tensor<16x128xf8E4M3FN>
    %w = ism.load %B[%n0, %k] : memref<?x?xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %b = ism.trans %w order = [1, 0] : tensor<128x128xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %d = ism.dot %a, %b, %acc : tensor<16x128xf8E4M3FN> * tensor<128x128xf8E4M3FN> -> tensor<16x128xf32>
    scf.yield %d : tensor<16x128xf32>
  }
  // The per-tensor scales, applied once to the f32 accumulator.
  %sa = ism.load %SA[%c0] : memref<?xf32> -> tensor<1xf32>
  %sb = ism.load %SB[%c0] : memref<?xf32> -> tensor<1xf32>
  %s = arith.mulf %sa, %sb : tensor<1xf32>
  %s2 = ism.expand_dims %s axis = 0 : tensor<1xf32> -> tensor<1x1xf32>
  %sc = ism.broadcast %s2 : tensor<1x1xf32> -> tensor<16x128xf32>
  %r = arith.mulf %acc, %sc : tensor<16x128xf32>
  %o = arith.truncf %r : tensor<16x128xf32> to tensor<16x128xbf16>
  ism.store %o, %C[%m0, %n0] : tensor<16x128xbf16> -> memref<?x?xbf16>
  ism.return
}
