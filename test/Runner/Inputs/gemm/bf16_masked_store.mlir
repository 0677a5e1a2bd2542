ism.kernel @gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32, group_size = 8 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 128 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<128x128xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  %Mi = memref.dim %C, %c0 : memref<?x?xbf16>
  %Ni = memref.dim %C, %c1 : memref<?x?xbf16>
  %mrem = arith.subi %Mi, %m0 : index
  %nrem = arith.subi %Ni, %n0 : index
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
  ism.store %out, %C[%m0, %n0] mask %inside : tensor<128x128xbf16> -> memref<?x?xbf16>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 128 : index
  %M = memref.dim %A, %c0 : memref<?x?xbf16>
  %N = memref.dim %B, %c1 : memref<?x?xbf16>
  %gm = arith.ceildivui %M, %bm : index
  %gn = arith.ceildivui %N, %bn : index
  ism.launch @gemm grid(%gm, %gn) (%A, %B, %C) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
  return
}
