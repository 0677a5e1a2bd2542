// A tile of 2^19 elements (4 MiB in float64 in the reference interpreter),
// summed to one value per row (test/Runner/limits.test). The GPU lowering
// refuses it: 4096 elements per thread do not fit in registers.
ism.kernel @large_tile(%out: memref<?xf32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f32
  %t = ism.splat %one : f32 -> tensor<512x1024xf32>
  %s = ism.reduce %t axis = 1 : tensor<512x1024xf32> -> tensor<512xf32> {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    ism.yield %r : f32
  }
  ism.store %s, %out[%c0] : tensor<512xf32> -> memref<?xf32>
  ism.return
}

func.func @main(%out: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  ism.launch @large_tile grid(%c1) (%out) : (memref<?xf32>)
  return
}
