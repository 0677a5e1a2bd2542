// RUN: ism-opt %s --ism-assign-layouts --ism-accelerate-dot=chip=sm_90a --ism-pipeline --ism-remove-layout-conversions --convert-ism-to-gpu -verify-diagnostics --split-input-file

// A ring the kernel asks for that does not fit shared memory: 16 stages of
// K and V (16 KiB a stage).
ism.kernel @too_many(%Q: memref<?x?xbf16>, %K: memref<?x?xbf16>, %V: memref<?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 4 : i32, num_stages = 16 : i32} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %S = memref.dim %K, %c0 : memref<?x?xbf16>
  %q = ism.load %Q[%c0, %c0] : memref<?x?xbf16> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %zl = arith.constant dense<0.0> : tensor<64xf32>
  // expected-error @+1 {{num_stages = 16: the ring of the products' operands in this loop needs 256 KiB of shared memory (16 KiB a stage), more than 192 KiB; use fewer stages or smaller tiles (num_stages = 1 loads them in the loop)}}
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

// -----

// num_stages below 1 is no ring size.
// expected-error @+1 {{'ism.kernel' op num_stages = 0: must be at least 1 (1 loads the products' operands in their loop, more copies them ahead)}}
ism.kernel @negative(%Q: memref<?x?xbf16>, %K: memref<?x?xbf16>, %V: memref<?x?xbf16>, %O: memref<?x?xf32>) attributes {num_warps = 4 : i32, num_stages = 0 : i32} {
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
