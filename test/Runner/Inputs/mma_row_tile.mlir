// Column indices made in an accumulator layout (#ism.mma on 2 x 2 warps)
// from a range in its #ism.slice along dim 0: the one-row tile is
// broadcast over the rows in registers, masks a loaded tile, and is stored
// itself (each column once, by the first of the lanes and warps holding
// it). gpu-layouts.test checks it on the GPU.
#mma = #ism.mma<{version = 2, warpsPerCTA = [2, 2], instrShape = [16, 8, 16]}>
#cols = #ism.slice<{dim = 0, parent = #mma}>
#rows = #ism.slice<{dim = 1, parent = #mma}>
ism.kernel @row_tile(%x: memref<?x?xf32>, %y: memref<?x?xf32>,
                     %r: memref<?x?xi32>, %n: i32)
    attributes {num_warps = 4 : i32} {
  %c0 = arith.constant 0 : index
  %iota = ism.range 0 to 64 : tensor<64xi32, #cols>
  %ns = ism.splat %n : i32 -> tensor<64xi32, #cols>
  %cols1 = arith.addi %iota, %ns : tensor<64xi32, #cols>
  %cols2 = ism.expand_dims %cols1 axis = 0
      : tensor<64xi32, #cols> -> tensor<1x64xi32, #mma>
  %cols = ism.broadcast %cols2 : tensor<1x64xi32, #mma> -> tensor<32x64xi32, #mma>
  %iota_m = ism.range 0 to 32 : tensor<32xi32, #rows>
  %rows1 = ism.expand_dims %iota_m axis = 1
      : tensor<32xi32, #rows> -> tensor<32x1xi32, #mma>
  %rows = ism.broadcast %rows1 : tensor<32x1xi32, #mma> -> tensor<32x64xi32, #mma>
  %t = ism.load %x[%c0, %c0] : memref<?x?xf32> -> tensor<32x64xf32, #mma>
  // Keep x[i, j] where j + n < 40 + i.
  %lim = arith.constant dense<40> : tensor<32x64xi32, #mma>
  %lims = arith.addi %lim, %rows : tensor<32x64xi32, #mma>
  %keep = arith.cmpi slt, %cols, %lims : tensor<32x64xi32, #mma>
  %zero = arith.constant dense<0.0> : tensor<32x64xf32, #mma>
  %s = arith.select %keep, %t, %zero : tensor<32x64xi1, #mma>, tensor<32x64xf32, #mma>
  ism.store %s, %y[%c0, %c0] : tensor<32x64xf32, #mma> -> memref<?x?xf32>
  ism.store %cols2, %r[%c0, %c0] : tensor<1x64xi32, #mma> -> memref<?x?xi32>
  ism.return
}

func.func @main(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %r: memref<?x?xi32>,
                %n: i32) {
  %c1 = arith.constant 1 : index
  ism.launch @row_tile grid(%c1) (%x, %y, %r, %n)
      : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xi32>, i32)
  return
}
