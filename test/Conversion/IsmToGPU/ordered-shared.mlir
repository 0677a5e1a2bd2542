// RUN: ism-opt %s --ism-assign-layouts --ism-coschedule | FileCheck %s --check-prefix=FUSED
// RUN: ism-opt %s --ism-assign-layouts --ism-coschedule --convert-ism-to-gpu > %t
// RUN: FileCheck %s < %t
// RUN: FileCheck %s --check-prefix=WARPS < %t

// Three launches of one kernel in an ordered region, each reading what the
// one before wrote (a model's layers: the same kernels on their own
// buffers).
//
// ism-coschedule passes each distinct host value once: %y, written by the
// first launch and read by the second, is one parameter of the fused
// kernel, as are %s and the grid sizes every launch takes.
// FUSED-LABEL: ism.kernel @scale__scale__scale(
// FUSED-SAME: %arg0: memref<?xf32>, %arg1: memref<?xf32>, %arg2: f32, %arg3: memref<?xf32>, %arg4: memref<?xf32>, %arg5: index, %arg6: index)
// FUSED: ism.warp_specialize ordered grids(%arg5, %arg6, %arg6, %arg5, %arg6, %arg6, %arg5, %arg6, %arg6)
// FUSED: ism.launch @scale__scale__scale grid(%{{.*}}) (%arg0, %arg1, %arg4, %arg2, %arg3, %c4, %c1)
//
// The lowering: the first launch waits for nothing, so its program differs
// (its load comes first); the second and third (each waiting for the one
// before) share one program. Its task runs for a ticket in either
// launch's range; which one picks its buffers (%arg1 -> %arg3 for the
// second, %arg3 -> %arg4 for the third), first ticket, grid, the launch
// its wait names (seen flag at byte 16 + launch, done counter, the error
// record's launch + 1) and the done counter it adds to.
// Two programs, each on the threads of its 4 warps:
// WARPS-COUNT-2: arith.cmpi ult, %thread_id_x, %c128 : index
// WARPS-NOT: arith.cmpi ult, %thread_id_x, %c128 : index
// CHECK-LABEL: gpu.func @scale__scale__scale(
// CHECK: %[[EITHER:.*]] = arith.ori %{{.*}}, %[[IN2:.*]] : i1
// CHECK: scf.if %[[EITHER]] {
// CHECK: %[[START:.*]] = arith.select %[[IN2]], %{{.*}}, %{{.*}} : index
// CHECK: arith.subi %{{.*}}, %[[START]] : index
// CHECK: arith.select %[[IN2]], %arg3, %arg1 : memref<?xf32>
// CHECK: arith.select %[[IN2]], %arg4, %arg3 : memref<?xf32>
// CHECK: arith.select %[[IN2]], %c17, %c16 : index
// CHECK: arith.select %[[IN2]], %c1{{.*}}, %c0{{.*}} : index
// CHECK: arith.select %[[IN2]], %c3_i32, %c2_i32 : i32
// CHECK: llvm.fence syncscope("device") release
// CHECK: arith.select %[[IN2]], %c3, %c2 : index
// CHECK: gpu.return

ism.kernel @scale(%x: memref<?xf32>, %y: memref<?xf32>, %s: f32)
    attributes {num_warps = 4 : i32} {
  %pid = ism.program_id x : index
  %c128 = arith.constant 128 : index
  %o = arith.muli %pid, %c128 : index
  %t = ism.load %x[%o] : memref<?xf32> -> tensor<128xf32>
  %ss = ism.splat %s : f32 -> tensor<128xf32>
  %r = arith.mulf %t, %ss : tensor<128xf32>
  ism.store %r, %y[%o] : tensor<128xf32> -> memref<?xf32>
  ism.return
}

func.func @main(%x: memref<?xf32>, %y: memref<?xf32>, %z: memref<?xf32>,
                %w: memref<?xf32>, %s: f32) {
  %c4 = arith.constant 4 : index
  ism.coschedule ordered {
    ism.launch @scale grid(%c4) (%x, %y, %s) : (memref<?xf32>, memref<?xf32>, f32)
    ism.launch @scale grid(%c4) (%y, %z, %s) : (memref<?xf32>, memref<?xf32>, f32)
    ism.launch @scale grid(%c4) (%z, %w, %s) : (memref<?xf32>, memref<?xf32>, f32)
  }
  return
}
