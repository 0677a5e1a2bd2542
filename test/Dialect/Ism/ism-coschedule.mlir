// RUN: ism-opt %s -split-input-file --ism-assign-layouts --ism-accelerate-dot --ism-pipeline --ism-coschedule | FileCheck %s

// A wgmma GEMM and a row kernel: one kernel of three partitions. The GEMM
// comes first (warps 0-11: 8 consumers and a producer warpgroup, barriers
// 1-3, its ring from byte 0, a static tile order grouped by 8); the row
// kernel runs twice (warps 12-15, 16-19; a third copy would leave the
// consumers fewer registers than their accumulator needs), each copy with
// its own barrier and shared memory after the GEMM's ring, both taking
// their rows from work counter 0. The copies may not cost the GEMM ring
// a stage; the shared memory left holds a 4-row ring per copy
// (ring_stages). setmaxnreg: 40 for the producer, 72 for the row kernel
// (an estimate from its 16 elements a thread), the rest of the 640
// threads' 96 registers each for the consumers.

// CHECK-NOT: ism.kernel @matmul(
// CHECK-NOT: ism.kernel @rownorm(
// CHECK-LABEL: ism.kernel @matmul__rownorm(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<?x?xbf16>, %{{.*}}: memref<?x?xbf16>, %{{.*}}: memref<?x?xbf16>, %[[X:[a-z0-9]+]]: memref<?x?xf32>, %{{.*}}: memref<?x?xf32>, %[[G0X:[a-z0-9]+]]: index, %[[G0Y:[a-z0-9]+]]: index, %[[G1:[a-z0-9]+]]: index, %[[G1X:[a-z0-9]+]]: index)
// CHECK-SAME: ism.coschedule = {ctas_per_sm = 1 : i32, index = 0 : i32, params = array<i32: {{[-0-9, ]+}}>, policy = "warp_specialized", prefetch = true, ring_stages = 4 : i32, work_counters = 1 : i32}
// CHECK-SAME: num_warps = 20
// CHECK: ism.warp_specialize warp_specialized grids(%[[G0X]], %[[G0Y]], %[[G1]], %[[G1X]], %[[G1]], %[[G1]], %[[G1X]], %[[G1]], %[[G1]], %[[G1X]], %[[G1]], %[[G1]], %[[G1X]], %[[G1]], %[[G1]])
// CHECK-SAME: #ism.partition<{warpBase = 0, numWarps = 12, registers = [144, 144, 40], barriers = [1, 2, 3], sharedMemory = 0, stages = 4, workCounter = -1, groupSize = 8}>
// CHECK-SAME: #ism.partition<{warpBase = 12, numWarps = 4, registers = [72], barriers = [4], sharedMemory = 132160, stages = 0, workCounter = 0, groupSize = 0}>
// CHECK-SAME: #ism.partition<{warpBase = 16, numWarps = 4, registers = [72], barriers = [5], sharedMemory = 164976, stages = 0, workCounter = 0, groupSize = 0}>
// Once the GEMM's tiles are done, each consumer warpgroup runs one more
// copy of the norm (after = 0) in the GEMM's ring, one 32816-byte slice
// each, on a barrier of its own.
// CHECK-SAME: #ism.partition<{warpBase = 0, numWarps = 4, registers = [72], barriers = [6], sharedMemory = 0, stages = 0, workCounter = 0, groupSize = 0, after = 0}>
// CHECK-SAME: #ism.partition<{warpBase = 4, numWarps = 4, registers = [72], barriers = [7], sharedMemory = 32816, stages = 0, workCounter = 0, groupSize = 0, after = 0}>]
// CHECK: ism.program_id x
// CHECK: scf.for
// CHECK: ism.dot
// CHECK: } {ism.pipeline = {num_stages = 4 : i64}}
// CHECK: }, {
// CHECK: ism.reduce
// CHECK: ism.return
// CHECK-LABEL: func.func @main(
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: %[[T0:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK: %[[T0Z:.*]] = arith.muli %[[T0]], %[[ONE]] : index
// CHECK: %[[T1Y:.*]] = arith.muli %{{.*}}, %[[ONE]] : index
// CHECK: %[[T1:.*]] = arith.muli %[[T1Y]], %[[ONE]] : index
// CHECK: %[[MAX:.*]] = arith.maxui %[[T0Z]], %[[T1]] : index
// CHECK: ism.launch @matmul__rownorm grid(%[[MAX]])
// CHECK-NOT: ism.coschedule

ism.kernel @matmul(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>,
                   %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bm : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero)
      -> (tensor<128x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x128xbf16>
        -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<128x128xbf16> -> memref<?x?xbf16>
  ism.return
}

ism.kernel @rownorm(%x: memref<?x?xf32>, %y: memref<?x?xf32>)
    attributes {num_warps = 4 : i32} {
  %row = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%row, %c0] : memref<?x?xf32> -> tensor<1x2048xf32>
  %s = ism.reduce %t axis = 1 : tensor<1x2048xf32> -> tensor<1xf32> {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    ism.yield %r : f32
  }
  %e = ism.expand_dims %s axis = 1 : tensor<1xf32> -> tensor<1x1xf32>
  %b = ism.broadcast %e : tensor<1x1xf32> -> tensor<1x2048xf32>
  %o = arith.divf %t, %b : tensor<1x2048xf32>
  ism.store %o, %y[%row, %c0] : tensor<1x2048xf32> -> memref<?x?xf32>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>,
                %C: memref<?x?xbf16>, %x: memref<?x?xf32>,
                %y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %gm = arith.constant 32 : index
  %gn = arith.constant 16 : index
  %rows = memref.dim %x, %c0 : memref<?x?xf32>
  ism.coschedule warp_specialized {
    ism.launch @matmul grid(%gm, %gn) (%A, %B, %C)
        : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
    ism.launch @rownorm grid(%rows) (%x, %y)
        : (memref<?x?xf32>, memref<?x?xf32>)
  }
  return
}

// -----

// block_interleaved: the partitions take different CTAs (warps from 0, the
// same barriers and shared memory from byte 0 in each); the launch covers
// both grids one after the other. No copies, no work counters.

// CHECK-LABEL: ism.kernel @matmul__rownorm(
// CHECK-SAME: ism.coschedule = {ctas_per_sm = 1 : i32, index = 0 : i32, params = array<i32: {{[-0-9, ]+}}>, policy = "block_interleaved", prefetch = false, ring_stages = 0 : i32, work_counters = 0 : i32}
// CHECK-SAME: num_warps = 12
// CHECK: ism.warp_specialize block_interleaved
// CHECK-SAME: #ism.partition<{warpBase = 0, numWarps = 12, registers = [{{[0-9]+}}, {{[0-9]+}}, 40], barriers = [1, 2, 3], sharedMemory = 0, stages = 4, workCounter = -1, groupSize = 8}>
// CHECK-SAME: #ism.partition<{warpBase = 0, numWarps = 4, registers = [], barriers = [1], sharedMemory = 0, stages = 0, workCounter = -1, groupSize = 0}>]
// CHECK-LABEL: func.func @main(
// CHECK: %[[SUM:.*]] = arith.addi
// CHECK: ism.launch @matmul__rownorm grid(%[[SUM]])

ism.kernel @matmul(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>,
                   %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bm : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero)
      -> (tensor<128x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x128xbf16>
        -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<128x128xbf16> -> memref<?x?xbf16>
  ism.return
}

ism.kernel @rownorm(%x: memref<?x?xf32>, %y: memref<?x?xf32>)
    attributes {num_warps = 4 : i32} {
  %row = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%row, %c0] : memref<?x?xf32> -> tensor<1x2048xf32>
  %s = ism.reduce %t axis = 1 : tensor<1x2048xf32> -> tensor<1xf32> {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    ism.yield %r : f32
  }
  %e = ism.expand_dims %s axis = 1 : tensor<1xf32> -> tensor<1x1xf32>
  %b = ism.broadcast %e : tensor<1x1xf32> -> tensor<1x2048xf32>
  %o = arith.divf %t, %b : tensor<1x2048xf32>
  ism.store %o, %y[%row, %c0] : tensor<1x2048xf32> -> memref<?x?xf32>
  ism.return
}


