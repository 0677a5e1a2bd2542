// RUN: ism-opt %s -split-input-file --ism-assign-layouts --ism-accelerate-dot --ism-pipeline --ism-coschedule -verify-diagnostics

// Every resource a pair can run out of is an error naming it and the
// numbers; a pair without a wgmma kernel stays unfused, with a remark.

ism.kernel @a(%x: memref<?xf32>, %y: memref<?xf32>)
    attributes {num_warps = 4 : i32} {
  %p = ism.program_id x : index
  %t = ism.load %x[%p] : memref<?xf32> -> tensor<1024xf32>
  %e = math.exp %t : tensor<1024xf32>
  ism.store %e, %y[%p] : tensor<1024xf32> -> memref<?xf32>
  ism.return
}
ism.kernel @b(%x: memref<?xf32>, %y: memref<?xf32>)
    attributes {num_warps = 4 : i32} {
  %p = ism.program_id x : index
  %t = ism.load %x[%p] : memref<?xf32> -> tensor<1024xf32>
  %e = math.exp %t : tensor<1024xf32>
  ism.store %e, %y[%p] : tensor<1024xf32> -> memref<?xf32>
  ism.return
}

func.func @main(%x: memref<?xf32>, %y: memref<?xf32>, %z: memref<?xf32>) {
  %n = arith.constant 64 : index
  // expected-remark @+1 {{no partition uses the tensor cores, so the kernels would only compete for the memory system on a shared SM: the launches stay separate and run one after the other}}
  ism.coschedule warp_specialized {
    ism.launch @a grid(%n) (%x, %y) : (memref<?xf32>, memref<?xf32>)
    ism.launch @b grid(%n) (%x, %z) : (memref<?xf32>, memref<?xf32>)
  }
  return
}

// -----

ism.kernel @mm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>,
                   %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32} {
  %pm = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero)
      -> (tensor<128x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %c0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x128xbf16>
        -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  ism.store %out, %C[%m0, %c0] : tensor<128x128xbf16> -> memref<?x?xbf16>
  ism.return
}
ism.kernel @wide(%x: memref<?xf32>, %y: memref<?xf32>)
    attributes {num_warps = 32 : i32} {
  %p = ism.program_id x : index
  %t = ism.load %x[%p] : memref<?xf32> -> tensor<1024xf32>
  %e = math.exp %t : tensor<1024xf32>
  ism.store %e, %y[%p] : tensor<1024xf32> -> memref<?xf32>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>, %x: memref<?xf32>, %y: memref<?xf32>) {
  %n = arith.constant 64 : index
  // expected-error @+1 {{threads: the partitions need 1408 threads in one CTA (@mm 384, @wide 1024), more than the 1024 a CTA can have}}
  ism.coschedule warp_specialized {
    ism.launch @mm grid(%n) (%A, %B, %C) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
    ism.launch @wide grid(%n) (%x, %y) : (memref<?xf32>, memref<?xf32>)
  }
  return
}

// -----

ism.kernel @mm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>,
                   %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32} {
  %pm = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero)
      -> (tensor<128x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %c0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x128xbf16>
        -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  ism.store %out, %C[%m0, %c0] : tensor<128x128xbf16> -> memref<?x?xbf16>
  ism.return
}
ism.kernel @narrow(%x: memref<?xf32>, %y: memref<?xf32>)
    attributes {num_warps = 2 : i32} {
  %p = ism.program_id x : index
  %t = ism.load %x[%p] : memref<?xf32> -> tensor<1024xf32>
  %e = math.exp %t : tensor<1024xf32>
  ism.store %e, %y[%p] : tensor<1024xf32> -> memref<?xf32>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>, %x: memref<?xf32>, %y: memref<?xf32>) {
  %n = arith.constant 64 : index
  // expected-error @+1 {{cannot give @narrow whole warpgroups: it has 2 warps}}
  ism.coschedule warp_specialized {
    ism.launch @mm grid(%n) (%A, %B, %C) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
    ism.launch @narrow grid(%n) (%x, %y) : (memref<?xf32>, memref<?xf32>)
  }
  return
}

// -----

