// RUN: ism-opt %s -split-input-file -verify-diagnostics

// Every verifier rule of the layout encodings, one case each.

// expected-error @+1 {{threadsPerWarp must multiply to 32 (a warp), got 16}}
func.func @f(%a: tensor<64xf32, #ism.blocked<{sizePerThread = [1], threadsPerWarp = [16], warpsPerCTA = [4], order = [0]}>>)

// -----

// expected-error @+1 {{sizePerThread, threadsPerWarp, warpsPerCTA and order must have one entry per dimension}}
func.func @f(%a: tensor<64xf32, #ism.blocked<{sizePerThread = [1, 1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>)

// -----

// expected-error @+1 {{sizePerThread entries must be powers of two, got 3}}
func.func @f(%a: tensor<64xf32, #ism.blocked<{sizePerThread = [3], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>)

// -----

// expected-error @+1 {{warpsPerCTA multiplies to 64 warps; a CTA has at most 32}}
func.func @f(%a: tensor<64x64xf32, #ism.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [8, 8], order = [1, 0]}>>)

// -----

// expected-error @+1 {{order must be a permutation of 0..1}}
func.func @f(%a: tensor<64x64xf32, #ism.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [0, 0]}>>)

// -----

// expected-error @+1 {{#ism.blocked needs at least one dimension}}
func.func @f(%a: tensor<f32, #ism.blocked<{sizePerThread = [], threadsPerWarp = [], warpsPerCTA = [], order = []}>>)

// -----

// expected-error @+1 {{#ism.blocked layout has rank 1 but the tensor has rank 2}}
func.func @f(%a: tensor<64x64xf32, #ism.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>)

// -----

// expected-error @+1 {{#ism.mma version must be 2 (mma.sync) or 3 (wgmma), got 1}}
func.func @f(%a: tensor<64x64xf32, #ism.mma<{version = 1, warpsPerCTA = [4, 1], instrShape = [16, 8, 16]}>>)

// -----

// expected-error @+1 {{#ism.mma instrShape must be [M, N, K]}}
func.func @f(%a: tensor<64x64xf32, #ism.mma<{version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]}>>)

// -----

// expected-error @+1 {{#ism.mma instrShape M must be 16 (one warp's rows), got 32}}
func.func @f(%a: tensor<64x64xf32, #ism.mma<{version = 2, warpsPerCTA = [4, 1], instrShape = [32, 8, 16]}>>)

// -----

// expected-error @+1 {{#ism.mma instrShape N must be a multiple of 8 up to 256, got 12}}
func.func @f(%a: tensor<64x64xf32, #ism.mma<{version = 2, warpsPerCTA = [4, 1], instrShape = [16, 12, 16]}>>)

// -----

// expected-error @+1 {{#ism.mma instrShape K must be a power of two, got 24}}
func.func @f(%a: tensor<64x64xf32, #ism.mma<{version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8, 24]}>>)

// -----

// expected-error @+1 {{#ism.mma version 3 (wgmma) needs whole warpgroups: warpsPerCTA must multiply to a multiple of 4}}
func.func @f(%a: tensor<64x64xf32, #ism.mma<{version = 3, warpsPerCTA = [2, 1], instrShape = [16, 64, 16]}>>)

// -----

// expected-error @+1 {{#ism.mma warpsPerCTA must have 2 entries (or 3 with a batch dimension)}}
func.func @f(%a: tensor<64x64xf32, #ism.mma<{version = 2, warpsPerCTA = [4], instrShape = [16, 8, 16]}>>)

// -----

// expected-error @+1 {{#ism.mma layout has rank 2 but the tensor has rank 1}}
func.func @f(%a: tensor<64xf32, #ism.mma<{version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8, 16]}>>)

// -----

// expected-error @+1 {{#ism.dot_op opIdx must be 0 (A) or 1 (B), got 2}}
func.func @f(%a: tensor<64x64xf16, #ism.dot_op<{opIdx = 2, parent = #ism.mma<{version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8, 16]}>, kWidth = 2}>>)

// -----

// expected-error @+1 {{#ism.dot_op parent must be an #ism.mma or #ism.blocked layout}}
func.func @f(%a: tensor<64x64xf16, #ism.dot_op<{opIdx = 0, parent = #ism.shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>, kWidth = 2}>>)

// -----

// expected-error @+1 {{#ism.dot_op kWidth must be a power of two, got 0}}
func.func @f(%a: tensor<64x64xf16, #ism.dot_op<{opIdx = 0, parent = #ism.mma<{version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8, 16]}>, kWidth = 0}>>)

// -----

// expected-error @+1 {{#ism.dot_op layout has rank 2 but the tensor has rank 3}}
func.func @f(%a: tensor<2x64x64xf16, #ism.dot_op<{opIdx = 0, parent = #ism.mma<{version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8, 16]}>, kWidth = 2}>>)

// -----

// expected-error @+1 {{#ism.slice parent must be a #ism.blocked layout, a 2-D #ism.mma layout or an #ism.slice, of rank 2 or more}}
func.func @f(%a: tensor<f32, #ism.slice<{dim = 0, parent = #ism.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>}>>)

// -----

// expected-error @+1 {{#ism.slice dim must be a dimension of the parent layout (rank 2), got 2}}
func.func @f(%a: tensor<64xf32, #ism.slice<{dim = 2, parent = #ism.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>}>>)

// -----

// expected-error @+1 {{#ism.slice layout has rank 1 but the tensor has rank 2}}
func.func @f(%a: tensor<8x8xf32, #ism.slice<{dim = 0, parent = #ism.slice<{dim = 2, parent = #ism.blocked<{sizePerThread = [1, 1, 8], threadsPerWarp = [1, 2, 16], warpsPerCTA = [1, 4, 1], order = [2, 1, 0]}>}>}>>)

// -----

// expected-error @+1 {{#ism.slice dim must be a dimension of the parent layout (rank 2), got 2}}
func.func @f(%a: tensor<64xf32, #ism.slice<{dim = 2, parent = #ism.mma<{version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8, 16]}>}>>)

// -----

// expected-error @+1 {{#ism.slice layout has rank 1 but the tensor has rank 2}}
func.func @f(%a: tensor<64x2xf32, #ism.slice<{dim = 1, parent = #ism.mma<{version = 2, warpsPerCTA = [4, 1], instrShape = [16, 8, 16]}>}>>)

// -----

// expected-error @+1 {{vec, perPhase and maxPhase entries must be powers of two, got 3}}
func.func @f(%a: tensor<64x64xf16, #ism.shared<{vec = 8, perPhase = 1, maxPhase = 3, order = [1, 0]}>>)

// -----

// expected-error @+1 {{#ism.shared layout has rank 2 but the tensor has rank 1}}
func.func @f(%a: tensor<64xf16, #ism.shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>>)

// -----

// expected-error @+1 {{order must be a permutation of 0..1}}
func.func @f(%a: tensor<64x64xf16, #ism.shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [2, 0]}>>)

// -----

// expected-error @+2 {{expected '['}}
// expected-error @+1 {{failed to parse Ism_BlockedEncodingAttr parameter 'sizePerThread'}}
func.func @f(%a: tensor<64xf32, #ism.blocked<{sizePerThread = 1, threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>>)

// -----

// ism.zeroed marks a host function's temporary (memref.alloc) that starts
// at zero; it takes no value and belongs on memref.alloc only.
func.func @zeroed_value() {
  // expected-error @+1 {{'ism.zeroed' is a unit attribute (it takes no value)}}
  %t = memref.alloc() {ism.zeroed = 1 : i32} : memref<16xi32>
  return
}

// -----

func.func @zeroed_elsewhere(%x: memref<16xi32>) {
  // expected-error @+1 {{'ism.zeroed' applies to memref.alloc only}}
  %c = memref.cast %x {ism.zeroed} : memref<16xi32> to memref<?xi32>
  return
}
