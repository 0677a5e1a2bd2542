// RUN: ism-opt %s --split-input-file --ism-assign-layouts --ism-accelerate-dot=chip=sm_90a --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu | FileCheck %s

// The two warpgroups of a kernel whose ring a producer warpgroup fills take
// turns issuing their iteration's products (ping_pong, AsyncOperands.cpp:
// takeTurns) when the lowered iteration issues them together: here the
// loop computes this block's S and then the previous block's P V, and waits
// for neither before both are issued. Warpgroup g waits on named barrier
// 2 + g before its first wgmma.fence and, after its last commit, opens the
// turn of the other (barrier 2 + (g + 1) mod 2), 256 threads each. Before
// the loop the last warpgroup opens warpgroup 0's first turn; after it
// warpgroup 0 takes the turn left open.
// CHECK-LABEL: gpu.func @pipelined
// CHECK: {ism.ring_split}
// CHECK: %[[G0:.*]] = arith.divui %{{.*}}, %c128
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %[[G0]], %c1
// CHECK: scf.if %[[LAST]] {
// CHECK: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %c256_i32
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: %[[G:.*]] = arith.divui %{{.*}}, %c128
// CHECK: %[[GI:.*]] = arith.index_cast %[[G]] : index to i32
// CHECK: %[[MINE:.*]] = arith.addi %c2_i32{{.*}}, %[[GI]]
// CHECK: nvvm.barrier id = %[[MINE]] number_of_threads = %c256_i32
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK-NOT: llvm.inline_asm {{.*}}wgmma.wait_group
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: llvm.inline_asm {{.*}}wgmma.wait_group
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: %[[NEXT:.*]] = arith.remui %{{.*}}, %c2
// CHECK: %[[NI:.*]] = arith.index_cast %[[NEXT]] : index to i32
// CHECK: %[[THEIRS:.*]] = arith.addi %c2_i32{{.*}}, %[[NI]]
// CHECK-NEXT: nvvm.barrier.arrive id = %[[THEIRS]] number_of_threads = %c256_i32
// CHECK: wgmma.wait_group.sync.aligned 1
// CHECK: wgmma.wait_group.sync.aligned 0
// CHECK: scf.yield
// CHECK: %[[G1:.*]] = arith.divui %{{.*}}, %c128
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[G1]], %c0
// CHECK: scf.if %[[FIRST]] {
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c256_i32
ism.kernel @pipelined(%Q: memref<?x?x?xbf16>, %K: memref<?x?x?xbf16>, %V: memref<?x?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 8 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %bh = ism.program_id y : index
  %S = memref.dim %K, %c1 : memref<?x?x?xbf16>
  %q3 = ism.load %Q[%bh, %c0, %c0] : memref<?x?x?xbf16> -> tensor<1x128x64xbf16>
  %q = ism.reshape %q3 : tensor<1x128x64xbf16> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %zp = arith.constant dense<0.0> : tensor<128x64xbf16>
  %r:2 = scf.for %n = %c0 to %S step %c64 iter_args(%acc = %zero, %pp = %zp) -> (tensor<128x64xf32>, tensor<128x64xbf16>) {
    %k3 = ism.load %K[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %k = ism.reshape %k3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = ism.dot %q, %kt, %zero : tensor<128x64xbf16> * tensor<64x64xbf16> -> tensor<128x64xf32>
    %n_prev = arith.subi %n, %c64 : index
    %v3 = ism.load %V[%bh, %n_prev, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %v = ism.reshape %v3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %acc2 = ism.dot %pp, %v, %acc : tensor<128x64xbf16> * tensor<64x64xbf16> -> tensor<128x64xf32>
    %p = math.exp %s : tensor<128x64xf32>
    %p16 = arith.truncf %p : tensor<128x64xf32> to tensor<128x64xbf16>
    scf.yield %acc2, %p16 : tensor<128x64xf32>, tensor<128x64xbf16>
  }
  ism.store %r#0, %O[%c0, %c0] : tensor<128x64xf32> -> memref<?x?xf32>
  ism.return
}


// -----

// ping_pong = false: no turns.
// CHECK-LABEL: gpu.func @opted_out
// CHECK: {ism.ring_split}
// CHECK-NOT: nvvm.barrier.arrive
// CHECK: gpu.return
ism.kernel @opted_out(%Q: memref<?x?x?xbf16>, %K: memref<?x?x?xbf16>, %V: memref<?x?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 8 : i32, ping_pong = false} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %bh = ism.program_id y : index
  %S = memref.dim %K, %c1 : memref<?x?x?xbf16>
  %q3 = ism.load %Q[%bh, %c0, %c0] : memref<?x?x?xbf16> -> tensor<1x128x64xbf16>
  %q = ism.reshape %q3 : tensor<1x128x64xbf16> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %zp = arith.constant dense<0.0> : tensor<128x64xbf16>
  %r:2 = scf.for %n = %c0 to %S step %c64 iter_args(%acc = %zero, %pp = %zp) -> (tensor<128x64xf32>, tensor<128x64xbf16>) {
    %k3 = ism.load %K[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %k = ism.reshape %k3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = ism.dot %q, %kt, %zero : tensor<128x64xbf16> * tensor<64x64xbf16> -> tensor<128x64xf32>
    %n_prev = arith.subi %n, %c64 : index
    %v3 = ism.load %V[%bh, %n_prev, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %v = ism.reshape %v3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %acc2 = ism.dot %pp, %v, %acc : tensor<128x64xbf16> * tensor<64x64xbf16> -> tensor<128x64xf32>
    %p = math.exp %s : tensor<128x64xf32>
    %p16 = arith.truncf %p : tensor<128x64xf32> to tensor<128x64xbf16>
    scf.yield %acc2, %p16 : tensor<128x64xf32>, tensor<128x64xbf16>
  }
  ism.store %r#0, %O[%c0, %c0] : tensor<128x64xf32> -> memref<?x?xf32>
  ism.return
}


// -----

// An iteration that waits for its first product (S) before it issues the
// second (P V uses the softmax of S): a turn held across that wait would
// serialise the warpgroups, so they take none.
// CHECK-LABEL: gpu.func @serial
// CHECK: {ism.ring_split}
// CHECK-NOT: nvvm.barrier.arrive
// CHECK: gpu.return
ism.kernel @serial(%Q: memref<?x?x?xbf16>, %K: memref<?x?x?xbf16>, %V: memref<?x?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 8 : i32, ping_pong = true} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %bh = ism.program_id y : index
  %S = memref.dim %K, %c1 : memref<?x?x?xbf16>
  %q3 = ism.load %Q[%bh, %c0, %c0] : memref<?x?x?xbf16> -> tensor<1x128x64xbf16>
  %q = ism.reshape %q3 : tensor<1x128x64xbf16> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %r = scf.for %n = %c0 to %S step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32>) {
    %k3 = ism.load %K[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %k = ism.reshape %k3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = ism.dot %q, %kt, %zero : tensor<128x64xbf16> * tensor<64x64xbf16> -> tensor<128x64xf32>
    %p = math.exp %s : tensor<128x64xf32>
    %p16 = arith.truncf %p : tensor<128x64xf32> to tensor<128x64xbf16>
    %v3 = ism.load %V[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %v = ism.reshape %v3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %acc2 = ism.dot %p16, %v, %acc : tensor<128x64xbf16> * tensor<64x64xbf16> -> tensor<128x64xf32>
    scf.yield %acc2 : tensor<128x64xf32>
  }
  ism.store %r, %O[%c0, %c0] : tensor<128x64xf32> -> memref<?x?xf32>
  ism.return
}
