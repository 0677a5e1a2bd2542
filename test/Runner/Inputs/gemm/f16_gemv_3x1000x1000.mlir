ism.kernel @gemv(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf16>)
    attributes {num_warps = 8 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %z = ism.program_id z : index
  %gm = ism.num_programs x : index
  %splits = ism.num_programs z : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bn = arith.constant 512 : index
  %bk = arith.constant 16 : index
  %K = memref.dim %A, %c1 : memref<?x?xf16>
  %steps = arith.ceildivui %K, %bk : index
  %per = arith.ceildivui %steps, %splits : index
  %chunk = arith.muli %per, %bk : index
  %lo = arith.muli %z, %chunk : index
  %hi0 = arith.addi %lo, %chunk : index
  %hi = arith.minui %hi0, %K : index
  %n0 = arith.muli %pn, %bn : index
  %zero = arith.constant dense<0.0> : tensor<16x512xf32>
  %acc = scf.for %k = %lo to %hi step %bk iter_args(%acc = %zero) -> (tensor<16x512xf32>) {
    %b = ism.load %B[%k, %n0] : memref<?x?xf16> -> tensor<16x512xf16>
    %a = ism.load %A[%pm, %k] : memref<?x?xf16> -> tensor<1x16xf16>
    %ac = ism.reshape %a : tensor<1x16xf16> -> tensor<16x1xf16>
    %ab = ism.broadcast %ac : tensor<16x1xf16> -> tensor<16x512xf16>
    %af = arith.extf %ab : tensor<16x512xf16> to tensor<16x512xf32>
    %bf = arith.extf %b : tensor<16x512xf16> to tensor<16x512xf32>
    %p = arith.mulf %af, %bf : tensor<16x512xf32>
    %s = arith.addf %acc, %p : tensor<16x512xf32>
    scf.yield %s : tensor<16x512xf32>
  }
  %sum = ism.reduce %acc axis = 0 : tensor<16x512xf32> -> tensor<512xf32> {
  ^bb0(%x: f32, %y: f32):
    %r = arith.addf %x, %y : f32
    ism.yield %r : f32
  }
  %row = ism.reshape %sum : tensor<512xf32> -> tensor<1x512xf32>
  %out = arith.truncf %row : tensor<1x512xf32> to tensor<1x512xf16>
  ism.store %out, %C[%pm, %n0] : tensor<1x512xf16> -> memref<?x?xf16>
  ism.return
}

func.func @main(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %C: memref<?x?xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bn = arith.constant 512 : index
  %gs = arith.constant 1 : index
  %M = memref.dim %A, %c0 : memref<?x?xf16>
  %N = memref.dim %B, %c1 : memref<?x?xf16>
  %gn = arith.ceildivui %N, %bn : index
  ism.launch @gemv grid(%M, %gn, %gs) (%A, %B, %C)
      : (memref<?x?xf16>, memref<?x?xf16>, memref<?x?xf16>)
  return
}
