//===- CudaDriver.cpp - The CUDA Driver API, loaded at run time -----------===//
//
// Opens libcuda.so.1 with dlopen, resolves the entry points by their ABI
// names and wraps the calls the runner makes so that each failure names the
// call, the kernel and the driver's error text.
//
//===----------------------------------------------------------------------===//

#include "ism/Runtime/CudaDriver.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include <dlfcn.h>

using namespace mlir::ism::cuda;

/// Set once a wait timed out (Context::setTimeout).
static std::atomic<bool> anyTimedOut{false};

bool Driver::hasTimedOut() { return anyTimedOut; }

/// The kernels remembered for a timeout message.
static constexpr size_t kMaxPendingLaunches = 256;

std::string mlir::ism::cuda::formatBytes(uint64_t bytes) {
  const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = double(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  if (unit < 0)
    return llvm::formatv("{0} bytes", bytes).str();
  return llvm::formatv("{0} bytes ({1:F1} {2})", bytes, value, units[unit])
      .str();
}

std::string DeviceInfo::chip() const {
  std::string chip = "sm_" + std::to_string(ccMajor * 10 + ccMinor);
  // The architecture-specific features (wgmma, setmaxnreg, tcgen05) need
  // the "a" targets on Hopper and Blackwell.
  if (ccMajor >= 9)
    chip += "a";
  return chip;
}

/// Resolves `symbol` from `library` into `fn`; false when it is missing.
template <typename Fn>
static bool resolve(void *library, const char *symbol, Fn &fn) {
  fn = reinterpret_cast<Fn>(dlsym(library, symbol));
  return fn != nullptr;
}

std::string Driver::load(Driver &driver) {
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    return std::string("no CUDA driver found (libcuda.so.1): ") +
           (why ? why : "dlopen failed");
  }

  struct Entry {
    const char *symbol;
    bool ok;
  };
  std::vector<Entry> entries = {
      {"cuInit", resolve(library, "cuInit", driver.cuInit)},
      {"cuDriverGetVersion",
       resolve(library, "cuDriverGetVersion", driver.cuDriverGetVersion)},
      {"cuGetErrorString",
       resolve(library, "cuGetErrorString", driver.cuGetErrorString)},
      {"cuGetErrorName",
       resolve(library, "cuGetErrorName", driver.cuGetErrorName)},
      {"cuDeviceGetCount",
       resolve(library, "cuDeviceGetCount", driver.cuDeviceGetCount)},
      {"cuDeviceGet", resolve(library, "cuDeviceGet", driver.cuDeviceGet)},
      {"cuDeviceGetName",
       resolve(library, "cuDeviceGetName", driver.cuDeviceGetName)},
      {"cuDeviceGetAttribute",
       resolve(library, "cuDeviceGetAttribute", driver.cuDeviceGetAttribute)},
      {"cuDeviceTotalMem_v2",
       resolve(library, "cuDeviceTotalMem_v2", driver.cuDeviceTotalMem)},
      {"cuDevicePrimaryCtxRetain", resolve(library, "cuDevicePrimaryCtxRetain",
                                           driver.cuDevicePrimaryCtxRetain)},
      {"cuDevicePrimaryCtxRelease_v2",
       resolve(library, "cuDevicePrimaryCtxRelease_v2",
               driver.cuDevicePrimaryCtxRelease)},
      {"cuCtxSetCurrent",
       resolve(library, "cuCtxSetCurrent", driver.cuCtxSetCurrent)},
      {"cuCtxSynchronize",
       resolve(library, "cuCtxSynchronize", driver.cuCtxSynchronize)},
      {"cuModuleLoadDataEx",
       resolve(library, "cuModuleLoadDataEx", driver.cuModuleLoadDataEx)},
      {"cuModuleUnload",
       resolve(library, "cuModuleUnload", driver.cuModuleUnload)},
      {"cuModuleGetFunction",
       resolve(library, "cuModuleGetFunction", driver.cuModuleGetFunction)},
      {"cuFuncSetAttribute",
       resolve(library, "cuFuncSetAttribute", driver.cuFuncSetAttribute)},
      {"cuFuncGetAttribute",
       resolve(library, "cuFuncGetAttribute", driver.cuFuncGetAttribute)},
      {"cuLaunchKernel",
       resolve(library, "cuLaunchKernel", driver.cuLaunchKernel)},
      {"cuMemAlloc_v2", resolve(library, "cuMemAlloc_v2", driver.cuMemAlloc)},
      {"cuMemFree_v2", resolve(library, "cuMemFree_v2", driver.cuMemFree)},
      {"cuMemcpyHtoD_v2",
       resolve(library, "cuMemcpyHtoD_v2", driver.cuMemcpyHtoD)},
      {"cuMemcpyHtoDAsync_v2",
       resolve(library, "cuMemcpyHtoDAsync_v2", driver.cuMemcpyHtoDAsync)},
      {"cuMemcpyDtoH_v2",
       resolve(library, "cuMemcpyDtoH_v2", driver.cuMemcpyDtoH)},
      {"cuMemsetD8_v2", resolve(library, "cuMemsetD8_v2", driver.cuMemsetD8)},
      {"cuMemsetD8Async",
       resolve(library, "cuMemsetD8Async", driver.cuMemsetD8Async)},
      {"cuMemsetD32Async",
       resolve(library, "cuMemsetD32Async", driver.cuMemsetD32Async)},
      {"cuStreamCreate",
       resolve(library, "cuStreamCreate", driver.cuStreamCreate)},
      {"cuStreamDestroy_v2",
       resolve(library, "cuStreamDestroy_v2", driver.cuStreamDestroy)},
      {"cuStreamSynchronize",
       resolve(library, "cuStreamSynchronize", driver.cuStreamSynchronize)},
      {"cuStreamQuery",
       resolve(library, "cuStreamQuery", driver.cuStreamQuery)},
      {"cuStreamWaitEvent",
       resolve(library, "cuStreamWaitEvent", driver.cuStreamWaitEvent)},
      {"cuEventCreate",
       resolve(library, "cuEventCreate", driver.cuEventCreate)},
      {"cuEventDestroy_v2",
       resolve(library, "cuEventDestroy_v2", driver.cuEventDestroy)},
      {"cuEventRecord",
       resolve(library, "cuEventRecord", driver.cuEventRecord)},
      {"cuEventSynchronize",
       resolve(library, "cuEventSynchronize", driver.cuEventSynchronize)},
      {"cuEventQuery", resolve(library, "cuEventQuery", driver.cuEventQuery)},
      {"cuMemGetInfo_v2",
       resolve(library, "cuMemGetInfo_v2", driver.cuMemGetInfo)},
      {"cuEventElapsedTime",
       resolve(library, "cuEventElapsedTime", driver.cuEventElapsedTime)},
  };
  for (const Entry &entry : entries)
    if (!entry.ok)
      return std::string("the CUDA driver (libcuda.so.1) lacks ") +
             entry.symbol + "; the driver is too old";

  resolve(library, "cuTensorMapEncodeTiled", driver.cuTensorMapEncodeTiled);
  resolve(library, "cuTensorMapEncodeIm2col", driver.cuTensorMapEncodeIm2col);
  resolve(library, "cuOccupancyMaxActiveClusters",
          driver.cuOccupancyMaxActiveClusters);
  resolve(library, "cuLaunchKernelEx", driver.cuLaunchKernelEx);
  resolve(library, "cuStreamBeginCapture_v2", driver.cuStreamBeginCapture);
  resolve(library, "cuStreamEndCapture", driver.cuStreamEndCapture);
  resolve(library, "cuGraphInstantiateWithFlags",
          driver.cuGraphInstantiateWithFlags);
  resolve(library, "cuGraphLaunch", driver.cuGraphLaunch);
  resolve(library, "cuGraphExecDestroy", driver.cuGraphExecDestroy);
  resolve(library, "cuGraphDestroy", driver.cuGraphDestroy);

  CUresult result = driver.cuInit(0);
  if (result == kCudaErrorNoDevice)
    return "no CUDA GPU found (cuInit: no CUDA-capable device is detected)";
  if (llvm::Error error = driver.check(result, "cuInit"))
    return llvm::toString(std::move(error));
  if (llvm::Error error =
          driver.check(driver.cuDriverGetVersion(&driver.driverVersion),
                       "cuDriverGetVersion"))
    return llvm::toString(std::move(error));
  return "";
}

