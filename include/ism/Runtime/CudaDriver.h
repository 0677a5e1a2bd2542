//===- CudaDriver.h - The CUDA Driver API, loaded at run time ---*- C++ -*-===//
//
// A thin, checked layer over the CUDA Driver API. The driver library
// (libcuda.so.1) is opened with dlopen when first needed, so programs that
// link this library start on machines without a GPU and report the missing
// driver as an error. Every call is checked; a failure becomes an llvm::Error
// naming the call, the kernel where there is one, and the driver's text.
//
// The few driver types and constants used here are declared below with the
// values of cuda.h, so building needs no CUDA toolkit.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_RUNTIME_CUDADRIVER_H
#define ISM_RUNTIME_CUDADRIVER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mlir::ism::cuda {

/// `bytes` for messages: "400000000000 bytes (372.5 GiB)".
std::string formatBytes(uint64_t bytes);

/// Driver handle types (opaque pointers and integers, as in cuda.h).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;

/// cuda.h's CUlaunchAttribute, with the one value the runtime sets
/// (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION's flag).
struct CUlaunchAttribute {
  unsigned id;
  char pad[4];
  union {
    char bytes[64];
    int programmaticStreamSerializationAllowed;
  } value;
};

/// cuda.h's CUlaunchConfig.
struct CUlaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute *attrs;
  unsigned numAttrs;
};

/// What the runner needs to know about one GPU.
struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int smCount = 0;
  int ccMajor = 0;
  int ccMinor = 0;
  uint64_t totalMemoryBytes = 0;
  int l2CacheBytes = 0;
  /// Shared memory a block may use by default and after opting in.
  int sharedMemoryPerBlock = 0;
  int sharedMemoryPerBlockOptin = 0;
  /// Launch limits: the largest grid and block dimensions and threads per
  /// block.
  int maxGridDim[3] = {0, 0, 0};
  int maxBlockDim[3] = {0, 0, 0};
  int maxThreadsPerBlock = 0;
  /// The device's PCI location (how NVML finds it).
  int pciDomain = 0, pciBus = 0, pciDevice = 0;
  /// The chip name LLVM's NVPTX backend takes, e.g. "sm_90a".
  std::string chip() const;
};

/// The function table of the loaded driver. Obtain it with Driver::get().
class Driver {
public:
  /// Opens libcuda.so.1, resolves the functions and calls cuInit once. The
  /// error says when there is no driver or no GPU.
  static llvm::Expected<Driver &> get();

  /// Number of GPUs the driver sees.
  llvm::Expected<int> getDeviceCount();
  /// Queries one device.
  llvm::Expected<DeviceInfo> getDeviceInfo(int ordinal);
  /// The driver's version, e.g. 13000 for CUDA 13.0.
  int getDriverVersion() const { return driverVersion; }

  /// Turns a CUresult into an llvm::Error naming `call` (and `kernel` when
  /// not empty). Success gives llvm::Error::success().
  llvm::Error check(CUresult result, llvm::StringRef call,
                    llvm::StringRef kernel = {}) const;

  /// Whether a wait of this process timed out (Context::setTimeout): the GPU
  /// may still be running the kernel, so nothing waits for it any more: the
  /// contexts and buffers are left to the driver, which reclaims them when
  /// the process ends (and a program should end without running the
  /// driver's exit handlers, e.g. with std::_Exit).
  static bool hasTimedOut();

