//===- IsmAttrs.h - ism layout encodings ------------------------*- C++ -*-===//

#ifndef ISM_DIALECT_ISM_IR_ISMATTRS_H
#define ISM_DIALECT_ISM_IR_ISMATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/TensorEncoding.h"

#include "ism/Dialect/Ism/IR/IsmEnums.h.inc"

namespace mlir::ism {
/// Parses a bracketed list of unsigned integers, `[1, 8]`.
FailureOr<SmallVector<unsigned>> parseDimList(AsmParser &parser);
/// Prints a list of unsigned integers in brackets.
void printDimList(AsmPrinter &printer, ArrayRef<unsigned> dims);
} // namespace mlir::ism

#define GET_ATTRDEF_CLASSES
#include "ism/Dialect/Ism/IR/IsmAttrs.h.inc"

#endif // ISM_DIALECT_ISM_IR_ISMATTRS_H
