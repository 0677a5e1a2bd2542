//===- MemoryOps.cpp - tile loads, stores, gathers, scatters, atomics -----===//
//
// A tile access becomes, per thread, accesses of the global addresses of the
// thread's elements. When the whole tile is inside the memref and aligned,
// consecutive elements move as one 16-byte vector access; otherwise each
// element is accessed under its own bounds (and mask) predicate, so no
// access ever leaves the memref.
//
//===----------------------------------------------------------------------===//

#include "OperandTiles.h"
#include "Patterns.h"
#include "ism/Dialect/Ism/Transforms/DotLoop.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::ism;

namespace {

/// A memref seen as a global pointer to its first element plus sizes and
/// strides in elements.
struct GlobalView {
  Value base;    // !llvm.ptr<1> to element 0 (the memref's offset applied)
  Value baseInt; // the same address as an i64
  SmallVector<Value> sizes, strides;
  Type elementType;
  unsigned elementBytes;
};

GlobalView getGlobalView(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  GlobalView view;
  view.elementType = getStorageType(type.getElementType());
  view.elementBytes = type.getElementTypeBitWidth() / 8;
  view.sizes.assign(meta.getSizes().begin(), meta.getSizes().end());
  view.strides.assign(meta.getStrides().begin(), meta.getStrides().end());
  Value aligned =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value offsetBytes = arith::MulIOp::create(
      b, loc, meta.getOffset(), indexConstant(b, loc, view.elementBytes));
  Value address = arith::AddIOp::create(b, loc, aligned, offsetBytes);
  view.baseInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext(), 1);
  view.base = LLVM::IntToPtrOp::create(b, loc, ptrType, view.baseInt);
  return view;
}

/// The address of element `linear` (in elements) past the view's base.
Value elementAddress(OpBuilder &b, Location loc, const GlobalView &view,
                     Value linear) {
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), linear);
  return LLVM::GEPOp::create(b, loc, view.base.getType(), view.elementType,
                             view.base, ValueRange{i64});
}

/// Signed `lo <= v < hi` on index values.
Value inRange(OpBuilder &b, Location loc, Value v, Value hi) {
  Value zero = indexConstant(b, loc, 0);
  Value ge = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, v, zero);
  Value lt = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v, hi);
  return arith::AndIOp::create(b, loc, ge, lt);
}

Value andAll(OpBuilder &b, Location loc, ArrayRef<Value> conds) {
  Value result = arith::ConstantIntOp::create(b, loc, 1, 1);
  for (Value c : conds)
    result = arith::AndIOp::create(b, loc, result, c);
  return result;
}

/// Appends the conditions under which `vec`-element vectors along memref
/// dimension `fast`, starting at byte address `startBytes` (index) and
/// stepping by whole strides along the other dimensions, are all aligned:
/// `fast` has unit stride, `startBytes` and every other dimension's stride
/// in bytes are multiples of the vector. The same for every thread.
void appendVectorAlignment(OpBuilder &b, Location loc, const GlobalView &view,
                           unsigned fast, unsigned vec, Value startBytes,
                           SmallVectorImpl<Value> &conds) {
  Value zero = indexConstant(b, loc, 0);
  Value vb = indexConstant(b, loc, int64_t(vec) * view.elementBytes);
  auto multipleOfVector = [&](Value bytes) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                 arith::RemUIOp::create(b, loc, bytes, vb),
                                 zero);
  };
  conds.push_back(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        view.strides[fast],
                                        indexConstant(b, loc, 1)));
  conds.push_back(multipleOfVector(startBytes));
  for (auto [d, stride] : llvm::enumerate(view.strides))
    if (d != fast)
      conds.push_back(multipleOfVector(arith::MulIOp::create(
          b, loc, stride, indexConstant(b, loc, view.elementBytes))));
}

/// The addressing of a block access of tile `dist` at `offsets`. In-tile
/// coordinates are 32-bit (tiles are small); only the thread's base address
/// is 64-bit, so per-element addresses are the base plus constants.
struct BlockAccess {
  BlockAccess(OpBuilder &b, Location loc, const Distribution &dist,
              const GlobalView &view, ValueRange offsets, Value lane,
              Value warp)
      : dist(dist), view(view), offsets(offsets) {
    threadCoord = dist.getThreadCoord(b, loc, lane, warp, b.getI32Type());
    threadBase = indexConstant(b, loc, 0);
    for (unsigned d = 0; d < dist.getRank(); ++d) {
      Value c =
          arith::AddIOp::create(b, loc, this->offsets[d],
                                arith::IndexCastUIOp::create(
                                    b, loc, b.getIndexType(), threadCoord[d]));
      threadBase = arith::AddIOp::create(
          b, loc, threadBase,
          arith::MulIOp::create(b, loc, c, view.strides[d]));
    }
  }

  const Distribution &dist;
  const GlobalView &view;
  SmallVector<Value> offsets;     // tile origin, per dimension (index)
  SmallVector<Value> threadCoord; // per-thread in-tile coordinates (i32)
  Value threadBase; // element index of the thread's first element (index)

  /// Index (in elements) of register `reg`'s element.
  Value linearIndex(OpBuilder &b, Location loc, int64_t reg) const {
    SmallVector<int64_t> regCoord = dist.getRegCoord(reg);
    Value linear = threadBase;
    for (unsigned d = 0; d < dist.getRank(); ++d) {
      if (regCoord[d] == 0)
        continue;
      linear = arith::AddIOp::create(
          b, loc, linear,
          arith::MulIOp::create(b, loc, indexConstant(b, loc, regCoord[d]),
                                view.strides[d]));
    }
    return linear;
  }

  /// The in-bounds range [lo, hi) of in-tile coordinates along each
  /// dimension, as i32 values clamped to the tile.
  std::pair<SmallVector<Value>, SmallVector<Value>> bounds(OpBuilder &b,
                                                           Location loc) const {
    SmallVector<Value> lo, hi;
    Value zero = indexConstant(b, loc, 0);
    for (unsigned d = 0; d < dist.getRank(); ++d) {
      Value size = indexConstant(b, loc, dist.getShape()[d]);
      auto clamp = [&](Value v) {
        v = arith::MaxSIOp::create(b, loc, v, zero);
        v = arith::MinSIOp::create(b, loc, v, size);
        return arith::IndexCastOp::create(b, loc, b.getI32Type(), v);
      };
      lo.push_back(clamp(arith::SubIOp::create(b, loc, zero, offsets[d])));
      hi.push_back(
          clamp(arith::SubIOp::create(b, loc, view.sizes[d], offsets[d])));
    }
    return {lo, hi};
  }

  /// Whether register `reg`'s element is inside the memref.
  Value inBounds(OpBuilder &b, Location loc, int64_t reg, ArrayRef<Value> lo,
                 ArrayRef<Value> hi) const {
    SmallVector<int64_t> regCoord = dist.getRegCoord(reg);
    SmallVector<Value> conds;
    for (unsigned d = 0; d < dist.getRank(); ++d) {
      Value c = arith::AddIOp::create(
          b, loc, threadCoord[d],
          arith::ConstantIntOp::create(b, loc, regCoord[d], 32));
      conds.push_back(
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, c, lo[d]));
      conds.push_back(
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, c, hi[d]));
    }
    return andAll(b, loc, conds);
  }

  /// Elements moved by one vector access on the fast path (1: none).
  unsigned vectorWidth() const {
    unsigned maxElems = std::max(1u, 16 / view.elementBytes);
    auto [fast, run] = dist.getAccessRun();
    if (fast != dist.getRank() - 1)
      return 1;
    return std::min<unsigned>(run, maxElems);
  }

  /// True when the whole tile is inside the memref and every vector of
  /// `vec` elements is contiguous and aligned: then the fast path applies.
  /// Uniform across the CTA.
  Value fastPathCondition(OpBuilder &b, Location loc, unsigned vec) const {
    SmallVector<Value> conds;
    ArrayRef<int64_t> shape = dist.getShape();
    Value zero = indexConstant(b, loc, 0);
    for (unsigned d = 0; d < dist.getRank(); ++d) {
      conds.push_back(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                            offsets[d], zero));
      Value end = arith::AddIOp::create(b, loc, offsets[d],
                                        indexConstant(b, loc, shape[d]));
      conds.push_back(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                                            end, view.sizes[d]));
    }
    if (vec > 1)
      appendAlignment(b, loc, vec, conds);
    return andAll(b, loc, conds);
  }

  /// True when every vector of `vec` elements along the fast dimension
  /// that starts at a multiple of `vec` in the tile is contiguous and
  /// aligned (wherever the tile lies). Uniform across the CTA.
  Value alignmentCondition(OpBuilder &b, Location loc, unsigned vec) const {
    SmallVector<Value> conds;
    appendAlignment(b, loc, vec, conds);
    return andAll(b, loc, conds);
  }

  /// The in-tile coordinate along the fast dimension of register `reg`
  /// (i32), and whether its coordinates along the other dimensions lie in
  /// the memref (null for a 1-D tile).
  std::pair<Value, Value> fastCoord(OpBuilder &b, Location loc, int64_t reg,
                                    ArrayRef<Value> lo,
                                    ArrayRef<Value> hi) const {
    SmallVector<int64_t> regCoord = dist.getRegCoord(reg);
    unsigned fast = dist.getAccessRun().first;
    Value c;
    SmallVector<Value> others;
    for (unsigned d = 0; d < dist.getRank(); ++d) {
      Value v = arith::AddIOp::create(
          b, loc, threadCoord[d],
          arith::ConstantIntOp::create(b, loc, regCoord[d], 32));
      if (d == fast) {
        c = v;
        continue;
      }
      others.push_back(
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, v, lo[d]));
      others.push_back(
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v, hi[d]));
    }
    return {c, others.empty() ? Value() : andAll(b, loc, others)};
  }

