//===- LayoutPropagation.h - moving tiles to a new layout -------*- C++ -*-===//
//
// Helpers shared by the layout passes (ism-accelerate-dot,
// ism-assign-layouts): give a tile a new layout and have its users follow.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_DIALECT_ISM_TRANSFORMS_LAYOUTPROPAGATION_H
#define ISM_DIALECT_ISM_TRANSFORMS_LAYOUTPROPAGATION_H

#include "ism/Dialect/Ism/IR/IsmAttrs.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::ism {

/// `type` with layout `encoding`.
RankedTensorType withEncoding(RankedTensorType type, Attribute encoding);

/// Whether `op` computes its tile results element by element from its tile
/// operands (so it can run in any layout).
bool isElementwise(Operation *op);

/// Gives `root`'s users the layout `encoding`, which `root` now has:
/// elementwise users take it (their other operands adapt to it), loops
/// carry it, reductions and stores read it as it is, the expansion of a
/// slice along its dimension takes the parent layout (and the broadcasts
/// of it the full parent), and any other user gets a conversion back to
/// `blocked`, the layout `root` had.
void propagateForward(Value root, Attribute encoding, Attribute blocked,
                      OpBuilder &b);

/// Has operand `use` read its value in layout `encoding`: splats,
/// broadcasts, constants, single-use loads and elementwise math are made in
/// it, a loop-carried tile is carried in it, anything else is converted.
void adapt(OpOperand &use, Attribute encoding, OpBuilder &b);

/// Has `loop` carry its tile #i in the layout `encoding` (see adapt).
void carryInLayout(scf::ForOp loop, unsigned i, Attribute encoding,
                   OpBuilder &b);

} // namespace mlir::ism

#endif // ISM_DIALECT_ISM_TRANSFORMS_LAYOUTPROPAGATION_H
