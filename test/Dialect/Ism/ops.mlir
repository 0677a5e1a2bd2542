// RUN: ism-opt %s | ism-opt | FileCheck %s
// RUN: ism-opt %s --mlir-print-op-generic | ism-opt | FileCheck %s

// Round trip of every ism op.

// CHECK-LABEL: ism.kernel @grid_queries
// CHECK-SAME: attributes {num_warps = 8 : i32}
ism.kernel @grid_queries(%out: memref<?xi32>) attributes {num_warps = 8 : i32} {
  // CHECK: ism.program_id x : index
  %0 = ism.program_id x : index
  // CHECK: ism.program_id z : i32
  %1 = ism.program_id z : i32
  // CHECK: ism.num_programs y : i64
  %2 = ism.num_programs y : i64
  // CHECK: ism.return
  ism.return
}

// CHECK-LABEL: ism.kernel @shapes
ism.kernel @shapes(%s: f32) {
  // CHECK: ism.range 0 to 128 : tensor<128xi32>
  %r = ism.range 0 to 128 : tensor<128xi32>
  // CHECK: ism.range 64 to 96 : tensor<32xi64>
  %r2 = ism.range 64 to 96 : tensor<32xi64>
  // CHECK: %[[SPLAT:.*]] = ism.splat %{{.*}} : f32 -> tensor<1x64xf32>
  %t = ism.splat %s : f32 -> tensor<1x64xf32>
  // CHECK: ism.broadcast %[[SPLAT]] : tensor<1x64xf32> -> tensor<32x64xf32>
  %b = ism.broadcast %t : tensor<1x64xf32> -> tensor<32x64xf32>
  // CHECK: ism.expand_dims %{{.*}} axis = 2 : tensor<32x64xf32> -> tensor<32x64x1xf32>
  %e = ism.expand_dims %b axis = 2 : tensor<32x64xf32> -> tensor<32x64x1xf32>
  // CHECK: ism.reshape %{{.*}} : tensor<32x64x1xf32> -> tensor<2048xf32>
  %f = ism.reshape %e : tensor<32x64x1xf32> -> tensor<2048xf32>
  // CHECK: ism.trans %{{.*}} order = [1, 0] : tensor<32x64xf32> -> tensor<64x32xf32>
  %tr = ism.trans %b order = [1, 0] : tensor<32x64xf32> -> tensor<64x32xf32>
  ism.return
}

