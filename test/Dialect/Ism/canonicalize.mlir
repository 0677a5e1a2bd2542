// RUN: ism-opt %s -canonicalize -split-input-file | FileCheck %s

// CHECK-LABEL: ism.kernel @splat_of_constant
// CHECK: %[[C:.*]] = arith.constant dense<2.500000e+00> : tensor<128xf32>
// CHECK: ism.store %[[C]]
ism.kernel @splat_of_constant(%x: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %s = arith.constant 2.5 : f32
  %t = ism.splat %s : f32 -> tensor<128xf32>
  ism.store %t, %x[%c0] : tensor<128xf32> -> memref<?xf32>
  ism.return
}

// -----

// CHECK-LABEL: ism.kernel @broadcast_of_splat
// CHECK-SAME: (%[[X:.*]]: memref<?x?xf32>, %[[S:.*]]: f32)
// CHECK: %[[T:.*]] = ism.splat %[[S]] : f32 -> tensor<64x128xf32>
// CHECK-NOT: ism.broadcast
// CHECK: ism.store %[[T]]
ism.kernel @broadcast_of_splat(%x: memref<?x?xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %t = ism.splat %s : f32 -> tensor<1x128xf32>
  %b = ism.broadcast %t : tensor<1x128xf32> -> tensor<64x128xf32>
  ism.store %b, %x[%c0, %c0] : tensor<64x128xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// CHECK-LABEL: ism.kernel @broadcast_of_constant
// CHECK: %[[C:.*]] = arith.constant dense<1.000000e+00> : tensor<64x128xf32>
// CHECK: ism.store %[[C]]
ism.kernel @broadcast_of_constant(%x: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %t = arith.constant dense<1.0> : tensor<1x128xf32>
  %b = ism.broadcast %t : tensor<1x128xf32> -> tensor<64x128xf32>
  ism.store %b, %x[%c0, %c0] : tensor<64x128xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// CHECK-LABEL: ism.kernel @broadcast_of_broadcast
// CHECK: %[[L:.*]] = ism.load
// CHECK: %[[B:.*]] = ism.broadcast %[[L]] : tensor<1x1xf32> -> tensor<64x128xf32>
// CHECK: ism.store %[[B]]
ism.kernel @broadcast_of_broadcast(%x: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %l = ism.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<1x1xf32>
  %a = ism.broadcast %l : tensor<1x1xf32> -> tensor<1x128xf32>
  %b = ism.broadcast %a : tensor<1x128xf32> -> tensor<64x128xf32>
  ism.store %b, %x[%c0, %c0] : tensor<64x128xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// CHECK-LABEL: ism.kernel @identity_shape_ops
// CHECK: %[[L:.*]] = ism.load
// CHECK-NEXT: ism.store %[[L]]
ism.kernel @identity_shape_ops(%x: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %l = ism.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<16x32xf32>
  %a = ism.broadcast %l : tensor<16x32xf32> -> tensor<16x32xf32>
  %b = ism.reshape %a : tensor<16x32xf32> -> tensor<16x32xf32>
  %c = ism.trans %b order = [0, 1] : tensor<16x32xf32> -> tensor<16x32xf32>
  ism.store %c, %x[%c0, %c0] : tensor<16x32xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// CHECK-LABEL: ism.kernel @trans_of_trans
// CHECK: %[[L:.*]] = ism.load
// CHECK-NOT: ism.trans
// CHECK: ism.store %[[L]]
ism.kernel @trans_of_trans(%x: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %l = ism.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<16x32xf32>
  %a = ism.trans %l order = [1, 0] : tensor<16x32xf32> -> tensor<32x16xf32>
  %b = ism.trans %a order = [1, 0] : tensor<32x16xf32> -> tensor<16x32xf32>
  ism.store %b, %x[%c0, %c0] : tensor<16x32xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// Two rank-3 permutations compose into one.
// CHECK-LABEL: ism.kernel @trans_compose
// CHECK: %[[L:.*]] = ism.load
// CHECK: %[[T:.*]] = ism.trans %[[L]] order = [2, 0, 1] : tensor<2x4x8xf32> -> tensor<8x2x4xf32>
// CHECK-NOT: ism.trans
// CHECK: ism.store %[[T]]
ism.kernel @trans_compose(%x: memref<?x?x?xf32>) {
  %c0 = arith.constant 0 : index
  %l = ism.load %x[%c0, %c0, %c0] : memref<?x?x?xf32> -> tensor<2x4x8xf32>
  %a = ism.trans %l order = [1, 2, 0] : tensor<2x4x8xf32> -> tensor<4x8x2xf32>
  %b = ism.trans %a order = [1, 2, 0] : tensor<4x8x2xf32> -> tensor<8x2x4xf32>
  ism.store %b, %x[%c0, %c0, %c0] : tensor<8x2x4xf32> -> memref<?x?x?xf32>
  ism.return
}

// -----

// CHECK-LABEL: ism.kernel @reshape_of_reshape
// CHECK: %[[L:.*]] = ism.load
// CHECK: %[[R:.*]] = ism.reshape %[[L]] : tensor<16x32xf32> -> tensor<4x128xf32>
// CHECK-NOT: ism.reshape
ism.kernel @reshape_of_reshape(%x: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %l = ism.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<16x32xf32>
  %a = ism.reshape %l : tensor<16x32xf32> -> tensor<512xf32>
  %b = ism.reshape %a : tensor<512xf32> -> tensor<4x128xf32>
  ism.store %b, %x[%c0, %c0] : tensor<4x128xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// CHECK-LABEL: ism.kernel @shape_ops_of_splat
// CHECK-SAME: (%{{.*}}: memref<?x?xf32>, %[[S:.*]]: f32)
// CHECK-DAG: ism.splat %[[S]] : f32 -> tensor<128x1xf32>
// CHECK-DAG: ism.splat %[[S]] : f32 -> tensor<32x4xf32>
// CHECK-DAG: ism.splat %[[S]] : f32 -> tensor<1x128xf32>
// CHECK-NOT: ism.expand_dims
// CHECK-NOT: ism.reshape
// CHECK-NOT: ism.trans
ism.kernel @shape_ops_of_splat(%x: memref<?x?xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %t = ism.splat %s : f32 -> tensor<128xf32>
  %e = ism.expand_dims %t axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %u = ism.splat %s : f32 -> tensor<128xf32>
  %r = ism.reshape %u : tensor<128xf32> -> tensor<32x4xf32>
  %tr = ism.trans %e order = [1, 0] : tensor<128x1xf32> -> tensor<1x128xf32>
  ism.store %e, %x[%c0, %c0] : tensor<128x1xf32> -> memref<?x?xf32>
  ism.store %r, %x[%c0, %c0] : tensor<32x4xf32> -> memref<?x?xf32>
  ism.store %tr, %x[%c0, %c0] : tensor<1x128xf32> -> memref<?x?xf32>
  ism.return
}

// -----

#b0 = #ism.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#b1 = #ism.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#b2 = #ism.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-LABEL: ism.kernel @convert_chain
// CHECK: %[[L:.*]] = ism.load {{.*}} -> tensor<512xf32, #[[B0:.*]]>
// CHECK: %[[C:.*]] = ism.convert_layout %[[L]] : tensor<512xf32, #[[B0]]> -> tensor<512xf32, #[[B2:.*]]>
// CHECK-NOT: ism.convert_layout
// CHECK: ism.store %[[C]]
// CHECK: ism.store %[[L]]
ism.kernel @convert_chain(%x: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %l = ism.load %x[%c0] : memref<?xf32> -> tensor<512xf32, #b0>
  %a = ism.convert_layout %l : tensor<512xf32, #b0> -> tensor<512xf32, #b1>
  %b = ism.convert_layout %a : tensor<512xf32, #b1> -> tensor<512xf32, #b2>
  ism.store %b, %x[%c0] : tensor<512xf32, #b2> -> memref<?xf32>
  %back = ism.convert_layout %a : tensor<512xf32, #b1> -> tensor<512xf32, #b0>
  ism.store %back, %x[%c0] : tensor<512xf32, #b0> -> memref<?xf32>
  ism.return
}
