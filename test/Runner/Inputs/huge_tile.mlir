// A tile of 2^30 x 1024 = 2^40 elements (8 TiB in the reference
// interpreter's float64), far past the 2^20 a tile may have: the verifier
// refuses it (test/Runner/limits.test).
ism.kernel @huge(%x: memref<?x?xf32>) attributes {num_warps = 4 : i32} {
  %c = arith.constant 1.0 : f32
  %t = ism.splat %c : f32 -> tensor<1073741824x1024xf32>
  %c0 = arith.constant 0 : index
  ism.store %t, %x[%c0, %c0] : tensor<1073741824x1024xf32> -> memref<?x?xf32>
  ism.return
}

func.func @main(%x: memref<?x?xf32>) {
  %c1 = arith.constant 1 : index
  ism.launch @huge grid(%c1) (%x) : (memref<?x?xf32>)
  return
}
