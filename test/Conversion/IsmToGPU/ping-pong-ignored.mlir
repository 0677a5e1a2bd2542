// RUN: ism-opt %s --split-input-file --ism-assign-layouts --ism-accelerate-dot=chip=sm_90a --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu -verify-diagnostics -o /dev/null
// RUN: ism-opt %s --split-input-file --ism-assign-layouts --ism-accelerate-dot=chip=sm_90a --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu 2>/dev/null | FileCheck %s

// ping_pong = true where the warpgroups cannot take turns: a warning
// naming why, and a kernel without turns (AsyncOperands.cpp).

// An iteration that waits for its first product (S) before it issues the
// second (P V uses the softmax of S): a turn held across that wait would
// serialise the warpgroups, so they take none.
// CHECK-LABEL: gpu.func @serial
// CHECK: nvvm.setmaxregister  increase
// CHECK-NOT: nvvm.barrier.arrive
// CHECK: } {ism.ring_split}
ism.kernel @serial(%Q: memref<?x?x?xbf16>, %K: memref<?x?x?xbf16>, %V: memref<?x?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 8 : i32, ping_pong = true} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %bh = ism.program_id y : index
  %S = memref.dim %K, %c1 : memref<?x?x?xbf16>
  %q3 = ism.load %Q[%bh, %c0, %c0] : memref<?x?x?xbf16> -> tensor<1x128x64xbf16>
  %q = ism.reshape %q3 : tensor<1x128x64xbf16> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  // expected-warning @+1 {{ping_pong = true: the warpgroups take no turns in this kernel, as this loop waits for one of its products (or a barrier) before issuing the next}}
  %r = scf.for %n = %c0 to %S step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32>) {
    %k3 = ism.load %K[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %k = ism.reshape %k3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = ism.dot %q, %kt, %zero : tensor<128x64xbf16> * tensor<64x64xbf16> -> tensor<128x64xf32>
    %mx = ism.reduce %s axis = 1 : tensor<128x64xf32> -> tensor<128xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.maximumf %a, %b : f32
      ism.yield %x : f32
    }
    %mx2 = ism.expand_dims %mx axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %mxb = ism.broadcast %mx2 : tensor<128x1xf32> -> tensor<128x64xf32>
    %sh = arith.subf %s, %mxb : tensor<128x64xf32>
    %p = math.exp %sh : tensor<128x64xf32>
    %p16 = arith.truncf %p : tensor<128x64xf32> to tensor<128x64xbf16>
    %v3 = ism.load %V[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %v = ism.reshape %v3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %acc2 = ism.dot %p16, %v, %acc : tensor<128x64xbf16> * tensor<64x64xbf16> -> tensor<128x64xf32>
    scf.yield %acc2 : tensor<128x64xf32>
  }
  ism.store %r, %O[%c0, %c0] : tensor<128x64xf32> -> memref<?x?xf32>
  ism.return
}


// -----

// No producer warpgroup (ring_producer = false): every thread fills the
// ring behind a CTA barrier, and there is nothing to take turns at.
// CHECK-LABEL: gpu.func @no_producer
// CHECK-NOT: nvvm.barrier.arrive
// CHECK: gpu.return
// expected-warning @+1 {{ping_pong = true has no effect here: the warpgroups take turns only where a producer warpgroup fills the ring}}
ism.kernel @no_producer(%Q: memref<?x?x?xbf16>, %K: memref<?x?x?xbf16>, %V: memref<?x?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 8 : i32, ring_producer = false, ping_pong = true} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %bh = ism.program_id y : index
  %S = memref.dim %K, %c1 : memref<?x?x?xbf16>
  %q3 = ism.load %Q[%bh, %c0, %c0] : memref<?x?x?xbf16> -> tensor<1x128x64xbf16>
  %q = ism.reshape %q3 : tensor<1x128x64xbf16> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %r = scf.for %n = %c0 to %S step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32>) {
    %k3 = ism.load %K[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %k = ism.reshape %k3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = ism.dot %q, %kt, %zero : tensor<128x64xbf16> * tensor<64x64xbf16> -> tensor<128x64xf32>
    %mx = ism.reduce %s axis = 1 : tensor<128x64xf32> -> tensor<128xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.maximumf %a, %b : f32
      ism.yield %x : f32
    }
    %mx2 = ism.expand_dims %mx axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %mxb = ism.broadcast %mx2 : tensor<128x1xf32> -> tensor<128x64xf32>
    %sh = arith.subf %s, %mxb : tensor<128x64xf32>
    %p = math.exp %sh : tensor<128x64xf32>
    %p16 = arith.truncf %p : tensor<128x64xf32> to tensor<128x64xbf16>
    %v3 = ism.load %V[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %v = ism.reshape %v3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %acc2 = ism.dot %p16, %v, %acc : tensor<128x64xbf16> * tensor<64x64xbf16> -> tensor<128x64xf32>
    scf.yield %acc2 : tensor<128x64xf32>
  }
  ism.store %r, %O[%c0, %c0] : tensor<128x64xf32> -> memref<?x?xf32>
  ism.return
}


