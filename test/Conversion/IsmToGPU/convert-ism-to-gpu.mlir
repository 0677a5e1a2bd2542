// RUN: ism-opt %s -ism-assign-layouts -convert-ism-to-gpu -split-input-file | FileCheck %s

// Kernels become gpu.func kernels with their launch facts; launches become
// gpu.launch_func with the kernel's block size and shared memory.
// CHECK-LABEL: func.func @main
// CHECK: gpu.launch_func @ism_kernels::@copy blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%[[T:.*]], %{{.*}}, %{{.*}}) dynamic_shared_memory_size %{{.*}} args(%{{.*}} : memref<?xf32>, %{{.*}} : memref<?xf32>)
// CHECK: gpu.module @ism_kernels
// CHECK: gpu.func @copy(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32>) kernel
// CHECK-SAME: ism.num_threads = 128 : i32
// CHECK-SAME: ism.shared_memory_bytes = 0 : i32
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
//
// The fast path: the whole tile in bounds and 16-byte aligned, then one
// 16-byte load per 4 floats of each thread.
// CHECK: gpu.block_id x
// CHECK: memref.extract_strided_metadata
// CHECK: llvm.inttoptr %{{.*}} : i64 to !llvm.ptr<1>
// CHECK: arith.cmpi sle
// CHECK: arith.remui %{{.*}}, %c16
// CHECK: scf.if %{{.*}} -> (vector<8xf32>) {
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// The edge path: each element under its own bounds predicate.
// CHECK: } else {
// CHECK: arith.cmpi slt
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK: } else {
// CHECK: scf.yield %{{.*}} : f32
// The store: 16-byte vector stores on the fast path.
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK: gpu.return
ism.kernel @copy(%x: memref<?xf32>, %y: memref<?xf32>) {
  %pid = ism.program_id x : index
  %c1024 = arith.constant 1024 : index
  %off = arith.muli %pid, %c1024 : index
  %t = ism.load %x[%off] : memref<?xf32> -> tensor<1024xf32>
  ism.store %t, %y[%off] : tensor<1024xf32> -> memref<?xf32>
  ism.return
}
func.func @main(%x: memref<?xf32>, %y: memref<?xf32>, %n: index) {
  ism.launch @copy grid(%n) (%x, %y) : (memref<?xf32>, memref<?xf32>)
  return
}

// -----

// A masked load with padding: selects the padding where the mask is off.
// CHECK-LABEL: gpu.func @masked
// CHECK: %[[PAD:.*]] = arith.constant 0xFF800000 : f32
// CHECK: scf.if
// CHECK: %[[B:.*]] = vector.broadcast %[[PAD]] : f32 to vector<4xf32>
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[B]] : vector<4xi1>, vector<4xf32>
ism.kernel @masked(%x: memref<?xf32>, %n: i32) attributes {num_warps = 1 : i32} {
  %c0 = arith.constant 0 : index
  %r = ism.range 0 to 128 : tensor<128xi32>
  %ns = ism.splat %n : i32 -> tensor<128xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<128xi32>
  %t = ism.load %x[%c0] mask %m {padding = 0xFF800000 : f32} : memref<?xf32> -> tensor<128xf32>
  ism.store %t, %x[%c0] : tensor<128xf32> -> memref<?xf32>
  ism.return
}

// -----

// A reduction to a scalar: in-thread adds, five butterfly shuffles over the
// 32 lanes, then the 4 warps' partials through shared memory behind one CTA
// barrier. At the top level of a kernel, consecutive shared-memory uses
// alternate between two regions, so no barrier is needed after the reads.
// CHECK-LABEL: gpu.func @sum
// CHECK-SAME: ism.shared_memory_bytes = 16 : i32
// CHECK-COUNT-5: gpu.shuffle xor %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<4xf32, #gpu.address_space<workgroup>>
// CHECK: nvvm.barrier0
// CHECK-COUNT-4: memref.load %{{.*}}[%{{.*}}] : memref<4xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: nvvm.barrier0
// CHECK: gpu.return
ism.kernel @sum(%x: memref<?xf32>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0] : memref<?xf32> -> tensor<1024xf32>
  %s = ism.reduce %t axis = 0 : tensor<1024xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    ism.yield %r : f32
  }
  memref.store %s, %y[%c0] : memref<?xf32>
  ism.return
}

