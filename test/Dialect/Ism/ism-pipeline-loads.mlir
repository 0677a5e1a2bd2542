// RUN: ism-opt %s -ism-assign-layouts -ism-pipeline-loads -split-input-file | FileCheck %s

// An online log-sum-exp over a row in chunks of 1024 (load_stages = 3):
// the load becomes a cp.async copy into a ring of 3 slots in shared memory
// (ring_id 0, 2 KiB a slot) and a read from it. Before the loop the copies
// of chunks 0 and 1 start (into slots 0 and 1); each iteration starts the
// copy of the chunk two ahead into slot (k / 1024 + 2) % 3, then waits
// until at most two copies are in flight (its own has landed) and reads
// slot (k / 1024) % 3. Nothing the copies bring waits in registers.
// CHECK-LABEL: ism.kernel @lse
// CHECK: ism.async_copy %arg0[%{{.*}}, %{{.*}}] slot %{{.*}} {ring = 0 : i64, ring_id = 0 : i32, slot_bytes = 2048 : i64, slots = 3 : i32, tile = tensor<1x1024xbf16
// CHECK: ism.async_copy %arg0
// CHECK: scf.for %[[IV:[^ ]*]] = %{{.*}} to %{{.*}} step %c1024 iter_args(%{{[^,]*}} = %{{[^,]*}}, %{{[^ ]*}} = %{{[^)]*}})
// CHECK: %[[SLOT:.*]] = arith.remui %{{.*}}, %{{.*}} : index
// CHECK: %[[AHEAD:.*]] = arith.addi %[[IV]], %{{.*}} : index
// CHECK: ism.async_copy %arg0[%{{.*}}, %[[AHEAD]]] slot %[[SLOT]]
// CHECK: %[[T:.*]] = ism.async_load %arg0[%{{.*}}, %{{.*}}] slot %{{.*}} {padding = 0xFF80 : bf16, pending = 2 : i32, ring = 0 : i64, ring_id = 0 : i32, slot_bytes = 2048 : i64, slots = 3 : i32}
// CHECK: ism.reshape %[[T]]
// CHECK: } {ism.load_stages = 3 : i32}
// CHECK-NOT: ism.load %
ism.kernel @lse(%x: memref<?x?xbf16>, %out: memref<?xf32>)
    attributes {num_warps = 4 : i32, load_stages = 3 : i32} {
  %row = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %chunk = arith.constant 1024 : index
  %n = memref.dim %x, %c1 : memref<?x?xbf16>
  %m0 = arith.constant dense<-1.0e30> : tensor<1024xf32>
  %s0 = arith.constant dense<0.0> : tensor<1024xf32>
  %m, %s = scf.for %off = %c0 to %n step %chunk iter_args(%mi = %m0, %si = %s0)
      -> (tensor<1024xf32>, tensor<1024xf32>) {
    %t = ism.load %x[%row, %off] {padding = 0xFF80 : bf16}
        : memref<?x?xbf16> -> tensor<1x1024xbf16>
    %t1 = ism.reshape %t : tensor<1x1024xbf16> -> tensor<1024xbf16>
    %v = arith.extf %t1 : tensor<1024xbf16> to tensor<1024xf32>
    %mn = arith.maximumf %mi, %v : tensor<1024xf32>
    %d = arith.subf %mi, %mn : tensor<1024xf32>
    %ed = math.exp %d : tensor<1024xf32>
    %sc = arith.mulf %si, %ed : tensor<1024xf32>
    %dv = arith.subf %v, %mn : tensor<1024xf32>
    %ev = math.exp %dv : tensor<1024xf32>
    %sn = arith.addf %sc, %ev : tensor<1024xf32>
    scf.yield %mn, %sn : tensor<1024xf32>, tensor<1024xf32>
  }
  %tot = ism.reduce %s axis = 0 : tensor<1024xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    ism.yield %r : f32
  }
  %rt = ism.splat %tot : f32 -> tensor<1xf32>
  ism.store %rt, %out[%row] : tensor<1xf32> -> memref<?xf32>
  ism.return
}

// -----

// Two unmasked loads take a ring each (3 slots of 8 KiB: a 4096-element
// bf16 chunk), and the first one's read leaves the second's copy in
// flight too; a load with a mask stays as it is.
// CHECK-LABEL: ism.kernel @two_loads
// CHECK: scf.for
// CHECK-DAG: ism.async_copy %arg0{{.*}}ring_id = 0 : i32, slot_bytes = 8192 : i64, slots = 3 : i32
// CHECK-DAG: ism.async_copy %arg3{{.*}}ring_id = 1 : i32
// CHECK-DAG: ism.load %arg0[%{{.*}}] mask
// CHECK-DAG: ism.async_load %arg0{{.*}}pending = 5 : i32
// CHECK-DAG: ism.async_load %arg3{{.*}}pending = 4 : i32
// CHECK: } {ism.load_stages = 3 : i32}
ism.kernel @two_loads(%x: memref<?xbf16>, %out: memref<?xf32>, %lim: i32,
                      %y: memref<?xbf16>)
    attributes {num_warps = 4 : i32, load_stages = 3 : i32} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xbf16>
  %chunk = arith.constant 4096 : index
  %r = ism.range 0 to 4096 : tensor<4096xi32>
  %lims = ism.splat %lim : i32 -> tensor<4096xi32>
  %keep = arith.cmpi slt, %r, %lims : tensor<4096xi32>
  %z = arith.constant dense<0.0> : tensor<4096xf32>
  %acc = scf.for %off = %c0 to %n step %chunk iter_args(%a = %z) -> (tensor<4096xf32>) {
    %t = ism.load %x[%off] mask %keep : memref<?xbf16> -> tensor<4096xbf16>
    %u = ism.load %x[%off] : memref<?xbf16> -> tensor<4096xbf16>
    %w = ism.load %y[%off] : memref<?xbf16> -> tensor<4096xbf16>
    %v = arith.extf %t : tensor<4096xbf16> to tensor<4096xf32>
    %v2 = arith.extf %u : tensor<4096xbf16> to tensor<4096xf32>
    %v3 = arith.extf %w : tensor<4096xbf16> to tensor<4096xf32>
    %s1 = arith.addf %a, %v : tensor<4096xf32>
    %s2 = arith.addf %s1, %v2 : tensor<4096xf32>
    %s = arith.addf %s2, %v3 : tensor<4096xf32>
    scf.yield %s : tensor<4096xf32>
  }
  ism.store %acc, %out[%c0] : tensor<4096xf32> -> memref<?xf32>
  ism.return
}

