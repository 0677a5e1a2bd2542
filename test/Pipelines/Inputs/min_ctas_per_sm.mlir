// Input of ../min-ctas-per-sm.test.
ism.kernel @scale(%x: memref<?xf32>) attributes {num_warps = 4 : i32, min_ctas_per_sm = 10 : i32} {
  %pid = ism.program_id x : index
  %c512 = arith.constant 512 : index
  %off = arith.muli %pid, %c512 : index
  %t = ism.load %x[%off] : memref<?xf32> -> tensor<512xf32>
  %y = arith.addf %t, %t : tensor<512xf32>
  ism.store %y, %x[%off] : tensor<512xf32> -> memref<?xf32>
  ism.return
}
