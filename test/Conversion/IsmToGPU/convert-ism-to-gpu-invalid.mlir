// RUN: ism-opt %s -split-input-file -verify-diagnostics -convert-ism-to-gpu

// Tiles must have layouts before they can be distributed over threads.
ism.kernel @no_layout(%x: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{tile 'tensor<128xf32>' has no #ism.blocked layout (run ism-assign-layouts first)}}
  %t = ism.load %x[%c0] : memref<?xf32> -> tensor<128xf32>
  ism.return
}

// -----

#b = #ism.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
// A tile that does not fit in a thread's registers.
ism.kernel @too_big(%x: memref<?xf32>) attributes {num_warps = 1 : i32} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{needs 512 elements per thread, more than the 255 registers a thread has; use smaller tiles or more warps}}
  %t = ism.load %x[%c0] : memref<?xf32> -> tensor<16384xf32, #b>
  ism.return
}

// -----

#b = #ism.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
ism.kernel @not_splat(%x: memref<?xf32>) attributes {num_warps = 1 : i32} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{only splat tile constants can be lowered}}
  %t = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<32xf32, #b>
  ism.store %t, %x[%c0] : tensor<32xf32, #b> -> memref<?xf32>
  ism.return
}

// -----

ism.kernel @k() {
  ism.return
}
func.func @cosched(%n: index) {
  // expected-error @+1 {{must be fused into one kernel before the lowering: run ism-coschedule first}}
  ism.coschedule warp_specialized {
    ism.launch @k grid(%n) ()
    ism.launch @k grid(%n) ()
  }
  return
}

// -----

#b = #ism.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
ism.kernel @bool_memory(%x: memref<?xi1>) attributes {num_warps = 1 : i32} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{cannot access memory of element type 'i1' on the GPU}}
  %t = ism.load %x[%c0] : memref<?xi1> -> tensor<32xi1, #b>
  ism.return
}

// -----

// A user-given layout the lowering cannot distribute: more elements per
// thread along a dimension than the tile has.
#wide = #ism.blocked<{sizePerThread = [64], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
ism.kernel @layout_too_wide(%x: memref<?xf32>) attributes {num_warps = 1 : i32} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{tile 'tensor<32xf32, #ism.blocked<{sizePerThread = [64], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>>' has a layout whose sizePerThread exceeds the tile}}
  %t = ism.load %x[%c0] : memref<?xf32> -> tensor<32xf32, #wide>
  ism.return
}

// -----

// 8-bit float tiles move and convert; other arithmetic on them is an error.
#b = #ism.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
ism.kernel @f8_arith(%x: memref<?xf8E4M3FN>) attributes {num_warps = 1 : i32} {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0] : memref<?xf8E4M3FN> -> tensor<128xf8E4M3FN, #b>
  // expected-error @+1 {{'arith.mulf' op on 8-bit floats: the GPU lowering converts 8-bit float tiles (arith.extf to f16, bf16 or f32; arith.truncf from them) and moves them, but does no other arithmetic on them}}
  %m = arith.mulf %t, %t : tensor<128xf8E4M3FN, #b>
  ism.store %m, %x[%c0] : tensor<128xf8E4M3FN, #b> -> memref<?xf8E4M3FN>
  ism.return
}