private:
  void appendAlignment(OpBuilder &b, Location loc, unsigned vec,
                       SmallVectorImpl<Value> &conds) const {
    // Origin address alignment.
    Value origin = indexConstant(b, loc, 0);
    for (unsigned d = 0; d < dist.getRank(); ++d)
      origin = arith::AddIOp::create(
          b, loc, origin,
          arith::MulIOp::create(b, loc, offsets[d], view.strides[d]));
    Value originBytes = arith::AddIOp::create(
        b, loc,
        arith::IndexCastOp::create(b, loc, b.getIndexType(), view.baseInt),
        arith::MulIOp::create(b, loc, origin,
                              indexConstant(b, loc, view.elementBytes)));
    appendVectorAlignment(b, loc, view, dist.getAccessRun().first, vec,
                          originBytes, conds);
  }
};

/// The narrower vector the edge paths try after `vec` elements: 4 bytes
/// (two 16-bit elements) when `vec` is wider, else none (1).
unsigned narrowerVector(unsigned vec, unsigned elementBytes) {
  unsigned four = 4 / elementBytes;
  return vec > four && four > 1 ? four : 1;
}

/// `lo <= c + k` and `c + k + n <= hi` (i32): `n` elements from in-tile
/// coordinate `c + k` lie in [lo, hi).
Value spanInRange(OpBuilder &b, Location loc, Value c, int64_t k, int64_t n,
                  Value lo, Value hi) {
  Value first = arith::AddIOp::create(
      b, loc, c, arith::ConstantIntOp::create(b, loc, k, 32));
  Value end = arith::AddIOp::create(
      b, loc, c, arith::ConstantIntOp::create(b, loc, k + n, 32));
  return arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, first, lo),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, end, hi));
}

/// The padding value of a load or gather (zero by default), in the
/// element's storage type (an 8-bit float's bits).
Value paddingValue(OpBuilder &b, Location loc, Type elementType,
                   std::optional<TypedAttr> padding) {
  Type storage = getStorageType(elementType);
  if (!padding)
    return arith::ConstantOp::create(b, loc, b.getZeroAttr(storage));
  if (auto f = dyn_cast<FloatAttr>(*padding); f && storage != elementType)
    return arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(storage, f.getValue().bitcastToAPInt()));
  return arith::ConstantOp::create(b, loc, *padding);
}

/// Loads `elementType` from `address` when `pred`, else yields `other`.
Value predicatedLoad(OpBuilder &b, Location loc, Value pred, Value address,
                     Type elementType, Value other, unsigned bytes) {
  auto ifOp = scf::IfOp::create(
      b, loc, pred,
      [&](OpBuilder &tb, Location l) {
        Value v = LLVM::LoadOp::create(tb, l, elementType, address, bytes);
        scf::YieldOp::create(tb, l, v);
      },
      [&](OpBuilder &eb, Location l) { scf::YieldOp::create(eb, l, other); });
  return ifOp.getResult(0);
}

/// Stores `value` to `address` when `pred`.
void predicatedStore(OpBuilder &b, Location loc, Value pred, Value value,
                     Value address, unsigned bytes) {
  scf::IfOp::create(b, loc, pred, [&](OpBuilder &tb, Location l) {
    LLVM::StoreOp::create(tb, l, value, address, bytes);
    scf::YieldOp::create(tb, l);
  });
}

/// Rejects memrefs whose elements the lowering does not move.
LogicalResult checkElementType(ConversionPatternRewriter &rewriter,
                               Operation *op, MemRefType type) {
  unsigned bits = type.getElementTypeBitWidth();
  if (!type.getElementType().isIntOrFloat() || bits % 8 != 0)
    return rewriter.notifyMatchFailure(op, "unsupported element type");
  return success();
}

/// What every tile memory access starts from: the tile's distribution over
/// threads and the memref as a global pointer with sizes and strides.
struct TileAccess {
  Distribution dist;
  GlobalView view;
};

/// Checks that `tile` can be distributed and `memref`'s elements moved, and
/// builds the TileAccess of an access of `tile` through `base` (the
/// converted memref operand).
FailureOr<TileAccess> beginAccess(ConversionPatternRewriter &rewriter,
                                  Operation *op, RankedTensorType tile,
                                  MemRefType memref, Value base) {
  if (failed(checkDistributable(rewriter, op, tile)) ||
      failed(checkElementType(rewriter, op, memref)))
    return failure();
  return TileAccess{Distribution(tile),
                    getGlobalView(rewriter, op->getLoc(), base)};
}

/// The thread's `numRegs` elements loaded `vec` at a time (`bytes` each
/// access, its alignment) from `address(r)`, the address of register r.
/// With `pred`, the chunk that starts at register r is loaded only where
/// `pred(r)` holds and is `padding` elsewhere: a branch around the load,
/// which ptxas turns into a predicated load, so nothing waits for the data
/// before its first use (a select of the loaded value against the padding
/// would, and would keep the next load from issuing until then).
Value loadChunks(OpBuilder &b, Location l, Type elementType, int64_t numRegs,
                 unsigned vec, unsigned bytes,
                 function_ref<Value(int64_t)> address,
                 function_ref<Value(int64_t)> pred = nullptr,
                 Value padding = Value()) {
  auto chunkType = VectorType::get({vec}, elementType);
  Value paddingChunk;
  if (pred)
    paddingChunk = vector::BroadcastOp::create(b, l, chunkType, padding);
  SmallVector<Value> elements;
  for (int64_t r = 0; r < numRegs; r += vec) {
    Value chunk =
        pred ? predicatedLoad(b, l, pred(r), address(r), chunkType,
                              paddingChunk, bytes)
             : LLVM::LoadOp::create(b, l, chunkType, address(r), bytes);
    for (unsigned i = 0; i < vec; ++i)
      elements.push_back(extractReg(b, l, chunk, i));
  }
  return buildVector(b, l, elementType, elements);
}

/// The vector of `vec` registers from `r` in the edge paths: its in-tile
/// coordinate `c` along the fast dimension, whether its other coordinates
/// lie in the memref (`others`, null for a 1-D tile), its first memref
/// index and address, and whether all of it lies inside (`whole`).
struct EdgeChunk {
  Value c, others, first, address, whole;
  Value lo, hi; // the memref's bounds along the fast dimension

  EdgeChunk(OpBuilder &b, Location l, const BlockAccess &access,
            ArrayRef<Value> los, ArrayRef<Value> his, int64_t r, unsigned vec) {
    unsigned fast = access.dist.getAccessRun().first;
    lo = los[fast];
    hi = his[fast];
    std::tie(c, others) = access.fastCoord(b, l, r, los, his);
    whole = inside(b, l, 0, vec);
    first = access.linearIndex(b, l, r);
    address = elementAddress(b, l, access.view, first);
  }

  /// Whether its elements [k, k + n) lie inside the memref.
  Value inside(OpBuilder &b, Location l, unsigned k, unsigned n) const {
    Value in = spanInRange(b, l, c, k, n, lo, hi);
    return others ? arith::AndIOp::create(b, l, in, others) : in;
  }

  /// Element `i`: whether it lies inside the memref, and its address (the
  /// accesses where the edge cuts the vector).
  std::pair<Value, Value> element(OpBuilder &b, Location l,
                                  const GlobalView &view, unsigned i) const {
    Value pred = inside(b, l, i, 1);
    Value at = elementAddress(
        b, l, view, arith::AddIOp::create(b, l, first, indexConstant(b, l, i)));
    return {pred, at};
  }
};

