//===- Runtime.cpp - running host functions from Python ---------*- C++ -*-===//
//
// The one place where the Python bindings call the runner library (the one
// `ism-run` is built on): host arguments become the runner's bound
// arguments, the host function runs on the GPU (GPULauncher over the CUDA
// driver wrapper) or in the float64 reference interpreter, and the buffers
// are copied back into the callers' arrays. Every runner failure arrives as
// an llvm::Error and leaves as an IsmError.
//
//===----------------------------------------------------------------------===//

#include "IsmPython.h"

#include "ism/Runner/ArgSpec.h"
#include "ism/Runner/Compile.h"
#include "ism/Runner/GPULauncher.h"
#include "ism/Runner/HostExecutor.h"
#include "ism/Runner/Reference.h"
#include "ism/Runtime/CudaDriver.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>
#include <memory>

#include <nanobind/stl/string.h>

namespace nb = nanobind;
using namespace mlir;
using namespace mlir::ism;
using namespace mlir::ism::python;
using namespace mlir::ism::runner;

/// Throws an IsmError of `kind` carrying the text of `error`.
[[noreturn]] static void fail(ErrorKind kind, llvm::Error error) {
  throw IsmError(kind, llvm::toString(std::move(error)));
}

/// Calls `fn(linear, offset)` for every element of an array of `shape` with
/// `strides` (in elements): its row-major position and its offset in
/// elements from the first element.
template <typename Fn>
static void forEachElement(llvm::ArrayRef<int64_t> shape,
                           llvm::ArrayRef<int64_t> strides, Fn fn) {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  llvm::SmallVector<int64_t, 4> index(shape.size(), 0);
  int64_t offset = 0;
  for (int64_t linear = 0; linear < count; ++linear) {
    fn(linear, offset);
    // Advance the multi-dimensional index, innermost dimension first.
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      offset += strides[d];
      if (++index[d] < shape[d])
        break;
      offset -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
}

/// Copies the elements of host array `arg` into the dense `buffer`.
static void copyIn(const HostArgument &arg, HostBuffer &buffer) {
  unsigned size = getDTypeSize(buffer.dtype);
  const auto *src = static_cast<const uint8_t *>(arg.data);
  forEachElement(arg.shape, arg.strides, [&](int64_t linear, int64_t offset) {
    std::memcpy(buffer.bytes.data() + linear * size, src + offset * size, size);
  });
}

/// Copies the dense `buffer` back into host array `arg`.
static void copyOut(const HostBuffer &buffer, const HostArgument &arg) {
  unsigned size = getDTypeSize(buffer.dtype);
  auto *dst = static_cast<uint8_t *>(arg.data);
  forEachElement(arg.shape, arg.strides, [&](int64_t linear, int64_t offset) {
    std::memcpy(dst + offset * size, buffer.bytes.data() + linear * size, size);
  });
}

/// The host function `entry` of `module`.
static func::FuncOp lookupEntry(ModuleOp module, const std::string &entry) {
  auto func = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      module, StringAttr::get(module.getContext(), entry));
  if (!func || func.isExternal())
    throw IsmError(ErrorKind::Run, "the module has no host function @" + entry);
  return func;
}

