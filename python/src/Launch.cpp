//===- Launch.cpp - compiled programs launched on device memory -*- C++ -*-===//
//
// `ism._ism.Program` is what `ism.compile` returns underneath: a module
// parsed into its own context, compiled once (through the runner's
// persistent compile cache), and launched any number of times on buffers
// that already live on the GPU (torch tensors, CuPy arrays), on the caller's
// CUDA stream, with no copies and no synchronisation. The host function
// still runs in the runner's host executor, so grid computation stays in
// IR; each `ism.kernel` also gets a host function of its own,
// `@__ism_launch_<kernel>(args..., gx, gy, gz)`, for direct launches.
//
// The per-call path is kept short (and within the stable ABI: the abi3
// wheel builds this file with Py_LIMITED_API). `launch_fast` takes the
// caller's own arguments when every one is a torch tensor that needs no
// conversion (or a plain int or float) and the stream is torch's current one
// or a handle: it reads each tensor's dtype, device, contiguity, pointer and
// shape here, through the interpreter's C API, and answers False at the
// first thing it does not take, without raising. The Python side then
// converts the arguments itself (CuPy, DLPack, other streams) and raises the
// errors that name the argument, and `launch` takes, per argument, a
// (pointer, shape) tuple or a number. Both refresh the bound arguments in
// place and hand the host function to one persistent GPULauncher (kernels,
// TMA descriptors and work counters survive calls).
//
//===----------------------------------------------------------------------===//

#include "IsmPython.h"

#include "ism/InitIsm.h"
#include "ism/Runner/Compile.h"
#include "ism/Runner/CompileCache.h"
#include "ism/Runner/GPULauncher.h"
#include "ism/Runner/HostExecutor.h"
#include "ism/Runtime/CudaDriver.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FormatVariadic.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>

namespace nb = nanobind;
using namespace mlir;
using namespace mlir::ism;
using namespace mlir::ism::python;
using namespace mlir::ism::runner;

/// The prefix of the host functions made for direct kernel launches.
static constexpr llvm::StringLiteral kDirectLaunchPrefix = "__ism_launch_";

static std::string typeToString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

namespace {

/// One parameter of a host function, as the per-call path checks it.
struct Param {
  Type type;
  bool isBuffer = false;
  bool isFloat = false;
  /// Buffers: the memref's sizes (ShapedType::kDynamic for `?`).
  llvm::SmallVector<int64_t, 4> shape;
  /// Buffers: the torch dtype objects the fast path accepts (bindTorch;
  /// borrowed from torch, which keeps them for the life of the process).
  llvm::SmallVector<PyObject *, 2> torchDtypes;

  /// Whether a buffer of `size` elements along dimension `d` fits the
  /// memref (both launch paths check every size with it).
  bool accepts(size_t d, int64_t size) const {
    return size >= 0 && (ShapedType::isDynamic(shape[d]) || shape[d] == size);
  }
};

/// A host function the program can run, with its parameters.
struct Function {
  func::FuncOp op;
  std::vector<Param> params;
};

class Program {
public:
  Program(const std::string &text, const std::string &entry,
          const std::string &chip, const std::string &coschedule,
          const std::string &cacheDirectory, int device);

  /// (name, [(kind, element type or scalar type, shape)]) of every host
  /// function: the entry first, then the direct-launch functions.
  std::vector<std::tuple<
      std::string,
      std::vector<std::tuple<std::string, std::string, std::vector<int64_t>>>>>
  getFunctions() const;

  /// Runs host function `index` with `args` (a tuple: (pointer, shape) per
  /// buffer, a number per scalar) on `stream`.
  void launch(size_t index, nb::handle args, uintptr_t stream);

  /// Runs host function `index` with `args` followed by `tail` (tuples of
  /// the caller's objects) when each is a contiguous torch tensor of an
  /// accepted dtype on the program's device and of a matching shape, or an
  /// int (a float too, for a float parameter), and `stream` is None (torch's
  /// current stream) or an int handle. Returns false, with no Python error
  /// set and nothing launched, when anything is otherwise (or bindTorch was
  /// not called): the caller then converts the arguments itself.
  bool launchFast(size_t index, nb::handle args, nb::handle tail,
                  nb::handle stream);

