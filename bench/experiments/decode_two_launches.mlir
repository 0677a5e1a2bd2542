// The two-launch split-KV decode attention of 3df7c33 (a partial kernel,
// then a combining kernel), kept for bench/experiments/decode_merge.py.
// Split-KV decode attention in bf16 with fp32 math: one query token per
// (batch x head) against a long KV cache, O = softmax(scale * q K^T) V.
// Q and O are (batch * heads, 128), K and V (batch * heads, seq, 128).
//
// The keys of each head are split in as many chunks as the workspace has
// columns (Mp and Lp are (batch * heads, splits), Op (batch * heads,
// splits, 128)). @decode_partial runs one program per
// (chunk, head): an online softmax over its keys in blocks of 64, kept
// separately for 8 lanes of keys (so that the loop's reductions stay
// within a warp and need no shared memory or barrier) and merged at the
// end, leaving the chunk's maximum score m, sum of exp(score - m) l and
// unnormalised output in the workspace. @decode_combine then merges the chunks of each
// head, 64 chunks at a time: with M = max m, O = sum(exp(m - M) * out) /
// sum(exp(m - M) * l).
// Chunks past the end of a short sequence are empty (m = -inf, l = 0).
// Both kernels are memory-bound: K and V are read once.

ism.kernel @decode_partial(%Q: memref<?x?xbf16>, %K: memref<?x?x?xbf16>,
                           %V: memref<?x?x?xbf16>, %Mp: memref<?x?xf32>,
                           %Lp: memref<?x?xf32>, %Op: memref<?x?x?xf32>,
                           %scale: f32) attributes {num_warps = 4 : i32} {
  %sp = ism.program_id x : index
  %bh = ism.program_id y : index
  %splits = ism.num_programs x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bn = arith.constant 64 : index
  %S = memref.dim %K, %c1 : memref<?x?x?xbf16>
  // This program's keys: a chunk of whole blocks.
  %per = arith.ceildivui %S, %splits : index
  %blocks = arith.ceildivui %per, %bn : index
  %chunk = arith.muli %blocks, %bn : index
  %lo = arith.muli %sp, %chunk : index
  %hi0 = arith.addi %lo, %chunk : index
  %hi = arith.minui %hi0, %S : index

  // A block of 64 keys is viewed as 8 x 8: key n + 8 * i + j is at (i, j).
  // Each of the 8 columns j (a lane of keys) keeps its own online softmax
  // (running max m, sum l and output acc), so the loop's reductions run
  // along i, within a thread, and along the head dimension; the lanes are
  // merged once, after the loop.
  %q2 = ism.load %Q[%bh, %c0] : memref<?x?xbf16> -> tensor<1x128xbf16>
  %qf = arith.extf %q2 : tensor<1x128xbf16> to tensor<1x128xf32>
  %scales = ism.splat %scale : f32 -> tensor<1x128xf32>
  %qs = arith.mulf %qf, %scales : tensor<1x128xf32>
  %q3 = ism.reshape %qs : tensor<1x128xf32> -> tensor<1x1x128xf32>
  %qb = ism.broadcast %q3 : tensor<1x1x128xf32> -> tensor<8x8x128xf32>
  %iota64 = ism.range 0 to 64 : tensor<64xi32>
  %iota = ism.reshape %iota64 : tensor<64xi32> -> tensor<8x8xi32>
  %Si = arith.index_cast %S : index to i32
  %Ss = ism.splat %Si : i32 -> tensor<8x8xi32>
  %ninf_s = arith.constant dense<0xFF800000> : tensor<8x8xf32>
  %ninf_l = arith.constant dense<0xFF800000> : tensor<8xf32>
  %zero_l = arith.constant dense<0.0> : tensor<8xf32>
  %zero_acc = arith.constant dense<0.0> : tensor<8x128xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32

  %r:3 = scf.for %n = %lo to %hi step %bn
      iter_args(%m = %ninf_l, %l = %zero_l, %acc = %zero_acc)
      -> (tensor<8xf32>, tensor<8xf32>, tensor<8x128xf32>) {
    %k3 = ism.load %K[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x128xbf16>
    %k = ism.reshape %k3 : tensor<1x64x128xbf16> -> tensor<8x8x128xbf16>
    // V's loads leave with K's, before the math that waits for K.
    %v3 = ism.load %V[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x128xbf16>
    %v = ism.reshape %v3 : tensor<1x64x128xbf16> -> tensor<8x8x128xbf16>
    %kf = arith.extf %k : tensor<8x8x128xbf16> to tensor<8x8x128xf32>
    %qk = arith.mulf %kf, %qb : tensor<8x8x128xf32>
    %s0 = ism.reduce %qk axis = 2 : tensor<8x8x128xf32> -> tensor<8x8xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }
    // Keys past the end score -inf.
    %ni = arith.index_cast %n : index to i32
    %ns = ism.splat %ni : i32 -> tensor<8x8xi32>
    %cols = arith.addi %iota, %ns : tensor<8x8xi32>
    %valid = arith.cmpi slt, %cols, %Ss : tensor<8x8xi32>
    %s = arith.select %valid, %s0, %ninf_s : tensor<8x8xi1>, tensor<8x8xf32>
    %smax = ism.reduce %s axis = 0 : tensor<8x8xf32> -> tensor<8xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.maximumf %a, %b : f32
      ism.yield %x : f32
    }
    %m_new = arith.maximumf %m, %smax : tensor<8xf32>
    // A lane whose keys are all past the end keeps m = -inf: shift by 0
    // there, so that exp gives 0 and not NaN.
    %empty = arith.cmpf oeq, %m_new, %ninf_l : tensor<8xf32>
    %m_safe = arith.select %empty, %zero_l, %m_new : tensor<8xi1>, tensor<8xf32>
    %m_safe2 = ism.expand_dims %m_safe axis = 0 : tensor<8xf32> -> tensor<1x8xf32>
    %m_safes = ism.broadcast %m_safe2 : tensor<1x8xf32> -> tensor<8x8xf32>
    %shifted = arith.subf %s, %m_safes : tensor<8x8xf32>
    %p = math.exp %shifted : tensor<8x8xf32>
    %m_diff = arith.subf %m, %m_safe : tensor<8xf32>
    %alpha = math.exp %m_diff : tensor<8xf32>
    %psum = ism.reduce %p axis = 0 : tensor<8x8xf32> -> tensor<8xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }
    %l_scaled = arith.mulf %l, %alpha : tensor<8xf32>
    %l_new = arith.addf %l_scaled, %psum : tensor<8xf32>
    %vf = arith.extf %v : tensor<8x8x128xbf16> to tensor<8x8x128xf32>
    %p3 = ism.expand_dims %p axis = 2 : tensor<8x8xf32> -> tensor<8x8x1xf32>
    %pb = ism.broadcast %p3 : tensor<8x8x1xf32> -> tensor<8x8x128xf32>
    %pv = arith.mulf %vf, %pb : tensor<8x8x128xf32>
    %part = ism.reduce %pv axis = 0 : tensor<8x8x128xf32> -> tensor<8x128xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }
    %alpha2 = ism.expand_dims %alpha axis = 1 : tensor<8xf32> -> tensor<8x1xf32>
    %alphas = ism.broadcast %alpha2 : tensor<8x1xf32> -> tensor<8x128xf32>
    %acc_scaled = arith.mulf %acc, %alphas : tensor<8x128xf32>
    %acc_new = arith.addf %acc_scaled, %part : tensor<8x128xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<8xf32>, tensor<8xf32>, tensor<8x128xf32>
  }

  // Merge the lanes: with M = max m, l = sum(exp(m - M) * l) and out =
  // sum(exp(m - M) * acc). An empty chunk (no keys) leaves m = -inf, l = 0.
  %M = ism.reduce %r#0 axis = 0 : tensor<8xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %x = arith.maximumf %a, %b : f32
    ism.yield %x : f32
  }
  %M_empty = arith.cmpf oeq, %M, %ninf : f32
  %M_safe = arith.select %M_empty, %zero, %M : f32
  %M_safes = ism.splat %M_safe : f32 -> tensor<8xf32>
  %md = arith.subf %r#0, %M_safes : tensor<8xf32>
  %w = math.exp %md : tensor<8xf32>
  %wl = arith.mulf %w, %r#1 : tensor<8xf32>
  %L = ism.reduce %wl axis = 0 : tensor<8xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %x = arith.addf %a, %b : f32
    ism.yield %x : f32
  }
  %w2 = ism.expand_dims %w axis = 1 : tensor<8xf32> -> tensor<8x1xf32>
  %wb = ism.broadcast %w2 : tensor<8x1xf32> -> tensor<8x128xf32>
  %ow = arith.mulf %r#2, %wb : tensor<8x128xf32>
  %out = ism.reduce %ow axis = 0 : tensor<8x128xf32> -> tensor<128xf32> {
  ^bb0(%a: f32, %b: f32):
    %x = arith.addf %a, %b : f32
    ism.yield %x : f32
  }

  %m1 = ism.splat %M : f32 -> tensor<1x1xf32>
  ism.store %m1, %Mp[%bh, %sp] : tensor<1x1xf32> -> memref<?x?xf32>
  %l1 = ism.splat %L : f32 -> tensor<1x1xf32>
  ism.store %l1, %Lp[%bh, %sp] : tensor<1x1xf32> -> memref<?x?xf32>
  %o3 = ism.reshape %out : tensor<128xf32> -> tensor<1x1x128xf32>
  ism.store %o3, %Op[%bh, %sp, %c0] : tensor<1x1x128xf32> -> memref<?x?x?xf32>
  ism.return
}

