//===- HostExecutor.h - Interpreter of host functions -----------*- C++ -*-===//
//
// ism-run executes the host function (`func.func @main`) itself: it
// evaluates its scalar arithmetic and memref.dim, and hands each launch
// (ism.launch, and upstream gpu.launch_func) to a LaunchHandler, which runs
// it on the GPU or in the reference interpreter.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_RUNNER_HOSTEXECUTOR_H
#define ISM_RUNNER_HOSTEXECUTOR_H

#include "ism/Runner/ArgSpec.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace mlir::ism::runner {

/// CUDA's launch limits (every GPU from compute capability 3.0 on): a grid
/// of at most 2^31 - 1 x 65535 x 65535 CTAs, a block of at most 1024 x 1024
/// x 64 threads and 1024 in all. executeHostFunction refuses launches past
/// them in every mode, so the reference interpreter runs only what the GPU
/// could.
constexpr int64_t kMaxGridX = 0x7fffffff;
constexpr int64_t kMaxGridYZ = 65535;
constexpr int64_t kMaxBlockXY = 1024;
constexpr int64_t kMaxBlockZ = 64;
constexpr int64_t kMaxBlockThreads = 1024;

/// A value of the host function: an integer (index, iN), a float, or one of
/// the entry's buffers (by argument position).
struct HostValue {
  enum class Kind { Int, Float, Buffer };
  Kind kind = Kind::Int;
  int64_t intValue = 0;
  double floatValue = 0;
  unsigned buffer = 0;

  static HostValue getInt(int64_t v) { return {Kind::Int, v, 0, 0}; }
  static HostValue getFloat(double v) { return {Kind::Float, 0, v, 0}; }
  static HostValue getBuffer(unsigned b) { return {Kind::Buffer, 0, 0, b}; }
};

/// How the launches of an `ism.coschedule` region run on the GPU
/// (`ism-run --coschedule=...`).
enum class CoscheduleMode {
  /// The compiler fuses the region into one kernel (ism-coschedule), which
  /// runs as one launch (LaunchHandler::launchFused).
  Fused,
  /// The launches run one after another (LaunchHandler::launch).
  Sequential,
  /// Each launch goes on its own stream (LaunchHandler::launchConcurrently).
  Streams,
};

/// "fused", "sequential" or "streams".
llvm::StringRef getCoscheduleModeName(CoscheduleMode mode);
/// Parses a mode name as getCoscheduleModeName writes it.
std::optional<CoscheduleMode> parseCoscheduleMode(llvm::StringRef name);

/// One launch of an `ism.coschedule` region with its operands evaluated.
struct RegionLaunch {
  LaunchOp op;
  /// Missing dimensions are 1.
  std::array<unsigned, 3> grid = {1, 1, 1};
  llvm::SmallVector<HostValue> args;
};

/// Runs the launches of a host function.
class LaunchHandler {
public:
  virtual ~LaunchHandler();
  /// Runs `op` over `grid` (missing dimensions are 1) with `args`, the
  /// values of its operands.
  virtual llvm::Error launch(LaunchOp op, const unsigned grid[3],
                             llvm::ArrayRef<HostValue> args) = 0;
  /// Runs an upstream `gpu.launch_func`.
  virtual llvm::Error launchGPUFunc(gpu::LaunchFuncOp op,
                                    const unsigned grid[3],
                                    const unsigned block[3],
                                    unsigned dynamicSharedMemoryBytes,
                                    llvm::ArrayRef<HostValue> args) = 0;
  /// Runs the launches of `op` concurrently (CoscheduleMode::Streams), all
  /// of them finished before anything the host function runs next. The
  /// default runs them one after another through launch().
  virtual llvm::Error launchConcurrently(CoscheduleOp op,
                                         llvm::ArrayRef<RegionLaunch> launches);
  /// Runs `kernel`, the kernel the compiler fused from the launches of `op`
  /// (CoscheduleMode::Fused). `grids` holds each launch's grid, in the
  /// region's order; `args` all launches' argument values, concatenated in
  /// the same order. The default is an error: only the GPU runs fused
  /// kernels.
  virtual llvm::Error launchFused(CoscheduleOp op, llvm::StringRef kernel,
                                  llvm::ArrayRef<std::array<unsigned, 3>> grids,
                                  llvm::ArrayRef<HostValue> args);
  /// Makes the host function's temporary buffer number `slot` (its
  /// `memref.alloc`s count from 0 in the order they run): `shape` elements
  /// of `dtype`, row-major, contents undefined until a kernel writes them;
  /// with `zeroed` (the alloc's `ism.zeroed` attribute) zero, for counters
  /// that the programs leave at zero: a handler that keeps the storage
  /// zeroes it when it makes or grows it, or when it last held a buffer
  /// that was not zeroed. Returns the buffer's number for
  /// HostValue::getBuffer, which must not be one of the arguments' (those
  /// are 0 .. arguments - 1). A handler may keep the storage for the next
  /// run of the function (the launches of one run are ordered, and so are
  /// consecutive runs on one stream). The default is an error.
  virtual llvm::Expected<unsigned> allocate(unsigned slot, DType dtype,
                                            llvm::ArrayRef<int64_t> shape,
                                            bool zeroed);
};

/// How executeHostFunction runs a host function.
struct HostExecutionOptions {
  /// How `ism.coschedule` regions run.
  CoscheduleMode coschedule = CoscheduleMode::Sequential;
  /// With CoscheduleMode::Fused: the fused kernel of each `ism.coschedule`
  /// of the entry's module, in walk order (CompiledModule::coschedules).
  llvm::ArrayRef<std::string> fusedKernels;
  /// With CoscheduleMode::Fused: the ism.coschedule ops (same numbering)
  /// the compiler left unfused; their launches run one after the other
  /// (CompiledModule::unfused).
  llvm::ArrayRef<unsigned> unfused;
  /// Remarks about how the function ran (how each ism.coschedule ran) are
  /// appended here when it is not null.
  std::vector<std::string> *notes = nullptr;
};

/// Executes `entry` with `args` as its arguments, passing launches to
/// `handler`. Ops other than arith on scalars, memref.dim, memref.alloc
/// (a temporary buffer from LaunchHandler::allocate: identity layout,
/// default memory space), memref.dealloc (nothing to do: the handler owns
/// the storage), memref.cast (the same buffer), ism.launch, ism.coschedule (run
/// as `options.coschedule` says), gpu.launch_func, gpu.wait and func.return are
/// an error naming the op.
llvm::Error executeHostFunction(func::FuncOp entry,
                                llvm::ArrayRef<BoundArg> args,
                                LaunchHandler &handler,
                                const HostExecutionOptions &options);

/// As above, with the launches of an ism.coschedule run one after another
/// (CoscheduleMode::Sequential).
llvm::Error executeHostFunction(func::FuncOp entry,
                                llvm::ArrayRef<BoundArg> args,
                                LaunchHandler &handler,
                                std::vector<std::string> *notes = nullptr);

/// How the kernels launched by a host function use one of its buffers.
struct BufferUse {
  bool read = false;
  bool written = false;
};

/// For each argument of `entry`, whether the kernels it launches read or
/// write it (from the memory effects of the ops in the kernels).
std::vector<BufferUse> analyzeBufferUse(func::FuncOp entry);

} // namespace mlir::ism::runner

#endif // ISM_RUNNER_HOSTEXECUTOR_H
