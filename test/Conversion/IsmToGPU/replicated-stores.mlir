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
ism.kernel @atomic_small(%x: memref<?xf32>) attributes {num_warps = 4 : i32} {
  %i = ism.range 0 to 8 : tensor<8xi32>
  %v = arith.constant dense<1.0> : tensor<8xf32>
  %old = ism.atomic_rmw add %x[%i], %v : memref<?xf32>[tensor<8xi32>], tensor<8xf32>
  ism.return
}