  // The resolved entry points (the _v2 ABI where cuda.h maps to one).
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDriverGetVersion)(int *) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char **) = nullptr;
  CUresult (*cuGetErrorName)(CUresult, const char **) = nullptr;
  CUresult (*cuDeviceGetCount)(int *) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice *, int) = nullptr;
  CUresult (*cuDeviceGetName)(char *, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice) = nullptr;
  CUresult (*cuDeviceTotalMem)(size_t *, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                                 void **) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule,
                                  const char *) = nullptr;
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int) = nullptr;
  CUresult (*cuFuncGetAttribute)(int *, int, CUfunction) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t) = nullptr;
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t,
                                CUstream) = nullptr;
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t) = nullptr;
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t) = nullptr;
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t,
                              CUstream) = nullptr;
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t,
                               CUstream) = nullptr;
  CUresult (*cuStreamCreate)(CUstream *, unsigned) = nullptr;
  CUresult (*cuStreamDestroy)(CUstream) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream) = nullptr;
  CUresult (*cuStreamQuery)(CUstream) = nullptr;
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned) = nullptr;
  CUresult (*cuEventCreate)(CUevent *, unsigned) = nullptr;
  CUresult (*cuEventDestroy)(CUevent) = nullptr;
  CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent) = nullptr;
  CUresult (*cuEventQuery)(CUevent) = nullptr;
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent) = nullptr;
  CUresult (*cuMemGetInfo)(size_t *, size_t *) = nullptr;
  /// Optional (CUDA 12+ drivers): null when the driver lacks it.
  CUresult (*cuTensorMapEncodeTiled)(void *, int, uint32_t, void *,
                                     const uint64_t *, const uint64_t *,
                                     const uint32_t *, const uint32_t *, int,
                                     int, int, int) = nullptr;
  /// Optional, as cuTensorMapEncodeTiled: a tensor map of TMA's im2col mode
  /// (convolutions' input pixels).
  CUresult (*cuTensorMapEncodeIm2col)(void *, int, uint32_t, void *,
                                      const uint64_t *, const uint64_t *,
                                      const int *, const int *, uint32_t,
                                      uint32_t, const uint32_t *, int, int,
                                      int, int) = nullptr;
  CUresult (*cuOccupancyMaxActiveClusters)(int *, CUfunction,
                                           const CUlaunchConfig *) = nullptr;
  CUresult (*cuLaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **,
                               void **) = nullptr;
  /// Optional: stream capture into CUDA graphs, and their launch.
  CUresult (*cuStreamBeginCapture)(CUstream, int) = nullptr;
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph *) = nullptr;
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph,
                                          unsigned long long) = nullptr;
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream) = nullptr;
  CUresult (*cuGraphExecDestroy)(CUgraphExec) = nullptr;
  CUresult (*cuGraphDestroy)(CUgraph) = nullptr;

private:
  Driver() = default;
  /// Loads libcuda.so.1 into `driver` (its entry points, cuInit, the
  /// version); returns why it cannot, or an empty string.
  static std::string load(Driver &driver);
  int driverVersion = 0;
};

/// Driver constants used by the runtime (values from cuda.h).
enum : int {
  kCudaSuccess = 0,
  kCudaErrorNoDevice = 100,
  kCudaErrorNotReady = 600,
  kLaunchAttrProgrammaticStreamSerialization = 6,
  kAttrMaxThreadsPerBlock = 1,
  kAttrMaxBlockDimX = 2,
  kAttrMaxGridDimX = 5,
  kAttrMaxSharedMemoryPerBlock = 8,
  kAttrMultiprocessorCount = 16,
  kAttrPciBusId = 33,
  kAttrPciDeviceId = 34,
  kAttrL2CacheSize = 38,
  kAttrPciDomainId = 50,
  kAttrComputeCapabilityMajor = 75,
  kAttrComputeCapabilityMinor = 76,
  kAttrMaxSharedMemoryPerBlockOptin = 97,
  kFuncAttrSharedSizeBytes = 1,
  kFuncAttrMaxDynamicSharedSizeBytes = 8,
  kJitInfoLogBuffer = 3,
  kTensorMapUInt8 = 0,
  kTensorMapFloat16 = 6,
  kTensorMapBFloat16 = 9,
  kTensorMapSwizzle64B = 2,
  kTensorMapSwizzle128B = 3,
  kTensorMapL2Promotion256B = 3,
  kJitInfoLogBufferSizeBytes = 4,
  kJitErrorLogBuffer = 5,
  kJitErrorLogBufferSizeBytes = 6,
  kStreamNonBlocking = 1,
  kEventDefault = 0,
  kEventDisableTiming = 2,
  kStreamCaptureModeRelaxed = 2,
};

/// A device buffer; frees itself.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  DeviceBuffer(DeviceBuffer &&other) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
  ~DeviceBuffer();

  CUdeviceptr get() const { return ptr; }
  size_t size() const { return bytes; }

