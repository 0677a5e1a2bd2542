// RUN: ism-opt %s --split-input-file --ism-assign-layouts --ism-accelerate-dot=chip=sm_90a --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu | FileCheck %s

// With ping_pong = true, the two warpgroups of a kernel whose ring a
// producer warpgroup fills take turns issuing their iteration's products
// (AsyncOperands.cpp: takeTurns) when the lowered iteration issues them
// together: here the
// loop computes this block's S and then the previous block's P V, and waits
// for neither before both are issued. Warpgroup g waits on named barrier
// 2 + g before its first wgmma.fence and, after its last commit, opens the
// turn of the other (barrier 2 + (g + 1) mod 2), 256 threads each. Before
// the loop the last warpgroup opens warpgroup 0's first turn; in the last
// iteration (of all the loops' iterations, counted from their bounds) it
// opens none, so that every wait pairs with one arrival.
// CHECK-LABEL: gpu.func @pipelined
// CHECK: nvvm.setmaxregister  increase
// CHECK: arith.ceildivsi
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
// CHECK: %[[MORE:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : index
// CHECK: %[[NOTLAST:.*]] = arith.cmpi ne, %[[G]], %c1
// CHECK: %[[OPEN:.*]] = arith.ori %[[NOTLAST]], %[[MORE]] : i1
// CHECK: scf.if %[[OPEN]] {
// CHECK: %[[NEXT:.*]] = arith.remui %{{.*}}, %c2
// CHECK: %[[NI:.*]] = arith.index_cast %[[NEXT]] : index to i32
// CHECK: %[[THEIRS:.*]] = arith.addi %c2_i32{{.*}}, %[[NI]]
// CHECK: nvvm.barrier.arrive id = %[[THEIRS]] number_of_threads = %c256_i32
// CHECK: wgmma.wait_group.sync.aligned 1
// CHECK: wgmma.wait_group.sync.aligned 0
// CHECK: scf.yield
// CHECK-NOT: nvvm.barrier id
// CHECK: } {ism.ring_split}
ism.kernel @pipelined(%Q: memref<?x?x?xbf16>, %K: memref<?x?x?xbf16>, %V: memref<?x?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 8 : i32, ping_pong = true} {
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
    %mx = ism.reduce %s axis = 1 : tensor<128x64xf32> -> tensor<128xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.maximumf %a, %b : f32
      ism.yield %x : f32
    }
    %mx2 = ism.expand_dims %mx axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %mxb = ism.broadcast %mx2 : tensor<128x1xf32> -> tensor<128x64xf32>
    %sh = arith.subf %s, %mxb : tensor<128x64xf32>
    %p = math.exp %sh : tensor<128x64xf32>
    %p16 = arith.truncf %p : tensor<128x64xf32> to tensor<128x64xbf16>
    scf.yield %acc2, %p16 : tensor<128x64xf32>, tensor<128x64xbf16>
  }
  ism.store %r#0, %O[%c0, %c0] : tensor<128x64xf32> -> memref<?x?xf32>
  ism.return
}


// -----

// Without ping_pong (the default): no turns.
// CHECK-LABEL: gpu.func @by_default
// CHECK: nvvm.setmaxregister  increase
// CHECK-NOT: nvvm.barrier.arrive
// CHECK: } {ism.ring_split}
ism.kernel @by_default(%Q: memref<?x?x?xbf16>, %K: memref<?x?x?xbf16>, %V: memref<?x?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 8 : i32} {
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
    %mx = ism.reduce %s axis = 1 : tensor<128x64xf32> -> tensor<128xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.maximumf %a, %b : f32
      ism.yield %x : f32
    }
    %mx2 = ism.expand_dims %mx axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %mxb = ism.broadcast %mx2 : tensor<128x1xf32> -> tensor<128x64xf32>
    %sh = arith.subf %s, %mxb : tensor<128x64xf32>
    %p = math.exp %sh : tensor<128x64xf32>
    %p16 = arith.truncf %p : tensor<128x64xf32> to tensor<128x64xbf16>
    scf.yield %acc2, %p16 : tensor<128x64xf32>, tensor<128x64xbf16>
  }
  ism.store %r#0, %O[%c0, %c0] : tensor<128x64xf32> -> memref<?x?xf32>
  ism.return
}
