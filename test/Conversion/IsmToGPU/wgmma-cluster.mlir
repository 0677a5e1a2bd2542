// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu | FileCheck %s
// RUN: sed 's/cluster_m = 2 : i32/cluster_n = 2 : i32/' %s | ism-opt --ism-assign-layouts --ism-accelerate-dot --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu | FileCheck %s --check-prefix=SHAREA

// A 2x1 cluster: CTAs 2c and 2c + 1 compute programs (2u, y) and (2u + 1, y),
// which share their B tile. Each loads its own A and half of B's 64 rows
// (TMA boxes of 32 rows), multicast to both; the grid of gpu.launch_func is
// a whole number of clusters.
// CHECK-LABEL: func.func @main
// CHECK: arith.muli
// CHECK: %[[TOTAL:.*]] = arith.muli
// CHECK: %[[PAIRS:.*]] = arith.ceildivui %[[TOTAL]], %c2
// CHECK: %[[GRID:.*]] = arith.muli %[[PAIRS]], %c2
// CHECK: gpu.launch_func  @ism_kernels::@gemm blocks in (%[[GRID]],
// CHECK: gpu.func @gemm({{.*}}) kernel attributes {{{.*}}ism.tma = [array<i64: 0, 128, 64>, array<i64: 1, 32, 64>]{{.*}}nvvm.cluster_dim = array<i32: 2, 1, 1>, nvvm.maxnreg = 168 : i32}
// A stage is free when the 8 consumer warps of both CTAs let it go; the
// barriers are initialised for the cluster before either CTA multicasts.
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c16_i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.cluster.arrive.relaxed
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-NEXT: %[[RANK:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
// The producer walks pairs of programs along x: ceil(gx / 2) by gy.
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: arith.ceildivui %{{.*}}, %c2 : index
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c49152_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK-COUNT-4: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} multicast_mask = %c3_i16{{.*}}
// The consumers free each stage in both CTAs.
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: %[[LOCAL:.*]] = nvvm.mapa %[[BAR:.*]], %c0_i32
// CHECK-NEXT: nvvm.mbarrier.arrive %[[LOCAL]] : !llvm.ptr<7>
// CHECK: %[[REMOTE:.*]] = nvvm.mapa %[[BAR]], %c1_i32
// CHECK-NEXT: nvvm.mbarrier.arrive %[[REMOTE]] : !llvm.ptr<7>
// Only programs of the grid store (an odd gx leaves the last pair one short).
// The last group is waited for with the accumulator's 128 registers tied
// through the wait, so that nothing reads them before it.
// CHECK: llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 0;", "=f,{{(=f,)+}}0,1,{{.*}},127" {{.*}} -> !llvm.struct<({{(f32, )+}}f32)>
// CHECK: nvvm.mapa
// CHECK: nvvm.mapa
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: arith.truncf
// No CTA leaves while its partner can still free a stage in it.
// CHECK: nvvm.cluster.arrive.relaxed
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-NEXT: gpu.return

// A 1x2 cluster shares A: its 128 rows load in halves of 64, multicast;
// B's four boxes are each CTA's own.
// SHAREA: ism.tma = [array<i64: 0, 64, 64>, array<i64: 1, 64, 64>]{{.*}}nvvm.cluster_dim = array<i32: 2, 1, 1>
// SHAREA: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} multicast_mask = %c3_i16{{.*}}
// SHAREA-COUNT-4: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
ism.kernel @gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32, group_size = 8 : i32, cluster_m = 2 : i32} {
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
  }
  %out = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<128x256xbf16> -> memref<?x?xbf16>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 256 : index
  %M = memref.dim %A, %c0 : memref<?x?xbf16>
  %N = memref.dim %B, %c1 : memref<?x?xbf16>
  %gm = arith.ceildivui %M, %bm : index
  %gn = arith.ceildivui %N, %bn : index
  ism.launch @gemm grid(%gm, %gn) (%A, %B, %C) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
  return
}
