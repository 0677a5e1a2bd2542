// Grouped-query decode attention at a length read from device memory
// (batch 1, head_dim 64, Llama-3.2-1B's 32 query and 8 KV heads or any
// Hq = g * Hkv): for each query head h, with its KV head h / g,
//
//   O[h] = softmax(scale * q[h] K[h / g, 0 .. pos]^T) V[h / g, 0 .. pos]
//
// over the first pos + 1 positions of max_ctx-long caches (those
// examples/decode_rope_append.mlir has written, pos included). `pos` is a
// 1-element i32 buffer on the GPU, so one compiled step (and one CUDA
// graph of it) serves every token. Split-KV as examples/decode_attention.mlir
// (whose comments explain the kernel): the keys of each head are split in
// as many chunks as the workspace has columns, one program per (chunk,
// head); chunks past pos are empty, and the program with the head's last
// ticket merges the chunks. pos must be in [0, max_ctx): past the cache
// the keys stop at max_ctx, and a negative pos leaves no keys (O is NaN).
// Eight warps: the same as four launched one by one on the H200 (994 and
// 1001 us a Llama-3.2-1B step from a CUDA graph, bench/decode_step.py),
// and 4% faster inside the fused step, whose CTAs have eight warps anyway
// (1561 against 1627 us: each chunk's reductions take half the steps a
// thread, and ptxas spills less).

