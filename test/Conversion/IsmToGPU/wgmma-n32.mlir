// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu | FileCheck %s

// A 64x32 tile (the skinny shapes' small tiles: N = 4096 is 128 of them
// without splitting K): B's 32 columns are one box of 64-byte rows, which
// TMA and wgmma take with the 64-byte swizzle. The TMA facts say the box
// (64 rows of 32 columns; the runtime swizzles a box's rows by their
// width), a stage is 8 KiB of A and 4 KiB of B, 16 of them fit, and each
// step issues four m64n32k16 whose B descriptor has the 64-byte layout
// (bits 62-63 = 2), LBO 4096 (64 rows of 64 bytes, one box) and SBO 512 (8
// rows of 64 bytes): 0x8000002001000000.
// CHECK-LABEL: func.func @main
// CHECK: gpu.launch_func  @ism_kernels::@gemm {{.*}} threads in (%c256, {{.*}}) dynamic_shared_memory_size %c197888_i32
// CHECK: gpu.func @gemm({{.*}}ism.tma = [array<i64: 0, 64, 64>, array<i64: 1, 64, 32>]
// CHECK-COUNT-16: nvvm.mbarrier.init %{{.*}}, %c1_i32{{.*}}
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c12288_i32
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK-NOT: nvvm.cp.async.bulk.tensor.shared.cluster.global
// The element-copy fallback places A's elements with the 128-byte swizzle
// (the 16-byte chunk XOR row % 8) and B's with the 64-byte one (chunk XOR
// (row / 2) % 4, 32 columns a box).
// CHECK: %[[AROW:.*]] = arith.remui %{{.*}}, %c8{{.*}} : index
// CHECK: arith.xori %{{.*}}, %[[AROW]] : index
// CHECK: arith.divui %{{.*}}, %c32{{.*}} : index
// CHECK: %[[HALF:.*]] = arith.divui %{{.*}}, %c2{{.*}} : index
// CHECK: %[[BROW:.*]] = arith.remui %[[HALF]], %c4 : index
// CHECK: arith.xori %{{.*}}, %[[BROW]] : index
// CHECK: nvvm.fence.proxy
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: arith.constant -9223371899399045120 : i64
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 32, k = 16>
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned

ism.kernel @gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 4 : i32, group_size = 8 : i32, num_stages = 16 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 64 : index
  %bn = arith.constant 32 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x32xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<64x32xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x32xbf16>
    %d = ism.dot %a, %b, %acc : tensor<64x64xbf16> * tensor<64x32xbf16> -> tensor<64x32xf32>
    scf.yield %d : tensor<64x32xf32>
  }
  %out = arith.truncf %acc : tensor<64x32xf32> to tensor<64x32xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<64x32xbf16> -> memref<?x?xbf16>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 64 : index
  %bn = arith.constant 32 : index
  %M = memref.dim %A, %c0 : memref<?x?xbf16>
  %N = memref.dim %B, %c1 : memref<?x?xbf16>
  %gm = arith.ceildivui %M, %bm : index
  %gn = arith.ceildivui %N, %bn : index
  ism.launch @gemm grid(%gm, %gn) (%A, %B, %C) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
  return
}
