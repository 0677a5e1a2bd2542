//===- IsmOps.h - ism operations --------------------------------*- C++ -*-===//

#ifndef ISM_DIALECT_ISM_IR_ISMOPS_H
#define ISM_DIALECT_ISM_IR_ISMOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "ism/Dialect/Ism/IR/IsmAttrs.h"
#include "ism/Dialect/Ism/IR/IsmDialect.h"

namespace mlir::ism {
/// The i1 tile with the shape (and layout) of `type`, used for masks.
Type getMaskType(Type type);
/// True when `type` is a tile: a ranked tensor with static power-of-two
/// dimensions.
bool isTile(Type type);
/// The most elements a tile may have (2^20, 4 MiB of f32: more than the
/// registers and shared memory of any SM). The verifiers refuse larger
/// tensors in kernels, so that no pass, lowering or interpreter meets one.
constexpr int64_t kMaxTileElements = int64_t(1) << 20;
} // namespace mlir::ism

namespace mlir::OpTrait::ism {
namespace impl {
LogicalResult verifyTileShaped(Operation *op);
} // namespace impl

/// Every ranked-tensor operand and result of the op is a tile (static,
/// power-of-two dimensions).
template <typename ConcreteType>
class TileShaped : public TraitBase<ConcreteType, TileShaped> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return impl::verifyTileShaped(op);
  }
};
} // namespace mlir::OpTrait::ism

#define GET_OP_CLASSES
#include "ism/Dialect/Ism/IR/IsmOps.h.inc"

#endif // ISM_DIALECT_ISM_IR_ISMOPS_H