func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>,
                %C: memref<?x?xbf16>, %x: memref<?x?xf32>,
                %y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %gm = arith.constant 32 : index
  %gn = arith.constant 16 : index
  %rows = memref.dim %x, %c0 : memref<?x?xf32>
  ism.coschedule block_interleaved {
    ism.launch @matmul grid(%gm, %gn) (%A, %B, %C)
        : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
    ism.launch @rownorm grid(%rows) (%x, %y)
        : (memref<?x?xf32>, memref<?x?xf32>)
  }
  return
}

// -----

// The attributes override the choices: 3 ring stages, one copy, fixed
// registers, static striding, no prefetch.

// CHECK-LABEL: ism.kernel @matmul__rownorm(
// CHECK-SAME: ism.coschedule = {ctas_per_sm = 1 : i32, index = 0 : i32, params = array<i32: {{[-0-9, ]+}}>, policy = "warp_specialized", prefetch = false, ring_stages = 0 : i32, work_counters = 0 : i32}
// CHECK-SAME: num_warps = 16
// CHECK: #ism.partition<{warpBase = 0, numWarps = 12, registers = [200, 200, 40], barriers = [1, 2, 3], sharedMemory = 0, stages = 3, workCounter = -1, groupSize = 8}>
// CHECK-SAME: #ism.partition<{warpBase = 12, numWarps = 4, registers = [64], barriers = [4], sharedMemory = 99376, stages = 0, workCounter = -1, groupSize = 0}>]
// CHECK: } {ism.pipeline = {num_stages = 3 : i64}}

