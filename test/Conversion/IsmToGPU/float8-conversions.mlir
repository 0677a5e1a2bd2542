// RUN: ism-opt %s --convert-ism-to-gpu | FileCheck %s
// RUN: ism-opt %s --ism-to-ptx="chip=sm_90a" | FileCheck %s --check-prefix=PTX
// (LLVM merges the two extf of the same tile: 4 e5m2x2 conversions.)

// 8-bit float tiles are held as their bits: each thread's 8 e5m2 elements
// load as one vector of 8 i8. arith.extf converts them two at a time
// (cvt.rn.f16x2.e5m2x2, exact), then to f32 and bf16; arith.truncf from
// f16 goes through f32 (exact) to cvt.rn.satfinite.e4m3x2.f32, whose first
// operand is the pair's second element (the upper byte).
#b = #ism.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>
// CHECK-LABEL: gpu.func @convert
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> vector<8xi8>
// CHECK: %[[PAIR:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 1] : vector<8xi8>, vector<8xi8>
// CHECK: %[[H:.*]] = nvvm.convert.f8x2.to.f16x2 %[[PAIR]] : vector<2xi8>(f8E5M2) -> vector<2xf16>
// CHECK: %[[H0:.*]] = vector.extract %[[H]][0] : f16 from vector<2xf16>
// CHECK: %[[F0:.*]] = arith.extf %[[H0]] : f16 to f32
// CHECK: arith.truncf %[[F0]] : f32 to bf16
// CHECK-COUNT-3: nvvm.convert.f8x2.to.f16x2 %{{.*}} : vector<2xi8>(f8E5M2) -> vector<2xf16>
// CHECK-COUNT-4: nvvm.convert.f8x2.to.f16x2 %{{.*}} : vector<2xi8>(f8E5M2) -> vector<2xf16>
// CHECK: %[[LO:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: %[[HI:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: nvvm.convert.f32x2.to.f8x2 %[[HI]], %[[LO]] {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : vector<2xi8>(f8E4M3FN)
// CHECK-COUNT-3: nvvm.convert.f32x2.to.f8x2
// CHECK-NOT: nvvm.convert
// PTX-COUNT-4: cvt.rn.f16x2.e5m2x2
// PTX-NOT: cvt.rn.f16x2.e5m2x2
// PTX-COUNT-4: cvt.rn.satfinite.e4m3x2.f32
ism.kernel @convert(%q: memref<?xf8E5M2>, %y: memref<?xbf16>, %z: memref<?xf8E4M3FN>) attributes {num_warps = 1 : i32} {
  %c0 = arith.constant 0 : index
  %t = ism.load %q[%c0] : memref<?xf8E5M2> -> tensor<256xf8E5M2, #b>
  %f = arith.extf %t : tensor<256xf8E5M2, #b> to tensor<256xbf16, #b>
  ism.store %f, %y[%c0] : tensor<256xbf16, #b> -> memref<?xbf16>
  %h = arith.extf %t : tensor<256xf8E5M2, #b> to tensor<256xf16, #b>
  %e = arith.truncf %h : tensor<256xf16, #b> to tensor<256xf8E4M3FN, #b>
  ism.store %e, %z[%c0] : tensor<256xf8E4M3FN, #b> -> memref<?xf8E4M3FN>
  ism.return
}

// A splat 8-bit constant is its bits.
// CHECK-LABEL: gpu.func @splat
// CHECK: arith.constant dense<56> : vector<8xi8>
ism.kernel @splat(%z: memref<?xf8E4M3FN>) attributes {num_warps = 1 : i32} {
  %c0 = arith.constant 0 : index
  %one = arith.constant dense<1.0> : tensor<256xf8E4M3FN, #b>
  ism.store %one, %z[%c0] : tensor<256xf8E4M3FN, #b> -> memref<?xf8E4M3FN>
  ism.return
}