llvm::Expected<Driver &> Driver::get() {
  // Loaded once, by the first caller; C++ makes concurrent first calls (the
  // autotuner compiles on several threads) wait for that one to finish.
  static Driver driver;
  static const std::string failure = load(driver);
  if (!failure.empty())
    return llvm::createStringError(failure);
  return driver;
}

llvm::Error Driver::check(CUresult result, llvm::StringRef call,
                          llvm::StringRef kernel) const {
  if (result == kCudaSuccess)
    return llvm::Error::success();
  const char *name = nullptr;
  const char *text = nullptr;
  if (cuGetErrorName)
    cuGetErrorName(result, &name);
  if (cuGetErrorString)
    cuGetErrorString(result, &text);
  std::string message = call.str();
  if (!kernel.empty())
    message += " (kernel '" + kernel.str() + "')";
  message += llvm::formatv(" failed: {0} ({1}): {2}", name ? name : "?", result,
                           text ? text : "unknown error")
                 .str();
  return llvm::createStringError(message);
}

llvm::Expected<int> Driver::getDeviceCount() {
  int count = 0;
  if (llvm::Error error = check(cuDeviceGetCount(&count), "cuDeviceGetCount"))
    return std::move(error);
  return count;
}

llvm::Expected<DeviceInfo> Driver::getDeviceInfo(int ordinal) {
  DeviceInfo info;
  info.ordinal = ordinal;
  CUdevice device;
  if (llvm::Error error = check(cuDeviceGet(&device, ordinal), "cuDeviceGet"))
    return std::move(error);
  char name[256] = {0};
  if (llvm::Error error = check(cuDeviceGetName(name, sizeof(name) - 1, device),
                                "cuDeviceGetName"))
    return std::move(error);
  info.name = name;
  size_t memory = 0;
  if (llvm::Error error =
          check(cuDeviceTotalMem(&memory, device), "cuDeviceTotalMem_v2"))
    return std::move(error);
  info.totalMemoryBytes = memory;
  struct {
    int *field;
    int attribute;
  } attributes[] = {
      {&info.smCount, kAttrMultiprocessorCount},
      {&info.ccMajor, kAttrComputeCapabilityMajor},
      {&info.ccMinor, kAttrComputeCapabilityMinor},
      {&info.l2CacheBytes, kAttrL2CacheSize},
      {&info.sharedMemoryPerBlock, kAttrMaxSharedMemoryPerBlock},
      {&info.sharedMemoryPerBlockOptin, kAttrMaxSharedMemoryPerBlockOptin},
      {&info.maxThreadsPerBlock, kAttrMaxThreadsPerBlock},
      {&info.maxBlockDim[0], kAttrMaxBlockDimX},
      {&info.maxBlockDim[1], kAttrMaxBlockDimX + 1},
      {&info.maxBlockDim[2], kAttrMaxBlockDimX + 2},
      {&info.maxGridDim[0], kAttrMaxGridDimX},
      {&info.maxGridDim[1], kAttrMaxGridDimX + 1},
      {&info.maxGridDim[2], kAttrMaxGridDimX + 2},
      {&info.pciBus, kAttrPciBusId},
      {&info.pciDevice, kAttrPciDeviceId},
      {&info.pciDomain, kAttrPciDomainId},
  };
  for (auto &attribute : attributes)
    if (llvm::Error error = check(
            cuDeviceGetAttribute(attribute.field, attribute.attribute, device),
            "cuDeviceGetAttribute"))
      return std::move(error);
  return info;
}