ism.kernel @matmul(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>,
                   %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bm : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero)
      -> (tensor<128x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x128xbf16>
        -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<128x128xbf16> -> memref<?x?xbf16>
  ism.return
}

ism.kernel @rownorm(%x: memref<?x?xf32>, %y: memref<?x?xf32>)
    attributes {num_warps = 4 : i32} {
  %row = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%row, %c0] : memref<?x?xf32> -> tensor<1x2048xf32>
  %s = ism.reduce %t axis = 1 : tensor<1x2048xf32> -> tensor<1xf32> {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    ism.yield %r : f32
  }
  %e = ism.expand_dims %s axis = 1 : tensor<1xf32> -> tensor<1x1xf32>
  %b = ism.broadcast %e : tensor<1x1xf32> -> tensor<1x2048xf32>
  %o = arith.divf %t, %b : tensor<1x2048xf32>
  ism.store %o, %y[%row, %c0] : tensor<1x2048xf32> -> memref<?x?xf32>
  ism.return
}


func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>,
                %C: memref<?x?xbf16>, %x: memref<?x?xf32>,
                %y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %gm = arith.constant 32 : index
  %gn = arith.constant 16 : index
  %rows = memref.dim %x, %c0 : memref<?x?xf32>
  ism.coschedule warp_specialized attributes {stages = 3 : i32,
      replicas = array<i32: 1, 1>, registers = array<i32: 200, 200, 40, 64>,
      work_counters = false, prefetch = false} {
    ism.launch @matmul grid(%gm, %gn) (%A, %B, %C)
        : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
    ism.launch @rownorm grid(%rows) (%x, %y)
        : (memref<?x?xf32>, memref<?x?xf32>)
  }
  return
}

// -----

