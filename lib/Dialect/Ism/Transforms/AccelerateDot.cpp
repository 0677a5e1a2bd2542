//===- AccelerateDot.cpp - ism-accelerate-dot ----------------------------===//
//
// Puts the K loops of matrix products on tensor cores by giving their tiles
// the layouts of the instruction: the accumulator (and the epilogue math
// that follows the loop) the #ism.mma accumulator layout, the A and B tiles
// the swizzled #ism.shared layout the instruction reads them from.
//
//===----------------------------------------------------------------------===//

#include "ism/Dialect/Ism/Transforms/Passes.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"
#include "ism/Dialect/Ism/Transforms/DotLoop.h"
#include "ism/Dialect/Ism/Transforms/LayoutPropagation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::ism {
#define GEN_PASS_DEF_ISMACCELERATEDOT
#include "ism/Dialect/Ism/Transforms/Passes.h.inc"
} // namespace mlir::ism

using namespace mlir;
using namespace mlir::ism;

namespace {

/// Registers a consumer thread can give to its accumulator on the wgmma
/// path (192).
constexpr int64_t kMaxAccumulatorRegs =
    kWgmmaConsumerRegisters - kWgmmaNonAccumulatorRegisters;
/// Registers a thread can give to its accumulator on the mma.sync path
/// (every warp computes; the A and B fragments, the copy addressing and
/// the epilogue need the rest of the 255).
constexpr int64_t kMaxMmaSyncAccumulatorRegs = 128;

/// Why a K loop whose dot multiplies an m x k A tile by a k x n B tile
/// cannot use wgmma with `numWarps` warps (empty when it can); fills
/// `warpsM`/`warpsN`. `transB`: B is loaded as an [n, k] tile (read
/// K-major, any n that is a multiple of 8), else as [k, n] (read MN-major
/// from boxes of 64 columns, or one of 32). A's orientation does not
/// matter: either way its 64-row pieces are whole 128-byte rows or boxes.
std::string checkWgmmaShape(int64_t m, int64_t n, int64_t k,
                            unsigned elementBytes, bool transB,
                            unsigned numWarps, unsigned &warpsM,
                            unsigned &warpsN) {
  if (k * elementBytes != 128)
    return elementBytes == 1
               ? "the A tile's rows must be 128 bytes (BLOCK_K = 128 for "
                 "8-bit inputs)"
               : "the A tile's rows must be 128 bytes (BLOCK_K = 64)";
  if (m % 64 != 0)
    return "BLOCK_M must be a multiple of 64";
  // 32 columns are one 64-byte swizzled B box (HopperGemm.cpp), for the
  // skinny shapes' many small tiles.
  if (transB ? (n % 8 != 0 || n > 256)
             : ((n % 64 != 0 && n != 32) || n > 256 * 8))
    return transB ? "BLOCK_N of a transposed B tile (one box of N rows) must "
                    "be a multiple of 8, at most 256"
                  : "BLOCK_N must be 32 or a multiple of 64";
  if (numWarps % 4 != 0)
    return "num_warps must be a multiple of 4 (whole warpgroups)";
  warpsM = std::min<int64_t>(numWarps, m / 16);
  warpsN = numWarps / warpsM;
  if (warpsM % 4 != 0 || n % warpsN != 0 || n / warpsN > 256 ||
      (transB ? (n / warpsN) % 8 != 0 : ((n / warpsN) % 64 != 0 && n != 32)))
    return "the warps cannot tile the block into m64nN (N = 32, or "
           "64..256; a transposed B: a multiple of 8 up to 256) "
           "instructions";
  return "";
}

/// Why the tiles of `loop` cannot feed wgmma (empty when they can): their
/// element types and memrefs.
std::string checkWgmmaTiles(DotLoop loop) {
  Type a = loop.dot.getA().getType().getElementType();
  Type b = loop.dot.getB().getType().getElementType();
  if (!loop.dot.getType().getElementType().isF32())
    return "wgmma here takes an f32 accumulator";
  if (isFloat8(a) || isFloat8(b)) {
    // wgmma reads 8-bit operands K-major only (no transpose bits).
    if (!isFloat8(a) || !isFloat8(b))
      return "an 8-bit float product needs both A and B in f8E4M3FN or "
             "f8E5M2";
    if (loop.transA || !loop.transB)
      return "wgmma reads 8-bit A and B K-major only: load A as an "
             "[M, K] tile and B as an [N, K] tile, the dot's B its ism.trans";
  } else if (!(a.isBF16() || a.isF16()) || b != a) {
    return "wgmma here takes f16, bf16, f8E4M3FN or f8E5M2 inputs with an "
           "f32 accumulator";
  }
  for (LoadOp load : {loop.loadA, loop.loadB}) {
    if (!load)
      continue;
    auto memref = cast<MemRefType>(load.getBase().getType());
    if (memref.getElementType() != load.getType().getElementType())
      return "A and B must be loaded from memrefs of the input type";
  }
  if (loop.im2colA) {
    // TMA's im2col mode: a box of pixels by 128 bytes of channels.
    if (isFloat8(a))
      return "ism.im2col feeds f16 or bf16 K loops";
    if (loop.getATileType().getDimSize(1) * a.getIntOrFloatBitWidth() / 8 !=
        128)
      return "an ism.im2col A tile is 128 bytes of channels wide (64 f16 or "
             "bf16)";
    if (loop.getATileType().getDimSize(0) > 256)
      return "an ism.im2col A tile has at most 256 output pixels (TMA's "
             "im2col box)";
  }
  return "";
}

/// Bytes of an element of the dot's A.
unsigned getInputBytes(DotLoop loop) {
  return loop.dot.getA().getType().getElementTypeBitWidth() / 8;
}

/// Why `loop` cannot use wgmma (empty when it can); fills `warpsM`/`warpsN`.
std::string checkWgmma(DotLoop loop, unsigned numWarps, unsigned &warpsM,
                       unsigned &warpsN) {
  std::string why = checkWgmmaTiles(loop);
  if (!why.empty())
    return why;
  auto aType = loop.dot.getA().getType(), bType = loop.dot.getB().getType();
  return checkWgmmaShape(aType.getDimSize(0), bType.getDimSize(1),
                         aType.getDimSize(1), getInputBytes(loop), loop.transB,
                         numWarps, warpsM, warpsN);
}

/// Why `loop`'s product swapped (C^T = B^T A^T: an n x k A, B^T's tile, by
/// a k x m B, A^T's) cannot use wgmma (empty when it can).
std::string checkWgmmaSwapped(DotLoop loop, unsigned numWarps) {
  std::string why = checkWgmmaTiles(loop);
  if (!why.empty())
    return why;
  auto aType = loop.dot.getA().getType(), bType = loop.dot.getB().getType();
  unsigned warpsM = 0, warpsN = 0;
  // A^T is transposed (B of the swapped product) unless A was already.
  return checkWgmmaShape(bType.getDimSize(1), aType.getDimSize(0),
                         aType.getDimSize(1), getInputBytes(loop), !loop.transA,
                         numWarps, warpsM, warpsN);
}

/// `layout` (2-D) with its dimensions swapped: the layout of the transpose
/// that each thread's elements keep (an ism.trans of it moves no data).
BlockedEncodingAttr transposedLayout(BlockedEncodingAttr layout) {
  auto swap = [](ArrayRef<unsigned> v) {
    return SmallVector<unsigned>{v[1], v[0]};
  };
  SmallVector<unsigned> order;
  for (unsigned d : layout.getOrder())
    order.push_back(1 - d);
  return BlockedEncodingAttr::get(
      layout.getContext(), swap(layout.getSizePerThread()),
      swap(layout.getThreadsPerWarp()), swap(layout.getWarpsPerCTA()), order);
}

/// `type` (2-D) transposed, with its blocked layout transposed.
RankedTensorType transposedType(RankedTensorType type) {
  Attribute encoding = type.getEncoding();
  if (auto blocked = dyn_cast_or_null<BlockedEncodingAttr>(encoding))
    encoding = transposedLayout(blocked);
  return RankedTensorType::get({type.getDimSize(1), type.getDimSize(0)},
                               type.getElementType(), encoding);
}

/// The transpose of `v` (2-D) built at `b`: the source of `v` when `v` is
/// itself an ism.trans, a constant when it is a splat constant, else an
/// ism.trans.
Value transpose(OpBuilder &b, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  if (auto trans = v.getDefiningOp<TransOp>();
      trans && trans.getOrder() == ArrayRef<int32_t>{1, 0})
    return trans.getSrc();
  RankedTensorType result = transposedType(type);
  DenseElementsAttr splat;
  if (matchPattern(v, m_Constant(&splat)) && splat.isSplat())
    return arith::ConstantOp::create(b, v.getLoc(), result,
                                     splat.resizeSplat(result));
  return TransOp::create(b, v.getLoc(), result, v,
                         b.getDenseI32ArrayAttr({1, 0}));
}

/// Rewrites `loop`'s product C = A B into the transpose of C^T = B^T A^T
/// (swap-AB): the loop carries C^T, its dot multiplies B's tile transposed
/// by A's transposed, and C is the transpose of the loop's result. Marks
/// the loop with kSwapABAttrName and returns the new match.
DotLoop swapProduct(DotLoop loop) {
  DotOp dot = loop.dot;
  scf::ForOp forOp = loop.loop;
  unsigned i = loop.accIndex;
  OpBuilder b(dot);
  Value a = transpose(b, dot.getB()), bt = transpose(b, dot.getA());
  RankedTensorType accType = dot.getType();
  RankedTensorType swappedType = transposedType(accType);
  Value acc = forOp.getRegionIterArg(i);
  acc.setType(swappedType);
  auto swapped = DotOp::create(b, dot.getLoc(), swappedType, a, bt, acc,
                               dot.getInputPrecisionAttr());
  dot.getResult().replaceAllUsesWith(swapped.getResult());
  Operation *transA = dot.getA().getDefiningOp<TransOp>();
  Operation *transB = dot.getB().getDefiningOp<TransOp>();
  dot->erase();
  for (Operation *op : {transA, transB})
    if (op && op->use_empty())
      op->erase();
  b.setInsertionPoint(forOp);
  Value init = forOp.getInitArgs()[i];
  forOp.getInitArgsMutable()[i].set(transpose(b, init));
  Value result = forOp.getResult(i);
  result.setType(swappedType);
  b.setInsertionPointAfter(forOp);
  Value c = transpose(b, result);
  result.replaceAllUsesExcept(c, c.getDefiningOp());
  forOp->setAttr(kSwapABAttrName, b.getUnitAttr());
  return *matchDotLoop(swapped);
}

/// The mma.sync warp arrangement of an m x n accumulator: the warps tile it
/// with 16-row stripes (warpsM of them) and column blocks of at least 16
/// (two n8 instructions, one ldmatrix.x4). Among the arrangements that tile
/// it, the one whose warp tile reads the fewest operand bytes per
/// instruction (the squarest), preferring more warps along M on a tie.
/// False when none tiles it.
bool chooseMmaSyncWarps(int64_t m, int64_t n, unsigned numWarps,
                        unsigned &warpsM, unsigned &warpsN) {
  int64_t best = -1;
  for (unsigned wm = numWarps; wm >= 1; wm /= 2) {
    unsigned wn = numWarps / wm;
    if (m % (16 * wm) != 0 || n % (16 * wn) != 0)
      continue;
    int64_t cost = m / wm + n / wn;
    if (best < 0 || cost < best) {
      best = cost;
      warpsM = wm;
      warpsN = wn;
    }
  }
  return best >= 0;
}

/// Why `dot` (outside a K loop the loop lowerings take) cannot run on
/// mma.sync as a product of its own (empty when it can); fills
/// `warpsM`/`warpsN`. Its operands may come from anywhere: the lowering
/// writes them to shared memory itself.
std::string checkMmaSyncProduct(DotOp dot, unsigned numWarps, unsigned &warpsM,
                                unsigned &warpsN, bool rowsPerWarp) {
  auto aType = dot.getA().getType(), bType = dot.getB().getType();
  Type in = aType.getElementType();
  if (aType.getRank() != 2)
    return "mma.sync takes 2-D products";
  if (!(in.isBF16() || in.isF16()) || bType.getElementType() != in ||
      !dot.getType().getElementType().isF32())
    return "mma.sync here takes f16 or bf16 inputs with an f32 accumulator";
  int64_t m = aType.getDimSize(0), k = aType.getDimSize(1);
  int64_t n = bType.getDimSize(1);
  if (k % 16 != 0 || !llvm::isPowerOf2_64(k))
    return "BLOCK_K must be a power of two and a multiple of 16";
  if (m % 16 != 0 || n % 16 != 0 || !llvm::isPowerOf2_64(m) ||
      !llvm::isPowerOf2_64(n))
    return "BLOCK_M and BLOCK_N must be powers of two, multiples of 16";
  // A product whose rows are reduced afterwards (a softmax over S = Q K^T)
  // gives each warp whole rows, so that the reduction stays in the warp.
  if (rowsPerWarp && m % (16 * numWarps) == 0) {
    warpsM = numWarps;
    warpsN = 1;
    return "";
  }
  if (!chooseMmaSyncWarps(m, n, numWarps, warpsM, warpsN))
    return "the warps cannot tile the product into m16n16 pieces";
  return "";
}

/// Why `loop` cannot use mma.sync m16n8k16 (empty when it can); fills
/// `warpsM`/`warpsN`.
std::string checkMmaSync(DotLoop loop, unsigned numWarps, unsigned &warpsM,
                         unsigned &warpsN) {
  std::string why = checkMmaSyncProduct(loop.dot, numWarps, warpsM, warpsN,
                                        /*rowsPerWarp=*/false);
  if (!why.empty())
    return why;
  if (loop.transA || loop.transB)
    return "the mma.sync K loop reads A and B as they are loaded (a "
           "transposed tile is a product of its own)";
  if (loop.im2colA)
    return "ism.im2col feeds wgmma K loops only";
  Type in = loop.dot.getA().getType().getElementType();
  for (LoadOp load : {loop.loadA, loop.loadB}) {
    auto memref = cast<MemRefType>(load.getBase().getType());
    if (memref.getElementType() != in)
      return "A and B must be loaded from memrefs of the input type";
    if (loop.loop->isAncestor(load.getBase().getParentBlock()->getParentOp()))
      return "A and B must be loaded from memrefs defined outside the K loop";
  }
  // The lowering replaces the whole loop: it may carry only the
  // accumulator, and the rest of its body must be scalar code it can repeat.
  if (loop.loop.getNumRegionIterArgs() != 1)
    return "the K loop may carry only the accumulator";
  for (Operation &op : loop.loop.getBody()->without_terminator()) {
    if (&op == loop.dot.getOperation() || &op == loop.loadA.getOperation() ||
        &op == loop.loadB.getOperation())
      continue;
    if (!isReplicableScalar(&op))
      return "the K loop's body may hold only the loads, the dot and scalar "
             "index arithmetic";
  }
  return "";
}

struct IsmAccelerateDotPass
    : mlir::ism::impl::IsmAccelerateDotBase<IsmAccelerateDotPass> {
  using Base::Base;

  void runOnOperation() override {
    if (getSMVersion(chip) < 0) {
      getOperation().emitError("ism-accelerate-dot: chip '")
          << chip << "' is not an NVIDIA target (sm_80, sm_90a, ...)";
      return signalPassFailure();
    }
    // 8-bit float conversions lower to cvt instructions sm_89 introduced
    // (ElementwiseOps.cpp); this pass is the lowering's one that knows the
    // chip.
    if (getSMVersion(chip) < 89) {
      WalkResult f8 = getOperation().walk([&](Operation *op) {
        if (!isa<arith::ExtFOp, arith::TruncFOp>(op) ||
            !(isFloat8(getElementTypeOrSelf(op->getOperand(0).getType())) ||
              isFloat8(getElementTypeOrSelf(op->getResult(0).getType()))))
          return WalkResult::advance();
        op->emitOpError("converts 8-bit floats, which needs sm_89 or newer "
                        "(cvt e4m3x2 / e5m2x2); chip '")
            << chip << "' has no such instruction";
        return WalkResult::interrupt();
      });
      if (f8.wasInterrupted())
        return signalPassFailure();
    }
    WalkResult result = getOperation().walk([&](KernelOp kernel) {
      SmallVector<DotLoop> loops;
      SmallVector<DotOp> others;
      kernel.walk([&](DotOp dot) {
        if (std::optional<DotLoop> loop = matchDotLoop(dot))
          loops.push_back(*loop);
        else
          others.push_back(dot);
      });
      for (DotLoop loop : loops) {
        FailureOr<DotLoop> oriented = orient(loop, kernel);
        if (failed(oriented))
          return WalkResult::interrupt();
        FailureOr<bool> done = accelerate(*oriented, kernel.getNumWarps());
        if (failed(done))
          return WalkResult::interrupt();
        if (!*done)
          others.push_back(oriented->dot);
      }
      // A product gives its warps whole rows when its rows are reduced, or
      // those of another product in the same loop body (attention: S's
      // rows, then O += P V is rescaled by row statistics).
      llvm::SmallPtrSet<Operation *, 4> rowBlocks;
      for (DotOp dot : others)
        if (rowsReduced(dot.getResult()))
          rowBlocks.insert(dot->getParentOp());
      // So does a product whose A operand is already in the accumulator
      // layout of such a product (attention's last P V, in a loop of its
      // own: P from the loop before), as a register A operand must be.
      auto aFromRows = [](DotOp dot) {
        auto mma = dyn_cast_or_null<MmaEncodingAttr>(
            dot.getA().getType().getEncoding());
        return mma && mma.getWarpsPerCTA().size() == 2 &&
               mma.getWarpsPerCTA()[1] == 1;
      };
      for (DotOp dot : others)
        if (failed(accelerateProduct(dot, kernel.getNumWarps(),
                                     rowBlocks.contains(dot->getParentOp()) ||
                                         aFromRows(dot))))
          return WalkResult::interrupt();
      // Row reductions of accumulators yield the slice of the
      // accumulator's layout, which flows on to their uses.
      SmallVector<ReduceOp> reduces;
      kernel.walk([&](ReduceOp reduce) { reduces.push_back(reduce); });
      OpBuilder b(&getContext());
      for (ReduceOp reduce : reduces) {
        auto src = cast<RankedTensorType>(reduce.getSrcs()[0].getType());
        auto mma = dyn_cast_or_null<MmaEncodingAttr>(src.getEncoding());
        if (!mma || src.getRank() != 2 || reduce.getAxis() != 1 ||
            reduce.getSrcs().size() != 1)
          continue;
        auto type = cast<RankedTensorType>(reduce.getResult(0).getType());
        auto slice = SliceEncodingAttr::get(&getContext(), 1, mma);
        reduce.getResult(0).setType(withEncoding(type, slice));
        propagateForward(reduce.getResult(0), slice, type.getEncoding(), b);
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  /// `loop` as it is or swapped (swapProduct), as the kernel's `swap_ab`
  /// asks: 0 never, 1 always (an error when the swapped product cannot use
  /// wgmma), and without the attribute when only the swapped product can
  /// use wgmma (BLOCK_M below 64 and BLOCK_N a multiple of 64: the small
  /// dimension becomes the instruction's N).
  FailureOr<DotLoop> orient(DotLoop loop, KernelOp kernel) {
    auto attr = kernel->getAttrOfType<IntegerAttr>(kSwapABOptionName);
    if (attr && attr.getInt() != 0 && attr.getInt() != 1)
      return kernel.emitOpError("swap_ab = ")
             << attr.getInt()
             << ": 0 (never swap), 1 (compute C^T = B^T A^T on wgmma), or no "
                "attribute (swap when only the swapped product fits wgmma)";
    if (attr && attr.getInt() == 0)
      return loop;
    // A promoted loop's scaling is written for C, not C^T; an im2col A is
    // read by TMA's im2col mode as wgmma's A.
    if (loop.im2colA) {
      if (attr)
        return loop.dot.emitOpError(
            "swap_ab = 1: a K loop whose A is an ism.im2col is not swapped");
      return loop;
    }
    if (loop.promote) {
      if (attr)
        return loop.dot.emitOpError(
            "swap_ab = 1: a K loop that scales each step's product before "
            "adding it (block scales) is not swapped");
      return loop;
    }
    unsigned numWarps = kernel.getNumWarps();
    if (chip != "sm_90a") {
      if (attr)
        return kernel.emitOpError("swap_ab = 1 swaps wgmma products, which "
                                  "chip '")
               << chip << "' does not have (sm_90a)";
      return loop;
    }
    std::string why = checkWgmmaSwapped(loop, numWarps);
    if (attr && !why.empty()) {
      auto aType = loop.dot.getA().getType();
      auto bType = loop.dot.getB().getType();
      return loop.dot.emitOpError("swap_ab = 1: the swapped product C^T = "
                                  "B^T A^T (")
             << bType.getDimSize(1) << "x" << aType.getDimSize(0)
             << ") cannot use wgmma: " << why;
    }
    unsigned warpsM = 0, warpsN = 0;
    if (attr ||
        (why.empty() && !checkWgmma(loop, numWarps, warpsM, warpsN).empty()))
      return swapProduct(loop);
    return loop;
  }

  /// Puts `dot` (not a K loop of its own) on mma.sync when it fits, else
  /// leaves it to the SIMT lowering.
  LogicalResult accelerateProduct(DotOp dot, unsigned numWarps,
                                  bool rowsPerWarp) {
    unsigned warpsM = 0, warpsN = 0;
    if (isFloat8(dot.getA().getType().getElementType()) ||
        isFloat8(dot.getB().getType().getElementType()))
      return dot.emitOpError(
          "8-bit float products run on wgmma only, in a K loop whose A and "
          "B tiles are loaded in it (A as [M, K], B as [N, K] and "
          "transposed)");
    if (getSMVersion(chip) < 80 ||
        !checkMmaSyncProduct(dot, numWarps, warpsM, warpsN, rowsPerWarp)
             .empty())
      return success(); // the SIMT dot
    auto accType = dot.getType();
    int64_t regs = accType.getNumElements() / (32 * numWarps);
    if (regs > kMaxMmaSyncAccumulatorRegs)
      return dot.emitOpError("the ")
             << accType.getDimSize(0) << "x" << accType.getDimSize(1)
             << " f32 accumulator needs " << regs
             << " registers per thread with " << numWarps
             << " warps, more than the " << kMaxMmaSyncAccumulatorRegs
             << " a thread can give a product's accumulator; use more warps "
                "(num_warps) or a smaller product";
    // On sm_90a a product whose warps take whole rows runs on wgmma: the
    // accumulator layout is the same (each warp 16-row stripes, n8 blocks
    // in the m16n8 order), so row statistics and a register A operand work
    // alike.
    MmaEncodingAttr mma;
    if (chip == "sm_90a" && rowsPerWarp && warpsN == 1 &&
        checkWgmmaProduct(dot, numWarps).empty())
      mma = MmaEncodingAttr::get(
          &getContext(), 3, {numWarps, 1},
          {16, unsigned(dot.getB().getType().getDimSize(1)), 16});
    else
      mma =
          MmaEncodingAttr::get(&getContext(), 2, {warpsM, warpsN}, {16, 8, 16});
    OpBuilder b(&getContext());
    RankedTensorType blocked = accType;
    dot.getResult().setType(withEncoding(blocked, mma));
    // The users first (a loop-carried accumulator then arrives in the
    // layout), then the accumulator operand.
    propagateForward(dot.getResult(), mma, blocked.getEncoding(), b);
    adapt(dot.getCMutable(), mma, b);
    // B = trans(X): the transposition takes X's layout transposed, which
    // moves no data (each thread keeps its elements), and the lowering
    // stores X's rows, contiguous along K, as they are.
    if (auto trans = dot.getB().getDefiningOp<TransOp>();
        trans && trans->hasOneUse()) {
      auto src = trans.getSrc().getType();
      if (auto layout =
              dyn_cast_or_null<BlockedEncodingAttr>(src.getEncoding());
          layout && src.getRank() == 2) {
        auto transposed = transposedLayout(layout);
        trans.getResult().setType(
            withEncoding(trans.getResult().getType(), transposed));
      }
    }
    return success();
  }

  /// Whether `v` (through elementwise math) is reduced along its rows.
  static bool rowsReduced(Value v) {
    SmallVector<Value> worklist{v};
    llvm::SmallPtrSet<Operation *, 16> seen;
    while (!worklist.empty()) {
      Value x = worklist.pop_back_val();
      for (Operation *user : x.getUsers()) {
        if (!seen.insert(user).second)
          continue;
        if (auto reduce = dyn_cast<ReduceOp>(user);
            reduce && reduce.getAxis() == 1)
          return true;
        if (isElementwise(user))
          worklist.push_back(user->getResult(0));
      }
    }
    return false;
  }

  /// Puts the K loop `loop` on wgmma or mma.sync; false when neither loop
  /// lowering takes it (its dot may still be a product of its own).
  FailureOr<bool> accelerate(DotLoop loop, unsigned numWarps) {
    auto accType = loop.dot.getType();
    // A promoted loop holds each step's product beside the accumulator.
    int64_t regs =
        accType.getNumElements() / (32 * numWarps) * (loop.promote ? 2 : 1);
    MLIRContext *ctx = &getContext();
    unsigned warpsM = 0, warpsN = 0;
    std::string why = chip == "sm_90a"
                          ? checkWgmma(loop, numWarps, warpsM, warpsN)
                          : "chip '" + chip + "' has no wgmma (sm_90a)";
    // Nothing else multiplies 8-bit floats.
    if (!why.empty() && isFloat8(loop.dot.getA().getType().getElementType()))
      return loop.dot.emitOpError("8-bit float products run on wgmma only: ")
             << why;
    if (why.empty()) {
      if (regs > kMaxAccumulatorRegs)
        return loop.dot.emitOpError("the ")
               << accType.getDimSize(0) << "x" << accType.getDimSize(1)
               << " f32 accumulator needs " << regs
               << " registers per thread with " << numWarps << " warps"
               << (loop.promote ? " (with each step's product beside it)" : "")
               << ", more than the " << kMaxAccumulatorRegs
               << " a wgmma consumer thread can give it; use more warps "
                  "(num_warps) or a smaller BLOCK_M x BLOCK_N";
      int64_t n = loop.dot.getB().getType().getDimSize(1);
      // The instruction's K: 32 bytes of each row.
      unsigned instrK = 32 / getInputBytes(loop);
      apply(loop, MmaEncodingAttr::get(ctx, 3, {warpsM, warpsN},
                                       {16, unsigned(n / warpsN), instrK}));
      return true;
    }
    if (loop.im2colA)
      return loop.dot.emitOpError("a K loop whose A is an ism.im2col runs on "
                                  "wgmma only: ")
             << why;
    if (loop.promote)
      return loop.dot.emitOpError("a K loop that scales each step's product "
                                  "before adding it (block scales) runs on "
                                  "wgmma only: ")
             << why;
    // Ampere's mma.sync (also on later chips, for loops wgmma cannot take).
    if (getSMVersion(chip) < 80 ||
        !checkMmaSync(loop, numWarps, warpsM, warpsN).empty())
      return false;
    if (regs > kMaxMmaSyncAccumulatorRegs)
      return loop.dot.emitOpError("the ")
             << accType.getDimSize(0) << "x" << accType.getDimSize(1)
             << " f32 accumulator needs " << regs
             << " registers per thread with " << numWarps
             << " warps, more than the " << kMaxMmaSyncAccumulatorRegs
             << " an mma.sync thread can give it; use more warps "
                "(num_warps) or a smaller BLOCK_M x BLOCK_N";
    apply(loop, MmaEncodingAttr::get(ctx, 2, {warpsM, warpsN}, {16, 8, 16}));
    return true;
  }

  /// Gives the loop's accumulator chain the layout `mma` and the A and B
  /// tiles the swizzled shared layout.
  void apply(DotLoop loop, MmaEncodingAttr mma) {
    MLIRContext *ctx = &getContext();
    auto shared = SharedEncodingAttr::get(ctx, 8, 1, 8, {1, 0});
    OpBuilder b(ctx);

    // A and B live in swizzled shared memory; a transposed tile is the
    // same memory read the other way.
    for (Operation *read : {loop.getAReader(), loop.loadB.getOperation()})
      read->getResult(0).setType(withEncoding(
          cast<RankedTensorType>(read->getResult(0).getType()), shared));
    auto sharedTransposed = SharedEncodingAttr::get(ctx, 8, 1, 8, {0, 1});
    for (Value operand : {loop.dot.getA(), loop.dot.getB()})
      if (auto trans = operand.getDefiningOp<TransOp>())
        trans.getResult().setType(
            withEncoding(trans.getType(), sharedTransposed));

    // A promoted loop: the product from zero in the layout, its scaling and
    // the accumulator (carried by the loop) after it.
    if (loop.promote) {
      RankedTensorType blocked = loop.dot.getType();
      loop.dot.getResult().setType(withEncoding(blocked, mma));
      adapt(loop.dot.getCMutable(), mma, b);
      propagateForward(loop.dot.getResult(), mma, blocked.getEncoding(), b);
      return;
    }
    // The accumulator chain.
    unsigned i = loop.accIndex;
    scf::ForOp forOp = loop.loop;
    RankedTensorType blocked = loop.dot.getType();
    RankedTensorType mmaType = withEncoding(blocked, mma);
    loop.dot.getResult().setType(mmaType);
    forOp.getRegionIterArg(i).setType(mmaType);
    adapt(forOp.getInitArgsMutable()[i], mma, b);
    forOp.getResult(i).setType(mmaType);
    propagateForward(forOp.getResult(i), mma, blocked.getEncoding(), b);
  }
};

} // namespace

int64_t mlir::ism::getSMVersion(StringRef chip) {
  if (!chip.consume_front("sm_"))
    return -1;
  StringRef digits = chip.take_while([](char c) { return isdigit(c); });
  StringRef suffix = chip.drop_front(digits.size());
  int64_t version = -1;
  if (digits.empty() || digits.getAsInteger(10, version) ||
      !(suffix.empty() || suffix == "a" || suffix == "f"))
    return -1;
  return version;
}
