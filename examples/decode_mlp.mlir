// An LLM decoder layer's MLP block at batch 1 (one token), as two dependent
// kernels run in one persistent launch:
//
//   a = silu(W_gate h) * (W_up h), h = rmsnorm(x) * w_norm   @gate_up (F / 4)
//   y = W_down a + x                                         @down    (H / 2)
//
// `ism.coschedule ordered` (ism-coschedule; docs/coschedule.md) compiles the
// region into one kernel whose CTAs take the programs in order: @down waits
// for @gate_up's a, but each program loads its weight rows (which nothing
// in the region writes) before it waits, so the weights stream while the
// kernel before still finishes. Each @gate_up program normalises x itself
// (a 1 x H row from L2; 1 / rms(x) is a scalar, so W (x w_norm) / rms(x)):
// a separate one-program RMSNorm launch would leave the GPU to one CTA
// while every other waits for it. Shapes up to Llama-3.2-1B's (H = 2048,
// F = 8192): the tiles cover a whole row of the weights, and loads past the
// end of a smaller one read zeros. Three CTAs an SM (ctas_per_sm). On the
// H200 this layout (4 gate/up rows and 2 down rows a program, the norm in
// @gate_up) was the fastest tried, ahead of a separate RMSNorm launch and
// one down row a program (docs/results.md).

// a[n0 .. n0 + 4) = silu(W_gate[n0 ..] h) * (W_up[n0 ..] h),
// h = x * w_norm / rms(x)
ism.kernel @gate_up(%wg: memref<?x?xbf16>, %wu: memref<?x?xbf16>,
                    %x: memref<?x?xbf16>, %wn: memref<?xbf16>,
                    %a: memref<?x?xbf16>, %eps: f32)
    attributes {num_warps = 8 : i32} {
  %pid = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %n0 = arith.muli %pid, %c4 : index
  %g16 = ism.load %wg[%n0, %c0] : memref<?x?xbf16> -> tensor<4x2048xbf16>
  %u16 = ism.load %wu[%n0, %c0] : memref<?x?xbf16> -> tensor<4x2048xbf16>
  %x16 = ism.load %x[%c0, %c0] : memref<?x?xbf16> -> tensor<1x2048xbf16>
  %wn16 = ism.load %wn[%c0] : memref<?xbf16> -> tensor<2048xbf16>
  %wn2 = ism.reshape %wn16 : tensor<2048xbf16> -> tensor<1x2048xbf16>
  %xv = arith.extf %x16 : tensor<1x2048xbf16> to tensor<1x2048xf32>
  %wnf = arith.extf %wn2 : tensor<1x2048xbf16> to tensor<1x2048xf32>
  // 1 / rms(x) over the H elements of the row (the padding reads zeros).
  %sq = arith.mulf %xv, %xv : tensor<1x2048xf32>
  %ssq = ism.reduce %sq axis = 1 : tensor<1x2048xf32> -> tensor<1xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    ism.yield %s : f32
  }
  %n = memref.dim %x, %c1 : memref<?x?xbf16>
  %n32 = arith.index_cast %n : index to i32
  %nf = arith.uitofp %n32 : i32 to f32
  %nfs = ism.splat %nf : f32 -> tensor<1xf32>
  %epss = ism.splat %eps : f32 -> tensor<1xf32>
  %ms = arith.divf %ssq, %nfs : tensor<1xf32>
  %mseps = arith.addf %ms, %epss : tensor<1xf32>
  %rrms1 = math.rsqrt %mseps : tensor<1xf32>
  %rrms2 = ism.reshape %rrms1 : tensor<1xf32> -> tensor<1x1xf32>
  %rrms4 = ism.broadcast %rrms2 : tensor<1x1xf32> -> tensor<4x1xf32>
  %rrms = ism.reshape %rrms4 : tensor<4x1xf32> -> tensor<4xf32>
  // The dot products with x * w_norm, scaled by 1 / rms(x) after.
  %xw = arith.mulf %xv, %wnf : tensor<1x2048xf32>
  %xb = ism.broadcast %xw : tensor<1x2048xf32> -> tensor<4x2048xf32>
  %gf = arith.extf %g16 : tensor<4x2048xbf16> to tensor<4x2048xf32>
  %uf = arith.extf %u16 : tensor<4x2048xbf16> to tensor<4x2048xf32>
  %gp = arith.mulf %gf, %xb : tensor<4x2048xf32>
  %up = arith.mulf %uf, %xb : tensor<4x2048xf32>
  %gd = ism.reduce %gp axis = 1 : tensor<4x2048xf32> -> tensor<4xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    ism.yield %s : f32
  }
  %ud = ism.reduce %up axis = 1 : tensor<4x2048xf32> -> tensor<4xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    ism.yield %s : f32
  }
  %g = arith.mulf %gd, %rrms : tensor<4xf32>
  %u = arith.mulf %ud, %rrms : tensor<4xf32>
  // silu(g) = g / (1 + exp(-g))
  %one = arith.constant dense<1.0> : tensor<4xf32>
  %ng = arith.negf %g : tensor<4xf32>
  %e = math.exp %ng : tensor<4xf32>
  %den = arith.addf %one, %e : tensor<4xf32>
  %silu = arith.divf %g, %den : tensor<4xf32>
  %act = arith.mulf %silu, %u : tensor<4xf32>
  %act16 = arith.truncf %act : tensor<4xf32> to tensor<4xbf16>
  %row = ism.reshape %act16 : tensor<4xbf16> -> tensor<1x4xbf16>
  ism.store %row, %a[%c0, %n0] : tensor<1x4xbf16> -> memref<?x?xbf16>
  ism.return
}

