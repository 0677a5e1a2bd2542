// RUN: ism-opt %s --split-input-file --ism-assign-layouts --ism-coschedule --convert-ism-to-gpu | FileCheck %s

// L2 prefetch in an ordered kernel: a task's first warp brings into L2 the
// tiles its program loads before its wait (weights: buffers no earlier
// launch writes) for the task l2_prefetch rounds of the grid's CTAs ahead,
// a 128-byte line a lane: for a row of 128 f32 from 128 x pid, five lines
// (four, and one more where the row is not line-aligned).
// CHECK-LABEL: gpu.func @layer__layer__layer(
// CHECK: scf.while
// CHECK: %[[CTAS:.*]] = gpu.grid_dim x
// CHECK: %[[AHEAD:.*]] = arith.muli %[[CTAS]], %c2{{.*}} : index
// CHECK: %[[TARGET:.*]] = arith.addi %{{.*}}, %[[AHEAD]] : index
// CHECK-DAG: %[[WARP0:.*]] = arith.cmpi ult, %thread_id_x, %c32{{.*}} : index
// CHECK-DAG: %[[LEFT:.*]] = arith.cmpi ult, %[[TARGET]], %{{.*}} : index
// CHECK: %[[GO:.*]] = arith.andi %[[WARP0]], %[[LEFT]] : i1
// CHECK: scf.if %[[GO]] {
// The first launch waits for nothing: both its loads are prefetched.
// CHECK: memref.extract_aligned_pointer_as_index %arg0
// CHECK: scf.for %{{.*}} = %thread_id_x to %c5{{.*}} step %c32
// CHECK: nvvm.prefetch level =  L2, %{{.*}} : !llvm.ptr<1>
// CHECK: memref.extract_aligned_pointer_as_index %arg1
// CHECK: nvvm.prefetch level =  L2
// The second and third share a program: the prefetch picks the weights of
// the launch the task ahead is in (a switch, as the task itself does);
// their activations, which the launch before writes, are not prefetched.
// CHECK: %[[W:.*]] = scf.index_switch %{{.*}} -> memref<?xf32>
// CHECK-NEXT: case 2 {
// CHECK-NEXT: scf.yield %arg5 : memref<?xf32>
// CHECK: default {
// CHECK-NEXT: scf.yield %arg3 : memref<?xf32>
// CHECK: memref.extract_aligned_pointer_as_index %[[W]]
// CHECK: scf.for %{{.*}} = %thread_id_x to %c5{{.*}} step %c32
// CHECK: nvvm.prefetch level =  L2
// CHECK-NOT: nvvm.prefetch
// CHECK: gpu.return

ism.kernel @layer(%w: memref<?xf32>, %x: memref<?xf32>, %y: memref<?xf32>)
    attributes {num_warps = 4 : i32} {
  %pid = ism.program_id x : index
  %c128 = arith.constant 128 : index
  %o = arith.muli %pid, %c128 : index
  %wt = ism.load %w[%o] : memref<?xf32> -> tensor<128xf32>
  %xt = ism.load %x[%o] : memref<?xf32> -> tensor<128xf32>
  %r = arith.mulf %wt, %xt : tensor<128xf32>
  ism.store %r, %y[%o] : tensor<128xf32> -> memref<?xf32>
  ism.return
}

func.func @main(%w0: memref<?xf32>, %x: memref<?xf32>, %y: memref<?xf32>,
                %w1: memref<?xf32>, %z: memref<?xf32>, %w2: memref<?xf32>,
                %u: memref<?xf32>, %n: index) {
  ism.coschedule ordered attributes {l2_prefetch = 2 : i32} {
    ism.launch @layer grid(%n) (%w0, %x, %y) : (memref<?xf32>, memref<?xf32>, memref<?xf32>)
    ism.launch @layer grid(%n) (%w1, %y, %z) : (memref<?xf32>, memref<?xf32>, memref<?xf32>)
    ism.launch @layer grid(%n) (%w2, %z, %u) : (memref<?xf32>, memref<?xf32>, memref<?xf32>)
  }
  return
}

// -----

// l2_prefetch = 0: nothing is prefetched.
// CHECK-LABEL: gpu.func @layer__layer__layer(
// CHECK-NOT: nvvm.prefetch
// CHECK: gpu.return

ism.kernel @layer(%w: memref<?xf32>, %x: memref<?xf32>, %y: memref<?xf32>)
    attributes {num_warps = 4 : i32} {
  %pid = ism.program_id x : index
  %c128 = arith.constant 128 : index
  %o = arith.muli %pid, %c128 : index
  %wt = ism.load %w[%o] : memref<?xf32> -> tensor<128xf32>
  %xt = ism.load %x[%o] : memref<?xf32> -> tensor<128xf32>
  %r = arith.mulf %wt, %xt : tensor<128xf32>
  ism.store %r, %y[%o] : tensor<128xf32> -> memref<?xf32>
  ism.return
}

func.func @main(%w0: memref<?xf32>, %x: memref<?xf32>, %y: memref<?xf32>,
                %w1: memref<?xf32>, %z: memref<?xf32>, %w2: memref<?xf32>,
                %u: memref<?xf32>, %n: index) {
  ism.coschedule ordered attributes {l2_prefetch = 0 : i32} {
    ism.launch @layer grid(%n) (%w0, %x, %y) : (memref<?xf32>, memref<?xf32>, memref<?xf32>)
    ism.launch @layer grid(%n) (%w1, %y, %z) : (memref<?xf32>, memref<?xf32>, memref<?xf32>)
    ism.launch @layer grid(%n) (%w2, %z, %u) : (memref<?xf32>, memref<?xf32>, memref<?xf32>)
  }
  return
}
