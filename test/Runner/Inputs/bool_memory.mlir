// A kernel that accesses i1 memory, which the GPU lowering rejects.
ism.kernel @k(%x: memref<?xi1>) attributes {num_warps = 1 : i32} {
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%c0] : memref<?xi1> -> tensor<32xi1>
  ism.store %t, %x[%c0] : tensor<32xi1> -> memref<?xi1>
  ism.return
}
