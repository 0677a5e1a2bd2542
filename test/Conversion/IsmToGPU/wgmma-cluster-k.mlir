// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu | FileCheck %s
// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot --ism-pipeline | FileCheck %s --check-prefix=PIPELINE

// cluster_k = 2: the two CTAs of a cluster compute the same program, each
// over half of its K steps; the second stores its accumulator into the
// first's shared memory (after the 8-stage ring and its barriers: 32 KiB
// for a 64x128 f32 tile and two mbarriers), and the first adds it and runs
// the epilogue alone.
// PIPELINE: ism.persistent = {cluster_k = 2 : i64, cluster_m = 1 : i64, cluster_n = 1 : i64, consumer_groups = 1 : i64, group_size = 8 : i64}
// Two CTAs per program: the host launches 2 x the programs, in whole
// clusters.
// CHECK-LABEL: func.func @main
// CHECK: %[[PROGRAMS:.*]] = arith.muli %{{.*}}, %c1{{.*}} : index
// CHECK: %[[CTAS:.*]] = arith.muli %[[PROGRAMS]], %c2 : index
// CHECK: arith.ceildivui %[[CTAS]], %c2
// CHECK: gpu.launch_func  @ism_kernels::@gemm {{.*}} dynamic_shared_memory_size %c230544_i32
// CHECK: gpu.func @gemm({{.*}}) kernel attributes {{{.*}}ism.ctas_per_program = 2 : i32{{.*}}nvvm.cluster_dim = array<i32: 2, 1, 1>
// No multicast: a stage is freed by this CTA's 4 consumer warps; the
// exchange's `full` barrier takes one arrival (with the bytes it expects)
// and `empty` the 128 consumer threads of the other CTA. The cluster's
// barrier after the initialisation is relaxed (fence.mbarrier_init
// releases the barriers).
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c4_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c128_i32
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK: nvvm.cluster.arrive.relaxed
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-NEXT: %[[RANK:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
// Both CTAs of a cluster take the same program (the cluster's index).
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: %[[BLOCK:.*]] = gpu.block_id  x
// CHECK: arith.divui %[[BLOCK]], %c2
// The producer's K steps: of the n steps, rank 0 takes the first
// min(n, ceil((n + 2) / 2)) (it leads by two, which hides the exchange),
// rank 1 the rest.
// CHECK: %[[N:.*]] = arith.ceildivui %{{.*}}, %c64 : index
// CHECK: %[[N2:.*]] = arith.addi %[[N]], %c2{{.*}} : index
// CHECK: %[[HALF:.*]] = arith.ceildivui %[[N2]], %c2{{.*}} : index
// CHECK: %[[FIRST:.*]] = arith.minui %[[N]], %[[HALF]] : index
// CHECK: %[[SPAN:.*]] = arith.muli %[[FIRST]], %c64 : index
// CHECK: %[[SPLIT:.*]] = arith.addi %c0{{.*}}, %[[SPAN]] : index
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %[[RANK]], %c0_i32{{.*}} : i32
// CHECK: %[[LB:.*]] = arith.select %[[IS0]], %c0{{.*}}, %[[SPLIT]] : index
// CHECK: %[[END:.*]] = arith.minsi %{{.*}}, %[[SPLIT]] : index
// CHECK: %[[UB:.*]] = arith.select %[[IS0]], %[[END]], %{{.*}} : index
// CHECK: scf.for %{{.*}} = %[[LB]] to %[[UB]] step %c64
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c24576_i32
// Consumers: the exchange's phase is the program's index in this CTA's
// walk, mod 2; their K loop takes the same half.
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: %[[T:.*]] = scf.for %[[PROG:.*]] = %[[FIRST:.*]] to %{{.*}} step %[[STRIDE:.*]] iter_args
// CHECK-NEXT: %[[D:.*]] = arith.subi %[[PROG]], %[[FIRST]] : index
// CHECK-NEXT: %[[I:.*]] = arith.divui %[[D]], %[[STRIDE]] : index
// CHECK: %[[I32:.*]] = arith.index_cast %[[I]] : index to i32
// CHECK: %[[PHASE:.*]] = arith.andi %[[I32]], %c1_i32{{.*}} : i32
// CHECK: %[[EPI:.*]] = arith.cmpi eq, %[[RANK]], %c0_i32{{.*}} : i32
// CHECK: arith.minsi
// CHECK: scf.for {{.*}} -> (vector<64xf32>, index)
// CHECK: nvvm.wgmma.mma_async
// CHECK: llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 0;"
// The first CTA expects the partner's 32 KiB on its `full` barrier (one
// thread arms it), waits, reads 16 chunks of 16 bytes, adds them and frees
// the buffer in the partner (release at CTA scope, as CUTLASS frees a
// multicast stage: a cluster-scope release is a GPU-wide MEMBAR); the
// second waits for the buffer to be free and writes its 16 chunks into the
// first's shared memory with st.async, each completing its bytes on the
// first's `full` barrier.
// CHECK: %[[CTA:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %[[CTA]], %c0_i32
// CHECK: scf.if %[[IS0]] -> (vector<64xf32>) {
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// CHECK: nvvm.mbarrier.try_wait.parity %{{.*}}, %[[PHASE]]
// CHECK-COUNT-16: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK: %[[FREE:.*]] = nvvm.mapa %{{.*}}, %c1_i32
// CHECK-NEXT: nvvm.mbarrier.arrive %[[FREE]] : !llvm.ptr<7>
// CHECK: } else {
// CHECK: %[[PARITY:.*]] = arith.xori %[[PHASE]], %c1_i32
// CHECK: nvvm.mbarrier.try_wait.parity %{{.*}}, %[[PARITY]]
// CHECK-COUNT-16: llvm.inline_asm has_side_effects "{{.*}}st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [d], {$1, $2, $3, $4}, [m];{{.*}}", "r,f,f,f,f,r,r"
// Only the first CTA runs the epilogue.
// CHECK: scf.if %[[EPI]] {
// CHECK-NEXT: arith.truncf %{{.*}} : vector<64xf32> to vector<64xbf16>
// CHECK: llvm.store %{{.*}} : bf16, !llvm.ptr<1>
// Neither CTA leaves while the other may still arrive on its barriers.
// CHECK: nvvm.cluster.arrive.relaxed
// CHECK-NEXT: nvvm.cluster.wait
// CHECK-NEXT: gpu.return
ism.kernel @gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 4 : i32, num_stages = 8 : i32, cluster_k = 2 : i32} {
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

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 64 : index
  %bn = arith.constant 128 : index
  %M = memref.dim %A, %c0 : memref<?x?xbf16>
  %N = memref.dim %B, %c1 : memref<?x?xbf16>
  %gm = arith.ceildivui %M, %bm : index
  %gn = arith.ceildivui %N, %bn : index
  ism.launch @gemm grid(%gm, %gn) (%A, %B, %C) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
  return
}
