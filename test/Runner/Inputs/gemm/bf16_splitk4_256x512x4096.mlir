ism.kernel @gemm_split(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %W: memref<?x?xf32>)
    attributes {num_warps = 8 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %z = ism.program_id z : index
  %splits = ism.num_programs z : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 256 : index
  %bk = arith.constant 64 : index
  %M = memref.dim %A, %c0 : memref<?x?xbf16>
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %steps = arith.ceildivui %K, %bk : index
  %per = arith.ceildivui %steps, %splits : index
  %chunk = arith.muli %per, %bk : index
  %lo = arith.muli %z, %chunk : index
  %hi0 = arith.addi %lo, %chunk : index
  %hi = arith.minui %hi0, %K : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %lo to %hi step %bk iter_args(%acc = %zero) -> (tensor<128x256xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x256xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x256xbf16> -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %zm = arith.muli %z, %M : index
  %row = arith.addi %zm, %m0 : index
  ism.store %acc, %W[%row, %n0] : tensor<128x256xf32> -> memref<?x?xf32>
  ism.return
}

ism.kernel @split_sum(%W: memref<?x?xf32>, %C: memref<?x?xbf16>, %S: i32)
    attributes {num_warps = 4 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = arith.constant 64 : index
  %M = memref.dim %C, %c0 : memref<?x?xbf16>
  %splits = arith.index_cast %S : i32 to index
  %m0 = arith.muli %pm, %b : index
  %n0 = arith.muli %pn, %b : index
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %sum = scf.for %s = %c0 to %splits step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
    %sm = arith.muli %s, %M : index
    %row = arith.addi %sm, %m0 : index
    %p = ism.load %W[%row, %n0] : memref<?x?xf32> -> tensor<64x64xf32>
    %r = arith.addf %acc, %p : tensor<64x64xf32>
    scf.yield %r : tensor<64x64xf32>
  }
  %out = arith.truncf %sum : tensor<64x64xf32> to tensor<64x64xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<64x64xbf16> -> memref<?x?xbf16>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>,
                %W: memref<?x?xf32>, %S: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 256 : index
  %b = arith.constant 64 : index
  %M = memref.dim %A, %c0 : memref<?x?xbf16>
  %N = memref.dim %B, %c1 : memref<?x?xbf16>
  %gs = arith.index_cast %S : i32 to index
  %gm = arith.ceildivui %M, %bm : index
  %gn = arith.ceildivui %N, %bn : index
  ism.launch @gemm_split grid(%gm, %gn, %gs) (%A, %B, %W)
      : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xf32>)
  %hm = arith.ceildivui %M, %b : index
  %hn = arith.ceildivui %N, %b : index
  ism.launch @split_sum grid(%hm, %hn) (%W, %C, %S)
      : (memref<?x?xf32>, memref<?x?xbf16>, i32)
  return
}
