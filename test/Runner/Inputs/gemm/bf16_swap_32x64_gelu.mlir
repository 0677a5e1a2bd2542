ism.kernel @gemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) attributes {num_warps = 4 : i32, group_size = 8 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 32 : index
  %bn = arith.constant 64 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<32x64xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<32x64xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<32x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x64xbf16>
    %d = ism.dot %a, %b, %acc : tensor<32x64xbf16> * tensor<64x64xbf16> -> tensor<32x64xf32>
    scf.yield %d : tensor<32x64xf32>
  }
  %h = arith.constant dense<0.5> : tensor<32x64xf32>
  %one = arith.constant dense<1.0> : tensor<32x64xf32>
  %two = arith.constant dense<2.0> : tensor<32x64xf32>
  %s = arith.constant dense<0.7978845608> : tensor<32x64xf32>
  %k3 = arith.constant dense<0.044715> : tensor<32x64xf32>
  %x2 = arith.mulf %acc, %acc : tensor<32x64xf32>
  %x3 = arith.mulf %x2, %acc : tensor<32x64xf32>
  %t1 = arith.mulf %k3, %x3 : tensor<32x64xf32>
  %t2 = arith.addf %acc, %t1 : tensor<32x64xf32>
  %y = arith.mulf %s, %t2 : tensor<32x64xf32>
  %y2 = arith.mulf %two, %y : tensor<32x64xf32>
  %e = math.exp %y2 : tensor<32x64xf32>
  %e1 = arith.addf %e, %one : tensor<32x64xf32>
  %q = arith.divf %two, %e1 : tensor<32x64xf32>
  %th = arith.subf %one, %q : tensor<32x64xf32>
  %u = arith.addf %one, %th : tensor<32x64xf32>
  %hx = arith.mulf %h, %acc : tensor<32x64xf32>
  %g = arith.mulf %hx, %u : tensor<32x64xf32>
  %out = arith.truncf %g : tensor<32x64xf32> to tensor<32x64xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<32x64xbf16> -> memref<?x?xbf16>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 32 : index
  %bn = arith.constant 64 : index
  %M = memref.dim %A, %c0 : memref<?x?xbf16>
  %N = memref.dim %B, %c1 : memref<?x?xbf16>
  %gm = arith.ceildivui %M, %bm : index
  %gn = arith.ceildivui %N, %bn : index
  ism.launch @gemm grid(%gm, %gn) (%A, %B, %C) : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
  return
}
