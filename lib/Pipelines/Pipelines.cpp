//===- Pipelines.cpp - ism compilation pipelines --------------------------===//

#include "ism/Pipelines/Pipelines.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::ism;

void mlir::ism::buildGPUToPTXPipeline(OpPassManager &pm,
                                      const PTXOptions &options) {
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));

  OpPassManager &gpuPm = pm.nest<gpu::GPUModuleOp>();
  gpuPm.addPass(createConvertNVGPUToNVVMPass());
  gpuPm.addPass(createConvertVectorToSCFPass());
  gpuPm.addPass(createSCFToControlFlowPass());
  gpuPm.addPass(memref::createExpandStridedMetadataPass());
  gpuPm.addPass(createLowerAffinePass());
  gpuPm.addPass(createConvertGpuOpsToNVVMOps());
  gpuPm.addPass(createConvertNVVMToLLVMPass());
  gpuPm.addPass(createCanonicalizerPass());
  gpuPm.addPass(createCSEPass());
  gpuPm.addPass(createReconcileUnrealizedCastsPass());

  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

/// Reads a kernel's launch facts from the attributes the lowering set.
static CompiledKernel getKernelInfo(gpu::GPUFuncOp func) {
  CompiledKernel info;
  info.name = func.getName().str();
  if (auto threads = func->getAttrOfType<IntegerAttr>(kNumThreadsAttrName))
    info.numThreads = threads.getInt();
  else if (std::optional<ArrayRef<int32_t>> known = func.getKnownBlockSize())
    info.numThreads = (*known)[0] * (*known)[1] * (*known)[2];
  if (auto smem = func->getAttrOfType<IntegerAttr>(kSharedMemoryAttrName))
    info.sharedMemoryBytes = smem.getInt();
  return info;
}

llvm::Expected<CompiledModule>
mlir::ism::compileGPUModuleToPTX(ModuleOp module, const PTXOptions &options) {
  OwningOpRef<ModuleOp> copy(module.clone());
  CompiledModule result;
  copy->walk([&](gpu::GPUFuncOp func) {
    if (func.isKernel())
      result.kernels[func.getName()] = getKernelInfo(func);
  });
  if (result.kernels.empty())
    return llvm::createStringError("the module has no GPU kernels to compile");

  // Diagnostics from the pipeline are collected into the returned error.
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &diag) {
    os << diag.getLocation() << ": " << diag << "\n";
    return success();
  });

  PassManager pm(module.getContext());
  buildGPUToPTXPipeline(pm, options);
  if (failed(pm.run(*copy)))
    return llvm::createStringError("lowering to PTX failed:\n" + diagnostics);

  copy->walk([&](gpu::BinaryOp binary) {
    for (Attribute object : binary.getObjects())
      result.ptx += cast<gpu::ObjectAttr>(object).getObject().getValue().str();
  });
  if (result.ptx.empty())
    return llvm::createStringError("lowering produced no PTX");
  return result;
}
