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
// before) share one program. A task finds its launch L in the launch table
// (shared memory from byte 32: each launch's first ticket, then the end)
// and runs the shared program when L is 1 or 2; a switch on L picks its
// buffers (%arg1 -> %arg3 for the second, %arg3 -> %arg4 for the third:
// only the task's own member's values are read) and its program (ticket -
// its first ticket). Each waits for launch L - 1 (its
// seen flag at byte 16 + L - 1, its done counter 1 + L - 1, its programs
// from the table), records L + 1 on a timeout, and adds to counter 1 + L.
// Two programs, each on the threads of its 4 warps:
// WARPS-COUNT-2: arith.cmpi ult, %thread_id_x, %c128 : index
// WARPS-NOT: arith.cmpi ult, %thread_id_x, %c128 : index
// CHECK-LABEL: gpu.func @scale__scale__scale(
// CHECK: %[[TABLE:.*]] = memref.view %{{.*}}[%c32{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4xi32, #gpu.address_space<workgroup>>
// CHECK-COUNT-4: memref.store %{{.*}}, %[[TABLE]][%c{{[0-3]}}{{.*}}] : memref<4xi32
// CHECK: scf.while
// (binary lifting over 3 launches: steps of 2 and 1)
// CHECK: arith.select %{{.*}}, %{{.*}}, %c0 : index
// CHECK: %[[L:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : index
// CHECK: %[[IN2:.*]] = arith.cmpi eq, %[[L]], %c2
// CHECK: %[[EITHER:.*]] = arith.ori %{{.*}}, %[[IN2]] : i1
// CHECK: scf.if %[[EITHER]] {
// CHECK: %[[FIRSTV:.*]] = memref.load %{{.*}}[%[[L]]] : memref<4xi32
// CHECK: %[[FIRST:.*]] = arith.index_castui %[[FIRSTV]] : i32 to index
// CHECK: arith.subi %{{.*}}, %[[FIRST]] : index
// CHECK: scf.index_switch %[[L]] -> memref<?xf32>, memref<?xf32>
// CHECK-NEXT: case 2 {
// CHECK-NEXT: scf.yield %arg3, %arg4 : memref<?xf32>, memref<?xf32>
// CHECK: default {
// CHECK-NEXT: scf.yield %arg1, %arg3 : memref<?xf32>, memref<?xf32>
// CHECK: %[[AWAITED:.*]] = arith.addi %[[L]], %c-1 : index
// CHECK: arith.addi %[[AWAITED]], %c16 : index
// CHECK: llvm.cmpxchg
// CHECK: llvm.fence syncscope("device") release
// CHECK: arith.addi %[[L]], %c1{{.*}} : index
// CHECK: llvm.atomicrmw add
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
