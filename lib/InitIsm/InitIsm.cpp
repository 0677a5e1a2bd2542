//===- InitIsm.cpp - register what ism tools need -------------------------===//

#include "ism/InitIsm.h"

#include "ism/Conversion/Passes.h"
#include "ism/Dialect/Ism/IR/IsmDialect.h"
#include "ism/Dialect/Ism/Transforms/Passes.h"
#include "ism/Pipelines/Pipelines.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUCommon/GPUToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/NVGPU/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"

void mlir::ism::registerAllIsmDialects(DialectRegistry &registry) {
  registry
      .insert<IsmDialect, arith::ArithDialect, cf::ControlFlowDialect,
              func::FuncDialect, gpu::GPUDialect, index::IndexDialect,
              LLVM::LLVMDialect, math::MathDialect, memref::MemRefDialect,
              nvgpu::NVGPUDialect, NVVM::NVVMDialect, scf::SCFDialect,
              tensor::TensorDialect, ub::UBDialect, vector::VectorDialect>();

  // convert-to-llvm and gpu-to-nvvm find their patterns through these.
  registerConvertToLLVMDependentDialectLoading(registry);
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  gpu::registerConvertGpuToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);

  // nvvm-attach-target and gpu-module-to-binary (PTX through NVPTX).
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerAllGPUToLLVMIRTranslations(registry);
}

void mlir::ism::registerAllIsmPasses() {
  registerIsmPasses();
  registerIsmConversionPasses();
  registerIsmPipelines();
  registerTransformsPasses();
  registerConversionPasses();
  registerGPUPasses();
  registerNVGPUPasses();
  gpu::registerGPUToNVVMPipeline();
}
