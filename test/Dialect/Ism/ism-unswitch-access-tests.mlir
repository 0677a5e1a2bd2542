// RUN: ism-opt %s --pass-pipeline='builtin.module(gpu.module(gpu.func(ism-unswitch-access-tests)))' | FileCheck %s

// Two tested accesses whose tests depend only on the kernel's arguments and
// grid queries, and a third whose test reads memory: the first two tests
// move above the first access and are ANDed; the body is versioned on the
// result. The fast version has the two accesses' fast paths inline (no
// test left), the other version is the body as it was; the third access
// keeps its test in both. No ism.access_test mark is left.
// CHECK-LABEL: gpu.func @versioned
// CHECK-SAME: (%[[M:.*]]: memref<?xf32>, %[[N:.*]]: index, %[[F:.*]]: memref<1xi1>)
// CHECK: %[[X:.*]] = gpu.block_id x
// CHECK: %[[T0:.*]] = arith.cmpi slt, %[[X]], %[[N]]
// CHECK: %[[Y:.*]] = gpu.block_id y
// CHECK: %[[T1:.*]] = arith.cmpi slt, %[[Y]], %[[N]]
// CHECK: %[[ALL:.*]] = arith.andi %[[T0]], %[[T1]]
// CHECK: scf.if %[[ALL]] {
// CHECK-NEXT: %[[A:.*]] = memref.load %[[M]][%[[X]]] {fast}
// CHECK-NEXT: memref.store %[[A]], %[[M]][%[[Y]]] {fast}
// CHECK-NEXT: %[[FLAG:.*]] = memref.load %[[F]]
// CHECK-NEXT: scf.if %[[FLAG]] {
// CHECK-NEXT: memref.store {{.*}} {fast}
// CHECK-NEXT: } else {
// CHECK-NEXT: memref.store {{.*}} {edge}
// CHECK-NEXT: }
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.if %[[T0]] -> (f32) {
// CHECK: scf.if %[[T1]] {
// CHECK: %[[FLAG2:.*]] = memref.load %[[F]]
// CHECK-NEXT: scf.if %[[FLAG2]] {
// CHECK: gpu.return
// CHECK-NOT: ism.access_test
gpu.module @kernels {
  gpu.func @versioned(%m: memref<?xf32>, %n: index, %flag: memref<1xi1>) kernel {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %x = gpu.block_id x
    %t0 = arith.cmpi slt, %x, %n : index
    %a = scf.if %t0 -> (f32) {
      %v = memref.load %m[%x] {fast} : memref<?xf32>
      scf.yield %v : f32
    } else {
      %v = memref.load %m[%c0] {edge} : memref<?xf32>
      scf.yield %v : f32
    } {ism.access_test}
    %y = gpu.block_id y
    %t1 = arith.cmpi slt, %y, %n : index
    scf.if %t1 {
      memref.store %a, %m[%y] {fast} : memref<?xf32>
    } else {
      memref.store %a, %m[%c0] {edge} : memref<?xf32>
    } {ism.access_test}
    %f = memref.load %flag[%c0] : memref<1xi1>
    scf.if %f {
      memref.store %zero, %m[%x] {fast} : memref<?xf32>
    } else {
      memref.store %zero, %m[%c0] {edge} : memref<?xf32>
    } {ism.access_test}
    gpu.return
  }
}

// A loop after the first tested access: the kernel stays as it is (the
// loop's accesses keep their own tests), less the marks.
// CHECK-LABEL: gpu.func @loop_after
// CHECK: %[[T0:.*]] = arith.cmpi
// CHECK-NEXT: scf.if %[[T0]] {
// CHECK: scf.for
// CHECK-NOT: ism.access_test
gpu.module @loop {
  gpu.func @loop_after(%m: memref<?xf32>, %n: index) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %x = gpu.block_id x
    %t0 = arith.cmpi slt, %x, %n : index
    scf.if %t0 {
      memref.store %zero, %m[%x] : memref<?xf32>
    } {ism.access_test}
    scf.for %i = %c0 to %n step %c1 {
      memref.store %zero, %m[%i] : memref<?xf32>
    }
    %t1 = arith.cmpi sle, %x, %n : index
    scf.if %t1 {
      memref.store %zero, %m[%c0] : memref<?xf32>
    } {ism.access_test}
    gpu.return
  }
}

// One tested access: nothing to version.
// CHECK-LABEL: gpu.func @single
// CHECK: %[[T0:.*]] = arith.cmpi
// CHECK-NEXT: scf.if %[[T0]] {
// CHECK-NOT: scf.if
// CHECK-NOT: ism.access_test
// CHECK: gpu.return
gpu.module @one {
  gpu.func @single(%m: memref<?xf32>, %n: index) kernel {
    %zero = arith.constant 0.0 : f32
    %x = gpu.block_id x
    %t0 = arith.cmpi slt, %x, %n : index
    scf.if %t0 {
      memref.store %zero, %m[%x] : memref<?xf32>
    } {ism.access_test}
    gpu.return
  }
}
