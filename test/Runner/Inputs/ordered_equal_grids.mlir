// Two launches of an ordered ism.coschedule whose grids are two host values
// (%g1, %g2) that are equal only after CSE (from two equal constants):
// the compile pipeline sees one grid parameter, the host function the runner
// runs two. The runner binds the fused kernel's parameters from the list
// ism-coschedule recorded (params), not by deduplicating the host values
// again, which would shift the hidden work-counter address by one.
// y = 2 x, then z = y + 1 (waits for y).

ism.kernel @twice(%x: memref<?xf32>, %y: memref<?xf32>)
    attributes {num_warps = 4 : i32} {
  %pid = ism.program_id x : index
  %c128 = arith.constant 128 : index
  %o = arith.muli %pid, %c128 : index
  %t = ism.load %x[%o] : memref<?xf32> -> tensor<128xf32>
  %two = arith.constant dense<2.0> : tensor<128xf32>
  %r = arith.mulf %t, %two : tensor<128xf32>
  ism.store %r, %y[%o] : tensor<128xf32> -> memref<?xf32>
  ism.return
}

ism.kernel @plus_one(%y: memref<?xf32>, %z: memref<?xf32>)
    attributes {num_warps = 4 : i32} {
  %pid = ism.program_id x : index
  %c128 = arith.constant 128 : index
  %o = arith.muli %pid, %c128 : index
  %t = ism.load %y[%o] : memref<?xf32> -> tensor<128xf32>
  %one = arith.constant dense<1.0> : tensor<128xf32>
  %r = arith.addf %t, %one : tensor<128xf32>
  ism.store %r, %z[%o] : tensor<128xf32> -> memref<?xf32>
  ism.return
}

func.func @main(%x: memref<?xf32>, %y: memref<?xf32>, %z: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %a = arith.constant 128 : index
  %b = arith.constant 128 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %g1 = arith.ceildivui %n, %a : index
  %g2 = arith.ceildivui %n, %b : index
  ism.coschedule ordered {
    ism.launch @twice grid(%g1) (%x, %y) : (memref<?xf32>, memref<?xf32>)
    ism.launch @plus_one grid(%g2) (%y, %z) : (memref<?xf32>, memref<?xf32>)
  }
  return
}
