// A decode step's rotary embedding and KV-cache append, at a position read
// from device memory (batch 1, Llama-style grouped-query attention with
// head_dim 64, rotate-half RoPE):
//
//   qo[h, 0, :]   = rope(q[h, :], pos)      h < Hq     @rope  (Hq programs)
//   kc[h, pos, :] = rope(k[h, :], pos)      h < Hkv    @rope  (Hkv programs)
//   vc[h, pos, :] = v[h, :]                 h < Hkv    @copy_row
//
// rope(x, p) = [x1 * cos[p] - x2 * sin[p], x2 * cos[p] + x1 * sin[p]] with
// x1 = x[:32], x2 = x[32:]; cos and sin are max_ctx x 32 tables in f32.
// `pos` is a 1-element i32 buffer on the GPU: one compiled step serves
// every token (the host function never reads it), and a CUDA graph of it
// stays valid from token to token. A position outside [0, max_ctx) writes
// nothing to the caches (the stores are masked to the memrefs) and leaves
// qo zero (the tables' rows outside them read as zeros): the caller keeps
// pos in range.

// out[h, at_pos ? pos : 0, :] = rope(x[h, :], pos)
ism.kernel @rope(%x: memref<?x?xbf16>, %cos: memref<?x?xf32>,
                 %sin: memref<?x?xf32>, %pos: memref<?xi32>,
                 %out: memref<?x?x?xbf16>, %at_pos: i32)
    attributes {num_warps = 1 : i32} {
  %h = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %p32 = memref.load %pos[%c0] : memref<?xi32>
  %p = arith.index_cast %p32 : i32 to index
  %zero = arith.constant 0 : i32
  %cached = arith.cmpi ne, %at_pos, %zero : i32
  %row = arith.select %cached, %p, %c0 : index
  %x1 = ism.load %x[%h, %c0] : memref<?x?xbf16> -> tensor<1x32xbf16>
  %x2 = ism.load %x[%h, %c32] : memref<?x?xbf16> -> tensor<1x32xbf16>
  %x1f = arith.extf %x1 : tensor<1x32xbf16> to tensor<1x32xf32>
  %x2f = arith.extf %x2 : tensor<1x32xbf16> to tensor<1x32xf32>
  %c = ism.load %cos[%p, %c0] : memref<?x?xf32> -> tensor<1x32xf32>
  %s = ism.load %sin[%p, %c0] : memref<?x?xf32> -> tensor<1x32xf32>
  %a = arith.mulf %x1f, %c : tensor<1x32xf32>
  %b = arith.mulf %x2f, %s : tensor<1x32xf32>
  %lo = arith.subf %a, %b : tensor<1x32xf32>
  %d = arith.mulf %x2f, %c : tensor<1x32xf32>
  %e = arith.mulf %x1f, %s : tensor<1x32xf32>
  %hi = arith.addf %d, %e : tensor<1x32xf32>
  %lo16 = arith.truncf %lo : tensor<1x32xf32> to tensor<1x32xbf16>
  %hi16 = arith.truncf %hi : tensor<1x32xf32> to tensor<1x32xbf16>
  %lo3 = ism.reshape %lo16 : tensor<1x32xbf16> -> tensor<1x1x32xbf16>
  %hi3 = ism.reshape %hi16 : tensor<1x32xbf16> -> tensor<1x1x32xbf16>
  ism.store %lo3, %out[%h, %row, %c0] : tensor<1x1x32xbf16> -> memref<?x?x?xbf16>
  ism.store %hi3, %out[%h, %row, %c32] : tensor<1x1x32xbf16> -> memref<?x?x?xbf16>
  ism.return
}

// out[h, pos, :] = x[h, :]
ism.kernel @copy_row(%x: memref<?x?xbf16>, %pos: memref<?xi32>,
                     %out: memref<?x?x?xbf16>)
    attributes {num_warps = 1 : i32} {
  %h = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %p32 = memref.load %pos[%c0] : memref<?xi32>
  %p = arith.index_cast %p32 : i32 to index
  %t = ism.load %x[%h, %c0] : memref<?x?xbf16> -> tensor<1x64xbf16>
  %t3 = ism.reshape %t : tensor<1x64xbf16> -> tensor<1x1x64xbf16>
  ism.store %t3, %out[%h, %p, %c0] : tensor<1x1x64xbf16> -> memref<?x?x?xbf16>
  ism.return
}

