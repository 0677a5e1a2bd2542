// RUN: ism-opt %s -ism-remove-layout-conversions -split-input-file | FileCheck %s

#a = #ism.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#b = #ism.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>

// A stored conversion: the store takes the tile as it is.
// CHECK-LABEL: ism.kernel @store
// CHECK: %[[T:.*]] = ism.load {{.*}} -> tensor<512xf32, #[[$A:.*]]>
// CHECK-NOT: ism.convert_layout
// CHECK: ism.store %[[T]], %{{.*}} : tensor<512xf32, #[[$A]]> -> memref<?xf32>
ism.kernel @store(%x: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0] : memref<?xf32> -> tensor<512xf32, #a>
  %u = ism.convert_layout %t : tensor<512xf32, #a> -> tensor<512xf32, #b>
  ism.store %u, %x[%c0] : tensor<512xf32, #b> -> memref<?xf32>
  ism.return
}

// A reduced conversion: the reduction reads the tile as it is.
// CHECK-LABEL: ism.kernel @reduce
// CHECK: %[[T:.*]] = ism.load
// CHECK-NOT: ism.convert_layout
// CHECK: ism.reduce %[[T]] axis = 0
ism.kernel @reduce(%x: memref<?xf32>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0] : memref<?xf32> -> tensor<512xf32, #a>
  %u = ism.convert_layout %t : tensor<512xf32, #a> -> tensor<512xf32, #b>
  %s = ism.reduce %u axis = 0 : tensor<512xf32, #b> -> f32 {
  ^bb0(%p: f32, %q: f32):
    %r = arith.addf %p, %q : f32
    ism.yield %r : f32
  }
  memref.store %s, %y[%c0] : memref<?xf32>
  ism.return
}

// Converted operands of elementwise ops: the ops run in the source layout
// and only the final result is converted, once; identity conversions and
// chains fold. (The masked store keeps its operand's layout.)
// CHECK-LABEL: ism.kernel @elementwise
// CHECK: %[[P:.*]] = ism.load {{.*}} -> tensor<512xf32, #[[$A]]>
// CHECK: %[[Q:.*]] = ism.load {{.*}} -> tensor<512xf32, #[[$A]]>
// CHECK: %[[S:.*]] = arith.addf %[[P]], %[[Q]] : tensor<512xf32, #[[$A]]>
// CHECK: %[[M:.*]] = arith.mulf %[[S]], %[[S]] : tensor<512xf32, #[[$A]]>
// CHECK: %[[C:.*]] = ism.convert_layout %[[M]] : tensor<512xf32, #[[$A]]> -> tensor<512xf32, #[[$B:.*]]>
// CHECK-NOT: ism.convert_layout
// CHECK: ism.store %[[C]], %{{.*}} mask
ism.kernel @elementwise(%x: memref<?xf32>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %p = ism.load %x[%c0] : memref<?xf32> -> tensor<512xf32, #a>
  %q = ism.load %y[%c0] : memref<?xf32> -> tensor<512xf32, #a>
  %pb = ism.convert_layout %p : tensor<512xf32, #a> -> tensor<512xf32, #b>
  %qb = ism.convert_layout %q : tensor<512xf32, #a> -> tensor<512xf32, #b>
  %s = arith.addf %pb, %qb : tensor<512xf32, #b>
  %m = arith.mulf %s, %s : tensor<512xf32, #b>
  %same = ism.convert_layout %m : tensor<512xf32, #b> -> tensor<512xf32, #b>
  %back = ism.convert_layout %same : tensor<512xf32, #b> -> tensor<512xf32, #a>
  %fwd = ism.convert_layout %back : tensor<512xf32, #a> -> tensor<512xf32, #b>
  %mask = arith.constant dense<true> : tensor<512xi1, #b>
  ism.store %fwd, %x[%c0] mask %mask : tensor<512xf32, #b> -> memref<?xf32>
  ism.return
}