// -----

// Lowered as a partition of a co-scheduled CTA (warps 4-7, named barrier 1,
// shared memory from byte 1024): thread ids are counted from the partition's
// first warp, CTA-wide synchronisation is `bar.sync 1, 128`, and shared
// memory starts at the partition's base.
// RUN: ism-opt %s -split-input-file -ism-assign-layouts -convert-ism-to-gpu="warp-base=4 barrier-id=1 shared-memory-base=1024" -canonicalize | FileCheck %s --check-prefix=PART
// PART-LABEL: gpu.func @partition_sum
// PART-SAME: ism.shared_memory_bytes = 1040 : i32
// PART-NOT: known_block_size
// PART-DAG: %[[ID:.*]] = arith.constant 1 : i32
// PART-DAG: %[[N:.*]] = arith.constant 128 : i32
// PART-DAG: %[[C128:.*]] = arith.constant 128 : index
// PART-DAG: %[[BASE:.*]] = arith.constant 1024 : index
// PART: %[[TID:.*]] = gpu.thread_id x
// PART: arith.subi %[[TID]], %[[C128]] : index
// PART: memref.view %{{.*}}[%[[BASE]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4xf32, #gpu.address_space<workgroup>>
// PART: nvvm.barrier id = %[[ID]] number_of_threads = %[[N]]
// PART-NOT: nvvm.barrier0
ism.kernel @partition_sum(%x: memref<?xf32>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0] : memref<?xf32> -> tensor<1024xf32>
  %s = ism.reduce %t axis = 0 : tensor<1024xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    ism.yield %r : f32
  }
  memref.store %s, %y[%c0] : memref<?xf32>
  ism.return
}

// -----

// exp on f32 tiles becomes ex2.approx of x * log2(e), per element.
// CHECK-LABEL: gpu.func @exp
// CHECK: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK: arith.mulf %{{.*}}, %[[LOG2E]] : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%{{.*}}) : (f32) -> f32
// CHECK-NOT: math.exp
ism.kernel @exp(%x: memref<?xf32>) attributes {num_warps = 1 : i32} {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0] : memref<?xf32> -> tensor<128xf32>
  %e = math.exp %t : tensor<128xf32>
  ism.store %e, %x[%c0] : tensor<128xf32> -> memref<?xf32>
  ism.return
}

// -----

// Gathers and scatters: per-element predicated accesses at the index tiles'
// coordinates.
// CHECK-LABEL: gpu.func @gather_scatter
// CHECK: arith.index_cast %{{.*}} : i32 to index
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK: llvm.load
// CHECK: scf.if %{{.*}} {
// CHECK: llvm.store
// CHECK: llvm.atomicrmw fadd %{{.*}}, %{{.*}} syncscope("device") monotonic : !llvm.ptr<1>, f32
ism.kernel @gather_scatter(%x: memref<?xf32>, %y: memref<?xf32>) attributes {num_warps = 1 : i32} {
  %idx = ism.range 0 to 32 : tensor<32xi32>
  %g = ism.gather %x[%idx] : memref<?xf32>[tensor<32xi32>] -> tensor<32xf32>
  ism.scatter %g, %y[%idx] : tensor<32xf32> -> memref<?xf32>[tensor<32xi32>]
  %o = ism.atomic_rmw add %y[%idx], %g : memref<?xf32>[tensor<32xi32>], tensor<32xf32>
  ism.return
}

// -----

