// A deliberately wrong vector add: the store lands one element too far, so
// z[0] is never written and --check must fail.
ism.kernel @vector_add(%x: memref<?xf32>, %y: memref<?xf32>, %z: memref<?xf32>)
    attributes {num_warps = 4 : i32} {
  %pid = ism.program_id x : index
  %block = arith.constant 1024 : index
  %c1 = arith.constant 1 : index
  %off = arith.muli %pid, %block : index
  %a = ism.load %x[%off] : memref<?xf32> -> tensor<1024xf32>
  %b = ism.load %y[%off] : memref<?xf32> -> tensor<1024xf32>
  %sum = arith.addf %a, %b : tensor<1024xf32>
  %wrong = arith.addi %off, %c1 : index
  ism.store %sum, %z[%wrong] : tensor<1024xf32> -> memref<?xf32>
  ism.return
}

func.func @main(%x: memref<?xf32>, %y: memref<?xf32>, %z: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %block = arith.constant 1024 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %blocks = arith.ceildivui %n, %block : index
  ism.launch @vector_add grid(%blocks) (%x, %y, %z)
      : (memref<?xf32>, memref<?xf32>, memref<?xf32>)
  return
}