  /// Gives the fast path torch's Tensor type, its current-stream function
  /// (`torch._C._cuda_getCurrentRawStream`) and, per element type name
  /// (`f32`), the tuple of torch dtypes a buffer of it takes.
  void bindTorch(nb::handle tensorType, nb::handle currentStream,
                 nb::dict dtypes);
  bool isTorchBound() const { return torchTensorType != nullptr; }

  /// Makes the work submitted to `stream` from now on wait for the work
  /// already submitted to each of `producers` (an event recorded on each,
  /// waited for on `stream`; the host does not wait). Producers equal to
  /// `stream` are skipped.
  void waitFor(uintptr_t stream, const std::vector<uintptr_t> &producers);

  ~Program();

  /// The kernels of the compiled module: (name, threads, dynamic shared
  /// memory bytes, TMA operands, persistent).
  std::vector<std::tuple<std::string, unsigned, unsigned, unsigned, bool>>
  getKernels() const;

  std::string chip;
  int device = 0;
  bool cacheHit = false;
  std::string cacheKey;
  std::vector<std::string> warnings;
  /// The compiler's warnings (`FILE:LINE:COL: warning: ...`), also from a
  /// cache hit; ism.compile issues each as a Python warning.
  std::vector<std::string> compilerWarnings;
  std::string ptx;

private:
  void ensureGPU();
  /// Runs host function `index` with the first `n` bound arguments.
  void run(size_t index, size_t n, uintptr_t stream);
  /// Binds argument `i` from a torch tensor or a number, as launchFast
  /// says; false (no Python error set) when it does not take `item`.
  bool bindFast(size_t i, const Param &param, PyObject *item);
  [[noreturn]] void fail(const std::string &message) const {
    throw IsmError(ErrorKind::Run, message);
  }

  std::unique_ptr<MLIRContext> context;
  OwningOpRef<ModuleOp> module;
  std::vector<Function> functions;
  CompiledModule compiled;
  CoscheduleMode mode = CoscheduleMode::Fused;
  HostExecutionOptions execution;

  // GPU state, made at the first launch.
  std::unique_ptr<cuda::Context> gpu;
  cuda::CUmodule cuModule = nullptr;
  std::unique_ptr<GPULauncher> launcher;
  // waitFor's event (ordering only), made at its first use.
  cuda::CUevent orderEvent = nullptr;
  // Reused by every call: one entry per parameter of the widest function.
  std::vector<BoundArg> bound;
  std::vector<DeviceArg> deviceArgs;
  // bindTorch's objects (new references, kept for the life of the process:
  // programs live until the interpreter is gone, when releasing them would
  // not be safe).
  PyObject *torchTensorType = nullptr;
  PyObject *torchCurrentStream = nullptr;
  PyObject *deviceNumber = nullptr;
};

} // namespace

/// Adds `@__ism_launch_<kernel>(args..., gx, gy, gz)` for every ism.kernel
/// of `module` (after everything else, so that the walk order of the
/// existing ism.coschedule ops is unchanged).
static void addDirectLaunchFunctions(ModuleOp module) {
  OpBuilder builder(module.getContext());
  builder.setInsertionPointToEnd(module.getBody());
  Type index = builder.getIndexType();
  for (KernelOp kernel : llvm::to_vector(module.getOps<KernelOp>())) {
    std::string name = (kDirectLaunchPrefix + kernel.getSymName()).str();
    if (SymbolTable::lookupSymbolIn(module, name))
      continue;
    llvm::SmallVector<Type> inputs(kernel.getArgumentTypes());
    inputs.append(3, index);
    Location loc = kernel.getLoc();
    auto fn = func::FuncOp::create(builder, loc, name,
                                   builder.getFunctionType(inputs, {}));
    Block *body = fn.addEntryBlock();
    OpBuilder inner = OpBuilder::atBlockEnd(body);
    unsigned n = kernel.getNumArguments();
    llvm::SmallVector<Value> args(body->getArguments().take_front(n));
    llvm::SmallVector<Value> grid(body->getArguments().drop_front(n));
    LaunchOp::create(inner, loc, kernel.getSymName(), grid, args);
    func::ReturnOp::create(inner, loc);
  }
}