// Tensor-core products outside a K loop (an attention-like loop: S = Q K^T,
// then O += P V with P from registers) next to a row kernel. The pair is
// fused (the products use the tensor cores), the products' partition comes
// first although its launch is second (warps 0-3: its wgmma products start
// on a warpgroup), its B operands (K and V) go through a ring of the
// kernel's num_stages = 2 (operandStages), and the row kernel's slices
// follow its shared memory. Next to a tensor-core partition the row kernel
// runs in copies sharing its work counter (4 here: the most), each loading
// its next rows ahead into a ring (ring_stages); the products' operands are
// not loaded ahead by the work loop (their lowering places them).
// setmaxnreg: the row copies keep their estimate (56), the products get
// theirs (32 carried + 1.5 x a 32-register S + 56 = 136) from the rest of
// the 640 threads' 96 registers each, and the copies share what is left
// (80).

// CHECK-LABEL: ism.kernel @rows__products(
// CHECK-SAME: ism.coschedule = {ctas_per_sm = 1 : i32, index = 0 : i32, params = array<i32: {{[-0-9, ]+}}>, policy = "warp_specialized", prefetch = true, ring_stages = 4 : i32, work_counters = 2 : i32}
// CHECK-SAME: num_warps = 20
// CHECK: ism.warp_specialize warp_specialized
// CHECK-SAME: #ism.partition<{warpBase = 4, numWarps = 4, registers = [80], barriers = [2], sharedMemory = 66576, stages = 0, workCounter = 1, groupSize = 0}>
// CHECK-SAME: #ism.partition<{warpBase = 16, numWarps = 4, registers = [80], barriers = [5], sharedMemory = 115872, stages = 0, workCounter = 1, groupSize = 0}>
// CHECK-SAME: #ism.partition<{warpBase = 0, numWarps = 4, registers = [136], barriers = [1], sharedMemory = 0, stages = 0, workCounter = 0, groupSize = 0, operandStages = 2}>
// CHECK: ism.reduce
// CHECK: }, {
// CHECK: scf.for
// CHECK: ism.dot
// CHECK: ism.dot
// CHECK-LABEL: func.func @main(
// CHECK: ism.launch @rows__products

ism.kernel @rows(%x: memref<?x?xf32>, %y: memref<?x?xf32>)
    attributes {num_warps = 4 : i32} {
  %r = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%r, %c0] : memref<?x?xf32> -> tensor<1x1024xf32>
  %s = ism.reduce %t axis = 1 : tensor<1x1024xf32> -> tensor<1xf32> {
  ^bb0(%a: f32, %b: f32):
    %v = arith.addf %a, %b : f32
    ism.yield %v : f32
  }
  %s2 = ism.expand_dims %s axis = 1 : tensor<1xf32> -> tensor<1x1xf32>
  %sb = ism.broadcast %s2 : tensor<1x1xf32> -> tensor<1x1024xf32>
  %o = arith.subf %t, %sb : tensor<1x1024xf32>
  ism.store %o, %y[%r, %c0] : tensor<1x1024xf32> -> memref<?x?xf32>
  ism.return
}

