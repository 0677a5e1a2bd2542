//===- IsmToGPU.cpp - convert-ism-to-gpu ----------------------------------===//

#include "ism/Conversion/IsmToGPU/IsmToGPU.h"
#include "ism/Conversion/Passes.h"

#include "AxisInfo.h"
#include "Distribution.h"
#include "Patterns.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"
#include "ism/Dialect/Ism/Transforms/DotLoop.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::ism {
#define GEN_PASS_DEF_CONVERTISMTOGPU
#include "ism/Conversion/Passes.h.inc"
} // namespace mlir::ism

using namespace mlir;
using namespace mlir::ism;

void mlir::ism::populateIsmToGPUConversionPatterns(
    TileTypeConverter &typeConverter, LoweringContext &context,
    RewritePatternSet &patterns) {
  populateMemoryOpPatterns(typeConverter, context, patterns);
  populateElementwisePatterns(typeConverter, context, patterns);
  populateShapeOpPatterns(typeConverter, context, patterns);
  populateReduceScanPatterns(typeConverter, context, patterns);
  populateDotPatterns(typeConverter, context, patterns);
  populateWgmmaPatterns(typeConverter, context, patterns);
  populateWgmmaProductPatterns(typeConverter, context, patterns);
  populateMmaSyncPatterns(typeConverter, context, patterns);
}

LogicalResult mlir::ism::checkWgmmaProductOp(DotOp dot, unsigned numWarps,
                                             unsigned warpBase) {
  auto mma = dyn_cast_or_null<MmaEncodingAttr>(dot.getType().getEncoding());
  if (!mma || mma.getVersion() != 3)
    return success();
  ArrayRef<unsigned> warps = mma.getWarpsPerCTA();
  if (std::string why = checkWgmmaProduct(dot, numWarps); !why.empty())
    return dot.emitOpError("cannot run on wgmma: ") << why;
  if (warps.size() != 2 || warps[0] != numWarps || warps[1] != 1)
    return dot.emitOpError("a wgmma product outside a K loop needs the "
                           "layout #ism.mma<3, [num_warps, 1]> (")
           << numWarps << " warps), got " << mma;
  // A warpgroup is four consecutive warps of the CTA from warp 0.
  if (warpBase % 4 != 0)
    return dot.emitOpError("a wgmma product runs on whole warpgroups, but "
                           "its partition starts at warp ")
           << warpBase << "; start it on a multiple of 4";
  return success();
}

