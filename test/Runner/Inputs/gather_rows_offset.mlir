// gather_rows.mlir with the columns starting at a run-time offset %col0:
// nothing says each vector starts at a multiple of its width, so every
// thread tests its own groups (alignment, bounds) before its accesses
// (gather-vector.mlir, @rows). The gather reads the table's rows from
// column %col0; the scatter adds them into %acc at the same columns, read
// back through a gather first (%acc is read and written, so elements the
// kernel does not touch keep their values).
ism.kernel @gather_rows_offset(%table: memref<?x?xbf16>, %ids: memref<?xi32>,
                               %out: memref<?x?xbf16>, %acc: memref<?x?xbf16>,
                               %col0: i32)
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
  %offs = ism.splat %col0 : i32 -> tensor<256xi32>
  %shifted = arith.addi %cols, %offs : tensor<256xi32>
  %ce = ism.expand_dims %shifted axis = 0 : tensor<256xi32> -> tensor<1x256xi32>
  %cb = ism.broadcast %ce : tensor<1x256xi32> -> tensor<8x256xi32>
  %g = ism.gather %table[%rb, %cb] mask %lb {padding = 3.0 : bf16}
      : memref<?x?xbf16>[tensor<8x256xi32>, tensor<8x256xi32>]
      -> tensor<8x256xbf16>
  ism.store %g, %out[%row0, %c0] : tensor<8x256xbf16> -> memref<?x?xbf16>
  %old = ism.gather %acc[%rb, %cb] mask %lb
      : memref<?x?xbf16>[tensor<8x256xi32>, tensor<8x256xi32>]
      -> tensor<8x256xbf16>
  %sum = arith.addf %old, %g : tensor<8x256xbf16>
  ism.scatter %sum, %acc[%rb, %cb] mask %lb
      : tensor<8x256xbf16> -> memref<?x?xbf16>[tensor<8x256xi32>,
                                                tensor<8x256xi32>]
  ism.return
}

func.func @main(%table: memref<?x?xbf16>, %ids: memref<?xi32>,
                %out: memref<?x?xbf16>, %acc: memref<?x?xbf16>, %col0: i32) {
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %n = memref.dim %ids, %c0 : memref<?xi32>
  %n7 = arith.addi %n, %c7 : index
  %grid = arith.divui %n7, %c8 : index
  ism.launch @gather_rows_offset grid(%grid)
      (%table, %ids, %out, %acc, %col0)
      : (memref<?x?xbf16>, memref<?xi32>, memref<?x?xbf16>, memref<?x?xbf16>,
         i32)
  return
}
