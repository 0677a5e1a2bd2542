// RUN: ism-opt %s | ism-opt | FileCheck %s

// Round trip of the layout encodings on tile types.

// CHECK: #[[$BLOCKED:.*]] = #ism.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK: #[[$MMA:.*]] = #ism.mma<{version = 3, warpsPerCTA = [4, 1], instrShape = [16, 128, 16]}>
// CHECK: #[[$MMA2:.*]] = #ism.mma<{version = 2, warpsPerCTA = [2, 2], instrShape = [16, 8, 16]}>
// CHECK-DAG: #[[$SHARED:.*]] = #ism.shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
// CHECK-DAG: #[[$DOT:.*]] = #ism.dot_op<{opIdx = 0, parent = #[[$MMA2]], kWidth = 2}>
// CHECK-DAG: #[[$SLICE:.*]] = #ism.slice<{dim = 1, parent = #[[$MMA2]]}>

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
