// RUN: ism-opt %s -ism-assign-layouts -split-input-file | FileCheck %s
// RUN: ism-opt %s -ism-assign-layouts=num-warps=2 -split-input-file | FileCheck %s --check-prefix=WARPS2

// A 1-D f16 row: 16 bytes (8 halves) per thread, 32 lanes then 8 warps
// along it; the f32 values of the same shape share the layout.
// CHECK: #[[$ROW:.*]] = #ism.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]}>
// CHECK-LABEL: ism.kernel @row
// CHECK: ism.load {{.*}} -> tensor<4096xf16, #[[$ROW]]>
// CHECK: arith.extf {{.*}} : tensor<4096xf16, #[[$ROW]]> to tensor<4096xf32, #[[$ROW]]>
// CHECK: %[[C:.*]] = arith.constant dense<1.000000e+00> : tensor<4096xf32, #[[$ROW]]>
// CHECK: arith.addf {{.*}}, %[[C]] : tensor<4096xf32, #[[$ROW]]>
// WARPS2-LABEL: ism.kernel @row
// WARPS2-SAME: num_warps = 2
// WARPS2: warpsPerCTA = [2]
ism.kernel @row(%x: memref<?xf16>, %y: memref<?xf32>) attributes {num_warps = 8 : i32} {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0] : memref<?xf16> -> tensor<4096xf16>
  %f = arith.extf %t : tensor<4096xf16> to tensor<4096xf32>
  %one = arith.constant dense<1.0> : tensor<4096xf32>
  %s = arith.addf %f, %one : tensor<4096xf32>
  ism.store %s, %y[%c0] : tensor<4096xf32> -> memref<?xf32>
  ism.return
}

// -----

// 2-D f32: 4 floats per thread along the rows, 32 lanes across a 128-wide
// row, the 4 warps down the columns; loop-carried tiles get the layout too.
// CHECK: #[[$ACC:.*]] = #ism.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-LABEL: ism.kernel @loop
// CHECK: scf.for {{.*}} -> (tensor<64x128xf32, #[[$ACC]]>)
ism.kernel @loop(%x: memref<?x?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<64x128xf32>
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %zero) -> (tensor<64x128xf32>) {
    %t = ism.load %x[%i, %c0] : memref<?x?xf32> -> tensor<64x128xf32>
    %s = arith.addf %a, %t : tensor<64x128xf32>
    scf.yield %s : tensor<64x128xf32>
  }
  ism.store %acc, %x[%c0, %c0] : tensor<64x128xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// A tile smaller than the CTA's footprint: extra lanes and warps replicate
// it along the slowest dimension.
// CHECK: #[[$SMALL:.*]] = #ism.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-LABEL: ism.kernel @small
// CHECK: tensor<64xf32, #[[$SMALL]]>
ism.kernel @small(%x: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0] : memref<?xf32> -> tensor<64xf32>
  ism.store %t, %x[%c0] : tensor<64xf32> -> memref<?xf32>
  ism.return
}

// -----

// Tiles that already have a layout keep it.
#mine = #ism.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK: #[[$MINE:.*]] = #ism.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-LABEL: ism.kernel @kept
// CHECK: tensor<512xf32, #[[$MINE]]>
ism.kernel @kept(%x: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0] : memref<?xf32> -> tensor<512xf32, #mine>
  ism.store %t, %x[%c0] : tensor<512xf32, #mine> -> memref<?xf32>
  ism.return
}

// -----

