// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot | FileCheck %s --check-prefix=LAYOUT
// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu | FileCheck %s
// RUN: sed 's/group_size = 8 : i32}/group_size = 8 : i32, cluster_k = 2 : i32}/' %s | not ism-opt --ism-assign-layouts --ism-accelerate-dot --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu 2>&1 | FileCheck %s --check-prefix=SPLIT

// Block-scaled FP8 (bench/fp8_gemm.py's program(scales="block", out="f32")):
// each K step's product starts from zero and is scaled by a 128 x 1 tile of
// A's scales and a 1 x 1 tile of B's before it is added to the accumulator
// (promotion). ism-accelerate-dot gives the product, the scales and the
// carried accumulator the wgmma layout; the scales are loaded in it.
// LAYOUT: scf.for {{.*}} -> (tensor<128x128xf32, #mma>)
// LAYOUT: %[[P:.*]] = ism.dot {{.*}} -> tensor<128x128xf32, #mma>
// LAYOUT: ism.load %arg3{{.*}} -> tensor<128x1xf32, #mma>
// LAYOUT: ism.load %arg4{{.*}} -> tensor<1x1xf32, #mma>
// LAYOUT: arith.mulf %[[P]], {{.*}} : tensor<128x128xf32, #mma>
// LAYOUT: arith.addf {{.*}} : tensor<128x128xf32, #mma>

// The consumers' K loop: the step's four m64n128k32 from a zero
// accumulator, a wait for all of them (the product is needed now), the
// stage freed at once, then the loop's own code: the scales' loads, the
// scaling and the add, on each thread's 64 registers.
// CHECK: nvvm.setmaxregister  increase
// CHECK: scf.for
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<64xf32>
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 32>, D[<f32>, <one>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// CHECK: memref.extract_aligned_pointer_as_index %arg3
// CHECK: memref.extract_aligned_pointer_as_index %arg4
// CHECK: arith.mulf %{{.*}}, %{{.*}} : vector<64xf32>
// CHECK: arith.mulf %{{.*}}, %{{.*}} : vector<64xf32>
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<64xf32>
// CHECK: scf.yield

// SPLIT: error: 'scf.for' op a K loop that scales each step's product before adding it (block scales) takes neither consumer_groups = 2 nor cluster_k = 2
ism.kernel @gemm(%A: memref<?x?xf8E4M3FN>, %B: memref<?x?xf8E4M3FN>, %C: memref<?x?xf32>, %SA: memref<?x?xf32>,
                 %SB: memref<?x?xf32>) attributes {num_warps = 8 : i32, group_size = 8 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 128 : index
  %bk = arith.constant 128 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xf8E4M3FN>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<128x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %w = ism.load %B[%n0, %k] : memref<?x?xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %b = ism.trans %w order = [1, 0] : tensor<128x128xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    // This K block's product from zero, scaled per row of A and per
    // 128 x 128 block of B, then added (promoted) to the accumulator.
    %p = ism.dot %a, %b, %zero : tensor<128x128xf8E4M3FN> * tensor<128x128xf8E4M3FN> -> tensor<128x128xf32>
    %kb = arith.divui %k, %bk : index
    %nb = arith.divui %n0, %bn : index
    %sa = ism.load %SA[%m0, %kb] : memref<?x?xf32> -> tensor<128x1xf32>
    %sb = ism.load %SB[%nb, %kb] : memref<?x?xf32> -> tensor<1x1xf32>
    %sac = ism.broadcast %sa : tensor<128x1xf32> -> tensor<128x128xf32>
    %sbc = ism.broadcast %sb : tensor<1x1xf32> -> tensor<128x128xf32>
    %p1 = arith.mulf %p, %sac : tensor<128x128xf32>
    %p2 = arith.mulf %p1, %sbc : tensor<128x128xf32>
    %d = arith.addf %acc, %p2 : tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  ism.store %acc, %C[%m0, %n0] : tensor<128x128xf32> -> memref<?x?xf32>
  ism.return
}