/// The edge path of a tile load (a tile that is partly outside the memref,
/// or whose rows are not aligned to its vectors): where every vector of
/// `vec` elements is aligned (a uniform test), each is loaded whole when
/// all its elements are inside the memref and element by element
/// otherwise (only the vectors the edge cuts); where they are not, the
/// same with the narrower vectors of narrowerVector (a row of 16-bit
/// elements at an odd multiple of 4 bytes still loads 4 bytes at a time);
/// below that, each element under its own predicate.
Value emitEdgeLoad(OpBuilder &b, Location l, const BlockAccess &access,
                   Type elementType, Value padding, Value mask, int64_t maskRun,
                   unsigned vec) {
  const GlobalView &view = access.view;
  int64_t numRegs = access.dist.getNumRegs();
  auto [lo, hi] = access.bounds(b, l);
  auto elementLoad = [&](OpBuilder &eb, Location el, int64_t r, Value pred,
                         Value address) {
    if (mask)
      pred = arith::AndIOp::create(eb, el, pred, extractReg(eb, el, mask, r));
    return predicatedLoad(eb, el, pred, address, elementType, padding,
                          view.elementBytes);
  };
  if (vec == 1) {
    SmallVector<Value> elements;
    for (int64_t r = 0; r < numRegs; ++r) {
      Value address = elementAddress(b, l, view, access.linearIndex(b, l, r));
      elements.push_back(
          elementLoad(b, l, r, access.inBounds(b, l, r, lo, hi), address));
    }
    return buildVector(b, l, elementType, elements);
  }
  auto ifOp = scf::IfOp::create(
      b, l, access.alignmentCondition(b, l, vec),
      [&](OpBuilder &tb, Location tl) {
        auto chunkType = VectorType::get({vec}, elementType);
        Value paddingChunk =
            vector::BroadcastOp::create(tb, tl, chunkType, padding);
        SmallVector<Value> elements;
        for (int64_t r = 0; r < numRegs; r += vec) {
          EdgeChunk edge(tb, tl, access, lo, hi, r, vec);
          Value address = edge.address;
          auto chunk = scf::IfOp::create(
              tb, tl, edge.whole,
              [&](OpBuilder &vb, Location vl) {
                Value v;
                if (mask && maskRun > 0 && maskRun % vec == 0)
                  v = predicatedLoad(vb, vl, extractReg(vb, vl, mask, r),
                                     address, chunkType, paddingChunk,
                                     vec * view.elementBytes);
                else
                  v = LLVM::LoadOp::create(vb, vl, chunkType, address,
                                           vec * view.elementBytes);
                if (mask && !(maskRun > 0 && maskRun % vec == 0)) {
                  SmallVector<Value> kept;
                  for (unsigned i = 0; i < vec; ++i)
                    kept.push_back(arith::SelectOp::create(
                        vb, vl, extractReg(vb, vl, mask, r + i),
                        extractReg(vb, vl, v, i), padding));
                  v = buildVector(vb, vl, elementType, kept);
                }
                scf::YieldOp::create(vb, vl, v);
              },
              [&](OpBuilder &eb, Location el) {
                SmallVector<Value> part;
                for (unsigned i = 0; i < vec; ++i) {
                  auto [pred, at] = edge.element(eb, el, view, i);
                  part.push_back(elementLoad(eb, el, r + i, pred, at));
                }
                scf::YieldOp::create(eb, el,
                                     buildVector(eb, el, elementType, part));
              });
          for (unsigned i = 0; i < vec; ++i)
            elements.push_back(extractReg(tb, tl, chunk.getResult(0), i));
        }
        scf::YieldOp::create(tb, tl,
                             buildVector(tb, tl, elementType, elements));
      },
      [&](OpBuilder &eb, Location el) {
        scf::YieldOp::create(
            eb, el,
            emitEdgeLoad(eb, el, access, elementType, padding, mask, maskRun,
                         narrowerVector(vec, view.elementBytes)));
      });
  return ifOp.getResult(0);
}

/// The per-thread vector of a tile load: 16-byte vector loads when the
/// whole tile is in bounds and aligned (a uniform test), predicated element
/// loads otherwise. `mask` may be null; `maskRun` is how many consecutive
/// elements along the last dimension the mask is known to keep equal (in
/// aligned runs, AxisInfo's constancy; 0 or 1 when unknown).
Value emitTileLoad(OpBuilder &rewriter, Location loc, const BlockAccess &access,
                   Type elementType, Type vectorType, Value padding, Value mask,
                   int64_t maskRun = 1) {
  const Distribution &dist = access.dist;
  const GlobalView &view = access.view;
  unsigned vec = access.vectorWidth();
  int64_t numRegs = dist.getNumRegs();
  // Where every vector access lies inside one run of equal mask bits, the
  // fast path predicates each access on its first bit; otherwise it loads
  // the whole tile and selects the padding where the mask is off.
  bool predicated = mask && (vec == 1 || (maskRun > 0 && maskRun % vec == 0));
  auto ifOp = scf::IfOp::create(
      rewriter, loc, access.fastPathCondition(rewriter, loc, vec),
      [&](OpBuilder &b, Location l) {
        // Fast path: the whole tile is in bounds and aligned.
        auto address = [&](int64_t r) {
          return elementAddress(b, l, view, access.linearIndex(b, l, r));
        };
        if (predicated) {
          scf::YieldOp::create(
              b, l,
              loadChunks(
                  b, l, elementType, numRegs, vec, vec * view.elementBytes,
                  address, [&](int64_t r) { return extractReg(b, l, mask, r); },
                  padding));
          return;
        }
        Value result = loadChunks(b, l, elementType, numRegs, vec,
                                  vec * view.elementBytes, address);
        if (mask) {
          Value pad = vector::BroadcastOp::create(b, l, vectorType, padding);
          result = arith::SelectOp::create(b, l, mask, result, pad);
        }
        scf::YieldOp::create(b, l, result);
      },
      [&](OpBuilder &b, Location l) {
        // Edge path: a partial tile, or rows not aligned to the vector.
        scf::YieldOp::create(b, l,
                             emitEdgeLoad(b, l, access, elementType, padding,
                                          mask, maskRun, vec));
      });
  return ifOp.getResult(0);
}

/// The part the ism.load and ism.async_load lowerings share: the access of
/// the op's tile at its offsets by this thread, its element and vector
/// types and its padding, handed to `lower`, whose value replaces the op.
template <typename OpTy>
struct TileLoadPattern : IsmConversionPattern<OpTy> {
  using IsmConversionPattern<OpTy>::IsmConversionPattern;
  using OpAdaptor = typename IsmConversionPattern<OpTy>::OpAdaptor;

  LogicalResult
  lowerLoad(OpTy op, OpAdaptor adaptor, ConversionPatternRewriter &rewriter,
            function_ref<Value(const TileAccess &, const BlockAccess &, Type,
                               Type, Value)>
                lower) const {
    FailureOr<TileAccess> tileAccess = beginAccess(
        rewriter, op, op.getType(), op.getBase().getType(), adaptor.getBase());
    if (failed(tileAccess))
      return failure();
    Location loc = op.getLoc();
    Type elementType = getStorageType(op.getType().getElementType());
    Type vectorType = this->getTypeConverter()->convertType(op.getType());
    Value lane = this->context.getLaneId(rewriter, loc);
    Value warp = this->context.getWarpId(rewriter, loc);
    BlockAccess access(rewriter, loc, tileAccess->dist, tileAccess->view,
                       adaptor.getOffsets(), lane, warp);
    Value padding = paddingValue(rewriter, loc, elementType, op.getPadding());
    rewriter.replaceOp(
        op, lower(*tileAccess, access, elementType, vectorType, padding));
    return success();
  }
};

/// ism.load -> vector loads (fast path) or predicated element loads.
struct LoadOpLowering : TileLoadPattern<LoadOp> {
  using TileLoadPattern::TileLoadPattern;

  LogicalResult
  matchAndRewrite(LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return lowerLoad(op, adaptor, rewriter,
                     [&](const TileAccess &, const BlockAccess &access,
                         Type elementType, Type vectorType, Value padding) {
                       return emitTileLoad(rewriter, op.getLoc(), access,
                                           elementType, vectorType, padding,
                                           adaptor.getMask(),
                                           context.maskRuns.lookup(op));
                     });
  }
};

/// Whether the async ring can hold `access`'s tile: 16-byte chunks.
bool ringable(const BlockAccess &access) {
  return access.vectorWidth() * access.view.elementBytes == 16;
}

/// The shared-memory address of chunk `chunk` of this thread in slot `slot`
/// of the ring at `ringBase` (an i64 address): chunk-major, thread-minor, so a
/// warp's 16-byte accesses are consecutive (no bank conflicts) and every thread
/// reads back what it copied itself.
Value ringChunk(OpBuilder &b, Location loc, const LoweringContext &context,
                Value ringBase, int64_t slotBytes, Value slot, int64_t chunk) {
  Type i64 = b.getI64Type();
  Value tid =
      arith::IndexCastOp::create(b, loc, i64, context.getThreadId(b, loc));
  Value offset = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(
          b, loc, arith::IndexCastOp::create(b, loc, i64, slot),
          arith::ConstantIntOp::create(b, loc, slotBytes, 64)),
      arith::MulIOp::create(
          b, loc,
          arith::AddIOp::create(
              b, loc, tid,
              arith::ConstantIntOp::create(
                  b, loc, chunk * context.getNumThreads(), 64)),
          arith::ConstantIntOp::create(b, loc, 16, 64)));
  Value address = arith::AddIOp::create(b, loc, ringBase, offset);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), address);
}

/// The shared-memory address (i64) of the ring of an ism.async_copy or
/// ism.async_load: byte `ring` of dynamic shared memory, or, with
/// `ring_id`, `slots` slots of the kernel's own scratch.
template <typename OpTy>
Value ringBase(OpBuilder &b, Location loc, LoweringContext &context, OpTy op) {
  if (std::optional<uint32_t> id = op.getRingId())
    return context.getGatherRing(
        b, loc, *id, int64_t(op.getSlots().value_or(1)) * op.getSlotBytes());
  auto workgroup = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  auto raw = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                             MemRefLayoutAttrInterface{}, workgroup);
  Value base = arith::IndexCastOp::create(
      b, loc, b.getI64Type(),
      memref::ExtractAlignedPointerAsIndexOp::create(
          b, loc, gpu::DynamicSharedMemoryOp::create(b, loc, raw)));
  return arith::AddIOp::create(
      b, loc, base, arith::ConstantIntOp::create(b, loc, op.getRing(), 64));
}

/// ism.async_copy -> cp.async of the thread's 16-byte chunks (when the
/// tile is in bounds and aligned), then cp.async.commit_group.
struct AsyncCopyOpLowering : IsmConversionPattern<AsyncCopyOp> {
  using IsmConversionPattern::IsmConversionPattern;

