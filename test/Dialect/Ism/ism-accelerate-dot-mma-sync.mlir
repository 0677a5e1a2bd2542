// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot=chip=sm_90a --ism-pipeline | FileCheck %s
// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot=chip=sm_86 --ism-pipeline | FileCheck %s --check-prefix=SM86

// Loops wgmma cannot take (two warps are no warpgroup; 64-byte rows of the
// A tile) go to mma.sync on sm_90a too, and on any sm_80 or newer chip.
// ism-pipeline gives them a cp.async pipeline (as many 8 KiB stages as fit,
// up to 4) and no persistent grid.
// CHECK-DAG: #[[MMA:.*]] = #ism.mma<{version = 2, warpsPerCTA = [2, 1], instrShape = [16, 8, 16]}>
// CHECK-DAG: #[[MMAF16:.*]] = #ism.mma<{version = 2, warpsPerCTA = [2, 2], instrShape = [16, 8, 16]}>
// CHECK: ism.kernel @two_warps({{.*}}) attributes {num_warps = 2 : i32} {
// CHECK: scf.for {{.*}} -> (tensor<64x64xf32, #[[MMA]]>)
// CHECK: ism.dot {{.*}} -> tensor<64x64xf32, #[[MMA]]>
// CHECK: } {ism.pipeline = {num_stages = 4 : i64}}
// CHECK: ism.store {{.*}} : tensor<64x64xbf16, #[[MMA]]>
// SM86: ism.kernel @two_warps
// SM86: ism.dot {{.*}} -> tensor<64x64xf32, #mma
// SM86: } {ism.pipeline = {num_stages = 4 : i64}}
ism.kernel @two_warps(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 2 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 64 : index
  %bk = arith.constant 32 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bm : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<64x32xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<32x64xbf16>
    %d = ism.dot %a, %b, %acc : tensor<64x32xbf16> * tensor<32x64xbf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %out = arith.truncf %acc : tensor<64x64xf32> to tensor<64x64xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<64x64xbf16> -> memref<?x?xbf16>
  ism.return
}

// f16 with an f32 output and BLOCK_K = 32; the tile offsets may be
// computed in the loop body (scalar code the lowering repeats for later
// iterations).
// CHECK: ism.kernel @f16_offsets({{.*}}) attributes {num_warps = 4 : i32} {
// CHECK: ism.dot {{.*}} -> tensor<64x128xf32, #[[MMAF16]]>
// CHECK: } {ism.pipeline = {num_stages = 4 : i64}}
// SM86: ism.kernel @f16_offsets
// SM86: ism.dot {{.*}} -> tensor<64x128xf32, #mma
ism.kernel @f16_offsets(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf32>, %base: index) attributes {num_warps = 4 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 64 : index
  %bn = arith.constant 128 : index
  %bk = arith.constant 32 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %zero = arith.constant dense<0.0> : tensor<64x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<64x128xf32>) {
    %kb = arith.addi %base, %k : index
    %a = ism.load %A[%m0, %k] : memref<?x?xf16> -> tensor<64x32xf16>
    %b = ism.load %B[%kb, %n0] : memref<?x?xf16> -> tensor<32x128xf16>
    %d = ism.dot %a, %b, %acc : tensor<64x32xf16> * tensor<32x128xf16> -> tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  ism.store %acc, %C[%m0, %n0] : tensor<64x128xf32> -> memref<?x?xf32>
  ism.return
}

// A loop that carries more than the accumulator is no K loop of the
// mma.sync loop lowering (no pipeline, operands stay in registers), but its
// product still goes on mma.sync by itself, the accumulator carried in the
// #ism.mma layout.
// CHECK: ism.kernel @two_carried
// CHECK-NOT: ism.pipeline
// CHECK: scf.for {{.*}} -> (tensor<64x64xf32, #mma{{[0-9]*}}>, index)
// CHECK: ism.load {{.*}} -> tensor<64x32xbf16, #blocked
// CHECK: ism.dot {{.*}} -> tensor<64x64xf32, #mma
// CHECK-NOT: ism.pipeline
// CHECK: arith.truncf {{.*}} : tensor<64x64xf32, #mma{{[0-9]*}}> to tensor<64x64xbf16, #mma
// SM86: ism.kernel @two_carried
// SM86: ism.dot {{.*}} -> tensor<64x64xf32, #mma

// f32 inputs keep the SIMT dot.
ism.kernel @two_carried(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bk = arith.constant 32 : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %acc:2 = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero, %n = %c0) -> (tensor<64x64xf32>, index) {
    %a = ism.load %A[%c0, %k] : memref<?x?xbf16> -> tensor<64x32xbf16>
    %b = ism.load %B[%k, %n] : memref<?x?xbf16> -> tensor<32x64xbf16>
    %d = ism.dot %a, %b, %acc : tensor<64x32xbf16> * tensor<32x64xbf16> -> tensor<64x64xf32>
    %n1 = arith.addi %n, %c0 : index
    scf.yield %d, %n1 : tensor<64x64xf32>, index
  }
  %out = arith.truncf %acc#0 : tensor<64x64xf32> to tensor<64x64xbf16>
  ism.store %out, %C[%c0, %c0] : tensor<64x64xbf16> -> memref<?x?xbf16>
  ism.return
}

// CHECK: ism.kernel @f32_inputs
// CHECK: ism.dot {{.*}} -> tensor<64x64xf32, #blocked
ism.kernel @f32_inputs(%A: memref<?x?xf32>, %B: memref<?x?xf32>, %C: memref<?x?xf32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bk = arith.constant 32 : index
  %K = memref.dim %A, %c1 : memref<?x?xf32>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
    %a = ism.load %A[%c0, %k] : memref<?x?xf32> -> tensor<64x32xf32>
    %b = ism.load %B[%k, %c0] : memref<?x?xf32> -> tensor<32x64xf32>
    %d = ism.dot %a, %b, %acc : tensor<64x32xf32> * tensor<32x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  ism.store %acc, %C[%c0, %c0] : tensor<64x64xf32> -> memref<?x?xf32>
  ism.return
}

// BLOCK_M = 16: on sm_90a the product is swapped onto wgmma
// (ism-accelerate-dot-swap-ab.mlir); other chips have no swap, mma.sync
// takes the 16-row block as it is.
// CHECK: ism.kernel @rows16
// CHECK: ism.dot {{.*}} -> tensor<128x16xf32, #mma
// CHECK: } {ism.pipeline = {num_stages = {{[0-9]+}} : i64}, ism.swap_ab}
// SM86: ism.kernel @rows16
// SM86-NOT: ism.trans
// SM86: ism.dot {{.*}} : tensor<16x64xbf16, #shared> * tensor<64x128xbf16, #shared> -> tensor<16x128xf32, #mma
ism.kernel @rows16(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xf32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant dense<0.0> : tensor<16x128xf32>
  %acc = scf.for %k = %c0 to %c1024 step %c64 iter_args(%acc = %zero) -> (tensor<16x128xf32>) {
    %a = ism.load %A[%c0, %k] : memref<?x?xbf16> -> tensor<16x64xbf16>
    %b = ism.load %B[%k, %c0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<16x64xbf16> * tensor<64x128xbf16> -> tensor<16x128xf32>
    scf.yield %d : tensor<16x128xf32>
  }
  ism.store %acc, %C[%c0, %c0] : tensor<16x128xf32> -> memref<?x?xf32>
  ism.return
}
