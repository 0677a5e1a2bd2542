// Per-row FP8 quantization, as FP8 GEMMs take their activations: each row
// of x (bf16) is scaled so that its largest magnitude becomes e4m3's
// largest finite value, 448, and rounded to f8E4M3FN (round to nearest
// even, saturating); s[r] = amax / 448 is the row's scale (x ~ q * s). One
// program per row of up to 4096 columns; columns past the end of the row
// read 0 and are not stored. A row of zeros gets the scale of a tiny amax.

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

func.func @main(%x: memref<?x?xbf16>, %q: memref<?x?xf8E4M3FN>,
                %s: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %x, %c0 : memref<?x?xbf16>
  %cols = memref.dim %x, %c1 : memref<?x?xbf16>
  %qrows = memref.dim %q, %c0 : memref<?x?xf8E4M3FN>
  %qcols = memref.dim %q, %c1 : memref<?x?xf8E4M3FN>
  %srows = memref.dim %s, %c0 : memref<?xf32>
  %same_r = arith.cmpi eq, %qrows, %rows : index
  %same_c = arith.cmpi eq, %qcols, %cols : index
  %same = arith.andi %same_r, %same_c : i1
  ism.assert %same, "x is {0}x{1} and q is {2}x{3}: they must have the same shape"
      (%rows, %cols, %qrows, %qcols) : index, index, index, index
  %one_scale = arith.cmpi eq, %srows, %rows : index
  ism.assert %one_scale, "s holds {0} scales for {1} rows" (%srows, %rows)
      : index, index
  %tile = arith.constant 4096 : index
  %fits = arith.cmpi sle, %cols, %tile : index
  ism.assert %fits, "rows of {0} columns: this quantization takes rows of up to 4096"
      (%cols) : index
  ism.launch @quantize grid(%rows) (%x, %q, %s)
      : (memref<?x?xbf16>, memref<?x?xf8E4M3FN>, memref<?xf32>)
  return
}
