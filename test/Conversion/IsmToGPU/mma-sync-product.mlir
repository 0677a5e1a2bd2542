// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot=chip=sm_80 --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu | FileCheck %s

// Two products in one loop (attention's S = Q K^T and O += P V, without
// the softmax's maximum): neither is a K loop of its own, so each is lowered
// by itself on mma.sync. S's rows are reduced, so the 4 warps of both
// products take 16 whole rows each (4 x 1: one 16-row block, eight n8
// blocks, four k16 steps = 32 instructions).
// CHECK-LABEL: gpu.func @two_products
// K and V are loaded in the loop and used only by the products: cp.async
// copies them into a ring of 3 stages (16 KiB each: K and V, 1024-byte
// aligned) two iterations ahead (AsyncOperands.cpp). Before the loop,
// iterations 0 and 1 (each when it runs), each tile 4 16-byte chunks a
// thread or, for memrefs cp.async cannot read, element by element.
// CHECK: memref.view {{.*}} to memref<50175xi8, #gpu.address_space<workgroup>>
// CHECK-COUNT-2: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// CHECK-COUNT-2: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// The loop carries the row sums (the #ism.slice of the accumulator layout:
// a thread's 2 rows) and the accumulator (32 registers a thread). Each
// iteration waits for its stage, synchronises (the stage read last is
// free), and copies the tiles of the iteration two ahead.
// CHECK: scf.for {{.*}} -> (vector<2xf32>, vector<32xf32>) {
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: nvvm.barrier0
// CHECK-COUNT-4: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// S = Q K^T: every thread writes its 8-column pieces of Q into the swizzled
// shared tile (4 16-byte stores); K is in the ring, as loaded (K^T stays
// K's rows, contiguous along the product's K); a barrier; then plain
// ldmatrix for both operands and mma.sync.
// CHECK-NOT: llvm.store
// CHECK-COUNT-4: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CHECK-NOT: llvm.store
// CHECK: nvvm.barrier0
// CHECK-NOT: mma_layout<col>
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>
// CHECK-NOT: mma_layout<col>
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<row>
// CHECK-NOT: mma_layout<col>
// CHECK-COUNT-32: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>
// Inside the loop Q's scratch is reused: a trailing barrier.
// CHECK: nvvm.barrier0
// The row sums of exp(S): each thread adds its 16 columns of each of its 2
// rows, then the 4 lanes of a row exchange partial sums (2 shuffle rounds a
// row); the totals stay in registers (no shared memory, no barrier).
// CHECK-COUNT-4: gpu.shuffle  xor
// CHECK-NOT: nvvm.barrier0
// CHECK-NOT: memref.store
// O += P V: P is in S's accumulator layout and the warps own the same
// rows, so two adjacent n8 blocks of S are an m16k16 A fragment: P stays in
// registers (16 pairs packed into i32) and V is in the ring (read with
// ldmatrix.trans): the product writes nothing and needs no barrier.
// CHECK-NOT: llvm.store
// CHECK-COUNT-16: llvm.bitcast %{{.*}} : vector<2xbf16> to i32
// CHECK-NOT: mma_layout<row>
// CHECK: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<col>
// CHECK-COUNT-32: nvvm.mma.sync
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
