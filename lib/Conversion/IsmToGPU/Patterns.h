//===- Patterns.h - ism-to-GPU pattern groups -------------------*- C++ -*-===//

#ifndef ISM_LIB_CONVERSION_ISMTOGPU_PATTERNS_H
#define ISM_LIB_CONVERSION_ISMTOGPU_PATTERNS_H

#include "Distribution.h"
#include "ism/Conversion/IsmToGPU/IsmToGPU.h"
#include "ism/Dialect/Ism/IR/IsmOps.h"

namespace mlir::ism {

/// How a thread holds an element of `type`: itself, or for an 8-bit float
/// (not an LLVM type) its bits as i8. Tiles of 8-bit floats become vectors
/// of i8; loads and stores move the bits, arith.extf / arith.truncf convert
/// them (ElementwiseOps.cpp).
inline Type getStorageType(Type type) {
  if (isa<Float8E4M3FNType, Float8E5M2Type>(type))
    return IntegerType::get(type.getContext(), 8);
  return type;
}

/// Base of the ism-to-GPU patterns: a conversion pattern that also sees the
/// kernel's LoweringContext.
template <typename OpTy>
struct IsmConversionPattern : OpConversionPattern<OpTy> {
  IsmConversionPattern(const TypeConverter &converter, MLIRContext *ctx,
                       LoweringContext &context, PatternBenefit benefit = 1)
      : OpConversionPattern<OpTy>(converter, ctx, benefit), context(context) {}

protected:
  LoweringContext &context;
};

/// Load/store/gather/scatter/atomic_rmw (MemoryOps.cpp).
void populateMemoryOpPatterns(TileTypeConverter &converter,
                              LoweringContext &context,
                              RewritePatternSet &patterns);
/// arith and math on tiles, constants, fast f32 math (ElementwiseOps.cpp).
void populateElementwisePatterns(TileTypeConverter &converter,
                                 LoweringContext &context,
                                 RewritePatternSet &patterns);
/// splat, range, grid queries, broadcast, expand_dims, reshape, trans,
/// convert_layout (ShapeOps.cpp).
void populateShapeOpPatterns(TileTypeConverter &converter,
                             LoweringContext &context,
                             RewritePatternSet &patterns);
/// reduce and scan (ReduceScan.cpp).
void populateReduceScanPatterns(TileTypeConverter &converter,
                                LoweringContext &context,
                                RewritePatternSet &patterns);
/// The consumers' K loop of a warp-specialized wgmma kernel (HopperGemm.cpp).
void populateWgmmaPatterns(TileTypeConverter &converter,
                           LoweringContext &context,
                           RewritePatternSet &patterns);
/// wgmma products outside K loops (HopperDot.cpp).
void populateWgmmaProductPatterns(TileTypeConverter &converter,
                                  LoweringContext &context,
                                  RewritePatternSet &patterns);
/// Whether `dot`, if it is a wgmma product outside a K loop, can be lowered
/// by the warps [warpBase, warpBase + numWarps) of a kernel or partition
/// (the instruction's shapes, its layout's warps, whole warpgroups); else
/// an error naming the problem. Checked before the conversion: a pattern
/// failing on it would leave the product to the SIMT dot.
LogicalResult checkWgmmaProductOp(DotOp dot, unsigned numWarps,
                                  unsigned warpBase);
/// The mma.sync K loop with its cp.async pipeline (AmpereGemm.cpp).
void populateMmaSyncPatterns(TileTypeConverter &converter,
                             LoweringContext &context,
                             RewritePatternSet &patterns);
/// The SIMT (FMA) dot (Dot.cpp).
void populateDotPatterns(TileTypeConverter &converter, LoweringContext &context,
                         RewritePatternSet &patterns);

//===----------------------------------------------------------------------===//
// Helpers shared by the pattern groups (Utils.cpp)
//===----------------------------------------------------------------------===//

/// An index constant.
Value indexConstant(OpBuilder &b, Location loc, int64_t value);
/// An i32 constant.
Value i32Const(OpBuilder &b, Location loc, int64_t value);
/// An i64 constant.
Value i64Const(OpBuilder &b, Location loc, int64_t value);
/// A shared-memory pointer (!llvm.ptr<3>) from a shared-window address
/// (i64).
Value sharedPointer(OpBuilder &b, Location loc, Value address);
/// fence.proxy.async.shared::cta: this thread's generic-proxy writes to
/// shared memory (st.shared, completed cp.async) ordered before async-proxy
/// reads (wgmma, TMA).
void fenceAsyncProxy(OpBuilder &b, Location loc);
/// The mbarrier (a shared pointer) of ring stage `stage` (index) in an
/// array of 8-byte mbarriers `first` bytes from `base` (i64).
Value stageBarrier(OpBuilder &b, Location loc, Value base, int64_t first,
                   Value stage);
/// The stage (index) and the phase parity (i32) of the `count`-th use
/// (index) of a ring of `stages` stages.
Value ringStage(OpBuilder &b, Location loc, int64_t stages, Value count);
Value ringPhase(OpBuilder &b, Location loc, int64_t stages, Value count);
/// Waits until the phase of the mbarrier at `barrier` (a shared pointer)
/// with parity `phase` (i32) has completed.
void waitParity(OpBuilder &b, Location loc, Value barrier, Value phase);
/// Marks the scf.if that splits a kernel into the producer warpgroup of
/// its operand rings (then) and the kernel's own warps (else;
/// AsyncOperands.cpp).
inline constexpr llvm::StringLiteral kRingSplitAttrName = "ism.ring_split";
/// Whether the ops of `block` run once per kernel: the kernel's body, or
/// its own warps' side of a ring producer split.
bool runsOncePerKernel(Block *block);
/// Element `reg` of a per-thread tile vector.
Value extractReg(OpBuilder &b, Location loc, Value vector, int64_t reg);
/// A per-thread tile vector from its elements.
Value buildVector(OpBuilder &b, Location loc, Type elementType,
                  ArrayRef<Value> elements);

/// Moves a tile between layouts (and shapes): in registers when every
/// thread already holds the elements it needs (a static shuffle), through
/// shared memory otherwise. `src` is the source vector with distribution
/// `from`; `to` is the result's. Result element at coordinates `c` is the
/// source element whose row-major linear index is sum_d(c[d] * coefs[d]),
/// which expresses reshape, transposition, expand_dims and broadcast. `op`
/// is the op being lowered (its place decides the scratch region).
Value relayout(OpBuilder &b, Operation *op, LoweringContext &context, Value src,
               const Distribution &from, const Distribution &to,
               ArrayRef<int64_t> coefs);

/// The shared-memory path of relayout, whatever the layouts. With `writes`
/// (an i1), only the threads for which it holds write their elements: the
/// others read what those wrote (used to give every copy of an element its
/// owner's value).
Value relayoutThroughScratch(OpBuilder &b, Operation *op,
                             LoweringContext &context, Value src,
                             const Distribution &from, const Distribution &to,
                             ArrayRef<int64_t> coefs, Value writes = {});

/// Row-major strides of `shape`.
SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape);

