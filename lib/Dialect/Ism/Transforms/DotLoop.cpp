//===- DotLoop.cpp - matrix-product K loops -------------------------------===//

#include "ism/Dialect/Ism/Transforms/DotLoop.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::ism;

/// Whether `v` is a splat zero float constant.
static bool isZeroTile(Value v) {
  DenseElementsAttr dense;
  if (!matchPattern(v, m_Constant(&dense)) || !dense.isSplat())
    return false;
  auto f = dyn_cast<FloatAttr>(dense.getSplatValue<Attribute>());
  return f && f.getValue().isZero();
}

/// The promoted form's accumulator update: following the dot's single-use
/// chain of elementwise ops to an arith.addf with an iter_arg of `loop`
/// (used by it alone) whose result the loop yields at that iter_arg's
/// position. Returns the addf and the iter_arg, or nulls.
static std::pair<Operation *, BlockArgument> matchPromotion(DotOp dot,
                                                            scf::ForOp loop) {
  Value v = dot.getResult();
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (unsigned depth = 0; depth < 8 && v.hasOneUse(); ++depth) {
    Operation *user = *v.getUsers().begin();
    if (user->getBlock() != loop.getBody() || user->getNumResults() != 1 ||
        !isa<arith::ArithDialect>(user->getDialect()))
      return {};
    if (auto add = dyn_cast<arith::AddFOp>(user)) {
      Value other = add.getLhs() == v ? add.getRhs() : add.getLhs();
      auto acc = dyn_cast<BlockArgument>(other);
      if (acc && acc.getOwner() == loop.getBody() && acc.getArgNumber() > 0 &&
          acc.hasOneUse() && add->hasOneUse() &&
          *add->getUsers().begin() == yield &&
          yield.getOperand(acc.getArgNumber() - 1) == add.getResult())
        return {add, acc};
    }
    v = user->getResult(0);
  }
  return {};
}

std::optional<DotLoop> mlir::ism::matchDotLoop(DotOp dot) {
  auto loop = dyn_cast<scf::ForOp>(dot->getParentOp());
  if (!loop || dot.getC().getType().getRank() != 2)
    return std::nullopt;
  Operation *promote = nullptr;
  auto acc = dyn_cast<BlockArgument>(dot.getC());
  if (!acc && isZeroTile(dot.getC()))
    std::tie(promote, acc) = matchPromotion(dot, loop);
  if (!acc || acc.getOwner() != loop.getBody() || acc.getArgNumber() == 0 ||
      !acc.hasOneUse() || !dot->hasOneUse())
    return std::nullopt;
  unsigned index = acc.getArgNumber() - 1;
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  if (!promote && (yield.getOperand(index) != dot.getResult() ||
                   *dot->getUsers().begin() != yield))
    return std::nullopt;
  // An operand is a load, or the transpose of one.
  auto operandLoad = [&](Value operand, bool &transposed) -> LoadOp {
    transposed = false;
    if (auto trans = operand.getDefiningOp<TransOp>()) {
      if (trans->getBlock() != loop.getBody() || !trans->hasOneUse() ||
          trans.getOrder() != ArrayRef<int32_t>{1, 0})
        return LoadOp();
      transposed = true;
      operand = trans.getSrc();
    }
    return operand.getDefiningOp<LoadOp>();
  };
  DotLoop match{loop, dot, LoadOp(), LoadOp(), Im2colOp(), index};
  match.promote = promote;
  match.im2colA = dot.getA().getDefiningOp<Im2colOp>();
  if (match.im2colA && (match.im2colA->getBlock() != loop.getBody() ||
                        !match.im2colA->hasOneUse()))
    return std::nullopt;
  if (!match.im2colA)
    match.loadA = operandLoad(dot.getA(), match.transA);
  match.loadB = operandLoad(dot.getB(), match.transB);
  for (LoadOp load : {match.loadA, match.loadB}) {
    if (!load && load == match.loadA && match.im2colA)
      continue;
    if (!load || load->getBlock() != loop.getBody() || load.getMask() ||
        load.getPaddingAttr() || !load->hasOneUse() ||
        cast<MemRefType>(load.getBase().getType()).getRank() != 2)
      return std::nullopt;
  }
  return match;
}

