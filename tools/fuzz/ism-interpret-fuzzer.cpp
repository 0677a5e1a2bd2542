//===- ism-interpret-fuzzer.cpp - Fuzzes the reference interpreter ------===//
//
// libFuzzer target: a module that parses and verifies is run by the
// reference interpreter (what `ism-run --interpret` does) through its first
// host function with ism.launch ops, on small shapes: each dynamic size of a
// memref parameter is 37 (a partial block for every power-of-two tile),
// buffers are randn, float scalars 0.5 and integer scalars 3. Modules whose
// tiles or buffers have more than 2^14 elements are skipped (small shapes
// only), and each run has a work limit (ReferenceLauncher::setWorkLimit), so
// that a kernel that loops for ever is an error, not a hang.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"
#include "ism/Runner/ArgSpec.h"
#include "ism/Runner/HostExecutor.h"
#include "ism/Runner/Reference.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Parallel.h"
#include "llvm/Support/Threading.h"

using namespace mlir;
using namespace mlir::ism::runner;

static constexpr int64_t kDynamicSize = 37;
static constexpr int64_t kMaxElements = 1 << 14;
static constexpr uint64_t kWorkLimit = 1 << 20;

/// Whether any type in `module` is a shaped type with more than
/// kMaxElements elements.
static bool hasLargeTypes(ModuleOp module) {
  auto isLarge = [](Type type) {
    auto shaped = dyn_cast<ShapedType>(type);
    if (!shaped || !shaped.hasRank())
      return false;
    int64_t elements = 1;
    for (int64_t size : shaped.getShape()) {
      int64_t s = ShapedType::isDynamic(size) ? kDynamicSize : size;
      if (s != 0 && elements > kMaxElements / s + 1)
        return true;
      elements *= s;
    }
    return elements > kMaxElements;
  };
  bool large = false;
  module->walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      large |= isLarge(type);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          large |= isLarge(arg.getType());
    if (auto func = dyn_cast<FunctionOpInterface>(op))
      for (Type type : func.getArgumentTypes())
        large |= isLarge(type);
    return large ? WalkResult::interrupt() : WalkResult::advance();
  });
  return large;
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // One interpreter thread: runs are reproducible and cheap to start.
  llvm::parallel::strategy = llvm::hardware_concurrency(1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::unique_ptr<MLIRContext> context = ism_fuzz::makeContext();
  OwningOpRef<ModuleOp> module = ism_fuzz::parseModule(*context, data, size);
  if (!module || hasLargeTypes(*module))
    return 0;
  func::FuncOp entry;
  for (auto func : module->getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    bool launches = false;
    func.walk([&](mlir::ism::LaunchOp) { launches = true; });
    if (launches) {
      entry = func;
      break;
    }
  }
  if (!entry)
    return 0;

  std::vector<ArgSpec> specs;
  for (Type type : entry.getArgumentTypes()) {
    ArgSpec spec;
    if (auto memref = dyn_cast<MemRefType>(type)) {
      llvm::Expected<DType> dtype = getBufferDType(memref);
      if (!dtype) {
        llvm::consumeError(dtype.takeError());
        return 0;
      }
      spec.dtype = *dtype;
      for (int64_t s : memref.getShape())
        spec.shape.push_back(ShapedType::isDynamic(s) ? kDynamicSize : s);
      spec.init = Init::Randn;
      spec.text = "fuzz buffer";
    } else {
      spec.isScalar = true;
      spec.scalarText = isa<FloatType>(type) ? "0.5" : "3";
      spec.text = spec.scalarText;
    }
    specs.push_back(std::move(spec));
  }
  llvm::Expected<std::vector<BoundArg>> args =
      bindArguments(entry, specs, /*seed=*/1);
  if (!args) {
    llvm::consumeError(args.takeError());
    return 0;
  }
  std::vector<RefBuffer> buffers = makeReferenceBuffers(*args);
  ReferenceLauncher launcher(buffers);
  launcher.setWorkLimit(kWorkLimit);
  if (llvm::Error error = executeHostFunction(entry, *args, launcher))
    llvm::consumeError(std::move(error));
  return 0;
}
