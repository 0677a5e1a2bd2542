//===- GPULauncher.cpp - Running launches on the GPU ----------------------===//

#include "ism/Runner/GPULauncher.h"

#include "ism/Runner/Buffer.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>

using namespace mlir;
using namespace mlir::ism;
using namespace mlir::ism::runner;

llvm::Expected<const cuda::Kernel *>
GPULauncher::getKernel(llvm::StringRef name, unsigned sharedMemoryBytes) {
  auto it = kernels.find(name);
  if (it != kernels.end() && it->second.sharedMemoryBytes == sharedMemoryBytes)
    return &it->second;
  llvm::Expected<cuda::Kernel> kernel =
      context.getKernel(name, sharedMemoryBytes);
  if (!kernel)
    return kernel.takeError();
  kernels[name] = *kernel;
  return &kernels[name];
}

/// Appends the kernel parameters of one argument to `params`, one 8-byte
/// slot each (the driver copies each parameter's size from its slot).
static llvm::Error appendParams(Type type, const HostValue &value,
                                llvm::ArrayRef<DeviceArg> buffers,
                                std::vector<uint64_t> &params) {
  if (auto memref = dyn_cast<MemRefType>(type)) {
    if (value.kind != HostValue::Kind::Buffer)
      return llvm::createStringError("a memref argument is not a buffer");
    const DeviceArg &buffer = buffers[value.buffer];
    params.push_back(buffer.ptr); // allocated
    params.push_back(buffer.ptr); // aligned
    params.push_back(0);          // offset
    for (int64_t size : buffer.shape)
      params.push_back(static_cast<uint64_t>(size));
    int64_t stride = 1;
    std::vector<int64_t> strides(buffer.shape.size());
    for (int d = static_cast<int>(buffer.shape.size()) - 1; d >= 0; --d) {
      strides[d] = stride;
      stride *= buffer.shape[d];
    }
    for (int64_t s : strides)
      params.push_back(static_cast<uint64_t>(s));
    return llvm::Error::success();
  }
  uint64_t slot = 0;
  if (type.isIntOrIndex()) {
    // Little-endian: the low bytes of the slot hold the N-bit integer.
    slot = static_cast<uint64_t>(value.intValue);
  } else if (std::optional<DType> dtype = getDType(type)) {
    HostBuffer scalar(*dtype, {});
    scalar.set(0, value.floatValue);
    std::memcpy(&slot, scalar.bytes.data(), scalar.bytes.size());
  } else {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << type;
    return llvm::createStringError("kernel parameters of type " + text +
                                   " are not supported");
  }
  params.push_back(slot);
  return llvm::Error::success();
}

llvm::Error GPULauncher::run(const cuda::Kernel &kernel, const unsigned grid[3],
                             const unsigned block[3],
                             llvm::ArrayRef<Type> types,
                             llvm::ArrayRef<HostValue> args) {
  std::vector<uint64_t> slots;
  for (auto [type, value] : llvm::zip(types, args))
    if (llvm::Error error = appendParams(type, value, buffers, slots))
      return error;
  std::vector<void *> params;
  for (uint64_t &slot : slots)
    params.push_back(&slot);
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0)
    return llvm::Error::success(); // an empty grid runs nothing
  ++numLaunches;
  return context.launch(kernel, grid, block, stream, params);
}

llvm::Error GPULauncher::launch(LaunchOp op, const unsigned grid[3],
                                llvm::ArrayRef<HostValue> args) {
  llvm::StringRef name = op.getKernel();
  auto info = compiled.kernels.find(name);
  if (info == compiled.kernels.end())
    return llvm::createStringError("kernel '" + name.str() +
                                   "' is not in the compiled module");
  if (info->second.numThreads == 0)
    return llvm::createStringError("kernel '" + name.str() +
                                   "' has no block size");
  llvm::Expected<const cuda::Kernel *> kernel =
      getKernel(name, info->second.sharedMemoryBytes);
  if (!kernel)
    return kernel.takeError();
  unsigned block[3] = {info->second.numThreads, 1, 1};
  llvm::SmallVector<Type> types(op.getArgs().getTypes());
  return run(**kernel, grid, block, types, args);
}

llvm::Error GPULauncher::launchGPUFunc(gpu::LaunchFuncOp op,
                                       const unsigned grid[3],
                                       const unsigned block[3],
                                       unsigned dynamicSharedMemoryBytes,
                                       llvm::ArrayRef<HostValue> args) {
  llvm::Expected<const cuda::Kernel *> kernel =
      getKernel(op.getKernelName().getValue(), dynamicSharedMemoryBytes);
  if (!kernel)
    return kernel.takeError();
  llvm::SmallVector<Type> types(op.getKernelOperands().getTypes());
  return run(**kernel, grid, block, types, args);
}