SmallVector<DotLoop> mlir::ism::getAcceleratedDotLoops(Operation *op) {
  SmallVector<DotLoop> loops;
  op->walk([&](DotOp dot) {
    if (!isa_and_nonnull<MmaEncodingAttr>(dot.getType().getEncoding()))
      return;
    // The loop lowerings read A and B from shared memory; a product whose
    // operands stay in registers is lowered by itself.
    std::optional<DotLoop> loop = matchDotLoop(dot);
    if (loop && isa_and_nonnull<SharedEncodingAttr>(
                    loop->getATileType().getEncoding()))
      loops.push_back(*loop);
  });
  return loops;
}

std::string mlir::ism::checkWgmmaProduct(DotOp dot, unsigned numWarps) {
  auto aType = dot.getA().getType(), bType = dot.getB().getType();
  Type in = aType.getElementType();
  if (aType.getRank() != 2)
    return "wgmma takes 2-D products";
  if (!(in.isBF16() || in.isF16()) || bType.getElementType() != in ||
      !dot.getType().getElementType().isF32())
    return "wgmma here takes f16 or bf16 inputs with an f32 accumulator";
  int64_t m = aType.getDimSize(0), k = aType.getDimSize(1);
  int64_t n = bType.getDimSize(1);
  if (numWarps % 4 != 0)
    return "num_warps must be a multiple of 4 (whole warpgroups)";
  if (m % (16 * numWarps) != 0)
    return "BLOCK_M must be a multiple of 16 x num_warps (64-row blocks per "
           "warpgroup)";
  if (k % 64 != 0)
    return "the product's K must be a multiple of 64 (128-byte rows)";
  if (n % 64 != 0 || n > 256)
    return "the product's N must be a multiple of 64, at most 256";
  return "";
}

/// Whether every use of `memref` reads it: loads (scalar, tile, gathered,
/// copied ahead) and dims.
static bool isOnlyRead(Value memref) {
  return llvm::all_of(memref.getUsers(), [](Operation *user) {
    return isa<memref::LoadOp, memref::DimOp, LoadOp, GatherOp, AsyncCopyOp,
               AsyncGatherOp>(user);
  });
}

bool mlir::ism::isReplicableScalar(Operation *op) {
  for (Type t : op->getResultTypes())
    if (isa<RankedTensorType>(t))
      return false;
  if (op->getNumRegions() != 0)
    return false;
  if (isa<ProgramIdOp, NumProgramsOp, memref::DimOp>(op) ||
      isa<arith::ArithDialect>(op->getDialect()))
    return true;
  // A scalar load from a table nothing in the kernel writes (a grouped
  // GEMM's tile offsets) reads the same value wherever it is repeated.
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return isOnlyRead(load.getMemRef());
  return isPure(op);
}

PersistentOptions mlir::ism::getPersistentOptions(DictionaryAttr persistent) {
  PersistentOptions options;
  if (!persistent)
    return options;
  if (auto g = persistent.getAs<IntegerAttr>("group_size"))
    options.groupSize = g.getInt();
  if (auto c = persistent.getAs<IntegerAttr>("cluster_m"))
    options.clusterM = c.getInt();
  if (auto c = persistent.getAs<IntegerAttr>("cluster_n"))
    options.clusterN = c.getInt();
  if (auto c = persistent.getAs<IntegerAttr>("cluster_k"))
    options.clusterK = c.getInt();
  if (auto c = persistent.getAs<IntegerAttr>("consumer_groups"))
    options.consumerGroups = c.getInt();
  if (auto t = persistent.getAs<IntegerAttr>("tma_store"))
    options.tmaStore = t.getInt() != 0;
  return options;
}
