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
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %tokens = memref.dim %x, %c0 : memref<?x?x?xbf16>
  %heads = memref.dim %x, %c1 : memref<?x?x?xbf16>
  %dim = memref.dim %x, %c2 : memref<?x?x?xbf16>
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %dim_ok = arith.cmpi eq, %dim, %c128 : index
  %heads_ok = arith.cmpi sle, %heads, %c32 : index
  %x_ok = arith.andi %dim_ok, %heads_ok : i1
  ism.assert %x_ok, "x is {0}x{1}x{2}: this RoPE takes tokens x (up to 32 heads) x 128"
      (%tokens, %heads, %dim) : index, index, index
  %ct = memref.dim %cos, %c0 : memref<?x?xf32>
  %cw = memref.dim %cos, %c1 : memref<?x?xf32>
  %st = memref.dim %sin, %c0 : memref<?x?xf32>
  %sw = memref.dim %sin, %c1 : memref<?x?xf32>
  %ct_ok = arith.cmpi eq, %ct, %tokens : index
  %cw_ok = arith.cmpi eq, %cw, %c64 : index
  %st_ok = arith.cmpi eq, %st, %tokens : index
  %sw_ok = arith.cmpi eq, %sw, %c64 : index
  %c_ok = arith.andi %ct_ok, %cw_ok : i1
  %s_ok = arith.andi %st_ok, %sw_ok : i1
  %cs_ok = arith.andi %c_ok, %s_ok : i1
  ism.assert %cs_ok, "cos is {0}x{1} and sin is {2}x{3}: each must be {4}x64"
      (%ct, %cw, %st, %sw, %tokens) : index, index, index, index, index
  %ot = memref.dim %out, %c0 : memref<?x?x?xbf16>
  %oh = memref.dim %out, %c1 : memref<?x?x?xbf16>
  %od = memref.dim %out, %c2 : memref<?x?x?xbf16>
  %ot_ok = arith.cmpi eq, %ot, %tokens : index
  %oh_ok = arith.cmpi eq, %oh, %heads : index
  %od_ok = arith.cmpi eq, %od, %dim : index
  %o1 = arith.andi %ot_ok, %oh_ok : i1
  %o_ok = arith.andi %o1, %od_ok : i1
  ism.assert %o_ok, "out is {0}x{1}x{2} but x is {3}x{4}x{5}"
      (%ot, %oh, %od, %tokens, %heads, %dim)
      : index, index, index, index, index, index
  ism.launch @rope grid(%tokens) (%x, %cos, %sin, %out)
      : (memref<?x?x?xbf16>, memref<?x?xf32>, memref<?x?xf32>, memref<?x?x?xbf16>)
  return
}