  LogicalResult
  matchAndRewrite(AsyncCopyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tile = cast<RankedTensorType>(op.getTile());
    FailureOr<TileAccess> tileAccess = beginAccess(
        rewriter, op, tile, op.getBase().getType(), adaptor.getBase());
    if (failed(tileAccess))
      return failure();
    Location loc = op.getLoc();
    Value lane = context.getLaneId(rewriter, loc);
    Value warp = context.getWarpId(rewriter, loc);
    BlockAccess access(rewriter, loc, tileAccess->dist, tileAccess->view,
                       adaptor.getOffsets(), lane, warp);
    if (ringable(access)) {
      unsigned vec = access.vectorWidth();
      Value base = ringBase(rewriter, loc, context, op);
      scf::IfOp::create(
          rewriter, loc, access.fastPathCondition(rewriter, loc, vec),
          [&](OpBuilder &b, Location l) {
            for (int64_t r = 0; r < tileAccess->dist.getNumRegs(); r += vec) {
              Value src = elementAddress(b, l, tileAccess->view,
                                         access.linearIndex(b, l, r));
              Value dst = ringChunk(b, l, context, base, op.getSlotBytes(),
                                    adaptor.getSlot(), r / vec);
              NVVM::CpAsyncOp::create(
                  b, l, dst, src, b.getI32IntegerAttr(16),
                  NVVM::LoadCacheModifierKindAttr::get(
                      b.getContext(), NVVM::LoadCacheModifierKind::CG),
                  Value());
            }
            scf::YieldOp::create(b, l);
          });
    }
    NVVM::CpAsyncCommitGroupOp::create(rewriter, loc);
    rewriter.eraseOp(op);
    return success();
  }
};

/// ism.async_load -> cp.async.wait_group, then the thread's chunks from the
/// ring, or the ordinary load for a tile the copy left alone.
struct AsyncLoadOpLowering : TileLoadPattern<AsyncLoadOp> {
  using TileLoadPattern::TileLoadPattern;

  LogicalResult
  matchAndRewrite(AsyncLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    return lowerLoad(
        op, adaptor, rewriter,
        [&](const TileAccess &tileAccess, const BlockAccess &access,
            Type elementType, Type vectorType, Value padding) {
          NVVM::CpAsyncWaitGroupOp::create(rewriter, loc, op.getPending());
          if (!ringable(access))
            return emitTileLoad(rewriter, loc, access, elementType, vectorType,
                                padding, Value());
          unsigned vec = access.vectorWidth();
          Value base = ringBase(rewriter, loc, context, op);
          auto ifOp = scf::IfOp::create(
              rewriter, loc, access.fastPathCondition(rewriter, loc, vec),
              [&](OpBuilder &b, Location l) {
                scf::YieldOp::create(
                    b, l,
                    loadChunks(b, l, elementType, tileAccess.dist.getNumRegs(),
                               vec, 16, [&](int64_t r) {
                                 return ringChunk(b, l, context, base,
                                                  op.getSlotBytes(),
                                                  adaptor.getSlot(), r / vec);
                               }));
              },
              [&](OpBuilder &b, Location l) {
                scf::YieldOp::create(b, l,
                                     emitTileLoad(b, l, access, elementType,
                                                  vectorType, padding,
                                                  Value()));
              });
          return ifOp.getResult(0);
        });
  }
};

/// Whether a store of a 16-bit tile in the tensor-core accumulator layout
/// can go as 16-byte stores after a transpose within each quad of lanes.
/// The fragment (Distribution: lane l holds the column pair 2(l%4) of each
/// 8-column block, rows l/4 and l/4 + 8) stores 4 bytes a lane, 16 of the
/// 32 bytes of each sector a warp writes. Registers come in groups of 16:
/// four consecutive 8-column blocks (register bits 2-3) x two rows (bit 1)
/// x the pair (bit 0); after the transpose, lane q holds all eight columns
/// of block q of each row, one 16-byte store, and a warp's store covers
/// whole sectors.
static bool canStoreQuadTransposed(const Distribution &dist,
                                   const GlobalView &view) {
  if (!dist.getMmaLayout() || dist.isSlice() || dist.getRank() != 2 ||
      view.elementBytes != 2 || dist.getContiguity() != 2 ||
      dist.getNumRegs() % 16 != 0)
    return false;
  SmallVector<int64_t> lane0 = dist.getThreadCoord(0, 0);
  for (int64_t q = 1; q < 4; ++q) {
    SmallVector<int64_t> c = dist.getThreadCoord(q, 0);
    if (c[0] != lane0[0] || c[1] != lane0[1] + 2 * q)
      return false;
  }
  // Every lane 0's columns start 8-aligned (16 bytes of a 16-byte-aligned
  // row), so that lane q's eight columns do.
  for (int64_t warp = 0; warp < dist.getNumThreads() / 32; ++warp)
    if (dist.getThreadCoord(0, warp)[1] % 8 != 0)
      return false;
  for (int64_t g = 0; g < dist.getNumRegs(); g += 16) {
    SmallVector<int64_t> base = dist.getRegCoord(g);
    if (base[1] % 8 != 0)
      return false;
    for (int64_t r = 0; r < 16; ++r) {
      SmallVector<int64_t> c = dist.getRegCoord(g + r);
      if (c[0] != base[0] + 8 * ((r >> 1) & 1) ||
          c[1] != base[1] + 8 * (r >> 2) + (r & 1))
        return false;
    }
  }
  return true;
}

/// Lane q of its quad's bits 0 and 1 (i1 values) and q itself, for
/// quadTransposedChunk.
struct QuadLane {
  Value q, bit0, bit1;
  QuadLane(OpBuilder &b, Location loc, Value lane) {
    q = arith::AndIOp::create(b, loc, lane, indexConstant(b, loc, 3));
    auto laneBit = [&](int64_t bit) {
      return arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ne,
          arith::AndIOp::create(b, loc, q, indexConstant(b, loc, bit)),
          indexConstant(b, loc, 0));
    };
    bit0 = laneBit(1);
    bit1 = laneBit(2);
  }
};

/// The 16 bytes lane q holds after the transpose within its quad of row
/// `h` (0: the lane's row, 1: 8 rows below) of the 16-register group at
/// `group` (canStoreQuadTransposed): the four 32-bit column pairs x[i]
/// (block i) move by two butterfly steps (lane bit 1 with index bit 1,
/// then bit 0 with bit 0; one shuffle per two values a step) so that lane
/// q ends with y[p] = lane p's x[q], columns 8q .. 8q + 7 in order.
static Value quadTransposedChunk(OpBuilder &b, Location loc, Value value,
                                 int64_t group, int64_t h,
                                 const QuadLane &quad) {
  Type i32 = b.getI32Type();
  Value x[4];
  for (int64_t i = 0; i < 4; ++i) {
    int64_t r = group + 4 * i + 2 * h;
    Value pair = vector::ShuffleOp::create(b, loc, value, value,
                                           ArrayRef<int64_t>{r, r + 1});
    x[i] = LLVM::BitcastOp::create(b, loc, i32, pair);
  }
  auto step = [&](Value bit, int64_t mask, int64_t i0, int64_t i1) {
    Value send = arith::SelectOp::create(b, loc, bit, x[i0], x[i1]);
    Value recv =
        gpu::ShuffleOp::create(b, loc, send, mask, 32, gpu::ShuffleMode::XOR)
            .getShuffleResult();
    x[i0] = arith::SelectOp::create(b, loc, bit, recv, x[i0]);
    x[i1] = arith::SelectOp::create(b, loc, bit, x[i1], recv);
  };
  step(quad.bit1, 2, 0, 2);
  step(quad.bit1, 2, 1, 3);
  step(quad.bit0, 1, 0, 1);
  step(quad.bit0, 1, 2, 3);
  return buildVector(b, loc, i32, {x[0], x[1], x[2], x[3]});
}

/// The quad-transposed stores of canStoreQuadTransposed: per group of 16
/// registers and row, lane q stores its quadTransposedChunk, columns
/// 8q .. 8q + 7 of the group's 32, 16 bytes.
static void storeQuadTransposed(OpBuilder &b, Location loc,
                                const Distribution &dist,
                                const GlobalView &view,
                                const BlockAccess &access, Value value,
                                Value lane) {
  QuadLane quad(b, loc, lane);
  // Lane q's eight columns start 6q elements after its own pair's first.
  Value shift = arith::MulIOp::create(b, loc, quad.q, indexConstant(b, loc, 6));
  for (int64_t g = 0; g < dist.getNumRegs(); g += 16) {
    for (int64_t h = 0; h < 2; ++h) {
      Value chunk = quadTransposedChunk(b, loc, value, g, h, quad);
      Value linear = arith::AddIOp::create(
          b, loc, access.linearIndex(b, loc, g + 2 * h), shift);
      LLVM::StoreOp::create(b, loc, chunk, elementAddress(b, loc, view, linear),
                            16);
    }
  }
}

