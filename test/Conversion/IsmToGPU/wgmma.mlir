// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu | FileCheck %s

// The warp-specialized wgmma kernel: 8 consumer warps plus a producer
// warpgroup (384 threads), the TMA descriptor addresses and the logical
// grid as hidden parameters, a 4-stage ring of 48 KiB stages (plus the
// alignment pad and the mbarriers), and a persistent launch. The register
// count at entry is fixed (.maxnreg 168: 65536 over 384 threads), or ptxas
// ignores setmaxnreg.
// CHECK-LABEL: func.func @main
// CHECK: arith.muli
// CHECK: %[[TOTAL:.*]] = arith.muli
// CHECK: gpu.launch_func  @ism_kernels::@gemm blocks in (%[[TOTAL]], {{.*}}) threads in (%c384, {{.*}}) dynamic_shared_memory_size %c197696_i32 args({{.*}}, %{{.*}} : i64, %{{.*}} : i64, %{{.*}} : i32, %{{.*}} : i32, %{{.*}} : i32)
// CHECK: gpu.func @gemm({{.*}}, %[[DA:.*]]: i64, %[[DB:.*]]: i64, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32) kernel attributes {{{.*}}ism.num_threads = 384 : i32, ism.persistent, ism.shared_memory_bytes = 197696 : i32, ism.tma = [array<i64: 0, 128, 64>, array<i64: 1, 64, 64>], known_block_size = array<i32: 384, 1, 1>, nvvm.maxnreg = 168 : i32}
// Thread 0 prefetches the TMA descriptors (when there are any) and
// initialises a full (1 arrival) and an empty (8 warps) mbarrier per stage.
// CHECK: %[[HASA:.*]] = arith.cmpi ne, %[[DA]], %c0_i64
// CHECK-NEXT: scf.if %[[HASA]] {
// CHECK-NEXT: %[[PA:.*]] = llvm.inttoptr %[[DA]] : i64 to !llvm.ptr
// CHECK-NEXT: nvvm.prefetch tensormap, %[[PA]] : !llvm.ptr
// CHECK: %[[HASB:.*]] = arith.cmpi ne, %[[DB]], %c0_i64
// CHECK-NEXT: scf.if %[[HASB]] {
// CHECK-NEXT: %[[PB:.*]] = llvm.inttoptr %[[DB]] : i64 to !llvm.ptr
// CHECK-NEXT: nvvm.prefetch tensormap, %[[PB]] : !llvm.ptr
// CHECK-COUNT-4: nvvm.mbarrier.init %{{.*}}, %c1_i32{{.*}}
// CHECK: nvvm.barrier0
// The producer warpgroup gives up registers and, on the TMA path, has one
// thread wait for a free stage and load A (one box) and B (four boxes).
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c49152_i32
// CHECK-COUNT-5: nvvm.cp.async.bulk.tensor.shared.cluster.global
// Without descriptors all 128 producer threads copy, fence the async proxy
// and sync on named barrier 2 before one arrives.
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id = %c2_i32 number_of_threads = %c128_i32
// CHECK: nvvm.mbarrier.arrive
// The consumers take the registers, wait for a full stage and issue four
// m64n256k16 wgmma (BLOCK_K = 64) per warpgroup, one step in flight.
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 256, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.mbarrier.arrive
// The last group is waited for with the accumulator's 128 registers tied
// through the wait, so that nothing reads them before it.
// CHECK: llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 0;", "=f,{{(=f,)+}}0,1,{{.*}},127" {{.*}} -> !llvm.struct<({{(f32, )+}}f32)>
ism.kernel @gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32, group_size = 8 : i32} {
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
