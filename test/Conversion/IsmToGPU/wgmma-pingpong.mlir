// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu | FileCheck %s

// Two consumer groups (consumer_groups = 2, ping-pong): each group is the
// kernel's 4 warps running the whole tile program, on every other program
// of its CTA, so one group's epilogue overlaps the other's wgmma. The
// groups take turns at their K loops, which keeps the ring's stages in
// order (a group waiting a whole round of the ring ahead would misread
// the stage barriers' phase parity).
// 2 x 128 consumer threads + the producer warpgroup = 384 threads, whose
// registers at entry are 168 (65536 / 384); both groups raise to 232.
// The shared memory is the 4-stage ring (32 KiB a stage, 128x128 tiles)
// and one 2 KiB scratch for each group's column sum.
// CHECK-LABEL: func.func @main
// CHECK: gpu.launch_func  @ism_kernels::@gemm {{.*}} threads in (%c384, {{.*}}) dynamic_shared_memory_size %c136256_i32
// CHECK: gpu.func @gemm({{.*}}) kernel attributes {{{.*}}ism.num_threads = 384 : i32{{.*}}known_block_size = array<i32: 384, 1, 1>, nvvm.maxnreg = 168 : i32}
// Each stage is freed by the 4 warps of the one group that consumed it.
// CHECK-COUNT-4: nvvm.mbarrier.init %{{.*}}, %c4_i32
// The group of a consumer thread, and whether it is its group's first.
// CHECK: %[[GROUP:.*]] = arith.divui %thread_id_x, %c128
// CHECK: %[[INGROUP:.*]] = arith.remui %thread_id_x, %c128
// CHECK: arith.cmpi eq, %[[INGROUP]]
// CHECK: nvvm.setmaxregister  decrease 40
// The producer walks every program of the CTA.
// CHECK: scf.for %{{.*}} = %block_id_x to %{{.*}} step %grid_dim_x
// CHECK: nvvm.setmaxregister  increase 232
// Group g walks the CTA's programs g, g + 2, ...: from blockIdx.x +
// g * gridDim.x with a stride of 2 * gridDim.x.
// CHECK: %[[SKIP:.*]] = arith.muli %[[GROUP]], %[[GRID:.*]] : index
// CHECK: %[[FIRST:.*]] = arith.addi %block_id_x{{.*}}, %[[SKIP]]
// CHECK: %[[STRIDE:.*]] = arith.muli %[[GRID]], %c2
// The groups take turns at their K loops (named barriers 4 and 5, 128
// threads waiting and the other group's 128 arriving): the last group
// opens group 0's first turn.
// CHECK: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %c256_i32
// CHECK: scf.for %{{.*}} = %[[FIRST]] to %{{.*}} step %[[STRIDE]] iter_args(%[[ROUND:.*]] = %{{.*}}) -> (index)
// Its K loop starts in the ring after the other group's steps of this
// round (every program takes ceil(K / 64) steps)...
// CHECK: %[[STEPS:.*]] = arith.ceildivui %{{.*}}, %c64
// CHECK: %[[MINE:.*]] = arith.muli %[[GROUP]], %[[STEPS]]
// CHECK: %[[START:.*]] = arith.addi %[[ROUND]], %[[MINE]]
// ...after its turn comes (barrier 4 + g)...
// CHECK: %[[TURN:.*]] = arith.addi %c4_i32, %{{.*}} : i32
// CHECK: nvvm.barrier id = %[[TURN]] number_of_threads = %c256_i32
// Warps are numbered within the group.
// CHECK: arith.remui %thread_id_x{{.*}}, %c128
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %[[START]]) -> (vector<128xf32>, index)
// CHECK-COUNT-8: nvvm.wgmma.mma_async
// Once its last wgmma are issued, before waiting for them, it opens the
// other group's turn (whose wgmma then queue behind them).
// CHECK: nvvm.barrier.arrive id = %{{.*}} number_of_threads = %c256_i32
// CHECK: wgmma.wait_group.sync.aligned 0
// The column sum's scratch: this group's 2 KiB after the ring.
// CHECK: %[[G1:.*]] = arith.divui %thread_id_x{{.*}}, %c128
// CHECK: %[[OFF:.*]] = arith.muli %[[G1]], %c2048
// CHECK: arith.addi %c132160, %[[OFF]]
// The group's named barrier: 1 + 2 g (1 and 3; 2 is the producer's).
// CHECK: %[[G2:.*]] = arith.divui %thread_id_x{{.*}}, %c128
// CHECK: %[[G2I:.*]] = arith.index_cast %[[G2]] : index to i32
// CHECK: %[[G2S:.*]] = arith.muli %[[G2I]], %c2_i32
// CHECK: %[[ID:.*]] = arith.addi %c1_i32, %[[G2S]]
// CHECK: nvvm.barrier id = %[[ID]] number_of_threads = %c128_i32
// ...and the next round after both groups' steps.
// CHECK: %[[BOTH:.*]] = arith.muli %[[STEPS]], %c2
// CHECK: %[[NEXT:.*]] = arith.addi %[[ROUND]], %[[BOTH]]
// CHECK: scf.yield %[[NEXT]] : index
ism.kernel @gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>, %S: memref<?x?xf32>) attributes {num_warps = 4 : i32, group_size = 8 : i32, consumer_groups = 2 : i32} {
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
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<128x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %cs = ism.reduce %acc axis = 0 : tensor<128x128xf32> -> tensor<128xf32> {
  ^bb0(%l: f32, %r: f32):
    %sum = arith.addf %l, %r : f32
    ism.yield %sum : f32
  }
  %cs2 = ism.expand_dims %cs axis = 0 : tensor<128xf32> -> tensor<1x128xf32>
  ism.store %cs2, %S[%pm, %n0] : tensor<1x128xf32> -> memref<?x?xf32>
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<128x128xbf16> -> memref<?x?xbf16>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>, %S: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 128 : index
  %M = memref.dim %A, %c0 : memref<?x?xbf16>
  %N = memref.dim %B, %c1 : memref<?x?xbf16>
  %gm = arith.ceildivui %M, %bm : index
  %gn = arith.ceildivui %N, %bn : index
  ism.launch @gemm grid(%gm, %gn) (%A, %B, %C, %S) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xf32>)
  return
}

