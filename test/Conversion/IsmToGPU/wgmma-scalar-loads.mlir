// RUN: ism-opt %s -split-input-file --ism-assign-layouts --ism-accelerate-dot --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu -verify-diagnostics | FileCheck %s

// A wgmma K loop whose tile offsets and K bound come from scalar loads of
// tables the kernel only reads (a grouped GEMM's slots): the producer
// warpgroup loads them too (once for its TMA path, once for its
// element-copy path), then the consumers.
// CHECK-LABEL: gpu.func @slots
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: memref.load %arg3[%{{.*}}] : memref<?xi32>
// CHECK: memref.load %arg4[%{{.*}}] : memref<?xi32>
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: memref.load %arg3[%{{.*}}] : memref<?xi32>
// CHECK: memref.load %arg4[%{{.*}}] : memref<?xi32>
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: memref.load %arg3[%{{.*}}] : memref<?xi32>
// CHECK: memref.load %arg4[%{{.*}}] : memref<?xi32>
// CHECK: nvvm.wgmma.mma_async
ism.kernel @slots(%x: memref<?x?xbf16>, %w: memref<?x?xbf16>, %y: memref<?x?xbf16>,
                  %rows: memref<?xi32>, %ks: memref<?xi32>) attributes {num_warps = 8 : i32} {
  %t = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %bk = arith.constant 64 : index
  %r = memref.load %rows[%t] : memref<?xi32>
  %kk = memref.load %ks[%t] : memref<?xi32>
  %m0 = arith.index_cast %r : i32 to index
  %K = arith.index_cast %kk : i32 to index
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<128x128xf32>) {
    %a = ism.load %x[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %w[%k, %c0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %o = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  ism.store %o, %y[%m0, %c0] : tensor<128x128xbf16> -> memref<?x?xbf16>
  ism.return
}

// -----

// A table the kernel also writes may change between the producer's load
// and the consumers': the offsets cannot be repeated.
ism.kernel @written(%x: memref<?x?xbf16>, %w: memref<?x?xbf16>, %y: memref<?x?xbf16>,
                    %rows: memref<?xi32>) attributes {num_warps = 8 : i32} {
  %t = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %K = memref.dim %x, %c0 : memref<?x?xbf16>
  // expected-error @+1 {{computes the K loop's bounds or tile offsets with side effects; the producer warpgroup cannot repeat it}}
  %r = memref.load %rows[%t] : memref<?xi32>
  %m0 = arith.index_cast %r : i32 to index
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) {
    %a = ism.load %x[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %w[%k, %c0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %o = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  ism.store %o, %y[%m0, %c0] : tensor<128x128xbf16> -> memref<?x?xbf16>
  %one = arith.constant dense<0> : tensor<1xi32>
  ism.store %one, %rows[%t] : tensor<1xi32> -> memref<?xi32>
  ism.return
}
