// conv2d fprop as an implicit GEMM, with the bias and ReLU fused:
//   y[n, p, q, k] = relu(bias[k] + sum_{r, s, c} x[n, h, w, c] * f[k, r, s, c])
// with h = p - 1 + r, w = q - 1 + s (3 x 3 filter, stride 1, padding 1).
// x is NHWC (N x H x W x C), the filter KRSC flattened to K x (3 * 3 * C)
// (PyTorch: w.permute(0, 2, 3, 1).reshape(K, -1)), y NHWC flattened to
// (N * P * Q) x K (a channels_last output viewed as a matrix).
//
// A program computes 128 output pixels (rows m0 ..) x 128 output channels.
// Its K loop walks the filter taps and, per tap, C in blocks of 64
// channels: ism.im2col reads the 128 x 64 block of input pixels that tap
// (r, s) puts under the output pixels (zeros in the padding), the filter
// block is the same 64 channels of tap (r, s) for the 128 output channels.
// On sm_90a the loop runs on wgmma, the producer reading x with TMA's
// im2col mode; elsewhere ism.im2col is a gather.

ism.kernel @conv2d(%x: memref<?x?x?x?xbf16>, %f: memref<?x?xbf16>,
                   %bias: memref<?xf32>, %y: memref<?x?xbf16>)
    attributes {num_warps = 8 : i32} {
  %pm = ism.program_id x : index
  %pn = ism.program_id y : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pm, %c128 : index
  %n0 = arith.muli %pn, %c128 : index
  %C = memref.dim %x, %c3 : memref<?x?x?x?xbf16>
  // Steps: 9 taps x ceil(C / 64) channel blocks.
  %cb = arith.ceildivui %C, %c64 : index
  %c9 = arith.constant 9 : index
  %steps = arith.muli %cb, %c9 : index
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %t = %c0 to %steps step %c1 iter_args(%acc = %zero)
      -> (tensor<128x128xf32>) {
    %tap = arith.divui %t, %cb : index
    %blk = arith.remui %t, %cb : index
    %r = arith.divui %tap, %c3 : index
    %s = arith.remui %tap, %c3 : index
    %ch = arith.muli %blk, %c64 : index
    %tapc = arith.muli %tap, %C : index
    %kcol = arith.addi %tapc, %ch : index
    %a = ism.im2col %x[%m0, %ch] tap [%r, %s] {filter = array<i64: 3, 3>,
        stride = array<i64: 1, 1>, padding = array<i64: 1, 1>,
        dilation = array<i64: 1, 1>} : memref<?x?x?x?xbf16>
        -> tensor<128x64xbf16>
    %ft = ism.load %f[%n0, %kcol] : memref<?x?xbf16> -> tensor<128x64xbf16>
    %b = ism.trans %ft order = [1, 0] : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %d = ism.dot %a, %b, %acc : tensor<128x64xbf16> * tensor<64x128xbf16>
        -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  // Epilogue: + bias[k], ReLU, bf16.
  %bv = ism.load %bias[%n0] : memref<?xf32> -> tensor<128xf32>
  %be = ism.expand_dims %bv axis = 0 : tensor<128xf32> -> tensor<1x128xf32>
  %bb = ism.broadcast %be : tensor<1x128xf32> -> tensor<128x128xf32>
  %sum = arith.addf %acc, %bb : tensor<128x128xf32>
  %z = arith.constant dense<0.0> : tensor<128x128xf32>
  %relu = arith.maximumf %sum, %z : tensor<128x128xf32>
  %out = arith.truncf %relu : tensor<128x128xf32> to tensor<128x128xbf16>
  ism.store %out, %y[%m0, %n0] : tensor<128x128xbf16> -> memref<?x?xbf16>
  ism.return
}

func.func @main(%x: memref<?x?x?x?xbf16>, %f: memref<?x?xbf16>,
                %bias: memref<?xf32>, %y: memref<?x?xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %N = memref.dim %x, %c0 : memref<?x?x?x?xbf16>
  %H = memref.dim %x, %c1 : memref<?x?x?x?xbf16>
  %W = memref.dim %x, %c2 : memref<?x?x?x?xbf16>
  %C = memref.dim %x, %c3 : memref<?x?x?x?xbf16>
  %K = memref.dim %f, %c0 : memref<?x?xbf16>
  %FC = memref.dim %f, %c1 : memref<?x?xbf16>
  %B = memref.dim %bias, %c0 : memref<?xf32>
  %YM = memref.dim %y, %c0 : memref<?x?xbf16>
  %YK = memref.dim %y, %c1 : memref<?x?xbf16>
  // 3 x 3, stride 1, padding 1: P = H, Q = W.
  %c9 = arith.constant 9 : index
  %rsc = arith.muli %C, %c9 : index
  %fok = arith.cmpi eq, %FC, %rsc : index
  ism.assert %fok, "the filter is {0}x{1}; a 3x3 filter of C = {2} (x's last dimension) is K x {3}"
      (%K, %FC, %C, %rsc) : index, index, index, index
  %bok = arith.cmpi eq, %B, %K : index
  ism.assert %bok, "bias has {0} elements and the filter {1} output channels"
      (%B, %K) : index, index
  %hw = arith.muli %H, %W : index
  %npq = arith.muli %N, %hw : index
  %ymok = arith.cmpi eq, %YM, %npq : index
  %ykok = arith.cmpi eq, %YK, %K : index
  %yok = arith.andi %ymok, %ykok : i1
  ism.assert %yok, "y is {0}x{1}; N * P * Q = {2} output pixels of K = {3} channels need {2}x{3}"
      (%YM, %YK, %npq, %K) : index, index, index, index
  %c128 = arith.constant 128 : index
  %gm = arith.ceildivui %npq, %c128 : index
  %gn = arith.ceildivui %K, %c128 : index
  ism.launch @conv2d grid(%gm, %gn) (%x, %f, %bias, %y)
      : (memref<?x?x?x?xbf16>, memref<?x?xbf16>, memref<?xf32>,
         memref<?x?xbf16>)
  return
}
