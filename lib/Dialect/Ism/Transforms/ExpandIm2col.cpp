//===- ExpandIm2col.cpp - ism-expand-im2col: im2col as a gather -----------===//
//
// An ism.im2col that a wgmma K loop will not read (another chip, or not the
// A operand of a K loop) becomes its definition: index tiles of the output
// pixels and channels, the input coordinates of each element, and a gather
// masked to the pixels that exist.
//
//===----------------------------------------------------------------------===//

#include "ism/Dialect/Ism/IR/IsmOps.h"
#include "ism/Dialect/Ism/Transforms/DotLoop.h"
#include "ism/Dialect/Ism/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::ism {
#define GEN_PASS_DEF_ISMEXPANDIM2COL
#include "ism/Dialect/Ism/Transforms/Passes.h.inc"
} // namespace mlir::ism

using namespace mlir;
using namespace mlir::ism;

namespace {

/// Whether `op` is the A operand of a K loop wgmma takes on `chip`.
bool feedsWgmma(Im2colOp op, StringRef chip) {
  if (chip != "sm_90a" || !op->hasOneUse())
    return false;
  auto dot = dyn_cast<DotOp>(*op->getUsers().begin());
  if (!dot || dot.getA() != op.getResult())
    return false;
  std::optional<DotLoop> loop = matchDotLoop(dot);
  return loop && loop->im2colA == op;
}

/// ism.im2col's definition in tile ops (no layouts yet).
void expand(Im2colOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  RankedTensorType tile = op.getType();
  int64_t rows = tile.getDimSize(0), cols = tile.getDimSize(1);
  Type i32 = b.getI32Type();
  auto tileOf = [&](Type element) {
    return RankedTensorType::get(tile.getShape(), element);
  };
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  };
  auto toI32 = [&](Value index) -> Value {
    return arith::IndexCastOp::create(b, loc, i32, index);
  };
  auto dim = [&](int64_t d) -> Value {
    Value index = arith::ConstantIndexOp::create(b, loc, d);
    return toI32(memref::DimOp::create(b, loc, op.getBase(), index));
  };
  auto splat = [&](Value scalar) -> Value {
    return SplatOp::create(b, loc, tileOf(i32), scalar);
  };
  // A 2-D index tile: `d`'s coordinate of each element.
  auto coordinate = [&](unsigned d) -> Value {
    int64_t size = tile.getDimSize(d);
    Value range = RangeOp::create(
        b, loc, RankedTensorType::get({size}, i32), b.getI32IntegerAttr(0),
        b.getI32IntegerAttr(size));
    SmallVector<int64_t> expanded = {d == 0 ? size : 1, d == 0 ? 1 : size};
    Value e = ExpandDimsOp::create(
        b, loc, RankedTensorType::get(expanded, i32), range,
        b.getI32IntegerAttr(d == 0 ? 1 : 0));
    return BroadcastOp::create(b, loc, tileOf(i32), e);
  };
  (void)rows;
  (void)cols;
  ArrayRef<int64_t> filter = op.getFilter(), stride = op.getStride(),
                    pad = op.getPadding(), dil = op.getDilation();
  Value n = dim(0), h = dim(1), w = dim(2);
  // P = (H + 2 pad - dil (R - 1) - 1) / stride + 1, Q likewise; divisors
  // at least 1, so that a filter larger than the input divides by nothing
  // (no pixel exists then: N * P * Q <= 0 masks every row).
  auto outSize = [&](Value in, unsigned d) -> Value {
    Value span = arith::AddIOp::create(
        b, loc, in, cst(2 * pad[d] - dil[d] * (filter[d] - 1) - 1));
    Value q = arith::FloorDivSIOp::create(b, loc, span, cst(stride[d]));
    return arith::AddIOp::create(b, loc, q, cst(1));
  };
  Value p = outSize(h, 0), q = outSize(w, 1);
  Value pq = arith::MulIOp::create(b, loc, p, q);
  Value pixels = arith::MulIOp::create(b, loc, n, pq);
  Value one = cst(1);
  Value qDiv = arith::MaxSIOp::create(b, loc, q, one);
  Value pqDiv = arith::MaxSIOp::create(b, loc, pq, one);

  Value m = arith::AddIOp::create(b, loc, coordinate(0),
                                  splat(toI32(op.getPixel())));
  Value c = arith::AddIOp::create(b, loc, coordinate(1),
                                  splat(toI32(op.getChannel())));
  Value img = arith::DivSIOp::create(b, loc, m, splat(pqDiv));
  Value inImage = arith::RemSIOp::create(b, loc, m, splat(pqDiv));
  Value row = arith::DivSIOp::create(b, loc, inImage, splat(qDiv));
  Value col = arith::RemSIOp::create(b, loc, inImage, splat(qDiv));
  // h = p * stride - pad + r * dil (w likewise).
  auto input = [&](Value out, Value tap, unsigned d) -> Value {
    Value base = arith::SubIOp::create(
        b, loc, arith::MulIOp::create(b, loc, toI32(tap), cst(dil[d])),
        cst(pad[d]));
    Value scaled =
        arith::MulIOp::create(b, loc, out, splat(cst(stride[d])));
    return arith::AddIOp::create(b, loc, scaled, splat(base));
  };
  Value hi = input(row, op.getR(), 0), wi = input(col, op.getS(), 1);
  Value exists = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, m,
                                       splat(pixels));
  Value gathered =
      GatherOp::create(b, loc, tile, op.getBase(),
                       ValueRange{img, hi, wi, c}, exists, TypedAttr());
  op.replaceAllUsesWith(gathered);
  op.erase();
}

struct ExpandIm2colPass
    : mlir::ism::impl::IsmExpandIm2colBase<ExpandIm2colPass> {
  using IsmExpandIm2colBase::IsmExpandIm2colBase;

  void runOnOperation() override {
    SmallVector<Im2colOp> ops;
    getOperation()->walk([&](Im2colOp op) {
      if (!feedsWgmma(op, chip))
        ops.push_back(op);
    });
    for (Im2colOp op : ops)
      expand(op);
  }
};

} // namespace
