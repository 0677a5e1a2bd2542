// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot=chip=sm_80 -verify-diagnostics
// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot=chip=sm_89 | FileCheck %s

// 8-bit float conversions lower to cvt instructions sm_89 introduced.
// CHECK: arith.truncf {{.*}} to tensor<256xf8E4M3FN
ism.kernel @quantize(%x: memref<?xf32>, %q: memref<?xf8E4M3FN>) attributes {num_warps = 1 : i32} {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0] : memref<?xf32> -> tensor<256xf32>
  // expected-error @+1 {{converts 8-bit floats, which needs sm_89 or newer (cvt e4m3x2 / e5m2x2); chip 'sm_80' has no such instruction}}
  %e = arith.truncf %t : tensor<256xf32> to tensor<256xf8E4M3FN>
  ism.store %e, %q[%c0] : tensor<256xf8E4M3FN> -> memref<?xf8E4M3FN>
  ism.return
}
