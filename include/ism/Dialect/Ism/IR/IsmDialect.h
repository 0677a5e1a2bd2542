//===- IsmDialect.h - ism dialect declaration -------------------*- C++ -*-===//

#ifndef ISM_DIALECT_ISM_IR_ISMDIALECT_H
#define ISM_DIALECT_ISM_IR_ISMDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Dialect.h"

#include "ism/Dialect/Ism/IR/IsmDialect.h.inc"

#endif // ISM_DIALECT_ISM_IR_ISMDIALECT_H
