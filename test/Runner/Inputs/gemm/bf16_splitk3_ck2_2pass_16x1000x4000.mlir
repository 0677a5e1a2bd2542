ism.kernel @gemm_split(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %W: memref<?x?xf32>)
    attributes {num_warps = 4 : i32, group_size = 8 : i32, num_stages = 8 : i32, cluster_k = 2 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %z = ism.program_id z : index
  %gm = ism.num_programs x : index
  %splits = ism.num_programs z : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 64 : index
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
  %zero = arith.constant dense<0.0> : tensor<64x128xf32>
  %acc = scf.for %k = %lo to %hi step %bk iter_args(%acc = %zero) -> (tensor<64x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<64x64xbf16> * tensor<64x128xbf16> -> tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  %band = arith.muli %gm, %bm : index
  %zm = arith.muli %z, %band : index
  %row = arith.addi %zm, %m0 : index
  ism.store %acc, %W[%row, %n0] : tensor<64x128xf32> -> memref<?x?xf32>
  ism.return
}

ism.kernel @split_sum(%W: memref<?x?xf32>, %C: memref<?x?xbf16>, %band: index)
    attributes {num_warps = 4 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %br = arith.constant 4 : index
  %bc = arith.constant 128 : index
  %m0 = arith.muli %pm, %br : index
  %n0 = arith.muli %pn, %bc : index
  %ks0 = arith.constant 0 : index
  %off0 = arith.muli %ks0, %band : index
  %row0 = arith.addi %off0, %m0 : index
  %part0 = ism.load %W[%row0, %n0] : memref<?x?xf32> -> tensor<4x128xf32>
  %ks1 = arith.constant 1 : index
  %off1 = arith.muli %ks1, %band : index
  %row1 = arith.addi %off1, %m0 : index
  %part1 = ism.load %W[%row1, %n0] : memref<?x?xf32> -> tensor<4x128xf32>
  %ks2 = arith.constant 2 : index
  %off2 = arith.muli %ks2, %band : index
  %row2 = arith.addi %off2, %m0 : index
  %part2 = ism.load %W[%row2, %n0] : memref<?x?xf32> -> tensor<4x128xf32>
  %acc1 = arith.addf %part0, %part1 : tensor<4x128xf32>
  %sum = arith.addf %acc1, %part2 : tensor<4x128xf32>
  %out = arith.truncf %sum : tensor<4x128xf32> to tensor<4x128xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<4x128xbf16> -> memref<?x?xbf16>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 64 : index
  %bn = arith.constant 128 : index
  %gs = arith.constant 3 : index
  %M = memref.dim %A, %c0 : memref<?x?xbf16>
  %N = memref.dim %B, %c1 : memref<?x?xbf16>
  %gm = arith.ceildivui %M, %bm : index
  %gn = arith.ceildivui %N, %bn : index
  %band = arith.muli %gm, %bm : index
  %rows = arith.muli %band, %gs : index
  %W = memref.alloc(%rows, %N) : memref<?x?xf32>
  %br = arith.constant 4 : index
  %bc = arith.constant 128 : index
  ism.launch @gemm_split grid(%gm, %gn, %gs) (%A, %B, %W)
      : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xf32>)
  %hm = arith.ceildivui %M, %br : index
  %hn = arith.ceildivui %N, %bc : index
  ism.launch @split_sum grid(%hm, %hn) (%W, %C, %band)
      : (memref<?x?xf32>, memref<?x?xbf16>, index)
  memref.dealloc %W : memref<?x?xf32>
  return
}