// A scan: log2(64) = 6 rounds through shared memory.
// CHECK-LABEL: gpu.func @cumsum
// CHECK-COUNT-12: nvvm.barrier0
// CHECK-NOT: nvvm.barrier0
ism.kernel @cumsum(%x: memref<?xi32>) attributes {num_warps = 1 : i32} {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0] : memref<?xi32> -> tensor<64xi32>
  %c = ism.scan %t axis = 0 : tensor<64xi32> -> tensor<64xi32> {
  ^bb0(%a: i32, %b: i32):
    %s = arith.addi %a, %b : i32
    ism.yield %s : i32
  }
  ism.store %c, %x[%c0] : tensor<64xi32> -> memref<?xi32>
  ism.return
}

// -----

// A reshape that keeps every element in its thread is a no-op in registers;
// a transposition moves elements through shared memory.
// CHECK-LABEL: gpu.func @shapes
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.store
// CHECK: nvvm.barrier0
// CHECK-NOT: nvvm.barrier0
// CHECK: gpu.return
ism.kernel @shapes(%x: memref<?x?xf32>, %y: memref<?xf32>) attributes {num_warps = 1 : i32} {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<1x256xf32>
  %r = ism.reshape %t : tensor<1x256xf32> -> tensor<256xf32>
  ism.store %r, %y[%c0] : tensor<256xf32> -> memref<?xf32>
  %u = ism.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<32x64xf32>
  %v = ism.trans %u order = [1, 0] : tensor<32x64xf32> -> tensor<64x32xf32>
  ism.store %v, %x[%c0, %c0] : tensor<64x32xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// The SIMT dot: A and B through shared memory, one multiply-add per K step.
// CHECK-LABEL: gpu.func @dot
// CHECK: nvvm.barrier0
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<{{[0-9]+}}xf32>)
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: llvm.intr.fma(%{{.*}}, %{{.*}}, %{{.*}}) : (f32, f32, f32) -> f32
ism.kernel @dot(%a: memref<?x?xf16>, %c: memref<?x?xf32>) attributes {num_warps = 1 : i32} {
  %c0 = arith.constant 0 : index
  %ta = ism.load %a[%c0, %c0] : memref<?x?xf16> -> tensor<32x16xf16>
  %tb = ism.load %a[%c0, %c0] : memref<?x?xf16> -> tensor<16x32xf16>
  %zero = arith.constant dense<0.0> : tensor<32x32xf32>
  %d = ism.dot %ta, %tb, %zero : tensor<32x16xf16> * tensor<16x32xf16> -> tensor<32x32xf32>
  ism.store %d, %c[%c0, %c0] : tensor<32x32xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// Two reductions at the top level use the two scratch regions (bytes 0 and
// 16); a reduction inside a loop, which may repeat, uses a third region and
// ends with a barrier.
// RUN: ism-opt %s -split-input-file -ism-assign-layouts -convert-ism-to-gpu -canonicalize | FileCheck %s --check-prefix=REGIONS
// REGIONS-LABEL: gpu.func @regions
// REGIONS-SAME: ism.shared_memory_bytes = 48 : i32
// REGIONS-DAG: %[[R0:.*]] = arith.constant 0 : index
// REGIONS-DAG: %[[R1:.*]] = arith.constant 16 : index
// REGIONS-DAG: %[[R2:.*]] = arith.constant 32 : index
// REGIONS: memref.view %{{.*}}[%[[R0]]][]
// REGIONS: nvvm.barrier0
// REGIONS: memref.view %{{.*}}[%[[R1]]][]
// REGIONS: nvvm.barrier0
// REGIONS: scf.for
// REGIONS: memref.view %{{.*}}[%[[R2]]][]
// REGIONS: nvvm.barrier0
// REGIONS: nvvm.barrier0
// REGIONS: scf.yield
ism.kernel @regions(%x: memref<?xf32>, %y: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = ism.load %x[%c0] : memref<?xf32> -> tensor<1024xf32>
  %a = ism.reduce %t axis = 0 : tensor<1024xf32> -> f32 {
  ^bb0(%p: f32, %q: f32):
    %r = arith.addf %p, %q : f32
    ism.yield %r : f32
  }
  %b = ism.reduce %t axis = 0 : tensor<1024xf32> -> f32 {
  ^bb0(%p: f32, %q: f32):
    %r = arith.maximumf %p, %q : f32
    ism.yield %r : f32
  }
  %s = arith.addf %a, %b : f32
  %l = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %s) -> (f32) {
    %u = ism.load %x[%i] : memref<?xf32> -> tensor<1024xf32>
    %m = ism.reduce %u axis = 0 : tensor<1024xf32> -> f32 {
    ^bb0(%p: f32, %q: f32):
      %r = arith.addf %p, %q : f32
      ism.yield %r : f32
    }
    %next = arith.addf %acc, %m : f32
    scf.yield %next : f32
  }
  memref.store %l, %y[%c0] : memref<?xf32>
  ism.return
}

