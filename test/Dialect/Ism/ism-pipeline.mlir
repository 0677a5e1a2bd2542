// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot --ism-pipeline | FileCheck %s
// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot --ism-pipeline=num-stages=2 | FileCheck %s --check-prefix=TWO
// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot --ism-pipeline=group-size=4 | FileCheck %s --check-prefix=GROUP
// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot=chip=sm_80 --ism-pipeline | FileCheck %s --check-prefix=SM80
// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot --ism-pipeline=cluster-m=2 | FileCheck %s --check-prefix=CLUSTER
// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot=chip=sm_80 --ism-pipeline=cluster-n=2 | FileCheck %s --check-prefix=SM80
// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot --ism-pipeline=consumer-groups=2 | FileCheck %s --check-prefix=PINGPONG
// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot=chip=sm_80 --ism-pipeline=consumer-groups=2 | FileCheck %s --check-prefix=SM80

// A 128x256x64 bf16 stage is 48 KiB: four stages fit (the most the pass
// picks on its own); the kernel runs on a persistent grid in groups of 8.
// CHECK: ism.kernel @gemm{{.*}}ism.persistent = {cluster_m = 1 : i64, cluster_n = 1 : i64, consumer_groups = 1 : i64, group_size = 8 : i64}
// CHECK: scf.for
// CHECK: } {ism.pipeline = {num_stages = 4 : i64}}
// TWO: } {ism.pipeline = {num_stages = 2 : i64}}
// GROUP: ism.persistent = {cluster_m = 1 : i64, cluster_n = 1 : i64, consumer_groups = 1 : i64, group_size = 4 : i64}
// A 2x1 cluster: programs along x in pairs that share B.
// CLUSTER: ism.persistent = {cluster_m = 2 : i64, cluster_n = 1 : i64, consumer_groups = 1 : i64, group_size = 8 : i64}
// Two consumer groups (ping-pong).
// PINGPONG: ism.persistent = {cluster_m = 1 : i64, cluster_n = 1 : i64, consumer_groups = 2 : i64, group_size = 8 : i64}
// On the mma.sync path (sm_80) as many stages as fit in an A100's 163 KiB
// (three), and the kernel keeps its grid: no warp specialization, no
// persistent programs, no cluster and no consumer groups (the options have
// no effect there).
// SM80: ism.kernel @gemm({{.*}}) attributes {num_warps = 8 : i32} {
// SM80: scf.for
// SM80: } {ism.pipeline = {num_stages = 3 : i64}}
ism.kernel @gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32} {
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

