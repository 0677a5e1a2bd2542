// Vector add: z = x + y. Each program adds one 1024-element block; the last
// block is partial when n is not a multiple of 1024, and the loads and the
// store skip the elements past the end of the memrefs.

ism.kernel @vector_add(%x: memref<?xf32>, %y: memref<?xf32>, %z: memref<?xf32>)
    attributes {num_warps = 4 : i32} {
  %pid = ism.program_id x : index
  %block = arith.constant 1024 : index
  %off = arith.muli %pid, %block : index
  %a = ism.load %x[%off] : memref<?xf32> -> tensor<1024xf32>
  %b = ism.load %y[%off] : memref<?xf32> -> tensor<1024xf32>
  %sum = arith.addf %a, %b : tensor<1024xf32>
  ism.store %sum, %z[%off] : tensor<1024xf32> -> memref<?xf32>
  ism.return
}

func.func @main(%x: memref<?xf32>, %y: memref<?xf32>, %z: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %block = arith.constant 1024 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %ny = memref.dim %y, %c0 : memref<?xf32>
  %nz = memref.dim %z, %c0 : memref<?xf32>
  %same_y = arith.cmpi eq, %ny, %n : index
  %same_z = arith.cmpi eq, %nz, %n : index
  %same = arith.andi %same_y, %same_z : i1
  ism.assert %same, "x, y and z have {0}, {1} and {2} elements: they must have the same length"
      (%n, %ny, %nz) : index, index, index
  %blocks = arith.ceildivui %n, %block : index
  ism.launch @vector_add grid(%blocks) (%x, %y, %z)
      : (memref<?xf32>, memref<?xf32>, memref<?xf32>)
  return
}