//===----------------------------------------------------------------------===//
// DeviceBuffer
//===----------------------------------------------------------------------===//

DeviceBuffer::DeviceBuffer(DeviceBuffer &&other) noexcept
    : driver(other.driver), ptr(other.ptr), bytes(other.bytes) {
  other.ptr = 0;
  other.bytes = 0;
}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this != &other) {
    if (ptr && !anyTimedOut)
      driver->cuMemFree(ptr);
    driver = other.driver;
    ptr = other.ptr;
    bytes = other.bytes;
    other.ptr = 0;
    other.bytes = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  // A failure to free is not actionable at this point; the context's
  // release reclaims the memory anyway. After a timeout the kernel may still
  // use it (and cuMemFree would wait for it).
  if (ptr && !anyTimedOut)
    driver->cuMemFree(ptr);
}

//===----------------------------------------------------------------------===//
// Context
//===----------------------------------------------------------------------===//

llvm::Expected<std::unique_ptr<Context>> Context::create(int ordinal) {
  llvm::Expected<Driver &> driver = Driver::get();
  if (!driver)
    return driver.takeError();
  llvm::Expected<int> count = driver->getDeviceCount();
  if (!count)
    return count.takeError();
  if (*count == 0)
    return llvm::createStringError("no CUDA GPU found");
  if (ordinal < 0 || ordinal >= *count)
    return llvm::createStringError(
        llvm::formatv("device {0} does not exist; this machine has {1} CUDA "
                      "GPU(s)",
                      ordinal, *count)
            .str());

  std::unique_ptr<Context> context(new Context(*driver));
  llvm::Expected<DeviceInfo> info = driver->getDeviceInfo(ordinal);
  if (!info)
    return info.takeError();
  context->info = *info;
  if (llvm::Error error = driver->check(
          driver->cuDeviceGet(&context->device, ordinal), "cuDeviceGet"))
    return std::move(error);
  if (llvm::Error error = driver->check(
          driver->cuDevicePrimaryCtxRetain(&context->context, context->device),
          "cuDevicePrimaryCtxRetain"))
    return std::move(error);
  if (llvm::Error error = driver->check(
          driver->cuCtxSetCurrent(context->context), "cuCtxSetCurrent"))
    return std::move(error);
  return context;
}

