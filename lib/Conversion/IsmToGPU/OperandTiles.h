//===- OperandTiles.h - tensor-core operands in shared memory ---*- C++ -*-===//
//
// The swizzled shared-memory tiles the tensor-core lowerings read their
// operands from (mma.sync through ldmatrix, wgmma through matrix
// descriptors), and the small integer-arithmetic helper they are built with.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_LIB_CONVERSION_ISMTOGPU_OPERANDTILES_H
#define ISM_LIB_CONVERSION_ISMTOGPU_OPERANDTILES_H

#include "Patterns.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::ism {

/// Terse integer arithmetic on values of one type (i32 or index).
struct Ints {
  OpBuilder &b;
  Location loc;
  Type type;

  Value c(int64_t v) const {
    return arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, v));
  }
  Value add(Value x, Value y) const {
    return arith::AddIOp::create(b, loc, x, y);
  }
  Value add(Value x, int64_t y) const { return y ? add(x, c(y)) : x; }
  Value sub(Value x, Value y) const {
    return arith::SubIOp::create(b, loc, x, y);
  }
  Value mul(Value x, Value y) const {
    return arith::MulIOp::create(b, loc, x, y);
  }
  Value mul(Value x, int64_t y) const { return y == 1 ? x : mul(x, c(y)); }
  Value div(Value x, int64_t y) const {
    return y == 1 ? x : arith::DivUIOp::create(b, loc, x, c(y)).getResult();
  }
  Value rem(Value x, int64_t y) const {
    return arith::RemUIOp::create(b, loc, x, c(y));
  }
  Value xori(Value x, Value y) const {
    return arith::XOrIOp::create(b, loc, x, y);
  }
  Value andi(Value x, Value y) const {
    return arith::AndIOp::create(b, loc, x, y);
  }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) const {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value select(Value cond, Value x, Value y) const {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  Value smin(Value x, Value y) const {
    return arith::MinSIOp::create(b, loc, x, y);
  }
  Value smax(Value x, Value y) const {
    return arith::MaxSIOp::create(b, loc, x, y);
  }
  /// Signed 0 <= v < hi.
  Value inRange(Value v, Value hi) const {
    return andi(cmp(arith::CmpIPredicate::sge, v, c(0)),
                cmp(arith::CmpIPredicate::slt, v, hi));
  }
};

inline Ints i32s(OpBuilder &b, Location loc) {
  return {b, loc, b.getI32Type()};
}
inline Ints indices(OpBuilder &b, Location loc) {
  return {b, loc, b.getIndexType()};
}

/// Where one operand tile [rows, cols] lives in a stage of the ring (see the
/// file comment): boxes of boxCols() columns, 128-byte lines swizzled.
struct OperandTile {
  int64_t rows = 0, cols = 0;
  int64_t elementBytes = 2;
  /// Bytes from the start of the stage.
  int64_t offset = 0;

  int64_t boxCols() const {
    return std::min<int64_t>(cols, 128 / elementBytes);
  }
  int64_t rowBytes() const { return boxCols() * elementBytes; }
  int64_t boxBytes() const { return rows * rowBytes(); }
  /// Rows that share one 128-byte line.
  int64_t rowsPerLine() const { return 128 / rowBytes(); }
  int64_t bytes() const { return rows * cols * elementBytes; }
  int64_t chunksPerRow() const { return cols * elementBytes / 16; }
  int64_t chunks() const { return rows * chunksPerRow(); }

  /// Byte offset (i32, from the tile's start) of element (row, col) (i32
  /// values).
  Value elementOffset(OpBuilder &b, Location loc, Value row, Value col) const {
    Ints i(i32s(b, loc));
    Value box = i.div(col, boxCols());
    Value bytes = i.mul(i.rem(col, boxCols()), elementBytes);
    // 16-byte chunk index within the box, then the line's swizzle.
    Value q = i.add(i.mul(row, rowBytes() / 16), i.div(bytes, 16));
    Value phase = i.andi(i.div(q, 8), i.c(7));
    Value chunk = i.xori(q, phase);
    Value off = i.add(i.mul(box, boxBytes()), i.mul(chunk, 16));
    return i.add(off, i.rem(bytes, 16));
  }

  /// The per-lane parts of ldmatrix addresses: lane l reads row l % 16 and
  /// chunk l / 16 of a 16x16 block. `rowBytes` is the lane's line offset,
  /// `x` what its chunk index contributes to the swizzled chunk.
  struct Lane {
    Value rowBytes, x;
  };
  Lane laneParts(OpBuilder &b, Location loc, Value lane) const {
    Ints i(i32s(b, loc));
    int64_t p = rowsPerLine();
    Value lr = i.rem(lane, 16), lc = i.div(lane, 16);
    Value line = i.div(lr, p);
    Value inLine = i.mul(i.rem(lr, p), 8 / p);
    return {i.mul(line, 128), i.xori(i.xori(inLine, lc), i.rem(line, 8))};
  }

  /// Byte offset (i32, from the tile's start) of lane `lane`'s row for an
  /// ldmatrix
  /// of the 16x16 block at (r0, c0), both multiples of 16: with
  /// row = r0 + l % 16 and col = c0 + 8 * (l / 16), elementOffset(row, col)
  /// splits into a uniform and a per-lane part (the row and column bits
  /// the two contribute do not overlap).
  Value ldmatrixOffset(OpBuilder &b, Location loc, const Lane &lane, Value r0,
                       Value c0) const {
    Ints i(i32s(b, loc));
    int64_t p = rowsPerLine();
    Value box = i.div(c0, boxCols());
    Value chunk = i.div(i.mul(i.rem(c0, boxCols()), elementBytes), 16);
    Value line = i.div(r0, p);
    Value x = i.xori(chunk, i.rem(line, 8));
    Value off = i.add(i.mul(box, boxBytes()), i.mul(line, 128));
    off = i.add(off, lane.rowBytes);
    return i.add(off, i.mul(i.xori(lane.x, x), 16));
  }
};

/// The matrix of the last two dimensions of a memref that `leading` (index
/// values, one per outer dimension) selects, as a global address and its
/// sizes and strides (index).
struct GlobalMatrix {
  Value memref;
  SmallVector<Value> leading;
  Value base; // i64 address of element (0, 0)
  Value sizes[2], strides[2];
  unsigned elementBytes;
  /// Whether the leading indices are inside the memref (i1; else every
  /// element counts as outside: rows are 0).
  Value leadingInside;
  /// Whether 16-byte chunks of its rows can be copied with cp.async: unit
  /// inner stride, 16-byte aligned base and row stride (i1, uniform).
  Value chunked;

  GlobalMatrix(OpBuilder &b, Location loc, Value memref,
               ValueRange leading = {});
};

/// Copies the [rows, cols] tile of `g` at (o0, o1) into shared memory laid
/// out as `t` at `tileBase` (i32 bytes from `ring`, an !llvm.ptr<3>) with
/// cp.async: 16-byte chunks, zero-filled past the memref's edges (a tile
/// wholly inside takes a branch without bounds tests, uniform). `tid`
/// (index) is this thread's index among `threads`. Needs `g.chunked` and a
/// column offset that keeps the chunks 16-byte aligned.
void copyTileAsync(OpBuilder &b, Location loc, const OperandTile &t,
                   const GlobalMatrix &g, Value o0, Value o1, Value ring,
                   Value tileBase, Value tid, int64_t threads);

/// Copies the tile like copyTileAsync, element by element (bounds-checked
/// loads, zeros outside, st.shared), for memrefs cp.async cannot read.
void copyTileByElements(OpBuilder &b, Location loc, const OperandTile &t,
                        const GlobalMatrix &g, Value o0, Value o1, Value ring,
                        Value tileBase, Value tid, int64_t threads);

/// copyTileAsync where `g` can be read in 16-byte chunks from column `o1`
/// on, copyTileByElements otherwise (a uniform branch).
void copyTile(OpBuilder &b, Location loc, const OperandTile &t,
              const GlobalMatrix &g, Value o0, Value o1, Value ring,
              Value tileBase, Value tid, int64_t threads);

/// Whether `op` is a tensor-core product outside a pipelined K loop with
/// an #ism.mma layout of `version` (2: mma.sync, 3: wgmma).
bool isProduct(DotOp op, unsigned version);

/// The #ism.mma layout of `op`, a tensor-core product outside a pipelined K
/// loop, when it has `version` and its tiles can be distributed; a null
/// layout (the match failure noted) otherwise.
MmaEncodingAttr matchProduct(DotOp op, ConversionPatternRewriter &rewriter,
                             unsigned version);

/// The shared-memory pointer (!llvm.ptr<3>) to the start of `scratch`, a
/// view LoweringContext::getScratch made.
Value scratchPointer(OpBuilder &b, Location loc, Value scratch);

/// Writes this thread's elements of the tile `vector` (distribution `dist`)
/// into shared memory laid out as `t` at `tileBase` (i32 bytes from `ring`,
/// an !llvm.ptr<3>): 16-byte stores where the layout gives a thread 8
/// consecutive columns, narrower ones where it gives fewer. Threads holding
/// copies of an element write the same value. With `transposed`, tile
/// element (row, col) is element (col, row) of the value.
void storeOperandTile(OpBuilder &b, Location loc, LoweringContext &context,
                      const OperandTile &t, Value vector,
                      const Distribution &dist, Value ring, Value tileBase,
                      bool transposed = false);

/// The shared-window address (i64) of the 1024-byte aligned base of the
/// ring of `p` (128-byte swizzled TMA boxes and wgmma operands need that
/// alignment); the staging boxes of a TMA store follow at
/// `p.stagingOffset()`.
Value getWgmmaRingBase(OpBuilder &b, Location loc, const WgmmaPipeline &p);

/// A wgmma shared-memory matrix descriptor (i64) of the operand at `address`
/// (i64, shared window) with the `swizzleBytes` swizzle (128 or 64): leading
/// and stride byte offsets `lbo` and `sbo`.
Value wgmmaDescriptor(OpBuilder &b, Location loc, Value address, int64_t lbo,
                      int64_t sbo, int64_t swizzleBytes = 128);

/// One m64nNk16 (16-bit) or m64nNk32 (8-bit) wgmma reading A and B from
/// shared memory through the descriptors `descA` (K-major; MN-major, which
/// the instruction transposes, with `transposeA`) and `descB` (MN-major
/// with `transposeB`; else K-major): `acc` (a struct of N / 2 f32) += A x
/// B, f32 accumulation of `aType` x `bType` (both f16, both bf16, or each
/// f8E4M3FN or f8E5M2, read K-major).
Value wgmmaFromShared(OpBuilder &b, Location loc, Value acc, Value descA,
                      Value descB, int64_t n, Type aType, Type bType,
                      bool transposeB, bool transposeA = false);

/// The shared-window address (i64) of `scratch` (a view with 1023 bytes of
/// slack) rounded up to 1024 bytes: the 128-byte swizzle is a function of
/// the address, and wgmma descriptors assume a 1024-byte aligned pattern.
Value alignedSharedAddress(OpBuilder &b, Location loc, Value scratch);

/// The accumulator `acc` (a per-thread f32 vector in the #ism.mma order) as
/// the `reps` structs of `regsPerInstr` f32 that the m64nN wgmma of each
/// 64-row block takes; wgmmaRegisters gives the structs' elements back in
/// that order.
SmallVector<Value> wgmmaAccumulators(OpBuilder &b, Location loc, Value acc,
                                     int64_t reps, int64_t regsPerInstr);
SmallVector<Value> wgmmaRegisters(OpBuilder &b, Location loc,
                                  ArrayRef<Value> structs);

/// Waits until at most `pending` wgmma groups of this thread are in flight,
/// with the accumulator registers `regs` (f32) passing through the wait (tied
/// inline-asm operands): the returned values are defined by the wait, so
/// nothing that reads them can be scheduled before it. Reading them earlier
/// makes ptxas serialize every wgmma of the kernel (its warning C7514).
SmallVector<Value> waitForWgmma(OpBuilder &b, Location loc,
                                ArrayRef<Value> regs, int64_t pending);

} // namespace mlir::ism

#endif // ISM_LIB_CONVERSION_ISMTOGPU_OPERANDTILES_H
