//===- Compile.cpp - Compiling modules for ism-run ------------------------===//

#include "ism/Runner/Compile.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::ism;

bool mlir::ism::runner::hasTileKernels(ModuleOp module) {
  return !module.getOps<KernelOp>().empty();
}

unsigned mlir::ism::runner::getNumCoschedules(ModuleOp module) {
  unsigned count = 0;
  module.walk([&](CoscheduleOp) { ++count; });
  return count;
}

/// Checks that fusing gave every ism.coschedule of `module` a fused kernel.
static llvm::Error checkFused(ModuleOp module, const CompiledModule &compiled) {
  unsigned count = runner::getNumCoschedules(module);
  auto hint = "; run the regions unfused with --coschedule=sequential or "
              "--coschedule=streams";
  if (compiled.coschedules.size() < count)
    return llvm::createStringError(
        llvm::formatv("--coschedule=fused: the compiler returned {0} fused "
                      "kernel name(s) for the {1} ism.coschedule op(s) of the "
                      "module{2}",
                      compiled.coschedules.size(), count, hint)
            .str());
  for (unsigned i = 0; i < count; ++i) {
    const std::string &name = compiled.coschedules[i];
    if (llvm::is_contained(compiled.unfused, i))
      continue; // the compiler kept the launches separate on purpose
    if (name.empty())
      return llvm::createStringError(
          llvm::formatv("--coschedule=fused: ism.coschedule #{0} (in walk "
                        "order) was not fused into a kernel{1}",
                        i, hint)
              .str());
    auto kernel = compiled.kernels.find(name);
    if (kernel == compiled.kernels.end() || !kernel->second.fused)
      return llvm::createStringError(
          llvm::formatv("--coschedule=fused: the fused kernel '{0}' of "
                        "ism.coschedule #{1} is {2} in the compiled module{3}",
                        name, i,
                        kernel == compiled.kernels.end()
                            ? "missing"
                            : "without fused launch facts",
                        hint)
              .str());
  }
  return llvm::Error::success();
}

/// Checks that every fused kernel of `module` records a trace.
static llvm::Error checkTraced(ModuleOp module,
                               const CompiledModule &compiled) {
  unsigned count = runner::getNumCoschedules(module);
  for (unsigned i = 0; i < count && i < compiled.coschedules.size(); ++i) {
    auto kernel = compiled.kernels.find(compiled.coschedules[i]);
    if (kernel == compiled.kernels.end() || !kernel->second.fused)
      continue; // checkFused reported it
    if (!kernel->second.fused->trace)
      return llvm::createStringError(
          llvm::formatv("--trace: the fused kernel '{0}' of ism.coschedule "
                        "#{1} was compiled without trace recording "
                        "(CompiledKernel::Fused::trace is not set)",
                        kernel->first(), i)
              .str());
  }
  return llvm::Error::success();
}

IsmToPTXOptions mlir::ism::runner::getCompileOptions(const PTXOptions &options,
                                                     CoscheduleMode coschedule,
                                                     bool trace) {
  IsmToPTXOptions tileOptions;
  static_cast<PTXOptions &>(tileOptions) = options;
  tileOptions.fuseCoschedules = coschedule == CoscheduleMode::Fused;
  tileOptions.trace = trace;
  return tileOptions;
}

llvm::Error mlir::ism::runner::checkCompileRequest(ModuleOp module,
                                                   CoscheduleMode coschedule,
                                                   bool trace) {
  if (trace && coschedule != CoscheduleMode::Fused)
    return llvm::createStringError(
        "--trace records fused kernels; use --coschedule=fused");
  if (trace && !hasTileKernels(module))
    return llvm::createStringError(
        "--trace needs tile-level kernels (ism.kernel): only the fused "
        "kernels the ism lowering makes can record a trace");
  return llvm::Error::success();
}

llvm::Error
mlir::ism::runner::checkCompiledModule(ModuleOp module,
                                       const CompiledModule &compiled,
                                       CoscheduleMode coschedule, bool trace) {
  if (coschedule != CoscheduleMode::Fused)
    return llvm::Error::success();
  if (llvm::Error error = checkFused(module, compiled))
    return error;
  if (trace)
    if (llvm::Error error = checkTraced(module, compiled))
      return error;
  return llvm::Error::success();
}

llvm::Expected<CompiledModule>
mlir::ism::runner::compileModule(ModuleOp module, const PTXOptions &options,
                                 CoscheduleMode coschedule, bool trace) {
  if (llvm::Error error = checkCompileRequest(module, coschedule, trace))
    return std::move(error);
  bool fuse = coschedule == CoscheduleMode::Fused;
  std::optional<llvm::Expected<CompiledModule>> result;
  if (hasTileKernels(module)) {
    IsmToPTXOptions tileOptions = getCompileOptions(options, coschedule, trace);
    if (fuse) {
      // ism-coschedule fuses each region into one kernel; compileToPTX
      // compiles a copy.
      result.emplace(compileToPTX(module, tileOptions));
    } else {
      // The launches of each ism.coschedule run as ordinary launches (one
      // after another or on streams): they compile outside the region.
      OwningOpRef<ModuleOp> copy(module.clone());
      SmallVector<CoscheduleOp> coschedules;
      copy->walk([&](CoscheduleOp op) { coschedules.push_back(op); });
      for (CoscheduleOp op : coschedules) {
        Block &body = op.getBody().front();
        op->getBlock()->getOperations().splice(Block::iterator(op),
                                               body.getOperations());
        op.erase();
      }
      result.emplace(compileToPTX(*copy, tileOptions));
    }
  } else {
    result.emplace(compileGPUModuleToPTX(module, options));
  }
  if (!*result)
    return std::move(*result);
  if (llvm::Error error =
          checkCompiledModule(module, **result, coschedule, trace))
    return std::move(error);
  return std::move(*result);
}
