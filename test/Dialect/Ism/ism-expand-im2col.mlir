// RUN: ism-opt %s -split-input-file -ism-expand-im2col=chip=sm_90a | FileCheck %s
// RUN: ism-opt %s -split-input-file -ism-expand-im2col=chip=sm_80 | FileCheck %s --check-prefix=SM80

// A conv K loop's im2col A stays for wgmma on sm_90a; on sm_80 it becomes
// its definition: the pixels' and channels' index tiles, the input
// coordinates (stride 2, padding 1, dilation 1, tap (r, s)), and a gather
// masked to the pixels that exist.
// CHECK-LABEL: ism.kernel @conv
// CHECK: ism.im2col %{{.*}}[%{{.*}}, %{{.*}}] tap[%{{.*}}, %{{.*}}]
// CHECK-NOT: ism.gather
// SM80-LABEL: ism.kernel @conv
// SM80-NOT: ism.im2col
// SM80: ism.range 0 to 128 : tensor<128xi32>
// SM80: ism.range 0 to 64 : tensor<64xi32>
// SM80: arith.divsi
// SM80: arith.remsi
// SM80: %[[IN:.*]] = arith.cmpi slt
// SM80: ism.gather %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] mask %[[IN]] : memref<?x?x?x?xbf16>[tensor<128x64xi32>, tensor<128x64xi32>, tensor<128x64xi32>, tensor<128x64xi32>] -> tensor<128x64xbf16>
ism.kernel @conv(%x: memref<?x?x?x?xbf16>, %f: memref<?x?xbf16>, %y: memref<?x?xf32>)
    attributes {num_warps = 8 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  %c3 = arith.constant 3 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %t = %c0 to %c9 step %c1 iter_args(%acc = %zero) -> (tensor<128x128xf32>) {
    %r = arith.divui %t, %c3 : index
    %s = arith.remui %t, %c3 : index
    %k = arith.muli %t, %c64 : index
    %a = ism.im2col %x[%c0, %c0] tap [%r, %s] {filter = array<i64: 3, 3>,
        stride = array<i64: 2, 2>, padding = array<i64: 1, 1>,
        dilation = array<i64: 1, 1>} : memref<?x?x?x?xbf16> -> tensor<128x64xbf16>
    %ft = ism.load %f[%c0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.trans %ft order = [1, 0] : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  ism.store %acc, %y[%c0, %c0] : tensor<128x128xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// Outside a K loop an im2col is a gather on every chip.
// CHECK-LABEL: ism.kernel @alone
// CHECK-NOT: ism.im2col
// CHECK: ism.gather
ism.kernel @alone(%x: memref<?x?x?x?xf32>, %y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %a = ism.im2col %x[%c0, %c0] tap [%c0, %c0] {filter = array<i64: 1, 1>,
      stride = array<i64: 1, 1>, padding = array<i64: 0, 0>,
      dilation = array<i64: 1, 1>} : memref<?x?x?x?xf32> -> tensor<64x32xf32>
  ism.store %a, %y[%c0, %c0] : tensor<64x32xf32> -> memref<?x?xf32>
  ism.return
}
