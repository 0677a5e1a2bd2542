// RUN: ism-opt %s -ism-assign-layouts -convert-ism-to-gpu -split-input-file | FileCheck %s

// A masked ism.load whose tile is in bounds (the fast path) loads each
// vector under its mask bit when the mask is constant over the vector, so
// that no instruction reads the loaded data before its first use: with a
// load-then-select the warp waited for each load at its select, and the
// next load (the SpMM's values after its column indices) issued only then.
// Where the mask varies inside a vector, the vector is loaded whole and the
// padding selected.

// One element a thread (the SpMM's 8 column indices on 128 threads): each
// element under its own bit, the padding in the else branch, no select.
// CHECK-LABEL: gpu.func @one_a_thread
// CHECK: scf.if %{{.*}} -> (vector<1xi32>) {
// CHECK: scf.if %{{.*}} -> (vector<1xi32>) {
// CHECK-NEXT: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> vector<1xi32>
// CHECK: } else {
// CHECK-NEXT: scf.yield %{{.*}} : vector<1xi32>
// CHECK-NOT: arith.select
// CHECK: gpu.return
#b1 = #ism.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
ism.kernel @one_a_thread(%x: memref<?xi32>, %y: memref<?xi32>, %k: index,
                         %n: i32) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %r = ism.range 0 to 8 : tensor<8xi32, #b1>
  %ns = ism.splat %n : i32 -> tensor<8xi32, #b1>
  %m = arith.cmpi slt, %r, %ns : tensor<8xi32, #b1>
  %t = ism.load %x[%k] mask %m : memref<?xi32> -> tensor<8xi32, #b1>
  ism.store %t, %y[%c0] : tensor<8xi32, #b1> -> memref<?xi32>
  ism.return
}

// -----

// A row mask (constant along the rows, AxisInfo's constancy 128): each
// 16-byte vector under its row's bit.
// CHECK-LABEL: gpu.func @rows
// CHECK: scf.if %{{.*}} -> (vector<8xf32>) {
// CHECK: scf.if %{{.*}} -> (vector<4xf32>) {
// CHECK-NEXT: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: scf.if %{{.*}} -> (vector<4xf32>) {
// CHECK-NEXT: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK-NOT: arith.select
// CHECK: gpu.return
ism.kernel @rows(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %r0: index,
                 %n: i32) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %r = ism.range 0 to 8 : tensor<8xi32>
  %ns = ism.splat %n : i32 -> tensor<8xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<8xi32>
  %me = ism.expand_dims %m axis = 1 : tensor<8xi1> -> tensor<8x1xi1>
  %mb = ism.broadcast %me : tensor<8x1xi1> -> tensor<8x128xi1>
  %t = ism.load %x[%r0, %c0] mask %mb : memref<?x?xf32> -> tensor<8x128xf32>
  ism.store %t, %y[%c0, %c0] : tensor<8x128xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// A column mask (it may change inside a thread's 4 columns): whole vectors,
// then the select.
// CHECK-LABEL: gpu.func @columns
// CHECK: scf.if %{{.*}} -> (vector<8xf32>) {
// CHECK-NOT: scf.if
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<8xi1>, vector<8xf32>
// CHECK: } else {
ism.kernel @columns(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %r0: index,
                    %n: i32) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %r = ism.range 0 to 128 : tensor<128xi32>
  %ns = ism.splat %n : i32 -> tensor<128xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<128xi32>
  %me = ism.expand_dims %m axis = 0 : tensor<128xi1> -> tensor<1x128xi1>
  %mb = ism.broadcast %me : tensor<1x128xi1> -> tensor<8x128xi1>
  %t = ism.load %x[%r0, %c0] mask %mb : memref<?x?xf32> -> tensor<8x128xf32>
  ism.store %t, %y[%c0, %c0] : tensor<8x128xf32> -> memref<?x?xf32>
  ism.return
}