ism.kernel @decode_combine(%Mp: memref<?x?xf32>, %Lp: memref<?x?xf32>,
                           %Op: memref<?x?x?xf32>, %O: memref<?x?xbf16>)
    attributes {num_warps = 4 : i32} {
  %bh = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %splits = memref.dim %Mp, %c1 : memref<?x?xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %zero_o = arith.constant dense<0.0> : tensor<128xf32>
  // The chunks 64 at a time, merged like the keys of a chunk: a running
  // maximum M, sum L and output O, rescaled when M grows. The first 64
  // always hold a non-empty chunk (empty ones are the last), so M is finite
  // after the first step. Chunks past the workspace read m = -inf, l = 0,
  // out = 0.
  %r:3 = scf.for %c = %c0 to %splits step %c64
      iter_args(%M = %ninf, %L = %zero, %acc = %zero_o) -> (f32, f32, tensor<128xf32>) {
    %m2 = ism.load %Mp[%bh, %c] {padding = 0xFF800000 : f32}
        : memref<?x?xf32> -> tensor<1x64xf32>
    %m = ism.reshape %m2 : tensor<1x64xf32> -> tensor<64xf32>
    %l2 = ism.load %Lp[%bh, %c] : memref<?x?xf32> -> tensor<1x64xf32>
    %l = ism.reshape %l2 : tensor<1x64xf32> -> tensor<64xf32>
    %o3 = ism.load %Op[%bh, %c, %c0] : memref<?x?x?xf32> -> tensor<1x64x128xf32>
    %o = ism.reshape %o3 : tensor<1x64x128xf32> -> tensor<64x128xf32>
    %mmax = ism.reduce %m axis = 0 : tensor<64xf32> -> f32 {
    ^bb0(%a: f32, %b: f32):
      %x = arith.maximumf %a, %b : f32
      ism.yield %x : f32
    }
    %M_new = arith.maximumf %M, %mmax : f32
    %M_diff = arith.subf %M, %M_new : f32
    %alpha = math.exp %M_diff : f32
    %M_news = ism.splat %M_new : f32 -> tensor<64xf32>
    %md = arith.subf %m, %M_news : tensor<64xf32>
    %w = math.exp %md : tensor<64xf32>
    %wl = arith.mulf %w, %l : tensor<64xf32>
    %lsum = ism.reduce %wl axis = 0 : tensor<64xf32> -> f32 {
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }
    %L_scaled = arith.mulf %L, %alpha : f32
    %L_new = arith.addf %L_scaled, %lsum : f32
    %w2 = ism.expand_dims %w axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %wb = ism.broadcast %w2 : tensor<64x1xf32> -> tensor<64x128xf32>
    %ow = arith.mulf %o, %wb : tensor<64x128xf32>
    %osum = ism.reduce %ow axis = 0 : tensor<64x128xf32> -> tensor<128xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }
    %alphas = ism.splat %alpha : f32 -> tensor<128xf32>
    %acc_scaled = arith.mulf %acc, %alphas : tensor<128xf32>
    %acc_new = arith.addf %acc_scaled, %osum : tensor<128xf32>
    scf.yield %M_new, %L_new, %acc_new : f32, f32, tensor<128xf32>
  }
  %Ls = ism.splat %r#1 : f32 -> tensor<128xf32>
  %out = arith.divf %r#2, %Ls : tensor<128xf32>
  %out16 = arith.truncf %out : tensor<128xf32> to tensor<128xbf16>
  %out2 = ism.reshape %out16 : tensor<128xbf16> -> tensor<1x128xbf16>
  ism.store %out2, %O[%bh, %c0] : tensor<1x128xbf16> -> memref<?x?xbf16>
  ism.return
}

func.func @main(%Q: memref<?x?xbf16>, %K: memref<?x?x?xbf16>,
                %V: memref<?x?x?xbf16>, %O: memref<?x?xbf16>,
                %Mp: memref<?x?xf32>, %Lp: memref<?x?xf32>,
                %Op: memref<?x?x?xf32>, %scale: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %BH = memref.dim %Q, %c0 : memref<?x?xbf16>
  %splits = memref.dim %Mp, %c1 : memref<?x?xf32>
  ism.launch @decode_partial grid(%splits, %BH)
      (%Q, %K, %V, %Mp, %Lp, %Op, %scale)
      : (memref<?x?xbf16>, memref<?x?x?xbf16>, memref<?x?x?xbf16>,
         memref<?x?xf32>, memref<?x?xf32>, memref<?x?x?xf32>, f32)
  ism.launch @decode_combine grid(%BH) (%Mp, %Lp, %Op, %O)
      : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?x?xf32>, memref<?x?xbf16>)
  return
}