namespace {

/// Reports the first tile of `kernel` that cannot be distributed over
/// threads, and the first constant or memory access the lowering cannot
/// handle, naming the op.
LogicalResult checkTiles(KernelOp kernel) {
  // The ops of one gather ring agree on its tile and slots (they share its
  // shared memory and each thread's place in it).
  llvm::DenseMap<uint32_t, std::pair<Type, uint32_t>> rings;
  auto checkRing = [&](Operation *op, uint32_t ring, Type tile,
                       uint32_t slots) {
    auto [it, fresh] = rings.try_emplace(ring, tile, slots);
    if (fresh || (it->second.first == tile && it->second.second == slots))
      return success();
    return LogicalResult(op->emitOpError("ring ")
                         << ring << " holds " << slots << " slots of " << tile
                         << " here but " << it->second.second << " slots of "
                         << it->second.first << " elsewhere");
  };
  WalkResult ringsChecked = kernel.walk([&](Operation *op) {
    LogicalResult ok = success();
    if (auto issue = dyn_cast<AsyncGatherOp>(op))
      ok =
          checkRing(op, issue.getRing(), issue.getTileType(), issue.getSlots());
    else if (auto wait = dyn_cast<AsyncGatherWaitOp>(op))
      ok = checkRing(op, wait.getRing(), wait.getType(), wait.getSlots());
    return failed(ok) ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (ringsChecked.wasInterrupted())
    return failure();
  WalkResult result = kernel.walk<WalkOrder::PreOrder>([&](Operation *op) {
    // A pipelined K loop's tiles live in shared memory and registers the
    // wgmma and mma.sync lowerings lay out themselves.
    if (op->hasAttr(kPipelineAttrName))
      return WalkResult::skip();
    auto check = [&](Type type) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor)
        return success();
      std::string reason;
      if (!Distribution::isSupported(tensor, reason))
        return LogicalResult(op->emitOpError("tile ")
                             << tensor << " " << reason);
      int64_t regs = Distribution(tensor).getNumRegs();
      // 255 registers a thread; a tile this large cannot live in them.
      if (regs * std::max(1u, tensor.getElementTypeBitWidth() / 32) > 255)
        return LogicalResult(
            op->emitOpError("tile ")
            << tensor << " needs " << regs
            << " elements per thread, more than the 255 registers a thread "
               "has; use smaller tiles or more warps");
      return success();
    };
    for (Type type : op->getResultTypes())
      if (failed(check(type)))
        return WalkResult::interrupt();
    // 8-bit floats are held as their bits (getStorageType): they move and
    // convert (Float8ConversionLowering), nothing else.
    auto isF8Tile = [](Type t) {
      return isa<RankedTensorType>(t) && isFloat8(getElementTypeOrSelf(t));
    };
    if (isa_and_nonnull<arith::ArithDialect, math::MathDialect>(
            op->getDialect()) &&
        !isa<arith::ExtFOp, arith::TruncFOp, arith::SelectOp,
             arith::ConstantOp>(op) &&
        (llvm::any_of(op->getOperandTypes(), isF8Tile) ||
         llvm::any_of(op->getResultTypes(), isF8Tile))) {
      op->emitOpError("on 8-bit floats: the GPU lowering converts 8-bit "
                      "float tiles (arith.extf to f16, bf16 or f32; "
                      "arith.truncf from them) and moves them, but does no "
                      "other arithmetic on them");
      return WalkResult::interrupt();
    }
    // A wgmma product outside a K loop (HopperDot.cpp) must fit the
    // instruction; otherwise no pattern but the SIMT dot would take it.
    // (Partitions are checked with their own warps in lowerPartitions.)
    if (auto dot = dyn_cast<DotOp>(op);
        dot && !dot->getParentOfType<WarpSpecializeOp>() &&
        failed(checkWgmmaProductOp(dot, kernel.getNumWarps(), 0)))
      return WalkResult::interrupt();
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (isa<RankedTensorType>(constant.getType()) &&
          (!dense || !dense.isSplat())) {
        op->emitOpError("only splat tile constants can be lowered; build "
                        "other constant tiles with ism.range and arithmetic");
        return WalkResult::interrupt();
      }
    }
    for (Value operand : op->getOperands()) {
      auto memref = dyn_cast<MemRefType>(operand.getType());
      if (!memref || !isa<LoadOp, StoreOp, GatherOp, AsyncGatherOp, ScatterOp,
                          AtomicRMWOp>(op))
        continue;
      unsigned bits = memref.getElementTypeBitWidth();
      if (!memref.getElementType().isIntOrFloat() || bits % 8 != 0) {
        op->emitOpError("cannot access memory of element type ")
            << memref.getElementType()
            << " on the GPU; use 8-, 16-, 32- or 64-bit integer or float "
               "elements";
        return WalkResult::interrupt();
      }
    }
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (failed(check(arg.getType())))
            return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

struct ConvertIsmToGPUPass
    : mlir::ism::impl::ConvertIsmToGPUBase<ConvertIsmToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (barrierId > 15) {
      module.emitError("barrier-id must be from 0 to 15, got ") << barrierId;
      return signalPassFailure();
    }
    WalkResult coschedule = module.walk([&](CoscheduleOp op) {
      op.emitOpError("must be fused into one kernel before the lowering: "
                     "run ism-coschedule first (the ism-to-gpu pipeline "
                     "does)");
      return WalkResult::interrupt();
    });
    if (coschedule.wasInterrupted())
      return signalPassFailure();

    SmallVector<KernelOp> kernels(module.getOps<KernelOp>());
    if (kernels.empty())
      return;
    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());
    b.setInsertionPointToEnd(module.getBody());
    auto gpuModule =
        gpu::GPUModuleOp::create(b, module.getLoc(), kKernelModuleName);

    PartitionInfo partition{warpBase, barrierId, sharedMemoryBase};
    llvm::StringMap<gpu::GPUFuncOp> lowered;
    for (KernelOp kernel : kernels) {
      if (failed(checkTiles(kernel)))
        return signalPassFailure();
      FailureOr<gpu::GPUFuncOp> func =
          lowerKernel(kernel, gpuModule, partition);
      if (failed(func))
        return signalPassFailure();
      lowered[func->getName()] = *func;
      kernel.erase();
    }

    WalkResult launches = module.walk([&](LaunchOp launch) {
      auto it = lowered.find(launch.getKernel());
      if (it == lowered.end()) {
        launch.emitOpError("launches @")
            << launch.getKernel() << ", which is not an ism.kernel here";
        return WalkResult::interrupt();
      }
      lowerLaunch(launch, it->second);
      return WalkResult::advance();
    });
    if (launches.wasInterrupted())
      signalPassFailure();
  }

