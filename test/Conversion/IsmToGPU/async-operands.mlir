// RUN: ism-opt %s --split-input-file --ism-assign-layouts --ism-accelerate-dot=chip=sm_90a --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu | FileCheck %s

// The ring of the products' B operands (AsyncOperands.cpp; the default, 3
// stages, is in wgmma-product.mlir and mma-sync-product.mlir). The kernel's
// num_stages sets its stages: with 2, K and V (16 KiB a stage) are copied
// one iteration ahead, and each iteration waits for all of its copies.
// CHECK-LABEL: gpu.func @two_stages
// CHECK: memref.view {{.*}} to memref<33791xi8, #gpu.address_space<workgroup>>
// CHECK: nvvm.cp.async.commit.group
// CHECK-NOT: nvvm.cp.async.commit.group
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: nvvm.barrier0
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.wgmma.mma_async
// CHECK: scf.yield
// CHECK: nvvm.cp.async.wait.group 0
ism.kernel @two_stages(%Q: memref<?x?xbf16>, %K: memref<?x?xbf16>, %V: memref<?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 4 : i32, num_stages = 2 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %S = memref.dim %K, %c0 : memref<?x?xbf16>
  %q = ism.load %Q[%c0, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %zl = arith.constant dense<0.0> : tensor<64xf32>
  %r:2 = scf.for %n = %c0 to %S step %c64 iter_args(%l = %zl, %acc = %zero) -> (tensor<64xf32>, tensor<64x64xf32>) {
    %k = ism.load %K[%n, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = ism.dot %q, %kt, %zero : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
    %p = math.exp %s : tensor<64x64xf32>
    %sum = ism.reduce %p axis = 1 : tensor<64x64xf32> -> tensor<64xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }
    %l2 = arith.addf %l, %sum : tensor<64xf32>
    %p16 = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
    %v = ism.load %V[%n, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %acc2 = ism.dot %p16, %v, %acc : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %l2, %acc2 : tensor<64xf32>, tensor<64x64xf32>
  }
  ism.store %r#1, %O[%c0, %c0] : tensor<64x64xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// num_stages = 1: no ring; K and V are loaded in the loop and written to
// shared memory by the products (a barrier each).
// CHECK-LABEL: gpu.func @no_ring
// CHECK-NOT: cp.async
// CHECK: scf.for
// CHECK-COUNT-4: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: nvvm.barrier0
// CHECK-NOT: cp.async
// CHECK: gpu.return
ism.kernel @no_ring(%Q: memref<?x?xbf16>, %K: memref<?x?xbf16>, %V: memref<?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 4 : i32, num_stages = 1 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %S = memref.dim %K, %c0 : memref<?x?xbf16>
  %q = ism.load %Q[%c0, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %zl = arith.constant dense<0.0> : tensor<64xf32>
  %r:2 = scf.for %n = %c0 to %S step %c64 iter_args(%l = %zl, %acc = %zero) -> (tensor<64xf32>, tensor<64x64xf32>) {
    %k = ism.load %K[%n, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = ism.dot %q, %kt, %zero : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
    %p = math.exp %s : tensor<64x64xf32>
    %sum = ism.reduce %p axis = 1 : tensor<64x64xf32> -> tensor<64xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }
    %l2 = arith.addf %l, %sum : tensor<64xf32>
    %p16 = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
    %v = ism.load %V[%n, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %acc2 = ism.dot %p16, %v, %acc : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %l2, %acc2 : tensor<64xf32>, tensor<64x64xf32>
  }
  ism.store %r#1, %O[%c0, %c0] : tensor<64x64xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// A loop that writes memory keeps its loads where they are (they cannot run
// ahead of its stores).
// CHECK-LABEL: gpu.func @writes
// CHECK-NOT: cp.async
// CHECK: gpu.return
ism.kernel @writes(%Q: memref<?x?xbf16>, %K: memref<?x?xbf16>, %V: memref<?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %S = memref.dim %K, %c0 : memref<?x?xbf16>
  %q = ism.load %Q[%c0, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %zl = arith.constant dense<0.0> : tensor<64xf32>
  %r:2 = scf.for %n = %c0 to %S step %c64 iter_args(%l = %zl, %acc = %zero) -> (tensor<64xf32>, tensor<64x64xf32>) {
    %k = ism.load %K[%n, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = ism.dot %q, %kt, %zero : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
    %p = math.exp %s : tensor<64x64xf32>
    %sum = ism.reduce %p axis = 1 : tensor<64x64xf32> -> tensor<64xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }
    %l2 = arith.addf %l, %sum : tensor<64xf32>
    %p16 = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
    %v = ism.load %V[%n, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %acc2 = ism.dot %p16, %v, %acc : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
    ism.store %acc2, %O[%n, %c0] : tensor<64x64xf32> -> memref<?x?xf32>
    scf.yield %l2, %acc2 : tensor<64xf32>, tensor<64x64xf32>
  }
  ism.store %r#1, %O[%c0, %c0] : tensor<64x64xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// Tiles of 3-D memrefs (attention's [batch x heads, seq, dim]) reshaped to
// the product's 2-D operands qualify too: the leading index selects the
// matrix. Two tiles of 64 x 64 bf16, 4 chunks a thread each, in 3 copy
// sites (two ahead of the loop, one in it).
// CHECK-LABEL: gpu.func @three_d
// CHECK-COUNT-8: nvvm.cp.async.shared.global
// CHECK: scf.for
// CHECK-COUNT-8: nvvm.cp.async.shared.global
// CHECK: nvvm.wgmma.mma_async
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: gpu.return
ism.kernel @three_d(%Q: memref<?x?x?xbf16>, %K: memref<?x?x?xbf16>, %V: memref<?x?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %bh = ism.program_id y : index
  %S = memref.dim %K, %c1 : memref<?x?x?xbf16>
  %q3 = ism.load %Q[%bh, %c0, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
  %q = ism.reshape %q3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %r = scf.for %n = %c0 to %S step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
    %k3 = ism.load %K[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %k = ism.reshape %k3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = ism.dot %q, %kt, %zero : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
    %p = math.exp %s : tensor<64x64xf32>
    %mx = ism.reduce %p axis = 1 : tensor<64x64xf32> -> tensor<64xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.maximumf %a, %b : f32
      ism.yield %x : f32
    }
    %mx2 = ism.expand_dims %mx axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %mxb = ism.broadcast %mx2 : tensor<64x1xf32> -> tensor<64x64xf32>
    %pn = arith.divf %p, %mxb : tensor<64x64xf32>
    %p16 = arith.truncf %pn : tensor<64x64xf32> to tensor<64x64xbf16>
    %v3 = ism.load %V[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %v = ism.reshape %v3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %acc2 = ism.dot %p16, %v, %acc : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %acc2 : tensor<64x64xf32>
  }
  ism.store %r, %O[%c0, %c0] : tensor<64x64xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// Nested in another loop (a program walking several query blocks), the
// product's own copy of Q and the ring are written again on each outer
// iteration: a barrier before Q is written (every warp is done with the
// previous Q) and one after the inner loop (its next prologue writes stages
// the slowest warps may still read).
// CHECK-LABEL: gpu.func @nested
// CHECK: scf.for
// CHECK: nvvm.barrier0
// CHECK-NOT: llvm.store
// CHECK: memref.view {{.*}} to memref<9215xi8, #gpu.address_space<workgroup>>
// CHECK-COUNT-4: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CHECK: scf.for
// CHECK: nvvm.wgmma.mma_async
// CHECK: scf.yield
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.barrier0
ism.kernel @nested(%Q: memref<?x?xbf16>, %K: memref<?x?xbf16>, %V: memref<?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %S = memref.dim %K, %c0 : memref<?x?xbf16>
  %M = memref.dim %Q, %c0 : memref<?x?xbf16>
  scf.for %m = %c0 to %M step %c64 {
    %q = ism.load %Q[%m, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %r = scf.for %n = %c0 to %S step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
      %k = ism.load %K[%n, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
      %kt = ism.trans %k order = [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
      %s = ism.dot %q, %kt, %zero : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
      %sum = ism.reduce %s axis = 1 : tensor<64x64xf32> -> tensor<64xf32> {
      ^bb0(%a: f32, %b: f32):
        %x = arith.addf %a, %b : f32
        ism.yield %x : f32
      }
      %sum2 = ism.expand_dims %sum axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
      %sumb = ism.broadcast %sum2 : tensor<64x1xf32> -> tensor<64x64xf32>
      %p = arith.divf %s, %sumb : tensor<64x64xf32>
      %p16 = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
      %v = ism.load %V[%n, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
      %acc2 = ism.dot %p16, %v, %acc : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
      scf.yield %acc2 : tensor<64x64xf32>
    }
    ism.store %r, %O[%m, %c0] : tensor<64x64xf32> -> memref<?x?xf32>
  }
  ism.return
}
