// RUN: ism-opt %s -ism-assign-layouts -ism-pipeline-gathers -split-input-file | FileCheck %s

// The CSR SpMM's loop: each chunk's column indices are loaded, then the
// rows of B they name are gathered. Pipelined with 2 ring slots
// (gather_stages = 2): before the
// loop the indices of chunks 0 and 1 and the values of chunk 0 are loaded
// and chunk 0's gather is started (if the loop runs at all); each iteration
// loads the indices of chunk k + 2 and the values of chunk k + 1, starts
// chunk k + 1's gather (predicated off past the end) into slot
// ((k + 1 - start) / 8) % 2, then waits for chunk k's (one younger group
// may stay in flight) from slot ((k - start) / 8) % 2 and computes.
// CHECK-LABEL: ism.kernel @spmm
// CHECK: %[[LIVE0:.*]] = arith.cmpi slt, %{{.*}}, %[[END:[^ ]*]] : index
// CHECK: %[[CI0:.*]] = ism.load %arg1[{{.*}}] mask
// CHECK: %[[CI1:.*]] = ism.load %arg1[{{.*}}] mask
// CHECK: %[[V0:.*]] = ism.load %arg2[{{.*}}] mask
// CHECK: %[[CIE:.*]] = ism.expand_dims %[[CI0]]
// CHECK: %[[ROWS0:.*]] = ism.broadcast %[[CIE]]
// CHECK: ism.async_gather %arg3[%[[ROWS0]], %{{.*}}] slot %{{.*}} if %[[LIVE0]] {ring = 0 : i32, slots = 2 : i32}
// CHECK: scf.for %[[K:[^ ]*]] = %{{.*}} to %[[END]] step %c8 iter_args(%[[ACC:[^ ]*]] = %{{[^,]*}}, %{{[^ ]*}} = %{{[^,]*}}, %[[CI:[^ ]*]] = %[[CI1]], %[[V:[^ ]*]] = %[[V0]])
// CHECK: arith.cmpi slt, %[[K]], %{{.*}} : index
// CHECK: %[[MORE:.*]] = arith.cmpi slt, %[[K]], %{{.*}} : index
// CHECK: %[[NEXTCI:.*]] = ism.load %arg1[{{.*}}] mask
// CHECK: %[[NEXTV:.*]] = ism.load %arg2[{{.*}}] mask
// CHECK: ism.expand_dims %[[CI]]
// CHECK: ism.async_gather %arg3[{{.*}}] slot %{{.*}} if %[[MORE]] {ring = 0 : i32, slots = 2 : i32}
// CHECK: %[[ROWS:.*]] = ism.async_gather_wait ring 0 slot %{{.*}} {pending = 1 : i32, slots = 2 : i32} : tensor<8x512xf32
// CHECK: ism.expand_dims %[[V]]
// CHECK: arith.mulf %{{.*}}, %[[ROWS]]
// CHECK: scf.yield %{{.*}}, %{{.*}}, %[[NEXTCI]], %[[NEXTV]]
// CHECK-NOT: ism.gather
ism.kernel @spmm(%rowptr: memref<?xi32>, %colind: memref<?xi32>,
                 %values: memref<?xf32>, %B: memref<?x?xf32>,
                 %Y: memref<?x?xf32>)
    attributes {num_warps = 4 : i32, gather_stages = 2 : i32} {
  %row = ism.program_id x : index
  %c8 = arith.constant 8 : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rp1 = arith.addi %row, %c1 : index
  %s = memref.load %rowptr[%row] : memref<?xi32>
  %e = memref.load %rowptr[%rp1] : memref<?xi32>
  %start = arith.index_cast %s : i32 to index
  %end = arith.index_cast %e : i32 to index
  %lane = ism.range 0 to 8 : tensor<8xi32>
  %cols = ism.range 0 to 512 : tensor<512xi32>
  %colsr = ism.expand_dims %cols axis = 0 : tensor<512xi32> -> tensor<1x512xi32>
  %colb = ism.broadcast %colsr : tensor<1x512xi32> -> tensor<8x512xi32>
  %ends = ism.splat %e : i32 -> tensor<8xi32>
  %zero = arith.constant dense<0.0> : tensor<512xf32>
  %acc = scf.for %k = %start to %end step %c8 iter_args(%acc = %zero)
      -> (tensor<512xf32>) {
    %k32 = arith.index_cast %k : index to i32
    %ks = ism.splat %k32 : i32 -> tensor<8xi32>
    %idx = arith.addi %lane, %ks : tensor<8xi32>
    %live = arith.cmpi slt, %idx, %ends : tensor<8xi32>
    %ci = ism.load %colind[%k] mask %live : memref<?xi32> -> tensor<8xi32>
    %v = ism.load %values[%k] mask %live : memref<?xf32> -> tensor<8xf32>
    %cie = ism.expand_dims %ci axis = 1 : tensor<8xi32> -> tensor<8x1xi32>
    %rowb = ism.broadcast %cie : tensor<8x1xi32> -> tensor<8x512xi32>
    %bt = ism.gather %B[%rowb, %colb] : memref<?x?xf32>[tensor<8x512xi32>,
        tensor<8x512xi32>] -> tensor<8x512xf32>
    %ve = ism.expand_dims %v axis = 1 : tensor<8xf32> -> tensor<8x1xf32>
    %vb = ism.broadcast %ve : tensor<8x1xf32> -> tensor<8x512xf32>
    %prod = arith.mulf %vb, %bt : tensor<8x512xf32>
    %part = ism.reduce %prod axis = 0 : tensor<8x512xf32> -> tensor<512xf32> {
    ^bb0(%a: f32, %b: f32):
      %sum = arith.addf %a, %b : f32
      ism.yield %sum : f32
    }
    %next = arith.addf %acc, %part : tensor<512xf32>
    scf.yield %next : tensor<512xf32>
  }
  %out = ism.expand_dims %acc axis = 0 : tensor<512xf32> -> tensor<1x512xf32>
  ism.store %out, %Y[%row, %c0] : tensor<1x512xf32> -> memref<?x?xf32>
  ism.return
}