ism.kernel @a(%x: memref<?xf32>, %y: memref<?xf32>)
    attributes {num_warps = 1 : i32} {
  %p = ism.program_id x : index
  %t = ism.load %x[%p] : memref<?xf32> -> tensor<1024xf32>
  %e = math.exp %t : tensor<1024xf32>
  ism.store %e, %y[%p] : tensor<1024xf32> -> memref<?xf32>
  ism.return
}

func.func @main(%x: memref<?xf32>, %y0: memref<?xf32>, %y1: memref<?xf32>, %y2: memref<?xf32>, %y3: memref<?xf32>, %y4: memref<?xf32>, %y5: memref<?xf32>, %y6: memref<?xf32>, %y7: memref<?xf32>, %y8: memref<?xf32>, %y9: memref<?xf32>, %y10: memref<?xf32>, %y11: memref<?xf32>, %y12: memref<?xf32>, %y13: memref<?xf32>, %y14: memref<?xf32>, %y15: memref<?xf32>) {
  %n = arith.constant 64 : index
  // expected-error @+1 {{named barriers: the partitions need 16 named barriers, more than the 15 a CTA has besides the CTA-wide barrier 0}}
  ism.coschedule warp_specialized attributes {fallback = false} {
    ism.launch @a grid(%n) (%x, %y0) : (memref<?xf32>, memref<?xf32>)
    ism.launch @a grid(%n) (%x, %y1) : (memref<?xf32>, memref<?xf32>)
    ism.launch @a grid(%n) (%x, %y2) : (memref<?xf32>, memref<?xf32>)
    ism.launch @a grid(%n) (%x, %y3) : (memref<?xf32>, memref<?xf32>)
    ism.launch @a grid(%n) (%x, %y4) : (memref<?xf32>, memref<?xf32>)
    ism.launch @a grid(%n) (%x, %y5) : (memref<?xf32>, memref<?xf32>)
    ism.launch @a grid(%n) (%x, %y6) : (memref<?xf32>, memref<?xf32>)
    ism.launch @a grid(%n) (%x, %y7) : (memref<?xf32>, memref<?xf32>)
    ism.launch @a grid(%n) (%x, %y8) : (memref<?xf32>, memref<?xf32>)
    ism.launch @a grid(%n) (%x, %y9) : (memref<?xf32>, memref<?xf32>)
    ism.launch @a grid(%n) (%x, %y10) : (memref<?xf32>, memref<?xf32>)
    ism.launch @a grid(%n) (%x, %y11) : (memref<?xf32>, memref<?xf32>)
    ism.launch @a grid(%n) (%x, %y12) : (memref<?xf32>, memref<?xf32>)
    ism.launch @a grid(%n) (%x, %y13) : (memref<?xf32>, memref<?xf32>)
    ism.launch @a grid(%n) (%x, %y14) : (memref<?xf32>, memref<?xf32>)
    ism.launch @a grid(%n) (%x, %y15) : (memref<?xf32>, memref<?xf32>)
  }
  return
}

// -----

ism.kernel @m1(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>,
                   %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32} {
  %pm = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero)
      -> (tensor<128x256xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %c0] : memref<?x?xbf16> -> tensor<64x256xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x256xbf16>
        -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %out = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xbf16>
  ism.store %out, %C[%m0, %c0] : tensor<128x256xbf16> -> memref<?x?xbf16>
  ism.return
}
ism.kernel @m2(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>,
                   %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32} {
  %pm = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero)
      -> (tensor<128x256xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %c0] : memref<?x?xbf16> -> tensor<64x256xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x256xbf16>
        -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %out = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xbf16>
  ism.store %out, %C[%m0, %c0] : tensor<128x256xbf16> -> memref<?x?xbf16>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>, %D: memref<?x?xbf16>) {
  %n = arith.constant 64 : index
  // expected-error @+1 {{shared memory: the partitions need 395392 bytes (@m1 197696 (4 stages), @m2 197696 (4 stages)), more than the 232448 a CTA can have at 1 CTA(s) per SM}}
  ism.coschedule warp_specialized attributes {stages = 4 : i32} {
    ism.launch @m1 grid(%n) (%A, %B, %C) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
    ism.launch @m2 grid(%n) (%A, %B, %D) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
  }
  return
}