/// Binds `args` to the parameters of `entry` as the runner takes them:
/// buffers are copied into dense host buffers, float scalars are rounded to
/// their type. Throws IsmError (Run) naming the argument that does not fit.
static std::vector<BoundArg>
bindHostArguments(func::FuncOp entry, llvm::ArrayRef<HostArgument> args) {
  FunctionType type = entry.getFunctionType();
  if (args.size() != type.getNumInputs())
    throw IsmError(ErrorKind::Run,
                   llvm::formatv("@{0} takes {1} argument(s), got {2}",
                                 entry.getName(), type.getNumInputs(),
                                 args.size())
                       .str());
  std::vector<BoundArg> bound(args.size());
  for (auto [index, arg] : llvm::enumerate(args)) {
    Type paramType = type.getInput(index);
    auto reject = [&, index = index](const std::string &why) {
      std::string typeText;
      llvm::raw_string_ostream os(typeText);
      os << paramType;
      throw IsmError(ErrorKind::Run,
                     llvm::formatv("argument #{0} of @{1} ({2}): {3}", index,
                                   entry.getName(), typeText, why)
                         .str());
    };
    BoundArg &out = bound[index];
    out.type = paramType;
    if (!isa<MemRefType>(paramType)) {
      if (arg.isBuffer)
        reject("the parameter is a scalar, not a buffer");
      if (isa<FloatType>(paramType)) {
        if (!arg.isFloat)
          reject("the parameter is a float");
        std::optional<DType> dtype = getDType(paramType);
        out.floatValue =
            dtype ? roundToDType(arg.floatValue, *dtype) : arg.floatValue;
      } else if (paramType.isIntOrIndex()) {
        if (arg.isFloat)
          reject("the parameter is an integer");
        out.intValue = arg.intValue;
      } else {
        reject("parameters of this type are not supported");
      }
      continue;
    }
    if (!arg.isBuffer)
      reject("the parameter is a memref; pass an array");
    llvm::Expected<DType> dtype = getBufferDType(paramType);
    if (!dtype)
      reject(llvm::toString(dtype.takeError()));
    if (parseDType(arg.elementType) != *dtype)
      reject("the array holds " + arg.elementType + " elements");
    if (arg.strides.size() != arg.shape.size() || !arg.data)
      reject("the array's description is malformed");
    if (llvm::Error error =
            checkBufferShape(cast<MemRefType>(paramType), arg.shape))
      reject(llvm::toString(std::move(error)));
    out.isBuffer = true;
    out.buffer = HostBuffer(*dtype, arg.shape);
    copyIn(arg, out.buffer);
  }
  return bound;
}

bool mlir::ism::python::isRuntimeAvailable() { return true; }

RunResult mlir::ism::python::runHostFunction(ModuleOp module,
                                             const std::string &entry,
                                             std::vector<HostArgument> &args,
                                             const RunOptions &options) {
  func::FuncOp func = lookupEntry(module, entry);
  std::vector<BoundArg> bound = bindHostArguments(func, args);

  // The GPU (its absence, or the driver's, is not a failure of the run).
  llvm::Expected<std::unique_ptr<cuda::Context>> created =
      cuda::Context::create(/*ordinal=*/0);
  if (!created)
    fail(ErrorKind::RuntimeUnavailable, created.takeError());
  cuda::Context &gpu = **created;

  PTXOptions ptxOptions;
  ptxOptions.chip =
      options.chip.empty() ? gpu.getDeviceInfo().chip() : options.chip;
  std::optional<CoscheduleMode> mode = parseCoscheduleMode(options.coschedule);
  if (!mode)
    fail(ErrorKind::Run,
         llvm::createStringError("coschedule must be fused, sequential or "
                                 "streams, not '" +
                                 options.coschedule + "'"));
  std::optional<CompiledModule> compiled;
  {
    DiagnosticCollector diagnostics(module.getContext());
    llvm::Expected<CompiledModule> result =
        compileModule(module, ptxOptions, *mode);
    if (!result)
      diagnostics.raise(ErrorKind::Run, llvm::toString(result.takeError()));
    compiled = std::move(*result);
  }
  for (const std::string &warning : compiled->warnings)
    llvm::errs() << warning << "\n";
  if (llvm::Error error = gpu.loadPTX(compiled->ptx))
    fail(ErrorKind::Run, std::move(error));

  llvm::Expected<DeviceBuffers> device = uploadArguments(gpu, bound);
  if (!device)
    fail(ErrorKind::Run, device.takeError());
  llvm::Expected<cuda::CUstream> stream = gpu.createStream();
  if (!stream)
    fail(ErrorKind::Run, stream.takeError());
  llvm::scope_exit destroyStream(
      [&] { llvm::consumeError(gpu.destroyStream(*stream)); });
  GPULauncher launcher(gpu, *compiled, device->args, *stream);
  launcher.setPoisonTemporaries(true); // one run, checked by its callers
  HostExecutionOptions execution;
  execution.coschedule = *mode;
  execution.fusedKernels = compiled->coschedules;
  execution.unfused = compiled->unfused;
  if (llvm::Error error = executeHostFunction(func, bound, launcher, execution))
    fail(ErrorKind::Run, std::move(error));
  if (llvm::Error error = gpu.synchronize())
    fail(ErrorKind::Run, std::move(error));
  if (options.graph)
    if (llvm::Error error = replayHostFunction(gpu, *stream, func, bound,
                                               device->args, launcher,
                                               execution))
      fail(ErrorKind::Run, std::move(error));
  if (llvm::Error error = launcher.checkOrderedWaits())
    fail(ErrorKind::Run, std::move(error));

  // Every buffer back into its array, as this one run left it.
  for (auto [i, arg] : llvm::enumerate(bound)) {
    if (!arg.isBuffer)
      continue;
    if (llvm::Error error =
            gpu.copyToHost(arg.buffer.bytes.data(), device->args[i].ptr,
                           arg.buffer.getSizeInBytes()))
      fail(ErrorKind::Run, std::move(error));
    copyOut(arg.buffer, args[i]);
  }

  RunResult result;
  if (options.timing) {
    TimingOptions timing;
    timing.warmup = options.warmup;
    timing.repetitions = options.repetitions;
    timing.callsPerRep = options.calls;
    timing.flushL2 = options.flushL2;
    timing.graph = options.graph;
    nvml::PowerSummary power;
    timing.power = &power;
    llvm::Expected<std::vector<double>> times = timeHostFunction(
        gpu, *stream, func, bound, launcher, timing, execution);
    if (!times)
      fail(ErrorKind::Run, times.takeError());
    if (llvm::Error error = launcher.checkOrderedWaits())
      fail(ErrorKind::Run, std::move(error));
    result.timesMs = std::move(*times);
    result.powerMeasured = power.available;
    result.powerUnavailable = power.unavailable;
    result.smClockMhz = power.smClockMedianMhz;
    result.powerW = power.powerMeanW;
    result.powerCapped = power.powerCapped;
    result.powerSamples = power.samples;
  }
  return result;
}