  /// Moves `kernel`'s body into a gpu.func and lowers its tiles.
  FailureOr<gpu::GPUFuncOp> lowerKernel(KernelOp kernel,
                                        gpu::GPUModuleOp gpuModule,
                                        PartitionInfo partition) {
    OpBuilder b(gpuModule.getBodyRegion());
    b.setInsertionPointToEnd(gpuModule.getBody());
    auto persistent =
        kernel->getAttrOfType<DictionaryAttr>(kPersistentAttrName);
    auto func = gpu::GPUFuncOp::create(b, kernel.getLoc(), kernel.getName(),
                                       kernel.getFunctionType());
    unsigned numWarps = kernel.getNumWarps();
    unsigned numThreads = 32 * numWarps;
    func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
    func->setAttr(kNumThreadsAttrName, b.getI32IntegerAttr(numThreads));
    if (partition.warpBase == 0)
      func.setKnownBlockSizeAttr(
          b.getDenseI32ArrayAttr({int32_t(numThreads), 1, 1}));
    // Occupancy request: PTX .minnctapersm (ptxas caps the registers).
    if (std::optional<int32_t> minCtas = kernel.getMinCtasPerSm())
      func->setAttr("nvvm.minctasm", b.getI32IntegerAttr(*minCtas));
    func.getBody().getBlocks().clear();
    func.getBody().takeBody(kernel.getBody());
    for (Block &block : func.getBody()) {
      if (auto ret = dyn_cast<ReturnOp>(block.getTerminator())) {
        OpBuilder rb(ret);
        gpu::ReturnOp::create(rb, ret.getLoc());
        ret.erase();
      }
    }

    if (auto fused = kernel->getAttrOfType<DictionaryAttr>("ism.coschedule"))
      func->setAttr("ism.coschedule", fused);
    auto convert = [&](Operation *root, LoweringContext &context) {
      return convertTiles(root, context);
    };
    if (func.getBody().hasOneBlock()) {
      auto partitions = func.getBody().front().getOps<WarpSpecializeOp>();
      if (!partitions.empty()) {
        if (partition.warpBase != 0 || partition.barrierId != 0 ||
            partition.sharedMemoryBase != 0)
          return func.emitOpError("a kernel of partitions owns its CTA; "
                                  "lower it without warp-base, barrier-id "
                                  "or shared-memory-base");
        if (failed(lowerPartitions(func, *partitions.begin(), trace, convert)))
          return failure();
        return func;
      }
    }

    LoweringContext context(partition, numWarps);
    if (auto stages = kernel->getAttrOfType<IntegerAttr>("num_stages")) {
      if (stages.getInt() < 1)
        return kernel.emitOpError("num_stages = ")
               << stages.getInt() << ": must be at least 1 (1 loads the "
               << "products' operands in their loop, more copies them ahead)";
      context.ringStages = stages.getInt();
    }
    if (auto producer = kernel->getAttrOfType<BoolAttr>("ring_producer"))
      context.ringProducer = producer.getValue();
    if (auto turns = kernel->getAttrOfType<BoolAttr>("ping_pong"))
      context.pingPong = turns.getValue();
    if (auto grid = kernel->getAttrOfType<BoolAttr>("persistent"))
      context.persistentGrid = grid.getValue();
    if (failed(prepareWarpSpecializedKernel(func, persistent, context)))
      return failure();
    int64_t ringEnd = 0;
    if (context.pipeline) {
      ringEnd = context.pipeline->ringEnd();
      numThreads = 32 * (numWarps * context.getPartition().groups +
                         context.producerWarps);
      func->setAttr(kNumThreadsAttrName, b.getI32IntegerAttr(numThreads));
      func.setKnownBlockSizeAttr(
          b.getDenseI32ArrayAttr({int32_t(numThreads), 1, 1}));
    }
    if (failed(convertTiles(func, context)))
      return failure();
    func->setAttr(kSharedMemoryAttrName,
                  b.getI32IntegerAttr(std::max<int64_t>(
                      context.getSharedMemoryBytes(), ringEnd)));
    return func;
  }

