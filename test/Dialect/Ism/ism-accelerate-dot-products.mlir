// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot=chip=sm_80 --ism-pipeline --ism-remove-layout-conversions | FileCheck %s --check-prefixes=CHECK,SM80
// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot=chip=sm_90a --ism-pipeline --ism-remove-layout-conversions | FileCheck %s --check-prefixes=CHECK,SM90
// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot=chip=sm_75 | FileCheck %s --check-prefix=SM75

// Products that are no K loop of their own (two in one loop, as in
// attention) go on tensor cores one by one: mma.sync on sm_80 and later,
// wgmma on sm_90a when the warps take whole rows (the same registers: each
// warp 16-row stripes, one m64nN instruction per warpgroup covering what
// the warps' m16n8 fragments did). The result takes the #ism.mma layout and so
// does what follows it: elementwise math, the loop-carried accumulator, the
// A operand of the next product and the store. A product whose rows are
// reduced, and the other products of its loop body, give each warp whole
// rows (4 x 1). The row reduction yields the #ism.slice of the accumulator
// layout (each thread its rows' totals), which the loop carries too. The
// loaded operands keep their blocked layouts (the lowering writes them to
// shared memory); K^T takes K's layout transposed, so the transposition
// moves no data. Nothing is pipelined.
// SM80-DAG: #[[$ROWS:.*]] = #ism.mma<{version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8, 16]}>
// SM90-DAG: #[[$ROWS:.*]] = #ism.mma<{version = 3, warpsPerCTA = [4, 1], instrShape = [16, 64, 16]}>
// SM90-DAG: #[[$SQUARE:.*]] = #ism.mma<{version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8, 16]}>
// CHECK-DAG: #[[$SLICE:.*]] = #ism.slice<{dim = 1, parent = #[[$ROWS]]}>
// CHECK-DAG: #[[$COLS:.*]] = #ism.slice<{dim = 0, parent = #[[$ROWS]]}>
// CHECK-DAG: #[[$KT:.*]] = #ism.blocked<{sizePerThread = [8, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>
// CHECK-LABEL: ism.kernel @two_products
// CHECK-NOT: ism.convert_layout
// CHECK: scf.for {{.*}} -> (tensor<64xf32, #[[$SLICE]]>, tensor<64x64xf32, #[[$ROWS]]>) {
// CHECK: %[[K:.*]] = ism.load {{.*}} -> tensor<64x64xbf16, #blocked
// CHECK: %[[KT2:.*]] = ism.trans %[[K]] order = [1, 0] : tensor<64x64xbf16, #blocked{{[0-9]*}}> -> tensor<64x64xbf16, #[[$KT]]>
// CHECK: %[[S:.*]] = ism.dot %{{.*}}, %[[KT2]], %{{.*}} -> tensor<64x64xf32, #[[$ROWS]]>
// CHECK: %[[P:.*]] = math.exp %[[S]] : tensor<64x64xf32, #[[$ROWS]]>
// CHECK: %[[SUM:.*]] = ism.reduce %[[P]] axis = 1 : tensor<64x64xf32, #[[$ROWS]]> -> tensor<64xf32, #[[$SLICE]]>
// CHECK: arith.addf %{{.*}}, %[[SUM]] : tensor<64xf32, #[[$SLICE]]>
// CHECK: %[[P16:.*]] = arith.truncf %[[P]] : tensor<64x64xf32, #[[$ROWS]]> to tensor<64x64xbf16, #[[$ROWS]]>
// CHECK: ism.dot %[[P16]], %{{.*}}, %{{.*}} : tensor<64x64xbf16, #[[$ROWS]]> * tensor<64x64xbf16, #blocked{{[0-9]*}}> -> tensor<64x64xf32, #[[$ROWS]]>
// CHECK-NOT: ism.pipeline
// CHECK: ism.store {{.*}} : tensor<64x64xf32, #[[$ROWS]]> -> memref<?x?xf32>
// SM75-LABEL: ism.kernel @two_products
// SM75-NOT: #ism.mma
// SM75: ism.dot {{.*}} -> tensor<64x64xf32, #blocked
ism.kernel @two_products(%Q: memref<?x?xbf16>, %K: memref<?x?xbf16>, %V: memref<?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %S = memref.dim %K, %c0 : memref<?x?xbf16>
  %q = ism.load %Q[%c0, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %zl = arith.constant dense<0.0> : tensor<64xf32>
  %r:2 = scf.for %n = %c0 to %S step %c64 iter_args(%l = %zl, %acc = %zero) -> (tensor<64xf32>, tensor<64x64xf32>) {
    %k = ism.load %K[%n, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = ism.dot %q, %kt, %zero : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
    %p = math.exp %s : tensor<64x64xf32>
    %sum = ism.reduce %p axis = 1 : tensor<64x64xf32> -> tensor<64xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }
    %l2 = arith.addf %l, %sum : tensor<64xf32>
    %p16 = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
    %v = ism.load %V[%n, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %acc2 = ism.dot %p16, %v, %acc : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %l2, %acc2 : tensor<64xf32>, tensor<64x64xf32>
  }
  ism.store %r#1, %O[%c0, %c0] : tensor<64x64xf32> -> memref<?x?xf32>
  ism.return
}

// A product outside any loop, its accumulator a computed tile; 128x64 on 4
// warps is tiled 4 x 1 (32 x 64 warp tiles: the squarest). Its rows are
// not reduced and its K is 32: mma.sync also on sm_90a.
// CHECK-LABEL: ism.kernel @single
// SM80: ism.dot {{.*}} -> tensor<128x64xf32, #[[$ROWS]]>
// SM80: ism.store {{.*}} : tensor<128x64xbf16, #[[$ROWS]]>
// SM90: ism.dot {{.*}} -> tensor<128x64xf32, #[[$SQUARE]]>
// SM90: ism.store {{.*}} : tensor<128x64xbf16, #[[$SQUARE]]>
ism.kernel @single(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xbf16>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %a = ism.load %A[%c0, %c0] : memref<?x?xf16> -> tensor<128x32xf16>
  %b = ism.load %B[%c0, %c0] : memref<?x?xf16> -> tensor<32x64xf16>
  %bias = ism.load %C[%c0, %c0] : memref<?x?xbf16> -> tensor<128x64xbf16>
  %c = arith.extf %bias : tensor<128x64xbf16> to tensor<128x64xf32>
  %d = ism.dot %a, %b, %c : tensor<128x32xf16> * tensor<32x64xf16> -> tensor<128x64xf32>
  %r = arith.truncf %d : tensor<128x64xf32> to tensor<128x64xbf16>
  ism.store %r, %C[%c0, %c0] : tensor<128x64xbf16> -> memref<?x?xbf16>
  ism.return
}

// A mask on the scores (attention's: key < S, key <= query): the row and
// column indices the compares read are ranges expanded and broadcast into
// the accumulator layout. They are made there: each range takes the
// #ism.slice of the accumulator layout along the axis it is expanded on
// (rows dim 1, columns dim 0), the expansions a one-column or one-row
// accumulator tile, so every thread computes the indices of its own
// elements and nothing is converted (through shared memory) in the loop.
// One range used for both gets a copy per slice.
// CHECK-LABEL: ism.kernel @masked
// CHECK-NOT: ism.convert_layout
// CHECK-DAG: ism.range 0 to 64 : tensor<64xi32, #[[$SLICE]]>
// CHECK-DAG: ism.range 0 to 64 : tensor<64xi32, #[[$COLS]]>
// CHECK: ism.expand_dims {{.*}} axis = 1 : tensor<64xi32, #[[$SLICE]]> -> tensor<64x1xi32, #[[$ROWS]]>
// CHECK: scf.for
// CHECK: %[[S:.*]] = ism.dot {{.*}} -> tensor<64x64xf32, #[[$ROWS]]>
// CHECK: %[[C:.*]] = arith.addi %{{.*}}, %{{.*}} : tensor<64xi32, #[[$COLS]]>
// CHECK: %[[E:.*]] = ism.expand_dims %[[C]] axis = 0 : tensor<64xi32, #[[$COLS]]> -> tensor<1x64xi32, #[[$ROWS]]>
// CHECK: ism.broadcast %[[E]] : tensor<1x64xi32, #[[$ROWS]]> -> tensor<64x64xi32, #[[$ROWS]]>
// CHECK: arith.select %{{.*}}, %[[S]], %{{.*}} : tensor<64x64xi1, #[[$ROWS]]>, tensor<64x64xf32, #[[$ROWS]]>
// CHECK: ism.store {{.*}} : tensor<64x64xf32, #[[$ROWS]]> -> memref<?x?xf32>
ism.kernel @masked(%Q: memref<?x?xbf16>, %K: memref<?x?xbf16>, %V: memref<?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %S = memref.dim %K, %c0 : memref<?x?xbf16>
  %Si = arith.index_cast %S : index to i32
  %q = ism.load %Q[%c0, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<64x64xf32>
  %zl = arith.constant dense<0.0> : tensor<64xf32>
  %iota = ism.range 0 to 64 : tensor<64xi32>
  %rows1 = ism.expand_dims %iota axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %rows = ism.broadcast %rows1 : tensor<64x1xi32> -> tensor<64x64xi32>
  %Ss = ism.splat %Si : i32 -> tensor<64x64xi32>
  %r:2 = scf.for %n = %c0 to %S step %c64 iter_args(%l = %zl, %acc = %zero) -> (tensor<64xf32>, tensor<64x64xf32>) {
    %k = ism.load %K[%n, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = ism.dot %q, %kt, %zero : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
    %ni = arith.index_cast %n : index to i32
    %ns = ism.splat %ni : i32 -> tensor<64xi32>
    %cols1 = arith.addi %iota, %ns : tensor<64xi32>
    %cols2 = ism.expand_dims %cols1 axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
    %cols = ism.broadcast %cols2 : tensor<1x64xi32> -> tensor<64x64xi32>
    %in_seq = arith.cmpi slt, %cols, %Ss : tensor<64x64xi32>
    %before = arith.cmpi sle, %cols, %rows : tensor<64x64xi32>
    %keep = arith.andi %in_seq, %before : tensor<64x64xi1>
    %sm = arith.select %keep, %s, %ninf : tensor<64x64xi1>, tensor<64x64xf32>
    %p = math.exp %sm : tensor<64x64xf32>
    %sum = ism.reduce %p axis = 1 : tensor<64x64xf32> -> tensor<64xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }
    %l2 = arith.addf %l, %sum : tensor<64xf32>
    %p16 = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
    %v = ism.load %V[%n, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %acc2 = ism.dot %p16, %v, %acc : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %l2, %acc2 : tensor<64xf32>, tensor<64x64xf32>
  }
  ism.store %r#1, %O[%c0, %c0] : tensor<64x64xf32> -> memref<?x?xf32>
  ism.return
}

// A product alone in its loop whose A operand is another product's
// accumulator layout with whole rows (attention's last P V in a loop of its
// own, P carried out of the loop before): it takes whole rows too (wgmma on
// sm_90a, P from registers), as P's layout asks, though nothing reduces
// its rows.
// CHECK-LABEL: ism.kernel @last_product
// CHECK: %[[R:.*]]:2 = scf.for
// CHECK: scf.for {{.*}} -> (tensor<64x64xf32, #[[$ROWS]]>) {
// CHECK: ism.dot %[[R]]#1, %{{.*}}, %{{.*}} : tensor<64x64xbf16, #[[$ROWS]]> * tensor<64x64xbf16, #blocked{{[0-9]*}}> -> tensor<64x64xf32, #[[$ROWS]]>
ism.kernel @last_product(%Q: memref<?x?xbf16>, %K: memref<?x?xbf16>, %V: memref<?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %S = memref.dim %K, %c0 : memref<?x?xbf16>
  %q = ism.load %Q[%c0, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %zl = arith.constant dense<0.0> : tensor<64xf32>
  %zp = arith.constant dense<0.0> : tensor<64x64xbf16>
  %r:2 = scf.for %n = %c0 to %S step %c64 iter_args(%l = %zl, %p0 = %zp) -> (tensor<64xf32>, tensor<64x64xbf16>) {
    %k = ism.load %K[%n, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = ism.dot %q, %kt, %zero : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
    %p = math.exp %s : tensor<64x64xf32>
    %sum = ism.reduce %p axis = 1 : tensor<64x64xf32> -> tensor<64xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }
    %l2 = arith.addf %l, %sum : tensor<64xf32>
    %p16 = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
    scf.yield %l2, %p16 : tensor<64xf32>, tensor<64x64xbf16>
  }
  %end = arith.addi %S, %c64 : index
  %o = scf.for %n = %S to %end step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
    %v = ism.load %V[%n, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %acc2 = ism.dot %r#1, %v, %acc : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %acc2 : tensor<64x64xf32>
  }
  ism.store %o, %O[%c0, %c0] : tensor<64x64xf32> -> memref<?x?xf32>
  ism.return
}
