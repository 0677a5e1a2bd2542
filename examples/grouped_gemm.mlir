// Grouped GEMM for a mixture-of-experts layer, in one launch whose routing
// never goes through the host: tokens sorted by expert (rows
// [start_e, start_e + count_e) of x are expert e's), counts[e] in GPU
// memory, each expert's weights W_e (N x K) stacked in W (E * N rows, as
// nn.Linear holds them), y = x_e W_e^T for each expert's rows.
//
// @plan turns the counts into a table with one entry per 128-row tile of
// some expert (program t of a grid that bounds their number: tiles =
// ceil(M / 128) + E): the tile's first row, its expert's row end and the
// first row of its expert's weights; slots past the last tile get an empty
// row range. @grouped is the bf16 wgmma GEMM of W^T tiles (x @ W^T, as
// examples/matmul.mlir with B read K-major), one program per (table slot,
// 128 columns): it reads its slot with scalar loads (the producer warpgroup
// reads them too, to place its TMA loads), runs no K steps for an empty
// slot, and stores only its expert's rows.

ism.kernel @plan(%counts: memref<?xi32>, %rows: memref<?xi32>,
                 %ends: memref<?xi32>, %wrows: memref<?xi32>, %n: i32)
    attributes {num_warps = 4 : i32} {
  %t = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %ti = arith.index_cast %t : index to i32
  // Up to 256 experts: one tile of counts (zeros past the end).
  %cnt = ism.load %counts[%c0] : memref<?xi32> -> tensor<256xi32>
  %c127 = arith.constant dense<127> : tensor<256xi32>
  %c128 = arith.constant dense<128> : tensor<256xi32>
  %cp = arith.addi %cnt, %c127 : tensor<256xi32>
  %ntiles = arith.divui %cp, %c128 : tensor<256xi32>
  // Inclusive prefix sums: each expert's tile end and row end.
  %tend = ism.scan %ntiles axis = 0 : tensor<256xi32> -> tensor<256xi32> {
  ^bb0(%a: i32, %b: i32):
    %s = arith.addi %a, %b : i32
    ism.yield %s : i32
  }
  %rend = ism.scan %cnt axis = 0 : tensor<256xi32> -> tensor<256xi32> {
  ^bb0(%a: i32, %b: i32):
    %s = arith.addi %a, %b : i32
    ism.yield %s : i32
  }
  // e = the number of experts whose tiles end at or before t: t's expert.
  %ts = ism.splat %ti : i32 -> tensor<256xi32>
  %before = arith.cmpi sle, %tend, %ts : tensor<256xi32>
  %one = arith.constant dense<1> : tensor<256xi32>
  %zero = arith.constant dense<0> : tensor<256xi32>
  %ones = arith.select %before, %one, %zero : tensor<256xi1>, tensor<256xi32>
  %e = ism.reduce %ones axis = 0 : tensor<256xi32> -> i32 {
  ^bb0(%a: i32, %b: i32):
    %s = arith.addi %a, %b : i32
    ism.yield %s : i32
  }
  // Expert e's tile start, row start and row end: the one lane of each
  // table whose index is e.
  %idx = ism.range 0 to 256 : tensor<256xi32>
  %es = ism.splat %e : i32 -> tensor<256xi32>
  %mine = arith.cmpi eq, %idx, %es : tensor<256xi32>
  %tstart = arith.subi %tend, %ntiles : tensor<256xi32>
  %rstart = arith.subi %rend, %cnt : tensor<256xi32>
  %tsm = arith.select %mine, %tstart, %zero : tensor<256xi1>, tensor<256xi32>
  %rsm = arith.select %mine, %rstart, %zero : tensor<256xi1>, tensor<256xi32>
  %rem = arith.select %mine, %rend, %zero : tensor<256xi1>, tensor<256xi32>
  %t0 = ism.reduce %tsm axis = 0 : tensor<256xi32> -> i32 {
  ^bb0(%a: i32, %b: i32):
    %s = arith.addi %a, %b : i32
    ism.yield %s : i32
  }
  %r0 = ism.reduce %rsm axis = 0 : tensor<256xi32> -> i32 {
  ^bb0(%a: i32, %b: i32):
    %s = arith.addi %a, %b : i32
    ism.yield %s : i32
  }
  %r1 = ism.reduce %rem axis = 0 : tensor<256xi32> -> i32 {
  ^bb0(%a: i32, %b: i32):
    %s = arith.addi %a, %b : i32
    ism.yield %s : i32
  }
  // A slot past every expert's tiles (e = 256, or an expert past the
  // counts with no rows) gets the empty range [0, 0).
  %c128s = arith.constant 128 : i32
  %k = arith.subi %ti, %t0 : i32
  %koff = arith.muli %k, %c128s : i32
  %row = arith.addi %r0, %koff : i32
  %wrow = arith.muli %e, %n : i32
  %c256 = arith.constant 256 : i32
  %valid = arith.cmpi slt, %e, %c256 : i32
  %c0i = arith.constant 0 : i32
  %rowv = arith.select %valid, %row, %c0i : i32
  %endv = arith.select %valid, %r1, %c0i : i32
  %wrowv = arith.select %valid, %wrow, %c0i : i32
  %rt = ism.splat %rowv : i32 -> tensor<1xi32>
  %et = ism.splat %endv : i32 -> tensor<1xi32>
  %wt = ism.splat %wrowv : i32 -> tensor<1xi32>
  ism.store %rt, %rows[%t] : tensor<1xi32> -> memref<?xi32>
  ism.store %et, %ends[%t] : tensor<1xi32> -> memref<?xi32>
  ism.store %wt, %wrows[%t] : tensor<1xi32> -> memref<?xi32>
  ism.return
}

