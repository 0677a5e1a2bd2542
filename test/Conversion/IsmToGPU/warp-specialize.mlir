// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot --ism-pipeline --ism-coschedule --convert-ism-to-gpu | FileCheck %s

// The lowering of a fused kernel's ism.warp_specialize: one branch per
// partition on the thread id; the wgmma GEMM split inside its warps 0-11
// (mbarriers initialised behind its own named barrier 1 over its 384
// threads, the producer at 40 registers synchronising on barrier 3, the
// consumers at the rest); two copies of the row kernel on warps 12-15 and
// 16-19, each with its own named barrier (4, 5) over 128 threads and its
// work slots at the start of its shared memory, both fetching rows from
// work counter 0 with an atomic add in a work loop that keeps four rows in
// flight: each thread copies its own 16-byte chunks of the next rows into a
// shared-memory ring (cp.async, one group a row; four rows in flight) and
// waits for the oldest (wait_group 3) before it reads this row. The kernel starts with
// 96 registers a thread (nvvm.maxnreg) so that the setmaxnreg values add
// up; the launch passes null TMA descriptors and a null counter pointer
// (the partitions then copy tiles themselves and stride statically).

// CHECK: gpu.launch_func @ism_kernels::@matmul__rownorm blocks in (%{{.*}}) threads in (%c640, %{{.*}}) dynamic_shared_memory_size %c197776_i32 args(%arg0 : memref<?x?xbf16>, %arg1 : memref<?x?xbf16>, %arg2 : memref<?x?xbf16>, %arg3 : memref<?x?xf32>, %arg4 : memref<?x?xf32>, %{{.*}} : index, %{{.*}} : index, %{{.*}} : index, %{{.*}} : index, %[[NULL:.*]] : i64, %[[NULL]] : i64, %[[NULL]] : i64)
// CHECK-LABEL: gpu.func @matmul__rownorm(
// CHECK-SAME: %[[COUNTERS:[a-z0-9]+]]: i64) kernel
// CHECK-SAME: ism.num_threads = 640
// CHECK-SAME: ism.shared_memory_bytes = 197776
// CHECK-SAME: ism.tma = [array<i64: 0, 128, 64>, array<i64: 1, 64, 64>]
// CHECK-SAME: known_block_size = array<i32: 640, 1, 1>
// CHECK-SAME: nvvm.maxnreg = 96
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: arith.cmpi ult, %[[TID]], %c384
// CHECK: nvvm.mbarrier.init
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c384_i32
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: nvvm.barrier id = %c3_i32 number_of_threads = %c128_i32
// CHECK: nvvm.setmaxregister increase 144
// CHECK: nvvm.wgmma.mma_async
// CHECK: arith.cmpi uge, %[[TID]], %c384
// CHECK: arith.cmpi ult, %[[TID]], %c512
// CHECK: nvvm.setmaxregister decrease 72
// CHECK: arith.addi %[[COUNTERS]], %c0_i64
// CHECK: memref.view %{{.*}}[%c132160][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2xi32, #gpu.address_space<workgroup>>
// CHECK: llvm.atomicrmw add %{{.*}}, %c1_i32{{.*}} monotonic : !llvm.ptr<1>, i32
// CHECK: nvvm.barrier id = %c4_i32{{.*}} number_of_threads = %c128_i32
// CHECK: llvm.atomicrmw add
// CHECK: nvvm.cp.async.shared.global {{.*}}, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.while ({{.*}}) : (index, index, index, index, index)
// CHECK: llvm.atomicrmw add
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 3
// CHECK: arith.cmpi uge, %[[TID]], %c512
// CHECK: arith.cmpi ult, %[[TID]], %c640
// CHECK: nvvm.setmaxregister decrease 72
// CHECK: memref.view %{{.*}}[%c164976][]
// CHECK: nvvm.barrier id = %c5_i32{{.*}} number_of_threads = %c128_i32
// CHECK: scf.while
// CHECK: gpu.return

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
  ism.coschedule warp_specialized attributes {replicas = array<i32: 1, 2>} {
    ism.launch @matmul grid(%gm, %gn) (%A, %B, %C)
        : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
    ism.launch @rownorm grid(%rows) (%x, %y)
        : (memref<?x?xf32>, memref<?x?xf32>)
  }
  return
}