// y[r0 .. r0 + 2) = W_down[r0 ..] a + x[r0 ..]
ism.kernel @down(%wd: memref<?x?xbf16>, %a: memref<?x?xbf16>,
                 %x: memref<?x?xbf16>, %y: memref<?x?xbf16>)
    attributes {num_warps = 8 : i32} {
  %pid = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %r0 = arith.muli %pid, %c2 : index
  %w16 = ism.load %wd[%r0, %c0] : memref<?x?xbf16> -> tensor<2x8192xbf16>
  %a16 = ism.load %a[%c0, %c0] : memref<?x?xbf16> -> tensor<1x8192xbf16>
  %af1 = arith.extf %a16 : tensor<1x8192xbf16> to tensor<1x8192xf32>
  %af = ism.broadcast %af1 : tensor<1x8192xf32> -> tensor<2x8192xf32>
  %wf = arith.extf %w16 : tensor<2x8192xbf16> to tensor<2x8192xf32>
  %p = arith.mulf %wf, %af : tensor<2x8192xf32>
  %d = ism.reduce %p axis = 1 : tensor<2x8192xf32> -> tensor<2xf32> {
  ^bb0(%l: f32, %r: f32):
    %s = arith.addf %l, %r : f32
    ism.yield %s : f32
  }
  %r16 = ism.load %x[%c0, %r0] : memref<?x?xbf16> -> tensor<1x2xbf16>
  %rf = arith.extf %r16 : tensor<1x2xbf16> to tensor<1x2xf32>
  %r = ism.reshape %rf : tensor<1x2xf32> -> tensor<2xf32>
  %sum = arith.addf %d, %r : tensor<2xf32>
  %o16 = arith.truncf %sum : tensor<2xf32> to tensor<2xbf16>
  %out = ism.reshape %o16 : tensor<2xbf16> -> tensor<1x2xbf16>
  ism.store %out, %y[%c0, %r0] : tensor<1x2xbf16> -> memref<?x?xbf16>
  ism.return
}