/// Runs a combiner region (of ism.reduce / ism.scan) on `lhs` and `rhs`
/// (one scalar per source each) and returns the yielded values.
SmallVector<Value> combine(OpBuilder &b, Location loc, Region &combiner,
                           ValueRange lhs, ValueRange rhs);

/// The coordinates (x, y, z) of program `t` (index) of `grid` (index
/// values), x fastest.
SmallVector<Value, 3> programCoords(OpBuilder &b, Location loc, Value t,
                                    ArrayRef<Value> grid);

/// Replaces every ism.program_id and ism.num_programs inside `block` with
/// `pid` and `sizes` (index values, one per axis), cast to their types.
void replaceGridQueries(Block *block, ArrayRef<Value> pid,
                        ArrayRef<Value> sizes);

/// Clones `ops` (in block order) at `b`'s insertion point into `map`, the
/// ism.program_id and ism.num_programs among them mapped to `pid` and
/// `sizes` (index values, one per axis, cast to their types) instead: the
/// scalar code of program `pid` of a persistent grid.
void cloneForProgram(OpBuilder &b, ArrayRef<Operation *> ops,
                     ArrayRef<Value> pid, ArrayRef<Value> sizes,
                     IRMapping &map);

/// Writes the trace record of work item `t` (index) at record `index`
/// (index) of the trace buffer at `buffer` (i64, may be 0 at run time:
/// then nothing is written), when `isFirst`: `start` and `end`
/// %globaltimer values, (smid << 32) | tag, and t.
void emitTraceRecord(OpBuilder &b, Location loc, Value buffer, Value index,
                     Value isFirst, Value start, Value end, int64_t tag,
                     Value t);
/// The same with the tag an i64 value.
void emitTraceRecord(OpBuilder &b, Location loc, Value buffer, Value index,
                     Value isFirst, Value start, Value end, Value tag,
                     Value t);

/// Fails the match with a message when `type` is a tile the lowering cannot
/// distribute.
LogicalResult checkDistributable(ConversionPatternRewriter &rewriter,
                                 Operation *op, Type type);

} // namespace mlir::ism

#endif // ISM_LIB_CONVERSION_ISMTOGPU_PATTERNS_H
