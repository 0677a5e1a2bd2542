//===- ism-pipeline-fuzzer.cpp - Fuzzes the ism-to-ptx pipeline ---------===//
//
// libFuzzer target: a module that parses, verifies and holds an ism.kernel
// goes through the ism-to-ptx pipeline for sm_90a, with coschedule fusion
// on: the ism passes, convert-ism-to-gpu and the lowering to the LLVM/NVVM
// dialects (ism's code ends there) every time, and the NVPTX backend
// (gpu-module-to-binary, LLVM's code, two thirds of the time of a run) for
// one input in eight, chosen by a hash of the input so that a run is
// reproducible. The pipeline may reject the module with a diagnostic; it
// may not crash.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"
#include "ism/Pipelines/Pipelines.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/Hashing.h"

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::unique_ptr<MLIRContext> context = ism_fuzz::makeContext();
  OwningOpRef<ModuleOp> module = ism_fuzz::parseModule(*context, data, size);
  if (!module || module->getOps<ism::KernelOp>().empty())
    return 0;
  PassManager pm(context.get());
  ism::IsmToPTXOptions options;
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  if (llvm::hash_value(text) % 8 == 0)
    ism::buildIsmToPTXPipeline(pm, options);
  else {
    ism::buildIsmToGPUPipeline(pm, options);
    ism::buildGPUToNVVMPipeline(pm, options);
  }
  (void)pm.run(*module);
  return 0;
}
