// RUN: ism-opt %s -split-input-file --ism-assign-layouts --ism-coschedule | FileCheck %s

// A chain: @norm writes %h, @proj reads its weights %w and %h and writes %o,
// @last reads %o. One kernel of three partitions, each on warps from 0 with
// barrier 1 and its shared memory after the two ticket slots (byte 16); a
// done counter each (1, 2, 3) after the ticket (0), then the four words of
// the error record and the count of finished CTAs: 9 counters. @proj loads its weight rows (and computes
// their address) before it waits for @norm; the tile of %h only after.
// `params` lists the fused kernel's parameters as (launch, argument) pairs,
// (launch, -1 - d) for grid size d: %x, %h of @norm, %w, %o of @proj, then
// the grids of @norm and @proj (the runner binds them from this list).

// CHECK-LABEL: ism.kernel @norm__proj__last(
// CHECK-SAME: ism.coschedule = {ctas_per_sm = {{[0-9]+}} : i32, index = 0 : i32, params = array<i32: 0, 0, 0, 1, 1, 0, 1, 2, 2, 1, 0, -1, 0, -2, 1, -1>, policy = "ordered", prefetch = true, ring_stages = -1 : i32, timeout_ms = 1000 : i32, work_counters = 9 : i32}
// CHECK: ism.warp_specialize ordered grids(
// CHECK-SAME: #ism.partition<{warpBase = 0, numWarps = 4, registers = [], barriers = [1], sharedMemory = 16, stages = 0, workCounter = 1, groupSize = 0}>
// CHECK-SAME: #ism.partition<{warpBase = 0, numWarps = 8, registers = [], barriers = [1], sharedMemory = 16, stages = 0, workCounter = 2, groupSize = 0}>
// CHECK-SAME: #ism.partition<{warpBase = 0, numWarps = 4, registers = [], barriers = [1], sharedMemory = 16, stages = 0, workCounter = 3, groupSize = 0}>]
// The first launch waits for nothing.
// CHECK-NOT: ism.task_wait
// CHECK: ism.store
// CHECK: }, {
// CHECK: %[[PID:.*]] = ism.program_id x
// CHECK: %[[R0:.*]] = arith.muli %[[PID]]
// CHECK: %[[W:.*]] = ism.load %{{.*}}[%[[R0]], %{{.*}}] : memref<?x?xf32> -> tensor<8x256xf32
// CHECK-NEXT: ism.task_wait [0]
// CHECK-NEXT: %[[H:.*]] = ism.load
// CHECK-SAME: tensor<1x256xf32
// CHECK: ism.reduce
// CHECK: }, {
// CHECK: ism.task_wait [1]
// CHECK: ism.load
// CHECK-LABEL: func.func @main(
// The grid is the sum of the launches' programs.
// CHECK: %[[S1:.*]] = arith.addi
// CHECK: %[[S2:.*]] = arith.addi %[[S1]]
// CHECK: ism.launch @norm__proj__last grid(%[[S2]])
// CHECK-NOT: ism.coschedule

ism.kernel @norm(%x: memref<?x?xf32>, %h: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<1x256xf32>
  %s = arith.mulf %t, %t : tensor<1x256xf32>
  ism.store %s, %h[%c0, %c0] : tensor<1x256xf32> -> memref<?x?xf32>
  ism.return
}

ism.kernel @proj(%w: memref<?x?xf32>, %h: memref<?x?xf32>,
                 %o: memref<?xf32>) attributes {num_warps = 8 : i32} {
  %pid = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %r0 = arith.muli %pid, %c8 : index
  %wt = ism.load %w[%r0, %c0] : memref<?x?xf32> -> tensor<8x256xf32>
  %ht = ism.load %h[%c0, %c0] : memref<?x?xf32> -> tensor<1x256xf32>
  %hb = ism.broadcast %ht : tensor<1x256xf32> -> tensor<8x256xf32>
  %p = arith.mulf %wt, %hb : tensor<8x256xf32>
  %d = ism.reduce %p axis = 1 : tensor<8x256xf32> -> tensor<8xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    ism.yield %s : f32
  }
  ism.store %d, %o[%r0] : tensor<8xf32> -> memref<?xf32>
  ism.return
}

ism.kernel @last(%o: memref<?xf32>, %y: memref<?xf32>) {
  %pid = ism.program_id x : index
  %c128 = arith.constant 128 : index
  %i = arith.muli %pid, %c128 : index
  %t = ism.load %o[%i] : memref<?xf32> -> tensor<128xf32>
  %s = arith.addf %t, %t : tensor<128xf32>
  ism.store %s, %y[%i] : tensor<128xf32> -> memref<?xf32>
  ism.return
}

func.func @main(%x: memref<?x?xf32>, %h: memref<?x?xf32>, %w: memref<?x?xf32>,
                %o: memref<?xf32>, %y: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  ism.coschedule ordered {
    ism.launch @norm grid(%c1) (%x, %h) : (memref<?x?xf32>, memref<?x?xf32>)
    ism.launch @proj grid(%c4) (%w, %h, %o)
        : (memref<?x?xf32>, memref<?x?xf32>, memref<?xf32>)
    ism.launch @last grid(%c4) (%o, %y) : (memref<?xf32>, memref<?xf32>)
  }
  return
}