// -----

// With the sliced source layout, broadcasting a row over the heads moves no
// data: no shared memory, no barrier.
// CHECK-LABEL: gpu.func @broadcast_row
// CHECK-SAME: ism.shared_memory_bytes = 0 : i32
// CHECK-NOT: nvvm.barrier0
// CHECK-NOT: gpu.dynamic_shared_memory
// CHECK: gpu.return
ism.kernel @broadcast_row(%c: memref<?x?xf32>, %y: memref<?x?x?xf32>) {
  %c0 = arith.constant 0 : index
  %r = ism.load %c[%c0, %c0] : memref<?x?xf32> -> tensor<1x64xf32>
  %e = ism.expand_dims %r axis = 1 : tensor<1x64xf32> -> tensor<1x1x64xf32>
  %b = ism.broadcast %e : tensor<1x1x64xf32> -> tensor<1x32x64xf32>
  ism.store %b, %y[%c0, %c0, %c0] : tensor<1x32x64xf32> -> memref<?x?x?xf32>
  ism.return
}

// -----

// Rows of two tokens (2 x 64) broadcast over a tile whose 8 warps run along
// the heads: the rows load in the #ism.slice of the expansion's layout,
// 16 bytes at a time (the parent's 8 consecutive columns a thread), and
// reach the broadcast without shared memory or a barrier.
// CHECK-LABEL: gpu.func @broadcast_token_rows
// CHECK-SAME: ism.shared_memory_bytes = 0 : i32
// CHECK-NOT: nvvm.barrier0
// CHECK-NOT: gpu.dynamic_shared_memory
// CHECK: llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK-NOT: nvvm.barrier0
// CHECK: gpu.return
ism.kernel @broadcast_token_rows(%c: memref<?x?xf32>, %y: memref<?x?x?x?xf32>)
    attributes {num_warps = 8 : i32} {
  %c0 = arith.constant 0 : index
  %r = ism.load %c[%c0, %c0] : memref<?x?xf32> -> tensor<2x64xf32>
  %e3 = ism.expand_dims %r axis = 1 : tensor<2x64xf32> -> tensor<2x1x64xf32>
  %e4 = ism.expand_dims %e3 axis = 2 : tensor<2x1x64xf32> -> tensor<2x1x1x64xf32>
  %b = ism.broadcast %e4 : tensor<2x1x1x64xf32> -> tensor<2x1x32x64xf32>
  ism.store %b, %y[%c0, %c0, %c0, %c0] : tensor<2x1x32x64xf32> -> memref<?x?x?x?xf32>
  ism.return
}

// -----

