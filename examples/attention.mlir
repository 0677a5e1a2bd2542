// Flash-attention forward in bf16 with fp32 softmax and accumulation:
// O = softmax(scale * Q K^T [+ causal mask]) V per (batch x head), plus the
// log-sum-exp of each score row (LSE, for a backward pass). Q, K, V and O
// are (batch * heads, seq, 64); LSE is (batch * heads, seq). scale > 0.
//
// One program per 64 query rows of one head. It walks the keys in blocks of
// 64 with an online softmax: the running row maximum m and row sum l, and
// the output accumulator acc, which is rescaled by exp(m_old - m_new)
// whenever the maximum grows (in base 2: the scores are scaled by
// scale * log2(e)). Keys past the end of the sequence (and, when
// causal != 0, keys after the query) score -inf: the blocks that need no
// mask (every key inside the sequence and, when causal, before the
// program's first query) run in a loop of their own, and only the rest
// (the diagonal block, the sequence's last partial block) in a loop that
// masks. Query rows past the end compute on zeros and are not stored. Both
// products run on tensor cores (wgmma on sm_90a, mma.sync on sm_80),
// P = exp2(S - m) the A operand of the second from registers, K and V
// copied ahead with cp.async (num_stages). bench/attention.py's
// module_text(64) writes this program; its other head dims and blocks
// are the same program with other constants. The fastest form on the H200
// at head dim 128 (128x128 blocks, 8 warps, the next block's S issued
// before this block's P V, block 0 and the last P V in loops of their
// own) is module_text(128, 128, 128, 8, stages=2, pipelined=True,
// peeled=True): test/Pipelines/Inputs/attention-peeled.mlir.