private:
  friend class Context;
  Driver *driver = nullptr;
  CUdeviceptr ptr = 0;
  size_t bytes = 0;
};

/// A loaded module's kernel with the launch facts it needs.
struct Kernel {
  std::string name;
  CUfunction function = nullptr;
  unsigned sharedMemoryBytes = 0;
  /// The kernel waits for the grids before it (griddepcontrol.wait) before
  /// it touches memory, so it is launched with programmatic stream
  /// serialization: its CTAs may start while the previous kernel in the
  /// stream finishes (when the driver has cuLaunchKernelEx).
  bool dependentLaunch = false;
};

/// The primary context of one device, current on the calling thread, with
/// the operations the runner uses. Destroying it releases the context and
/// unloads the modules loaded through it.
class Context {
public:
  /// Retains the primary context of device `ordinal` and makes it current.
  static llvm::Expected<std::unique_ptr<Context>> create(int ordinal);
  ~Context();

  const DeviceInfo &getDeviceInfo() const { return info; }
  Driver &getDriver() { return driver; }
  /// Makes this context current on the calling thread (cuCtxSetCurrent).
  llvm::Error makeCurrent();

  /// Loads PTX (the driver JIT-compiles it for this GPU). A JIT failure
  /// returns the driver's error log.
  llvm::Error loadPTX(llvm::StringRef ptx);
  /// Loads PTX like loadPTX and returns the module, so that kernels can be
  /// looked up in it alone (two compilations of one program may define
  /// kernels of the same name). The context still owns it.
  llvm::Expected<CUmodule> loadModule(llvm::StringRef ptx);
  /// Unloads a module of loadModule's once the caller is done with it (no
  /// kernel of it still queued or running: synchronize first); its kernels
  /// must not be used afterwards.
  llvm::Error unloadModule(CUmodule module);
  /// Finds kernel `name` in `module`, or in every loaded module (in load
  /// order) when `module` is null, and prepares it for `sharedMemoryBytes`
  /// of dynamic shared memory: raises the kernel's opt-in limit when that is
  /// above 48 KB, and fails when the device cannot give that much.
  llvm::Expected<Kernel> getKernel(llvm::StringRef name,
                                   unsigned sharedMemoryBytes,
                                   CUmodule module = nullptr);
  /// Launches `kernel` on `stream` with block (blockX, blockY, blockZ).
  /// `params` holds one pointer per kernel parameter. A grid or block past
  /// the device's limits (DeviceInfo::maxGridDim, ...) is an error naming
  /// the kernel, before cuLaunchKernel.
  llvm::Error launch(const Kernel &kernel, const unsigned grid[3],
                     const unsigned block[3], CUstream stream,
                     llvm::ArrayRef<void *> params);
  /// How many thread-block clusters of `clusterSize` CTAs (the kernel's
  /// compile-time cluster) of `threads` threads can run at once on the
  /// device (cuOccupancyMaxActiveClusters; SMs / clusterSize where the
  /// driver lacks it). A kernel that fits no cluster is an error.
  llvm::Expected<unsigned> getMaxActiveClusters(const Kernel &kernel,
                                                unsigned threads,
                                                unsigned clusterSize);

  /// Allocates device memory. More than the device has in all is an error
  /// saying so (cuMemAlloc's own error otherwise).
  llvm::Expected<DeviceBuffer> allocate(size_t bytes);
  llvm::Error copyToDevice(CUdeviceptr dst, const void *src, size_t bytes);
  llvm::Error copyToHost(void *dst, CUdeviceptr src, size_t bytes);
  /// Copies `bytes` from host memory to `dst` in order on `stream`
  /// (cuMemcpyHtoDAsync). `src` is pageable memory: the driver has taken
  /// its bytes when the call returns, and the host does not wait for the
  /// GPU.
  llvm::Error copyToDeviceAsync(CUdeviceptr dst, const void *src, size_t bytes,
                                CUstream stream);
  llvm::Error memset(CUdeviceptr dst, uint8_t value, size_t bytes,
                     CUstream stream = nullptr);
  /// Sets `count` 32-bit words at `dst` to `value`, asynchronously on
  /// `stream` (cuMemsetD32Async).
  llvm::Error memset32(CUdeviceptr dst, uint32_t value, size_t count,
                       CUstream stream);
  /// Waits for all work of the context (every stream created here and the
  /// legacy stream).
  llvm::Error synchronize();

