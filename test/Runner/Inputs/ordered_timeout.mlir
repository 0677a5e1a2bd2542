// An ordered region whose second launch waits for a first that takes far
// longer than the region's timeout_ms = 1: @slow runs a long scalar loop
// before it writes %x, and @after, which reads %x, gives up waiting after
// 1 ms. The kernel still ends (the error is recorded and @slow finishes),
// and the runner reports the wait instead of returning wrong outputs.

ism.kernel @slow(%x: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %step = arith.constant 1.0e-7 : f32
  %scale = arith.constant 0.999999 : f32
  %v = scf.for %i = %c0 to %n step %c1 iter_args(%a = %zero) -> (f32) {
    %m = arith.mulf %a, %scale : f32
    %s = arith.addf %m, %step : f32
    scf.yield %s : f32
  }
  %t = ism.splat %v : f32 -> tensor<128xf32>
  ism.store %t, %x[%c0] : tensor<128xf32> -> memref<?xf32>
  ism.return
}

ism.kernel @after(%x: memref<?xf32>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0] : memref<?xf32> -> tensor<128xf32>
  %s = arith.addf %t, %t : tensor<128xf32>
  ism.store %s, %y[%c0] : tensor<128xf32> -> memref<?xf32>
  ism.return
}

func.func @main(%x: memref<?xf32>, %y: memref<?xf32>, %n: index) {
  %c1 = arith.constant 1 : index
  ism.coschedule ordered attributes {timeout_ms = 1 : i32} {
    ism.launch @slow grid(%c1) (%x, %n) : (memref<?xf32>, index)
    ism.launch @after grid(%c1) (%x, %y) : (memref<?xf32>, memref<?xf32>)
  }
  return
}