/// Whether the TMA store's staging (storeTileByTMA) takes `dist`'s tile: the
/// quad transpose's layout, with each pair of 16-register groups (32
/// columns each) a 64-column box of one 16-row stripe, 64-aligned.
static bool canStoreByTMA(const Distribution &dist, const GlobalView &view) {
  if (!canStoreQuadTransposed(dist, view) || dist.getNumRegs() % 32 != 0)
    return false;
  for (int64_t warp = 0; warp < dist.getNumThreads() / 32; ++warp)
    if (dist.getThreadCoord(0, warp)[1] % 64 != 0)
      return false;
  for (int64_t g = 0; g < dist.getNumRegs(); g += 32) {
    SmallVector<int64_t> first = dist.getRegCoord(g),
                         second = dist.getRegCoord(g + 16);
    if (first[1] % 64 != 0 || second[0] != first[0] ||
        second[1] != first[1] + 32)
      return false;
  }
  return true;
}

/// The TMA-store epilogue (tma_store = 1, HopperGemm.cpp): each warp
/// writes its part of the tile, one 16 x 64 box at a time, into one of its
/// two 2 KiB staging boxes (128-byte rows, 16-byte chunks XOR-swizzled by
/// the row as TMA's 128-byte swizzle reads them; the quad transpose gives
/// each lane one chunk a row), and its lane 0 has TMA store the box at the
/// box's place in the memref (`desc`, the tile at `offsets`); TMA clips
/// what lies outside. A box is rewritten once the store issued two boxes
/// before it has read it; the previous tile's stores, before the first.
static void storeTileByTMA(OpBuilder &b, Location loc, const Distribution &dist,
                           const WgmmaPipeline &p, Value value,
                           ValueRange offsets, Value lane, Value warp) {
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto i64Of = [&](Value index) {
    return arith::IndexCastOp::create(b, loc, i64, index);
  };
  QuadLane quad(b, loc, lane);
  Value q = quad.q;
  Value laneRow =
      arith::ShRUIOp::create(b, loc, lane, indexConstant(b, loc, 2));
  Value isLane0 = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                        indexConstant(b, loc, 0));
  auto onLane0 = [&](function_ref<void(OpBuilder &, Location)> body) {
    scf::IfOp::create(b, loc, isLane0, [&](OpBuilder &tb, Location tl) {
      body(tb, tl);
      scf::YieldOp::create(tb, tl);
    });
  };
  auto syncWarp = [&] {
    NVVM::SyncWarpOp::create(b, loc, i32Const(b, loc, -1));
  };
  // The warp's boxes: the consumer warps are the CTA's first.
  Value hwWarp = arith::DivUIOp::create(
      b, loc, gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x),
      indexConstant(b, loc, 32));
  Value staging = arith::AddIOp::create(
      b, loc, getWgmmaRingBase(b, loc, p),
      arith::AddIOp::create(
          b, loc, i64Const(b, loc, p.stagingOffset()),
          arith::MulIOp::create(b, loc, i64Of(hwWarp),
                                i64Const(b, loc, 2 * kTmaStoreBoxBytes))));
  // The warp's first element (lane 0's register 0).
  SmallVector<Value> origin =
      dist.getThreadCoord(b, loc, indexConstant(b, loc, 0), warp);
  Value descPtr = LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(ctx), p.storeDescriptor);
  // Lane q's chunk of a row: its rows are laneRow and laneRow + 8.
  Value rowOffset[2];
  for (int64_t h = 0; h < 2; ++h)
    rowOffset[h] = arith::MulIOp::create(
        b, loc,
        i64Of(arith::AddIOp::create(b, loc, laneRow,
                                    indexConstant(b, loc, 8 * h))),
        i64Const(b, loc, 128));
  // Row r of a box swizzles chunk c to c ^ (r % 8); lane row r and r + 8
  // alike.
  Value rowPhase =
      arith::AndIOp::create(b, loc, laneRow, indexConstant(b, loc, 7));
  onLane0([&](OpBuilder &tb, Location tl) {
    NVVM::CpAsyncBulkWaitGroupOp::create(tb, tl, 0, tb.getUnitAttr());
  });
  syncWarp();
  for (int64_t g = 0, box = 0; g < dist.getNumRegs(); g += 32, ++box) {
    Value buffer = arith::AddIOp::create(
        b, loc, staging, i64Const(b, loc, (box % 2) * kTmaStoreBoxBytes));
    if (box >= 2) {
      onLane0([&](OpBuilder &tb, Location tl) {
        NVVM::CpAsyncBulkWaitGroupOp::create(tb, tl, 1, tb.getUnitAttr());
      });
      syncWarp();
    }
    for (int64_t half = 0; half < 2; ++half) {
      int64_t group = g + 16 * half;
      // The chunk lane q holds: block q of this 32-column group, the
      // (4 half + q)-th of the box's row.
      Value chunk = arith::XOrIOp::create(
          b, loc,
          arith::AddIOp::create(b, loc, q, indexConstant(b, loc, 4 * half)),
          rowPhase);
      Value chunkBytes =
          arith::MulIOp::create(b, loc, i64Of(chunk), i64Const(b, loc, 16));
      for (int64_t h = 0; h < 2; ++h) {
        Value data = quadTransposedChunk(b, loc, value, group, h, quad);
        Value address = arith::AddIOp::create(
            b, loc, buffer,
            arith::AddIOp::create(b, loc, rowOffset[h], chunkBytes));
        LLVM::StoreOp::create(b, loc, data, sharedPointer(b, loc, address), 16);
      }
    }
    // The writes reach TMA's (async) proxy before lane 0 issues the store.
    fenceAsyncProxy(b, loc);
    syncWarp();
    SmallVector<int64_t> at = dist.getRegCoord(g);
    Value row = arith::AddIOp::create(
        b, loc, offsets[0],
        arith::AddIOp::create(b, loc, origin[0], indexConstant(b, loc, at[0])));
    Value col = arith::AddIOp::create(
        b, loc, offsets[1],
        arith::AddIOp::create(b, loc, origin[1], indexConstant(b, loc, at[1])));
    onLane0([&](OpBuilder &tb, Location tl) {
      NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
          tb, tl, descPtr, sharedPointer(tb, tl, buffer),
          ValueRange{arith::IndexCastOp::create(tb, tl, i32, col),
                     arith::IndexCastOp::create(tb, tl, i32, row)},
          Value(), NVVM::TMAStoreMode::TILE, Value());
      NVVM::CpAsyncBulkCommitGroupOp::create(tb, tl);
    });
  }
}

/// The edge path of a tile store, as emitEdgeLoad's: whole vectors where
/// the rows are aligned to them and all their elements lie in the memref,
/// narrower vectors where the rows are aligned to those, elements under
/// their own predicates otherwise (and for every element of a masked
/// store, `vec` being 1 then).
void emitEdgeStore(OpBuilder &b, Location l, const BlockAccess &access,
                   Value value, Value mask, unsigned vec) {
  const GlobalView &view = access.view;
  int64_t numRegs = access.dist.getNumRegs();
  auto [lo, hi] = access.bounds(b, l);
  if (vec == 1) {
    for (int64_t r = 0; r < numRegs; ++r) {
      Value linear = access.linearIndex(b, l, r);
      Value pred = access.inBounds(b, l, r, lo, hi);
      if (mask)
        pred = arith::AndIOp::create(b, l, pred, extractReg(b, l, mask, r));
      predicatedStore(b, l, pred, extractReg(b, l, value, r),
                      elementAddress(b, l, view, linear), view.elementBytes);
    }
    return;
  }
  scf::IfOp::create(
      b, l, access.alignmentCondition(b, l, vec),
      [&](OpBuilder &tb, Location tl) {
        for (int64_t r = 0; r < numRegs; r += vec) {
          EdgeChunk edge(tb, tl, access, lo, hi, r, vec);
          Value address = edge.address;
          SmallVector<int64_t> lanes;
          for (unsigned i = 0; i < vec; ++i)
            lanes.push_back(r + i);
          scf::IfOp::create(
              tb, tl, edge.whole,
              [&](OpBuilder &vb, Location vl) {
                Value chunk =
                    vector::ShuffleOp::create(vb, vl, value, value, lanes);
                LLVM::StoreOp::create(vb, vl, chunk, address,
                                      vec * view.elementBytes);
                scf::YieldOp::create(vb, vl);
              },
              [&](OpBuilder &eb, Location el) {
                for (unsigned i = 0; i < vec; ++i) {
                  auto [pred, at] = edge.element(eb, el, view, i);
                  predicatedStore(eb, el, pred,
                                  extractReg(eb, el, value, r + i), at,
                                  view.elementBytes);
                }
                scf::YieldOp::create(eb, el);
              });
        }
        scf::YieldOp::create(tb, tl);
      },
      [&](OpBuilder &eb, Location el) {
        emitEdgeStore(eb, el, access, value, mask,
                      narrowerVector(vec, view.elementBytes));
        scf::YieldOp::create(eb, el);
      });
}

/// ism.store -> vector stores (fast path, no mask) or predicated element
/// stores.
struct StoreOpLowering : IsmConversionPattern<StoreOp> {
  using IsmConversionPattern::IsmConversionPattern;

