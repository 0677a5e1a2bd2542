// RUN: ism-opt %s --ism-assign-layouts --ism-coschedule --convert-ism-to-gpu | FileCheck %s

// Launches sharing a program on grids of different sizes: the task's
// launch picks its grid with its buffers, in the same switch (a task reads
// only its own launch's parameters). The second and third launches share
// a program (the first waits for nothing); their grids are %n (%arg5) and
// %m (%arg7), passed once each after the buffers and %s.
// CHECK-LABEL: gpu.func @scale__scale__scale(
// CHECK: scf.index_switch %{{.*}} -> memref<?xf32>, memref<?xf32>, index
// CHECK-NEXT: case 2 {
// CHECK-NEXT: scf.yield %arg3, %arg4, %arg7 : memref<?xf32>, memref<?xf32>, index
// CHECK: default {
// CHECK-NEXT: scf.yield %arg1, %arg3, %arg5 : memref<?xf32>, memref<?xf32>, index
// No select chain picks a member's buffers.
// CHECK-NOT: arith.select %{{.*}}, %arg{{[0-9]+}}, %arg{{[0-9]+}} : memref
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
                %w: memref<?xf32>, %s: f32, %n: index, %m: index) {
  ism.coschedule ordered {
    ism.launch @scale grid(%n) (%x, %y, %s) : (memref<?xf32>, memref<?xf32>, f32)
    ism.launch @scale grid(%n) (%y, %z, %s) : (memref<?xf32>, memref<?xf32>, f32)
    ism.launch @scale grid(%m) (%z, %w, %s) : (memref<?xf32>, memref<?xf32>, f32)
  }
  return
}