ism.kernel @grouped(%x: memref<?x?xbf16>, %w: memref<?x?xbf16>,
                    %y: memref<?x?xbf16>, %rows: memref<?xi32>,
                    %ends: memref<?xi32>, %wrows: memref<?xi32>)
    attributes {num_warps = 8 : i32} {
  %t = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bn = arith.constant 128 : index
  %bk = arith.constant 64 : index
  %r = memref.load %rows[%t] : memref<?xi32>
  %end = memref.load %ends[%t] : memref<?xi32>
  %wr = memref.load %wrows[%t] : memref<?xi32>
  %m0 = arith.index_cast %r : i32 to index
  %m1 = arith.index_cast %end : i32 to index
  %w0 = arith.index_cast %wr : i32 to index
  %n0 = arith.muli %pn, %bn : index
  %wn = arith.addi %w0, %n0 : index
  %K = memref.dim %x, %c1 : memref<?x?xbf16>
  %busy = arith.cmpi slt, %m0, %m1 : index
  %kend = arith.select %busy, %K, %c0 : index
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %kend step %bk iter_args(%acc = %zero)
      -> (tensor<128x128xf32>) {
    %a = ism.load %x[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %wt = ism.load %w[%wn, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.trans %wt order = [1, 0] : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x128xbf16>
        -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  // Only this expert's rows (the tile may reach into the next expert's)
  // and the columns of y.
  %N = memref.dim %y, %c1 : memref<?x?xbf16>
  %mrem = arith.subi %m1, %m0 : index
  %nrem = arith.subi %N, %n0 : index
  %mr = arith.index_cast %mrem : index to i32
  %nr = arith.index_cast %nrem : index to i32
  %ri = ism.range 0 to 128 : tensor<128xi32>
  %ci = ism.range 0 to 128 : tensor<128xi32>
  %re = ism.expand_dims %ri axis = 1 : tensor<128xi32> -> tensor<128x1xi32>
  %ce = ism.expand_dims %ci axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  %rb = ism.broadcast %re : tensor<128x1xi32> -> tensor<128x128xi32>
  %cb = ism.broadcast %ce : tensor<1x128xi32> -> tensor<128x128xi32>
  %ms = ism.splat %mr : i32 -> tensor<128x128xi32>
  %ns = ism.splat %nr : i32 -> tensor<128x128xi32>
  %rin = arith.cmpi slt, %rb, %ms : tensor<128x128xi32>
  %cin = arith.cmpi slt, %cb, %ns : tensor<128x128xi32>
  %inside = arith.andi %rin, %cin : tensor<128x128xi1>
  ism.store %out, %y[%m0, %n0] mask %inside : tensor<128x128xbf16> -> memref<?x?xbf16>
  ism.return
}

func.func @main(%x: memref<?x?xbf16>, %w: memref<?x?xbf16>,
                %counts: memref<?xi32>, %y: memref<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %M = memref.dim %x, %c0 : memref<?x?xbf16>
  %K = memref.dim %x, %c1 : memref<?x?xbf16>
  %WR = memref.dim %w, %c0 : memref<?x?xbf16>
  %KW = memref.dim %w, %c1 : memref<?x?xbf16>
  %E = memref.dim %counts, %c0 : memref<?xi32>
  %YM = memref.dim %y, %c0 : memref<?x?xbf16>
  %N = memref.dim %y, %c1 : memref<?x?xbf16>
  %inner = arith.cmpi eq, %K, %KW : index
  ism.assert %inner, "x is {0}x{1} and W is {2}x{3}: both must be K wide"
      (%M, %K, %WR, %KW) : index, index, index, index
  %EN = arith.muli %E, %N : index
  %stacked = arith.cmpi eq, %WR, %EN : index
  ism.assert %stacked, "W has {0} rows; {1} experts of N = {2} (y's columns) need {3}"
      (%WR, %E, %N, %EN) : index, index, index, index
  %ym = arith.cmpi eq, %YM, %M : index
  ism.assert %ym, "y has {0} rows and x {1}" (%YM, %M) : index, index
  %c256 = arith.constant 256 : index
  %experts = arith.cmpi sle, %E, %c256 : index
  ism.assert %experts, "{0} experts: this grouped GEMM takes up to 256" (%E)
      : index
  %bm = arith.constant 128 : index
  %mt = arith.ceildivui %M, %bm : index
  %T = arith.addi %mt, %E : index
  %rows = memref.alloc(%T) : memref<?xi32>
  %ends = memref.alloc(%T) : memref<?xi32>
  %wrows = memref.alloc(%T) : memref<?xi32>
  %n = arith.index_cast %N : index to i32
  ism.launch @plan grid(%T) (%counts, %rows, %ends, %wrows, %n)
      : (memref<?xi32>, memref<?xi32>, memref<?xi32>, memref<?xi32>, i32)
  %bn = arith.constant 128 : index
  %gn = arith.ceildivui %N, %bn : index
  ism.launch @grouped grid(%T, %gn) (%x, %w, %y, %rows, %ends, %wrows)
      : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>, memref<?xi32>,
         memref<?xi32>, memref<?xi32>)
  memref.dealloc %wrows : memref<?xi32>
  memref.dealloc %ends : memref<?xi32>
  memref.dealloc %rows : memref<?xi32>
  return
}
