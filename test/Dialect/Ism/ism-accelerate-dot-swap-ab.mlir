// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot | FileCheck %s

// Swap-AB: BLOCK_M = 16 is below wgmma's 64 rows, but the product swapped,
// C^T = B^T A^T (128 x 16), fits: the loop carries C^T in the wgmma layout
// (one m64n16 instruction per 64 rows of it, two per warpgroup), its dot
// multiplies B's tile transposed by A's transposed (both read from the
// shared tiles the loads fill: B's MN-major, A's K-major), and the epilogue
// stores the transpose of the loop's result.
// CHECK-DAG: #[[MMA:.*]] = #ism.mma<{version = 3, warpsPerCTA = [4, 1], instrShape = [16, 16, 16]}>
// CHECK-DAG: #[[MMA64:.*]] = #ism.mma<{version = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
// CHECK-DAG: #[[MMA128:.*]] = #ism.mma<{version = 3, warpsPerCTA = [8, 1], instrShape = [16, 128, 16]}>
// CHECK-DAG: #[[MMA8:.*]] = #ism.mma<{version = 3, warpsPerCTA = [4, 1], instrShape = [16, 8, 16]}>
// CHECK-DAG: #[[V2:.*]] = #ism.mma<{version = 2
// CHECK-DAG: #[[SH:.*]] = #ism.shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
// CHECK-DAG: #[[SHT:.*]] = #ism.shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]}>
// CHECK: ism.kernel @skinny
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<128x16xf32, #[[MMA]]>
// CHECK: %[[ACC:.*]] = scf.for {{.*}} iter_args(%[[C:.*]] = %[[ZERO]]) -> (tensor<128x16xf32, #[[MMA]]>)
// CHECK: %[[A:.*]] = ism.load %arg0{{.*}} -> tensor<16x64xbf16, #[[SH]]>
// CHECK: %[[B:.*]] = ism.load %arg1{{.*}} -> tensor<64x128xbf16, #[[SH]]>
// CHECK: %[[BT:.*]] = ism.trans %[[B]] order = [1, 0] : tensor<64x128xbf16, #[[SH]]> -> tensor<128x64xbf16, #[[SHT]]>
// CHECK: %[[AT:.*]] = ism.trans %[[A]] order = [1, 0] : tensor<16x64xbf16, #[[SH]]> -> tensor<64x16xbf16, #[[SHT]]>
// CHECK: ism.dot %[[BT]], %[[AT]], %[[C]] : {{.*}} -> tensor<128x16xf32, #[[MMA]]>
// CHECK: } {ism.swap_ab}
// CHECK: %[[CV:.*]] = ism.convert_layout %[[ACC]] : tensor<128x16xf32, #[[MMA]]>
// CHECK: %[[T:.*]] = ism.trans %[[CV]] order = [1, 0] : tensor<128x16xf32, {{.*}}> -> tensor<16x128xf32,
// CHECK: ism.store {{.*}} : tensor<16x128xbf16,
// (On other chips nothing is swapped: ism-accelerate-dot-mma-sync.mlir.)
ism.kernel @skinny(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 4 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pm, %c16 : index
  %n0 = arith.muli %pn, %c128 : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<16x128xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc = %zero) -> (tensor<16x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<16x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<16x64xbf16> * tensor<64x128xbf16> -> tensor<16x128xf32>
    scf.yield %d : tensor<16x128xf32>
  }
  %out = arith.truncf %acc : tensor<16x128xf32> to tensor<16x128xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<16x128xbf16> -> memref<?x?xbf16>
  ism.return
}

