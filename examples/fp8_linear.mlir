// An FP8 linear layer, y = x W^T, as FP8 inference runs one: the
// activations x (bf16, M x K) are quantized per row (per token) to e4m3 with
// a scale each (the @quantize kernel of examples/fp8_quantize.mlir), and
// multiplied on wgmma by weights W already in e4m3 (N x K, PyTorch's layout)
// with a scale per output channel (per row of W); the f32 accumulator is
// scaled by both, y[m, n] = sx[m] * sw[n] * (q W^T)[m, n], and rounded to
// bf16 (the @gemm kernel is bench/fp8_gemm.py's program(bn=256,
// scales="row")). The host function holds the quantized activations and
// their scales in temporaries. K is at most 4096 (one quantization tile a
// row); with K a multiple of 16 the GEMM's producer loads by TMA, else it
// copies byte by byte (correct, slower).

ism.kernel @quantize(%x: memref<?x?xbf16>, %q: memref<?x?xf8E4M3FN>,
                     %s: memref<?xf32>) attributes {num_warps = 4 : i32} {
  %row = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %t = ism.load %x[%row, %c0] : memref<?x?xbf16> -> tensor<1x4096xbf16>
  %t1 = ism.reshape %t : tensor<1x4096xbf16> -> tensor<4096xbf16>
  %v = arith.extf %t1 : tensor<4096xbf16> to tensor<4096xf32>
  %a = math.absf %v : tensor<4096xf32>
  %amax = ism.reduce %a axis = 0 : tensor<4096xf32> -> f32 {
  ^bb0(%l: f32, %r: f32):
    %m = arith.maximumf %l, %r : f32
    ism.yield %m : f32
  }
  %tiny = arith.constant 1.0e-12 : f32
  %amax1 = arith.maximumf %amax, %tiny : f32
  %fmax = arith.constant 448.0 : f32
  %scale = arith.divf %amax1, %fmax : f32
  %inv = arith.divf %fmax, %amax1 : f32
  %invs = ism.splat %inv : f32 -> tensor<4096xf32>
  %y = arith.mulf %v, %invs : tensor<4096xf32>
  %q8 = arith.truncf %y : tensor<4096xf32> to tensor<4096xf8E4M3FN>
  %qr = ism.reshape %q8 : tensor<4096xf8E4M3FN> -> tensor<1x4096xf8E4M3FN>
  ism.store %qr, %q[%row, %c0] : tensor<1x4096xf8E4M3FN> -> memref<?x?xf8E4M3FN>
  %st = ism.splat %scale : f32 -> tensor<1xf32>
  ism.store %st, %s[%row] : tensor<1xf32> -> memref<?xf32>
  ism.return
}

ism.kernel @gemm(%A: memref<?x?xf8E4M3FN>, %B: memref<?x?xf8E4M3FN>, %C: memref<?x?xbf16>, %SA: memref<?xf32>,
                 %SB: memref<?xf32>) attributes {num_warps = 8 : i32, group_size = 8 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 256 : index
  %bk = arith.constant 128 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xf8E4M3FN>
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero) -> (tensor<128x256xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %w = ism.load %B[%n0, %k] : memref<?x?xf8E4M3FN> -> tensor<256x128xf8E4M3FN>
    %b = ism.trans %w order = [1, 0] : tensor<256x128xf8E4M3FN> -> tensor<128x256xf8E4M3FN>
    %d = ism.dot %a, %b, %acc : tensor<128x128xf8E4M3FN> * tensor<128x256xf8E4M3FN> -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  // The row-wise scales: A's rows' down the tile, B's rows' across.
  %sa = ism.load %SA[%m0] : memref<?xf32> -> tensor<128xf32>
  %sb = ism.load %SB[%n0] : memref<?xf32> -> tensor<256xf32>
  %sa2 = ism.expand_dims %sa axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %sb2 = ism.expand_dims %sb axis = 0 : tensor<256xf32> -> tensor<1x256xf32>
  %sac = ism.broadcast %sa2 : tensor<128x1xf32> -> tensor<128x256xf32>
  %sbc = ism.broadcast %sb2 : tensor<1x256xf32> -> tensor<128x256xf32>
  %r0 = arith.mulf %acc, %sac : tensor<128x256xf32>
  %r = arith.mulf %r0, %sbc : tensor<128x256xf32>
  %o = arith.truncf %r : tensor<128x256xf32> to tensor<128x256xbf16>
  ism.store %o, %C[%m0, %n0] : tensor<128x256xbf16> -> memref<?x?xbf16>
  ism.return
}

func.func @main(%x: memref<?x?xbf16>, %w: memref<?x?xf8E4M3FN>,
                %sw: memref<?xf32>, %y: memref<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %M = memref.dim %x, %c0 : memref<?x?xbf16>
  %K = memref.dim %x, %c1 : memref<?x?xbf16>
  %N = memref.dim %w, %c0 : memref<?x?xf8E4M3FN>
  %KW = memref.dim %w, %c1 : memref<?x?xf8E4M3FN>
  %SN = memref.dim %sw, %c0 : memref<?xf32>
  %YM = memref.dim %y, %c0 : memref<?x?xbf16>
  %YN = memref.dim %y, %c1 : memref<?x?xbf16>
  %inner = arith.cmpi eq, %K, %KW : index
  ism.assert %inner, "x is {0}x{1} and W is {2}x{3}: both must be K wide (W is N x K)"
      (%M, %K, %N, %KW) : index, index, index, index
  %scales = arith.cmpi eq, %SN, %N : index
  ism.assert %scales, "sw holds {0} scales for {1} rows of W" (%SN, %N)
      : index, index
  %ym = arith.cmpi eq, %YM, %M : index
  %yn = arith.cmpi eq, %YN, %N : index
  %yshape = arith.andi %ym, %yn : i1
  ism.assert %yshape, "y is {0}x{1} but x W^T is {2}x{3}" (%YM, %YN, %M, %N)
      : index, index, index, index
  %tile = arith.constant 4096 : index
  %fits = arith.cmpi sle, %K, %tile : index
  ism.assert %fits, "K = {0}: this layer quantizes rows of up to 4096" (%K)
      : index
  %q = memref.alloc(%M, %K) : memref<?x?xf8E4M3FN>
  %sx = memref.alloc(%M) : memref<?xf32>
  ism.launch @quantize grid(%M) (%x, %q, %sx)
      : (memref<?x?xbf16>, memref<?x?xf8E4M3FN>, memref<?xf32>)
  %bm = arith.constant 128 : index
  %bn = arith.constant 256 : index
  %gm = arith.ceildivui %M, %bm : index
  %gn = arith.ceildivui %N, %bn : index
  ism.launch @gemm grid(%gm, %gn) (%q, %w, %y, %sx, %sw)
      : (memref<?x?xf8E4M3FN>, memref<?x?xf8E4M3FN>, memref<?x?xbf16>,
         memref<?xf32>, memref<?xf32>)
  memref.dealloc %sx : memref<?xf32>
  memref.dealloc %q : memref<?x?xf8E4M3FN>
  return
}
