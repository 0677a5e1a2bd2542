//===- Pipelines.cpp - ism compilation pipelines --------------------------===//

#include "ism/Pipelines/Pipelines.h"

#include "ism/Conversion/IsmToGPU/IsmToGPU.h"

#include "ism/Conversion/Passes.h"
#include "ism/Dialect/Ism/Transforms/DotLoop.h"
#include "ism/Dialect/Ism/Transforms/Passes.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::ism;

void mlir::ism::buildGPUToNVVMPipeline(OpPassManager &pm,
                                       const PTXOptions &options) {
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));

  OpPassManager &gpuPm = pm.nest<gpu::GPUModuleOp>();
  // scf to cf first: convert-nvgpu-to-nvvm rebuilds scf ops with converted
  // types and drops their attributes, among them the loop annotations that
  // the persistent loops' latches carry (keepInvariantsInLoop, Partitions.cpp).
  gpuPm.addPass(createSCFToControlFlowPass());
  gpuPm.addPass(createConvertNVGPUToNVVMPass());
  gpuPm.addPass(createConvertVectorToSCFPass());
  gpuPm.addPass(createSCFToControlFlowPass());
  gpuPm.addPass(memref::createExpandStridedMetadataPass());
  gpuPm.addPass(createLowerAffinePass());
  gpuPm.addPass(createConvertGpuOpsToNVVMOps());
  // Dynamic shared memory as `.extern .shared .b8 name[]`, not a demoted
  // one-byte variable whose every access ptxas flags as out of bounds.
  gpuPm.addPass(createIsmExternDynamicShared());
  gpuPm.addPass(createConvertNVVMToLLVMPass());
  gpuPm.addPass(createCanonicalizerPass());
  gpuPm.addPass(createCSEPass());
  gpuPm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::ism::buildGPUToPTXPipeline(OpPassManager &pm,
                                      const PTXOptions &options) {
  buildGPUToNVVMPipeline(pm, options);
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void mlir::ism::buildIsmToGPUPipeline(OpPassManager &pm,
                                      const IsmToPTXOptions &options) {
  pm.addPass(createIsmCombine());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  IsmExpandIm2colOptions im2col;
  im2col.chip = options.chip;
  pm.addPass(createIsmExpandIm2col(im2col));
  IsmAssignLayoutsOptions layouts;
  layouts.numWarps = options.numWarps;
  pm.addPass(createIsmAssignLayouts(layouts));
  IsmAccelerateDotOptions accelerate;
  accelerate.chip = options.chip;
  pm.addPass(createIsmAccelerateDot(accelerate));
  pm.addPass(createIsmPipeline());
  pm.addPass(createIsmRemoveLayoutConversions());
  pm.addPass(createIsmPipelineGathers());
  pm.addPass(createIsmPipelineLoads());
  if (options.fuseCoschedules)
    pm.addPass(createIsmCoschedule());
  ConvertIsmToGPUOptions lowering;
  lowering.trace = options.trace;
  pm.addPass(createConvertIsmToGPU(lowering));
  IsmDependentLaunchOptions dependent;
  dependent.chip = options.chip;
  pm.addPass(createIsmDependentLaunch(dependent));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::ism::buildIsmToPTXPipeline(OpPassManager &pm,
                                      const IsmToPTXOptions &options) {
  buildIsmToGPUPipeline(pm, options);
  buildGPUToPTXPipeline(pm, options);
}

namespace {
/// Command-line options of the named pipelines.
struct PipelineOptions : PassPipelineOptions<PipelineOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("Target GPU (sm_90a, sm_80, ...)"),
                           llvm::cl::init("sm_90a")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX features"),
                               llvm::cl::init("+ptx81")};
  Option<unsigned> optLevel{*this, "opt-level",
                            llvm::cl::desc("LLVM optimisation level (0-3)"),
                            llvm::cl::init(3)};
  Option<unsigned> numWarps{
      *this, "num-warps",
      llvm::cl::desc("Warps per program for every kernel (0: the kernel's "
                     "num_warps)"),
      llvm::cl::init(0)};
  Option<bool> coschedule{
      *this, "coschedule",
      llvm::cl::desc("Fuse the launches of each ism.coschedule into one "
                     "kernel (ism-coschedule)"),
      llvm::cl::init(true)};

  Option<bool> trace{
      *this, "trace",
      llvm::cl::desc("Fused kernels record each work item's SM and times "
                     "(see ism-run --trace)"),
      llvm::cl::init(false)};

  IsmToPTXOptions get() const {
    IsmToPTXOptions options;
    options.chip = chip;
    options.features = features;
    options.optLevel = optLevel;
    options.numWarps = numWarps;
    options.fuseCoschedules = coschedule;
    options.trace = trace;
    return options;
  }
};
} // namespace