ism.kernel @decode(%Q: memref<?x?x?xbf16>, %K: memref<?x?x?xbf16>,
                   %V: memref<?x?x?xbf16>, %pos: memref<?xi32>,
                   %O: memref<?x?xbf16>,
                   %Mp: memref<?x?xf32>, %Lp: memref<?x?xf32>,
                   %Op: memref<?x?x?xf32>, %Count: memref<?xi32>,
                   %scale: f32) attributes {num_warps = 8 : i32} {
  %sp = ism.program_id x : index
  %bh = ism.program_id y : index
  %splits = ism.num_programs x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bn = arith.constant 64 : index
  // The keys: positions 0 .. pos of the cache (pos read from the GPU), and
  // the cache's K head of this query head's group.
  %ctx = memref.dim %K, %c1 : memref<?x?x?xbf16>
  %p32 = memref.load %pos[%c0] : memref<?xi32>
  %ppos = arith.index_cast %p32 : i32 to index
  %p1 = arith.addi %ppos, %c1 : index
  %S = arith.minsi %p1, %ctx : index
  %heads = ism.num_programs y : index
  %kv_heads = memref.dim %K, %c0 : memref<?x?x?xbf16>
  %group = arith.divui %heads, %kv_heads : index
  %kvh = arith.divui %bh, %group : index
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
  %q3d = ism.load %Q[%bh, %c0, %c0] : memref<?x?x?xbf16> -> tensor<1x1x64xbf16>
  %q2 = ism.reshape %q3d : tensor<1x1x64xbf16> -> tensor<1x64xbf16>
  %qf = arith.extf %q2 : tensor<1x64xbf16> to tensor<1x64xf32>
  %scales = ism.splat %scale : f32 -> tensor<1x64xf32>
  %qs = arith.mulf %qf, %scales : tensor<1x64xf32>
  %q3 = ism.reshape %qs : tensor<1x64xf32> -> tensor<1x1x64xf32>
  %qb = ism.broadcast %q3 : tensor<1x1x64xf32> -> tensor<8x8x64xf32>
  %iota64 = ism.range 0 to 64 : tensor<64xi32>
  %iota = ism.reshape %iota64 : tensor<64xi32> -> tensor<8x8xi32>
  %Si = arith.index_cast %S : index to i32
  %Ss = ism.splat %Si : i32 -> tensor<8x8xi32>
  %ninf_s = arith.constant dense<0xFF800000> : tensor<8x8xf32>
  %ninf_l = arith.constant dense<0xFF800000> : tensor<8xf32>
  %zero_l = arith.constant dense<0.0> : tensor<8xf32>
  %zero_acc = arith.constant dense<0.0> : tensor<8x64xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32

  %r:3 = scf.for %n = %lo to %hi step %bn
      iter_args(%m = %ninf_l, %l = %zero_l, %acc = %zero_acc)
      -> (tensor<8xf32>, tensor<8xf32>, tensor<8x64xf32>) {
    // Keys past pos are not read (the cache holds whatever was there,
    // NaN included): K and V load zeros there, and their scores are -inf.
    %ni = arith.index_cast %n : index to i32
    %ns = ism.splat %ni : i32 -> tensor<8x8xi32>
    %cols = arith.addi %iota, %ns : tensor<8x8xi32>
    %valid = arith.cmpi slt, %cols, %Ss : tensor<8x8xi32>
    %valid2 = ism.reshape %valid : tensor<8x8xi1> -> tensor<1x64xi1>
    %valid3 = ism.expand_dims %valid2 axis = 2 : tensor<1x64xi1> -> tensor<1x64x1xi1>
    %kv_mask = ism.broadcast %valid3 : tensor<1x64x1xi1> -> tensor<1x64x64xi1>
    %k3 = ism.load %K[%kvh, %n, %c0] mask %kv_mask
        : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %k = ism.reshape %k3 : tensor<1x64x64xbf16> -> tensor<8x8x64xbf16>
    // V's loads leave with K's, before the math that waits for K.
    %v3 = ism.load %V[%kvh, %n, %c0] mask %kv_mask
        : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %v = ism.reshape %v3 : tensor<1x64x64xbf16> -> tensor<8x8x64xbf16>
    %kf = arith.extf %k : tensor<8x8x64xbf16> to tensor<8x8x64xf32>
    %qk = arith.mulf %kf, %qb : tensor<8x8x64xf32>
    %s0 = ism.reduce %qk axis = 2 : tensor<8x8x64xf32> -> tensor<8x8xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }
    // Keys past pos score -inf.
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
    %vf = arith.extf %v : tensor<8x8x64xbf16> to tensor<8x8x64xf32>
    %p3 = ism.expand_dims %p axis = 2 : tensor<8x8xf32> -> tensor<8x8x1xf32>
    %pb = ism.broadcast %p3 : tensor<8x8x1xf32> -> tensor<8x8x64xf32>
    %pv = arith.mulf %vf, %pb : tensor<8x8x64xf32>
    %part = ism.reduce %pv axis = 0 : tensor<8x8x64xf32> -> tensor<8x64xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }
    %alpha2 = ism.expand_dims %alpha axis = 1 : tensor<8xf32> -> tensor<8x1xf32>
    %alphas = ism.broadcast %alpha2 : tensor<8x1xf32> -> tensor<8x64xf32>
    %acc_scaled = arith.mulf %acc, %alphas : tensor<8x64xf32>
    %acc_new = arith.addf %acc_scaled, %part : tensor<8x64xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<8xf32>, tensor<8xf32>, tensor<8x64xf32>
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
  %wb = ism.broadcast %w2 : tensor<8x1xf32> -> tensor<8x64xf32>
  %ow = arith.mulf %r#2, %wb : tensor<8x64xf32>
  %out = ism.reduce %ow axis = 0 : tensor<8x64xf32> -> tensor<64xf32> {
  ^bb0(%a: f32, %b: f32):
    %x = arith.addf %a, %b : f32
    ism.yield %x : f32
  }

  %m1 = ism.splat %M : f32 -> tensor<1x1xf32>
  ism.store %m1, %Mp[%bh, %sp] : tensor<1x1xf32> -> memref<?x?xf32>
  %l1 = ism.splat %L : f32 -> tensor<1x1xf32>
  ism.store %l1, %Lp[%bh, %sp] : tensor<1x1xf32> -> memref<?x?xf32>
  %o3 = ism.reshape %out : tensor<64xf32> -> tensor<1x1x64xf32>
  ism.store %o3, %Op[%bh, %sp, %c0] : tensor<1x1x64xf32> -> memref<?x?x?xf32>

  // A ticket from the head's counter. acq_rel: this program's stores above
  // happen before its ticket, and the program with the last ticket reads
  // the workspace after every other program of the head took its own.
  %bhi = arith.index_cast %bh : index to i32
  %slot = ism.splat %bhi : i32 -> tensor<1xi32>
  %one = arith.constant dense<1> : tensor<1xi32>
  %t1 = ism.atomic_rmw add %Count[%slot], %one sem = acq_rel
      : memref<?xi32>[tensor<1xi32>], tensor<1xi32>
  %ticket = ism.reduce %t1 axis = 0 : tensor<1xi32> -> i32 {
  ^bb0(%a: i32, %b: i32):
    %x = arith.addi %a, %b : i32
    ism.yield %x : i32
  }
  %splits_i = arith.index_cast %splits : index to i32
  %c1_i = arith.constant 1 : i32
  %last_ticket = arith.subi %splits_i, %c1_i : i32
  %is_last = arith.cmpi eq, %ticket, %last_ticket : i32
  scf.if %is_last {
    // The chunks 64 at a time, merged like the keys of a chunk: a running
    // maximum M, sum L and output O, rescaled when M grows. The first 64
    // always hold a non-empty chunk (empty ones are the last), so M is
    // finite after the first step. Chunks past the workspace read
    // m = -inf, l = 0, out = 0.
    %c64 = arith.constant 64 : index
    %zero_o = arith.constant dense<0.0> : tensor<64xf32>
    %h:3 = scf.for %c = %c0 to %splits step %c64
        iter_args(%Mc = %ninf, %Lc = %zero, %oacc = %zero_o)
        -> (f32, f32, tensor<64xf32>) {
      %cm2 = ism.load %Mp[%bh, %c] {padding = 0xFF800000 : f32}
          : memref<?x?xf32> -> tensor<1x64xf32>
      %cm = ism.reshape %cm2 : tensor<1x64xf32> -> tensor<64xf32>
      %cl2 = ism.load %Lp[%bh, %c] : memref<?x?xf32> -> tensor<1x64xf32>
      %cl = ism.reshape %cl2 : tensor<1x64xf32> -> tensor<64xf32>
      %co3 = ism.load %Op[%bh, %c, %c0] : memref<?x?x?xf32> -> tensor<1x64x64xf32>
      %co = ism.reshape %co3 : tensor<1x64x64xf32> -> tensor<64x64xf32>
      %cmax = ism.reduce %cm axis = 0 : tensor<64xf32> -> f32 {
      ^bb0(%a: f32, %b: f32):
        %x = arith.maximumf %a, %b : f32
        ism.yield %x : f32
      }
      %Mc_new = arith.maximumf %Mc, %cmax : f32
      %Mc_diff = arith.subf %Mc, %Mc_new : f32
      %calpha = math.exp %Mc_diff : f32
      %Mc_news = ism.splat %Mc_new : f32 -> tensor<64xf32>
      %cmd = arith.subf %cm, %Mc_news : tensor<64xf32>
      %cw = math.exp %cmd : tensor<64xf32>
      %cwl = arith.mulf %cw, %cl : tensor<64xf32>
      %clsum = ism.reduce %cwl axis = 0 : tensor<64xf32> -> f32 {
      ^bb0(%a: f32, %b: f32):
        %x = arith.addf %a, %b : f32
        ism.yield %x : f32
      }
      %Lc_scaled = arith.mulf %Lc, %calpha : f32
      %Lc_new = arith.addf %Lc_scaled, %clsum : f32
      %cw2 = ism.expand_dims %cw axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
      %cwb = ism.broadcast %cw2 : tensor<64x1xf32> -> tensor<64x64xf32>
      %cow = arith.mulf %co, %cwb : tensor<64x64xf32>
      %cosum = ism.reduce %cow axis = 0 : tensor<64x64xf32> -> tensor<64xf32> {
      ^bb0(%a: f32, %b: f32):
        %x = arith.addf %a, %b : f32
        ism.yield %x : f32
      }
      %calphas = ism.splat %calpha : f32 -> tensor<64xf32>
      %oacc_scaled = arith.mulf %oacc, %calphas : tensor<64xf32>
      %oacc_new = arith.addf %oacc_scaled, %cosum : tensor<64xf32>
      scf.yield %Mc_new, %Lc_new, %oacc_new : f32, f32, tensor<64xf32>
    }
    %Ls = ism.splat %h#1 : f32 -> tensor<64xf32>
    %final = arith.divf %h#2, %Ls : tensor<64xf32>
    %final16 = arith.truncf %final : tensor<64xf32> to tensor<64xbf16>
    %final2 = ism.reshape %final16 : tensor<64xbf16> -> tensor<1x64xbf16>
    ism.store %final2, %O[%bh, %c0] : tensor<1x64xbf16> -> memref<?x?xbf16>
    // Every program of the head has taken its ticket: reset the counter
    // for the next launch.
    %zero_t = arith.constant dense<0> : tensor<1xi32>
    ism.scatter %zero_t, %Count[%slot] : tensor<1xi32> -> memref<?xi32>[tensor<1xi32>]
  }
  ism.return
}