Program::Program(const std::string &text, const std::string &entry,
                 const std::string &chipName, const std::string &coschedule,
                 const std::string &cacheDirectory, int deviceOrdinal)
    : device(deviceOrdinal) {
  DialectRegistry registry;
  registerAllIsmDialects(registry);
  context = std::make_unique<MLIRContext>(registry);
  context->loadAllAvailableDialects();
  DiagnosticCollector diagnostics(context.get());

  module = parseSourceString<ModuleOp>(text, context.get());
  if (!module)
    diagnostics.raise(ErrorKind::Parse, "the module does not parse");
  if (failed(verify(*module)))
    diagnostics.raise(ErrorKind::Verification, "the module does not verify");

  std::optional<CoscheduleMode> parsed = parseCoscheduleMode(coschedule);
  if (!parsed)
    fail("coschedule must be fused, sequential or streams, not '" + coschedule +
         "'");
  mode = *parsed;

  auto entryOp = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      *module, StringAttr::get(context.get(), entry));
  if (!entry.empty() && (!entryOp || entryOp.isExternal()))
    fail("the module has no host function @" + entry);
  addDirectLaunchFunctions(*module);

  // The chip: the caller's, or the device's own.
  chip = chipName;
  if (chip.empty()) {
    llvm::Expected<cuda::Driver &> driver = cuda::Driver::get();
    if (!driver)
      throw IsmError(ErrorKind::RuntimeUnavailable,
                     llvm::toString(driver.takeError()) +
                         " (pass chip= to compile without a GPU)");
    llvm::Expected<cuda::DeviceInfo> info = driver->getDeviceInfo(device);
    if (!info)
      throw IsmError(ErrorKind::RuntimeUnavailable,
                     llvm::toString(info.takeError()));
    chip = info->chip();
  }

  PTXOptions options;
  options.chip = chip;
  std::optional<CompileCache> cache;
  if (!cacheDirectory.empty())
    cache.emplace(cacheDirectory);
  llvm::Expected<CompiledModule> result = compileModuleCached(
      *module, options, mode, /*trace=*/false, cache ? &*cache : nullptr,
      &cacheHit, &warnings, &cacheKey);
  if (!result)
    diagnostics.raise(ErrorKind::Compile, llvm::toString(result.takeError()));
  compiled = std::move(*result);
  compilerWarnings = compiled.warnings;
  ptx = compiled.ptx;
  execution.coschedule = mode;
  execution.fusedKernels = compiled.coschedules;
  execution.unfused = compiled.unfused;

  // The host functions: the entry first.
  size_t widest = 0;
  auto addFunction = [&](func::FuncOp op) {
    Function fn;
    fn.op = op;
    for (Type type : op.getFunctionType().getInputs()) {
      Param param;
      param.type = type;
      if (auto memref = dyn_cast<MemRefType>(type)) {
        param.isBuffer = true;
        param.shape.assign(memref.getShape().begin(), memref.getShape().end());
      } else {
        param.isFloat = isa<FloatType>(type);
      }
      fn.params.push_back(std::move(param));
    }
    widest = std::max(widest, fn.params.size());
    functions.push_back(std::move(fn));
  };
  if (entryOp)
    addFunction(entryOp);
  for (auto op : module->getOps<func::FuncOp>())
    if (op.getSymName().starts_with(kDirectLaunchPrefix))
      addFunction(op);
  bound.resize(widest);
  deviceArgs.resize(widest);
}

std::vector<std::tuple<
    std::string,
    std::vector<std::tuple<std::string, std::string, std::vector<int64_t>>>>>
Program::getFunctions() const {
  std::vector<std::tuple<
      std::string,
      std::vector<std::tuple<std::string, std::string, std::vector<int64_t>>>>>
      out;
  for (const Function &fn : functions) {
    std::vector<std::tuple<std::string, std::string, std::vector<int64_t>>>
        params;
    for (const Param &param : fn.params) {
      if (param.isBuffer) {
        std::vector<int64_t> shape;
        for (int64_t size : param.shape)
          shape.push_back(ShapedType::isDynamic(size) ? -1 : size);
        params.emplace_back(
            "buffer",
            typeToString(cast<MemRefType>(param.type).getElementType()),
            std::move(shape));
      } else {
        params.emplace_back("scalar", typeToString(param.type),
                            std::vector<int64_t>{});
      }
    }
    func::FuncOp op = fn.op;
    out.emplace_back(op.getSymName().str(), std::move(params));
  }
  return out;
}

