// RUN: sed 's/%C: memref<?x?xbf16>) attributes {num_warps = 8 : i32}/%C: memref<?x?xbf16>) attributes {num_warps = 8 : i32, cluster_m = 2 : i32}/' %S/warp-specialize.mlir \
// RUN:   | ism-opt --ism-assign-layouts --ism-accelerate-dot --ism-pipeline --ism-coschedule | FileCheck %s --check-prefix=PARTITION
// RUN: sed 's/%C: memref<?x?xbf16>) attributes {num_warps = 8 : i32}/%C: memref<?x?xbf16>) attributes {num_warps = 8 : i32, cluster_m = 2 : i32}/' %S/warp-specialize.mlir \
// RUN:   | ism-opt --ism-assign-layouts --ism-accelerate-dot --ism-pipeline --ism-coschedule --convert-ism-to-gpu | FileCheck %s

// The fused kernel of warp-specialize.mlir with its GEMM in a 2x1 cluster:
// the wgmma partition keeps the cluster (the row kernel's copies have none).
// PARTITION: #ism.partition<{warpBase = 0, numWarps = 12, {{.*}}groupSize = 8, clusterM = 2}>
// PARTITION-NOT: clusterM
// PARTITION: ism.return

// The fused kernel is launched in clusters of two; before any partition
// runs, every thread outside the GEMM's warps 0-11 arrives once on the
// cluster barrier, which the GEMM waits on after initialising its mbarriers
// (and again before it leaves).
// CHECK: gpu.func @matmul__rownorm({{.*}}nvvm.cluster_dim = array<i32: 2, 1, 1>
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[BELOW:.*]] = arith.cmpi ult, %[[TID]], %c0
// CHECK: %[[ABOVE:.*]] = arith.cmpi uge, %[[TID]], %c384
// CHECK: %[[OUTSIDE:.*]] = arith.ori %[[BELOW]], %[[ABOVE]]
// CHECK: scf.if %[[OUTSIDE]] {
// CHECK-NEXT: nvvm.cluster.arrive.relaxed
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK: multicast_mask = %c3_i16
// CHECK: nvvm.cluster.arrive
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-NOT: nvvm.cluster.arrive
// CHECK: gpu.return
