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

// A conversion of a tile made from a range, a splat and a constant: those
// are made again in the target layout (two conversions of one source share
// them), and the originals go; a conversion of a loaded tile stays.
// CHECK-LABEL: ism.kernel @remake
// CHECK-DAG: %[[C:.*]] = arith.constant dense<7> : tensor<512xi32, #[[$B]]>
// CHECK-DAG: %[[R:.*]] = ism.range 0 to 512 : tensor<512xi32, #[[$B]]>
// CHECK-DAG: %[[S:.*]] = ism.splat %{{.*}} : i32 -> tensor<512xi32, #[[$B]]>
// CHECK: %[[I:.*]] = arith.addi %[[R]], %[[S]] : tensor<512xi32, #[[$B]]>
// CHECK: %[[M:.*]] = arith.muli %[[I]], %[[C]] : tensor<512xi32, #[[$B]]>
// CHECK-NOT: arith.muli
// CHECK: %[[L:.*]] = ism.load %{{.*}} -> tensor<512xi32, #[[$B]]>
// CHECK: %[[U:.*]] = arith.addi %[[M]], %[[L]] : tensor<512xi32, #[[$B]]>
// CHECK: %[[V:.*]] = arith.addi %[[U]], %[[M]] : tensor<512xi32, #[[$B]]>
// CHECK: %[[X:.*]] = ism.load %{{.*}} -> tensor<512xi32, #[[$A]]>
// CHECK: ism.convert_layout %[[X]] : tensor<512xi32, #[[$A]]> -> tensor<512xi32, #[[$B]]>
ism.kernel @remake(%x: memref<?xi32>, %n: i32) {
  %c0 = arith.constant 0 : index
  %r = ism.range 0 to 512 : tensor<512xi32, #a>
  %s = ism.splat %n : i32 -> tensor<512xi32, #a>
  %i = arith.addi %r, %s : tensor<512xi32, #a>
  %c = arith.constant dense<7> : tensor<512xi32, #a>
  %m = arith.muli %i, %c : tensor<512xi32, #a>
  %mb = ism.convert_layout %m : tensor<512xi32, #a> -> tensor<512xi32, #b>
  %mb2 = ism.convert_layout %m : tensor<512xi32, #a> -> tensor<512xi32, #b>
  %l = ism.load %x[%c0] : memref<?xi32> -> tensor<512xi32, #b>
  %u = arith.addi %mb, %l : tensor<512xi32, #b>
  %v = arith.addi %u, %mb2 : tensor<512xi32, #b>
  %x2 = ism.load %x[%c0] : memref<?xi32> -> tensor<512xi32, #a>
  %xb = ism.convert_layout %x2 : tensor<512xi32, #a> -> tensor<512xi32, #b>
  %w = arith.addi %v, %xb : tensor<512xi32, #b>
  %mask = arith.constant dense<true> : tensor<512xi1, #b>
  ism.store %w, %x[%c0] mask %mask : tensor<512xi32, #b> -> memref<?xi32>
  ism.return
}
