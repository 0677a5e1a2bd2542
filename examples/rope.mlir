// Rotary position embedding (RoPE) forward, rotate-half form, in bf16:
//   out[t, h, :64] = x1 * cos[t] - x2 * sin[t]
//   out[t, h, 64:] = x2 * cos[t] + x1 * sin[t]
// where x1 = x[t, h, :64] and x2 = x[t, h, 64:]. x is tokens x heads x 128;
// cos and sin are tokens x 64 in fp32. One program per token covers up to 32
// heads; the two halves are loaded as separate blocks, so every access is
// contiguous.

ism.kernel @rope(%x: memref<?x?x?xbf16>, %cos: memref<?x?xf32>,
                 %sin: memref<?x?xf32>, %out: memref<?x?x?xbf16>)
    attributes {num_warps = 8 : i32} {
  %tok = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %x1 = ism.load %x[%tok, %c0, %c0] : memref<?x?x?xbf16> -> tensor<1x32x64xbf16>
  %x2 = ism.load %x[%tok, %c0, %c64] : memref<?x?x?xbf16> -> tensor<1x32x64xbf16>
  %x1f = arith.extf %x1 : tensor<1x32x64xbf16> to tensor<1x32x64xf32>
  %x2f = arith.extf %x2 : tensor<1x32x64xbf16> to tensor<1x32x64xf32>

  %ct = ism.load %cos[%tok, %c0] : memref<?x?xf32> -> tensor<1x64xf32>
  %st = ism.load %sin[%tok, %c0] : memref<?x?xf32> -> tensor<1x64xf32>
  %c3 = ism.expand_dims %ct axis = 1 : tensor<1x64xf32> -> tensor<1x1x64xf32>
  %s3 = ism.expand_dims %st axis = 1 : tensor<1x64xf32> -> tensor<1x1x64xf32>
  %c = ism.broadcast %c3 : tensor<1x1x64xf32> -> tensor<1x32x64xf32>
  %s = ism.broadcast %s3 : tensor<1x1x64xf32> -> tensor<1x32x64xf32>

  %a = arith.mulf %x1f, %c : tensor<1x32x64xf32>
  %b = arith.mulf %x2f, %s : tensor<1x32x64xf32>
  %lo = arith.subf %a, %b : tensor<1x32x64xf32>
  %d = arith.mulf %x2f, %c : tensor<1x32x64xf32>
  %e = arith.mulf %x1f, %s : tensor<1x32x64xf32>
  %hi = arith.addf %d, %e : tensor<1x32x64xf32>
  %lo16 = arith.truncf %lo : tensor<1x32x64xf32> to tensor<1x32x64xbf16>
  %hi16 = arith.truncf %hi : tensor<1x32x64xf32> to tensor<1x32x64xbf16>
  ism.store %lo16, %out[%tok, %c0, %c0] : tensor<1x32x64xbf16> -> memref<?x?x?xbf16>
  ism.store %hi16, %out[%tok, %c0, %c64] : tensor<1x32x64xbf16> -> memref<?x?x?xbf16>
  ism.return
}

func.func @main(%x: memref<?x?x?xbf16>, %cos: memref<?x?xf32>,
                %sin: memref<?x?xf32>, %out: memref<?x?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %tokens = memref.dim %x, %c0 : memref<?x?x?xbf16>
  ism.launch @rope grid(%tokens) (%x, %cos, %sin, %out)
      : (memref<?x?x?xbf16>, memref<?x?xf32>, memref<?x?xf32>, memref<?x?x?xbf16>)
  return
}
