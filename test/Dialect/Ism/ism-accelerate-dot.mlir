// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot | FileCheck %s
// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot=chip=sm_80 | FileCheck %s --check-prefix=SM80
// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot=chip=sm_75 | FileCheck %s --check-prefix=SM75

// A bf16 K loop on sm_90a goes to wgmma: the accumulator chain and the
// epilogue (bias add, relu, truncation, store) take the #ism.mma layout of
// two warpgroups stacked along M, the A and B tiles the swizzled shared
// layout. The bias load keeps its blocked layout; the broadcast produces
// the accumulator's layout directly.
// CHECK-DAG: #[[MMA:.*]] = #ism.mma<{version = 3, warpsPerCTA = [8, 1], instrShape = [16, 256, 16]}>
// CHECK-DAG: #[[SH:.*]] = #ism.shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
// CHECK: ism.kernel @gemm
// CHECK: arith.constant dense<0.000000e+00> : tensor<128x256xf32, #[[MMA]]>
// CHECK: scf.for {{.*}} -> (tensor<128x256xf32, #[[MMA]]>)
// CHECK: ism.load {{.*}} -> tensor<128x64xbf16, #[[SH]]>
// CHECK: ism.load {{.*}} -> tensor<64x256xbf16, #[[SH]]>
// CHECK: ism.dot {{.*}} -> tensor<128x256xf32, #[[MMA]]>
// CHECK: ism.load %arg3{{.*}} -> tensor<256xf32, #
// CHECK: ism.broadcast {{.*}} -> tensor<128x256xf32, #[[MMA]]>
// CHECK: arith.addf {{.*}} : tensor<128x256xf32, #[[MMA]]>
// CHECK: arith.maximumf {{.*}} : tensor<128x256xf32, #[[MMA]]>
// CHECK: arith.truncf {{.*}} to tensor<128x256xbf16, #[[MMA]]>
// CHECK: ism.store {{.*}} : tensor<128x256xbf16, #[[MMA]]>

// On sm_80 the loop goes to mma.sync (#ism.mma version 2, m16n8k16): the
// eight warps tile the block 2 x 4, each a 64x64 piece (the squarest that
// divides it), and the epilogue takes the accumulator's layout the same way.
// SM80-DAG: #[[MMA:.*]] = #ism.mma<{version = 2, warpsPerCTA = [2, 4], instrShape = [16, 8, 16]}>
// SM80-DAG: #[[SH:.*]] = #ism.shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
// SM80: ism.kernel @gemm
// SM80: scf.for {{.*}} -> (tensor<128x256xf32, #[[MMA]]>)
// SM80: ism.load {{.*}} -> tensor<128x64xbf16, #[[SH]]>
// SM80: ism.load {{.*}} -> tensor<64x256xbf16, #[[SH]]>
// SM80: ism.dot {{.*}} -> tensor<128x256xf32, #[[MMA]]>
// SM80: ism.broadcast {{.*}} -> tensor<128x256xf32, #[[MMA]]>
// SM80: arith.maximumf {{.*}} : tensor<128x256xf32, #[[MMA]]>
// SM80: ism.store {{.*}} : tensor<128x256xbf16, #[[MMA]]>

// Without tensor cores this pass uses (before sm_80) the loop keeps the
// blocked layouts (SIMT dot).
// SM75-NOT: #ism.mma
// SM75-LABEL: ism.kernel @gemm
// SM75: ism.dot {{.*}} -> tensor<128x256xf32, #
ism.kernel @gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>, %bias: memref<?xf32>) attributes {num_warps = 8 : i32, group_size = 8 : i32} {
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
  %bv = ism.load %bias[%n0] : memref<?xf32> -> tensor<256xf32>
  %be = ism.expand_dims %bv axis = 0 : tensor<256xf32> -> tensor<1x256xf32>
  %bb = ism.broadcast %be : tensor<1x256xf32> -> tensor<128x256xf32>
  %x1 = arith.addf %acc, %bb : tensor<128x256xf32>
  %z = arith.constant dense<0.0> : tensor<128x256xf32>
  %x2 = arith.maximumf %x1, %z : tensor<128x256xf32>
  %out = arith.truncf %x2 : tensor<128x256xf32> to tensor<128x256xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<128x256xbf16> -> memref<?x?xbf16>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>, %bias: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 256 : index
  %M = memref.dim %A, %c0 : memref<?x?xbf16>
  %N = memref.dim %B, %c1 : memref<?x?xbf16>
  %gm = arith.ceildivui %M, %bm : index
  %gn = arith.ceildivui %N, %bn : index
  ism.launch @gemm grid(%gm, %gn) (%A, %B, %C, %bias) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>, memref<?xf32>)
  return
}

// A masked store of the accumulator (the mask computed from ism.range
// compares in the epilogue): the store writes the tile in the wgmma
// layout, and its mask is made in that layout too (the store's mask and
// value have one type but for the element).
// CHECK: ism.kernel @masked_store
// CHECK: %[[MASK:.*]] = arith.cmpi slt, {{.*}} : tensor<128x128xi32, #[[MMA2:mma[0-9]*]]>
// CHECK: ism.store %{{.*}}, %{{.*}} mask %[[MASK]] : tensor<128x128xbf16, #[[MMA2]]>
ism.kernel @masked_store(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>, %n: i32) attributes {num_warps = 8 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %c1024 step %c64 iter_args(%acc = %zero) -> (tensor<128x128xf32>) {
    %a = ism.load %A[%c0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %c0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  %cols = ism.range 0 to 128 : tensor<128xi32>
  %row = ism.expand_dims %cols axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  %all = ism.broadcast %row : tensor<1x128xi32> -> tensor<128x128xi32>
  %limit = ism.splat %n : i32 -> tensor<128x128xi32>
  %mask = arith.cmpi slt, %all, %limit : tensor<128x128xi32>
  ism.store %out, %C[%c0, %c0] mask %mask : tensor<128x128xbf16> -> memref<?x?xbf16>
  ism.return
}
