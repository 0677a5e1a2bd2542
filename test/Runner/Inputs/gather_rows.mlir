// Rows of a table picked by index (an embedding lookup), 8 rows a program:
// the gather and the scatter move 16 bytes a thread where the index tiles
// allow it (gather-vector.mlir). ids < 0 are masked off (the last program's
// slots past the end of ids read -1); ids past the table read padding
// (gather) and write nothing (scatter).
ism.kernel @gather_rows(%table: memref<?x?xbf16>, %ids: memref<?xi32>,
                        %out: memref<?x?xbf16>, %scattered: memref<?x?xbf16>)
    attributes {num_warps = 4 : i32} {
  %pid = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %row0 = arith.muli %pid, %c8 : index
  %r = ism.load %ids[%row0] {padding = -1 : i32} : memref<?xi32> -> tensor<8xi32>
  %zero = arith.constant dense<0> : tensor<8xi32>
  %live = arith.cmpi sge, %r, %zero : tensor<8xi32>
  %le = ism.expand_dims %live axis = 1 : tensor<8xi1> -> tensor<8x1xi1>
  %lb = ism.broadcast %le : tensor<8x1xi1> -> tensor<8x256xi1>
  %re = ism.expand_dims %r axis = 1 : tensor<8xi32> -> tensor<8x1xi32>
  %rb = ism.broadcast %re : tensor<8x1xi32> -> tensor<8x256xi32>
  %cols = ism.range 0 to 256 : tensor<256xi32>
  %ce = ism.expand_dims %cols axis = 0 : tensor<256xi32> -> tensor<1x256xi32>
  %cb = ism.broadcast %ce : tensor<1x256xi32> -> tensor<8x256xi32>
  %g = ism.gather %table[%rb, %cb] mask %lb {padding = 3.0 : bf16}
      : memref<?x?xbf16>[tensor<8x256xi32>, tensor<8x256xi32>]
      -> tensor<8x256xbf16>
  ism.store %g, %out[%row0, %c0] : tensor<8x256xbf16> -> memref<?x?xbf16>
  ism.scatter %g, %scattered[%rb, %cb] mask %lb
      : tensor<8x256xbf16> -> memref<?x?xbf16>[tensor<8x256xi32>,
                                                tensor<8x256xi32>]
  ism.return
}

func.func @main(%table: memref<?x?xbf16>, %ids: memref<?xi32>,
                %out: memref<?x?xbf16>, %scattered: memref<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %n = memref.dim %ids, %c0 : memref<?xi32>
  %n7 = arith.addi %n, %c7 : index
  %grid = arith.divui %n7, %c8 : index
  ism.launch @gather_rows grid(%grid) (%table, %ids, %out, %scattered)
      : (memref<?x?xbf16>, memref<?xi32>, memref<?x?xbf16>, memref<?x?xbf16>)
  return
}