void mlir::ism::registerIsmPipelines() {
  PassPipelineRegistration<PipelineOptions>(
      "ism-to-gpu",
      "Lower ism tile programs to GPU-dialect kernels and launches",
      [](OpPassManager &pm, const PipelineOptions &options) {
        buildIsmToGPUPipeline(pm, options.get());
      });
  PassPipelineRegistration<PipelineOptions>(
      "ism-to-ptx",
      "Compile ism tile programs to a gpu.binary holding PTX "
      "(ism-to-gpu, then NVVM and the NVPTX backend)",
      [](OpPassManager &pm, const PipelineOptions &options) {
        buildIsmToPTXPipeline(pm, options.get());
      });
}

/// Runs the passes `build` adds on `module`; on failure returns a one-line
/// error that starts with `what` and carries the pipeline's diagnostics.
/// Warnings are also appended to `warnings`, one line each as a compiler
/// prints them (`FILE:LINE:COL: warning: ...`), since a pipeline that
/// succeeds returns no text.
static llvm::Error runPipeline(ModuleOp module,
                               function_ref<void(OpPassManager &)> build,
                               StringRef what,
                               std::vector<std::string> &warnings) {
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &diag) {
    os << (diagnostics.empty() ? "" : "; ") << diag.getLocation() << ": "
       << diag;
    if (diag.getSeverity() == DiagnosticSeverity::Warning) {
      std::string line;
      llvm::raw_string_ostream ws(line);
      if (auto file = dyn_cast<FileLineColLoc>(diag.getLocation()))
        ws << file.getFilename().getValue() << ":" << file.getLine() << ":"
           << file.getColumn();
      else
        ws << diag.getLocation();
      ws << ": warning: " << diag;
      warnings.push_back(std::move(line));
    }
    return success();
  });
  PassManager pm(module.getContext());
  build(pm);
  if (failed(pm.run(module)))
    return llvm::createStringError(what + ": " + diagnostics);
  return llvm::Error::success();
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
  if (auto tma = func->getAttrOfType<ArrayAttr>("ism.tma")) {
    for (Attribute operand : tma) {
      ArrayRef<int64_t> v = cast<DenseI64ArrayAttr>(operand).asArrayRef();
      CompiledKernel::TmaOperand &t = info.tma.emplace_back();
      t.arg = v[0];
      t.boxRows = unsigned(v[1]);
      t.boxCols = unsigned(v[2]);
      t.im2col.assign(v.begin() + 3, v.end());
    }
  }
  info.persistent = func->hasAttr("ism.persistent");
  if (auto cluster = func->getAttrOfType<DenseI32ArrayAttr>(
          NVVM::NVVMDialect::getClusterDimAttrName()))
    for (int32_t size : cluster.asArrayRef())
      info.clusterSize *= unsigned(std::max(1, size));
  if (auto ctas = func->getAttrOfType<IntegerAttr>(kCtasPerProgramAttrName))
    info.ctasPerProgram = unsigned(std::max<int64_t>(1, ctas.getInt()));
  if (auto fused = func->getAttrOfType<DictionaryAttr>("ism.coschedule")) {
    CompiledKernel::Fused facts;
    if (auto policy = fused.getAs<StringAttr>("policy"))
      facts.policy = policy.str();
    if (auto ctas = fused.getAs<IntegerAttr>("ctas_per_sm"))
      facts.ctasPerSM = ctas.getInt();
    if (auto counters = fused.getAs<IntegerAttr>("work_counters"))
      facts.workCounters = counters.getInt();
    if (auto timeout = fused.getAs<IntegerAttr>("timeout_ms"))
      facts.timeoutMs = timeout.getInt();
    facts.trace = func->hasAttr("ism.trace");
    if (auto params = fused.getAs<DenseI32ArrayAttr>("params")) {
      ArrayRef<int32_t> flat = params.asArrayRef();
      for (size_t k = 0; k + 1 < flat.size(); k += 2)
        facts.params.emplace_back(unsigned(flat[k]), int(flat[k + 1]));
    }
    // The launches' kernels: listed when the name does not (a long
    // region's), else the name's parts.
    if (auto launches = fused.getAs<ArrayAttr>("launches")) {
      for (Attribute launch : launches)
        facts.partitions.push_back(cast<StringAttr>(launch).str());
    } else {
      for (StringRef part : llvm::split(func.getName(), "__"))
        facts.partitions.push_back(part.str());
    }
    info.fused = std::move(facts);
  }
  return info;
}

