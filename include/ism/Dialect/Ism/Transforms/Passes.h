//===- Passes.h - ism dialect passes ----------------------------*- C++ -*-===//

#ifndef ISM_DIALECT_ISM_TRANSFORMS_PASSES_H
#define ISM_DIALECT_ISM_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace mlir::ism {
#define GEN_PASS_DECL
#include "ism/Dialect/Ism/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ism/Dialect/Ism/Transforms/Passes.h.inc"

/// The compute capability a chip option names ("sm_80" -> 80, "sm_90a" ->
/// 90), or -1 when it names none (anything but sm_<digits>, optionally
/// followed by "a" or "f").
int64_t getSMVersion(StringRef chip);
} // namespace mlir::ism

#endif // ISM_DIALECT_ISM_TRANSFORMS_PASSES_H
