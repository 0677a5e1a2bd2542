// RUN: ism-opt %s -ism-assign-layouts -convert-ism-to-gpu -split-input-file | FileCheck %s

// Gathers and scatters move a thread's consecutive registers with one
// vector access when the index tiles make them consecutive memory: the
// last dimension's index counts up by one along the layout's fast
// dimension (a range plus values constant along it), and the other indices
// and the mask are constant along it (rows picked by index, as an SpMM or
// an embedding lookup does). Each thread checks at run time that the last
// dimension is contiguous and that each of its groups is aligned and wholly
// in or out of bounds; otherwise it falls back to element accesses.

// A 32 x 128 f32 tile on 4 warps: 4 consecutive columns a thread, 8 rows.
// The columns start at the program id, which may not be a multiple of 4:
// each thread tests each of its groups (alignment, bounds) first.
// CHECK-LABEL: gpu.func @rows
// CHECK: arith.remui %{{.*}}, %{{.*}} : i64
// CHECK: scf.if %{{.*}} -> (vector<32xf32>) {
// CHECK-COUNT-8: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: } else {
// CHECK-COUNT-32: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK-COUNT-8: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK-COUNT-32: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<1>
// CHECK: gpu.return
ism.kernel @rows(%t: memref<?x?xf32>, %ids: memref<?xi32>, %y: memref<?x?xf32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %r = ism.load %ids[%c0] : memref<?xi32> -> tensor<32xi32>
  %re = ism.expand_dims %r axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
  %rb = ism.broadcast %re : tensor<32x1xi32> -> tensor<32x128xi32>
  %cols = ism.range 0 to 128 : tensor<128xi32>
  %pid = ism.program_id x : index
  %p32 = arith.index_cast %pid : index to i32
  %ps = ism.splat %p32 : i32 -> tensor<128xi32>
  %cs = arith.addi %cols, %ps : tensor<128xi32>
  %ce = ism.expand_dims %cs axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  %cb = ism.broadcast %ce : tensor<1x128xi32> -> tensor<32x128xi32>
  %g = ism.gather %t[%rb, %cb] : memref<?x?xf32>[tensor<32x128xi32>, tensor<32x128xi32>] -> tensor<32x128xf32>
  ism.scatter %g, %y[%rb, %cb] : tensor<32x128xf32> -> memref<?x?xf32>[tensor<32x128xi32>, tensor<32x128xi32>]
  ism.return
}

// -----

