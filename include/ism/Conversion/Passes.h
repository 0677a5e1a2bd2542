//===- Passes.h - ism conversion passes -------------------------*- C++ -*-===//

#ifndef ISM_CONVERSION_PASSES_H
#define ISM_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ism {
#define GEN_PASS_DECL
#include "ism/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ism/Conversion/Passes.h.inc"
} // namespace mlir::ism

#endif // ISM_CONVERSION_PASSES_H
