ism.kernel @bgemm(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>,
                  %Mi: i32, %Ki: i32) attributes {num_warps = 8 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %z = ism.program_id z : index
  %M = arith.index_cast %Mi : i32 to index
  %K = arith.index_cast %Ki : i32 to index
  %c0 = arith.constant 0 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 256 : index
  %bk = arith.constant 64 : index
  %zm = arith.muli %z, %M : index
  %zk = arith.muli %z, %K : index
  %m = arith.muli %pm, %bm : index
  %m0 = arith.addi %zm, %m : index
  %n0 = arith.muli %pn, %bn : index
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<128x256xf32>) {
    %kb = arith.addi %zk, %k : index
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%kb, %n0] : memref<?x?xbf16> -> tensor<64x256xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x256xbf16> -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %out = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<128x256xbf16> -> memref<?x?xbf16>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>,
                %Mi: i32, %Ki: i32, %batch: i32) {
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 256 : index
  %M = arith.index_cast %Mi : i32 to index
  %N = memref.dim %B, %c1 : memref<?x?xbf16>
  %gz = arith.index_cast %batch : i32 to index
  %gm = arith.ceildivui %M, %bm : index
  %gn = arith.ceildivui %N, %bn : index
  ism.launch @bgemm grid(%gm, %gn, %gz) (%A, %B, %C, %Mi, %Ki)
      : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>, i32, i32)
  return
}