// Columns from a multiple of 128 (pid x 128, a range from 0): every group
// starts at a multiple of 4, so alignment and whole-group bounds follow
// from uniform facts of the memref (base, row stride, column count); no
// per-thread test runs before the loads.
// CHECK-LABEL: gpu.func @rows_aligned
// CHECK-NOT: arith.remui %{{.*}}, %{{.*}} : i64
// CHECK: arith.remui %{{.*}}, %{{.*}} : index
// CHECK: scf.if %{{.*}} -> (vector<32xf32>) {
// CHECK-COUNT-8: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: } else {
// CHECK-NOT: arith.remui %{{.*}}, %{{.*}} : i64
// CHECK: gpu.return
ism.kernel @rows_aligned(%t: memref<?x?xf32>, %ids: memref<?xi32>, %y: memref<?x?xf32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %r = ism.load %ids[%c0] : memref<?xi32> -> tensor<32xi32>
  %re = ism.expand_dims %r axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
  %rb = ism.broadcast %re : tensor<32x1xi32> -> tensor<32x128xi32>
  %cols = ism.range 0 to 128 : tensor<128xi32>
  %pid = ism.program_id x : index
  %n0 = arith.muli %pid, %c128 : index
  %n32 = arith.index_cast %n0 : index to i32
  %ns = ism.splat %n32 : i32 -> tensor<128xi32>
  %cs = arith.addi %cols, %ns : tensor<128xi32>
  %ce = ism.expand_dims %cs axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  %cb = ism.broadcast %ce : tensor<1x128xi32> -> tensor<32x128xi32>
  %g = ism.gather %t[%rb, %cb] : memref<?x?xf32>[tensor<32x128xi32>, tensor<32x128xi32>] -> tensor<32x128xf32>
  ism.store %g, %y[%c0, %c0] : tensor<32x128xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// A mask constant along the columns (one flag a row) keeps the vectors;
// bf16 moves 8 elements (16 bytes) at a time.
// CHECK-LABEL: gpu.func @masked_rows_bf16
// CHECK-COUNT-2: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xbf16>
// CHECK: } else {
// CHECK: gpu.return
ism.kernel @masked_rows_bf16(%t: memref<?x?xbf16>, %ids: memref<?xi32>, %y: memref<?x?xbf16>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %r = ism.load %ids[%c0] : memref<?xi32> -> tensor<8xi32>
  %zero = arith.constant dense<0> : tensor<8xi32>
  %live = arith.cmpi sge, %r, %zero : tensor<8xi32>
  %le = ism.expand_dims %live axis = 1 : tensor<8xi1> -> tensor<8x1xi1>
  %lb = ism.broadcast %le : tensor<8x1xi1> -> tensor<8x256xi1>
  %re = ism.expand_dims %r axis = 1 : tensor<8xi32> -> tensor<8x1xi32>
  %rb = ism.broadcast %re : tensor<8x1xi32> -> tensor<8x256xi32>
  %cols = ism.range 0 to 256 : tensor<256xi32>
  %ce = ism.expand_dims %cols axis = 0 : tensor<256xi32> -> tensor<1x256xi32>
  %cb = ism.broadcast %ce : tensor<1x256xi32> -> tensor<8x256xi32>
  %g = ism.gather %t[%rb, %cb] mask %lb : memref<?x?xbf16>[tensor<8x256xi32>, tensor<8x256xi32>] -> tensor<8x256xbf16>
  ism.store %g, %y[%c0, %c0] : tensor<8x256xbf16> -> memref<?x?xbf16>
  ism.return
}

// -----

// Element accesses only: the column index is loaded (nothing known of it),
// strided (range x 2), or the mask varies along the columns.
// CHECK-LABEL: gpu.func @loaded_cols
// CHECK-NOT: !llvm.ptr<1> -> vector<4xf32>
// CHECK: gpu.return
ism.kernel @loaded_cols(%t: memref<?x?xf32>, %ids: memref<?x?xi32>, %y: memref<?x?xf32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %rows = ism.range 0 to 32 : tensor<32xi32>
  %re = ism.expand_dims %rows axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
  %rb = ism.broadcast %re : tensor<32x1xi32> -> tensor<32x128xi32>
  %cb = ism.load %ids[%c0, %c0] : memref<?x?xi32> -> tensor<32x128xi32>
  %g = ism.gather %t[%rb, %cb] : memref<?x?xf32>[tensor<32x128xi32>, tensor<32x128xi32>] -> tensor<32x128xf32>
  ism.store %g, %y[%c0, %c0] : tensor<32x128xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// CHECK-LABEL: gpu.func @strided_cols
// CHECK-NOT: !llvm.ptr<1> -> vector<4xf32>
// CHECK: gpu.return
ism.kernel @strided_cols(%t: memref<?x?xf32>, %y: memref<?x?xf32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %rows = ism.range 0 to 32 : tensor<32xi32>
  %re = ism.expand_dims %rows axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
  %rb = ism.broadcast %re : tensor<32x1xi32> -> tensor<32x128xi32>
  %cols = ism.range 0 to 128 : tensor<128xi32>
  %two = arith.constant dense<2> : tensor<128xi32>
  %c2 = arith.muli %cols, %two : tensor<128xi32>
  %ce = ism.expand_dims %c2 axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  %cb = ism.broadcast %ce : tensor<1x128xi32> -> tensor<32x128xi32>
  %g = ism.gather %t[%rb, %cb] : memref<?x?xf32>[tensor<32x128xi32>, tensor<32x128xi32>] -> tensor<32x128xf32>
  ism.store %g, %y[%c0, %c0] : tensor<32x128xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// CHECK-LABEL: gpu.func @masked_cols
// CHECK-NOT: !llvm.ptr<1> -> vector<4xf32>
// CHECK: gpu.return
ism.kernel @masked_cols(%t: memref<?x?xf32>, %y: memref<?x?xf32>, %n: i32) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %rows = ism.range 0 to 32 : tensor<32xi32>
  %re = ism.expand_dims %rows axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
  %rb = ism.broadcast %re : tensor<32x1xi32> -> tensor<32x128xi32>
  %cols = ism.range 0 to 128 : tensor<128xi32>
  %ce = ism.expand_dims %cols axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  %cb = ism.broadcast %ce : tensor<1x128xi32> -> tensor<32x128xi32>
  %ns = ism.splat %n : i32 -> tensor<32x128xi32>
  %m = arith.cmpi slt, %cb, %ns : tensor<32x128xi32>
  %g = ism.gather %t[%rb, %cb] mask %m : memref<?x?xf32>[tensor<32x128xi32>, tensor<32x128xi32>] -> tensor<32x128xf32>
  ism.store %g, %y[%c0, %c0] : tensor<32x128xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// The row index runs along the columns here (a transposed gather): the
// last dimension's index is not contiguous along the fast dimension.
// CHECK-LABEL: gpu.func @transposed
// CHECK-NOT: !llvm.ptr<1> -> vector<4xf32>
// CHECK: gpu.return
ism.kernel @transposed(%t: memref<?x?xf32>, %y: memref<?x?xf32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %rows = ism.range 0 to 32 : tensor<32xi32>
  %re = ism.expand_dims %rows axis = 1 : tensor<32xi32> -> tensor<32x1xi32>
  %rb = ism.broadcast %re : tensor<32x1xi32> -> tensor<32x128xi32>
  %cols = ism.range 0 to 128 : tensor<128xi32>
  %ce = ism.expand_dims %cols axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  %cb = ism.broadcast %ce : tensor<1x128xi32> -> tensor<32x128xi32>
  %g = ism.gather %t[%cb, %rb] : memref<?x?xf32>[tensor<32x128xi32>, tensor<32x128xi32>] -> tensor<32x128xf32>
  ism.store %g, %y[%c0, %c0] : tensor<32x128xf32> -> memref<?x?xf32>
  ism.return
}
