// Greedy sampling for decode: the index of the largest logit, on the GPU, so
// that a decode step's next token never goes through the host.
//
//   token[0] = argmax(logits)   (the first index of the largest value)
//
// The logits are those of bench/decode_step.py's LM head: V values laid
// out as V/64 rows of 64 (bf16). Two kernels, as an ordered region
// (docs/coschedule.md): @argmax_blocks reduces 64 rows (4096 logits) a
// program to its largest value and that value's index; @argmax_final, one
// program, reduces those (at most 64 blocks: V up to 262144) to the token.
// Ties go to the smaller index in both, so the token is the first index of
// the maximum, as torch.argmax and numpy.argmax give it. The logits must
// be finite (a NaN is not ordered against the others).

// pm[p], pi[p]: the largest of logits rows 64 p .. 64 p + 63 and its index
// (row * 64 + column); rows past the end read -inf.
ism.kernel @argmax_blocks(%logits: memref<?x?xbf16>, %pm: memref<?xf32>,
                          %pi: memref<?xi32>)
    attributes {num_warps = 8 : i32} {
  %pid = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %r0 = arith.muli %pid, %c64 : index
  %t = ism.load %logits[%r0, %c0] {padding = 0xFF80 : bf16}
      : memref<?x?xbf16> -> tensor<64x64xbf16>
  %t32 = arith.extf %t : tensor<64x64xbf16> to tensor<64x64xf32>
  %v = ism.reshape %t32 : tensor<64x64xf32> -> tensor<4096xf32>
  %iota = ism.range 0 to 4096 : tensor<4096xi32>
  %r032 = arith.index_cast %r0 : index to i32
  %c64i = arith.constant 64 : i32
  %first = arith.muli %r032, %c64i : i32
  %firsts = ism.splat %first : i32 -> tensor<4096xi32>
  %idx = arith.addi %iota, %firsts : tensor<4096xi32>
  %m, %i = ism.reduce %v, %idx axis = 0
      : tensor<4096xf32>, tensor<4096xi32> -> f32, i32 {
  ^bb0(%v0: f32, %i0: i32, %v1: f32, %i1: i32):
    %gt = arith.cmpf ogt, %v1, %v0 : f32
    %eq = arith.cmpf oeq, %v1, %v0 : f32
    %before = arith.cmpi slt, %i1, %i0 : i32
    %tie = arith.andi %eq, %before : i1
    %take = arith.ori %gt, %tie : i1
    %vm = arith.select %take, %v1, %v0 : f32
    %im = arith.select %take, %i1, %i0 : i32
    ism.yield %vm, %im : f32, i32
  }
  %mt = ism.splat %m : f32 -> tensor<1xf32>
  %it = ism.splat %i : i32 -> tensor<1xi32>
  ism.store %mt, %pm[%pid] : tensor<1xf32> -> memref<?xf32>
  ism.store %it, %pi[%pid] : tensor<1xi32> -> memref<?xi32>
  ism.return
}

// token[0]: the index of the largest of the blocks' maxima (pm and pi hold
// one entry a block, at most 64; entries past the end read -inf).
ism.kernel @argmax_final(%pm: memref<?xf32>, %pi: memref<?xi32>,
                         %token: memref<?xi32>)
    attributes {num_warps = 1 : i32} {
  %c0 = arith.constant 0 : index
  %v = ism.load %pm[%c0] {padding = 0xFF800000 : f32}
      : memref<?xf32> -> tensor<64xf32>
  %idx = ism.load %pi[%c0] : memref<?xi32> -> tensor<64xi32>
  %m, %i = ism.reduce %v, %idx axis = 0
      : tensor<64xf32>, tensor<64xi32> -> f32, i32 {
  ^bb0(%v0: f32, %i0: i32, %v1: f32, %i1: i32):
    %gt = arith.cmpf ogt, %v1, %v0 : f32
    %eq = arith.cmpf oeq, %v1, %v0 : f32
    %before = arith.cmpi slt, %i1, %i0 : i32
    %tie = arith.andi %eq, %before : i1
    %take = arith.ori %gt, %tie : i1
    %vm = arith.select %take, %v1, %v0 : f32
    %im = arith.select %take, %i1, %i0 : i32
    ism.yield %vm, %im : f32, i32
  }
  %it = ism.splat %i : i32 -> tensor<1xi32>
  ism.store %it, %token[%c0] : tensor<1xi32> -> memref<?xi32>
  ism.return
}

// logits: V/64 x 64; pm and pi: one entry per 64 rows (ceil(V / 4096),
// at most 64); token: 1.
func.func @main(%logits: memref<?x?xbf16>, %pm: memref<?xf32>,
                %pi: memref<?xi32>, %token: memref<?xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %rows = memref.dim %logits, %c0 : memref<?x?xbf16>
  %cols = memref.dim %logits, %c1 : memref<?x?xbf16>
  %blocks = arith.ceildivui %rows, %c64 : index
  %npm = memref.dim %pm, %c0 : memref<?xf32>
  %npi = memref.dim %pi, %c0 : memref<?xi32>
  %nt = memref.dim %token, %c0 : memref<?xi32>
  %cols_ok = arith.cmpi eq, %cols, %c64 : index
  %some = arith.cmpi sge, %blocks, %c1 : index
  %few = arith.cmpi sle, %blocks, %c64 : index
  %pm_ok = arith.cmpi eq, %npm, %blocks : index
  %pi_ok = arith.cmpi eq, %npi, %blocks : index
  %t_ok = arith.cmpi eq, %nt, %c1 : index
  %a = arith.andi %cols_ok, %some : i1
  %b = arith.andi %a, %few : i1
  %c = arith.andi %b, %pm_ok : i1
  %d = arith.andi %c, %pi_ok : i1
  %ok = arith.andi %d, %t_ok : i1
  ism.assert %ok, "logits are {0}x{1}, pm has {2} and pi {3} entries, token {4}: the logits must be V/64 x 64 with 1 to 4096 rows, pm and pi one entry per 64 rows ({5}), token 1"
      (%rows, %cols, %npm, %npi, %nt, %blocks)
      : index, index, index, index, index, index
  ism.coschedule ordered {
    ism.launch @argmax_blocks grid(%blocks) (%logits, %pm, %pi)
        : (memref<?x?xbf16>, memref<?xf32>, memref<?xi32>)
    ism.launch @argmax_final grid(%c1) (%pm, %pi, %token)
        : (memref<?xf32>, memref<?xi32>, memref<?xi32>)
  }
  return
}
