//===- InitIsm.h - register what ism tools need -----------------*- C++ -*-===//
//
// One place that registers the dialects, interfaces and passes the ism tools
// (ism-opt, ism-run, the Python bindings) work with.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_INITISM_H
#define ISM_INITISM_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::ism {
/// Adds the ism dialect, the upstream dialects tile programs and the
/// lowering use, and the interfaces that lower them to LLVM/NVVM and
/// translate them to PTX.
void registerAllIsmDialects(DialectRegistry &registry);

/// Registers the ism passes and the upstream passes and pipelines the ism
/// pipeline is built from, so that they can be named on a command line.
void registerAllIsmPasses();
} // namespace mlir::ism

#endif // ISM_INITISM_H