ism.kernel @attention(%Q: memref<?x?x?xbf16>, %K: memref<?x?x?xbf16>,
                      %V: memref<?x?x?xbf16>, %O: memref<?x?x?xbf16>,
                      %LSE: memref<?x?xf32>, %scale: f32, %causal: i32)
    attributes {num_warps = 4 : i32} {
  %pm = ism.program_id x : index
  %bh = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0i = arith.constant 0 : i32
  %bm = arith.constant 64 : index
  %bn = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %S = memref.dim %K, %c1 : memref<?x?x?xbf16>
  %is_causal = arith.cmpi ne, %causal, %c0i : i32
  // Causal: no key past the block's last query.
  %m_end = arith.addi %m0, %bm : index
  %diag_end = arith.minui %m_end, %S : index
  %n_end = arith.select %is_causal, %diag_end, %S : index
  %q3 = ism.load %Q[%bh, %m0, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
  %q = ism.reshape %q3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
  %ninf = arith.constant dense<0xFF800000> : tensor<64xf32>
  %zero_l = arith.constant dense<0.0> : tensor<64xf32>
  %zero_acc = arith.constant dense<0.0> : tensor<64x64xf32>
  %zero_s = arith.constant dense<0.0> : tensor<64x64xf32>
  %ninf_s = arith.constant dense<0xFF800000> : tensor<64x64xf32>
  // Scores in base 2: exp(x) = exp2(x * log2(e)), folded into the scale
  // (positive, so the row maximum of the scaled scores is the scaled
  // maximum, and each p = exp2(qk * scale2 - m) is one FMA and one ex2).
  %log2e = arith.constant 1.44269504088896340736 : f32
  %scale2 = arith.mulf %scale, %log2e : f32
  %scales = ism.splat %scale2 : f32 -> tensor<64x64xf32>
  %scales1 = ism.splat %scale2 : f32 -> tensor<64xf32>
  %iota_m = ism.range 0 to 64 : tensor<64xi32>
  %iota_n = ism.range 0 to 64 : tensor<64xi32>
  %m0i = arith.index_cast %m0 : index to i32
  %m0s = ism.splat %m0i : i32 -> tensor<64xi32>
  %rows1 = arith.addi %iota_m, %m0s : tensor<64xi32>
  %rows2 = ism.expand_dims %rows1 axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %rows = ism.broadcast %rows2 : tensor<64x1xi32> -> tensor<64x64xi32>
  %Si = arith.index_cast %S : index to i32
  %Ss = ism.splat %Si : i32 -> tensor<64x64xi32>
  %causals = ism.splat %is_causal : i1 -> tensor<64x64xi1>
  %all = arith.constant dense<true> : tensor<64x64xi1>
  // Blocks below n_full need no mask.
  %s_blocks = arith.divui %S, %bn : index
  %s_full = arith.muli %s_blocks, %bn : index
  %m_blocks = arith.divui %m0, %bn : index
  %m_full = arith.muli %m_blocks, %bn : index
  %c_full = arith.minui %m_full, %s_full : index
  %n_full = arith.select %is_causal, %c_full, %s_full : index
  %n_rest = arith.maxui %n_full, %n_end : index
  %r0:3 = scf.for %n = %c0 to %n_full step %bn
      iter_args(%m = %ninf, %l = %zero_l, %acc = %zero_acc)
      -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
    %k3 = ism.load %K[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %k = ism.reshape %k3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %qk = ism.dot %q, %kt, %zero_s
        : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
    // Online softmax.
    %rowmax = ism.reduce %qk axis = 1 : tensor<64x64xf32> -> tensor<64xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.maximumf %a, %b : f32
      ism.yield %x : f32
    }
    %rowmax2 = arith.mulf %rowmax, %scales1 : tensor<64xf32>
    %m_new = arith.maximumf %m, %rowmax2 : tensor<64xf32>
    %neg_m = arith.negf %m_new : tensor<64xf32>
    %neg_m2 = ism.expand_dims %neg_m axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %neg_mb = ism.broadcast %neg_m2 : tensor<64x1xf32> -> tensor<64x64xf32>
    %shifted = math.fma %qk, %scales, %neg_mb : tensor<64x64xf32>
    %p = math.exp2 %shifted : tensor<64x64xf32>
    %m_diff = arith.subf %m, %m_new : tensor<64xf32>
    %alpha = math.exp2 %m_diff : tensor<64xf32>
    %rowsum = ism.reduce %p axis = 1 : tensor<64x64xf32> -> tensor<64xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }
    %l_scaled = arith.mulf %l, %alpha : tensor<64xf32>
    %l_new = arith.addf %l_scaled, %rowsum : tensor<64xf32>
    %alpha2 = ism.expand_dims %alpha axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %alphab = ism.broadcast %alpha2 : tensor<64x1xf32> -> tensor<64x64xf32>
    %acc_scaled = arith.mulf %acc, %alphab : tensor<64x64xf32>
    %p16 = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
    %v3 = ism.load %V[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %v = ism.reshape %v3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %acc_new = ism.dot %p16, %v, %acc_scaled
        : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %m_new, %l_new, %acc_new
        : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
  }
  %r:3 = scf.for %n = %n_full to %n_rest step %bn
      iter_args(%m = %r0#0, %l = %r0#1, %acc = %r0#2)
      -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
    %k3 = ism.load %K[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %k = ism.reshape %k3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %qk = ism.dot %q, %kt, %zero_s
        : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>

    // Mask: key < S, and key <= query when causal.
    %ni = arith.index_cast %n : index to i32
    %ns = ism.splat %ni : i32 -> tensor<64xi32>
    %cols1 = arith.addi %iota_n, %ns : tensor<64xi32>
    %cols2 = ism.expand_dims %cols1 axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
    %cols = ism.broadcast %cols2 : tensor<1x64xi32> -> tensor<64x64xi32>
    %in_seq = arith.cmpi slt, %cols, %Ss : tensor<64x64xi32>
    %past = arith.cmpi sgt, %cols, %rows : tensor<64x64xi32>
    %hidden = arith.andi %past, %causals : tensor<64x64xi1>
    %visible = arith.xori %hidden, %all : tensor<64x64xi1>
    %keep = arith.andi %in_seq, %visible : tensor<64x64xi1>
    %s = arith.select %keep, %qk, %ninf_s
        : tensor<64x64xi1>, tensor<64x64xf32>
    %rowmax = ism.reduce %s axis = 1 : tensor<64x64xf32> -> tensor<64xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.maximumf %a, %b : f32
      ism.yield %x : f32
    }
    %rowmax2 = arith.mulf %rowmax, %scales1 : tensor<64xf32>
    %m_new = arith.maximumf %m, %rowmax2 : tensor<64xf32>
    %neg_m = arith.negf %m_new : tensor<64xf32>
    %neg_m2 = ism.expand_dims %neg_m axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %neg_mb = ism.broadcast %neg_m2 : tensor<64x1xf32> -> tensor<64x64xf32>
    %shifted = math.fma %s, %scales, %neg_mb : tensor<64x64xf32>
    %p = math.exp2 %shifted : tensor<64x64xf32>
    %m_diff = arith.subf %m, %m_new : tensor<64xf32>
    %alpha = math.exp2 %m_diff : tensor<64xf32>
    %rowsum = ism.reduce %p axis = 1 : tensor<64x64xf32> -> tensor<64xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }
    %l_scaled = arith.mulf %l, %alpha : tensor<64xf32>
    %l_new = arith.addf %l_scaled, %rowsum : tensor<64xf32>
    %alpha2 = ism.expand_dims %alpha axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %alphab = ism.broadcast %alpha2 : tensor<64x1xf32> -> tensor<64x64xf32>
    %acc_scaled = arith.mulf %acc, %alphab : tensor<64x64xf32>
    %p16 = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
    %v3 = ism.load %V[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x64x64xbf16>
    %v = ism.reshape %v3 : tensor<1x64x64xbf16> -> tensor<64x64xbf16>
    %acc_new = ism.dot %p16, %v, %acc_scaled
        : tensor<64x64xbf16> * tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %m_new, %l_new, %acc_new
        : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
  }
  %l2 = ism.expand_dims %r#1 axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %lb = ism.broadcast %l2 : tensor<64x1xf32> -> tensor<64x64xf32>
  %o = arith.divf %r#2, %lb : tensor<64x64xf32>
  %o16 = arith.truncf %o : tensor<64x64xf32> to tensor<64x64xbf16>
  %o3 = ism.reshape %o16 : tensor<64x64xbf16> -> tensor<1x64x64xbf16>
  ism.store %o3, %O[%bh, %m0, %c0] : tensor<1x64x64xbf16> -> memref<?x?x?xbf16>
  // LSE = m + ln(l), m in base 2: m * ln(2) + ln(l).
  %ln2 = arith.constant dense<0.69314718055994530942> : tensor<64xf32>
  %m_nat = arith.mulf %r#0, %ln2 : tensor<64xf32>
  %log_l = math.log %r#1 : tensor<64xf32>
  %lse1 = arith.addf %m_nat, %log_l : tensor<64xf32>
  %lse = ism.reshape %lse1 : tensor<64xf32> -> tensor<1x64xf32>
  ism.store %lse, %LSE[%bh, %m0] : tensor<1x64xf32> -> memref<?x?xf32>
  ism.return
}

