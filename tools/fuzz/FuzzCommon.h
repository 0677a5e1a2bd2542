//===- FuzzCommon.h - Shared set-up of the ism fuzz targets -----*- C++ -*-===//
//
// Every target parses its input as text in a fresh MLIRContext (so that
// nothing interned by one input grows memory over millions of runs) with the
// dialects of ism-opt, threading off, and every diagnostic swallowed: a
// fuzz target looks for crashes, hangs and sanitizer reports, and an error
// diagnostic is the right answer to most of its inputs.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_TOOLS_FUZZ_FUZZCOMMON_H
#define ISM_TOOLS_FUZZ_FUZZCOMMON_H

#include "ism/InitIsm.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Parser/Parser.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace ism_fuzz {

/// The dialects and external models of ism-opt, registered once.
inline const mlir::DialectRegistry &getRegistry() {
  static const mlir::DialectRegistry *registry = [] {
    auto *r = new mlir::DialectRegistry();
    mlir::ism::registerAllIsmDialects(*r);
    return r;
  }();
  return *registry;
}

/// A context for one input: ism-opt's dialects, no threads, no diagnostics
/// printed.
inline std::unique_ptr<mlir::MLIRContext> makeContext() {
  auto context = std::make_unique<mlir::MLIRContext>(
      getRegistry(), mlir::MLIRContext::Threading::DISABLED);
  context->printOpOnDiagnostic(false);
  context->getDiagEngine().registerHandler([](mlir::Diagnostic &) {});
  return context;
}

/// Parses and verifies `data` as a module; null when it does not. The
/// lexer reads up to a NUL after the buffer (as in a file MemoryBuffer), so
/// the input is copied into a string, which has one.
inline mlir::OwningOpRef<mlir::ModuleOp>
parseModule(mlir::MLIRContext &context, const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  return mlir::parseSourceString<mlir::ModuleOp>(
      text, mlir::ParserConfig(&context), "fuzz-input");
}

} // namespace ism_fuzz

#endif // ISM_TOOLS_FUZZ_FUZZCOMMON_H
