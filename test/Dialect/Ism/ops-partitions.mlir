// RUN: ism-opt %s | ism-opt | FileCheck %s

// ism.warp_specialize with its #ism.partition attributes, and the
// thread-level async ring ops, round-trip.

#blocked = #ism.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>

// CHECK-LABEL: ism.kernel @fused
// CHECK: ism.warp_specialize warp_specialized grids(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) partitions [#ism.partition<{warpBase = 0, numWarps = 4, registers = [], barriers = [1], sharedMemory = 0, stages = 0, workCounter = 0, groupSize = 0}>, #ism.partition<{warpBase = 4, numWarps = 4, registers = [], barriers = [2], sharedMemory = 64, stages = 0, workCounter = 1, groupSize = 0}>] {
// CHECK: ism.program_id x
// CHECK: }, {
// CHECK: ism.num_programs x
ism.kernel @fused(%x: memref<?xf32>, %g: index) attributes {num_warps = 8 : i32} {
  ism.warp_specialize warp_specialized grids(%g, %g, %g, %g, %g, %g) partitions [
      #ism.partition<{warpBase = 0, numWarps = 4, registers = [], barriers = [1], sharedMemory = 0, stages = 0, workCounter = 0, groupSize = 0}>,
      #ism.partition<{warpBase = 4, numWarps = 4, registers = [], barriers = [2], sharedMemory = 64, stages = 0, workCounter = 1, groupSize = 0}>] {
    %p = ism.program_id x : index
  }, {
    %n = ism.num_programs x : index
  }
  ism.return
}

// CHECK-LABEL: ism.kernel @ring
// CHECK: ism.async_copy %{{.*}}[%{{.*}}] slot %{{.*}} {ring = 16 : i64, slot_bytes = 4096 : i64, tile = tensor<1024xf32, #blocked>} : memref<?xf32>
// CHECK: ism.async_load %{{.*}}[%{{.*}}] slot %{{.*}} {pending = 3 : i32, ring = 16 : i64, slot_bytes = 4096 : i64} : memref<?xf32> -> tensor<1024xf32, #blocked>
ism.kernel @ring(%x: memref<?xf32>, %i: index, %s: index) {
  ism.async_copy %x[%i] slot %s {ring = 16, slot_bytes = 4096, tile = tensor<1024xf32, #blocked>} : memref<?xf32>
  %t = ism.async_load %x[%i] slot %s {ring = 16, slot_bytes = 4096, pending = 3 : i32} : memref<?xf32> -> tensor<1024xf32, #blocked>
  ism.return
}

// CHECK-LABEL: ism.kernel @gather_ring
// CHECK: ism.async_gather %{{.*}}[%{{.*}}] mask %{{.*}} slot %{{.*}} if %{{.*}} {ring = 3 : i32, slots = 2 : i32} : memref<?xf32>[tensor<1024xi32, #blocked>], tensor<1024xi1, #blocked>
// CHECK: ism.async_gather_wait ring 3 slot %{{.*}} {pending = 1 : i32, slots = 2 : i32} : tensor<1024xf32, #blocked>
ism.kernel @gather_ring(%x: memref<?xf32>, %s: index, %p: i1) {
  %i = ism.range 0 to 1024 : tensor<1024xi32, #blocked>
  %m = arith.cmpi sgt, %i, %i : tensor<1024xi32, #blocked>
  ism.async_gather %x[%i] mask %m slot %s if %p {ring = 3 : i32, slots = 2 : i32} : memref<?xf32>[tensor<1024xi32, #blocked>], tensor<1024xi1, #blocked>
  %t = ism.async_gather_wait ring 3 slot %s {slots = 2 : i32, pending = 1 : i32} : tensor<1024xf32, #blocked>
  ism.return
}