func.func @main(%Q: memref<?x?x?xbf16>, %K: memref<?x?x?xbf16>,
                %V: memref<?x?x?xbf16>, %O: memref<?x?x?xbf16>,
                %LSE: memref<?x?xf32>, %scale: f32, %causal: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %block = arith.constant 64 : index
  %c2 = arith.constant 2 : index
  %BH = memref.dim %Q, %c0 : memref<?x?x?xbf16>
  %S = memref.dim %Q, %c1 : memref<?x?x?xbf16>
  %D = memref.dim %Q, %c2 : memref<?x?x?xbf16>
  %c64 = arith.constant 64 : index
  %d_ok = arith.cmpi eq, %D, %c64 : index
  ism.assert %d_ok, "Q is {0}x{1}x{2}: this attention takes a head dimension of 64"
      (%BH, %S, %D) : index, index, index
  %KB = memref.dim %K, %c0 : memref<?x?x?xbf16>
  %KS = memref.dim %K, %c1 : memref<?x?x?xbf16>
  %KD = memref.dim %K, %c2 : memref<?x?x?xbf16>
  %VB = memref.dim %V, %c0 : memref<?x?x?xbf16>
  %VS = memref.dim %V, %c1 : memref<?x?x?xbf16>
  %VD = memref.dim %V, %c2 : memref<?x?x?xbf16>
  %OB = memref.dim %O, %c0 : memref<?x?x?xbf16>
  %OS = memref.dim %O, %c1 : memref<?x?x?xbf16>
  %OD = memref.dim %O, %c2 : memref<?x?x?xbf16>
  %k1 = arith.cmpi eq, %KB, %BH : index
  %k2 = arith.cmpi eq, %KS, %S : index
  %k3 = arith.cmpi eq, %KD, %D : index
  %v1 = arith.cmpi eq, %VB, %BH : index
  %v2 = arith.cmpi eq, %VS, %S : index
  %v3 = arith.cmpi eq, %VD, %D : index
  %o1 = arith.cmpi eq, %OB, %BH : index
  %o2 = arith.cmpi eq, %OS, %S : index
  %o3 = arith.cmpi eq, %OD, %D : index
  %k12 = arith.andi %k1, %k2 : i1
  %k_ok = arith.andi %k12, %k3 : i1
  %v12 = arith.andi %v1, %v2 : i1
  %v_ok = arith.andi %v12, %v3 : i1
  %o12 = arith.andi %o1, %o2 : i1
  %o_ok = arith.andi %o12, %o3 : i1
  %kv_ok = arith.andi %k_ok, %v_ok : i1
  %all_ok = arith.andi %kv_ok, %o_ok : i1
  ism.assert %all_ok, "Q is {0}x{1}x{2}, K {3}x{4}x{5}, V {6}x{7}x{8} and O {9}x{10}x{11}: they must have the same shape"
      (%BH, %S, %D, %KB, %KS, %KD, %VB, %VS, %VD, %OB, %OS, %OD)
      : index, index, index, index, index, index, index, index, index, index,
        index, index
  %LB = memref.dim %LSE, %c0 : memref<?x?xf32>
  %LS = memref.dim %LSE, %c1 : memref<?x?xf32>
  %l1 = arith.cmpi eq, %LB, %BH : index
  %l2 = arith.cmpi eq, %LS, %S : index
  %l_ok = arith.andi %l1, %l2 : i1
  ism.assert %l_ok, "LSE is {0}x{1}; it must be {2}x{3}" (%LB, %LS, %BH, %S)
      : index, index, index, index
  %gm = arith.ceildivui %S, %block : index
  ism.launch @attention grid(%gm, %BH) (%Q, %K, %V, %O, %LSE, %scale, %causal)
      : (memref<?x?x?xbf16>, memref<?x?x?xbf16>, memref<?x?x?xbf16>,
         memref<?x?x?xbf16>, memref<?x?xf32>, f32, i32)
  return
}