  LogicalResult
  matchAndRewrite(StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tileType = op.getValue().getType();
    FailureOr<TileAccess> tileAccess = beginAccess(
        rewriter, op, tileType, op.getBase().getType(), adaptor.getBase());
    if (failed(tileAccess))
      return failure();
    Location loc = op.getLoc();
    const Distribution &dist = tileAccess->dist;
    const GlobalView &view = tileAccess->view;
    Value lane = context.getLaneId(rewriter, loc);
    Value warp = context.getWarpId(rewriter, loc);
    BlockAccess access(rewriter, loc, dist, view, adaptor.getOffsets(), lane,
                       warp);
    Value value = adaptor.getValue();
    Value mask = adaptor.getMask();
    // With a mask, every element is stored under its own predicate.
    unsigned vec = mask ? 1 : access.vectorWidth();
    int64_t numRegs = dist.getNumRegs();
    // Only the first copy of a replicated element is stored.
    OpBuilder::InsertionGuard guard(rewriter);
    Value owner = dist.getOwnerCondition(rewriter, loc, lane, warp);
    if (owner) {
      auto ifOwner = scf::IfOp::create(rewriter, loc, owner);
      rewriter.setInsertionPointToStart(&ifOwner.getThenRegion().front());
    }

    // The epilogue's store that the warp-specialized kernel gives to TMA
    // (tma_store = 1) goes through its staging boxes when the runtime made
    // a descriptor of the memref, else as below.
    if (op->hasAttr(kTmaStoreAttrName) && context.pipeline &&
        context.pipeline->storeDescriptor && !mask && !owner &&
        canStoreByTMA(dist, view)) {
      Value desc = context.pipeline->storeDescriptor;
      auto tma = scf::IfOp::create(
          rewriter, loc,
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne, desc,
                                i64Const(rewriter, loc, 0)),
          /*withElseRegion=*/true);
      rewriter.setInsertionPoint(tma.thenBlock()->getTerminator());
      storeTileByTMA(rewriter, loc, dist, *context.pipeline, value,
                     adaptor.getOffsets(), lane, warp);
      rewriter.setInsertionPoint(tma.elseBlock()->getTerminator());
    }
    // A whole accumulator tile of 16-bit elements with 16-byte aligned
    // rows goes as 16-byte stores after a transpose within each quad.
    if (!mask && !owner && canStoreQuadTransposed(dist, view)) {
      auto quad = scf::IfOp::create(rewriter, loc,
                                    access.fastPathCondition(rewriter, loc, 8),
                                    /*withElseRegion=*/true);
      rewriter.setInsertionPoint(quad.thenBlock()->getTerminator());
      storeQuadTransposed(rewriter, loc, dist, view, access, value, lane);
      rewriter.setInsertionPoint(quad.elseBlock()->getTerminator());
    }
    scf::IfOp::create(
        rewriter, loc, access.fastPathCondition(rewriter, loc, vec),
        [&](OpBuilder &b, Location l) {
          for (int64_t r = 0; r < numRegs; r += vec) {
            Value address =
                elementAddress(b, l, view, access.linearIndex(b, l, r));
            if (mask) {
              predicatedStore(b, l, extractReg(b, l, mask, r),
                              extractReg(b, l, value, r), address,
                              view.elementBytes);
              continue;
            }
            SmallVector<int64_t> lanes;
            for (unsigned i = 0; i < vec; ++i)
              lanes.push_back(r + i);
            Value chunk =
                vec == 1 ? extractReg(b, l, value, r)
                         : vector::ShuffleOp::create(b, l, value, value, lanes);
            LLVM::StoreOp::create(b, l, chunk, address,
                                  vec * view.elementBytes);
          }
          scf::YieldOp::create(b, l);
        },
        [&](OpBuilder &b, Location l) {
          emitEdgeStore(b, l, access, value, mask, vec);
          scf::YieldOp::create(b, l);
        });
    rewriter.eraseOp(op);
    return success();
  }
};

/// The address and predicate of element `reg` of an indexed access.
std::pair<Value, Value> indexedElement(OpBuilder &b, Location loc,
                                       const GlobalView &view,
                                       ValueRange indices, Value mask,
                                       int64_t reg) {
  Value linear = indexConstant(b, loc, 0);
  SmallVector<Value> conds;
  for (auto [d, indexTile] : llvm::enumerate(indices)) {
    Value i = extractReg(b, loc, indexTile, reg);
    Value idx = arith::IndexCastOp::create(b, loc, b.getIndexType(), i);
    conds.push_back(inRange(b, loc, idx, view.sizes[d]));
    linear = arith::AddIOp::create(
        b, loc, linear, arith::MulIOp::create(b, loc, idx, view.strides[d]));
  }
  if (mask)
    conds.push_back(extractReg(b, loc, mask, reg));
  return {elementAddress(b, loc, view, linear), andAll(b, loc, conds)};
}

/// One group of `vec` consecutive registers of an indexed access whose index
/// tiles make them consecutive elements of the memref's last dimension
/// (getIndexedVectors): the address of its first element, whether all of
/// its elements are in bounds and unmasked (`full`), and, unless the
/// access is `aligned`, whether it allows the vector path (`ok`: no element
/// in bounds, or all of them at an address aligned to the vector). An
/// aligned access's groups start at multiples of `vec` along the last
/// dimension, so under indexedFastPath's uniform conditions each is aligned
/// and wholly in or out of bounds, and its first element decides.
struct IndexedGroup {
  Value address, full, ok;
};

SmallVector<IndexedGroup> indexedGroups(OpBuilder &b, Location loc,
                                        const GlobalView &view,
                                        ValueRange indices, Value mask,
                                        int64_t numRegs, unsigned vec,
                                        bool aligned) {
  SmallVector<IndexedGroup> groups;
  unsigned last = indices.size() - 1;
  Value zero = indexConstant(b, loc, 0);
  Value size = view.sizes[last];
  for (int64_t r = 0; r < numRegs; r += vec) {
    Value linear = zero;
    SmallVector<Value> others;
    Value first;
    for (auto [d, indexTile] : llvm::enumerate(indices)) {
      Value idx = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                             extractReg(b, loc, indexTile, r));
      if (d == last)
        first = idx;
      else
        others.push_back(inRange(b, loc, idx, view.sizes[d]));
      linear = arith::AddIOp::create(
          b, loc, linear, arith::MulIOp::create(b, loc, idx, view.strides[d]));
    }
    if (mask)
      others.push_back(extractReg(b, loc, mask, r));
    Value other = andAll(b, loc, others);
    Value address = elementAddress(b, loc, view, linear);
    if (aligned) {
      groups.push_back(
          {address,
           arith::AndIOp::create(b, loc, other, inRange(b, loc, first, size)),
           Value()});
      continue;
    }
    Value end =
        arith::AddIOp::create(b, loc, first, indexConstant(b, loc, vec));
    // `other`, `lhs p1 rhs1` and `end p2 rhs2`.
    auto both = [&](Value lhs, arith::CmpIPredicate p1, Value rhs1,
                    arith::CmpIPredicate p2, Value rhs2) {
      return arith::AndIOp::create(
          b, loc, other,
          arith::AndIOp::create(b, loc,
                                arith::CmpIOp::create(b, loc, p1, lhs, rhs1),
                                arith::CmpIOp::create(b, loc, p2, end, rhs2)));
    };
    // Every element in bounds: first >= 0 and end <= size; any: first <
    // size and end > 0.
    Value full = both(first, arith::CmpIPredicate::sge, zero,
                      arith::CmpIPredicate::sle, size);
    Value anyIn = both(first, arith::CmpIPredicate::slt, size,
                       arith::CmpIPredicate::sgt, zero);
    Value byteAddress = arith::AddIOp::create(
        b, loc, view.baseInt,
        arith::MulIOp::create(
            b, loc, arith::IndexCastOp::create(b, loc, b.getI64Type(), linear),
            arith::ConstantIntOp::create(b, loc, view.elementBytes, 64)));
    Value isAligned = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(
            b, loc, byteAddress,
            arith::ConstantIntOp::create(b, loc,
                                         int64_t(vec) * view.elementBytes, 64)),
        arith::ConstantIntOp::create(b, loc, 0, 64));
    Value ok = arith::OrIOp::create(
        b, loc,
        arith::XOrIOp::create(b, loc, anyIn,
                              arith::ConstantIntOp::create(b, loc, 1, 1)),
        arith::AndIOp::create(b, loc, full, isAligned));
    groups.push_back({address, full, ok});
  }
  return groups;
}

/// Whether this thread takes the vector path of an indexed access: the
/// memref's last dimension is contiguous, and either every group allows it
/// (`groups`) or, for an aligned access (no groups), the base, the other
/// dimensions' strides and the last size are multiples of the vector: the
/// same for every thread, and loop-invariant where the memref is.
Value indexedFastPath(OpBuilder &b, Location loc, const GlobalView &view,
                      unsigned vec, ArrayRef<IndexedGroup> groups) {
  unsigned last = view.strides.size() - 1;
  SmallVector<Value> conds;
  if (!groups.empty()) {
    conds.push_back(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          view.strides[last],
                                          indexConstant(b, loc, 1)));
    for (const IndexedGroup &g : groups)
      conds.push_back(g.ok);
    return andAll(b, loc, conds);
  }
  appendVectorAlignment(
      b, loc, view, last, vec,
      arith::IndexCastOp::create(b, loc, b.getIndexType(), view.baseInt),
      conds);
  conds.push_back(arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::RemUIOp::create(b, loc, view.sizes[last],
                             indexConstant(b, loc, int64_t(vec))),
      indexConstant(b, loc, 0)));
  return andAll(b, loc, conds);
}

