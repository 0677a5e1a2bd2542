// RUN: ism-opt %s -ism-assign-layouts -ism-pipeline-gathers -convert-ism-to-gpu -split-input-file -verify-diagnostics | FileCheck %s

// The gathers of a pipelined loop (ism-pipeline-gathers, gather_stages =
// 2) go through a ring
// of two slots in shared memory: 8 x 128 f32 on 128 threads is 8 elements
// (two 16-byte chunks) a thread, 4 KiB a slot. Where the thread's rows are
// aligned and in bounds each chunk is one cp.async (zero-filled when its
// row is outside B: the size operand), else each element is loaded and
// stored into the slot; the copies are committed as one group also when
// the loop does not run. In the loop, the wait keeps one younger group in
// flight and reads the thread's two chunks back from shared memory.
// CHECK-LABEL: gpu.func @rows
// CHECK-SAME: ism.shared_memory_bytes = 8192
// CHECK: scf.if
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = ca, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = ca, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: } else {
// CHECK-COUNT-8: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<3>
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for
// CHECK: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 1
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK-NOT: cp.async
// CHECK: scf.yield
ism.kernel @rows(%colind: memref<?xi32>, %B: memref<?x?xf32>,
                 %Y: memref<?x?xf32>, %n: index)
    attributes {num_warps = 4 : i32, gather_stages = 2 : i32} {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %cols = ism.range 0 to 128 : tensor<128xi32>
  %colsr = ism.expand_dims %cols axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  %colb = ism.broadcast %colsr : tensor<1x128xi32> -> tensor<8x128xi32>
  %zero = arith.constant dense<0.0> : tensor<8x128xf32>
  %acc = scf.for %k = %c0 to %n step %c8 iter_args(%acc = %zero)
      -> (tensor<8x128xf32>) {
    %ci = ism.load %colind[%k] : memref<?xi32> -> tensor<8xi32>
    %cie = ism.expand_dims %ci axis = 1 : tensor<8xi32> -> tensor<8x1xi32>
    %rowb = ism.broadcast %cie : tensor<8x1xi32> -> tensor<8x128xi32>
    %bt = ism.gather %B[%rowb, %colb] : memref<?x?xf32>[tensor<8x128xi32>,
        tensor<8x128xi32>] -> tensor<8x128xf32>
    %next = arith.addf %acc, %bt : tensor<8x128xf32>
    scf.yield %next : tensor<8x128xf32>
  }
  ism.store %acc, %Y[%c0, %c0] : tensor<8x128xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// Elements of a thread that are not consecutive in memory (a gather by
// loaded index, one element a register): every element is loaded and
// stored into the slot (16-bit elements: no cp.async of 2 bytes), and read
// back 8 at a time (16 bytes).
// CHECK-LABEL: gpu.func @scattered
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 2 : i64} : bf16, !llvm.ptr<3>
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 1
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
ism.kernel @scattered(%idx: memref<?xi32>, %A: memref<?xbf16>,
                      %Y: memref<?xf32>, %n: index)
    attributes {num_warps = 4 : i32, gather_stages = 2 : i32} {
  %c0 = arith.constant 0 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant dense<0.0> : tensor<1024xf32>
  %acc = scf.for %k = %c0 to %n step %c1024 iter_args(%acc = %zero)
      -> (tensor<1024xf32>) {
    %i = ism.load %idx[%k] : memref<?xi32> -> tensor<1024xi32>
    %a = ism.gather %A[%i] : memref<?xbf16>[tensor<1024xi32>] -> tensor<1024xbf16>
    %af = arith.extf %a : tensor<1024xbf16> to tensor<1024xf32>
    %next = arith.addf %acc, %af : tensor<1024xf32>
    scf.yield %next : tensor<1024xf32>
  }
  ism.store %acc, %Y[%c0] : tensor<1024xf32> -> memref<?xf32>
  ism.return
}

// -----

// The ops of one ring must agree on its tile and slots.
#b = #ism.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
ism.kernel @ring_sizes(%A: memref<?xf32>, %s: index)
    attributes {num_warps = 4 : i32} {
  %i = ism.range 0 to 128 : tensor<128xi32, #b>
  ism.async_gather %A[%i] slot %s {ring = 0 : i32, slots = 2 : i32} : memref<?xf32>[tensor<128xi32, #b>]
  // expected-error @+1 {{ring 0 holds 2 slots of 'tensor<256xf32, #ism.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>' here but 2 slots of 'tensor<128xf32, #ism.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>' elsewhere}}
  %t = ism.async_gather_wait ring 0 slot %s {slots = 2 : i32, pending = 0 : i32} : tensor<256xf32, #b>
  ism.return
}