// Online softmax over lanes of keys, as in examples/decode_attention.mlir:
// the scores' reduction along the head dimension stays within a warp, so
// the scores, their running maximum and the rescaled output are slices of
// the K tile's layout (ism-assign-layouts), and the loop moves no data
// between warps: shuffles, no shared memory, no barrier.
// CHECK-LABEL: gpu.func @lanes_online_softmax
// CHECK-SAME: ism.shared_memory_bytes = 0 : i32
// CHECK-NOT: nvvm.barrier0
// CHECK-NOT: gpu.dynamic_shared_memory
// CHECK: scf.for
// CHECK: gpu.shuffle xor
// CHECK: gpu.return
ism.kernel @lanes_online_softmax(%K: memref<?x?xbf16>, %V: memref<?x?xbf16>,
                                 %O: memref<?x?xf32>, %n: index)
    attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %ninf = arith.constant dense<0xFF800000> : tensor<8xf32>
  %zero = arith.constant dense<0.0> : tensor<8xf32>
  %zacc = arith.constant dense<0.0> : tensor<8x128xf32>
  %r:3 = scf.for %i = %c0 to %n step %c64
      iter_args(%m = %ninf, %l = %zero, %acc = %zacc)
      -> (tensor<8xf32>, tensor<8xf32>, tensor<8x128xf32>) {
    %k2 = ism.load %K[%i, %c0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %k = ism.reshape %k2 : tensor<64x128xbf16> -> tensor<8x8x128xbf16>
    %v2 = ism.load %V[%i, %c0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %v = ism.reshape %v2 : tensor<64x128xbf16> -> tensor<8x8x128xbf16>
    %kf = arith.extf %k : tensor<8x8x128xbf16> to tensor<8x8x128xf32>
    %s = ism.reduce %kf axis = 2 : tensor<8x8x128xf32> -> tensor<8x8xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }
    %smax = ism.reduce %s axis = 0 : tensor<8x8xf32> -> tensor<8xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.maximumf %a, %b : f32
      ism.yield %x : f32
    }
    %mn = arith.maximumf %m, %smax : tensor<8xf32>
    %mn2 = ism.expand_dims %mn axis = 0 : tensor<8xf32> -> tensor<1x8xf32>
    %mns = ism.broadcast %mn2 : tensor<1x8xf32> -> tensor<8x8xf32>
    %d = arith.subf %s, %mns : tensor<8x8xf32>
    %p = math.exp %d : tensor<8x8xf32>
    %md = arith.subf %m, %mn : tensor<8xf32>
    %alpha = math.exp %md : tensor<8xf32>
    %ps = ism.reduce %p axis = 0 : tensor<8x8xf32> -> tensor<8xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }
    %la = arith.mulf %l, %alpha : tensor<8xf32>
    %ln = arith.addf %la, %ps : tensor<8xf32>
    %vf = arith.extf %v : tensor<8x8x128xbf16> to tensor<8x8x128xf32>
    %p3 = ism.expand_dims %p axis = 2 : tensor<8x8xf32> -> tensor<8x8x1xf32>
    %pb = ism.broadcast %p3 : tensor<8x8x1xf32> -> tensor<8x8x128xf32>
    %pv = arith.mulf %vf, %pb : tensor<8x8x128xf32>
    %part = ism.reduce %pv axis = 0 : tensor<8x8x128xf32> -> tensor<8x128xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }
    %a2 = ism.expand_dims %alpha axis = 1 : tensor<8xf32> -> tensor<8x1xf32>
    %ab = ism.broadcast %a2 : tensor<8x1xf32> -> tensor<8x128xf32>
    %as = arith.mulf %acc, %ab : tensor<8x128xf32>
    %an = arith.addf %as, %part : tensor<8x128xf32>
    scf.yield %mn, %ln, %an : tensor<8xf32>, tensor<8xf32>, tensor<8x128xf32>
  }
  %l2 = ism.expand_dims %r#1 axis = 1 : tensor<8xf32> -> tensor<8x1xf32>
  %lb = ism.broadcast %l2 : tensor<8x1xf32> -> tensor<8x128xf32>
  %o = arith.divf %r#2, %lb : tensor<8x128xf32>
  ism.store %o, %O[%c0, %c0] : tensor<8x128xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// min_ctas_per_sm becomes NVVM's minctasm (PTX .minnctapersm, ptxas caps