llvm::Expected<CompiledModule>
mlir::ism::compileGPUModuleToPTX(ModuleOp module, const PTXOptions &options) {
  OwningOpRef<ModuleOp> copy(module.clone());
  CompiledModule result;
  copy->walk([&](gpu::GPUFuncOp func) {
    if (!func.isKernel())
      return;
    result.kernels[func.getName()] = getKernelInfo(func);
    if (auto fused = func->getAttrOfType<DictionaryAttr>("ism.coschedule"))
      if (auto index = fused.getAs<IntegerAttr>("index")) {
        if (result.coschedules.size() <= size_t(index.getInt()))
          result.coschedules.resize(index.getInt() + 1);
        result.coschedules[index.getInt()] = func.getName().str();
      }
  });
  if (auto unfused =
          (*copy)->getAttrOfType<DenseI32ArrayAttr>("ism.unfused_coschedules"))
    for (int32_t index : unfused.asArrayRef()) {
      result.unfused.push_back(index);
      if (result.coschedules.size() <= size_t(index))
        result.coschedules.resize(index + 1);
    }
  if (result.kernels.empty())
    return llvm::createStringError("the module has no GPU kernels to compile");
  // No NVIDIA GPU gives a CTA more than 227 KiB of shared memory (sm_90 and
  // sm_100; an sm_80 kernel may use up to that much on a Hopper GPU), so a
  // kernel that needs more can never launch: say so now rather than at the
  // launch.
  for (const auto &entry : result.kernels) {
    const CompiledKernel &kernel = entry.getValue();
    if (int64_t(kernel.sharedMemoryBytes) > kMaxSharedMemoryPerCTA)
      return llvm::createStringError(
          llvm::formatv("kernel '{0}' needs {1} bytes of shared memory, more "
                        "than the {2} ({3} KiB) a CTA can have on any NVIDIA "
                        "GPU; use smaller tiles or fewer pipeline stages",
                        kernel.name, kernel.sharedMemoryBytes,
                        kMaxSharedMemoryPerCTA, kMaxSharedMemoryPerCTA / 1024)
              .str());
  }

  if (llvm::Error error = runPipeline(
          *copy, [&](OpPassManager &pm) { buildGPUToPTXPipeline(pm, options); },
          "lowering to PTX failed", result.warnings))
    return std::move(error);

  copy->walk([&](gpu::BinaryOp binary) {
    for (Attribute object : binary.getObjects())
      result.ptx += cast<gpu::ObjectAttr>(object).getObject().getValue().str();
  });
  if (result.ptx.empty())
    return llvm::createStringError("lowering produced no PTX");
  // Math the lowering leaves to libdevice becomes calls to __nv_*
  // functions; without libdevice linked they stay undefined and the module
  // would fail to load on the GPU.
  StringRef ptx = result.ptx;
  size_t pos = ptx.find(".extern .func");
  if (pos != StringRef::npos) {
    // `.extern .func (.param .b32 func_retval0) __nv_fabsf(`: the name is
    // the word before the parameter list, after any return parameter.
    StringRef decl = ptx.substr(pos + strlen(".extern .func")).ltrim();
    if (decl.starts_with("("))
      decl = decl.drop_until([](char c) { return c == ')'; }).drop_front();
    StringRef name =
        decl.ltrim().take_until([](char c) { return c == '(' || isspace(c); });
    return llvm::createStringError(
        "the kernels call " + name.str() +
        ", a libdevice function that was not linked: install the CUDA "
        "toolkit (its nvvm/libdevice) where ism compiles, or avoid that "
        "math function");
  }
  return result;
}

llvm::Expected<CompiledModule>
mlir::ism::compileToPTX(ModuleOp module, const IsmToPTXOptions &options) {
  OwningOpRef<ModuleOp> copy(module.clone());
  std::vector<std::string> warnings;
  if (llvm::Error error = runPipeline(
          *copy, [&](OpPassManager &pm) { buildIsmToGPUPipeline(pm, options); },
          "lowering to the GPU dialect failed", warnings))
    return std::move(error);
  llvm::Expected<CompiledModule> result = compileGPUModuleToPTX(*copy, options);
  if (result)
    result->warnings.insert(result->warnings.begin(), warnings.begin(),
                            warnings.end());
  return result;
}
