// Row softmax in fp16 with fp32 arithmetic: y[r, :] = softmax(x[r, :]).
// One program per row; a row of up to 4096 columns is one tile. Columns past
// the end of the row read -inf, so they add exp(-inf) = 0 to the sum.

ism.kernel @softmax(%x: memref<?x?xf16>, %y: memref<?x?xf16>)
    attributes {num_warps = 4 : i32} {
  %row = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%row, %c0] {padding = 0xFC00 : f16}
      : memref<?x?xf16> -> tensor<1x4096xf16>
  %t1 = ism.reshape %t : tensor<1x4096xf16> -> tensor<4096xf16>
  %v = arith.extf %t1 : tensor<4096xf16> to tensor<4096xf32>
  %max = ism.reduce %v axis = 0 : tensor<4096xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maximumf %a, %b : f32
    ism.yield %m : f32
  }
  %maxs = ism.splat %max : f32 -> tensor<4096xf32>
  %shifted = arith.subf %v, %maxs : tensor<4096xf32>
  %e = math.exp %shifted : tensor<4096xf32>
  %sum = ism.reduce %e axis = 0 : tensor<4096xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    ism.yield %s : f32
  }
  %sums = ism.splat %sum : f32 -> tensor<4096xf32>
  %p = arith.divf %e, %sums : tensor<4096xf32>
  %p16 = arith.truncf %p : tensor<4096xf32> to tensor<4096xf16>
  %out = ism.reshape %p16 : tensor<4096xf16> -> tensor<1x4096xf16>
  ism.store %out, %y[%row, %c0] : tensor<1x4096xf16> -> memref<?x?xf16>
  ism.return
}

func.func @main(%x: memref<?x?xf16>, %y: memref<?x?xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %x, %c0 : memref<?x?xf16>
  %cols = memref.dim %x, %c1 : memref<?x?xf16>
  %yrows = memref.dim %y, %c0 : memref<?x?xf16>
  %ycols = memref.dim %y, %c1 : memref<?x?xf16>
  %same_r = arith.cmpi eq, %yrows, %rows : index
  %same_c = arith.cmpi eq, %ycols, %cols : index
  %same = arith.andi %same_r, %same_c : i1
  ism.assert %same, "x is {0}x{1} and y is {2}x{3}: they must have the same shape"
      (%rows, %cols, %yrows, %ycols) : index, index, index, index
  %tile = arith.constant 4096 : index
  %fits = arith.cmpi sle, %cols, %tile : index
  ism.assert %fits, "rows of {0} columns: this softmax takes rows of up to 4096"
      (%cols) : index
  ism.launch @softmax grid(%rows) (%x, %y) : (memref<?x?xf16>, memref<?x?xf16>)
  return
}