std::vector<std::tuple<std::string, unsigned, unsigned, unsigned, bool>>
Program::getKernels() const {
  std::vector<std::tuple<std::string, unsigned, unsigned, unsigned, bool>> out;
  for (const auto &entry : compiled.kernels) {
    const CompiledKernel &k = entry.getValue();
    out.emplace_back(entry.getKey().str(), k.numThreads, k.sharedMemoryBytes,
                     unsigned(k.tma.size()), k.persistent);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void Program::ensureGPU() {
  if (launcher) {
    // Another thread, or a library that switched contexts, may have left a
    // different context current.
    if (llvm::Error error = gpu->makeCurrent())
      fail(llvm::toString(std::move(error)));
    return;
  }
  llvm::Expected<std::unique_ptr<cuda::Context>> created =
      cuda::Context::create(device);
  if (!created)
    throw IsmError(ErrorKind::RuntimeUnavailable,
                   llvm::toString(created.takeError()));
  gpu = std::move(*created);
  llvm::Expected<cuda::CUmodule> loaded = gpu->loadModule(compiled.ptx);
  if (!loaded)
    fail(llvm::toString(loaded.takeError()));
  cuModule = *loaded;
  launcher = std::make_unique<GPULauncher>(*gpu, compiled, deviceArgs,
                                           /*stream=*/nullptr, cuModule);
}

Program::~Program() {
  if (gpu && orderEvent)
    llvm::consumeError(gpu->destroyEvent(orderEvent));
}

void Program::waitFor(uintptr_t stream,
                      const std::vector<uintptr_t> &producers) {
  ensureGPU();
  for (uintptr_t producer : producers) {
    if (producer == stream)
      continue;
    if (!orderEvent) {
      llvm::Expected<cuda::CUevent> created =
          gpu->createEvent(cuda::kEventDisableTiming);
      if (!created)
        fail(llvm::toString(created.takeError()));
      orderEvent = *created;
    }
    // cuStreamWaitEvent takes the event's state when it is called, so the
    // next producer can record the same event.
    if (llvm::Error error =
            gpu->record(orderEvent, reinterpret_cast<cuda::CUstream>(producer)))
      fail("waiting for the stream of a __cuda_array_interface__ argument: " +
           llvm::toString(std::move(error)));
    if (llvm::Error error = gpu->waitEvent(
            reinterpret_cast<cuda::CUstream>(stream), orderEvent))
      fail("waiting for the stream of a __cuda_array_interface__ argument: " +
           llvm::toString(std::move(error)));
  }
}

/// `value` as a 64-bit integer; throws naming argument `i` otherwise.
static int64_t toInt(PyObject *value, size_t i, const char *what) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    throw nb::type_error(
        llvm::formatv("argument #{0}: {1} must be an integer", i, what)
            .str()
            .c_str());
  }
  if (overflow)
    throw nb::value_error(
        llvm::formatv("argument #{0}: {1} does not fit in 64 bits", i, what)
            .str()
            .c_str());
  return v;
}