/// The vector path of an indexed access, when getIndexedVectors allows one:
/// the groups a thread tests before its accesses (none when the access is
/// aligned, whose groups are built inside the path), and the path's
/// condition.
struct IndexedVectorPath {
  const GlobalView &view;
  ValueRange indices;
  Value mask;
  int64_t numRegs;
  unsigned vec;
  bool aligned;
  SmallVector<IndexedGroup> tested;
  Value condition;

  /// The groups to access inside the path (built at `b` when aligned).
  SmallVector<IndexedGroup> groups(OpBuilder &b, Location loc) const {
    if (!aligned)
      return tested;
    return indexedGroups(b, loc, view, indices, mask, numRegs, vec, true);
  }
};

std::optional<IndexedVectorPath>
planIndexedVectors(OpBuilder &b, Location loc, const LoweringContext &context,
                   Operation *op, const GlobalView &view, ValueRange indices,
                   Value mask, int64_t numRegs) {
  auto [vec, aligned] = context.indexedVectors.lookup(op);
  if (vec < 2 || numRegs % vec != 0)
    return std::nullopt;
  IndexedVectorPath path{view, indices, mask, numRegs, vec, aligned, {}, {}};
  if (!aligned)
    path.tested =
        indexedGroups(b, loc, view, indices, mask, numRegs, vec, false);
  path.condition = indexedFastPath(b, loc, view, vec, path.tested);
  return path;
}

/// The thread's `numRegs` elements of a gather at the index tiles'
/// coordinates, each loaded under its own bounds (and mask) predicate and
/// `padding` elsewhere.
Value gatherElements(OpBuilder &b, Location l, const GlobalView &view,
                     ValueRange indices, Value mask, int64_t numRegs,
                     Value padding) {
  SmallVector<Value> elements;
  for (int64_t r = 0; r < numRegs; ++r) {
    auto [address, pred] = indexedElement(b, l, view, indices, mask, r);
    elements.push_back(predicatedLoad(b, l, pred, address, view.elementType,
                                      padding, view.elementBytes));
  }
  return buildVector(b, l, view.elementType, elements);
}

/// ism.gather -> predicated element loads at the index tiles' coordinates;
/// where the index tiles make a thread's consecutive registers consecutive
/// memory (a row of a table gathered by row index), predicated vector loads
/// of up to 16 bytes instead, when this thread's groups are aligned and
/// each wholly in or out of bounds.
struct GatherOpLowering : IsmConversionPattern<GatherOp> {
  using IsmConversionPattern::IsmConversionPattern;

  LogicalResult
  matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<TileAccess> tileAccess = beginAccess(
        rewriter, op, op.getType(), op.getBase().getType(), adaptor.getBase());
    if (failed(tileAccess))
      return failure();
    Location loc = op.getLoc();
    const Distribution &dist = tileAccess->dist;
    const GlobalView &view = tileAccess->view;
    Type elementType = getStorageType(op.getType().getElementType());
    Value padding = paddingValue(rewriter, loc, elementType, op.getPadding());
    int64_t numRegs = dist.getNumRegs();
    auto elementLoads = [&](OpBuilder &b, Location l) {
      return gatherElements(b, l, view, adaptor.getIndices(), adaptor.getMask(),
                            numRegs, padding);
    };
    std::optional<IndexedVectorPath> path =
        planIndexedVectors(rewriter, loc, context, op, view,
                           adaptor.getIndices(), adaptor.getMask(), numRegs);
    if (!path) {
      rewriter.replaceOp(op, elementLoads(rewriter, loc));
      return success();
    }
    unsigned vec = path->vec;
    auto ifOp = scf::IfOp::create(
        rewriter, loc, path->condition,
        [&](OpBuilder &b, Location l) {
          SmallVector<IndexedGroup> groups = path->groups(b, l);
          scf::YieldOp::create(
              b, l,
              loadChunks(
                  b, l, elementType, numRegs, vec, vec * view.elementBytes,
                  [&](int64_t r) { return groups[r / vec].address; },
                  [&](int64_t r) { return groups[r / vec].full; }, padding));
        },
        [&](OpBuilder &b, Location l) {
          scf::YieldOp::create(b, l, elementLoads(b, l));
        });
    rewriter.replaceOp(op, ifOp.getResult(0));
    return success();
  }
};

/// Where ism.async_gather puts register r of a thread's elements in its
/// ring slot, and ism.async_gather_wait reads it: registers in chunks of
/// `chunkRegs` (the largest power of two that divides the thread's count,
/// at most 16 bytes), chunk c of thread t at (c * threads + t) * chunk
/// bytes, so a warp's accesses of one chunk are consecutive 16-byte words
/// (no bank conflicts) and any vector of the gather's (a power of two of
/// at most 16 bytes that divides the count) lies within one chunk.
struct GatherSlot {
  int64_t numRegs, chunkRegs, numThreads;
  unsigned elementBytes;
  /// The i64 shared-memory address of this thread's chunk 0 in the slot.
  Value threadBase;

  /// The slot `slot` of ring `ring` (of `slots` slots) holding `dist`.
  /// (checkTiles has made sure the ops of a ring agree on its tile and
  /// slots, so every op asks for the ring with the same size.)
  GatherSlot(OpBuilder &b, Location loc, LoweringContext &context,
             const Distribution &dist, unsigned elementBytes, uint32_t ring,
             uint32_t slots, Value slot)
      : numRegs(dist.getNumRegs()), numThreads(context.getNumThreads()),
        elementBytes(elementBytes) {
    chunkRegs = numRegs & -numRegs;
    while (chunkRegs > 1 && chunkRegs * elementBytes > 16)
      chunkRegs /= 2;
    int64_t slotBytes = (numRegs * elementBytes * numThreads + 15) / 16 * 16;
    Value base =
        context.getGatherRing(b, loc, ring, int64_t(slots) * slotBytes);
    auto i64 = [&](Value v) {
      return arith::IndexCastOp::create(b, loc, b.getI64Type(), v);
    };
    auto constant = [&](int64_t v) {
      return arith::ConstantIntOp::create(b, loc, v, 64);
    };
    threadBase = arith::AddIOp::create(
        b, loc, base,
        arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(b, loc, i64(slot), constant(slotBytes)),
            arith::MulIOp::create(b, loc, i64(context.getThreadId(b, loc)),
                                  constant(chunkRegs * elementBytes))));
  }

  /// The shared-memory address (!llvm.ptr<3>) of register r.
  Value address(OpBuilder &b, Location loc, int64_t r) const {
    int64_t offset = (r / chunkRegs) * numThreads * chunkRegs * elementBytes +
                     (r % chunkRegs) * elementBytes;
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3),
        Value(arith::AddIOp::create(
            b, loc, threadBase,
            arith::ConstantIntOp::create(b, loc, offset, 64))));
  }
};

/// ism.async_gather -> (when its predicate holds) cp.async of the thread's
/// vectors where ism.gather's lowering would load vectors of 4 to 16
/// bytes, else element loads stored into the slot; then
/// cp.async.commit_group.
struct AsyncGatherOpLowering : IsmConversionPattern<AsyncGatherOp> {
  using IsmConversionPattern::IsmConversionPattern;

  LogicalResult
  matchAndRewrite(AsyncGatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType tile = op.getTileType();
    FailureOr<TileAccess> tileAccess = beginAccess(
        rewriter, op, tile, op.getBase().getType(), adaptor.getBase());
    if (failed(tileAccess))
      return failure();
    Location loc = op.getLoc();
    const Distribution &dist = tileAccess->dist;
    const GlobalView &view = tileAccess->view;
    int64_t numRegs = dist.getNumRegs();
    GatherSlot slot(rewriter, loc, context, dist, view.elementBytes,
                    op.getRing(), op.getSlots(), adaptor.getSlot());
    auto copies = [&](OpBuilder &b, Location l) {
      auto elementCopies = [&](OpBuilder &eb, Location el) {
        Value elements = gatherElements(
            eb, el, view, adaptor.getIndices(), adaptor.getMask(), numRegs,
            paddingValue(eb, el, view.elementType, {}));
        for (int64_t r = 0; r < numRegs; ++r)
          LLVM::StoreOp::create(eb, el, extractReg(eb, el, elements, r),
                                slot.address(eb, el, r), view.elementBytes);
      };
      std::optional<IndexedVectorPath> path =
          planIndexedVectors(b, l, context, op, view, adaptor.getIndices(),
                             adaptor.getMask(), numRegs);
      unsigned bytes = path ? path->vec * view.elementBytes : 0;
      if (!path || bytes < 4) {
        elementCopies(b, l);
        return;
      }
      scf::IfOp::create(
          b, l, path->condition,
          [&](OpBuilder &vb, Location vl) {
            SmallVector<IndexedGroup> groups = path->groups(vb, vl);
            for (auto [i, g] : llvm::enumerate(groups)) {
              // Outside the memref or masked off: zeros, nothing read.
              Value size = arith::SelectOp::create(
                  vb, vl, g.full, i32Const(vb, vl, bytes), i32Const(vb, vl, 0));
              Value src =
                  arith::SelectOp::create(vb, vl, g.full, g.address, view.base);
              NVVM::CpAsyncOp::create(
                  vb, vl, slot.address(vb, vl, int64_t(i) * path->vec), src,
                  vb.getI32IntegerAttr(bytes),
                  NVVM::LoadCacheModifierKindAttr::get(
                      vb.getContext(), NVVM::LoadCacheModifierKind::CA),
                  size);
            }
            scf::YieldOp::create(vb, vl);
          },
          [&](OpBuilder &eb, Location el) {
            elementCopies(eb, el);
            scf::YieldOp::create(eb, el);
          });
    };
    if (Value pred = adaptor.getPred()) {
      scf::IfOp::create(rewriter, loc, pred, [&](OpBuilder &b, Location l) {
        copies(b, l);
        scf::YieldOp::create(b, l);
      });
    } else {
      copies(rewriter, loc);
    }
    NVVM::CpAsyncCommitGroupOp::create(rewriter, loc);
    rewriter.eraseOp(op);
    return success();
  }
};

