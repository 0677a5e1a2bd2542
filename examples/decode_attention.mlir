// Split-KV decode attention in bf16 with fp32 math: one query token per
// (batch x head) against a long KV cache, O = softmax(scale * q K^T) V.
// Q and O are (batch * heads, 128), K and V (batch * heads, seq, 128).
//
// The keys of each head are split in as many chunks as the workspace has
// columns (Mp and Lp are (batch * heads, splits), Op (batch * heads,
// splits, 128)); one program runs per (chunk, head), in one launch. Each
// runs an online softmax over its keys in blocks of 64, kept separately for
// 8 lanes of keys (so that the loop's reductions stay within a warp and
// need no shared memory or barrier) and merged at the end, and leaves the
// chunk's maximum score m, sum of exp(score - m) l and unnormalised output
// in the workspace. Then it takes a ticket from the head's counter (Count,
// (batch * heads) int32 that the host function allocates as an ism.zeroed
// temporary: zero when made, and the kernel leaves it at zero): the program
// with the last ticket sees every chunk of its head (the ticket's acq_rel)
// and merges them, 64 chunks at a time: with M = max m,
// O = sum(exp(m - M) * out) / sum(exp(m - M) * l).
// Chunks past the end of a short sequence are empty (m = -inf, l = 0).
// The kernel is memory-bound: K and V are read once.

ism.kernel @decode(%Q: memref<?x?xbf16>, %K: memref<?x?x?xbf16>,
                   %V: memref<?x?x?xbf16>, %O: memref<?x?xbf16>,
                   %Mp: memref<?x?xf32>, %Lp: memref<?x?xf32>,
                   %Op: memref<?x?x?xf32>, %Count: memref<?xi32>,
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
    %zero_o = arith.constant dense<0.0> : tensor<128xf32>
    %h:3 = scf.for %c = %c0 to %splits step %c64
        iter_args(%Mc = %ninf, %Lc = %zero, %oacc = %zero_o)
        -> (f32, f32, tensor<128xf32>) {
      %cm2 = ism.load %Mp[%bh, %c] {padding = 0xFF800000 : f32}
          : memref<?x?xf32> -> tensor<1x64xf32>
      %cm = ism.reshape %cm2 : tensor<1x64xf32> -> tensor<64xf32>
      %cl2 = ism.load %Lp[%bh, %c] : memref<?x?xf32> -> tensor<1x64xf32>
      %cl = ism.reshape %cl2 : tensor<1x64xf32> -> tensor<64xf32>
      %co3 = ism.load %Op[%bh, %c, %c0] : memref<?x?x?xf32> -> tensor<1x64x128xf32>
      %co = ism.reshape %co3 : tensor<1x64x128xf32> -> tensor<64x128xf32>
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
      %cwb = ism.broadcast %cw2 : tensor<64x1xf32> -> tensor<64x128xf32>
      %cow = arith.mulf %co, %cwb : tensor<64x128xf32>
      %cosum = ism.reduce %cow axis = 0 : tensor<64x128xf32> -> tensor<128xf32> {
      ^bb0(%a: f32, %b: f32):
        %x = arith.addf %a, %b : f32
        ism.yield %x : f32
      }
      %calphas = ism.splat %calpha : f32 -> tensor<128xf32>
      %oacc_scaled = arith.mulf %oacc, %calphas : tensor<128xf32>
      %oacc_new = arith.addf %oacc_scaled, %cosum : tensor<128xf32>
      scf.yield %Mc_new, %Lc_new, %oacc_new : f32, f32, tensor<128xf32>
    }
    %Ls = ism.splat %h#1 : f32 -> tensor<128xf32>
    %final = arith.divf %h#2, %Ls : tensor<128xf32>
    %final16 = arith.truncf %final : tensor<128xf32> to tensor<128xbf16>
    %final2 = ism.reshape %final16 : tensor<128xbf16> -> tensor<1x128xbf16>
    ism.store %final2, %O[%bh, %c0] : tensor<1x128xbf16> -> memref<?x?xbf16>
    // Every program of the head has taken its ticket: reset the counter
    // for the next launch.
    %zero_t = arith.constant dense<0> : tensor<1xi32>
    ism.scatter %zero_t, %Count[%slot] : tensor<1xi32> -> memref<?xi32>[tensor<1xi32>]
  }
  ism.return
}

