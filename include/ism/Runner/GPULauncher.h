//===- GPULauncher.h - Running launches on the GPU --------------*- C++ -*-===//
//
// Launches the kernels of a host function on a GPU through the CUDA driver,
// passing arguments by the ism kernel ABI: a memref of rank r is the
// expanded descriptor (allocated pointer, aligned pointer, offset, r sizes,
// r strides), `index` is i64, iN an N-bit integer (i1 a byte), f16/bf16 2
// bytes, f32 4, f64 8. The block is (numThreads, 1, 1) and the dynamic
// shared memory is the kernel's, as compiled.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_RUNNER_GPULAUNCHER_H
#define ISM_RUNNER_GPULAUNCHER_H

#include "ism/Pipelines/Pipelines.h"
#include <map>
#include <vector>

#include "ism/Runner/HostExecutor.h"
#include "ism/Runtime/CudaDriver.h"

#include "llvm/ADT/StringMap.h"

namespace mlir::ism::runner {

/// A buffer of the host function on the device.
struct DeviceArg {
  cuda::CUdeviceptr ptr = 0;
  llvm::SmallVector<int64_t, 4> shape;
};

/// Runs launches on the GPU, on one stream, asynchronously.
class GPULauncher : public LaunchHandler {
public:
  /// `buffers` has one entry per host-function argument (unused for
  /// scalars). The compiled module must be loaded into `context`.
  GPULauncher(cuda::Context &context, const CompiledModule &compiled,
              llvm::ArrayRef<DeviceArg> buffers, cuda::CUstream stream)
      : context(context), compiled(compiled), buffers(buffers), stream(stream) {
  }

  llvm::Error launch(LaunchOp op, const unsigned grid[3],
                     llvm::ArrayRef<HostValue> args) override;
  llvm::Error launchGPUFunc(gpu::LaunchFuncOp op, const unsigned grid[3],
                            const unsigned block[3],
                            unsigned dynamicSharedMemoryBytes,
                            llvm::ArrayRef<HostValue> args) override;

  /// Kernels launched so far.
  unsigned getNumLaunches() const { return numLaunches; }

private:
  llvm::Expected<const cuda::Kernel *> getKernel(llvm::StringRef name,
                                                 unsigned sharedMemoryBytes);
  llvm::Error run(const cuda::Kernel &kernel, const unsigned grid[3],
                  const unsigned block[3], llvm::ArrayRef<Type> types,
                  llvm::ArrayRef<HostValue> args,
                  llvm::ArrayRef<uint64_t> hiddenSlots = {});
  /// The device address of a CUtensorMap for operand `operand` of a launch
  /// with `types`/`args`, or 0 when TMA cannot describe it (the kernel then
  /// copies the operand itself). Descriptors are made once per buffer.
  llvm::Expected<uint64_t>
  getTensorMap(const CompiledKernel::TmaOperand &operand,
               llvm::ArrayRef<Type> types, llvm::ArrayRef<HostValue> args);

  cuda::Context &context;
  const CompiledModule &compiled;
  llvm::ArrayRef<DeviceArg> buffers;
  cuda::CUstream stream;
  llvm::StringMap<cuda::Kernel> kernels;
  std::map<std::vector<uint64_t>, cuda::DeviceBuffer> tensorMaps;
  unsigned numLaunches = 0;
};

/// The device copies of the buffer arguments of a host function.
struct DeviceBuffers {
  /// One entry per argument (empty for scalars); owns the memory.
  std::vector<cuda::DeviceBuffer> buffers;
  /// The same buffers as GPULauncher takes them.
  std::vector<DeviceArg> args;
};

/// Allocates a device buffer for every buffer argument of `args` and copies
/// the argument's bytes into it.
llvm::Expected<DeviceBuffers> uploadArguments(cuda::Context &gpu,
                                              llvm::ArrayRef<BoundArg> args);

/// How to time a host function.
struct TimingOptions {
  unsigned warmup = 10;
  unsigned repetitions = 100;
  /// Write a buffer twice the size of the L2 cache before each run, which
  /// evicts the previous run's inputs and outputs.
  bool flushL2 = true;
};

/// Runs `entry` with `args` through `launcher` (which launches on `stream`)
/// `options.warmup + options.repetitions` times, timing each run with
/// events on `stream`; returns the times of the timed runs in milliseconds,
/// in order.
llvm::Expected<std::vector<double>>
timeHostFunction(cuda::Context &gpu, cuda::CUstream stream, func::FuncOp entry,
                 llvm::ArrayRef<BoundArg> args, LaunchHandler &launcher,
                 const TimingOptions &options);

} // namespace mlir::ism::runner

#endif // ISM_RUNNER_GPULAUNCHER_H