  /// Lowers the tiles of `root` (a kernel, or one partition of it) with
  /// `context`, and places its shared-memory scratch.
  LogicalResult convertTiles(Operation *root, LoweringContext &context) {
    TileTypeConverter converter;
    RewritePatternSet patterns(&getContext());
    populateIsmToGPUConversionPatterns(converter, context, patterns);
    ConversionTarget target(getContext());
    target.addIllegalDialect<IsmDialect>();
    target.addLegalDialect<gpu::GPUDialect, LLVM::LLVMDialect,
                           memref::MemRefDialect, NVVM::NVVMDialect,
                           vector::VectorDialect, cf::ControlFlowDialect,
                           index::IndexDialect, ub::UBDialect>();
    auto typesLegal = [&](Operation *op) { return converter.isLegal(op); };
    target.addDynamicallyLegalDialect<arith::ArithDialect, math::MathDialect>(
        typesLegal);
    target.addDynamicallyLegalOp<math::ExpOp, math::Exp2Op, math::LogOp,
                                 math::Log2Op, math::RsqrtOp, math::SqrtOp,
                                 arith::DivFOp>([&](Operation *op) {
      return !getElementTypeOrSelf(op->getResult(0).getType()).isF32() &&
             converter.isLegal(op);
    });
    // These always become LLVM intrinsics (IntrinsicLowering), scalars too:
    // left to the NVVM lowering they would be libdevice calls.
    target.addIllegalOp<math::FmaOp, math::AbsFOp, math::FloorOp,
                        math::CeilOp, math::TruncOp, math::CopySignOp>();
    target.markUnknownOpDynamicallyLegal(typesLegal);
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    if (failed(prepareAsyncOperands(root, context)))
      return failure();
    AxisInfo axisInfo;
    root->walk([&](Operation *op) {
      if (isa<GatherOp, AsyncGatherOp, ScatterOp>(op)) {
        IndexedVectors v = getIndexedVectors(op, axisInfo);
        context.indexedVectors[op] = {v.width, v.aligned};
      }
      if (auto load = dyn_cast<LoadOp>(op))
        if (Value mask = load.getMask()) {
          AxisFacts facts = axisInfo.get(mask);
          if (!facts.constancy.empty())
            context.maskRuns[op] = facts.constancy.back();
        }
    });
    if (failed(applyPartialConversion(root, target, std::move(patterns))))
      return failure();
    if (failed(takeTurns(root, context)))
      return failure();
    context.finalizeScratch(root);
    return success();
  }

  /// ism.launch -> gpu.launch_func with the kernel's block size and shared
  /// memory.
  void lowerLaunch(LaunchOp launch, gpu::GPUFuncOp func) {
    OpBuilder b(launch);
    Location loc = launch.getLoc();
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    SmallVector<Value> grid(launch.getGrid());
    grid.resize(3, one);
    auto threads = func->getAttrOfType<IntegerAttr>(kNumThreadsAttrName);
    auto smem = func->getAttrOfType<IntegerAttr>(kSharedMemoryAttrName);
    Value blockX = arith::ConstantIndexOp::create(b, loc, threads.getInt());
    Value smemBytes = arith::ConstantIntOp::create(b, loc, smem.getInt(), 32);
    SmallVector<Value> args(launch.getArgs());
    // The hidden parameters. First the TMA descriptors, none here (the
    // kernel then copies those tiles itself; ism-run creates descriptors
    // when it launches): a fused kernel's, a warp-specialized GEMM's, or
    // those of rings a producer warpgroup fills. (A persistent kernel
    // always has them: both lowerings that make one describe its operands
    // for TMA.)
    auto fused = func->getAttrOfType<DictionaryAttr>("ism.coschedule");
    bool persistent = !fused && func->hasAttr("ism.persistent");
    auto tma = func->getAttrOfType<ArrayAttr>("ism.tma");
    Value none;
    if (fused || persistent || tma)
      none = arith::ConstantIntOp::create(b, loc, 0, 64);
    if (tma)
      args.append(tma.size(), none);
    if (fused) {
      // No work counters either (its partitions then stride over their
      // programs); ism-run passes them.
      if (cast<IntegerAttr>(fused.get("work_counters")).getInt() > 0)
        args.push_back(none);
      if (func->hasAttr("ism.trace"))
        args.push_back(none);
    } else if (persistent) {
      // The logical grid, run one program per CTA.
      for (Value g : grid)
        args.push_back(arith::IndexCastOp::create(b, loc, b.getI32Type(), g));
      Value total = arith::MulIOp::create(
          b, loc, arith::MulIOp::create(b, loc, grid[0], grid[1]), grid[2]);
      // A program split over a cluster's CTAs (cluster_k = 2) takes them
      // all.
      if (auto ctas = func->getAttrOfType<IntegerAttr>(kCtasPerProgramAttrName))
        total = arith::MulIOp::create(
            b, loc, total,
            arith::ConstantIndexOp::create(b, loc, ctas.getInt()));
      grid = {total, one, one};
    }
    // A cluster kernel's grid is a whole number of clusters.
    if (auto cluster = func->getAttrOfType<DenseI32ArrayAttr>(
            NVVM::NVVMDialect::getClusterDimAttrName())) {
      Value size = arith::ConstantIndexOp::create(b, loc, cluster[0]);
      grid[0] = arith::MulIOp::create(
          b, loc, arith::CeilDivUIOp::create(b, loc, grid[0], size), size);
    }
    gpu::LaunchFuncOp::create(b, loc, func, {grid[0], grid[1], grid[2]},
                              {blockX, one, one}, smemBytes, args);
    launch.erase();
  }
};

} // namespace
