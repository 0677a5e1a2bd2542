// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot --ism-pipeline -verify-diagnostics -split-input-file

// Five stages of 48 KiB do not fit in a CTA's 227 KiB.
ism.kernel @gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32, group_size = 8 : i32, num_stages = 5 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 256 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<128x256xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x256xbf16>
    // expected-error @+1 {{num_stages = 5 needs 240 KiB of shared memory for the A and B buffers (48 KiB a stage), more than the 227 KiB of a CTA; reduce num_stages or the block sizes}}
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x256xbf16> -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %out = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<128x256xbf16> -> memref<?x?xbf16>
  ism.return
}


// -----

// A cluster is two CTAs at most, along x or y.
// expected-error @+1 {{cluster_m = 2 and cluster_n = 2: a wgmma kernel's cluster is 1x1, 2x1 or 1x2 CTAs}}
ism.kernel @gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32, cluster_m = 2 : i32, cluster_n = 2 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 256 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<128x256xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x256xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x256xbf16> -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %out = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<128x256xbf16> -> memref<?x?xbf16>
  ism.return
}


// -----

// expected-error @+1 {{cluster_m = 3 and cluster_n = 1: a wgmma kernel's cluster is 1x1, 2x1 or 1x2 CTAs}}
ism.kernel @gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32, cluster_m = 3 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 256 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<128x256xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x256xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x256xbf16> -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %out = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<128x256xbf16> -> memref<?x?xbf16>
  ism.return
}


// -----

// expected-error @+1 {{consumer_groups = 3: a wgmma kernel has 1 or 2 consumer groups}}
ism.kernel @gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32, consumer_groups = 3 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 256 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<128x256xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x256xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x256xbf16> -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %out = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<128x256xbf16> -> memref<?x?xbf16>
  ism.return
}

// -----

// cluster_k splits a K loop over at most the two CTAs of a cluster.
// expected-error @+1 {{cluster_k = 3: a wgmma kernel's K loop is split over 1 or 2 CTAs}}
ism.kernel @gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 4 : i32, cluster_k = 3 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 64 : index
  %bn = arith.constant 128 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<64x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<64x64xbf16> * tensor<64x128xbf16> -> tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  %out = arith.truncf %acc : tensor<64x128xf32> to tensor<64x128xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<64x128xbf16> -> memref<?x?xbf16>
  ism.return
}

// -----

// A cluster along K is not also one along M.
// expected-error @+1 {{cluster_k = 2 (the two CTAs of a cluster split each program's K loop) cannot be combined with cluster_m = 2, cluster_n = 1 or consumer_groups = 1; set those to 1}}
ism.kernel @gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 4 : i32, cluster_k = 2 : i32, cluster_m = 2 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 64 : index
  %bn = arith.constant 128 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<64x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<64x64xbf16> * tensor<64x128xbf16> -> tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  %out = arith.truncf %acc : tensor<64x128xf32> to tensor<64x128xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<64x128xbf16> -> memref<?x?xbf16>
  ism.return
}

// -----

// Nine 24 KiB stages fit a CTA, but not beside the partner's 64x128 f32
// accumulator.
ism.kernel @gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 4 : i32, num_stages = 9 : i32, cluster_k = 2 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 64 : index
  %bn = arith.constant 128 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<64x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    // expected-error @+1 {{num_stages = 9 needs 216 KiB of shared memory for the A and B buffers (24 KiB a stage) and 32 KiB for the partner's accumulator (cluster_k = 2), more than the 227 KiB of a CTA; reduce num_stages or the block sizes}}
    %d = ism.dot %a, %b, %acc : tensor<64x64xbf16> * tensor<64x128xbf16> -> tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  %out = arith.truncf %acc : tensor<64x128xf32> to tensor<64x128xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<64x128xbf16> -> memref<?x?xbf16>
  ism.return
}

// -----

// Left to choose, no two 48 KiB stages fit beside a 128 KiB accumulator.
ism.kernel @gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32, cluster_k = 2 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 256 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<128x256xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x256xbf16>
    // expected-error @+1 {{one pipeline stage of the A and B tiles takes 48 KiB of shared memory, so two stages and the partner's accumulator (128 KiB, cluster_k = 2) do not fit in the 227 KiB of a CTA; use a smaller BLOCK_M, BLOCK_N or BLOCK_K}}
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x256xbf16> -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %out = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<128x256xbf16> -> memref<?x?xbf16>
  ism.return
}

// -----

// tma_store is 0 or 1.
// expected-error @+1 {{tma_store = 2: 0 (store the accumulator from registers) or 1 (through shared memory with TMA)}}
ism.kernel @bad_tma_store(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32, tma_store = 2 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 256 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<128x256xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x256xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x256xbf16> -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %out = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<128x256xbf16> -> memref<?x?xbf16>
  ism.return
}

// -----

// Four 48 KiB stages fit beside the 8 warps' 32 KiB of staging boxes, five
// do not.
ism.kernel @too_many_stages(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32, tma_store = 1 : i32, num_stages = 5 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 256 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<128x256xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x256xbf16>
    // expected-error @+1 {{num_stages = 5 needs 240 KiB of shared memory for the A and B buffers (48 KiB a stage) and 33 KiB for the TMA store's staging boxes (tma_store = 1), more than the 227 KiB of a CTA; reduce num_stages or the block sizes}}
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x256xbf16> -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %out = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<128x256xbf16> -> memref<?x?xbf16>
  ism.return
}