Context::~Context() {
  // After a timeout a kernel may still run: unloading its module or
  // releasing the context could wait for it for ever.
  if (anyTimedOut)
    return;
  // Streams the caller did not destroy (an early error return) go with the
  // context.
  for (CUstream stream : streams)
    driver.cuStreamDestroy(stream);
  for (CUmodule module : modules)
    driver.cuModuleUnload(module);
  if (context)
    driver.cuDevicePrimaryCtxRelease(device);
}

llvm::Error Context::loadPTX(llvm::StringRef ptx) {
  llvm::Expected<CUmodule> module = loadModule(ptx);
  if (!module)
    return module.takeError();
  return llvm::Error::success();
}

/// The entry points of `ptx` whose body waits for the grids before it
/// (griddepcontrol.wait).
static std::vector<std::string> getWaitingKernels(llvm::StringRef ptx) {
  std::vector<std::string> names;
  llvm::StringRef rest = ptx;
  size_t at = rest.find(".entry ");
  while (at != llvm::StringRef::npos) {
    rest = rest.drop_front(at + strlen(".entry "));
    llvm::StringRef name =
        rest.take_while([](char c) { return c != '(' && !isspace(c); });
    size_t next = rest.find(".entry ");
    if (rest.take_front(next).contains("griddepcontrol.wait"))
      names.push_back(name.str());
    at = next;
  }
  return names;
}

/// Assembles `ptx` with the ptxas at `ptxas` (for the `.target` the PTX
/// names) and returns the cubin.
static llvm::Expected<std::string> assemble(llvm::StringRef ptxas,
                                            llvm::StringRef ptx) {
  llvm::StringRef arch;
  for (llvm::StringRef line : llvm::split(ptx, '\n')) {
    line = line.trim();
    if (line.consume_front(".target ")) {
      arch = line.split(',').first.trim();
      break;
    }
  }
  if (arch.empty())
    return llvm::createStringError("ISM_PTXAS: the PTX names no .target");
  llvm::SmallString<128> in, out, err;
  for (auto [path, suffix] : {std::pair(&in, "ptx"), std::pair(&out, "cubin"),
                              std::pair(&err, "log")})
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("ism-ptxas", suffix, *path))
      return llvm::createStringError("ISM_PTXAS: cannot create a temporary "
                                     "file: " +
                                     ec.message());
  auto cleanup = llvm::make_scope_exit([&] {
    for (const auto &path : {in, out, err})
      llvm::sys::fs::remove(path);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(in, ec);
    if (ec)
      return llvm::createStringError("ISM_PTXAS: " + ec.message());
    os << ptx;
  }
  std::string archFlag = ("-arch=" + arch).str();
  llvm::SmallVector<llvm::StringRef> args = {ptxas, archFlag, "-o", out, in};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, err, err};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                     /*SecondsToWait=*/0, /*MemoryLimit=*/0,
                                     &message);
  if (rc != 0) {
    std::string log;
    if (auto buffer = llvm::MemoryBuffer::getFile(err))
      log = (*buffer)->getBuffer().trim().str();
    return llvm::createStringError(
        llvm::formatv("ISM_PTXAS: '{0}' failed ({1}){2}", ptxas,
                      message.empty() ? llvm::formatv("exit {0}", rc).str()
                                      : message,
                      log.empty() ? "" : ": " + log)
            .str());
  }
  auto cubin = llvm::MemoryBuffer::getFile(out, /*IsText=*/false);
  if (!cubin)
    return llvm::createStringError("ISM_PTXAS: no cubin from '" + ptxas +
                                   "': " + cubin.getError().message());
  return (*cubin)->getBuffer().str();
}