// -----

// A store at the offsets of the load it follows (a normalise pass that
// writes the chunk it read, in place or not) does not keep the load from
// going ahead: iterations touch disjoint chunks.
// CHECK-LABEL: ism.kernel @scale_rows
// CHECK: scf.for
// CHECK: ism.async_copy
// CHECK: ism.async_load
// CHECK: ism.store
// CHECK: } {ism.load_stages = 2 : i32}
ism.kernel @scale_rows(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %k: f32)
    attributes {num_warps = 4 : i32, load_stages = 2 : i32} {
  %row = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  %chunk = arith.constant 2048 : index
  %ks = ism.splat %k : f32 -> tensor<1x2048xf32>
  scf.for %off = %c0 to %n step %chunk {
    %t = ism.load %x[%row, %off] : memref<?x?xf32> -> tensor<1x2048xf32>
    %v = arith.mulf %t, %ks : tensor<1x2048xf32>
    ism.store %v, %x[%row, %off] : tensor<1x2048xf32> -> memref<?x?xf32>
  }
  ism.return
}

// -----

// Loops the pass leaves alone: a store that may overlap a later load of
// the same buffer (the next chunk, written shifted by one element); a
// load addressed from a loop-carried value; load_stages = 1; and, by
// default (default-stages = 1), a kernel without load_stages.
// CHECK-LABEL: ism.kernel @shifted_store
// CHECK-NOT: ism.load_stages
// CHECK-LABEL: ism.kernel @carried_address
// CHECK-NOT: ism.load_stages
// CHECK-LABEL: ism.kernel @off
// CHECK-NOT: ism.load_stages
// CHECK-LABEL: ism.kernel @by_default
// CHECK-NOT: ism.async_copy
ism.kernel @shifted_store(%x: memref<?xf32>)
    attributes {num_warps = 4 : i32, load_stages = 2 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %chunk = arith.constant 1024 : index
  scf.for %off = %c0 to %n step %chunk {
    %t = ism.load %x[%off] : memref<?xf32> -> tensor<1024xf32>
    %o = arith.addi %off, %c1 : index
    ism.store %t, %x[%o] : tensor<1024xf32> -> memref<?xf32>
  }
  ism.return
}
ism.kernel @carried_address(%x: memref<?xf32>, %out: memref<?xf32>)
    attributes {num_warps = 4 : i32, load_stages = 2 : i32} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %chunk = arith.constant 1024 : index
  %z = arith.constant dense<0.0> : tensor<1024xf32>
  %r:2 = scf.for %off = %c0 to %n step %chunk iter_args(%a = %z, %p = %c0)
      -> (tensor<1024xf32>, index) {
    %t = ism.load %x[%p] : memref<?xf32> -> tensor<1024xf32>
    %s = arith.addf %a, %t : tensor<1024xf32>
    %q = arith.addi %p, %chunk : index
    scf.yield %s, %q : tensor<1024xf32>, index
  }
  ism.store %r#0, %out[%c0] : tensor<1024xf32> -> memref<?xf32>
  ism.return
}
ism.kernel @off(%x: memref<?xf32>, %out: memref<?xf32>)
    attributes {num_warps = 4 : i32, load_stages = 1 : i32} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %chunk = arith.constant 1024 : index
  %z = arith.constant dense<0.0> : tensor<1024xf32>
  %r = scf.for %off = %c0 to %n step %chunk iter_args(%a = %z) -> (tensor<1024xf32>) {
    %t = ism.load %x[%off] : memref<?xf32> -> tensor<1024xf32>
    %s = arith.addf %a, %t : tensor<1024xf32>
    scf.yield %s : tensor<1024xf32>
  }
  ism.store %r, %out[%c0] : tensor<1024xf32> -> memref<?xf32>
  ism.return
}
ism.kernel @by_default(%x: memref<?xf32>, %out: memref<?xf32>)
    attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %chunk = arith.constant 1024 : index
  %z = arith.constant dense<0.0> : tensor<1024xf32>
  %r = scf.for %off = %c0 to %n step %chunk iter_args(%a = %z) -> (tensor<1024xf32>) {
    %t = ism.load %x[%off] : memref<?xf32> -> tensor<1024xf32>
    %s = arith.addf %a, %t : tensor<1024xf32>
    scf.yield %s : tensor<1024xf32>
  }
  ism.store %r, %out[%c0] : tensor<1024xf32> -> memref<?xf32>
  ism.return
}