// -----

// One warpgroup (4 warps) with its producer: no one to take turns with.
// CHECK-LABEL: gpu.func @one_group
// CHECK-NOT: nvvm.barrier.arrive
// CHECK: gpu.return
// expected-warning @+1 {{ping_pong = true has no effect with one warpgroup (num_warps = 4): it needs two or more to take turns}}
ism.kernel @one_group(%Q: memref<?x?x?xbf16>, %K: memref<?x?x?xbf16>, %V: memref<?x?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 4 : i32, ring_producer = true, ping_pong = true} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %bh = ism.program_id y : index
  %S = memref.dim %K, %c1 : memref<?x?x?xbf16>
  %q3 = ism.load %Q[%bh, %c0, %c0] : memref<?x?x?xbf16> -> tensor<1x128x64xbf16>
  %q = ism.reshape %q3 : tensor<1x128x64xbf16> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %r = scf.for %n = %c0 to %S step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32>) {
    %k3 = ism.load %K[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %k = ism.reshape %k3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = ism.dot %q, %kt, %zero : tensor<128x64xbf16> * tensor<64x64xbf16> -> tensor<128x64xf32>
    %mx = ism.reduce %s axis = 1 : tensor<128x64xf32> -> tensor<128xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.maximumf %a, %b : f32
      ism.yield %x : f32
    }
    %mx2 = ism.expand_dims %mx axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %mxb = ism.broadcast %mx2 : tensor<128x1xf32> -> tensor<128x64xf32>
    %sh = arith.subf %s, %mxb : tensor<128x64xf32>
    %p = math.exp %sh : tensor<128x64xf32>
    %p16 = arith.truncf %p : tensor<128x64xf32> to tensor<128x64xbf16>
    %v3 = ism.load %V[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %v = ism.reshape %v3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %acc2 = ism.dot %p16, %v, %acc : tensor<128x64xbf16> * tensor<64x64xbf16> -> tensor<128x64xf32>
    scf.yield %acc2 : tensor<128x64xf32>
  }
  ism.store %r, %O[%c0, %c0] : tensor<128x64xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// persistent = true on a kernel without a producer warpgroup: a warning,
// and the kernel runs one CTA per program as written.
// CHECK-LABEL: gpu.func @no_producer_persistent
// CHECK-NOT: ism.persistent
// CHECK: nvvm.cp.async
// expected-warning @+1 {{persistent = true has no effect here: a persistent grid is for kernels whose products' operands a producer warpgroup copies ahead (ring_producer, two warpgroups or more; a K-loop GEMM on wgmma is persistent already)}}
ism.kernel @no_producer_persistent(%Q: memref<?x?x?xbf16>, %K: memref<?x?x?xbf16>, %V: memref<?x?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 8 : i32, ring_producer = false, persistent = true} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %bh = ism.program_id y : index
  %S = memref.dim %K, %c1 : memref<?x?x?xbf16>
  %q3 = ism.load %Q[%bh, %c0, %c0] : memref<?x?x?xbf16> -> tensor<1x128x64xbf16>
  %q = ism.reshape %q3 : tensor<1x128x64xbf16> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %r = scf.for %n = %c0 to %S step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32>) {
    %k3 = ism.load %K[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %k = ism.reshape %k3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = ism.dot %q, %kt, %zero : tensor<128x64xbf16> * tensor<64x64xbf16> -> tensor<128x64xf32>
    %mx = ism.reduce %s axis = 1 : tensor<128x64xf32> -> tensor<128xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.maximumf %a, %b : f32
      ism.yield %x : f32
    }
    %mx2 = ism.expand_dims %mx axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %mxb = ism.broadcast %mx2 : tensor<128x1xf32> -> tensor<128x64xf32>
    %sh = arith.subf %s, %mxb : tensor<128x64xf32>
    %p = math.exp %sh : tensor<128x64xf32>
    %p16 = arith.truncf %p : tensor<128x64xf32> to tensor<128x64xbf16>
    %v3 = ism.load %V[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %v = ism.reshape %v3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %acc2 = ism.dot %p16, %v, %acc : tensor<128x64xbf16> * tensor<64x64xbf16> -> tensor<128x64xf32>
    scf.yield %acc2 : tensor<128x64xf32>
  }
  ism.store %r, %O[%c0, %c0] : tensor<128x64xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// persistent = true with operands TMA cannot describe (strided): a
// warning, and the producer fills the ring element by element, one CTA per
// program.
// CHECK-LABEL: gpu.func @persistent_no_tma
// CHECK-NOT: ism.persistent
// CHECK: nvvm.setmaxregister  decrease 40
// expected-warning @+1 {{persistent = true has no effect here: the ring's tiles cannot be described for TMA (row-major memrefs of rank 5 at most, a multiple of 64 columns), which a persistent grid needs}}
ism.kernel @persistent_no_tma(%Q: memref<?x?x?xbf16>, %K: memref<?x?x?xbf16, strided<[?, ?, 1], offset: ?>>, %V: memref<?x?x?xbf16, strided<[?, ?, 1], offset: ?>>, %O: memref<?x?xf32>) attributes {num_warps = 8 : i32, persistent = true} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %bh = ism.program_id y : index
  %S = memref.dim %K, %c1 : memref<?x?x?xbf16, strided<[?, ?, 1], offset: ?>>
  %q3 = ism.load %Q[%bh, %c0, %c0] : memref<?x?x?xbf16> -> tensor<1x128x64xbf16>
  %q = ism.reshape %q3 : tensor<1x128x64xbf16> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %r = scf.for %n = %c0 to %S step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32>) {
    %k3 = ism.load %K[%bh, %n, %c0] : memref<?x?x?xbf16, strided<[?, ?, 1], offset: ?>> -> tensor<1x64x64xbf16>
    %k = ism.reshape %k3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = ism.dot %q, %kt, %zero : tensor<128x64xbf16> * tensor<64x64xbf16> -> tensor<128x64xf32>
    %p = math.exp %s : tensor<128x64xf32>
    %mx = ism.reduce %p axis = 1 : tensor<128x64xf32> -> tensor<128xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.maximumf %a, %b : f32
      ism.yield %x : f32
    }
    %mx2 = ism.expand_dims %mx axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %mxb = ism.broadcast %mx2 : tensor<128x1xf32> -> tensor<128x64xf32>
    %pn = arith.divf %p, %mxb : tensor<128x64xf32>
    %p16 = arith.truncf %pn : tensor<128x64xf32> to tensor<128x64xbf16>
    %v3 = ism.load %V[%bh, %n, %c0] : memref<?x?x?xbf16, strided<[?, ?, 1], offset: ?>> -> tensor<1x64x64xbf16>
    %v = ism.reshape %v3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %acc2 = ism.dot %p16, %v, %acc : tensor<128x64xbf16> * tensor<64x64xbf16> -> tensor<128x64xf32>
    scf.yield %acc2 : tensor<128x64xf32>
  }
  ism.store %r, %O[%c0, %c0] : tensor<128x64xf32> -> memref<?x?xf32>
  ism.return
}