// -----

// Which launches a launch waits for: @a and @b read %x and write their own
// buffers (neither waits); @c reads both (waits for 0 and 1); @d reads %p
// and %r, but @c already waited for @a, so @d waits for @c only; @e writes
// %x, which @a and @b read (write after read): it waits for them, and its
// store stays after the wait. With timeout_ms.

// CHECK-LABEL: ism.kernel @a__b__c__d__e(
// CHECK-SAME: timeout_ms = 50 : i32, work_counters = 11 : i32
// CHECK-NOT: ism.task_wait
// CHECK: }, {
// CHECK-NOT: ism.task_wait
// CHECK: }, {
// CHECK: ism.task_wait [0, 1]
// CHECK: }, {
// CHECK: ism.task_wait [2]
// CHECK: }, {
// CHECK: ism.task_wait [0, 1]
// CHECK-NOT: }
// CHECK: ism.store

ism.kernel @a(%src: memref<?xf32>, %dst: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %t = ism.load %src[%c0] : memref<?xf32> -> tensor<128xf32>
  ism.store %t, %dst[%c0] : tensor<128xf32> -> memref<?xf32>
  ism.return
}

ism.kernel @b(%src: memref<?xf32>, %dst: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %t = ism.load %src[%c0] : memref<?xf32> -> tensor<128xf32>
  ism.store %t, %dst[%c0] : tensor<128xf32> -> memref<?xf32>
  ism.return
}

ism.kernel @c(%p: memref<?xf32>, %q: memref<?xf32>, %dst: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %t = ism.load %p[%c0] : memref<?xf32> -> tensor<128xf32>
  %u = ism.load %q[%c0] : memref<?xf32> -> tensor<128xf32>
  %s = arith.addf %t, %u : tensor<128xf32>
  ism.store %s, %dst[%c0] : tensor<128xf32> -> memref<?xf32>
  ism.return
}

ism.kernel @d(%p: memref<?xf32>, %q: memref<?xf32>, %dst: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %t = ism.load %p[%c0] : memref<?xf32> -> tensor<128xf32>
  %u = ism.load %q[%c0] : memref<?xf32> -> tensor<128xf32>
  %s = arith.addf %t, %u : tensor<128xf32>
  ism.store %s, %dst[%c0] : tensor<128xf32> -> memref<?xf32>
  ism.return
}

ism.kernel @e(%dst: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant dense<1.0> : tensor<128xf32>
  ism.store %one, %dst[%c0] : tensor<128xf32> -> memref<?xf32>
  ism.return
}

func.func @main(%x: memref<?xf32>, %p: memref<?xf32>, %q: memref<?xf32>,
                %r: memref<?xf32>, %s: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  ism.coschedule ordered attributes {timeout_ms = 50 : i32} {
    ism.launch @a grid(%c1) (%x, %p) : (memref<?xf32>, memref<?xf32>)
    ism.launch @b grid(%c1) (%x, %q) : (memref<?xf32>, memref<?xf32>)
    ism.launch @c grid(%c1) (%p, %q, %r)
        : (memref<?xf32>, memref<?xf32>, memref<?xf32>)
    ism.launch @d grid(%c1) (%p, %r, %s)
        : (memref<?xf32>, memref<?xf32>, memref<?xf32>)
    ism.launch @e grid(%c1) (%x) : (memref<?xf32>)
  }
  return
}

// -----

// prefetch = false: the wait comes first, the weight load after it.

// CHECK-LABEL: ism.kernel @norm__proj(
// CHECK-SAME: prefetch = false
// CHECK: }, {
// CHECK-NEXT: ism.task_wait [0]
// CHECK: ism.load
// CHECK: ism.load

ism.kernel @norm(%x: memref<?x?xf32>, %h: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<1x256xf32>
  ism.store %t, %h[%c0, %c0] : tensor<1x256xf32> -> memref<?x?xf32>
  ism.return
}

ism.kernel @proj(%w: memref<?x?xf32>, %h: memref<?x?xf32>,
                 %o: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %wt = ism.load %w[%c0, %c0] : memref<?x?xf32> -> tensor<1x256xf32>
  %ht = ism.load %h[%c0, %c0] : memref<?x?xf32> -> tensor<1x256xf32>
  %p = arith.mulf %wt, %ht : tensor<1x256xf32>
  ism.store %p, %o[%c0, %c0] : tensor<1x256xf32> -> memref<?x?xf32>
  ism.return
}

func.func @main(%x: memref<?x?xf32>, %h: memref<?x?xf32>, %w: memref<?x?xf32>,
                %o: memref<?x?xf32>) {
  %c1 = arith.constant 1 : index
  ism.coschedule ordered attributes {prefetch = false} {
    ism.launch @norm grid(%c1) (%x, %h) : (memref<?x?xf32>, memref<?x?xf32>)
    ism.launch @proj grid(%c1) (%w, %h, %o)
        : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>)
  }
  return
}
