// RUN: ism-opt %s -split-input-file -verify-diagnostics -ism-expand-im2col=chip=sm_90a -ism-assign-layouts -ism-accelerate-dot=chip=sm_90a

// An im2col A tile is 128 bytes of channels (TMA im2col box rows).

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
        dilation = array<i64: 1, 1>} : memref<?x?x?x?xbf16> -> tensor<128x32xbf16>
    %ft = ism.load %f[%c0, %k] : memref<?x?xbf16> -> tensor<128x32xbf16>
    %b = ism.trans %ft order = [1, 0] : tensor<128x32xbf16> -> tensor<32x128xbf16>
    // expected-error @+1 {{a K loop whose A is an ism.im2col runs on wgmma only: an ism.im2col A tile is 128 bytes of channels wide (64 f16 or bf16)}}
    %d = ism.dot %a, %b, %acc : tensor<128x32xbf16> * tensor<32x128xbf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  ism.store %acc, %y[%c0, %c0] : tensor<128x128xf32> -> memref<?x?xf32>
  ism.return
}


// -----

// Swap-AB would read the im2col tile as wgmma's B.

ism.kernel @conv(%x: memref<?x?x?x?xbf16>, %f: memref<?x?xbf16>, %y: memref<?x?xf32>)
    attributes {num_warps = 8 : i32, swap_ab = 1 : i32} {
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
    // expected-error @+1 {{swap_ab = 1: a K loop whose A is an ism.im2col is not swapped}}
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  ism.store %acc, %y[%c0, %c0] : tensor<128x128xf32> -> memref<?x?xf32>
  ism.return
}

