// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot=chip=sm_90a --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu | FileCheck %s

// Two products in one loop (attention's S = Q K^T and O += P V, without
// the softmax's maximum) on sm_90a: each is lowered by itself on wgmma, one
// m64nNk16 instruction per warpgroup and 16-wide K step (4 warps: one
// warpgroup, 64 rows).
// CHECK-LABEL: gpu.func @two_products
// Q is defined outside the loop: every thread writes its 8-column pieces
// once, before the loop, to shared memory of its own (4 16-byte stores).
// CHECK: memref.view
// CHECK-COUNT-4: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// K and V, loaded in the loop for the products only, are copied by
// cp.async into a ring of 3 stages two iterations ahead (as on sm_80:
// mma-sync-product.mlir).
// CHECK: memref.view {{.*}} to memref<50175xi8, #gpu.address_space<workgroup>>
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for {{.*}} -> (vector<2xf32>, vector<32xf32>) {
// The stage's copies are made visible to wgmma's async proxy before the
// barrier.
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: nvvm.barrier0
// CHECK: nvvm.cp.async.commit.group
// S = Q K^T: nothing to write (Q has its place, K is in the ring, read
// K-major: layout col); four k-steps of m64n64k16 from shared memory, one
// group, waited for with the accumulator passing through the wait.
// CHECK-NOT: llvm.store
// CHECK-NOT: nvvm.barrier0
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK: llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 0;"
// The row sums of exp(S) stay in registers (the m16n8 accumulator order).
// CHECK-COUNT-4: gpu.shuffle  xor
// O += P V: P is in S's accumulator layout with the same warps, so it stays
// in registers (16 pairs packed into i32, four a k-step, where P is made:
// before the product's fence); V is in the ring, read MN-major
// (imm-trans-b 1). No stores, no barrier.
// CHECK-COUNT-16: llvm.bitcast %{{.*}} : vector<2xbf16> to i32
// CHECK-NOT: llvm.store
// CHECK-NOT: nvvm.barrier0
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Asetp.ne.b32 p, $69, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0, $1,{{.*}}$31}, {$64, $65, $66, $67}, $68, p, 1, 1, 1;\0A}"
// CHECK-COUNT-3: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 0;"
// CHECK-NOT: nvvm.barrier0
// CHECK: scf.yield %{{.*}}, %{{.*}} : vector<2xf32>, vector<32xf32>
// CHECK: nvvm.cp.async.wait.group 0
ism.kernel @two_products(%Q: memref<?x?xbf16>, %K: memref<?x?xbf16>, %V: memref<?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 4 : i32} {
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


// Two warpgroups (8 warps, 128 query rows) and a head dim of 128 (two
// 64-column boxes): warpgroup g computes rows 64 g..64 g + 63; k-steps 4..7
// of S = Q K^T read the second box of Q (128 rows x 128 bytes = 16384 bytes
// further) and of K (64 rows: 8192 bytes further).
// CHECK-LABEL: gpu.func @two_groups
// CHECK: scf.for
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>{{.*}}B[<bf16>, <one>, <col>]
// CHECK: arith.constant 8192 : i64
// CHECK: arith.constant 16384 : i64
// CHECK: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// O += P V: m64n128k16, four k-steps.
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK-NOT: wgmma.mma_async
ism.kernel @two_groups(%Q: memref<?x?xbf16>, %K: memref<?x?xbf16>, %V: memref<?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 8 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %S = memref.dim %K, %c0 : memref<?x?xbf16>
  %q = ism.load %Q[%c0, %c0] : memref<?x?xbf16> -> tensor<128x128xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %zacc = arith.constant dense<0.0> : tensor<128x128xf32>
  %zl = arith.constant dense<0.0> : tensor<128xf32>
  %r:2 = scf.for %n = %c0 to %S step %c64 iter_args(%l = %zl, %acc = %zacc) -> (tensor<128xf32>, tensor<128x128xf32>) {
    %k = ism.load %K[%n, %c0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<64x128xbf16> -> tensor<128x64xbf16>
    %s = ism.dot %q, %kt, %zero : tensor<128x128xbf16> * tensor<128x64xbf16> -> tensor<128x64xf32>
    %p = math.exp %s : tensor<128x64xf32>
    %sum = ism.reduce %p axis = 1 : tensor<128x64xf32> -> tensor<128xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }
    %l2 = arith.addf %l, %sum : tensor<128xf32>
    %p16 = arith.truncf %p : tensor<128x64xf32> to tensor<128x64xbf16>
    %v = ism.load %V[%n, %c0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %acc2 = ism.dot %p16, %v, %acc : tensor<128x64xbf16> * tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %l2, %acc2 : tensor<128xf32>, tensor<128x128xf32>
  }
  ism.store %r#1, %O[%c0, %c0] : tensor<128x128xf32> -> memref<?x?xf32>
  ism.return
}

// The next block's S issued before the previous block's P V (attention
// software-pipelined, bench/attention.py module_text(pipelined=True)):
// each product waits where its result is first used, S with wait_group 1
// (P V, issued after it, still runs: groups complete in order) before the
// row sums, P V with wait_group 0 before the rescale. P's fragments are
// packed at the top of the body (where the loop carries P), not between
// the two products.
// CHECK-LABEL: gpu.func @next_s_first
// CHECK: scf.for
// CHECK-COUNT-16: llvm.bitcast %{{.*}} : vector<2xbf16> to i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 64, k = 16>
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: wgmma.wait_group
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: wgmma.wait_group
// CHECK: llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 1;"
// CHECK: gpu.shuffle  xor
// CHECK: llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 0;"
// CHECK: arith.mulf
// CHECK: scf.yield
ism.kernel @next_s_first(%Q: memref<?x?xbf16>, %K: memref<?x?xbf16>, %V: memref<?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %S = memref.dim %K, %c0 : memref<?x?xbf16>
  %q = ism.load %Q[%c0, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %zl = arith.constant dense<0.0> : tensor<64xf32>
  %p0 = arith.constant dense<1.0> : tensor<64x64xbf16>
  %r:3 = scf.for %n = %c64 to %S step %c64 iter_args(%l = %zl, %acc = %zero, %p = %p0) -> (tensor<64xf32>, tensor<64x64xf32>, tensor<64x64xbf16>) {
    %k = ism.load %K[%n, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = ism.dot %q, %kt, %zero : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
    %np = arith.subi %n, %c64 : index
    %v = ism.load %V[%np, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %pv = ism.dot %p, %v, %acc : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
    %e = math.exp %s : tensor<64x64xf32>
    %sum = ism.reduce %e axis = 1 : tensor<64x64xf32> -> tensor<64xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }
    %l2 = arith.addf %l, %sum : tensor<64xf32>
    %half = arith.constant dense<0.5> : tensor<64x64xf32>
    %acc2 = arith.mulf %pv, %half : tensor<64x64xf32>
    %p2 = arith.truncf %e : tensor<64x64xf32> to tensor<64x64xbf16>
    scf.yield %l2, %acc2, %p2 : tensor<64xf32>, tensor<64x64xf32>, tensor<64x64xbf16>
  }
  ism.store %r#1, %O[%c0, %c0] : tensor<64x64xf32> -> memref<?x?xf32>
  ism.return
}
