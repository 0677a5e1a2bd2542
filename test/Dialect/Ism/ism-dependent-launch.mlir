// RUN: ism-opt %s -ism-dependent-launch | FileCheck %s
// RUN: ism-opt %s -ism-dependent-launch -ism-dependent-launch | FileCheck %s
// RUN: ism-opt %s -ism-dependent-launch=chip=sm_80 | FileCheck %s --check-prefix=SM80

// On sm_90a every kernel starts by waiting for the grids before it and then
// lets the next kernel be scheduled (once, however often the pass runs);
// device functions that are not kernels are left alone.
// CHECK-LABEL: gpu.func @kernel
// CHECK-NEXT: nvvm.griddepcontrol{{ +}}wait
// CHECK-NEXT: nvvm.griddepcontrol{{ +}}launch_dependents
// CHECK-NEXT: arith.constant
// CHECK-NOT: nvvm.griddepcontrol
// CHECK-LABEL: gpu.func @helper
// CHECK-NOT: nvvm.griddepcontrol
// CHECK: gpu.return

// Before sm_90 there is no griddepcontrol.
// SM80-NOT: nvvm.griddepcontrol
gpu.module @kernels {
  gpu.func @kernel(%x: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %v = memref.load %x[%c0] : memref<?xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %x[%c0] : memref<?xf32>
    gpu.return
  }
  gpu.func @helper(%x: memref<?xf32>) {
    gpu.return
  }
}
