ism.kernel @gemm_split(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %W: memref<?x?xf32>,
                      %C: memref<?x?xbf16>, %Count: memref<?xi32>)
    attributes {num_warps = 4 : i32, group_size = 8 : i32, num_stages = 8 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %z = ism.program_id z : index
  %gm = ism.num_programs x : index
  %splits = ism.num_programs z : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 16 : index
  %bn = arith.constant 128 : index
  %bk = arith.constant 64 : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %steps = arith.ceildivui %K, %bk : index
  %per = arith.ceildivui %steps, %splits : index
  %chunk = arith.muli %per, %bk : index
  %lo = arith.muli %z, %chunk : index
  %hi0 = arith.addi %lo, %chunk : index
  %hi = arith.minui %hi0, %K : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %zero = arith.constant dense<0.0> : tensor<16x128xf32>
  %acc = scf.for %k = %lo to %hi step %bk iter_args(%acc = %zero) -> (tensor<16x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<16x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<16x64xbf16> * tensor<64x128xbf16> -> tensor<16x128xf32>
    scf.yield %d : tensor<16x128xf32>
  }
  %band = arith.muli %gm, %bm : index
  %zm = arith.muli %z, %band : index
  %row = arith.addi %zm, %m0 : index
  ism.store %acc, %W[%row, %n0] : tensor<16x128xf32> -> memref<?x?xf32>

  // A ticket from the tile's counter (acq_rel: this program's partial is
  // stored before it; the last program reads every partial after it).
  %gn = ism.num_programs y : index
  %tm = arith.muli %pm, %gn : index
  %tile = arith.addi %tm, %pn : index
  %tile_i = arith.index_cast %tile : index to i32
  %slot = ism.splat %tile_i : i32 -> tensor<1xi32>
  %one = arith.constant dense<1> : tensor<1xi32>
  %t1 = ism.atomic_rmw add %Count[%slot], %one sem = acq_rel
      : memref<?xi32>[tensor<1xi32>], tensor<1xi32>
  %ticket = ism.reduce %t1 axis = 0 : tensor<1xi32> -> i32 {
  ^bb0(%x: i32, %y: i32):
    %s = arith.addi %x, %y : i32
    ism.yield %s : i32
  }
  %splits_i = arith.index_cast %splits : index to i32
  %c1_i = arith.constant 1 : i32
  %last = arith.subi %splits_i, %c1_i : i32
  %is_last = arith.cmpi eq, %ticket, %last : i32
  scf.if %is_last {
    %sum = scf.for %s = %c0 to %splits step %c1 iter_args(%sa = %zero) -> (tensor<16x128xf32>) {
      %sm = arith.muli %s, %band : index
      %srow = arith.addi %sm, %m0 : index
      %p = ism.load %W[%srow, %n0] : memref<?x?xf32> -> tensor<16x128xf32>
      %r = arith.addf %sa, %p : tensor<16x128xf32>
      scf.yield %r : tensor<16x128xf32>
    }
    %out = arith.truncf %sum : tensor<16x128xf32> to tensor<16x128xbf16>
    ism.store %out, %C[%m0, %n0] : tensor<16x128xbf16> -> memref<?x?xbf16>
    // Every split of the tile has its ticket: reset the counter.
    %zero_t = arith.constant dense<0> : tensor<1xi32>
    ism.scatter %zero_t, %Count[%slot] : tensor<1xi32> -> memref<?xi32>[tensor<1xi32>]
  }
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 16 : index
  %bn = arith.constant 128 : index
  %gs = arith.constant 3 : index
  %M = memref.dim %A, %c0 : memref<?x?xbf16>
  %N = memref.dim %B, %c1 : memref<?x?xbf16>
  %gm = arith.ceildivui %M, %bm : index
  %gn = arith.ceildivui %N, %bn : index
  %band = arith.muli %gm, %bm : index
  %rows = arith.muli %band, %gs : index
  %W = memref.alloc(%rows, %N) : memref<?x?xf32>
  %tiles = arith.muli %gm, %gn : index
  %Count = memref.alloc(%tiles) {ism.zeroed} : memref<?xi32>
  ism.launch @gemm_split grid(%gm, %gn, %gs) (%A, %B, %W, %C, %Count)
      : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xf32>, memref<?x?xbf16>,
         memref<?xi32>)
  memref.dealloc %W : memref<?x?xf32>
  memref.dealloc %Count : memref<?xi32>
  return
}