llvm::Expected<CUmodule> Context::loadModule(llvm::StringRef ptx) {
  std::string image = ptx.str(); // the driver wants a NUL-terminated image
  // ISM_PTXAS names an offline ptxas to assemble with instead of the
  // driver's JIT (a newer or older compiler than the driver's).
  if (const char *ptxas = std::getenv("ISM_PTXAS"); ptxas && *ptxas) {
    llvm::Expected<std::string> cubin = assemble(ptxas, ptx);
    if (!cubin)
      return cubin.takeError();
    image = std::move(*cubin);
  }
  std::vector<char> errorLog(1 << 16, 0);
  std::vector<char> infoLog(1 << 16, 0);
  int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSizeBytes,
                   kJitInfoLogBuffer, kJitInfoLogBufferSizeBytes};
  void *values[] = {
      errorLog.data(), reinterpret_cast<void *>(errorLog.size() - 1),
      infoLog.data(), reinterpret_cast<void *>(infoLog.size() - 1)};
  CUmodule module = nullptr;
  CUresult result =
      driver.cuModuleLoadDataEx(&module, image.c_str(), 4, options, values);
  if (llvm::Error error = driver.check(result, "cuModuleLoadDataEx")) {
    std::string log(errorLog.data());
    if (log.empty())
      return std::move(error);
    return llvm::createStringError(llvm::toString(std::move(error)) +
                                   "; JIT log: " + log);
  }
  modules.push_back(module);
  waitingKernels[module] = getWaitingKernels(ptx);
  return module;
}

llvm::Error Context::unloadModule(CUmodule module) {
  auto it = llvm::find(modules, module);
  if (it == modules.end())
    return llvm::createStringError("unloadModule: the module was not loaded "
                                   "by this context");
  modules.erase(it);
  waitingKernels.erase(module);
  return driver.check(driver.cuModuleUnload(module), "cuModuleUnload");
}

llvm::Expected<unsigned> Context::getMaxActiveClusters(const Kernel &kernel,
                                                       unsigned threads,
                                                       unsigned clusterSize) {
  clusterSize = std::max(1u, clusterSize);
  int clusters = std::max(1, info.smCount) / int(clusterSize);
  if (driver.cuOccupancyMaxActiveClusters) {
    CUlaunchConfig config = {};
    config.gridDimX = clusterSize;
    config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = threads;
    config.blockDimY = config.blockDimZ = 1;
    config.sharedMemBytes = kernel.sharedMemoryBytes;
    if (llvm::Error error =
            driver.check(driver.cuOccupancyMaxActiveClusters(
                             &clusters, kernel.function, &config),
                         "cuOccupancyMaxActiveClusters", kernel.name))
      return std::move(error);
  }
  if (clusters < 1)
    return llvm::createStringError(
        llvm::formatv(
            "kernel '{0}': no cluster of {1} CTAs ({2} threads, {3} bytes of "
            "shared memory each) fits on {4}",
            kernel.name, clusterSize, threads, kernel.sharedMemoryBytes,
            info.name)
            .str());
  return unsigned(clusters);
}