// -----

ism.kernel @mm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>,
                   %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32} {
  %pm = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero)
      -> (tensor<128x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %c0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x128xbf16>
        -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  ism.store %out, %C[%m0, %c0] : tensor<128x128xbf16> -> memref<?x?xbf16>
  ism.return
}
ism.kernel @r(%x: memref<?xf32>, %y: memref<?xf32>)
    attributes {num_warps = 4 : i32} {
  %p = ism.program_id x : index
  %t = ism.load %x[%p] : memref<?xf32> -> tensor<1024xf32>
  %e = math.exp %t : tensor<1024xf32>
  ism.store %e, %y[%p] : tensor<1024xf32> -> memref<?xf32>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>, %x: memref<?xf32>, %y: memref<?xf32>) {
  %n = arith.constant 64 : index
  // expected-error @+1 {{registers: the partitions ask for 94208 registers, more than the 65536 the CTA starts with (512 threads at 128)}}
  ism.coschedule warp_specialized attributes {registers = array<i32: 232, 232, 40, 232>} {
    ism.launch @mm grid(%n) (%A, %B, %C) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
    ism.launch @r grid(%n) (%x, %y) : (memref<?xf32>, memref<?xf32>)
  }
  return
}

// -----

ism.kernel @mm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>,
                   %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32} {
  %pm = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero)
      -> (tensor<128x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %c0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x128xbf16>
        -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  ism.store %out, %C[%m0, %c0] : tensor<128x128xbf16> -> memref<?x?xbf16>
  ism.return
}
ism.kernel @r(%x: memref<?xf32>, %y: memref<?xf32>)
    attributes {num_warps = 4 : i32} {
  %p = ism.program_id x : index
  %t = ism.load %x[%p] : memref<?xf32> -> tensor<1024xf32>
  %e = math.exp %t : tensor<1024xf32>
  ism.store %e, %y[%p] : tensor<1024xf32> -> memref<?xf32>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>, %x: memref<?xf32>, %y: memref<?xf32>) {
  %n = arith.constant 64 : index
  // expected-error @+1 {{registers needs one value per warpgroup (4), got 2}}
  ism.coschedule warp_specialized attributes {registers = array<i32: 232, 40>} {
    ism.launch @mm grid(%n) (%A, %B, %C) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
    ism.launch @r grid(%n) (%x, %y) : (memref<?xf32>, memref<?xf32>)
  }
  return
}

// -----

// A 128x256 tile on two consumer warpgroups issues its m64n256k16 wgmma as
// two m64n128k16 (90 registers in one instruction; 154 unsplit) beside one
// norm copy; three copies make a 768-thread CTA, which starts with 80.
ism.kernel @matmul(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>,
                   %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32} {
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
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero)
      -> (tensor<128x256xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x256xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x256xbf16>
        -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %out = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<128x256xbf16> -> memref<?x?xbf16>
  ism.return
}