/// ism.async_gather_wait -> cp.async.wait_group, then the thread's chunks
/// from its slot.
struct AsyncGatherWaitOpLowering : IsmConversionPattern<AsyncGatherWaitOp> {
  using IsmConversionPattern::IsmConversionPattern;

  LogicalResult
  matchAndRewrite(AsyncGatherWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType tile = op.getType();
    if (failed(checkDistributable(rewriter, op, tile)))
      return failure();
    Location loc = op.getLoc();
    Type elementType = getStorageType(tile.getElementType());
    unsigned elementBytes = (elementType.getIntOrFloatBitWidth() + 7) / 8;
    GatherSlot slot(rewriter, loc, context, Distribution(tile), elementBytes,
                    op.getRing(), op.getSlots(), adaptor.getSlot());
    NVVM::CpAsyncWaitGroupOp::create(rewriter, loc, op.getPending());
    rewriter.replaceOp(op, loadChunks(rewriter, loc, elementType, slot.numRegs,
                                      unsigned(slot.chunkRegs),
                                      unsigned(slot.chunkRegs) * elementBytes,
                                      [&](int64_t r) {
                                        return slot.address(rewriter, loc, r);
                                      }));
    return success();
  }
};

/// ism.scatter -> predicated element stores; vector stores where the index
/// tiles allow, as for ism.gather.
struct ScatterOpLowering : IsmConversionPattern<ScatterOp> {
  using IsmConversionPattern::IsmConversionPattern;

  LogicalResult
  matchAndRewrite(ScatterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tileType = op.getValue().getType();
    FailureOr<TileAccess> tileAccess = beginAccess(
        rewriter, op, tileType, op.getBase().getType(), adaptor.getBase());
    if (failed(tileAccess))
      return failure();
    Location loc = op.getLoc();
    const Distribution &dist = tileAccess->dist;
    const GlobalView &view = tileAccess->view;
    Type elementType = getStorageType(tileType.getElementType());
    int64_t numRegs = dist.getNumRegs();
    Value owner =
        dist.getOwnerCondition(rewriter, loc, context.getLaneId(rewriter, loc),
                               context.getWarpId(rewriter, loc));
    Value value = adaptor.getValue();
    auto elementStores = [&](OpBuilder &b, Location l) {
      for (int64_t r = 0; r < numRegs; ++r) {
        auto [address, pred] = indexedElement(b, l, view, adaptor.getIndices(),
                                              adaptor.getMask(), r);
        if (owner)
          pred = arith::AndIOp::create(b, l, pred, owner);
        predicatedStore(b, l, pred, extractReg(b, l, value, r), address,
                        view.elementBytes);
      }
    };
    std::optional<IndexedVectorPath> path =
        planIndexedVectors(rewriter, loc, context, op, view,
                           adaptor.getIndices(), adaptor.getMask(), numRegs);
    if (!path) {
      elementStores(rewriter, loc);
      rewriter.eraseOp(op);
      return success();
    }
    unsigned vec = path->vec;
    scf::IfOp::create(
        rewriter, loc, path->condition,
        [&](OpBuilder &b, Location l) {
          for (auto [i, g] : llvm::enumerate(path->groups(b, l))) {
            SmallVector<Value> elements;
            for (unsigned j = 0; j < vec; ++j)
              elements.push_back(extractReg(b, l, value, i * vec + j));
            Value pred =
                owner ? arith::AndIOp::create(b, l, g.full, owner) : g.full;
            predicatedStore(b, l, pred,
                            buildVector(b, l, elementType, elements), g.address,
                            vec * view.elementBytes);
          }
          scf::YieldOp::create(b, l);
        },
        [&](OpBuilder &b, Location l) {
          elementStores(b, l);
          scf::YieldOp::create(b, l);
        });
    rewriter.eraseOp(op);
    return success();
  }
};

/// The LLVM atomic operation for an ism atomic kind on `elementType`.
LLVM::AtomicBinOp atomicBinOp(AtomicKind kind, Type elementType) {
  bool isFloat = isa<FloatType>(elementType);
  switch (kind) {
  case AtomicKind::Add:
    return isFloat ? LLVM::AtomicBinOp::fadd : LLVM::AtomicBinOp::add;
  case AtomicKind::Max:
    return isFloat ? LLVM::AtomicBinOp::fmax : LLVM::AtomicBinOp::max;
  case AtomicKind::Min:
    return isFloat ? LLVM::AtomicBinOp::fmin : LLVM::AtomicBinOp::min;
  case AtomicKind::UMax:
    return LLVM::AtomicBinOp::umax;
  case AtomicKind::UMin:
    return LLVM::AtomicBinOp::umin;
  case AtomicKind::And:
    return LLVM::AtomicBinOp::_and;
  case AtomicKind::Or:
    return LLVM::AtomicBinOp::_or;
  case AtomicKind::Xor:
    return LLVM::AtomicBinOp::_xor;
  case AtomicKind::Xchg:
    return LLVM::AtomicBinOp::xchg;
  }
  llvm_unreachable("unknown atomic kind");
}

/// ism.atomic_rmw -> predicated per-element atomics at GPU scope, by the
/// first copy of each element; the other copies get its old value through
/// shared memory. `release` puts a barrier over the program's threads and a
/// fence.acq_rel.gpu before the atomics, `acquire` a fence.acq_rel.gpu and
/// a barrier after them (the pattern of CUTLASS's semaphores: fences around
/// relaxed atomics, which NVPTX emits for atomicrmw whatever its ordering).
struct AtomicRMWOpLowering : IsmConversionPattern<AtomicRMWOp> {
  using IsmConversionPattern::IsmConversionPattern;

  LogicalResult
  matchAndRewrite(AtomicRMWOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tileType = op.getValue().getType();
    FailureOr<TileAccess> tileAccess = beginAccess(
        rewriter, op, tileType, op.getBase().getType(), adaptor.getBase());
    if (failed(tileAccess))
      return failure();
    Location loc = op.getLoc();
    const Distribution &dist = tileAccess->dist;
    const GlobalView &view = tileAccess->view;
    Type elementType = tileType.getElementType();
    Value zero = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getZeroAttr(elementType));
    LLVM::AtomicBinOp binOp = atomicBinOp(op.getKind(), elementType);
    MemorySemantics sem = op.getSem();
    bool release =
        sem == MemorySemantics::Release || sem == MemorySemantics::AcqRel;
    bool acquire =
        sem == MemorySemantics::Acquire || sem == MemorySemantics::AcqRel;
    if (release) {
      context.barrier(rewriter, loc);
      LLVM::FenceOp::create(rewriter, loc, LLVM::AtomicOrdering::release,
                            "device");
    }
    // Each element's update is applied once, by its first copy.
    Value owner =
        dist.getOwnerCondition(rewriter, loc, context.getLaneId(rewriter, loc),
                               context.getWarpId(rewriter, loc));
    SmallVector<Value> elements;
    for (int64_t r = 0; r < dist.getNumRegs(); ++r) {
      // (a pair, not a structured binding: the lambda below captures the
      // address, which C++17 does not allow for a binding)
      std::pair<Value, Value> element = indexedElement(
          rewriter, loc, view, adaptor.getIndices(), adaptor.getMask(), r);
      Value address = element.first, pred = element.second;
      if (owner)
        pred = arith::AndIOp::create(rewriter, loc, pred, owner);
      Value value = extractReg(rewriter, loc, adaptor.getValue(), r);
      auto ifOp = scf::IfOp::create(
          rewriter, loc, pred,
          [&](OpBuilder &b, Location l) {
            Value old = LLVM::AtomicRMWOp::create(
                b, l, binOp, address, value, LLVM::AtomicOrdering::monotonic,
                "device");
            scf::YieldOp::create(b, l, old);
          },
          [&](OpBuilder &b, Location l) { scf::YieldOp::create(b, l, zero); });
      elements.push_back(ifOp.getResult(0));
    }
    if (acquire)
      LLVM::FenceOp::create(rewriter, loc, LLVM::AtomicOrdering::acquire,
                            "device");
    Value result = buildVector(rewriter, loc, elementType, elements);
    if (owner) {
      // The barrier of the exchange also ends an acquire.
      result = relayoutThroughScratch(rewriter, op, context, result, dist, dist,
                                      rowMajorStrides(dist.getShape()), owner);
    } else if (acquire) {
      context.barrier(rewriter, loc);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::ism::populateMemoryOpPatterns(TileTypeConverter &converter,
                                         LoweringContext &context,
                                         RewritePatternSet &patterns) {
  patterns.add<AsyncCopyOpLowering, AsyncLoadOpLowering, AsyncGatherOpLowering,
               AsyncGatherWaitOpLowering, LoadOpLowering, StoreOpLowering,
               GatherOpLowering, ScatterOpLowering, AtomicRMWOpLowering>(
      converter, patterns.getContext(), context);
}