// the registers); a kernel without it gets no such attribute.
// CHECK-LABEL: gpu.func @occupancy
// CHECK-SAME: nvvm.minctasm = 10 : i32
// CHECK-LABEL: gpu.func @no_occupancy
// CHECK-NOT: nvvm.minctasm
// CHECK: gpu.return
ism.kernel @occupancy(%x: memref<?xf32>) attributes {num_warps = 4 : i32, min_ctas_per_sm = 10 : i32} {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0] : memref<?xf32> -> tensor<512xf32>
  ism.store %t, %x[%c0] : tensor<512xf32> -> memref<?xf32>
  ism.return
}
ism.kernel @no_occupancy(%x: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0] : memref<?xf32> -> tensor<512xf32>
  ism.store %t, %x[%c0] : tensor<512xf32> -> memref<?xf32>
  ism.return
}

// -----

// math.fma on tiles (attention's exp2(qk * c - m) in one instruction) and on
// scalars becomes llvm.intr.fma (PTX fma.rn), not a libdevice call.
// CHECK-LABEL: gpu.func @fma
// CHECK-NOT: __nv_fmaf
// CHECK: llvm.intr.fma({{.*}}) : (vector<{{[0-9]+}}xf32>, vector<{{[0-9]+}}xf32>, vector<{{[0-9]+}}xf32>) -> vector<{{[0-9]+}}xf32>
// CHECK: llvm.intr.fma({{.*}}) : (f32, f32, f32) -> f32
// CHECK-NOT: math.fma
// CHECK: gpu.return
ism.kernel @fma(%x: memref<?xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0] : memref<?xf32> -> tensor<256xf32>
  %c = ism.splat %s : f32 -> tensor<256xf32>
  %f = math.fma %t, %c, %t : tensor<256xf32>
  %g = math.fma %s, %s, %s : f32
  %gs = ism.splat %g : f32 -> tensor<256xf32>
  %r = arith.addf %f, %gs : tensor<256xf32>
  ism.store %r, %x[%c0] : tensor<256xf32> -> memref<?xf32>
  ism.return
}

// -----

// absf, floor, ceil, trunc and copysign (FP8 quantization's amax, rounding)
// on tiles and scalars become calls of their LLVM intrinsics (PTX abs,
// cvt.rmi, cvt.rpi, cvt.rzi, copysign), not libdevice calls, which stay
// unresolved where libdevice is not linked.
// CHECK-LABEL: gpu.func @native_math
// CHECK-NOT: __nv_
// CHECK: llvm.call_intrinsic "llvm.fabs"({{.*}}) : (vector<{{[0-9]+}}xf32>) -> vector<{{[0-9]+}}xf32>
// CHECK: llvm.call_intrinsic "llvm.floor"({{.*}}) : (vector<{{[0-9]+}}xf32>) -> vector<{{[0-9]+}}xf32>
// CHECK: llvm.call_intrinsic "llvm.ceil"({{.*}}) : (vector<{{[0-9]+}}xf32>) -> vector<{{[0-9]+}}xf32>
// CHECK: llvm.call_intrinsic "llvm.trunc"({{.*}}) : (vector<{{[0-9]+}}xf32>) -> vector<{{[0-9]+}}xf32>
// CHECK: llvm.call_intrinsic "llvm.copysign"({{.*}}) : (vector<{{[0-9]+}}xf32>, vector<{{[0-9]+}}xf32>) -> vector<{{[0-9]+}}xf32>
// CHECK: llvm.call_intrinsic "llvm.fabs"({{.*}}) : (f32) -> f32
// CHECK-NOT: math.
// CHECK: gpu.return
ism.kernel @native_math(%x: memref<?xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0] : memref<?xf32> -> tensor<256xf32>
  %a = math.absf %t : tensor<256xf32>
  %f = math.floor %a : tensor<256xf32>
  %c = math.ceil %f : tensor<256xf32>
  %u = math.trunc %c : tensor<256xf32>
  %g = math.copysign %u, %t : tensor<256xf32>
  %sa = math.absf %s : f32
  %ss = ism.splat %sa : f32 -> tensor<256xf32>
  %r = arith.addf %g, %ss : tensor<256xf32>
  ism.store %r, %x[%c0] : tensor<256xf32> -> memref<?xf32>
  ism.return
}