void mlir::ism::python::interpretHostFunction(ModuleOp module,
                                              const std::string &entry,
                                              std::vector<HostArgument> &args) {
  func::FuncOp func = lookupEntry(module, entry);
  std::vector<BoundArg> bound = bindHostArguments(func, args);
  if (llvm::Error error = checkReferenceMemory(bound))
    fail(ErrorKind::Run, std::move(error));
  std::vector<RefBuffer> reference = makeReferenceBuffers(bound);
  ReferenceLauncher launcher(reference);
  if (llvm::Error error = executeHostFunction(func, bound, launcher))
    fail(ErrorKind::Run, std::move(error));
  for (auto [i, arg] : llvm::enumerate(bound)) {
    if (!arg.isBuffer)
      continue;
    for (auto [j, value] : llvm::enumerate(reference[i].data))
      arg.buffer.set(j, value);
    copyOut(arg.buffer, args[i]);
  }
}

void mlir::ism::python::registerPowerBindings(nb::module_ &m) {
  nb::class_<nvml::PowerMonitor>(m, "PowerMonitor")
      .def(
          "__init__",
          [](nvml::PowerMonitor *self, int ordinal) {
            llvm::Expected<cuda::Driver &> driver = cuda::Driver::get();
            if (!driver) {
              new (self) nvml::PowerMonitor(llvm::toString(driver.takeError()));
              return;
            }
            llvm::Expected<cuda::DeviceInfo> info =
                driver->getDeviceInfo(ordinal);
            if (!info) {
              new (self) nvml::PowerMonitor(llvm::toString(info.takeError()));
              return;
            }
            new (self) nvml::PowerMonitor(info->pciDomain, info->pciBus,
                                          info->pciDevice);
          },
          nb::arg("device") = 0,
          "Samples CUDA device `device`'s SM clock and board power (NVML).")
      .def("start", [](nvml::PowerMonitor &self) { self.start(); },
           "Starts sampling every 5 ms.")
      .def(
          "stop",
          [](nvml::PowerMonitor &self) {
            nvml::PowerSummary s = self.stop();
            nb::dict out;
            if (!s.available) {
              out["unavailable"] = s.unavailable;
              return out;
            }
            out["sm_clock_mhz"] = s.smClockMedianMhz;
            out["power_w"] = s.powerMeanW;
            out["power_capped"] = s.powerCapped;
            out["samples"] = s.samples;
            return out;
          },
          "Stops sampling: {sm_clock_mhz, power_w, power_capped, samples}, "
          "or {unavailable: why}.");
}