void Program::launch(size_t index, nb::handle args, uintptr_t stream) {
  if (index >= functions.size())
    fail(llvm::formatv("no host function #{0}", index).str());
  const Function &fn = functions[index];
  func::FuncOp op = fn.op;
  PyObject *tuple = args.ptr();
  if (!PyTuple_Check(tuple))
    fail("the arguments must be a tuple");
  size_t n = PyTuple_Size(tuple);
  if (n != fn.params.size())
    throw nb::type_error(llvm::formatv("@{0} takes {1} argument(s), got {2}",
                                       op.getSymName(), fn.params.size(), n)
                             .str()
                             .c_str());
  for (size_t i = 0; i < n; ++i) {
    const Param &param = fn.params[i];
    PyObject *item = PyTuple_GetItem(tuple, i);
    BoundArg &arg = bound[i];
    arg.type = param.type;
    arg.isBuffer = param.isBuffer;
    if (!param.isBuffer) {
      if (param.isFloat) {
        double v = PyFloat_AsDouble(item);
        if (v == -1.0 && PyErr_Occurred()) {
          PyErr_Clear();
          throw nb::type_error(
              llvm::formatv("argument #{0} must be a number for {1}", i,
                            typeToString(param.type))
                  .str()
                  .c_str());
        }
        arg.floatValue = v;
      } else {
        arg.intValue = toInt(item, i, "the scalar");
      }
      continue;
    }
    if (!PyTuple_Check(item) || PyTuple_Size(item) != 2)
      throw nb::type_error(
          llvm::formatv("argument #{0}: a buffer is passed as (pointer, "
                        "shape)",
                        i)
              .str()
              .c_str());
    PyObject *shape = PyTuple_GetItem(item, 1);
    if (!PyTuple_Check(shape))
      throw nb::type_error(
          llvm::formatv("argument #{0}: the shape must be a tuple", i)
              .str()
              .c_str());
    size_t rank = PyTuple_Size(shape);
    if (rank != param.shape.size())
      throw nb::value_error(
          llvm::formatv("argument #{0} has {1} dimension(s) but @{2} takes "
                        "{3}",
                        i, rank, op.getSymName(), typeToString(param.type))
              .str()
              .c_str());
    DeviceArg &device = deviceArgs[i];
    device.ptr = static_cast<cuda::CUdeviceptr>(
        toInt(PyTuple_GetItem(item, 0), i, "the data pointer"));
    device.shape.resize(rank);
    for (size_t d = 0; d < rank; ++d) {
      int64_t size = toInt(PyTuple_GetItem(shape, d), i, "a size");
      if (!param.accepts(d, size))
        throw nb::value_error(
            llvm::formatv("argument #{0} dimension {1} is {2} but @{3} "
                          "takes {4}",
                          i, d, size, op.getSymName(), typeToString(param.type))
                .str()
                .c_str());
      device.shape[d] = size;
    }
    arg.buffer.shape = device.shape;
  }
  run(index, n, stream);
}

void Program::run(size_t index, size_t n, uintptr_t stream) {
  ensureGPU();
  launcher->rebind(llvm::ArrayRef(deviceArgs).take_front(n),
                   reinterpret_cast<cuda::CUstream>(stream));
  if (llvm::Error error = executeHostFunction(
          functions[index].op, llvm::ArrayRef(bound).take_front(n), *launcher,
          execution))
    fail(llvm::toString(std::move(error)));
}

namespace {
/// The attribute names the fast path looks up, interned once.
struct TorchNames {
  PyObject *dtype = PyUnicode_InternFromString("dtype");
  PyObject *getDevice = PyUnicode_InternFromString("get_device");
  PyObject *isContiguous = PyUnicode_InternFromString("is_contiguous");
  PyObject *dataPtr = PyUnicode_InternFromString("data_ptr");
  PyObject *shape = PyUnicode_InternFromString("shape");
};
} // namespace

static const TorchNames &getTorchNames() {
  static const TorchNames *names = new TorchNames();
  return *names;
}