ism.kernel @rmsnorm(%x: memref<?x?xbf16>, %w: memref<?xbf16>,
                    %y: memref<?x?xbf16>, %eps: f32)
    attributes {num_warps = 4 : i32} {
  %row = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c1 : memref<?x?xbf16>
  %n32 = arith.index_cast %n : index to i32
  %nf = arith.uitofp %n32 : i32 to f32

  %t = ism.load %x[%row, %c0] : memref<?x?xbf16> -> tensor<1x4096xbf16>
  %wt = ism.load %w[%c0] : memref<?xbf16> -> tensor<4096xbf16>
  %t1 = ism.reshape %t : tensor<1x4096xbf16> -> tensor<4096xbf16>
  %v = arith.extf %t1 : tensor<4096xbf16> to tensor<4096xf32>
  %sq = arith.mulf %v, %v : tensor<4096xf32>
  %ssq = ism.reduce %sq axis = 0 : tensor<4096xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    ism.yield %s : f32
  }
  %ms = arith.divf %ssq, %nf : f32
  %mseps = arith.addf %ms, %eps : f32
  %rrms = math.rsqrt %mseps : f32
  %rrmss = ism.splat %rrms : f32 -> tensor<4096xf32>
  %normed = arith.mulf %v, %rrmss : tensor<4096xf32>
  %wf = arith.extf %wt : tensor<4096xbf16> to tensor<4096xf32>
  %scaled = arith.mulf %normed, %wf : tensor<4096xf32>
  %o16 = arith.truncf %scaled : tensor<4096xf32> to tensor<4096xbf16>
  %out = ism.reshape %o16 : tensor<4096xbf16> -> tensor<1x4096xbf16>
  ism.store %out, %y[%row, %c0] : tensor<1x4096xbf16> -> memref<?x?xbf16>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>,
                %x: memref<?x?xbf16>, %w: memref<?xbf16>, %y: memref<?x?xbf16>,
                %eps: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %block = arith.constant 128 : index
  %M = memref.dim %A, %c0 : memref<?x?xbf16>
  %N = memref.dim %B, %c1 : memref<?x?xbf16>
  %gm = arith.ceildivui %M, %block : index
  %gn = arith.ceildivui %N, %block : index
  %rows = memref.dim %x, %c0 : memref<?x?xbf16>
  // expected-error @+1 {{registers: a wgmma instruction of @matmul (m64n128k16) needs 90 registers, but a CTA of 768 threads starts with 80 a thread, and ptxas checks every instruction against that limit}}
  ism.coschedule warp_specialized attributes {replicas = array<i32: 1, 3>} {
    ism.launch @matmul grid(%gm, %gn) (%A, %B, %C)
        : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
    ism.launch @rmsnorm grid(%rows) (%x, %w, %y, %eps)
        : (memref<?x?xbf16>, memref<?xbf16>, memref<?x?xbf16>, f32)
  }
  return
}

// -----

// Two copies of a row kernel holding 64 floats a thread (168 registers each)
// leave the 128x128 GEMM's consumers 48 registers, fewer than the 96 their
// 64x128 accumulator per warpgroup needs.
ism.kernel @matmul(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>,
                   %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 128 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
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

ism.kernel @rmsnorm(%x: memref<?x?xbf16>, %w: memref<?xbf16>,
                    %y: memref<?x?xbf16>, %eps: f32)
    attributes {num_warps = 4 : i32} {
  %row = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c1 : memref<?x?xbf16>
  %n32 = arith.index_cast %n : index to i32
  %nf = arith.uitofp %n32 : i32 to f32

  %t = ism.load %x[%row, %c0] : memref<?x?xbf16> -> tensor<1x8192xbf16>
  %wt = ism.load %w[%c0] : memref<?xbf16> -> tensor<8192xbf16>
  %t1 = ism.reshape %t : tensor<1x8192xbf16> -> tensor<8192xbf16>
  %v = arith.extf %t1 : tensor<8192xbf16> to tensor<8192xf32>
  %sq = arith.mulf %v, %v : tensor<8192xf32>
  %ssq = ism.reduce %sq axis = 0 : tensor<8192xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    ism.yield %s : f32
  }
  %ms = arith.divf %ssq, %nf : f32
  %mseps = arith.addf %ms, %eps : f32
  %rrms = math.rsqrt %mseps : f32
  %rrmss = ism.splat %rrms : f32 -> tensor<8192xf32>
  %normed = arith.mulf %v, %rrmss : tensor<8192xf32>
  %wf = arith.extf %wt : tensor<8192xbf16> to tensor<8192xf32>
  %scaled = arith.mulf %normed, %wf : tensor<8192xf32>
  %o16 = arith.truncf %scaled : tensor<8192xf32> to tensor<8192xbf16>
  %out = ism.reshape %o16 : tensor<8192xbf16> -> tensor<1x8192xbf16>
  ism.store %out, %y[%row, %c0] : tensor<1x8192xbf16> -> memref<?x?xbf16>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>,
                %x: memref<?x?xbf16>, %w: memref<?xbf16>, %y: memref<?x?xbf16>,
                %eps: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %block = arith.constant 128 : index
  %M = memref.dim %A, %c0 : memref<?x?xbf16>
  %N = memref.dim %B, %c1 : memref<?x?xbf16>
  %gm = arith.ceildivui %M, %block : index
  %gn = arith.ceildivui %N, %block : index
  %rows = memref.dim %x, %c0 : memref<?x?xbf16>
  // expected-error @+1 {{registers: the wgmma consumers would get 48 registers a thread (@matmul 384 threads at 40 (producer) + consumers, @rmsnorm 128 threads at 168, @rmsnorm 128 threads at 168; 61440 in the CTA), fewer than the 96 their accumulator needs}}
  ism.coschedule warp_specialized attributes {replicas = array<i32: 1, 2>} {
    ism.launch @matmul grid(%gm, %gn) (%A, %B, %C)
        : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
    ism.launch @rmsnorm grid(%rows) (%x, %w, %y, %eps)
        : (memref<?x?xbf16>, memref<?xbf16>, memref<?x?xbf16>, f32)
  }
  return
}