// CHECK-LABEL: ism.kernel @memory
ism.kernel @memory(%A: memref<?x?xf16>, %x: memref<?xf32>, %h: memref<?xi32>,
                   %i: index, %j: index) {
  %m = arith.constant dense<true> : tensor<128xi1>
  // CHECK: ism.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x?xf16> -> tensor<64x32xf16>
  %t = ism.load %A[%i, %j] : memref<?x?xf16> -> tensor<64x32xf16>
  // CHECK: ism.load %{{.*}}[%{{.*}}] mask %{{.*}} {padding = 0xFF800000 : f32} : memref<?xf32> -> tensor<128xf32>
  %u = ism.load %x[%i] mask %m {padding = 0xFF800000 : f32} : memref<?xf32> -> tensor<128xf32>
  // CHECK: ism.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : tensor<64x32xf16> -> memref<?x?xf16>
  ism.store %t, %A[%i, %j] : tensor<64x32xf16> -> memref<?x?xf16>
  // CHECK: ism.store %{{.*}}, %{{.*}}[%{{.*}}] mask %{{.*}} : tensor<128xf32> -> memref<?xf32>
  ism.store %u, %x[%i] mask %m : tensor<128xf32> -> memref<?xf32>
  %idx = ism.range 0 to 128 : tensor<128xi32>
  // CHECK: ism.gather %{{.*}}[%{{.*}}] : memref<?xf32>[tensor<128xi32>] -> tensor<128xf32>
  %g = ism.gather %x[%idx] : memref<?xf32>[tensor<128xi32>] -> tensor<128xf32>
  // CHECK: ism.gather %{{.*}}[%{{.*}}] mask %{{.*}} {padding = 1.000000e+00 : f32} : memref<?xf32>[tensor<128xi32>] -> tensor<128xf32>
  %g2 = ism.gather %x[%idx] mask %m {padding = 1.0 : f32} : memref<?xf32>[tensor<128xi32>] -> tensor<128xf32>
  // CHECK: ism.scatter %{{.*}}, %{{.*}}[%{{.*}}] mask %{{.*}} : tensor<128xf32> -> memref<?xf32>[tensor<128xi32>]
  ism.scatter %g, %x[%idx] mask %m : tensor<128xf32> -> memref<?xf32>[tensor<128xi32>]
  %ri = ism.range 0 to 32 : tensor<32xi32>
  %ci = ism.range 0 to 32 : tensor<32xi32>
  %v2 = ism.gather %A[%ri, %ci] : memref<?x?xf16>[tensor<32xi32>, tensor<32xi32>] -> tensor<32xf16>
  // CHECK: ism.gather %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x?xf16>[tensor<32xi32>, tensor<32xi32>] -> tensor<32xf16>
  %ones = arith.constant dense<1> : tensor<128xi32>
  // CHECK: ism.atomic_rmw add %{{.*}}[%{{.*}}], %{{.*}} : memref<?xi32>[tensor<128xi32>], tensor<128xi32>
  %old = ism.atomic_rmw add %h[%idx], %ones : memref<?xi32>[tensor<128xi32>], tensor<128xi32>
  // CHECK: ism.atomic_rmw max %{{.*}}[%{{.*}}], %{{.*}} mask %{{.*}} : memref<?xf32>[tensor<128xi32>], tensor<128xf32>
  %old2 = ism.atomic_rmw max %x[%idx], %g mask %m : memref<?xf32>[tensor<128xi32>], tensor<128xf32>
  // CHECK: ism.atomic_rmw xor
  %old3 = ism.atomic_rmw xor %h[%idx], %ones : memref<?xi32>[tensor<128xi32>], tensor<128xi32>
  // The default (relaxed) is not printed; the others are.
  // CHECK: ism.atomic_rmw add %{{.*}}[%{{.*}}], %{{.*}} : memref
  %old4 = ism.atomic_rmw add %h[%idx], %ones sem = relaxed : memref<?xi32>[tensor<128xi32>], tensor<128xi32>
  // CHECK: ism.atomic_rmw add %{{.*}}[%{{.*}}], %{{.*}} mask %{{.*}} sem = acq_rel : memref
  %old5 = ism.atomic_rmw add %h[%idx], %ones mask %m sem = acq_rel : memref<?xi32>[tensor<128xi32>], tensor<128xi32>
  // CHECK: ism.atomic_rmw umax %{{.*}} sem = acquire
  %old6 = ism.atomic_rmw umax %h[%idx], %ones sem = acquire : memref<?xi32>[tensor<128xi32>], tensor<128xi32>
  // CHECK: ism.atomic_rmw xchg %{{.*}} sem = release
  %old7 = ism.atomic_rmw xchg %h[%idx], %ones sem = release : memref<?xi32>[tensor<128xi32>], tensor<128xi32>
  ism.return
}

// CHECK-LABEL: ism.kernel @compute
ism.kernel @compute(%a: memref<?x?xf16>) {
  %c0 = arith.constant 0 : index
  %ta = ism.load %a[%c0, %c0] : memref<?x?xf16> -> tensor<64x32xf16>
  %tb = ism.load %a[%c0, %c0] : memref<?x?xf16> -> tensor<32x64xf16>
  %acc = arith.constant dense<0.0> : tensor<64x64xf32>
  // CHECK: ism.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
  %d = ism.dot %ta, %tb, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
  %fa = arith.constant dense<1.0> : tensor<2x16x16xf32>
  // CHECK: ism.dot %{{.*}}, %{{.*}}, %{{.*}} precision = tf32 : tensor<2x16x16xf32> * tensor<2x16x16xf32> -> tensor<2x16x16xf32>
  %bd = ism.dot %fa, %fa, %fa precision = tf32 : tensor<2x16x16xf32> * tensor<2x16x16xf32> -> tensor<2x16x16xf32>
  // e4m3 x e5m2, as wgmma multiplies them.
  %f8a = arith.constant dense<1.0> : tensor<64x32xf8E4M3FN>
  %f8b = arith.constant dense<0.5> : tensor<32x64xf8E5M2>
  // CHECK: ism.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x32xf8E4M3FN> * tensor<32x64xf8E5M2> -> tensor<64x64xf32>
  %f8d = ism.dot %f8a, %f8b, %acc : tensor<64x32xf8E4M3FN> * tensor<32x64xf8E5M2> -> tensor<64x64xf32>
  // CHECK: ism.reduce %{{.*}} axis = 1 : tensor<64x64xf32> -> tensor<64xf32> {
  // CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
  // CHECK:   %[[M:.*]] = arith.maximumf %[[A]], %[[B]] : f32
  // CHECK:   ism.yield %[[M]] : f32
  %m = ism.reduce %d axis = 1 : tensor<64x64xf32> -> tensor<64xf32> {
  ^bb0(%x: f32, %y: f32):
    %r = arith.maximumf %x, %y : f32
    ism.yield %r : f32
  }
  // CHECK: ism.reduce %{{.*}} axis = 0 : tensor<64xf32> -> f32
  %s = ism.reduce %m axis = 0 : tensor<64xf32> -> f32 {
  ^bb0(%x: f32, %y: f32):
    %r = arith.addf %x, %y : f32
    ism.yield %r : f32
  }
  // An argmax: values and indices reduced together.
  %idx = ism.range 0 to 64 : tensor<64xi32>
  // CHECK: ism.reduce %{{.*}}, %{{.*}} axis = 0 : tensor<64xf32>, tensor<64xi32> -> f32, i32
  %mv, %mi = ism.reduce %m, %idx axis = 0 : tensor<64xf32>, tensor<64xi32> -> f32, i32 {
  ^bb0(%v0: f32, %i0: i32, %v1: f32, %i1: i32):
    %gt = arith.cmpf ogt, %v1, %v0 : f32
    %v = arith.select %gt, %v1, %v0 : f32
    %i = arith.select %gt, %i1, %i0 : i32
    ism.yield %v, %i : f32, i32
  }
  // CHECK: ism.scan %{{.*}} axis = 0 : tensor<64xi32> -> tensor<64xi32>
  %c = ism.scan %idx axis = 0 : tensor<64xi32> -> tensor<64xi32> {
  ^bb0(%x: i32, %y: i32):
    %r = arith.addi %x, %y : i32
    ism.yield %r : i32
  }
  // CHECK: ism.scan %{{.*}} axis = 1 reverse : tensor<64x64xf32> -> tensor<64x64xf32>
  %rc = ism.scan %d axis = 1 reverse : tensor<64x64xf32> -> tensor<64x64xf32> {
  ^bb0(%x: f32, %y: f32):
    %r = arith.addf %x, %y : f32
    ism.yield %r : f32
  }
  ism.return
}