// Rows of several tokens (tokens x columns) broadcast over a 4-d tile whose
// warps run along the heads: no blocked layout of the 2-d tile replicates
// over those warps (it has no size-1 dimension to put them on), so the
// load takes the #ism.slice of the expansion's layout, and the expand_dims
// moves no data (before: a trip through shared memory and a barrier). A
// masked load keeps a blocked layout (its mask has one).
// CHECK-DAG: #[[$T4:.*]] = #ism.blocked<{sizePerThread = [1, 1, 1, 8], threadsPerWarp = [1, 1, 4, 8], warpsPerCTA = [1, 1, 8, 1], order = [3, 2, 1, 0]}>
// CHECK-DAG: #[[$T3:.*]] = #ism.blocked<{sizePerThread = [1, 1, 8], threadsPerWarp = [1, 4, 8], warpsPerCTA = [1, 8, 1], order = [2, 1, 0]}>
// CHECK-DAG: #[[$T2:.*]] = #ism.slice<{dim = 1, parent = #[[$T3]]}>
// CHECK-LABEL: ism.kernel @token_rows
// CHECK: ism.load {{.*}} -> tensor<2x64xf32, #[[$T2]]>
// CHECK: ism.expand_dims {{.*}} : tensor<2x64xf32, #[[$T2]]> -> tensor<2x1x64xf32, #[[$T3]]>
// CHECK: ism.expand_dims {{.*}} -> tensor<2x1x1x64xf32, #[[$T4]]>
// CHECK: ism.load {{.*}} mask {{.*}} -> tensor<2x64xf32, #blocked{{[0-9]*}}>
ism.kernel @token_rows(%x: memref<?x?x?x?xbf16>, %c: memref<?x?xf32>,
                       %y: memref<?x?x?x?xf32>)
    attributes {num_warps = 8 : i32} {
  %c0 = arith.constant 0 : index
  %m = arith.constant dense<true> : tensor<2x64xi1>
  %t = ism.load %x[%c0, %c0, %c0, %c0] : memref<?x?x?x?xbf16> -> tensor<2x1x32x64xbf16>
  %tf = arith.extf %t : tensor<2x1x32x64xbf16> to tensor<2x1x32x64xf32>
  %r = ism.load %c[%c0, %c0] : memref<?x?xf32> -> tensor<2x64xf32>
  %e3 = ism.expand_dims %r axis = 1 : tensor<2x64xf32> -> tensor<2x1x64xf32>
  %e4 = ism.expand_dims %e3 axis = 2 : tensor<2x1x64xf32> -> tensor<2x1x1x64xf32>
  %b = ism.broadcast %e4 : tensor<2x1x1x64xf32> -> tensor<2x1x32x64xf32>
  %p = arith.mulf %tf, %b : tensor<2x1x32x64xf32>
  ism.store %p, %y[%c0, %c0, %c0, %c0] : tensor<2x1x32x64xf32> -> memref<?x?x?x?xf32>
  %rm = ism.load %c[%c0, %c0] mask %m : memref<?x?xf32> -> tensor<2x64xf32>
  %em3 = ism.expand_dims %rm axis = 1 : tensor<2x64xf32> -> tensor<2x1x64xf32>
  %em4 = ism.expand_dims %em3 axis = 2 : tensor<2x1x64xf32> -> tensor<2x1x1x64xf32>
  %bm = ism.broadcast %em4 : tensor<2x1x1x64xf32> -> tensor<2x1x32x64xf32>
  %q = arith.mulf %tf, %bm : tensor<2x1x32x64xf32>
  ism.store %q, %y[%c0, %c0, %c0, %c0] : tensor<2x1x32x64xf32> -> memref<?x?x?x?xf32>
  ism.return
}

// -----

// A broadcast's source (and the expand_dims that makes it) gets the
// broadcast result's layout sliced to its shape, so that each thread already
// holds what its share of the result needs.
// CHECK: #[[$ROW3:.*]] = #ism.blocked<{sizePerThread = [1, 1, 8], threadsPerWarp = [1, 4, 8], warpsPerCTA = [1, 4, 1], order = [2, 1, 0]}>
// CHECK: #[[$ROW2:.*]] = #ism.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-LABEL: ism.kernel @broadcast_source
// CHECK: ism.load {{.*}} -> tensor<1x64xf32, #[[$ROW2]]>
// CHECK: ism.expand_dims {{.*}} : tensor<1x64xf32, #[[$ROW2]]> -> tensor<1x1x64xf32, #[[$ROW3]]>
// CHECK: ism.broadcast {{.*}} : tensor<1x1x64xf32, #[[$ROW3]]> -> tensor<1x32x64xf32, #[[$ROW3]]>
ism.kernel @broadcast_source(%x: memref<?x?x?xbf16>, %c: memref<?x?xf32>, %y: memref<?x?x?xf32>) {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0, %c0, %c0] : memref<?x?x?xbf16> -> tensor<1x32x64xbf16>
  %tf = arith.extf %t : tensor<1x32x64xbf16> to tensor<1x32x64xf32>
  %r = ism.load %c[%c0, %c0] : memref<?x?xf32> -> tensor<1x64xf32>
  %e = ism.expand_dims %r axis = 1 : tensor<1x64xf32> -> tensor<1x1x64xf32>
  %b = ism.broadcast %e : tensor<1x1x64xf32> -> tensor<1x32x64xf32>
  %p = arith.mulf %tf, %b : tensor<1x32x64xf32>
  ism.store %p, %y[%c0, %c0, %c0] : tensor<1x32x64xf32> -> memref<?x?x?xf32>
  ism.return
}

