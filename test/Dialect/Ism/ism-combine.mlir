// RUN: ism-opt %s -ism-combine -split-input-file | FileCheck %s

// CHECK-LABEL: ism.kernel @add_into_dot
// CHECK: %[[A:.*]] = ism.load %{{.*}} -> tensor<64x32xf16>
// CHECK: %[[B:.*]] = ism.load %{{.*}} -> tensor<32x64xf16>
// CHECK: %[[C:.*]] = ism.load %{{.*}} -> tensor<64x64xf32>
// CHECK: %[[D:.*]] = ism.dot %[[A]], %[[B]], %[[C]] : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
// CHECK-NOT: arith.addf
// CHECK: ism.store %[[D]]
ism.kernel @add_into_dot(%x: memref<?x?xf16>, %y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %a = ism.load %x[%c0, %c0] : memref<?x?xf16> -> tensor<64x32xf16>
  %b = ism.load %x[%c0, %c0] : memref<?x?xf16> -> tensor<32x64xf16>
  %c = ism.load %y[%c0, %c0] : memref<?x?xf32> -> tensor<64x64xf32>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = ism.dot %a, %b, %zero : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
  %s = arith.addf %c, %d : tensor<64x64xf32>
  ism.store %s, %y[%c0, %c0] : tensor<64x64xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// Integer dots fold arith.addi the same way, and keep their precision.
// CHECK-LABEL: ism.kernel @addi_into_dot
// CHECK: %[[D:.*]] = ism.dot %{{.*}}, %{{.*}}, %[[C:.*]] : tensor<16x16xi8> * tensor<16x16xi8> -> tensor<16x16xi32>
// CHECK-NOT: arith.addi
ism.kernel @addi_into_dot(%x: memref<?x?xi8>, %y: memref<?x?xi32>) {
  %c0 = arith.constant 0 : index
  %a = ism.load %x[%c0, %c0] : memref<?x?xi8> -> tensor<16x16xi8>
  %c = ism.load %y[%c0, %c0] : memref<?x?xi32> -> tensor<16x16xi32>
  %zero = arith.constant dense<0> : tensor<16x16xi32>
  %d = ism.dot %a, %a, %zero : tensor<16x16xi8> * tensor<16x16xi8> -> tensor<16x16xi32>
  %s = arith.addi %d, %c : tensor<16x16xi32>
  ism.store %s, %y[%c0, %c0] : tensor<16x16xi32> -> memref<?x?xi32>
  ism.return
}

// -----

// A nonzero accumulator, or a dot used twice, is left alone.
// CHECK-LABEL: ism.kernel @no_fold
// CHECK: ism.dot
// CHECK: arith.addf
// CHECK: ism.dot
// CHECK: arith.addf
ism.kernel @no_fold(%x: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %a = ism.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<16x16xf32>
  %one = arith.constant dense<1.0> : tensor<16x16xf32>
  %d = ism.dot %a, %a, %one : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
  %s = arith.addf %d, %a : tensor<16x16xf32>
  ism.store %s, %x[%c0, %c0] : tensor<16x16xf32> -> memref<?x?xf32>
  %zero = arith.constant dense<0.0> : tensor<16x16xf32>
  %e = ism.dot %a, %a, %zero : tensor<16x16xf32> * tensor<16x16xf32> -> tensor<16x16xf32>
  %t = arith.addf %e, %a : tensor<16x16xf32>
  ism.store %t, %x[%c0, %c0] : tensor<16x16xf32> -> memref<?x?xf32>
  ism.store %e, %x[%c0, %c0] : tensor<16x16xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// CHECK-LABEL: ism.kernel @select_into_load
// CHECK-SAME: (%[[X:.*]]: memref<?xf32>, %[[I:.*]]: index, %[[N:.*]]: i32)
// CHECK: %[[M:.*]] = arith.cmpi
// CHECK: %[[L:.*]] = ism.load %[[X]][%[[I]]] mask %[[M]] {padding = 0xFF800000 : f32} : memref<?xf32> -> tensor<128xf32>
// CHECK-NOT: arith.select
// CHECK: ism.store %[[L]]
ism.kernel @select_into_load(%x: memref<?xf32>, %i: index, %n: i32) {
  %r = ism.range 0 to 128 : tensor<128xi32>
  %ns = ism.splat %n : i32 -> tensor<128xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<128xi32>
  %l = ism.load %x[%i] {padding = 0xFF800000 : f32} : memref<?xf32> -> tensor<128xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<128xf32>
  %v = arith.select %m, %l, %ninf : tensor<128xi1>, tensor<128xf32>
  ism.store %v, %x[%i] : tensor<128xf32> -> memref<?xf32>
  ism.return
}

// -----

// The select value differs from the load's padding: out-of-bounds elements
// would change, so the select stays.
// CHECK-LABEL: ism.kernel @select_other_value
// CHECK: ism.load %{{.*}}[%{{.*}}] : memref<?xf32> -> tensor<128xf32>
// CHECK: arith.select
ism.kernel @select_other_value(%x: memref<?xf32>, %i: index, %n: i32) {
  %r = ism.range 0 to 128 : tensor<128xi32>
  %ns = ism.splat %n : i32 -> tensor<128xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<128xi32>
  %l = ism.load %x[%i] : memref<?xf32> -> tensor<128xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<128xf32>
  %v = arith.select %m, %l, %ninf : tensor<128xi1>, tensor<128xf32>
  ism.store %v, %x[%i] : tensor<128xf32> -> memref<?xf32>
  ism.return
}
