// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot=chip=sm_80 --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu | FileCheck %s
// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot=chip=sm_80 --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu | FileCheck %s --check-prefix=CP
// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot=chip=sm_80 --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu | FileCheck %s --check-prefix=LDM
// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot=chip=sm_80 --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu | FileCheck %s --check-prefix=MMA
// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot=chip=sm_80 --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu | FileCheck %s --check-prefix=QUAD

// The mma.sync K loop of a 128x128x64 bf16 block on 8 warps (4 x 2: each
// warp two 16-row blocks and 64 columns): a 4-stage cp.async ring of 32 KiB
// stages in dynamic shared memory, no extra warps, no hidden parameters,
// the program's own grid.
// CHECK-LABEL: func.func @main
// CHECK: gpu.launch_func  @ism_kernels::@gemm blocks in ({{.*}}) threads in (%c256, {{.*}}) dynamic_shared_memory_size %c131072_i32 args(%{{.*}} : memref<?x?xbf16>, %{{.*}} : memref<?x?xbf16>, %{{.*}} : memref<?x?xbf16>)
// CHECK: gpu.func @gemm(%{{.*}}: memref<?x?xbf16>, %{{.*}}: memref<?x?xbf16>, %{{.*}}: memref<?x?xbf16>) kernel attributes {ism.num_threads = 256 : i32, ism.shared_memory_bytes = 131072 : i32, known_block_size = array<i32: 256, 1, 1>}
// CHECK: memref.view {{.*}} to memref<131072xi8, #gpu.address_space<workgroup>>
// The prologue fills stages 0 to 2: per stage, each thread copies 4 16-byte
// chunks of A and 4 of B with cp.async (source size: the bytes left in the
// row), or the tile element by element when cp.async cannot read the
// memref; then it commits the group.
// CHECK-COUNT-4: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: scf.for %{{.*}} = %thread_id_x to %c8192 step %c256 {
// CHECK: llvm.store %{{.*}}, %{{.*}} : bf16, !llvm.ptr<3>
// CHECK-COUNT-4: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.commit.group
// The loop carries the accumulator (64 registers a thread) and the stage.
// Each iteration waits for its stage (2 groups may stay in flight), syncs,
// refills the stage read in the previous iteration with the tiles 3
// iterations ahead, then computes.
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c64 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %c0_i32{{.*}}) -> (vector<64xf32>, i32) {
// CHECK-NEXT: nvvm.cp.async.wait.group 2
// CHECK-NEXT: nvvm.barrier0
// CHECK-COUNT-8: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// Per 16-wide K step: the A fragments of the warp's two 16-row blocks
// (ldmatrix.x4), then per 16 columns of B one ldmatrix.x4.trans and four
// m16n8k16 (2 row blocks x 2 n8 blocks).
// CHECK-COUNT-2: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// CHECK-COUNT-4: nvvm.mma.sync A[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]  B[%{{.*}}, %{{.*}}]  C[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}]  {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: scf.yield %{{.*}}, %{{.*}} : vector<64xf32>, i32
// After the loop: no copy in flight, the ring free again.
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.barrier0
// The epilogue stores the accumulator's layout directly: where the tile is
// inside C and its rows are 16-byte aligned, each quad of lanes transposes
// four column pairs (two butterfly steps of shuffles) so that every lane
// stores 16 contiguous bytes; else 4 bytes a lane.
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32{{.*}}, %c32_i32{{.*}} : i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32{{.*}}, %c32_i32{{.*}} : i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32{{.*}}, %c32_i32{{.*}} : i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32{{.*}}, %c32_i32{{.*}} : i32
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// CHECK: } else {
// CHECK: llvm.store {{.*}} : vector<2xbf16>, !llvm.ptr<1>

// In all: 3 + 1 stages of 4 + 4 chunk copies (A, B), each twice (a tile
// wholly inside its matrix is copied without bounds tests or zero fill, a
// tile at an edge chunk by chunk with the bytes inside), 4 K steps of 2 + 4
// ldmatrix and 16 mma.sync; 64 accumulator registers a thread are 4 groups
// x 2 rows of 4 shuffles.
// CP-LABEL: gpu.func @gemm(
// CP-COUNT-4: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg : !llvm.ptr<3>, !llvm.ptr<1>
// CP: } else {
// CP-COUNT-4: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CP-COUNT-56: nvvm.cp.async.shared.global
// CP-NOT: nvvm.cp.async.shared.global
// CP-LABEL: gpu.func @gemm_f16
// LDM-LABEL: gpu.func @gemm(
// LDM-COUNT-24: nvvm.ldmatrix
// LDM-NOT: nvvm.ldmatrix
// LDM-LABEL: gpu.func @gemm_f16
// QUAD-LABEL: gpu.func @gemm(
// QUAD-COUNT-32: gpu.shuffle
// QUAD-NOT: gpu.shuffle
// QUAD-LABEL: gpu.func @gemm_f16
// MMA-LABEL: gpu.func @gemm(
// MMA-COUNT-64: nvvm.mma.sync
// MMA-NOT: nvvm.mma.sync
// MMA-LABEL: gpu.func @gemm_f16
ism.kernel @gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32} {
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
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<128x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<128x128xbf16> -> memref<?x?xbf16>
  ism.return
}

// f16 operands are passed to mma.sync as vector<2xf16>. The tile offset
// of B is computed in the loop body: the lowering repeats that code for the
// iterations it loads ahead (k + 2 * 32 here: 3 stages).
// CHECK-LABEL: gpu.func @gemm_f16
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %c32 iter_args
// CHECK: %[[AHEAD:.*]] = arith.addi %[[K]], %{{.*}} : index
// CHECK: scf.if
// CHECK: arith.addi %{{.*}}, %[[AHEAD]] : index
// CHECK: nvvm.mma.sync {{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
ism.kernel @gemm_f16(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf32>, %base: index) attributes {num_warps = 2 : i32, num_stages = 3 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 64 : index
  %bk = arith.constant 32 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bm : index
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
    %kb = arith.addi %base, %k : index
    %a = ism.load %A[%m0, %k] : memref<?x?xf16> -> tensor<64x32xf16>
    %b = ism.load %B[%kb, %n0] : memref<?x?xf16> -> tensor<32x64xf16>
    %d = ism.dot %a, %b, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  ism.store %acc, %C[%m0, %n0] : tensor<64x64xf32> -> memref<?x?xf32>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %M = memref.dim %A, %c0 : memref<?x?xbf16>
  %N = memref.dim %B, %c1 : memref<?x?xbf16>
  %gm = arith.ceildivui %M, %bm : index
  %gn = arith.ceildivui %N, %bm : index
  ism.launch @gemm grid(%gm, %gn) (%A, %B, %C) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
  return
}