// -----

// A GEMM with two consumer groups (ping-pong) is not a partition yet.
ism.kernel @mm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>,
                   %C: memref<?x?xbf16>) attributes {num_warps = 4 : i32, consumer_groups = 2 : i32} {
  %pm = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero)
      -> (tensor<128x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %c0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x128xbf16>
        -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  ism.store %out, %C[%m0, %c0] : tensor<128x128xbf16> -> memref<?x?xbf16>
  ism.return
}
ism.kernel @r(%x: memref<?xf32>, %y: memref<?xf32>)
    attributes {num_warps = 4 : i32} {
  %p = ism.program_id x : index
  %t = ism.load %x[%p] : memref<?xf32> -> tensor<1024xf32>
  %e = math.exp %t : tensor<1024xf32>
  ism.store %e, %y[%p] : tensor<1024xf32> -> memref<?xf32>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>, %x: memref<?xf32>, %y: memref<?xf32>) {
  %n = arith.constant 64 : index
  ism.coschedule warp_specialized {
    // expected-error @+1 {{@mm has consumer_groups = 2 (ping-pong consumers), which a co-scheduled partition does not support yet; co-schedule it with one consumer group}}
    ism.launch @mm grid(%n) (%A, %B, %C) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
    ism.launch @r grid(%n) (%x, %y) : (memref<?xf32>, memref<?xf32>)
  }
  return
}

// -----

// Nor is a GEMM whose K loop is split over a cluster's two CTAs.
ism.kernel @mm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>,
                   %C: memref<?x?xbf16>) attributes {num_warps = 4 : i32, num_stages = 4 : i32, cluster_k = 2 : i32} {
  %pm = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero)
      -> (tensor<128x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %c0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x128xbf16>
        -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  ism.store %out, %C[%m0, %c0] : tensor<128x128xbf16> -> memref<?x?xbf16>
  ism.return
}
ism.kernel @r(%x: memref<?xf32>, %y: memref<?xf32>)
    attributes {num_warps = 4 : i32} {
  %p = ism.program_id x : index
  %t = ism.load %x[%p] : memref<?xf32> -> tensor<1024xf32>
  %e = math.exp %t : tensor<1024xf32>
  ism.store %e, %y[%p] : tensor<1024xf32> -> memref<?xf32>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>, %x: memref<?xf32>, %y: memref<?xf32>) {
  %n = arith.constant 64 : index
  ism.coschedule warp_specialized {
    // expected-error @+1 {{@mm has cluster_k = 2 (its K loop split over a cluster's CTAs), which a co-scheduled partition does not support yet; co-schedule it with cluster_k = 1}}
    ism.launch @mm grid(%n) (%A, %B, %C) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
    ism.launch @r grid(%n) (%x, %y) : (memref<?xf32>, memref<?xf32>)
  }
  return
}

// -----

