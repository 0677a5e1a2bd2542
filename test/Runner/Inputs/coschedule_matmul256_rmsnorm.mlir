// examples/coschedule_matmul_rmsnorm.mlir with a 128x256 GEMM tile
// (bench/coschedule.py --gemm-block 128x256 makes the same module): each
// consumer warpgroup's 64x256 piece would be one m64n256k16 wgmma (154
// registers in one instruction), more than the 512-thread fused CTA starts
// with (128), so the lowering issues it as two m64n128k16.

ism.kernel @matmul(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>,
                   %C: memref<?x?xbf16>) attributes {num_warps = 8 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 256 : index
  %bk = arith.constant 64 : index
  %m0 = arith.muli %pm, %bm : index
  %n0 = arith.muli %pn, %bn : index
  %K = memref.dim %A, %c1 : memref<?x?xbf16>
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc = %zero)
      -> (tensor<128x256xf32>) {
    %a = ism.load %A[%m0, %k] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.load %B[%k, %n0] : memref<?x?xbf16> -> tensor<64x256xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x256xbf16>
        -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %out = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xbf16>
  ism.store %out, %C[%m0, %n0] : tensor<128x256xbf16> -> memref<?x?xbf16>
  ism.return
}

ism.kernel @rmsnorm(%x: memref<?x?xbf16>, %w: memref<?xbf16>,
                    %y: memref<?x?xbf16>, %eps: f32)
    attributes {num_warps = 4 : i32} {
  %row = ism.program_id x : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c1 : memref<?x?xbf16>
  %n32 = arith.index_cast %n : index to i32
  %nf = arith.uitofp %n32 : i32 to f32

  %t = ism.load %x[%row, %c0] : memref<?x?xbf16> -> tensor<1x4096xbf16>
  %wt = ism.load %w[%c0] : memref<?xbf16> -> tensor<4096xbf16>
  %t1 = ism.reshape %t : tensor<1x4096xbf16> -> tensor<4096xbf16>
  %v = arith.extf %t1 : tensor<4096xbf16> to tensor<4096xf32>
  %sq = arith.mulf %v, %v : tensor<4096xf32>
  %ssq = ism.reduce %sq axis = 0 : tensor<4096xf32> -> f32 {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    ism.yield %s : f32
  }
  %ms = arith.divf %ssq, %nf : f32
  %mseps = arith.addf %ms, %eps : f32
  %rrms = math.rsqrt %mseps : f32
  %rrmss = ism.splat %rrms : f32 -> tensor<4096xf32>
  %normed = arith.mulf %v, %rrmss : tensor<4096xf32>
  %wf = arith.extf %wt : tensor<4096xbf16> to tensor<4096xf32>
  %scaled = arith.mulf %normed, %wf : tensor<4096xf32>
  %o16 = arith.truncf %scaled : tensor<4096xf32> to tensor<4096xbf16>
  %out = ism.reshape %o16 : tensor<4096xbf16> -> tensor<1x4096xbf16>
  ism.store %out, %y[%row, %c0] : tensor<1x4096xbf16> -> memref<?x?xbf16>
  ism.return
}

func.func @main(%A: memref<?x?xbf16>, %B: memref<?x?xbf16>, %C: memref<?x?xbf16>,
                %x: memref<?x?xbf16>, %w: memref<?xbf16>, %y: memref<?x?xbf16>,
                %eps: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %block = arith.constant 128 : index
  %M = memref.dim %A, %c0 : memref<?x?xbf16>
  %N = memref.dim %B, %c1 : memref<?x?xbf16>
  %gm = arith.ceildivui %M, %block : index
  %c256 = arith.constant 256 : index
  %gn = arith.ceildivui %N, %c256 : index
  %rows = memref.dim %x, %c0 : memref<?x?xbf16>
  ism.coschedule warp_specialized {
    ism.launch @matmul grid(%gm, %gn) (%A, %B, %C)
        : (memref<?x?xbf16>, memref<?x?xbf16>, memref<?x?xbf16>)
    ism.launch @rmsnorm grid(%rows) (%x, %w, %y, %eps)
        : (memref<?x?xbf16>, memref<?xbf16>, memref<?x?xbf16>, f32)
  }
  return
}