// q: Hq x 64, k and v: Hkv x 64 (the QKV projection's heads), cos and sin:
// max_ctx x 32, pos: 1 (i32), qo: Hq x 1 x 64, kc and vc: Hkv x max_ctx x 64.
func.func @main(%q: memref<?x?xbf16>, %k: memref<?x?xbf16>,
                %v: memref<?x?xbf16>, %cos: memref<?x?xf32>,
                %sin: memref<?x?xf32>, %pos: memref<?xi32>,
                %qo: memref<?x?x?xbf16>, %kc: memref<?x?x?xbf16>,
                %vc: memref<?x?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %hq = memref.dim %q, %c0 : memref<?x?xbf16>
  %dq = memref.dim %q, %c1 : memref<?x?xbf16>
  %hkv = memref.dim %k, %c0 : memref<?x?xbf16>
  %dk = memref.dim %k, %c1 : memref<?x?xbf16>
  %hv = memref.dim %v, %c0 : memref<?x?xbf16>
  %dv = memref.dim %v, %c1 : memref<?x?xbf16>
  %d1 = arith.cmpi eq, %dq, %c64 : index
  %d2 = arith.cmpi eq, %dk, %c64 : index
  %d3 = arith.cmpi eq, %dv, %c64 : index
  %d4 = arith.cmpi eq, %hv, %hkv : index
  %d12 = arith.andi %d1, %d2 : i1
  %d34 = arith.andi %d3, %d4 : i1
  %heads = arith.andi %d12, %d34 : i1
  ism.assert %heads, "q is {0}x{1}, k {2}x{3} and v {4}x{5}: this step takes heads of 64 and as many v heads as k heads"
      (%hq, %dq, %hkv, %dk, %hv, %dv) : index, index, index, index, index, index
  %ctx = memref.dim %kc, %c1 : memref<?x?x?xbf16>
  %kh = memref.dim %kc, %c0 : memref<?x?x?xbf16>
  %kd = memref.dim %kc, %c2 : memref<?x?x?xbf16>
  %vh = memref.dim %vc, %c0 : memref<?x?x?xbf16>
  %vctx = memref.dim %vc, %c1 : memref<?x?x?xbf16>
  %vd = memref.dim %vc, %c2 : memref<?x?x?xbf16>
  %k1 = arith.cmpi eq, %kh, %hkv : index
  %k2 = arith.cmpi eq, %kd, %c64 : index
  %k3 = arith.cmpi eq, %vh, %hkv : index
  %k4 = arith.cmpi eq, %vctx, %ctx : index
  %k5 = arith.cmpi eq, %vd, %c64 : index
  %k12 = arith.andi %k1, %k2 : i1
  %k34 = arith.andi %k3, %k4 : i1
  %k345 = arith.andi %k34, %k5 : i1
  %caches = arith.andi %k12, %k345 : i1
  ism.assert %caches, "the caches are {0}x{1}x{2} and {3}x{4}x{5}: each must be {6} (k heads) x max_ctx x 64"
      (%kh, %ctx, %kd, %vh, %vctx, %vd, %hkv)
      : index, index, index, index, index, index, index
  %cr = memref.dim %cos, %c0 : memref<?x?xf32>
  %cw = memref.dim %cos, %c1 : memref<?x?xf32>
  %sr = memref.dim %sin, %c0 : memref<?x?xf32>
  %sw = memref.dim %sin, %c1 : memref<?x?xf32>
  %t1 = arith.cmpi eq, %cr, %ctx : index
  %t2 = arith.cmpi eq, %cw, %c32 : index
  %t3 = arith.cmpi eq, %sr, %ctx : index
  %t4 = arith.cmpi eq, %sw, %c32 : index
  %t12 = arith.andi %t1, %t2 : i1
  %t34 = arith.andi %t3, %t4 : i1
  %tables = arith.andi %t12, %t34 : i1
  ism.assert %tables, "cos is {0}x{1} and sin {2}x{3}: each must be {4} (max_ctx) x 32"
      (%cr, %cw, %sr, %sw, %ctx) : index, index, index, index, index
  %pn = memref.dim %pos, %c0 : memref<?xi32>
  %qh = memref.dim %qo, %c0 : memref<?x?x?xbf16>
  %qr = memref.dim %qo, %c1 : memref<?x?x?xbf16>
  %qd = memref.dim %qo, %c2 : memref<?x?x?xbf16>
  %o1 = arith.cmpi eq, %pn, %c1 : index
  %o2 = arith.cmpi eq, %qh, %hq : index
  %o3 = arith.cmpi eq, %qr, %c1 : index
  %o4 = arith.cmpi eq, %qd, %c64 : index
  %o12 = arith.andi %o1, %o2 : i1
  %o34 = arith.andi %o3, %o4 : i1
  %outs = arith.andi %o12, %o34 : i1
  ism.assert %outs, "pos has {0} elements and qo is {1}x{2}x{3}: pos must be one i32 and qo {4}x1x64"
      (%pn, %qh, %qr, %qd, %hq) : index, index, index, index, index
  %no = arith.constant 0 : i32
  %yes = arith.constant 1 : i32
  ism.launch @rope grid(%hq) (%q, %cos, %sin, %pos, %qo, %no)
      : (memref<?x?xbf16>, memref<?x?xf32>, memref<?x?xf32>, memref<?xi32>,
         memref<?x?x?xbf16>, i32)
  ism.launch @rope grid(%hkv) (%k, %cos, %sin, %pos, %kc, %yes)
      : (memref<?x?xbf16>, memref<?x?xf32>, memref<?x?xf32>, memref<?xi32>,
         memref<?x?x?xbf16>, i32)
  ism.launch @copy_row grid(%hkv) (%v, %pos, %vc)
      : (memref<?x?xbf16>, memref<?xi32>, memref<?x?x?xbf16>)
  return
}
