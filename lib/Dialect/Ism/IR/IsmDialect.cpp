//===- IsmDialect.cpp - ism dialect ---------------------------------------===//

#include "ism/Dialect/Ism/IR/IsmDialect.h"
#include "ism/Dialect/Ism/IR/IsmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ism;

#include "ism/Dialect/Ism/IR/IsmDialect.cpp.inc"

namespace {
/// Gives the layout encodings short aliases (`#blocked`, `#mma`, ...) so that
/// thread-level IR stays readable.
struct IsmOpAsmInterface : OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;

  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    StringRef name = llvm::TypeSwitch<Attribute, StringRef>(attr)
                         .Case([](BlockedEncodingAttr) { return "blocked"; })
                         .Case([](MmaEncodingAttr) { return "mma"; })
                         .Case([](DotOperandEncodingAttr) { return "dot_op"; })
                         .Case([](SharedEncodingAttr) { return "shared"; })
                         .Case([](SliceEncodingAttr) { return "slice"; })
                         .Default([](Attribute) { return StringRef(); });
    if (name.empty())
      return AliasResult::NoAlias;
    os << name;
    return AliasResult::FinalAlias;
  }
};
} // namespace

void IsmDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ism/Dialect/Ism/IR/IsmOps.cpp.inc"
      >();
  registerAttributes();
  addInterfaces<IsmOpAsmInterface>();
}

/// The dialect's attributes on other ops: `ism.zeroed` is a unit attribute
/// of `memref.alloc`. Other `ism.*` attributes are the passes' business.
LogicalResult IsmDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  if (attr.getName() != kZeroedAttrName)
    return success();
  if (op->getName().getStringRef() != "memref.alloc")
    return op->emitError() << "'" << kZeroedAttrName
                           << "' applies to memref.alloc only";
  if (!isa<UnitAttr>(attr.getValue()))
    return op->emitError() << "'" << kZeroedAttrName
                           << "' is a unit attribute (it takes no value)";
  return success();
}

/// Constants folded out of ism ops (splat tiles) become `arith.constant`.
Operation *IsmDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}