ism.kernel @products(%Q: memref<?x?xbf16>, %K: memref<?x?xbf16>,
                     %V: memref<?x?xbf16>, %O: memref<?x?xf32>)
    attributes {num_warps = 4 : i32, num_stages = 2 : i32} {
  %pm = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pm, %c64 : index
  %S = memref.dim %K, %c0 : memref<?x?xbf16>
  %q = ism.load %Q[%m0, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
  %zs = arith.constant dense<0.0> : tensor<64x64xf32>
  %o = scf.for %n = %c0 to %S step %c64 iter_args(%acc = %zs)
      -> (tensor<64x64xf32>) {
    %k = ism.load %K[%n, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = ism.dot %q, %kt, %zs : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
    %p = arith.truncf %s : tensor<64x64xf32> to tensor<64x64xbf16>
    %v = ism.load %V[%n, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %d = ism.dot %p, %v, %acc : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  ism.store %o, %O[%m0, %c0] : tensor<64x64xf32> -> memref<?x?xf32>
  ism.return
}

func.func @main(%x: memref<?x?xf32>, %y: memref<?x?xf32>,
                %Q: memref<?x?xbf16>, %K: memref<?x?xbf16>,
                %V: memref<?x?xbf16>, %O: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %rows = memref.dim %x, %c0 : memref<?x?xf32>
  %M = memref.dim %Q, %c0 : memref<?x?xbf16>
  %gm = arith.ceildivui %M, %c64 : index
  ism.coschedule warp_specialized {
    ism.launch @rows grid(%rows) (%x, %y)
        : (memref<?x?xf32>, memref<?x?xf32>)
    ism.launch @products grid(%gm) (%Q, %K, %V, %O)
        : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>,
           memref<?x?xf32>)
  }
  return
}

// -----

// stages = 1 on the coschedule: the products load K and V in their loop.
// CHECK-LABEL: ism.kernel @rows__products(
// CHECK: #ism.partition<{warpBase = 0, numWarps = 4, registers = [136], barriers = [1], sharedMemory = 0, stages = 0, workCounter = 0, groupSize = 0, operandStages = 1}>
ism.kernel @rows(%x: memref<?x?xf32>, %y: memref<?x?xf32>)
    attributes {num_warps = 4 : i32} {
  %r = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%r, %c0] : memref<?x?xf32> -> tensor<1x1024xf32>
  %s = ism.reduce %t axis = 1 : tensor<1x1024xf32> -> tensor<1xf32> {
  ^bb0(%a: f32, %b: f32):
    %v = arith.addf %a, %b : f32
    ism.yield %v : f32
  }
  %s2 = ism.expand_dims %s axis = 1 : tensor<1xf32> -> tensor<1x1xf32>
  %sb = ism.broadcast %s2 : tensor<1x1xf32> -> tensor<1x1024xf32>
  %o = arith.subf %t, %sb : tensor<1x1024xf32>
  ism.store %o, %y[%r, %c0] : tensor<1x1024xf32> -> memref<?x?xf32>
  ism.return
}

ism.kernel @products(%Q: memref<?x?xbf16>, %K: memref<?x?xbf16>,
                     %V: memref<?x?xbf16>, %O: memref<?x?xf32>)
    attributes {num_warps = 4 : i32, num_stages = 2 : i32} {
  %pm = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pm, %c64 : index
  %S = memref.dim %K, %c0 : memref<?x?xbf16>
  %q = ism.load %Q[%m0, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
  %zs = arith.constant dense<0.0> : tensor<64x64xf32>
  %o = scf.for %n = %c0 to %S step %c64 iter_args(%acc = %zs)
      -> (tensor<64x64xf32>) {
    %k = ism.load %K[%n, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = ism.dot %q, %kt, %zs : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
    %p = arith.truncf %s : tensor<64x64xf32> to tensor<64x64xbf16>
    %v = ism.load %V[%n, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %d = ism.dot %p, %v, %acc : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  ism.store %o, %O[%m0, %c0] : tensor<64x64xf32> -> memref<?x?xf32>
  ism.return
}

func.func @main(%x: memref<?x?xf32>, %y: memref<?x?xf32>,
                %Q: memref<?x?xbf16>, %K: memref<?x?xbf16>,
                %V: memref<?x?xbf16>, %O: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %rows = memref.dim %x, %c0 : memref<?x?xf32>
  ism.coschedule warp_specialized attributes {stages = 1 : i32} {
    ism.launch @rows grid(%rows) (%x, %y)
        : (memref<?x?xf32>, memref<?x?xf32>)
    ism.launch @products grid(%rows) (%Q, %K, %V, %O)
        : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>,
           memref<?x?xf32>)
  }
  return
}
