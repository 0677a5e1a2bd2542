ism.kernel @gemv_split(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %W: memref<?x?xf32>)
    attributes {num_warps = 8 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %z = ism.program_id z : index
  %gm = ism.num_programs x : index
  %splits = ism.num_programs z : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bn = arith.constant 256 : index
  %bk = arith.constant 64 : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %steps = arith.ceildivui %K, %bk : index
  %per = arith.ceildivui %steps, %splits : index
  %chunk = arith.muli %per, %bk : index
  %lo = arith.muli %z, %chunk : index
  %hi0 = arith.addi %lo, %chunk : index
  %hi = arith.minui %hi0, %K : index
  %n0 = arith.muli %pn, %bn : index
  %zero = arith.constant dense<0.0> : tensor<64x256xf32>
  %acc = scf.for %k = %lo to %hi step %bk iter_args(%acc = %zero) -> (tensor<64x256xf32>) {
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x256xbf16>
    %a = ism.load %A[%pm, %k] : memref<?x?xbf16> -> tensor<1x64xbf16>
    %ac = ism.reshape %a : tensor<1x64xbf16> -> tensor<64x1xbf16>
    %ab = ism.broadcast %ac : tensor<64x1xbf16> -> tensor<64x256xbf16>
    %af = arith.extf %ab : tensor<64x256xbf16> to tensor<64x256xf32>
    %bf = arith.extf %b : tensor<64x256xbf16> to tensor<64x256xf32>
    %p = arith.mulf %af, %bf : tensor<64x256xf32>
    %s = arith.addf %acc, %p : tensor<64x256xf32>
    scf.yield %s : tensor<64x256xf32>
  }
  %sum = ism.reduce %acc axis = 0 : tensor<64x256xf32> -> tensor<256xf32> {
  ^bb0(%x: f32, %y: f32):
    %r = arith.addf %x, %y : f32
    ism.yield %r : f32
  }
  %row = ism.reshape %sum : tensor<256xf32> -> tensor<1x256xf32>
  %zm = arith.muli %z, %gm : index
  %wrow = arith.addi %zm, %pm : index
  ism.store %row, %W[%wrow, %n0] : tensor<1x256xf32> -> memref<?x?xf32>
  ism.return
}

ism.kernel @split_sum(%W: memref<?x?xf32>, %C: memref<?x?xbf16>, %band: index, %splits: index)
    attributes {num_warps = 4 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %br = arith.constant 32 : index
  %bc = arith.constant 128 : index
  %m0 = arith.muli %pm, %br : index
  %n0 = arith.muli %pn, %bc : index
  %zero = arith.constant dense<0.0> : tensor<32x128xf32>
  %sum = scf.for %s = %c0 to %splits step %c1 iter_args(%acc = %zero) -> (tensor<32x128xf32>) {
    %sm = arith.muli %s, %band : index
    %row = arith.addi %sm, %m0 : index
    %p = ism.load %W[%row, %n0] : memref<?x?xf32> -> tensor<32x128xf32>
    %r = arith.addf %acc, %p : tensor<32x128xf32>
    scf.yield %r : tensor<32x128xf32>
  }
  %out = arith.truncf %sum : tensor<32x128xf32> to tensor<32x128xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<32x128xbf16> -> memref<?x?xbf16>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bn = arith.constant 256 : index
  %gs = arith.constant 7 : index
  %M = memref.dim %A, %c0 : memref<?x?xbf16>
  %N = memref.dim %B, %c1 : memref<?x?xbf16>
  %gn = arith.ceildivui %N, %bn : index
  %rows = arith.muli %M, %gs : index
  %W = memref.alloc(%rows, %N) : memref<?x?xf32>
  ism.launch @gemv_split grid(%M, %gn, %gs) (%A, %B, %W)
      : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xf32>)
  %br = arith.constant 32 : index
  %bc = arith.constant 128 : index
  %hm = arith.ceildivui %M, %br : index
  %hn = arith.ceildivui %N, %bc : index
  ism.launch @split_sum grid(%hm, %hn) (%W, %C, %M, %gs)
      : (memref<?x?xf32>, memref<?x?xbf16>, index, index)
  memref.dealloc %W : memref<?x?xf32>
  return
}
