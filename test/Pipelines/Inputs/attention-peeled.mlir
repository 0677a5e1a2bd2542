// bench/attention.py module_text(128, 128, 128, 8, stages=2, pipelined=True,
// peeled=True): block 0's S and softmax and the last block's P V in loops
// of their own (K only, V only in the ring's stages), between them the
// pipelined loops; no wasted first P V or masked last S.
ism.kernel @attention(%Q: memref<?x?x?xbf16>, %K: memref<?x?x?xbf16>, %V: memref<?x?x?xbf16>, %O: memref<?x?x?xbf16>,
                      %LSE: memref<?x?xf32>, %scale: f32, %causal: i32)
    attributes {num_warps = 8 : i32, num_stages = 2 : i32} {
  %pm = ism.program_id x : index
  %bh = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0i = arith.constant 0 : i32
  %bm = arith.constant 128 : index
  %bn = arith.constant 128 : index
  %m0 = arith.muli %pm, %bm : index
  %S = memref.dim %K, %c1 : memref<?x?x?xbf16>
  %is_causal = arith.cmpi ne, %causal, %c0i : i32
  %m_end = arith.addi %m0, %bm : index
  %diag_end = arith.minui %m_end, %S : index
  %n_end = arith.select %is_causal, %diag_end, %S : index
  %q3 = ism.load %Q[%bh, %m0, %c0] : memref<?x?x?xbf16> -> tensor<1x128x128xbf16>
  %q = ism.reshape %q3 : tensor<1x128x128xbf16> -> tensor<128x128xbf16>
  %ninf = arith.constant dense<0xFF800000> : tensor<128xf32>
  %zero_l = arith.constant dense<0.0> : tensor<128xf32>
  %zero_acc = arith.constant dense<0.0> : tensor<128x128xf32>
  %zero_s = arith.constant dense<0.0> : tensor<128x128xf32>
  %ninf_s = arith.constant dense<0xFF800000> : tensor<128x128xf32>
  // Scores in base 2: exp(x) = exp2(x * log2(e)), folded into the scale
  // (positive, so the row maximum of the scaled scores is the scaled
  // maximum, and each p = exp2(qk * scale2 - m) is one FMA and one ex2).
  %log2e = arith.constant 1.44269504088896340736 : f32
  %scale2 = arith.mulf %scale, %log2e : f32
  %scales = ism.splat %scale2 : f32 -> tensor<128x128xf32>
  %scales1 = ism.splat %scale2 : f32 -> tensor<128xf32>
  %iota_m = ism.range 0 to 128 : tensor<128xi32>
  %iota_n = ism.range 0 to 128 : tensor<128xi32>
  %m0i = arith.index_cast %m0 : index to i32
  %m0s = ism.splat %m0i : i32 -> tensor<128xi32>
  %rows1 = arith.addi %iota_m, %m0s : tensor<128xi32>
  %rows2 = ism.expand_dims %rows1 axis = 1 : tensor<128xi32> -> tensor<128x1xi32>
  %rows = ism.broadcast %rows2 : tensor<128x1xi32> -> tensor<128x128xi32>
  %Si = arith.index_cast %S : index to i32
  %Ss = ism.splat %Si : i32 -> tensor<128x128xi32>
  %causals = ism.splat %is_causal : i1 -> tensor<128x128xi1>
  %all = arith.constant dense<true> : tensor<128x128xi1>
  %s_blocks = arith.divui %S, %bn : index
  %s_full = arith.muli %s_blocks, %bn : index
  %m_blocks = arith.divui %m0, %bn : index
  %m_full = arith.muli %m_blocks, %bn : index
  %c_full = arith.minui %m_full, %s_full : index
  %n_full = arith.select %is_causal, %c_full, %s_full : index
  %n_rest = arith.maxui %n_full, %n_end : index
  %blocks = arith.ceildivui %n_rest, %bn : index
  %n_last = arith.muli %blocks, %bn : index
  // One trip each, bounds that the canonicalizer does not fold to one
  // trip (it would inline the loop and leave its product outside any ring
  // loop): min(bn, S) is at least 1 and at most the step.
  %one_block = arith.minui %bn, %S : index
  %n_last1 = arith.addi %n_last, %one_block : index
  %n_mid = arith.maxui %n_full, %bn : index
  %zero_p = arith.constant dense<0.0> : tensor<128x128xbf16>
  %rf:3 = scf.for %n = %c0 to %one_block step %bn
      iter_args(%m = %ninf, %l = %zero_l, %p_prev = %zero_p)
      -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xbf16>) {
    %k3 = ism.load %K[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x128x128xbf16>
    %k = ism.reshape %k3 : tensor<1x128x128xbf16> -> tensor<128x128xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<128x128xbf16> -> tensor<128x128xbf16>
    %qk = ism.dot %q, %kt, %zero_s
        : tensor<128x128xbf16> * tensor<128x128xbf16> -> tensor<128x128xf32>
    %ni = arith.index_cast %n : index to i32
    %ns = ism.splat %ni : i32 -> tensor<128xi32>
    %cols1 = arith.addi %iota_n, %ns : tensor<128xi32>
    %cols2 = ism.expand_dims %cols1 axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
    %cols = ism.broadcast %cols2 : tensor<1x128xi32> -> tensor<128x128xi32>
    %in_seq = arith.cmpi slt, %cols, %Ss : tensor<128x128xi32>
    %past = arith.cmpi sgt, %cols, %rows : tensor<128x128xi32>
    %hidden = arith.andi %past, %causals : tensor<128x128xi1>
    %visible = arith.xori %hidden, %all : tensor<128x128xi1>
    %keep = arith.andi %in_seq, %visible : tensor<128x128xi1>
    %s = arith.select %keep, %qk, %ninf_s
        : tensor<128x128xi1>, tensor<128x128xf32>

    %rowmax = ism.reduce %s axis = 1 : tensor<128x128xf32> -> tensor<128xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.maximumf %a, %b : f32
      ism.yield %x : f32
    }
    %rowmax2 = arith.mulf %rowmax, %scales1 : tensor<128xf32>
    %m_new = arith.maximumf %m, %rowmax2 : tensor<128xf32>
    %neg_m = arith.negf %m_new : tensor<128xf32>
    %neg_m2 = ism.expand_dims %neg_m axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %neg_mb = ism.broadcast %neg_m2 : tensor<128x1xf32> -> tensor<128x128xf32>
    %shifted = math.fma %s, %scales, %neg_mb : tensor<128x128xf32>
    %p = math.exp2 %shifted : tensor<128x128xf32>
    %rowsum = ism.reduce %p axis = 1 : tensor<128x128xf32> -> tensor<128xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }
    %p16 = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xbf16>
    scf.yield %m_new, %rowsum, %p16 : tensor<128xf32>, tensor<128xf32>, tensor<128x128xbf16>
  }
  %r0:4 = scf.for %n = %bn to %n_full step %bn
      iter_args(%m = %rf#0, %l = %rf#1, %acc = %zero_acc,
                %p_prev = %rf#2) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>, tensor<128x128xbf16>) {
    // This block's S first, then the previous block's P V: the softmax
    // below runs while P V is on the tensor cores.
    %k3 = ism.load %K[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x128x128xbf16>
    %k = ism.reshape %k3 : tensor<1x128x128xbf16> -> tensor<128x128xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<128x128xbf16> -> tensor<128x128xbf16>
    %qk = ism.dot %q, %kt, %zero_s
        : tensor<128x128xbf16> * tensor<128x128xbf16> -> tensor<128x128xf32>
    %n_prev = arith.subi %n, %bn : index
    %v3 = ism.load %V[%bh, %n_prev, %c0] : memref<?x?x?xbf16> -> tensor<1x128x128xbf16>
    %v = ism.reshape %v3 : tensor<1x128x128xbf16> -> tensor<128x128xbf16>
    %acc_pv = ism.dot %p_prev, %v, %acc
        : tensor<128x128xbf16> * tensor<128x128xbf16> -> tensor<128x128xf32>

    %rowmax = ism.reduce %qk axis = 1 : tensor<128x128xf32> -> tensor<128xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.maximumf %a, %b : f32
      ism.yield %x : f32
    }
    %rowmax2 = arith.mulf %rowmax, %scales1 : tensor<128xf32>
    %m_new = arith.maximumf %m, %rowmax2 : tensor<128xf32>
    %neg_m = arith.negf %m_new : tensor<128xf32>
    %neg_m2 = ism.expand_dims %neg_m axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %neg_mb = ism.broadcast %neg_m2 : tensor<128x1xf32> -> tensor<128x128xf32>
    %shifted = math.fma %qk, %scales, %neg_mb : tensor<128x128xf32>
    %p = math.exp2 %shifted : tensor<128x128xf32>
    %rowsum = ism.reduce %p axis = 1 : tensor<128x128xf32> -> tensor<128xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }
    %m_diff = arith.subf %m, %m_new : tensor<128xf32>
    %alpha = math.exp2 %m_diff : tensor<128xf32>
    %l_scaled = arith.mulf %l, %alpha : tensor<128xf32>
    %l_new = arith.addf %l_scaled, %rowsum : tensor<128xf32>
    %alpha2 = ism.expand_dims %alpha axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %alphab = ism.broadcast %alpha2 : tensor<128x1xf32> -> tensor<128x128xf32>
    %acc_scaled = arith.mulf %acc_pv, %alphab : tensor<128x128xf32>

    // P in bf16 only now, after P V is done with the previous one (the
    // loop carries both in the same registers).
    %p16 = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xbf16>
    scf.yield %m_new, %l_new, %acc_scaled, %p16 : tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>, tensor<128x128xbf16>
  }
  %r:4 = scf.for %n = %n_mid to %n_last step %bn
      iter_args(%m = %r0#0, %l = %r0#1, %acc = %r0#2,
                %p_prev = %r0#3) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>, tensor<128x128xbf16>) {
    // This block's S first, then the previous block's P V: the softmax
    // below runs while P V is on the tensor cores.
    %k3 = ism.load %K[%bh, %n, %c0] : memref<?x?x?xbf16> -> tensor<1x128x128xbf16>
    %k = ism.reshape %k3 : tensor<1x128x128xbf16> -> tensor<128x128xbf16>
    %kt = ism.trans %k order = [1, 0] : tensor<128x128xbf16> -> tensor<128x128xbf16>
    %qk = ism.dot %q, %kt, %zero_s
        : tensor<128x128xbf16> * tensor<128x128xbf16> -> tensor<128x128xf32>
    %n_prev = arith.subi %n, %bn : index
    %v3 = ism.load %V[%bh, %n_prev, %c0] : memref<?x?x?xbf16> -> tensor<1x128x128xbf16>
    %v = ism.reshape %v3 : tensor<1x128x128xbf16> -> tensor<128x128xbf16>
    %acc_pv = ism.dot %p_prev, %v, %acc
        : tensor<128x128xbf16> * tensor<128x128xbf16> -> tensor<128x128xf32>
    %ni = arith.index_cast %n : index to i32
    %ns = ism.splat %ni : i32 -> tensor<128xi32>
    %cols1 = arith.addi %iota_n, %ns : tensor<128xi32>
    %cols2 = ism.expand_dims %cols1 axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
    %cols = ism.broadcast %cols2 : tensor<1x128xi32> -> tensor<128x128xi32>
    %in_seq = arith.cmpi slt, %cols, %Ss : tensor<128x128xi32>
    %past = arith.cmpi sgt, %cols, %rows : tensor<128x128xi32>
    %hidden = arith.andi %past, %causals : tensor<128x128xi1>
    %visible = arith.xori %hidden, %all : tensor<128x128xi1>
    %keep = arith.andi %in_seq, %visible : tensor<128x128xi1>
    %s = arith.select %keep, %qk, %ninf_s
        : tensor<128x128xi1>, tensor<128x128xf32>

    %rowmax = ism.reduce %s axis = 1 : tensor<128x128xf32> -> tensor<128xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.maximumf %a, %b : f32
      ism.yield %x : f32
    }
    %rowmax2 = arith.mulf %rowmax, %scales1 : tensor<128xf32>
    %m_new = arith.maximumf %m, %rowmax2 : tensor<128xf32>
    %neg_m = arith.negf %m_new : tensor<128xf32>
    %neg_m2 = ism.expand_dims %neg_m axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %neg_mb = ism.broadcast %neg_m2 : tensor<128x1xf32> -> tensor<128x128xf32>
    %shifted = math.fma %s, %scales, %neg_mb : tensor<128x128xf32>
    %p = math.exp2 %shifted : tensor<128x128xf32>
    %rowsum = ism.reduce %p axis = 1 : tensor<128x128xf32> -> tensor<128xf32> {
    ^bb0(%a: f32, %b: f32):
      %x = arith.addf %a, %b : f32
      ism.yield %x : f32
    }
    %m_diff = arith.subf %m, %m_new : tensor<128xf32>
    %alpha = math.exp2 %m_diff : tensor<128xf32>
    %l_scaled = arith.mulf %l, %alpha : tensor<128xf32>
    %l_new = arith.addf %l_scaled, %rowsum : tensor<128xf32>
    %alpha2 = ism.expand_dims %alpha axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %alphab = ism.broadcast %alpha2 : tensor<128x1xf32> -> tensor<128x128xf32>
    %acc_scaled = arith.mulf %acc_pv, %alphab : tensor<128x128xf32>

    // P in bf16 only now, after P V is done with the previous one (the
    // loop carries both in the same registers).
    %p16 = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xbf16>
    scf.yield %m_new, %l_new, %acc_scaled, %p16 : tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>, tensor<128x128xbf16>
  }
  %rl = scf.for %n = %n_last to %n_last1 step %bn
      iter_args(%acc = %r#2) -> (tensor<128x128xf32>) {
    %n_prev = arith.subi %n, %bn : index
    %v3 = ism.load %V[%bh, %n_prev, %c0] : memref<?x?x?xbf16> -> tensor<1x128x128xbf16>
    %v = ism.reshape %v3 : tensor<1x128x128xbf16> -> tensor<128x128xbf16>
    %acc_pv = ism.dot %r#3, %v, %acc
        : tensor<128x128xbf16> * tensor<128x128xbf16> -> tensor<128x128xf32>
    scf.yield %acc_pv : tensor<128x128xf32>
  }
  %l2 = ism.expand_dims %r#1 axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %lb = ism.broadcast %l2 : tensor<128x1xf32> -> tensor<128x128xf32>
  %o = arith.divf %rl, %lb : tensor<128x128xf32>
  %o16 = arith.truncf %o : tensor<128x128xf32> to tensor<128x128xbf16>
  %o3 = ism.reshape %o16 : tensor<128x128xbf16> -> tensor<1x128x128xbf16>
  ism.store %o3, %O[%bh, %m0, %c0] : tensor<1x128x128xbf16> -> memref<?x?x?xbf16>
  // LSE = m + ln(l), m in base 2: m * ln(2) + ln(l).
  %ln2 = arith.constant dense<0.69314718055994530942> : tensor<128xf32>
  %m_nat = arith.mulf %r#0, %ln2 : tensor<128xf32>
  %log_l = math.log %r#1 : tensor<128xf32>
  %lse1 = arith.addf %m_nat, %log_l : tensor<128xf32>
  %lse = ism.reshape %lse1 : tensor<128xf32> -> tensor<1x128xf32>
  ism.store %lse, %LSE[%bh, %m0] : tensor<1x128xf32> -> memref<?x?xf32>
  ism.return
}

func.func @main(%Q: memref<?x?x?xbf16>, %K: memref<?x?x?xbf16>, %V: memref<?x?x?xbf16>, %O: memref<?x?x?xbf16>,
                %LSE: memref<?x?xf32>, %scale: f32, %causal: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %block = arith.constant 128 : index
  %BH = memref.dim %Q, %c0 : memref<?x?x?xbf16>
  %S = memref.dim %Q, %c1 : memref<?x?x?xbf16>
  %gm = arith.ceildivui %S, %block : index
  ism.launch @attention grid(%gm, %BH) (%Q, %K, %V, %O, %LSE, %scale, %causal)
      : (memref<?x?x?xbf16>, memref<?x?x?xbf16>, memref<?x?x?xbf16>, memref<?x?x?xbf16>, memref<?x?xf32>, f32, i32)
  return
}
