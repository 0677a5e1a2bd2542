// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu | FileCheck %s
// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot --ism-pipeline | FileCheck %s --check-prefix=PIPELINE

// tma_store = 1: the epilogue's store of the 64x128 accumulator tile goes
// through shared memory and TMA. ism-pipeline records it; the kernel gets a
// third TMA descriptor (C, boxes of 16 rows x 64 columns, 128-byte rows)
// as a hidden parameter, which the host function passes as 0 (ism-run and
// the Python launcher make it). Shared memory: four 24 KiB stages, the
// barriers, then 1024-byte aligned two 2 KiB staging boxes for each of
// the 4 consumer warps (114688 = 4 x 24576 + 16384, + 1024 slack).
// PIPELINE: ism.persistent = {{{.*}}tma_store = 1 : i64}
// CHECK-LABEL: func.func @main
// CHECK: gpu.launch_func  @ism_kernels::@gemm {{.*}} dynamic_shared_memory_size %c116736_i32 args(%{{.*}} : memref<?x?xbf16>, %{{.*}} : memref<?x?xbf16>, %{{.*}} : memref<?x?xbf16>, %c0_i64 : i64, %c0_i64 : i64, %c0_i64 : i64, %{{.*}} : i32, %{{.*}} : i32, %{{.*}} : i32)
// CHECK: gpu.func @gemm(%{{.*}}: memref<?x?xbf16>, %{{.*}}: memref<?x?xbf16>, %{{.*}}: memref<?x?xbf16>, %{{.*}}: i64, %{{.*}}: i64, %[[DESC:.*]]: i64, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32) kernel attributes {{{.*}}ism.tma = [array<i64: 0, 64, 64>, array<i64: 1, 64, 64>, array<i64: 2, 16, 64>]
// The third descriptor is prefetched with the others.
// CHECK-COUNT-3: nvvm.prefetch tensormap
// Each warp holds one 16-row stripe of the tile, two 64-column boxes.
// With a descriptor: lane 0 waits until the previous tile's stores have
// read the boxes, then for each box the warp writes 16-byte chunks (after
// the quad transpose), fences them into TMA's proxy and lane 0 stores the
// box and commits the group.
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: %[[HAVE:.*]] = arith.cmpi ne, %[[DESC]], %c0_i64{{.*}} : i64
// CHECK-NEXT: scf.if %[[HAVE]] {
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: nvvm.bar.warp.sync
// CHECK-COUNT-4: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.bar.warp.sync
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr, <3>
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK-COUNT-4: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK-NOT: nvvm.cp.async.bulk.tensor.global.shared.cta
// Without one (rows TMA cannot describe), the direct stores.
// CHECK: } else {
// CHECK: llvm.store {{.*}} : vector<4xi32>, !llvm.ptr
// The stores are complete before the consumers leave.
// CHECK: nvvm.cp.async.bulk.wait_group 0
// CHECK-NOT: read
// CHECK: gpu.return
ism.kernel @gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 4 : i32, group_size = 8 : i32, num_stages = 4 : i32, tma_store = 1 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 64 : index
  %bn = arith.constant 128 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<64x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<64x64xbf16> * tensor<64x128xbf16> -> tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  %out = arith.truncf %acc : tensor<64x128xf32> to tensor<64x128xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<64x128xbf16> -> memref<?x?xbf16>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 64 : index
  %bn = arith.constant 128 : index
  %M = memref.dim %A, %c0 : memref<?x?xbf16>
  %N = memref.dim %B, %c1 : memref<?x?xbf16>
  %gm = arith.ceildivui %M, %bm : index
  %gn = arith.ceildivui %N, %bn : index
  ism.launch @gemm grid(%gm, %gn) (%A, %B, %C) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
  return
}

