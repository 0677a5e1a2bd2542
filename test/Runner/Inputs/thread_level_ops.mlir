// A kernel with the lowering's thread-level ops (ism-pipeline-gathers'
// ring), written by hand: the reference interpreter refuses them by name
// (test/Runner/errors.test).
#b = #ism.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
ism.kernel @k(%A: memref<?xf32>, %Y: memref<?xf32>) attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %i = ism.range 0 to 128 : tensor<128xi32, #b>
  ism.async_gather %A[%i] slot %c0 {ring = 0 : i32, slots = 2 : i32} : memref<?xf32>[tensor<128xi32, #b>]
  %t = ism.async_gather_wait ring 0 slot %c0 {slots = 2 : i32, pending = 0 : i32} : tensor<128xf32, #b>
  ism.store %t, %Y[%c0] : tensor<128xf32, #b> -> memref<?xf32>
  ism.return
}
func.func @main(%A: memref<?xf32>, %Y: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  ism.launch @k grid(%c1) (%A, %Y) : (memref<?xf32>, memref<?xf32>)
  return
}