// -----

// gather_stages = 3: three slots, gathers started two iterations ahead
// (two younger groups at each wait) and their indices three ahead.
// CHECK-LABEL: ism.kernel @three_slots
// CHECK-COUNT-2: ism.load %arg0
// CHECK: ism.async_gather {{.*}} {ring = 0 : i32, slots = 3 : i32}
// CHECK: ism.load %arg0
// CHECK: ism.async_gather {{.*}} {ring = 0 : i32, slots = 3 : i32}
// CHECK: scf.for
// CHECK: ism.load %arg0
// CHECK: ism.async_gather {{.*}} if {{.*}} {ring = 0 : i32, slots = 3 : i32}
// CHECK: ism.async_gather_wait ring 0 slot %{{.*}} {pending = 2 : i32, slots = 3 : i32}
ism.kernel @three_slots(%colind: memref<?xi32>, %B: memref<?x?xf32>,
                        %Y: memref<?x?xf32>, %n: index)
    attributes {num_warps = 4 : i32, gather_stages = 3 : i32} {
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

// Two gathers in one loop, each with a ring of its own: at each wait, the
// first gather has three younger groups (the second's of its iteration,
// both of the next), the second two.
// CHECK-LABEL: ism.kernel @two_gathers
// CHECK: scf.for
// CHECK: ism.async_gather {{.*}} {ring = 0 : i32, slots = 2 : i32}
// CHECK: ism.async_gather {{.*}} {ring = 1 : i32, slots = 2 : i32}
// CHECK: ism.async_gather_wait ring 0 {{.*}} {pending = 3 : i32, slots = 2 : i32}
// CHECK: ism.async_gather_wait ring 1 {{.*}} {pending = 2 : i32, slots = 2 : i32}
ism.kernel @two_gathers(%idx: memref<?xi32>, %A: memref<?xf32>,
                        %B: memref<?xf32>, %Y: memref<?xf32>, %n: index)
    attributes {num_warps = 4 : i32, gather_stages = 2 : i32} {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant dense<0.0> : tensor<128xf32>
  %acc = scf.for %k = %c0 to %n step %c128 iter_args(%acc = %zero)
      -> (tensor<128xf32>) {
    %i = ism.load %idx[%k] : memref<?xi32> -> tensor<128xi32>
    %a = ism.gather %A[%i] : memref<?xf32>[tensor<128xi32>] -> tensor<128xf32>
    %b = ism.gather %B[%i] : memref<?xf32>[tensor<128xi32>] -> tensor<128xf32>
    %p = arith.mulf %a, %b : tensor<128xf32>
    %next = arith.addf %acc, %p : tensor<128xf32>
    scf.yield %next : tensor<128xf32>
  }
  ism.store %acc, %Y[%c0] : tensor<128xf32> -> memref<?xf32>
  ism.return
}

// -----

// Loops left as they are: without gather_stages (the default, 1) and with
// gather_stages = 1; a loop that writes memory (a
// prefetched load could read what an earlier iteration wrote); a gather
// whose coordinates depend on another iteration argument; a gather with a
// padding other than zero (the ring's copies fill zeros).
// CHECK-LABEL: ism.kernel @default
// CHECK-NOT: ism.async_gather
// CHECK: ism.gather
// CHECK-LABEL: ism.kernel @off
// CHECK-NOT: ism.async_gather
// CHECK: ism.gather
// CHECK-LABEL: ism.kernel @writes
// CHECK-NOT: ism.async_gather
// CHECK: ism.gather
// CHECK-LABEL: ism.kernel @chased
// CHECK-NOT: ism.async_gather
// CHECK: ism.gather
// CHECK-LABEL: ism.kernel @padded
// CHECK-NOT: ism.async_gather
// CHECK: ism.gather
// CHECK-LABEL: ism.kernel @carries_index
// CHECK-NOT: ism.async_gather
// CHECK: ism.gather
ism.kernel @default(%idx: memref<?xi32>, %A: memref<?xf32>, %Y: memref<?xf32>,
                    %n: index) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant dense<0.0> : tensor<128xf32>
  %acc = scf.for %k = %c0 to %n step %c128 iter_args(%acc = %zero)
      -> (tensor<128xf32>) {
    %i = ism.load %idx[%k] : memref<?xi32> -> tensor<128xi32>
    %a = ism.gather %A[%i] : memref<?xf32>[tensor<128xi32>] -> tensor<128xf32>
    %next = arith.addf %acc, %a : tensor<128xf32>
    scf.yield %next : tensor<128xf32>
  }
  ism.store %acc, %Y[%c0] : tensor<128xf32> -> memref<?xf32>
  ism.return
}
ism.kernel @off(%idx: memref<?xi32>, %A: memref<?xf32>, %Y: memref<?xf32>,
                %n: index) attributes {num_warps = 4 : i32, gather_stages = 1 : i32} {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant dense<0.0> : tensor<128xf32>
  %acc = scf.for %k = %c0 to %n step %c128 iter_args(%acc = %zero)
      -> (tensor<128xf32>) {
    %i = ism.load %idx[%k] : memref<?xi32> -> tensor<128xi32>
    %a = ism.gather %A[%i] : memref<?xf32>[tensor<128xi32>] -> tensor<128xf32>
    %next = arith.addf %acc, %a : tensor<128xf32>
    scf.yield %next : tensor<128xf32>
  }
  ism.store %acc, %Y[%c0] : tensor<128xf32> -> memref<?xf32>
  ism.return
}
ism.kernel @writes(%idx: memref<?xi32>, %A: memref<?xf32>, %Y: memref<?xf32>,
                   %n: index) attributes {num_warps = 4 : i32, gather_stages = 2 : i32} {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  scf.for %k = %c0 to %n step %c128 {
    %i = ism.load %idx[%k] : memref<?xi32> -> tensor<128xi32>
    %a = ism.gather %A[%i] : memref<?xf32>[tensor<128xi32>] -> tensor<128xf32>
    ism.store %a, %Y[%k] : tensor<128xf32> -> memref<?xf32>
  }
  ism.return
}
ism.kernel @chased(%next: memref<?xi32>, %A: memref<?xf32>, %Y: memref<?xf32>,
                   %n: index) attributes {num_warps = 4 : i32, gather_stages = 2 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %start = ism.range 0 to 128 : tensor<128xi32>
  %zero = arith.constant dense<0.0> : tensor<128xf32>
  %r:2 = scf.for %k = %c0 to %n step %c1 iter_args(%p = %start, %acc = %zero)
      -> (tensor<128xi32>, tensor<128xf32>) {
    %a = ism.gather %A[%p] : memref<?xf32>[tensor<128xi32>] -> tensor<128xf32>
    %q = ism.gather %next[%p] : memref<?xi32>[tensor<128xi32>] -> tensor<128xi32>
    %sum = arith.addf %acc, %a : tensor<128xf32>
    scf.yield %q, %sum : tensor<128xi32>, tensor<128xf32>
  }
  ism.store %r#1, %Y[%c0] : tensor<128xf32> -> memref<?xf32>
  ism.return
}
ism.kernel @padded(%idx: memref<?xi32>, %A: memref<?xf32>, %Y: memref<?xf32>,
                   %n: index) attributes {num_warps = 4 : i32, gather_stages = 2 : i32} {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant dense<0.0> : tensor<128xf32>
  %acc = scf.for %k = %c0 to %n step %c128 iter_args(%acc = %zero)
      -> (tensor<128xf32>) {
    %i = ism.load %idx[%k] : memref<?xi32> -> tensor<128xi32>
    %a = ism.gather %A[%i] {padding = 1.0 : f32} : memref<?xf32>[tensor<128xi32>] -> tensor<128xf32>
    %next = arith.addf %acc, %a : tensor<128xf32>
    scf.yield %next : tensor<128xf32>
  }
  ism.store %acc, %Y[%c0] : tensor<128xf32> -> memref<?xf32>
  ism.return
}
// The loop carries the loaded indices out (a value of an early stage).
ism.kernel @carries_index(%idx: memref<?xi32>, %A: memref<?xf32>,
                          %Y: memref<?xf32>, %Z: memref<?xi32>, %n: index)
    attributes {num_warps = 4 : i32, gather_stages = 2 : i32} {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant dense<0.0> : tensor<128xf32>
  %none = arith.constant dense<0> : tensor<128xi32>
  %r:2 = scf.for %k = %c0 to %n step %c128 iter_args(%acc = %zero, %last = %none)
      -> (tensor<128xf32>, tensor<128xi32>) {
    %i = ism.load %idx[%k] : memref<?xi32> -> tensor<128xi32>
    %a = ism.gather %A[%i] : memref<?xf32>[tensor<128xi32>] -> tensor<128xf32>
    %next = arith.addf %acc, %a : tensor<128xf32>
    scf.yield %next, %i : tensor<128xf32>, tensor<128xi32>
  }
  ism.store %r#0, %Y[%c0] : tensor<128xf32> -> memref<?xf32>
  ism.store %r#1, %Z[%c0] : tensor<128xi32> -> memref<?xi32>
  ism.return
}