// Q: Hq x 1 x 64 (RoPE'd queries), K and V: Hkv x max_ctx x 64 (the
// caches), pos: 1 (i32), O: Hq x 64, workspace Mp and Lp: Hq x splits,
// Op: Hq x splits x 64.
func.func @main(%Q: memref<?x?x?xbf16>, %K: memref<?x?x?xbf16>,
                %V: memref<?x?x?xbf16>, %pos: memref<?xi32>,
                %O: memref<?x?xbf16>, %Mp: memref<?x?xf32>,
                %Lp: memref<?x?xf32>, %Op: memref<?x?x?xf32>, %scale: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %H = memref.dim %Q, %c0 : memref<?x?x?xbf16>
  %Q1 = memref.dim %Q, %c1 : memref<?x?x?xbf16>
  %D = memref.dim %Q, %c2 : memref<?x?x?xbf16>
  %splits = memref.dim %Mp, %c1 : memref<?x?xf32>
  %q1 = arith.cmpi eq, %Q1, %c1 : index
  %q2 = arith.cmpi eq, %D, %c64 : index
  %q_ok = arith.andi %q1, %q2 : i1
  ism.assert %q_ok, "Q is {0}x{1}x{2}: this decode takes one token's heads of 64 (heads x 1 x 64)"
      (%H, %Q1, %D) : index, index, index
  %KH = memref.dim %K, %c0 : memref<?x?x?xbf16>
  %KS = memref.dim %K, %c1 : memref<?x?x?xbf16>
  %KD = memref.dim %K, %c2 : memref<?x?x?xbf16>
  %VH = memref.dim %V, %c0 : memref<?x?x?xbf16>
  %VS = memref.dim %V, %c1 : memref<?x?x?xbf16>
  %VD = memref.dim %V, %c2 : memref<?x?x?xbf16>
  %k1 = arith.cmpi eq, %KD, %D : index
  %k2 = arith.cmpi eq, %VH, %KH : index
  %k3 = arith.cmpi eq, %VS, %KS : index
  %k4 = arith.cmpi eq, %VD, %D : index
  %k5 = arith.cmpi ugt, %KH, %c0 : index
  %k12 = arith.andi %k1, %k2 : i1
  %k34 = arith.andi %k3, %k4 : i1
  %k1234 = arith.andi %k12, %k34 : i1
  %kv_shapes = arith.andi %k1234, %k5 : i1
  ism.assert %kv_shapes, "K is {0}x{1}x{2} and V {3}x{4}x{5}: each must be (KV heads)x(max_ctx)x64, the same"
      (%KH, %KS, %KD, %VH, %VS, %VD) : index, index, index, index, index, index
  %rem = arith.remui %H, %KH : index
  %grouped = arith.cmpi eq, %rem, %c0 : index
  ism.assert %grouped, "{0} query heads and {1} KV heads: the query heads must be a multiple of the KV heads"
      (%H, %KH) : index, index
  %PN = memref.dim %pos, %c0 : memref<?xi32>
  %p_ok = arith.cmpi eq, %PN, %c1 : index
  ism.assert %p_ok, "pos has {0} elements: it must be one i32" (%PN) : index
  %OH = memref.dim %O, %c0 : memref<?x?xbf16>
  %OD = memref.dim %O, %c1 : memref<?x?xbf16>
  %o1 = arith.cmpi eq, %OH, %H : index
  %o2 = arith.cmpi eq, %OD, %D : index
  %o_ok = arith.andi %o1, %o2 : i1
  ism.assert %o_ok, "O is {0}x{1}: it must be {2}x64" (%OH, %OD, %H)
      : index, index, index
  %MH = memref.dim %Mp, %c0 : memref<?x?xf32>
  %LH = memref.dim %Lp, %c0 : memref<?x?xf32>
  %LC = memref.dim %Lp, %c1 : memref<?x?xf32>
  %PH = memref.dim %Op, %c0 : memref<?x?x?xf32>
  %PC = memref.dim %Op, %c1 : memref<?x?x?xf32>
  %PD = memref.dim %Op, %c2 : memref<?x?x?xf32>
  %w1 = arith.cmpi eq, %MH, %H : index
  %w2 = arith.cmpi eq, %LH, %H : index
  %w3 = arith.cmpi eq, %LC, %splits : index
  %w4 = arith.cmpi eq, %PH, %H : index
  %w5 = arith.cmpi eq, %PC, %splits : index
  %w6 = arith.cmpi eq, %PD, %D : index
  %w7 = arith.cmpi ugt, %splits, %c0 : index
  %w12 = arith.andi %w1, %w2 : i1
  %w34 = arith.andi %w3, %w4 : i1
  %w56 = arith.andi %w5, %w6 : i1
  %w1234 = arith.andi %w12, %w34 : i1
  %w567 = arith.andi %w56, %w7 : i1
  %w_ok = arith.andi %w1234, %w567 : i1
  ism.assert %w_ok, "the workspace Mp {0}x{1}, Lp {2}x{3}, Op {4}x{5}x{6}: Mp and Lp must be {7}x(splits), Op {7}x(splits)x64, splits at least 1"
      (%MH, %splits, %LH, %LC, %PH, %PC, %PD, %H)
      : index, index, index, index, index, index, index, index
  // The tickets' counters: kept per stream by the runtime, so launches on
  // two streams do not share them.
  %Count = memref.alloc(%H) {ism.zeroed} : memref<?xi32>
  ism.launch @decode grid(%splits, %H)
      (%Q, %K, %V, %pos, %O, %Mp, %Lp, %Op, %Count, %scale)
      : (memref<?x?x?xbf16>, memref<?x?x?xbf16>, memref<?x?x?xbf16>,
         memref<?xi32>, memref<?x?xbf16>, memref<?x?xf32>, memref<?x?xf32>,
         memref<?x?x?xf32>, memref<?xi32>, f32)
  memref.dealloc %Count : memref<?xi32>
  return
}