llvm::Expected<Kernel> Context::getKernel(llvm::StringRef name,
                                          unsigned sharedMemoryBytes,
                                          CUmodule only) {
  Kernel kernel;
  kernel.name = name.str();
  kernel.sharedMemoryBytes = sharedMemoryBytes;
  CUresult last = kCudaSuccess;
  for (CUmodule module : modules) {
    if (only && module != only)
      continue;
    last = driver.cuModuleGetFunction(&kernel.function, module,
                                      kernel.name.c_str());
    if (last == kCudaSuccess) {
      kernel.dependentLaunch =
          llvm::is_contained(waitingKernels[module], kernel.name);
      break;
    }
    kernel.function = nullptr;
  }
  if (!kernel.function) {
    if (modules.empty())
      return llvm::createStringError("kernel '" + kernel.name +
                                     "': no module is loaded");
    if (llvm::Error error = driver.check(last, "cuModuleGetFunction", name))
      return std::move(error);
    return llvm::createStringError("kernel '" + kernel.name +
                                   "': the module asked for is not loaded");
  }

  int staticShared = 0;
  if (llvm::Error error = driver.check(
          driver.cuFuncGetAttribute(&staticShared, kFuncAttrSharedSizeBytes,
                                    kernel.function),
          "cuFuncGetAttribute", name))
    return std::move(error);
  uint64_t total = uint64_t(sharedMemoryBytes) + staticShared;
  if (total > uint64_t(info.sharedMemoryPerBlockOptin))
    return llvm::createStringError(
        llvm::formatv("kernel '{0}' needs {1} bytes of shared memory but {2} "
                      "allows at most {3} per block",
                      name, total, info.name, info.sharedMemoryPerBlockOptin)
            .str());
  if (sharedMemoryBytes > 48 * 1024 ||
      total > uint64_t(info.sharedMemoryPerBlock)) {
    if (llvm::Error error = driver.check(
            driver.cuFuncSetAttribute(kernel.function,
                                      kFuncAttrMaxDynamicSharedSizeBytes,
                                      sharedMemoryBytes),
            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", name))
      return std::move(error);
  }
  return kernel;
}

llvm::Error Context::launch(const Kernel &kernel, const unsigned grid[3],
                            const unsigned block[3], CUstream stream,
                            llvm::ArrayRef<void *> params) {
  // The device's limits, checked here so that the error says which limit
  // (cuLaunchKernel only says CUDA_ERROR_INVALID_VALUE).
  for (unsigned d = 0; d < 3; ++d) {
    const char *axis = d == 0 ? "x" : d == 1 ? "y" : "z";
    if (info.maxGridDim[d] > 0 && grid[d] > unsigned(info.maxGridDim[d]))
      return llvm::createStringError(
          llvm::formatv("kernel '{0}': grid {1} is {2}, more than the {3} {4} "
                        "allows (grid ({5}, {6}, {7}))",
                        kernel.name, axis, grid[d], info.maxGridDim[d],
                        info.name, grid[0], grid[1], grid[2])
              .str());
    if (info.maxBlockDim[d] > 0 && block[d] > unsigned(info.maxBlockDim[d]))
      return llvm::createStringError(
          llvm::formatv("kernel '{0}': block {1} is {2}, more than the {3} {4} "
                        "allows",
                        kernel.name, axis, block[d], info.maxBlockDim[d],
                        info.name)
              .str());
  }
  uint64_t threads = uint64_t(block[0]) * block[1] * block[2];
  if (info.maxThreadsPerBlock > 0 &&
      threads > uint64_t(info.maxThreadsPerBlock))
    return llvm::createStringError(
        llvm::formatv("kernel '{0}': a block of {1} threads is more than the "
                      "{2} {3} allows",
                      kernel.name, threads, info.maxThreadsPerBlock, info.name)
            .str());
  // ISM_DEPENDENT_LAUNCH=0 launches every kernel plainly (for comparison,
  // or a driver that mishandles the attribute).
  static const bool dependentLaunches = [] {
    const char *value = std::getenv("ISM_DEPENDENT_LAUNCH");
    return !value || llvm::StringRef(value) != "0";
  }();
  if (kernel.dependentLaunch && dependentLaunches && driver.cuLaunchKernelEx) {
    // The kernel waits for the grids before it: its CTAs may be scheduled
    // while the previous kernel finishes, which hides the launch gap.
    CUlaunchAttribute attribute = {};
    attribute.id = kLaunchAttrProgrammaticStreamSerialization;
    attribute.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config = {};
    config.gridDimX = grid[0];
    config.gridDimY = grid[1];
    config.gridDimZ = grid[2];
    config.blockDimX = block[0];
    config.blockDimY = block[1];
    config.blockDimZ = block[2];
    config.sharedMemBytes = kernel.sharedMemoryBytes;
    config.hStream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
    if (llvm::Error error =
            driver.check(driver.cuLaunchKernelEx(
                             &config, kernel.function,
                             const_cast<void **>(params.data()), nullptr),
                         "cuLaunchKernelEx", kernel.name))
      return error;
  } else if (llvm::Error error = driver.check(
                 driver.cuLaunchKernel(
                     kernel.function, grid[0], grid[1], grid[2], block[0],
                     block[1], block[2], kernel.sharedMemoryBytes, stream,
                     const_cast<void **>(params.data()), nullptr),
                 "cuLaunchKernel", kernel.name)) {
    return error;
  }
  if (capturing && stream == capturing) {
    // Recorded into the graph, not run.
    captured.push_back(kernel.name);
  } else if (timeoutSeconds > 0) {
    pendingLaunches.push_back({++numLaunches, stream, kernel.name});
    if (pendingLaunches.size() > kMaxPendingLaunches)
      pendingLaunches.pop_front();
  }
  return llvm::Error::success();
}

llvm::Expected<DeviceBuffer> Context::allocate(size_t bytes) {
  if (bytes > info.totalMemoryBytes && info.totalMemoryBytes > 0)
    return llvm::createStringError(
        "cannot allocate " + formatBytes(bytes) + ": " + info.name + " has " +
        formatBytes(info.totalMemoryBytes) + " of memory");
  DeviceBuffer buffer;
  buffer.driver = &driver;
  buffer.bytes = bytes;
  // Zero-sized arguments still get a distinct, valid address.
  CUresult result = driver.cuMemAlloc(&buffer.ptr, bytes ? bytes : 1);
  if (result != kCudaSuccess) {
    buffer.ptr = 0;
    llvm::Error error = driver.check(
        result, llvm::formatv("cuMemAlloc_v2({0} bytes)", bytes).str());
    size_t free = 0, total = 0;
    if (driver.cuMemGetInfo(&free, &total) != kCudaSuccess)
      return error;
    return llvm::createStringError(llvm::toString(std::move(error)) + "; " +
                                   formatBytes(free) + " of " + info.name +
                                   "'s memory are free");
  }
  return std::move(buffer);
}

llvm::Error Context::copyToDevice(CUdeviceptr dst, const void *src,
                                  size_t bytes) {
  return driver.check(driver.cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD_v2");
}

llvm::Error Context::makeCurrent() {
  return driver.check(driver.cuCtxSetCurrent(context), "cuCtxSetCurrent");
}

llvm::Error Context::copyToDeviceAsync(CUdeviceptr dst, const void *src,
                                       size_t bytes, CUstream stream) {
  return driver.check(driver.cuMemcpyHtoDAsync(dst, src, bytes, stream),
                      "cuMemcpyHtoDAsync_v2");
}

llvm::Error Context::copyToHost(void *dst, CUdeviceptr src, size_t bytes) {
  return driver.check(driver.cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH_v2");
}

llvm::Error Context::memset(CUdeviceptr dst, uint8_t value, size_t bytes,
                            CUstream stream) {
  if (stream)
    return driver.check(driver.cuMemsetD8Async(dst, value, bytes, stream),
                        "cuMemsetD8Async");
  return driver.check(driver.cuMemsetD8(dst, value, bytes), "cuMemsetD8_v2");
}

llvm::Error Context::memset32(CUdeviceptr dst, uint32_t value, size_t count,
                              CUstream stream) {
  return driver.check(driver.cuMemsetD32Async(dst, value, count, stream),
                      "cuMemsetD32Async");
}

llvm::Error Context::waitPolling(const std::function<CUresult()> &ready,
                                 llvm::StringRef call) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point start = Clock::now();
  auto limit = std::chrono::seconds(timeoutSeconds);
  for (;;) {
    CUresult result = ready();
    if (result != kCudaErrorNotReady)
      return driver.check(result, call);
    auto waited = Clock::now() - start;
    if (waited > limit)
      return timedOut();
    // Spin briefly (short kernels, --bench), then sleep: up to 1 ms per
    // poll, 10 ms once the wait is long.
    if (waited < std::chrono::milliseconds(1))
      std::this_thread::yield();
    else if (waited < std::chrono::seconds(1))
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

llvm::Error Context::timedOut() {
  anyTimedOut = true;
  // The kernels of the streams still busy, each name once, in launch order.
  std::vector<std::string> names;
  for (const PendingLaunch &launch : pendingLaunches)
    if (driver.cuStreamQuery(launch.stream) == kCudaErrorNotReady &&
        !llvm::is_contained(names, launch.kernel))
      names.push_back(launch.kernel);
  std::string what;
  if (names.empty())
    what = "the GPU's work";
  else if (names.size() == 1)
    what = "kernel '" + names.front() + "'";
  else
    what = "kernels '" + llvm::join(names, "', '") + "'";
  return llvm::createStringError(
      llvm::formatv("{0} did not finish within {1} s (--timeout={1}; "
                    "--timeout=0 waits without limit)",
                    what, timeoutSeconds)
          .str());
}

llvm::Error Context::synchronize() {
  if (timeoutSeconds == 0)
    return driver.check(driver.cuCtxSynchronize(), "cuCtxSynchronize");
  // Every stream of this context, then the legacy stream; the final
  // cuCtxSynchronize returns at once and reports errors of the work.
  std::vector<CUstream> all = streams;
  all.push_back(nullptr);
  for (CUstream stream : all)
    if (llvm::Error error = waitPolling(
            [&] { return driver.cuStreamQuery(stream); }, "cuStreamQuery"))
      return error;
  pendingLaunches.clear();
  return driver.check(driver.cuCtxSynchronize(), "cuCtxSynchronize");
}

llvm::Expected<CUstream> Context::createStream() {
  CUstream stream = nullptr;
  if (llvm::Error error = driver.check(
          driver.cuStreamCreate(&stream, kStreamNonBlocking), "cuStreamCreate"))
    return std::move(error);
  streams.push_back(stream);
  return stream;
}

llvm::Error Context::destroyStream(CUstream stream) {
  llvm::erase(streams, stream);
  llvm::erase_if(pendingLaunches, [&](const PendingLaunch &launch) {
    return launch.stream == stream;
  });
  return driver.check(driver.cuStreamDestroy(stream), "cuStreamDestroy_v2");
}

llvm::Expected<CUevent> Context::createEvent(unsigned flags) {
  CUevent event = nullptr;
  if (llvm::Error error =
          driver.check(driver.cuEventCreate(&event, flags), "cuEventCreate"))
    return std::move(error);
  return event;
}

llvm::Error Context::destroyEvent(CUevent event) {
  recordedEvents.erase(event);
  return driver.check(driver.cuEventDestroy(event), "cuEventDestroy_v2");
}

llvm::Error Context::record(CUevent event, CUstream stream) {
  if (timeoutSeconds > 0)
    recordedEvents[event] = {stream, numLaunches};
  return driver.check(driver.cuEventRecord(event, stream), "cuEventRecord");
}

llvm::Error Context::waitEvent(CUstream stream, CUevent event) {
  return driver.check(driver.cuStreamWaitEvent(stream, event, 0),
                      "cuStreamWaitEvent");
}

llvm::Expected<float> Context::elapsedMs(CUevent start, CUevent end) {
  if (timeoutSeconds == 0) {
    if (llvm::Error error =
            driver.check(driver.cuEventSynchronize(end), "cuEventSynchronize"))
      return std::move(error);
  } else {
    if (llvm::Error error = waitPolling(
            [&] { return driver.cuEventQuery(end); }, "cuEventQuery"))
      return std::move(error);
    // What the event's stream ran before it has finished.
    auto recorded = recordedEvents.find(end);
    if (recorded != recordedEvents.end())
      llvm::erase_if(pendingLaunches, [&](const PendingLaunch &launch) {
        return launch.stream == recorded->second.first &&
               launch.number <= recorded->second.second;
      });
  }
  float ms = 0;
  if (llvm::Error error = driver.check(
          driver.cuEventElapsedTime(&ms, start, end), "cuEventElapsedTime"))
    return std::move(error);
  return ms;
}

llvm::Error Context::beginCapture(CUstream stream) {
  if (!driver.cuStreamBeginCapture || !driver.cuStreamEndCapture ||
      !driver.cuGraphInstantiateWithFlags || !driver.cuGraphLaunch ||
      !driver.cuGraphExecDestroy || !driver.cuGraphDestroy)
    return llvm::createStringError(
        "the CUDA driver (libcuda.so.1) lacks CUDA graphs "
        "(cuStreamBeginCapture_v2, cuGraphLaunch, ...); the driver is too old");
  if (capturing)
    return llvm::createStringError("a stream is being captured already");
  if (llvm::Error error = driver.check(
          driver.cuStreamBeginCapture(stream, kStreamCaptureModeRelaxed),
          "cuStreamBeginCapture_v2"))
    return error;
  capturing = stream;
  captured.clear();
  return llvm::Error::success();
}

llvm::Expected<CUgraphExec> Context::endCapture(CUstream stream) {
  if (stream != capturing)
    return llvm::createStringError("endCapture: the stream is not captured");
  capturing = nullptr;
  CUgraph graph = nullptr;
  if (llvm::Error error = driver.check(
          driver.cuStreamEndCapture(stream, &graph), "cuStreamEndCapture"))
    return std::move(error);
  CUgraphExec exec = nullptr;
  llvm::Error instantiated = driver.check(
      driver.cuGraphInstantiateWithFlags(&exec, graph, 0),
      "cuGraphInstantiateWithFlags");
  llvm::Error destroyed =
      driver.check(driver.cuGraphDestroy(graph), "cuGraphDestroy");
  if (instantiated)
    return llvm::joinErrors(std::move(instantiated), std::move(destroyed));
  if (destroyed) {
    llvm::consumeError(destroyGraph(exec));
    return std::move(destroyed);
  }
  graphKernels[exec] = std::move(captured);
  captured.clear();
  return exec;
}

llvm::Error Context::launchGraph(CUgraphExec graph, CUstream stream) {
  if (llvm::Error error =
          driver.check(driver.cuGraphLaunch(graph, stream), "cuGraphLaunch"))
    return error;
  if (timeoutSeconds > 0)
    for (const std::string &kernel : graphKernels[graph]) {
      pendingLaunches.push_back({++numLaunches, stream, kernel});
      if (pendingLaunches.size() > kMaxPendingLaunches)
        pendingLaunches.pop_front();
    }
  return llvm::Error::success();
}

llvm::Error Context::destroyGraph(CUgraphExec graph) {
  graphKernels.erase(graph);
  return driver.check(driver.cuGraphExecDestroy(graph), "cuGraphExecDestroy");
}
