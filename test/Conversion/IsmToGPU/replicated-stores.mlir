// RUN: ism-opt %s -ism-assign-layouts -convert-ism-to-gpu -split-input-file | FileCheck %s

// A tile smaller than the CTA's footprint is held by several threads (here
// 16 f32 with 4 warps: lanes and warps wrap around it). Only the first copy
// stores, so an in-place update (load, compute, store to the same place) can
// never see another copy's store before its own load.
// CHECK-LABEL: gpu.func @inplace_small
// CHECK: %[[OWNER:.*]] = arith.cmpi ult, %{{.*}}, %c16
// CHECK: scf.if %[[OWNER]] {
// CHECK:   scf.if
// CHECK:     llvm.store
// CHECK: gpu.return
ism.kernel @inplace_small(%x: memref<?xf32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0] : memref<?xf32> -> tensor<16xf32>
  %d = arith.addf %t, %t : tensor<16xf32>
  ism.store %d, %x[%c0] : tensor<16xf32> -> memref<?xf32>
  ism.return
}

// -----

// A tile that covers the footprint has one copy of each element: no guard.
// CHECK-LABEL: gpu.func @inplace_large
// CHECK-NOT: arith.cmpi ult
// CHECK: llvm.store
ism.kernel @inplace_large(%x: memref<?xf32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0] : memref<?xf32> -> tensor<1024xf32>
  %d = arith.addf %t, %t : tensor<1024xf32>
  ism.store %d, %x[%c0] : tensor<1024xf32> -> memref<?xf32>
  ism.return
}

// -----

// Scatters and atomics take the same predicate: a replicated atomic add
// would otherwise add once per copy.
// CHECK-LABEL: gpu.func @atomic_small
// CHECK: %[[OWNER:.*]] = arith.cmpi ult, %{{.*}}, %c8
// CHECK: arith.andi %{{.*}}, %[[OWNER]]
// CHECK: llvm.atomicrmw fadd
// The other copies get the first copy's old value through shared memory:
// the owners write it, a barrier, every copy reads it.
// CHECK: scf.if %[[OWNER]] {
// CHECK:   memref.store
// CHECK: nvvm.barrier
// CHECK: memref.load
// CHECK-NOT: llvm.fence
ism.kernel @atomic_small(%x: memref<?xf32>) attributes {num_warps = 4 : i32} {
  %i = ism.range 0 to 8 : tensor<8xi32>
  %v = arith.constant dense<1.0> : tensor<8xf32>
  %old = ism.atomic_rmw add %x[%i], %v : memref<?xf32>[tensor<8xi32>], tensor<8xf32>
  ism.scatter %old, %x[%i] : tensor<8xf32> -> memref<?xf32>[tensor<8xi32>]
  ism.return
}

// -----

// A ticket: acq_rel orders the whole program's earlier stores before the
// update (barrier, then a release fence) and the update before its later
// loads (an acquire fence, then the exchange's barrier); every thread gets
// the ticket.
// CHECK-LABEL: gpu.func @ticket
// CHECK: llvm.store
// CHECK: nvvm.barrier
// CHECK-NEXT: llvm.fence syncscope("device") release
// CHECK: %[[OWNER:.*]] = arith.cmpi
// CHECK: llvm.atomicrmw add %{{.*}}, %{{.*}} syncscope("device") monotonic : !llvm.ptr<1>, i32
// CHECK: llvm.fence syncscope("device") acquire
// CHECK: scf.if %[[OWNER]] {
// CHECK:   memref.store
// CHECK: nvvm.barrier
// CHECK: memref.load
// CHECK: llvm.load
// CHECK: gpu.return
ism.kernel @ticket(%x: memref<?xf32>, %count: memref<?xi32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0] : memref<?xf32> -> tensor<512xf32>
  ism.store %t, %x[%c0] : tensor<512xf32> -> memref<?xf32>
  %i = arith.constant dense<0> : tensor<1xi32>
  %one = arith.constant dense<1> : tensor<1xi32>
  %ticket = ism.atomic_rmw add %count[%i], %one sem = acq_rel : memref<?xi32>[tensor<1xi32>], tensor<1xi32>
  %f = arith.sitofp %ticket : tensor<1xi32> to tensor<1xf32>
  %c512 = arith.constant 512 : index
  %u = ism.load %x[%c512] : memref<?xf32> -> tensor<1xf32>
  %s = arith.addf %u, %f : tensor<1xf32>
  ism.store %s, %x[%c512] : tensor<1xf32> -> memref<?xf32>
  ism.return
}

// -----

// Without copies (a tile that covers the CTA's footprint) there is no exchange: release
// is a barrier and a fence before the atomics, acquire a fence and a
// barrier after them.
// CHECK-LABEL: gpu.func @release_acquire_unreplicated
// CHECK: nvvm.barrier
// CHECK-NEXT: llvm.fence syncscope("device") release
// CHECK: llvm.atomicrmw umax
// CHECK-NOT: llvm.fence
// CHECK: llvm.atomicrmw add
// CHECK: llvm.fence syncscope("device") acquire
// CHECK-NOT: memref.store
// CHECK: nvvm.barrier
// CHECK-NOT: memref.store
ism.kernel @release_acquire_unreplicated(%h: memref<?xi32>) attributes {num_warps = 4 : i32} {
  %i = ism.range 0 to 512 : tensor<512xi32>
  %r = ism.atomic_rmw umax %h[%i], %i sem = release : memref<?xi32>[tensor<512xi32>], tensor<512xi32>
  %a = ism.atomic_rmw add %h[%i], %r sem = acquire : memref<?xi32>[tensor<512xi32>], tensor<512xi32>
  ism.return
}