#blocked0 = #ism.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#blocked1 = #ism.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-LABEL: ism.kernel @layouts
ism.kernel @layouts(%x: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  // CHECK: %[[T:.*]] = ism.load {{.*}} -> tensor<512xf32, #blocked>
  %t = ism.load %x[%c0] : memref<?xf32> -> tensor<512xf32, #blocked0>
  // CHECK: ism.convert_layout %[[T]] : tensor<512xf32, #blocked> -> tensor<512xf32, #blocked1>
  %u = ism.convert_layout %t : tensor<512xf32, #blocked0> -> tensor<512xf32, #blocked1>
  ism.store %u, %x[%c0] : tensor<512xf32, #blocked1> -> memref<?xf32>
  ism.return
}

// CHECK-LABEL: func.func @host
func.func @host(%x: memref<?xf32>, %A: memref<?x?xf16>, %n: index) {
  // CHECK: ism.assert %{{.*}}, "x has {0} elements, not {1}"(%{{.*}}, %{{.*}}) : index, index
  // CHECK: ism.assert %{{.*}}, "n must be positive"
  %c0 = arith.constant 0 : index
  %len = memref.dim %x, %c0 : memref<?xf32>
  %same = arith.cmpi eq, %len, %n : index
  ism.assert %same, "x has {0} elements, not {1}" (%len, %n) : index, index
  %pos = arith.cmpi sgt, %n, %c0 : index
  ism.assert %pos, "n must be positive"
  // CHECK: ism.launch @grid_queries grid(%{{.*}}) (%{{.*}}) : (memref<?xi32>)
  %h = memref.alloc(%n) : memref<?xi32>
  ism.launch @grid_queries grid(%n) (%h) : (memref<?xi32>)
  // CHECK: ism.launch @layouts grid(%{{.*}}, %{{.*}}, %{{.*}}) (%{{.*}}) : (memref<?xf32>)
  ism.launch @layouts grid(%n, %n, %n) (%x) : (memref<?xf32>)
  // CHECK: ism.coschedule warp_specialized {
  // CHECK-NEXT: ism.launch @compute
  // CHECK-NEXT: ism.launch @layouts
  // CHECK-NEXT: }
  ism.coschedule warp_specialized {
    ism.launch @compute grid(%n) (%A) : (memref<?x?xf16>)
    ism.launch @layouts grid(%n) (%x) : (memref<?xf32>)
  }
  // CHECK: ism.coschedule block_interleaved attributes {user.note = "x"} {
  ism.coschedule block_interleaved attributes {user.note = "x"} {
    ism.launch @compute grid(%n) (%A) : (memref<?x?xf16>)
    ism.launch @compute grid(%n) (%A) : (memref<?x?xf16>)
  }
  return
}