func.func @main(%Q: memref<?x?xbf16>, %K: memref<?x?x?xbf16>,
                %V: memref<?x?x?xbf16>, %O: memref<?x?xbf16>,
                %Mp: memref<?x?xf32>, %Lp: memref<?x?xf32>,
                %Op: memref<?x?x?xf32>, %scale: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c128 = arith.constant 128 : index
  %BH = memref.dim %Q, %c0 : memref<?x?xbf16>
  %D = memref.dim %Q, %c1 : memref<?x?xbf16>
  %splits = memref.dim %Mp, %c1 : memref<?x?xf32>
  %d_ok = arith.cmpi eq, %D, %c128 : index
  ism.assert %d_ok, "Q is {0}x{1}: this decode takes a head dimension of 128"
      (%BH, %D) : index, index
  %KB = memref.dim %K, %c0 : memref<?x?x?xbf16>
  %KS = memref.dim %K, %c1 : memref<?x?x?xbf16>
  %KD = memref.dim %K, %c2 : memref<?x?x?xbf16>
  %VB = memref.dim %V, %c0 : memref<?x?x?xbf16>
  %VS = memref.dim %V, %c1 : memref<?x?x?xbf16>
  %VD = memref.dim %V, %c2 : memref<?x?x?xbf16>
  %k1 = arith.cmpi eq, %KB, %BH : index
  %k2 = arith.cmpi eq, %KD, %D : index
  %v1 = arith.cmpi eq, %VB, %BH : index
  %v2 = arith.cmpi eq, %VS, %KS : index
  %v3 = arith.cmpi eq, %VD, %D : index
  %k_ok = arith.andi %k1, %k2 : i1
  %v12 = arith.andi %v1, %v2 : i1
  %v_ok = arith.andi %v12, %v3 : i1
  %kv_ok = arith.andi %k_ok, %v_ok : i1
  ism.assert %kv_ok, "K is {0}x{1}x{2} and V {3}x{4}x{5}: each must be {6}x(keys)x{7}, the same"
      (%KB, %KS, %KD, %VB, %VS, %VD, %BH, %D)
      : index, index, index, index, index, index, index, index
  %OB = memref.dim %O, %c0 : memref<?x?xbf16>
  %OD = memref.dim %O, %c1 : memref<?x?xbf16>
  %o1 = arith.cmpi eq, %OB, %BH : index
  %o2 = arith.cmpi eq, %OD, %D : index
  %o_ok = arith.andi %o1, %o2 : i1
  ism.assert %o_ok, "O is {0}x{1} but Q is {2}x{3}" (%OB, %OD, %BH, %D)
      : index, index, index, index
  %MB = memref.dim %Mp, %c0 : memref<?x?xf32>
  %LB = memref.dim %Lp, %c0 : memref<?x?xf32>
  %LC = memref.dim %Lp, %c1 : memref<?x?xf32>
  %PB = memref.dim %Op, %c0 : memref<?x?x?xf32>
  %PC = memref.dim %Op, %c1 : memref<?x?x?xf32>
  %PD = memref.dim %Op, %c2 : memref<?x?x?xf32>
  %w1 = arith.cmpi eq, %MB, %BH : index
  %w2 = arith.cmpi eq, %LB, %BH : index
  %w3 = arith.cmpi eq, %LC, %splits : index
  %w4 = arith.cmpi eq, %PB, %BH : index
  %w5 = arith.cmpi eq, %PC, %splits : index
  %w6 = arith.cmpi eq, %PD, %D : index
  %w12 = arith.andi %w1, %w2 : i1
  %w34 = arith.andi %w3, %w4 : i1
  %w56 = arith.andi %w5, %w6 : i1
  %w1234 = arith.andi %w12, %w34 : i1
  %w_ok = arith.andi %w1234, %w56 : i1
  ism.assert %w_ok, "the workspace Mp {0}x{1}, Lp {2}x{3}, Op {4}x{5}x{6}: Mp and Lp must be {7}x(splits), Op {7}x(splits)x{8}"
      (%MB, %splits, %LB, %LC, %PB, %PC, %PD, %BH, %D)
      : index, index, index, index, index, index, index, index, index
  // The tickets' counters: kept per stream by the runtime, so launches on
  // two streams do not share them.
  %Count = memref.alloc(%BH) {ism.zeroed} : memref<?xi32>
  ism.launch @decode grid(%splits, %BH)
      (%Q, %K, %V, %O, %Mp, %Lp, %Op, %Count, %scale)
      : (memref<?x?xbf16>, memref<?x?x?xbf16>, memref<?x?x?xbf16>,
         memref<?x?xbf16>, memref<?x?xf32>, memref<?x?xf32>,
         memref<?x?x?xf32>, memref<?xi32>, f32)
  memref.dealloc %Count : memref<?xi32>
  return
}