// -----

// Reductions that stay within a warp keep their totals where the source's
// threads hold them: the row sums of a 64x128 tile whose rows lie within
// a warp's 16 lanes are the #ism.slice of its layout, and so is the
// elementwise math on them, the loop that carries them and the splat
// constant they meet; the expand_dims + broadcast that brings them back
// to the rows takes the tile's layout with one column a thread, with no
// ism.convert_layout. The sum over the 4 warps' rows (axis 0) crosses
// warps: it keeps the blocked layout of its shape.
// CHECK-DAG: #[[$TILE:.*]] = #ism.blocked<{sizePerThread = [1, 8], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-DAG: #[[$ROWS:.*]] = #ism.slice<{dim = 1, parent = #[[$TILE]]}>
// CHECK-DAG: #[[$COL:.*]] = #ism.blocked<{sizePerThread = [1, 1], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK-LABEL: ism.kernel @rows_in_warps
// CHECK-NOT: ism.convert_layout
// CHECK: arith.constant dense<0.000000e+00> : tensor<64xf32, #[[$ROWS]]>
// CHECK: scf.for {{.*}} -> (tensor<64xf32, #[[$ROWS]]>)
// CHECK: ism.reduce {{.*}} axis = 1 : tensor<64x128xf32, #[[$TILE]]> -> tensor<64xf32, #[[$ROWS]]>
// CHECK: arith.addf {{.*}} : tensor<64xf32, #[[$ROWS]]>
// CHECK: ism.expand_dims {{.*}} : tensor<64xf32, #[[$ROWS]]> -> tensor<64x1xf32, #[[$COL]]>
// CHECK: ism.broadcast {{.*}} : tensor<64x1xf32, #[[$COL]]> -> tensor<64x128xf32, #[[$TILE]]>
// CHECK: ism.reduce {{.*}} axis = 0 : tensor<64x128xf32, #[[$TILE]]> -> tensor<128xf32, #blocked{{[0-9]*}}>
ism.kernel @rows_in_warps(%x: memref<?x?xbf16>, %y: memref<?xf32>,
                          %n: index) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant dense<0.0> : tensor<64xf32>
  %sums = scf.for %i = %c0 to %n step %c64 iter_args(%acc = %zero)
      -> (tensor<64xf32>) {
    %t = ism.load %x[%i, %c0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %f = arith.extf %t : tensor<64x128xbf16> to tensor<64x128xf32>
    %r = ism.reduce %f axis = 1 : tensor<64x128xf32> -> tensor<64xf32> {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      ism.yield %s : f32
    }
    %next = arith.addf %acc, %r : tensor<64xf32>
    scf.yield %next : tensor<64xf32>
  }
  %t = ism.load %x[%c0, %c0] : memref<?x?xbf16> -> tensor<64x128xbf16>
  %f = arith.extf %t : tensor<64x128xbf16> to tensor<64x128xf32>
  %e = ism.expand_dims %sums axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %b = ism.broadcast %e : tensor<64x1xf32> -> tensor<64x128xf32>
  %p = arith.mulf %f, %b : tensor<64x128xf32>
  %c = ism.reduce %p axis = 0 : tensor<64x128xf32> -> tensor<128xf32> {
  ^bb0(%a: f32, %b2: f32):
    %s = arith.addf %a, %b2 : f32
    ism.yield %s : f32
  }
  ism.store %c, %y[%c0] : tensor<128xf32> -> memref<?xf32>
  ism.return
}
