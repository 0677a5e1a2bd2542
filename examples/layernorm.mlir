// LayerNorm forward in fp16 with fp32 statistics:
//   y[r, :] = (x[r, :] - mean) / sqrt(var + eps) * w + b
// One program per row of up to 4096 columns. Columns past the end of the row
// read 0, so each adds exactly mean^2 to the sum of squared deviations;
// subtracting (4096 - n) * mean^2 gives the variance over the row without a
// mask tile. Weight and bias are loaded with the row, so that all loads are
// in flight before the reductions' barriers.

ism.kernel @layernorm(%x: memref<?x?xf16>, %w: memref<?xf16>, %b: memref<?xf16>,
                      %y: memref<?x?xf16>, %eps: f32)
    attributes {num_warps = 4 : i32} {
  %row = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c1 : memref<?x?xf16>
  %n32 = arith.index_cast %n : index to i32
  %nf = arith.uitofp %n32 : i32 to f32

  %t = ism.load %x[%row, %c0] : memref<?x?xf16> -> tensor<1x4096xf16>
  %wt = ism.load %w[%c0] : memref<?xf16> -> tensor<4096xf16>
  %bt = ism.load %b[%c0] : memref<?xf16> -> tensor<4096xf16>
  %t1 = ism.reshape %t : tensor<1x4096xf16> -> tensor<4096xf16>
  %v = arith.extf %t1 : tensor<4096xf16> to tensor<4096xf32>
  %sum = ism.reduce %v axis = 0 : tensor<4096xf32> -> f32 {
  ^bb0(%a: f32, %c: f32):
    %s = arith.addf %a, %c : f32
    ism.yield %s : f32
  }
  %mean = arith.divf %sum, %nf : f32
  %means = ism.splat %mean : f32 -> tensor<4096xf32>
  %d = arith.subf %v, %means : tensor<4096xf32>
  %sq = arith.mulf %d, %d : tensor<4096xf32>
  %ssq = ism.reduce %sq axis = 0 : tensor<4096xf32> -> f32 {
  ^bb0(%a: f32, %c: f32):
    %s = arith.addf %a, %c : f32
    ism.yield %s : f32
  }
  %block = arith.constant 4096.0 : f32
  %pad = arith.subf %block, %nf : f32
  %mean2 = arith.mulf %mean, %mean : f32
  %padsq = arith.mulf %pad, %mean2 : f32
  %ssqrow = arith.subf %ssq, %padsq : f32
  %var = arith.divf %ssqrow, %nf : f32
  %vareps = arith.addf %var, %eps : f32
  %rstd = math.rsqrt %vareps : f32
  %rstds = ism.splat %rstd : f32 -> tensor<4096xf32>
  %normed = arith.mulf %d, %rstds : tensor<4096xf32>
  %wf = arith.extf %wt : tensor<4096xf16> to tensor<4096xf32>
  %bf = arith.extf %bt : tensor<4096xf16> to tensor<4096xf32>
  %scaled = arith.mulf %normed, %wf : tensor<4096xf32>
  %shifted = arith.addf %scaled, %bf : tensor<4096xf32>
  %o16 = arith.truncf %shifted : tensor<4096xf32> to tensor<4096xf16>
  %out = ism.reshape %o16 : tensor<4096xf16> -> tensor<1x4096xf16>
  ism.store %out, %y[%row, %c0] : tensor<1x4096xf16> -> memref<?x?xf16>
  ism.return
}

func.func @main(%x: memref<?x?xf16>, %w: memref<?xf16>, %b: memref<?xf16>,
                %y: memref<?x?xf16>, %eps: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %x, %c0 : memref<?x?xf16>
  %cols = memref.dim %x, %c1 : memref<?x?xf16>
  %wn = memref.dim %w, %c0 : memref<?xf16>
  %bn = memref.dim %b, %c0 : memref<?xf16>
  %yrows = memref.dim %y, %c0 : memref<?x?xf16>
  %ycols = memref.dim %y, %c1 : memref<?x?xf16>
  %same_r = arith.cmpi eq, %yrows, %rows : index
  %same_c = arith.cmpi eq, %ycols, %cols : index
  %same = arith.andi %same_r, %same_c : i1
  ism.assert %same, "x is {0}x{1} and y is {2}x{3}: they must have the same shape"
      (%rows, %cols, %yrows, %ycols) : index, index, index, index
  %wok = arith.cmpi eq, %wn, %cols : index
  %bok = arith.cmpi eq, %bn, %cols : index
  %wbok = arith.andi %wok, %bok : i1
  ism.assert %wbok, "w and b have {0} and {1} elements but rows have {2} columns"
      (%wn, %bn, %cols) : index, index, index
  %tile = arith.constant 4096 : index
  %fits = arith.cmpi sle, %cols, %tile : index
  ism.assert %fits, "rows of {0} columns: this layernorm takes rows of up to 4096"
      (%cols) : index
  ism.launch @layernorm grid(%rows) (%x, %w, %b, %y, %eps)
      : (memref<?x?xf16>, memref<?xf16>, memref<?xf16>, memref<?x?xf16>, f32)
  return
}