  /// How long synchronize() and elapsedMs() wait, in seconds: 0 (the
  /// default) waits as long as the GPU takes; otherwise they poll
  /// (cuStreamQuery, cuEventQuery) and after `seconds` return the error
  /// "kernel 'X' did not finish within N s", naming the kernels launched on
  /// the streams still busy, and from then on Driver::hasTimedOut() is true.
  void setTimeout(unsigned seconds) { timeoutSeconds = seconds; }

  llvm::Expected<CUstream> createStream();
  llvm::Error destroyStream(CUstream stream);
  /// Creates an event; `flags` as cuEventCreate takes them (kEventDefault
  /// records timing, kEventDisableTiming is for ordering only).
  llvm::Expected<CUevent> createEvent(unsigned flags = kEventDefault);
  llvm::Error destroyEvent(CUevent event);
  llvm::Error record(CUevent event, CUstream stream);
  /// Makes the work submitted to `stream` after this call wait for `event`
  /// (cuStreamWaitEvent); the host does not wait.
  llvm::Error waitEvent(CUstream stream, CUevent event);
  /// Milliseconds between two recorded events (waits for `end`).
  llvm::Expected<float> elapsedMs(CUevent start, CUevent end);

  /// CUDA graphs. beginCapture starts capturing the work submitted to
  /// `stream` (relaxed mode: the launch path's own driver calls, such as
  /// kernel attributes, stay allowed); until endCapture, launches and
  /// asynchronous copies and memsets on it are recorded, not run.
  /// endCapture ends the capture and instantiates the graph; launchGraph
  /// runs it on a stream (a timeout names the kernels it holds). A driver
  /// without graphs (before CUDA 12) is an error saying so.
  llvm::Error beginCapture(CUstream stream);
  llvm::Expected<CUgraphExec> endCapture(CUstream stream);
  llvm::Error launchGraph(CUgraphExec graph, CUstream stream);
  llvm::Error destroyGraph(CUgraphExec graph);

private:
  Context(Driver &driver) : driver(driver) {}
  /// Polls `ready` (a cuStreamQuery or cuEventQuery) until it is not
  /// CUDA_ERROR_NOT_READY or the timeout has passed; `call` names it.
  llvm::Error waitPolling(const std::function<CUresult()> &ready,
                          llvm::StringRef call);
  /// The timeout error, naming the kernels launched since the last finished
  /// wait on the streams still busy.
  llvm::Error timedOut();

  Driver &driver;
  DeviceInfo info;
  CUdevice device = 0;
  CUcontext context = nullptr;
  std::vector<CUmodule> modules;
  /// For each module, the kernels whose PTX waits for the grids before it
  /// (griddepcontrol.wait): launched with programmatic stream
  /// serialization (Kernel::dependentLaunch).
  std::map<CUmodule, std::vector<std::string>> waitingKernels;
  unsigned timeoutSeconds = 0;
  /// With a timeout: the streams created here, and the kernels launched
  /// since the last wait that saw them finish (launch number, stream, name;
  /// the last kMaxPendingLaunches), and for each recorded event the stream
  /// and the launch number it follows.
  std::vector<CUstream> streams;
  struct PendingLaunch {
    uint64_t number;
    CUstream stream;
    std::string kernel;
  };
  std::deque<PendingLaunch> pendingLaunches;
  std::map<CUevent, std::pair<CUstream, uint64_t>> recordedEvents;
  uint64_t numLaunches = 0;
  /// The stream being captured (beginCapture) and the kernels launched on
  /// it since; for each instantiated graph, the kernels it launches.
  CUstream capturing = nullptr;
  std::vector<std::string> captured;
  std::map<CUgraphExec, std::vector<std::string>> graphKernels;
};

} // namespace mlir::ism::cuda

#endif // ISM_RUNTIME_CUDADRIVER_H