// Nor one whose epilogue stores through TMA.
ism.kernel @mm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>,
                   %C: memref<?x?xbf16>) attributes {num_warps = 4 : i32, num_stages = 4 : i32, tma_store = 1 : i32} {
  %pm = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero)
      -> (tensor<128x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %c0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x128xbf16>
        -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  ism.store %out, %C[%m0, %c0] : tensor<128x128xbf16> -> memref<?x?xbf16>
  ism.return
}
ism.kernel @r(%x: memref<?xf32>, %y: memref<?xf32>)
    attributes {num_warps = 4 : i32} {
  %p = ism.program_id x : index
  %t = ism.load %x[%p] : memref<?xf32> -> tensor<1024xf32>
  %e = math.exp %t : tensor<1024xf32>
  ism.store %e, %y[%p] : tensor<1024xf32> -> memref<?xf32>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>, %x: memref<?xf32>, %y: memref<?xf32>) {
  %n = arith.constant 64 : index
  ism.coschedule warp_specialized {
    // expected-error @+1 {{@mm has tma_store = 1 (its epilogue stored through shared memory by TMA), which a co-scheduled partition does not support yet; co-schedule it with tma_store = 0}}
    ism.launch @mm grid(%n) (%A, %B, %C) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
    ism.launch @r grid(%n) (%x, %y) : (memref<?xf32>, memref<?xf32>)
  }
  return
}

// -----

// The coschedule's stages sets the products' operand ring too.
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
  // expected-error @+1 {{stages of @products's operand ring must be from 1 (loads in the loop) to 8, got 9}}
  ism.coschedule warp_specialized attributes {stages = 9 : i32} {
    ism.launch @rows grid(%rows) (%x, %y)
        : (memref<?x?xf32>, memref<?x?xf32>)
    ism.launch @products grid(%rows) (%Q, %K, %V, %O)
        : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>,
           memref<?x?xf32>)
  }
  return
}

// -----

// A kernel's min_ctas_per_sm does not carry into the fused kernel: a
// warning says so, and the pair still fuses.

ism.kernel @c(%x: memref<?xf32>, %y: memref<?xf32>)
    attributes {num_warps = 4 : i32, min_ctas_per_sm = 2 : i32} {
  %p = ism.program_id x : index
  %t = ism.load %x[%p] : memref<?xf32> -> tensor<1024xf32>
  %e = math.exp %t : tensor<1024xf32>
  ism.store %e, %y[%p] : tensor<1024xf32> -> memref<?xf32>
  ism.return
}
ism.kernel @d(%x: memref<?xf32>, %y: memref<?xf32>)
    attributes {num_warps = 4 : i32} {
  %p = ism.program_id x : index
  %t = ism.load %x[%p] : memref<?xf32> -> tensor<1024xf32>
  %e = math.exp %t : tensor<1024xf32>
  ism.store %e, %y[%p] : tensor<1024xf32> -> memref<?xf32>
  ism.return
}

func.func @main(%x: memref<?xf32>, %y: memref<?xf32>, %z: memref<?xf32>) {
  %n = arith.constant 64 : index
  // expected-warning @+1 {{@c's min_ctas_per_sm = 2 does not apply inside the fused kernel, whose CTAs per SM ism-coschedule decides (ctas_per_sm on the ism.coschedule overrides it)}}
  ism.coschedule block_interleaved {
    ism.launch @c grid(%n) (%x, %y) : (memref<?xf32>, memref<?xf32>)
    ism.launch @d grid(%n) (%x, %z) : (memref<?xf32>, memref<?xf32>)
  }
  return
}

// -----

// An ordered region runs SIMT programs as tasks; a warp-specialized wgmma
// GEMM is an error naming it.

ism.kernel @gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>,
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

ism.kernel @scale(%x: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0] : memref<?xf32> -> tensor<128xf32>
  %s = arith.addf %t, %t : tensor<128xf32>
  ism.store %s, %x[%c0] : tensor<128xf32> -> memref<?xf32>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>,
                %C: memref<?x?xbf16>, %x: memref<?xf32>, %g: index) {
  ism.coschedule ordered {
    ism.launch @scale grid(%g) (%x) : (memref<?xf32>)
    // expected-error @+1 {{'ism.launch' op @gemm is a warp-specialized wgmma GEMM, which an ordered ism.coschedule does not run as a task yet; launch it before or after the region}}
    ism.launch @gemm grid(%g, %g) (%A, %B, %C)
        : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
  }
  return
}
