// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu | FileCheck %s
// RUN: sed 's/num_warps = 4 : i32/num_warps = 4 : i32, cluster_m = 2 : i32/' %s | ism-opt --ism-assign-layouts --ism-accelerate-dot --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu | FileCheck %s --check-prefix=PAIR

// Swap-AB (BLOCK_M = 16): the warp-specialized kernel computes C^T = B^T
// A^T. The dot's A is B's [64, 128] tile, two TMA boxes of 64 columns, read
// MN-major (the instruction transposes it); its B is A's [16, 64] tile, one
// box of 16 rows, read K-major. A stage is 16 KiB + 2 KiB.
// CHECK: gpu.func @gemm({{.*}}) kernel attributes {{{.*}}ism.tma = [array<i64: 1, 64, 64>, array<i64: 0, 16, 64>]
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c18432_i32
// CHECK-COUNT-3: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// Descriptors: the MN-major A's boxes a box (64 rows of 128 bytes) apart,
// its 8-row groups 1024 bytes apart (LBO 8192, SBO 1024); the K-major B's
// 8-row groups 1024 bytes apart (LBO 16, unused). 128-byte swizzle.
// CHECK: nvvm.setmaxregister  increase 232
// CHECK-DAG: %[[KMAJOR:.*]] = arith.constant 4611686293305360384 : i64
// CHECK-DAG: %[[MNMAJOR:.*]] = arith.constant 4611686293338849280 : i64
// CHECK-DAG: %[[DESCB:.*]] = arith.ori %{{.*}}, %[[KMAJOR]] : i64
// CHECK-DAG: %[[DESCA:.*]] = arith.ori %{{.*}}, %[[MNMAJOR]] : i64
// Two m64n16k16 per k16 step (the warpgroup's two 64-row pieces of C^T's
// 128 rows), A transposed ("col"), B K-major ("col").
// CHECK: nvvm.wgmma.mma_async %[[DESCA]], %[[DESCB]], %{{.*}}, <m = 64, n = 16, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <col>]
// CHECK-COUNT-7: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 16, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <col>]
// CHECK-NOT: nvvm.wgmma.mma_async

// In a 2x1 cluster the programs (2u, y) and (2u + 1, y) share the program's
// B, which is the swapped dot's A: each CTA loads half of the rows of both
// its boxes and multicasts them; A's tile (the dot's B) is its own.
// PAIR: ism.tma = [array<i64: 1, 32, 64>, array<i64: 0, 16, 64>]
// PAIR: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c18432_i32
// PAIR-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} multicast_mask = %c3_i16
// PAIR-NOT: multicast_mask
// PAIR: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
ism.kernel @gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 4 : i32, num_stages = 4 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pm, %c16 : index
  %n0 = arith.muli %pn, %c128 : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<16x128xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc = %zero) -> (tensor<16x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<16x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<16x64xbf16> * tensor<64x128xbf16> -> tensor<16x128xf32>
    scf.yield %d : tensor<16x128xf32>
  }
  %out = arith.truncf %acc : tensor<16x128xf32> to tensor<16x128xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<16x128xbf16> -> memref<?x?xbf16>
  ism.return
}