/// `object.name()`, a new reference; null (error cleared) if it raised.
static PyObject *callMethod(PyObject *object, PyObject *name) {
  // A free slot before `self` lets the call prepend without copying.
  PyObject *slots[] = {nullptr, object};
  PyObject *result = PyObject_VectorcallMethod(
      name, slots + 1, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
  if (!result)
    PyErr_Clear();
  return result;
}

/// `value` as an int64 when it is an int (not a bool) that fits.
static std::optional<int64_t> getExactInt(PyObject *value) {
  if (!value || !PyLong_CheckExact(value))
    return std::nullopt;
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
  if (overflow || (v == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return std::nullopt;
  }
  return v;
}

/// `object.name()` as an int64, when it returns an int.
static std::optional<int64_t> callIntMethod(PyObject *object, PyObject *name) {
  PyObject *result = callMethod(object, name);
  std::optional<int64_t> v = getExactInt(result);
  Py_XDECREF(result);
  return v;
}

void Program::bindTorch(nb::handle tensorType, nb::handle currentStream,
                        nb::dict dtypes) {
  if (!PyType_Check(tensorType.ptr()) || !PyCallable_Check(currentStream.ptr()))
    throw nb::type_error("bind_torch takes torch.Tensor and a callable");
  for (Function &fn : functions)
    for (Param &param : fn.params) {
      param.torchDtypes.clear();
      if (!param.isBuffer)
        continue;
      std::string element =
          typeToString(cast<MemRefType>(param.type).getElementType());
      PyObject *accepted = PyDict_GetItemString(dtypes.ptr(), element.c_str());
      if (!accepted || !PyTuple_Check(accepted))
        continue; // no torch dtype: such buffers take the Python path
      for (Py_ssize_t i = 0, e = PyTuple_Size(accepted); i < e; ++i) {
        PyObject *dtype = PyTuple_GetItem(accepted, i);
        Py_INCREF(dtype);
        param.torchDtypes.push_back(dtype);
      }
    }
  Py_INCREF(tensorType.ptr());
  Py_INCREF(currentStream.ptr());
  deviceNumber = PyLong_FromLong(device);
  torchCurrentStream = currentStream.ptr();
  torchTensorType = tensorType.ptr();
  (void)getTorchNames();
}

bool Program::bindFast(size_t i, const Param &param, PyObject *item) {
  BoundArg &arg = bound[i];
  arg.type = param.type;
  arg.isBuffer = param.isBuffer;
  if (!param.isBuffer) {
    if (std::optional<int64_t> v = getExactInt(item)) {
      if (param.isFloat)
        arg.floatValue = static_cast<double>(*v);
      else
        arg.intValue = *v;
      return true;
    }
    if (param.isFloat && PyFloat_CheckExact(item)) {
      arg.floatValue = PyFloat_AsDouble(item);
      return true;
    }
    return false;
  }
  if (!PyObject_TypeCheck(item,
                          reinterpret_cast<PyTypeObject *>(torchTensorType)))
    return false;
  const TorchNames &names = getTorchNames();
  PyObject *dtype = PyObject_GetAttr(item, names.dtype);
  if (!dtype) {
    PyErr_Clear();
    return false;
  }
  bool accepted = llvm::is_contained(param.torchDtypes, dtype);
  Py_DECREF(dtype);
  if (!accepted || callIntMethod(item, names.getDevice) != device)
    return false;
  PyObject *contiguous = callMethod(item, names.isContiguous);
  Py_XDECREF(contiguous);
  if (contiguous != Py_True)
    return false;
  std::optional<int64_t> pointer = callIntMethod(item, names.dataPtr);
  if (!pointer)
    return false;
  PyObject *shape = PyObject_GetAttr(item, names.shape);
  if (!shape) {
    PyErr_Clear();
    return false;
  }
  DeviceArg &deviceArg = deviceArgs[i];
  size_t rank = PyTuple_Check(shape) ? PyTuple_Size(shape) : ~size_t(0);
  bool matches = rank == param.shape.size();
  if (matches) {
    deviceArg.shape.resize(rank);
    for (size_t d = 0; d < rank && matches; ++d) {
      std::optional<int64_t> size = getExactInt(PyTuple_GetItem(shape, d));
      matches = size && param.accepts(d, *size);
      if (matches)
        deviceArg.shape[d] = *size;
    }
  }
  Py_DECREF(shape);
  if (!matches)
    return false;
  deviceArg.ptr = static_cast<cuda::CUdeviceptr>(*pointer);
  arg.buffer.shape = deviceArg.shape;
  return true;
}

bool Program::launchFast(size_t index, nb::handle args, nb::handle tail,
                         nb::handle stream) {
  if (!torchTensorType || index >= functions.size())
    return false;
  const Function &fn = functions[index];
  PyObject *head = args.ptr(), *rest = tail.ptr();
  if (!PyTuple_Check(head) || !PyTuple_Check(rest))
    return false;
  size_t numHead = PyTuple_Size(head), n = numHead + PyTuple_Size(rest);
  if (n != fn.params.size())
    return false;
  for (size_t i = 0; i < n; ++i) {
    PyObject *item = i < numHead ? PyTuple_GetItem(head, i)
                                 : PyTuple_GetItem(rest, i - numHead);
    if (!bindFast(i, fn.params[i], item))
      return false;
  }
  uintptr_t handle = 0;
  if (stream.is_none()) {
    PyObject *slots[] = {nullptr, deviceNumber};
    PyObject *current =
        PyObject_Vectorcall(torchCurrentStream, slots + 1,
                            1 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
    if (!current)
      PyErr_Clear();
    std::optional<int64_t> raw = getExactInt(current);
    Py_XDECREF(current);
    if (!raw)
      return false;
    handle = static_cast<uintptr_t>(*raw);
  } else if (std::optional<int64_t> raw = getExactInt(stream.ptr())) {
    handle = static_cast<uintptr_t>(*raw);
  } else {
    return false;
  }
  run(index, n, handle);
  return true;
}

void mlir::ism::python::registerProgramBindings(nb::module_ &m) {
  // Compiled programs live in module-level caches (ism.compile's, and the
  // globals of user modules) until the interpreter is gone; they are not
  // leaks.
  nb::set_leak_warnings(false);
  m.def(
      "default_cache_dir",
      []() -> std::string {
        return isCacheDisabledByEnvironment() ? std::string()
                                              : getDefaultCacheDirectory();
      },
      "The compile cache's directory, or '' when the environment disables "
      "it.");
  m.def("compiler_version", &getCompilerVersion,
        "The compiler's identity (version, commit, and the build of its "
        "binary), as the compile cache keys entries by it.");
  // Compiling touches no Python object: the GIL is released so that
  // threads (ism.autotune's) compile candidates in parallel, each in its
  // own MLIRContext.
  nb::class_<Program>(m, "Program")
      .def(nb::init<const std::string &, const std::string &,
                    const std::string &, const std::string &,
                    const std::string &, int>(),
           nb::arg("text"), nb::arg("entry"), nb::arg("chip"),
           nb::arg("coschedule"), nb::arg("cache_dir"), nb::arg("device"),
           nb::call_guard<nb::gil_scoped_release>(),
           "Parses and compiles a module (through the compile cache when "
           "cache_dir is not empty) for launches on device memory.")
      .def("functions", &Program::getFunctions,
           "[(name, [(kind, type, shape)])] of the host functions: the entry "
           "first, then one __ism_launch_<kernel> per kernel.")
      .def("kernels", &Program::getKernels,
           "[(name, threads, shared memory bytes, TMA operands, persistent)]")
      .def("launch", &Program::launch, nb::arg("index"), nb::arg("args"),
           nb::arg("stream"),
           "Runs host function #index with args ((pointer, shape) per "
           "buffer, a number per scalar) on the CUDA stream handle.")
      .def("launch_fast", &Program::launchFast, nb::arg("index"),
           nb::arg("args"), nb::arg("tail"), nb::arg("stream").none(),
           "launch_fast(index, args, tail, stream) -> bool: runs host "
           "function #index on torch tensors and numbers without converting "
           "them in Python; False (nothing launched, nothing raised) when an "
           "argument or the stream needs the Python path.")
      .def("bind_torch", &Program::bindTorch, nb::arg("tensor_type"),
           nb::arg("current_stream"), nb::arg("dtypes"),
           "Gives launch_fast torch.Tensor, torch's current-stream function "
           "and {element type: (torch dtypes)}.")
      .def_prop_ro("torch_bound", &Program::isTorchBound)
      .def("wait_for", &Program::waitFor, nb::arg("stream"),
           nb::arg("producers"),
           "Makes the work later submitted to the stream wait for the work "
           "already submitted to each producer stream (events; the host "
           "does not wait).")
      .def_ro("chip", &Program::chip)
      .def_ro("device", &Program::device)
      .def_ro("cache_hit", &Program::cacheHit)
      .def_ro("cache_key", &Program::cacheKey)
      .def_ro("warnings", &Program::warnings)
      .def_ro("compiler_warnings", &Program::compilerWarnings)
      .def_ro("ptx", &Program::ptx);
}
