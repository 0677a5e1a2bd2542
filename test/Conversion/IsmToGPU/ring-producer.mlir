// RUN: ism-opt %s --split-input-file --ism-assign-layouts --ism-accelerate-dot=chip=sm_90a --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu | FileCheck %s

// The ring of the products' B operands filled by a producer warpgroup of
// its own (AsyncOperands.cpp, ring_producer). The kernel gets one i64
// parameter per ring tile (its TMA descriptor, ism.tma: argument, box rows
// and columns) and 128 threads more; thread 0 makes each stage's `full`
// mbarrier (one arrival with TMA, else 128) and `empty` one (one arrival a
// warp), then the CTA synchronises once and splits. The producer (after
// the kernel's warps) drops to 40 registers and, per iteration, waits for
// its stage to be free, then has TMA load each tile, a box per 64 columns
// at (column, row, leading index), or copies them element by element
// without descriptors. The kernel's warps take 232 registers; each
// iteration frees the stage the previous one read, waits for its own (no
// CTA barrier in the loop), and after the loop frees the last one.
// CHECK-LABEL: gpu.func @forced
// CHECK-SAME: %arg4: i64, %arg5: i64
// CHECK-SAME: ism.num_threads = 256
// CHECK-SAME: ism.tma = [array<i64: 1, 64, 64>, array<i64: 2, 64, 64>]
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK-SAME: nvvm.maxnreg = 232
// CHECK: %[[TMA:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK: %[[COUNT:.*]] = arith.select %[[TMA]], %{{.*}}, %{{.*}} : i32
// CHECK-COUNT-3: nvvm.mbarrier.init %{{.*}}, %[[COUNT]]
// CHECK: nvvm.barrier0
// CHECK: scf.if
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: scf.if %[[TMA]]
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16384_i32
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} box[
// CHECK: } else {
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.fence.proxy
// CHECK-NEXT: nvvm.mbarrier.arrive
// CHECK: } else {
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: scf.for
// CHECK-NOT: nvvm.barrier
// CHECK: nvvm.mbarrier.arrive
// CHECK-NOT: nvvm.barrier
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NOT: nvvm.barrier
// CHECK: nvvm.wgmma.mma_async
// CHECK-NOT: nvvm.barrier
// CHECK: scf.yield
// CHECK: nvvm.mbarrier.arrive
// CHECK: } {ism.ring_split}
ism.kernel @forced(%Q: memref<?x?x?xbf16>, %K: memref<?x?x?xbf16>, %V: memref<?x?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 4 : i32, ring_producer = true} {
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

// Two warpgroups take the producer by default; their barriers are the
// named barrier 1 over their 256 threads.
// CHECK-LABEL: gpu.func @two_groups
// CHECK-SAME: ism.num_threads = 384
// CHECK-SAME: known_block_size = array<i32: 384, 1, 1>
// CHECK-SAME: nvvm.maxnreg = 168
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %c256_i32
// CHECK: } {ism.ring_split}
ism.kernel @two_groups(%Q: memref<?x?x?xbf16>, %K: memref<?x?x?xbf16>, %V: memref<?x?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 8 : i32} {
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
    %v3 = ism.load %V[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %v = ism.reshape %v3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %acc2 = ism.dot %p16, %v, %acc : tensor<128x64xbf16> * tensor<64x64xbf16> -> tensor<128x64xf32>
    scf.yield %acc2 : tensor<128x64xf32>
  }
  ism.store %r, %O[%c0, %c0] : tensor<128x64xf32> -> memref<?x?xf32>
  ism.return
}


// -----

// persistent = true: one CTA per SM walks the logical grid (three i32
// parameters after the descriptors; the launch passes the grid and asks
// for one CTA per program, which ism-run caps at the SMs). Both roles loop
// over the programs from blockIdx.x with a stride of gridDim.x, counting
// the rings' uses on over them; the producer computes each program's loop
// bounds itself, and the kernel's warps take their program ids from the
// walk.
// CHECK-LABEL: func.func @main
// CHECK: %[[GX:.*]] = arith.index_cast %c1{{.*}} : index to i32
// CHECK: %[[GY:.*]] = arith.index_cast %dim : index to i32
// CHECK: %[[GZ:.*]] = arith.index_cast %c1{{.*}} : index to i32
// CHECK: %[[XY:.*]] = arith.muli %c1, %dim : index
// CHECK: %[[N:.*]] = arith.muli %[[XY]], %c1{{.*}} : index
// CHECK: gpu.launch_func  @ism_kernels::@persistent_grid blocks in (%[[N]], %c1{{.*}}, %c1{{.*}}) {{.*}} %c0_i64 : i64, %c0_i64 : i64, %[[GX]] : i32, %[[GY]] : i32, %[[GZ]] : i32)
// CHECK-LABEL: gpu.func @persistent_grid
// CHECK-SAME: %arg4: i64, %arg5: i64, %arg6: i32, %arg7: i32, %arg8: i32
// CHECK-SAME: ism.persistent
// CHECK: %[[X:.*]] = arith.index_cast %arg6 : i32 to index
// CHECK: %[[Y:.*]] = arith.index_cast %arg7 : i32 to index
// CHECK: %[[Z:.*]] = arith.index_cast %arg8 : i32 to index
// CHECK: %[[XY:.*]] = arith.muli %[[X]], %[[Y]] : index
// CHECK: %[[ALL:.*]] = arith.muli %[[XY]], %[[Z]] : index
// CHECK: %[[FIRST:.*]] = gpu.block_id  x
// CHECK: %[[STRIDE:.*]] = gpu.grid_dim  x
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: scf.for %[[T:.*]] = %[[FIRST]] to %[[ALL]] step %[[STRIDE]] iter_args(%[[C:.*]] = %c0{{.*}}) -> (index) {
// CHECK: memref.dim %arg1, %c1
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[C]]) -> (index) {
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: scf.for %[[U:.*]] = %[[FIRST]] to %[[ALL]] step %[[STRIDE]] iter_args(%[[B:.*]] = %c0{{.*}}) -> (index) {
// CHECK: %[[UY:.*]] = arith.divui %[[U]], %[[X]] : index
// CHECK: %[[PY:.*]] = arith.remui %[[UY]], %[[Y]] : index
// CHECK: memref.dim %arg1, %c1
// CHECK: arith.addi %[[B]], %{{.*}} : index
// CHECK: nvvm.wgmma.mma_async
// CHECK: scf.yield %{{.*}} : index
// CHECK: } {ism.ring_split}
ism.kernel @persistent_grid(%Q: memref<?x?x?xbf16>, %K: memref<?x?x?xbf16>, %V: memref<?x?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 8 : i32, persistent = true} {
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
    %v3 = ism.load %V[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %v = ism.reshape %v3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %acc2 = ism.dot %p16, %v, %acc : tensor<128x64xbf16> * tensor<64x64xbf16> -> tensor<128x64xf32>
    scf.yield %acc2 : tensor<128x64xf32>
  }
  ism.store %r, %O[%c0, %c0] : tensor<128x64xf32> -> memref<?x?xf32>
  ism.return
}
func.func @main(%Q: memref<?x?x?xbf16>, %K: memref<?x?x?xbf16>, %V: memref<?x?x?xbf16>, %O: memref<?x?xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %BH = memref.dim %Q, %c0 : memref<?x?x?xbf16>
  ism.launch @persistent_grid grid(%c1, %BH) (%Q, %K, %V, %O) : (memref<?x?x?xbf16>, memref<?x?x?xbf16>, memref<?x?x?xbf16>, memref<?x?xf32>)
  return
}


// -----

// ring_producer = false: every thread copies with cp.async, a CTA barrier
// each iteration.
// CHECK-LABEL: gpu.func @opted_out
// CHECK-NOT: ism.tma
// CHECK-SAME: ism.num_threads = 256
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: nvvm.barrier0
// CHECK-NOT: ism.ring_split
ism.kernel @opted_out(%Q: memref<?x?x?xbf16>, %K: memref<?x?x?xbf16>, %V: memref<?x?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 8 : i32, ring_producer = false} {
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
    %v3 = ism.load %V[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %v = ism.reshape %v3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %acc2 = ism.dot %p16, %v, %acc : tensor<128x64xbf16> * tensor<64x64xbf16> -> tensor<128x64xf32>
    scf.yield %acc2 : tensor<128x64xf32>
  }
  ism.store %r, %O[%c0, %c0] : tensor<128x64xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// Loops whose rings hold different tiles (attention's loops peeled: block
// 0's S with K only, then K and V, then the last block's P V with V only)
// share one ring: stages of the largest loop's size (two 64x64 tiles,
// 16384 bytes), as many as the loops have (2); each loop's stage expects
// only its own tiles' bytes.
// CHECK-LABEL: gpu.func @peeled
// CHECK-COUNT-4: nvvm.mbarrier.init
// CHECK-NOT: nvvm.mbarrier.init
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: scf.for
// CHECK: arith.muli %{{.*}}, %c16384_i32 : i32
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c8192_i32
// CHECK: scf.for
// CHECK: arith.muli %{{.*}}, %c16384_i32 : i32
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16384_i32
// CHECK: scf.for
// CHECK: arith.muli %{{.*}}, %c16384_i32 : i32
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c8192_i32
// CHECK: } {ism.ring_split}
ism.kernel @peeled(%Q: memref<?x?x?xbf16>, %K: memref<?x?x?xbf16>, %V: memref<?x?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 8 : i32, num_stages = 2 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %bh = ism.program_id y : index
  %S = memref.dim %K, %c1 : memref<?x?x?xbf16>
  %one = arith.minui %c64, %S : index
  %q3 = ism.load %Q[%bh, %c0, %c0] : memref<?x?x?xbf16> -> tensor<1x128x64xbf16>
  %q = ism.reshape %q3 : tensor<1x128x64xbf16> -> tensor<128x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %zp = arith.constant dense<0.0> : tensor<128x64xbf16>
  %first = scf.for %n = %c0 to %one step %c64 iter_args(%pp = %zp) -> (tensor<128x64xbf16>) {
    %k3 = ism.load %K[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
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
    scf.yield %p16 : tensor<128x64xbf16>
  }
  %r:2 = scf.for %n = %c64 to %S step %c64 iter_args(%acc = %zero, %pprev = %first) -> (tensor<128x64xf32>, tensor<128x64xbf16>) {
    %k3 = ism.load %K[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %k = ism.reshape %k3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = ism.dot %q, %kt, %zero : tensor<128x64xbf16> * tensor<64x64xbf16> -> tensor<128x64xf32>
    %np = arith.subi %n, %c64 : index
    %v3 = ism.load %V[%bh, %np, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %v = ism.reshape %v3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %acc2 = ism.dot %pprev, %v, %acc : tensor<128x64xbf16> * tensor<64x64xbf16> -> tensor<128x64xf32>
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
    scf.yield %acc2, %p16 : tensor<128x64xf32>, tensor<128x64xbf16>
  }
  %blocks = arith.ceildivui %S, %c64 : index
  %last = arith.muli %blocks, %c64 : index
  %end = arith.addi %last, %one : index
  %o = scf.for %n = %last to %end step %c64 iter_args(%acc = %r#0) -> (tensor<128x64xf32>) {
    %np = arith.subi %n, %c64 : index
    %v3 = ism.load %V[%bh, %np, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %v = ism.reshape %v3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %acc2 = ism.dot %r#1, %v, %acc : tensor<128x64xbf16> * tensor<64x64xbf16> -> tensor<128x64xf32>
    scf.yield %acc2 : tensor<128x64xf32>
  }
  ism.store %o, %O[%c0, %c0] : tensor<128x64xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// Operand memrefs that TMA cannot describe (known at compile time: a
// strided layout): the producer copies element by element only, no
// descriptors and no TMA path (this used to crash, building that path
// without descriptors).
// CHECK-LABEL: gpu.func @strided_operands
// CHECK-NOT: ism.tma
// CHECK-SAME: ism.num_threads = 384
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.fence.proxy
// CHECK-NEXT: nvvm.mbarrier.arrive
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: } {ism.ring_split}
ism.kernel @strided_operands(%Q: memref<?x?x?xbf16>, %K: memref<?x?x?xbf16, strided<[?, ?, 1], offset: ?>>, %V: memref<?x?x?xbf16, strided<[?, ?, 1], offset: ?>>, %O: memref<?x?xf32>) attributes {num_warps = 8 : i32} {
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