// swap_ab = 1 swaps a product that fits wgmma as it is too (BLOCK_M = 64:
// C^T is 128 x 64); swap_ab = 0 keeps a 16-row one as it is (mma.sync).
// CHECK: ism.kernel @forced
// CHECK: ism.dot {{.*}} : tensor<128x64xbf16, #{{.*}}> * tensor<64x64xbf16, #{{.*}}> -> tensor<128x64xf32, #[[MMA64]]>
// CHECK: } {ism.swap_ab}
// CHECK: ism.kernel @never
// CHECK-NOT: ism.trans
// CHECK: ism.dot {{.*}} -> tensor<16x128xf32, #[[V2]]>
ism.kernel @forced(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xf32>) attributes {num_warps = 4 : i32, swap_ab = 1 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant dense<0.0> : tensor<64x128xf32>
  %acc = scf.for %k = %c0 to %c1024 step %c64 iter_args(%acc = %zero) -> (tensor<64x128xf32>) {
    %a = ism.load %A[%c0, %k] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %b = ism.load %B[%k, %c0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<64x64xbf16> * tensor<64x128xbf16> -> tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  ism.store %acc, %C[%c0, %c0] : tensor<64x128xf32> -> memref<?x?xf32>
  ism.return
}
ism.kernel @never(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xf32>) attributes {num_warps = 4 : i32, swap_ab = 0 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant dense<0.0> : tensor<16x128xf32>
  %acc = scf.for %k = %c0 to %c1024 step %c64 iter_args(%acc = %zero) -> (tensor<16x128xf32>) {
    %a = ism.load %A[%c0, %k] : memref<?x?xbf16> -> tensor<16x64xbf16>
    %b = ism.load %B[%k, %c0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<16x64xbf16> * tensor<64x128xbf16> -> tensor<16x128xf32>
    scf.yield %d : tensor<16x128xf32>
  }
  ism.store %acc, %C[%c0, %c0] : tensor<16x128xf32> -> memref<?x?xf32>
  ism.return
}

// B given as N x K and transposed in the loop (x @ W^T): wgmma reads the
// loaded [128, 64] tile K-major, nothing is swapped. Swapped (BLOCK_M = 8),
// the transpose of the transpose is the loaded tile itself, and both
// operands are K-major: the dot takes W's tile and A's transposed, an
// m64n8 instruction per 64 rows.
// CHECK: ism.kernel @linear(
// CHECK: %[[W:.*]] = ism.load %arg1{{.*}} -> tensor<128x64xbf16, #[[SH:.*]]>
// CHECK: %[[WT:.*]] = ism.trans %[[W]] order = [1, 0] : tensor<128x64xbf16, #[[SH]]> -> tensor<64x128xbf16, #[[SHT:.*]]>
// CHECK: ism.dot %{{.*}}, %[[WT]], {{.*}} -> tensor<128x128xf32, #[[MMA128]]>
// CHECK-NOT: ism.swap_ab
// CHECK: ism.kernel @linear_swapped
// CHECK: %[[A:.*]] = ism.load %arg0{{.*}} -> tensor<8x64xbf16
// CHECK: %[[W:.*]] = ism.load %arg1{{.*}} -> tensor<64x64xbf16
// CHECK: %[[AT:.*]] = ism.trans %[[A]] order = [1, 0]
// CHECK: ism.dot %[[W]], %[[AT]], {{.*}} -> tensor<64x8xf32, #[[MMA8]]>
// CHECK: } {ism.swap_ab}
ism.kernel @linear(%A: memref<?x?xbf16>, %W: memref<?x?xbf16>, %C: memref<?x?xf32>) attributes {num_warps = 8 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %c1024 step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) {
    %a = ism.load %A[%c0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %w = ism.load %W[%c0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %wt = ism.trans %w order = [1, 0] : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %wt, %acc : tensor<128x64xbf16> * tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  ism.store %acc, %C[%c0, %c0] : tensor<128x128xf32> -> memref<?x?xf32>
  ism.return
}
ism.kernel @linear_swapped(%A: memref<?x?xbf16>, %W: memref<?x?xbf16>, %C: memref<?x?xf32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant dense<0.0> : tensor<8x64xf32>
  %acc = scf.for %k = %c0 to %c1024 step %c64 iter_args(%acc = %zero) -> (tensor<8x64xf32>) {
    %a = ism.load %A[%c0, %k] : memref<?x?xbf16> -> tensor<8x64xbf16>
    %w = ism.load %W[%c0, %k] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %wt = ism.trans %w order = [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %d = ism.dot %a, %wt, %acc : tensor<8x64xbf16> * tensor<64x64xbf16> -> tensor<8x64xf32>
    scf.yield %d : tensor<8x64xf32>
  }
  ism.store %acc, %C[%c0, %c0] : tensor<8x64xf32> -> memref<?x?xf32>
  ism.return
}