// x: 1 x H, w_norm: H, W_gate and W_up: F x H, W_down: H x F, y: 1 x H.
func.func @main(%x: memref<?x?xbf16>, %wn: memref<?xbf16>,
                %wg: memref<?x?xbf16>, %wu: memref<?x?xbf16>,
                %wd: memref<?x?xbf16>, %y: memref<?x?xbf16>, %eps: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %x, %c0 : memref<?x?xbf16>
  %H = memref.dim %x, %c1 : memref<?x?xbf16>
  %F = memref.dim %wg, %c0 : memref<?x?xbf16>
  %one_row = arith.cmpi eq, %rows, %c1 : index
  ism.assert %one_row, "x has {0} rows: this MLP block takes one token (1 x H)"
      (%rows) : index
  %maxH = arith.constant 2048 : index
  %maxF = arith.constant 8192 : index
  %h_fits = arith.cmpi sle, %H, %maxH : index
  %f_fits = arith.cmpi sle, %F, %maxF : index
  %fits = arith.andi %h_fits, %f_fits : i1
  ism.assert %fits, "H = {0} and F = {1}: this MLP block takes H <= 2048 and F <= 8192"
      (%H, %F) : index, index
  %wn_n = memref.dim %wn, %c0 : memref<?xbf16>
  %wg_k = memref.dim %wg, %c1 : memref<?x?xbf16>
  %wu_n = memref.dim %wu, %c0 : memref<?x?xbf16>
  %wu_k = memref.dim %wu, %c1 : memref<?x?xbf16>
  %wd_n = memref.dim %wd, %c0 : memref<?x?xbf16>
  %wd_k = memref.dim %wd, %c1 : memref<?x?xbf16>
  %y_r = memref.dim %y, %c0 : memref<?x?xbf16>
  %y_c = memref.dim %y, %c1 : memref<?x?xbf16>
  %ok1 = arith.cmpi eq, %wn_n, %H : index
  %ok2 = arith.cmpi eq, %wg_k, %H : index
  %ok3 = arith.cmpi eq, %wu_n, %F : index
  %ok4 = arith.cmpi eq, %wu_k, %H : index
  %ok5 = arith.cmpi eq, %wd_n, %H : index
  %ok6 = arith.cmpi eq, %wd_k, %F : index
  %ok7 = arith.cmpi eq, %y_r, %c1 : index
  %ok8 = arith.cmpi eq, %y_c, %H : index
  %a12 = arith.andi %ok1, %ok2 : i1
  %a34 = arith.andi %ok3, %ok4 : i1
  %a56 = arith.andi %ok5, %ok6 : i1
  %a78 = arith.andi %ok7, %ok8 : i1
  %a1234 = arith.andi %a12, %a34 : i1
  %a5678 = arith.andi %a56, %a78 : i1
  %shapes = arith.andi %a1234, %a5678 : i1
  ism.assert %shapes, "with x 1x{0} and W_gate {1}x{0}: w_norm needs {0} elements (has {2}), W_gate and W_up {1}x{0} (W_gate has {3} columns, W_up is {4}x{5}), W_down {0}x{1} (is {6}x{7}) and y 1x{0} (is {8}x{9})"
      (%H, %F, %wn_n, %wg_k, %wu_n, %wu_k, %wd_n, %wd_k, %y_r, %y_c)
      : index, index, index, index, index, index, index, index, index, index
  %a = memref.alloc(%c1, %F) : memref<?x?xbf16>
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %g_up = arith.ceildivui %F, %c4 : index
  %g_down = arith.ceildivui %H, %c2 : index
  ism.coschedule ordered attributes {ctas_per_sm = 3 : i32} {
    ism.launch @gate_up grid(%g_up) (%wg, %wu, %x, %wn, %a, %eps)
        : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>,
           memref<?xbf16>, memref<?x?xbf16>, f32)
    ism.launch @down grid(%g_down) (%wd, %a, %x, %y)
        : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
  }
  return
}
