// RUN: ism-opt %s | ism-opt | FileCheck %s

// Round trip of the layout encodings on tile types.

// CHECK: #[[$BLOCKED:.*]] = #ism.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK: #[[$B3:.*]] = #ism.blocked<{sizePerThread = [1, 1, 8], threadsPerWarp = [1, 2, 16], warpsPerCTA = [1, 4, 1], order = [2, 1, 0]}>
// CHECK: #[[$MMA:.*]] = #ism.mma<{version = 3, warpsPerCTA = [4, 1], instrShape = [16, 128, 16]}>
// CHECK: #[[$MMA2:.*]] = #ism.mma<{version = 2, warpsPerCTA = [2, 2], instrShape = [16, 8, 16]}>
// CHECK-DAG: #[[$SHARED:.*]] = #ism.shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
// CHECK-DAG: #[[$DOT:.*]] = #ism.dot_op<{opIdx = 0, parent = #[[$MMA2]], kWidth = 2}>
// CHECK-DAG: #[[$SLICE:.*]] = #ism.slice<{dim = 1, parent = #[[$MMA2]]}>
// CHECK-DAG: #[[$S2:.*]] = #ism.slice<{dim = 2, parent = #[[$B3]]}>
// CHECK-DAG: #[[$S20:.*]] = #ism.slice<{dim = 0, parent = #[[$S2]]}>

// CHECK-LABEL: func.func @encodings
// CHECK-SAME: tensor<128x64xf16, #[[$BLOCKED]]>
// CHECK-SAME: tensor<128x128xf32, #[[$MMA]]>
// CHECK-SAME: tensor<64x32xf16, #[[$DOT]]>
// CHECK-SAME: tensor<128x64xf16, #[[$SHARED]]>
// CHECK-SAME: tensor<64xf32, #[[$SLICE]]>
func.func @encodings(
    %a: tensor<128x64xf16, #ism.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>>,
    %b: tensor<128x128xf32, #ism.mma<{version = 3, warpsPerCTA = [4, 1], instrShape = [16, 128, 16]}>>,
    %c: tensor<64x32xf16, #ism.dot_op<{opIdx = 0, parent = #ism.mma<{version = 2, warpsPerCTA = [2, 2], instrShape = [16, 8, 16]}>, kWidth = 2}>>,
    %d: tensor<128x64xf16, #ism.shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>>,
    %e: tensor<64xf32, #ism.slice<{dim = 1, parent = #ism.mma<{version = 2, warpsPerCTA = [2, 2], instrShape = [16, 8, 16]}>}>>) {
  return
}

// A slice of a blocked layout (the totals of an in-warp reduction) and a
// slice of that slice round-trip too (aliases $B3, $S2, $S20 above).
// CHECK-LABEL: func.func @blocked_slices
// CHECK-SAME: tensor<8x8xf32, #[[$S2]]>
// CHECK-SAME: tensor<8xf32, #[[$S20]]>
func.func @blocked_slices(
    %a: tensor<8x8xf32, #ism.slice<{dim = 2, parent = #ism.blocked<{sizePerThread = [1, 1, 8], threadsPerWarp = [1, 2, 16], warpsPerCTA = [1, 4, 1], order = [2, 1, 0]}>}>>,
    %b: tensor<8xf32, #ism.slice<{dim = 0, parent = #ism.slice<{dim = 2, parent = #ism.blocked<{sizePerThread = [1, 1, 8], threadsPerWarp = [1, 2, 16], warpsPerCTA = [1, 4, 1], order = [2, 1, 0]}>}>}>>) {
  return
}
