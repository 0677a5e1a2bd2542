//===- ArgSpec.cpp - Entry arguments from the command line ----------------===//

#include "ism/Runner/ArgSpec.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdlib>

using namespace mlir;
using namespace mlir::ism::runner;

/// Parses "1024", "64x128" or "scalar" into `shape`. The error names the
/// size that is not a non-negative 64-bit integer, or is empty when the text
/// is not a shape at all.
static bool parseShape(llvm::StringRef text,
                       llvm::SmallVectorImpl<int64_t> &shape,
                       std::string &error) {
  if (text == "scalar")
    return true;
  llvm::SmallVector<llvm::StringRef, 4> parts;
  text.split(parts, 'x');
  for (auto [d, part] : llvm::enumerate(parts)) {
    llvm::StringRef digits = part;
    bool negative = digits.consume_front("-");
    if (digits.empty() || !llvm::all_of(digits, llvm::isDigit))
      return false;
    int64_t size;
    if (part.getAsInteger(10, size)) {
      error =
          llvm::formatv("dimension {0}, {1}, does not fit in 64 bits", d, part)
              .str();
      return false;
    }
    if (negative && size != 0) {
      error = llvm::formatv("dimension {0} is {1}; sizes must not be negative",
                            d, size)
                  .str();
      return false;
    }
    shape.push_back(size);
  }
  return true;
}

llvm::Expected<ArgSpec> mlir::ism::runner::parseArgSpec(llvm::StringRef text,
                                                        unsigned index) {
  ArgSpec spec;
  spec.text = text.str();
  auto fail = [&](const llvm::Twine &why) {
    return llvm::createStringError(
        llvm::formatv("--arg {0} ('{1}'): {2}", index, text, why.str()).str());
  };
  llvm::SmallVector<llvm::StringRef, 3> parts;
  text.split(parts, ':', 2);

  if (parts.size() == 1) {
    // A bare literal is a scalar of the parameter's type.
    spec.isScalar = true;
    spec.scalarText = text.str();
    return spec;
  }
  if (parts[0] == "npy") {
    spec.contentsGiven = true;
    spec.npyPath = text.drop_front(4).str();
    if (spec.npyPath.empty()) // found by ism-run-args-fuzzer: it crashed
      return fail("expected npy:PATH.npy, with a path");
    return spec;
  }
  spec.dtype = parseDType(parts[0]);
  if (!spec.dtype)
    return fail(
        "unknown dtype '" + parts[0] +
        "' (expected f16, bf16, f32, f64, f8e4m3, f8e5m2, i8, i32 or i64)");
  llvm::StringRef rest = text.drop_front(parts[0].size() + 1);
  if (rest.consume_front("scalar=")) {
    spec.isScalar = true;
    spec.scalarText = rest.str();
    return spec;
  }
  std::string shapeError;
  if (!parseShape(parts[1], spec.shape, shapeError))
    return fail("cannot parse shape '" + parts[1] + "' (" +
                (shapeError.empty()
                     ? std::string("expected sizes like 1024 or 64x128")
                     : shapeError) +
                ")");
  // A shape whose elements or bytes do not fit in 64 bits is an error here,
  // before the signature is looked at.
  if (llvm::Expected<uint64_t> bytes = getBufferBytes(*spec.dtype, spec.shape);
      !bytes)
    return fail(llvm::toString(bytes.takeError()));
  if (parts.size() < 3)
    return spec;
  llvm::StringRef init = parts[2];
  spec.contentsGiven = true;
  if (init.consume_front("npy=") || init.ends_with(".npy")) {
    spec.npyPath = init.str();
    return spec;
  }
  // randn*S, uniform*S: scaled values
  auto [name, scaleText] = init.split('*');
  std::optional<Init> parsed = parseInit(name);
  if (!parsed)
    return fail("unknown initialiser '" + name +
                "' (expected randn, uniform, zeros, ones, arange, poison or "
                "a .npy path; randn and uniform take a scale, randn*0.02)");
  spec.init = *parsed;
  if (init.contains('*')) {
    if (spec.init != Init::Randn && spec.init != Init::Uniform)
      return fail("only randn and uniform take a scale, not '" + name + "'");
    double scale;
    if (scaleText.getAsDouble(scale) || !std::isfinite(scale))
      return fail("cannot parse the scale '" + scaleText + "' of '" + init +
                  "' (expected a finite number, as in randn*0.02)");
    spec.initScale = scale;
  }
  return spec;
}

/// The type of a scalar for messages.
static std::string typeString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// Parses a scalar literal of type `type` into `arg`.
static llvm::Error
bindScalar(const ArgSpec &spec, Type type, BoundArg &arg,
           const std::function<llvm::Error(const llvm::Twine &)> &fail) {
  arg.type = type;
  llvm::StringRef literal = spec.scalarText;
  if (spec.dtype) {
    std::optional<DType> expected = getDType(type);
    if (!expected || *expected != *spec.dtype)
      return fail("the parameter is " + typeString(type) + ", not " +
                  getDTypeName(*spec.dtype));
  }
  if (isa<FloatType>(type)) {
    std::string owned = literal.str();
    char *end = nullptr;
    double value = std::strtod(owned.c_str(), &end);
    if (owned.empty() || *end != '\0')
      return fail("cannot parse '" + literal + "' as " + typeString(type));
    std::optional<DType> dtype = getDType(type);
    arg.floatValue = dtype ? roundToDType(value, *dtype) : value;
    return llvm::Error::success();
  }
  if (type.isIntOrIndex()) {
    int64_t value;
    if (literal.getAsInteger(0, value))
      return fail("cannot parse '" + literal + "' as " + typeString(type));
    arg.intValue = value;
    return llvm::Error::success();
  }
  return fail("parameters of type " + typeString(type) + " are not supported");
}

llvm::Expected<DType> mlir::ism::runner::getBufferDType(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return llvm::createStringError("the parameter is not a memref");
  if (!memref.getLayout().isIdentity())
    return llvm::createStringError(
        "only memrefs with the identity layout are supported");
  std::optional<DType> dtype = getDType(memref.getElementType());
  if (!dtype || memref.getElementType().isIndex())
    return llvm::createStringError("element type " +
                                   typeString(memref.getElementType()) +
                                   " is not supported");
  return *dtype;
}

llvm::Error mlir::ism::runner::checkBufferShape(MemRefType type,
                                                llvm::ArrayRef<int64_t> shape) {
  if (static_cast<int64_t>(shape.size()) != type.getRank())
    return llvm::createStringError(
        llvm::formatv("rank {0} given, the memref has rank {1}", shape.size(),
                      type.getRank())
            .str());
  for (auto [dim, size] : llvm::enumerate(type.getShape()))
    if (!ShapedType::isDynamic(size) && size != shape[dim])
      return llvm::createStringError(
          llvm::formatv("dimension {0} is {1} but the memref fixes it to {2}",
                        dim, shape[dim], size)
              .str());
  return llvm::Error::success();
}

/// `a + b`, saturating at UINT64_MAX.
static uint64_t addSaturating(uint64_t a, uint64_t b) {
  uint64_t sum;
  return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

/// Checks that a buffer of `dtype` and `shape`, with what `overhead` says the
/// run will add for it, fits in the host memory left after `used` bytes of
/// the arguments before it (out of `available`); adds its bytes to `used`.
static llvm::Error reserveHostMemory(DType dtype, llvm::ArrayRef<int64_t> shape,
                                     const BufferOverhead &overhead,
                                     uint64_t available, uint64_t &used) {
  llvm::Expected<uint64_t> own = getBufferBytes(dtype, shape);
  if (!own)
    return own.takeError();
  uint64_t elements = *own / getDTypeSize(dtype);
  uint64_t extra = 0;
  std::string extraText;
  if (overhead.reference) {
    uint64_t bytes;
    if (__builtin_mul_overflow(elements, uint64_t(8), &bytes))
      bytes = UINT64_MAX;
    extra = addSaturating(extra, bytes);
    extraText += " and " + formatBytes(bytes) +
                 " more for its float64 copy in the reference interpreter";
  }
  if (overhead.copy) {
    extra = addSaturating(extra, *own);
    extraText += (extraText.empty() ? " and " : ", and ") + formatBytes(*own) +
                 " more for the copy read back from the GPU";
  }
  uint64_t need = addSaturating(*own, extra);
  uint64_t total = addSaturating(used, need);
  if (total <= available) {
    used = total;
    return llvm::Error::success();
  }
  std::string message =
      llvm::formatv("a {0} buffer of {1} elements needs {2}{3}",
                    getDTypeName(dtype), elements, formatBytes(*own), extraText)
          .str();
  // The buffers before it are named only when they make the difference.
  if (need <= available)
    message += "; with the " + formatBytes(used) +
               " of the arguments before it, that is " + formatBytes(total);
  return llvm::createStringError(message + ", more than the " +
                                 formatBytes(available) +
                                 " of memory available");
}

llvm::Expected<std::vector<BoundArg>>
mlir::ism::runner::bindArguments(func::FuncOp entry,
                                 llvm::ArrayRef<ArgSpec> specs, uint64_t seed,
                                 llvm::ArrayRef<BufferOverhead> overheads) {
  FunctionType type = entry.getFunctionType();
  if (specs.size() != type.getNumInputs())
    return llvm::createStringError(
        llvm::formatv("@{0} takes {1} argument(s) but {2} --arg were given",
                      entry.getName(), type.getNumInputs(), specs.size())
            .str());
  std::vector<BoundArg> args(specs.size());
  // Host memory: read once; each buffer's pages are written when it is
  // filled, so the arguments' bytes are added up here.
  uint64_t available = getAvailableHostMemory();
  uint64_t used = 0;
  for (auto [index, spec] : llvm::enumerate(specs)) {
    Type argType = type.getInput(index);
    auto fail = [&, index = index,
                 &spec = spec](const llvm::Twine &why) -> llvm::Error {
      return llvm::createStringError(
          llvm::formatv("--arg {0} ('{1}') for @{2} argument {0} ({3}): {4}",
                        index, spec.text, entry.getName(), typeString(argType),
                        why.str())
              .str());
    };
    BoundArg &arg = args[index];
    auto memref = dyn_cast<MemRefType>(argType);
    if (!memref) {
      if (!spec.isScalar)
        return fail("the parameter is a scalar; give a value such as 1e-5 "
                    "or f32:scalar=1e-5");
      if (llvm::Error error = bindScalar(spec, argType, arg, fail))
        return std::move(error);
      continue;
    }
    if (spec.isScalar)
      return fail("the parameter is a memref; give dtype:shape:init");
    llvm::Expected<DType> dtype = getBufferDType(memref);
    if (!dtype)
      return fail(llvm::toString(dtype.takeError()));
    arg.type = argType;
    arg.isBuffer = true;
    BufferOverhead overhead =
        index < overheads.size() ? overheads[index] : BufferOverhead();
    if (!spec.npyPath.empty()) {
      llvm::Expected<HostBuffer> loaded = readNpy(spec.npyPath, *dtype);
      if (!loaded)
        return fail(llvm::toString(loaded.takeError()));
      arg.buffer = std::move(*loaded);
      if (llvm::Error error = reserveHostMemory(*dtype, arg.buffer.shape,
                                                overhead, available, used))
        return fail(llvm::toString(std::move(error)));
    } else {
      if (*spec.dtype != *dtype)
        return fail("dtype " + getDTypeName(*spec.dtype) +
                    " does not match the element type " +
                    typeString(memref.getElementType()));
      // The shape is checked before the memory: a wrong size says so, not
      // that it would not fit.
      if (llvm::Error error = checkBufferShape(memref, spec.shape))
        return fail(llvm::toString(std::move(error)));
      if (llvm::Error error =
              reserveHostMemory(*dtype, spec.shape, overhead, available, used))
        return fail(llvm::toString(std::move(error)));
      arg.buffer = HostBuffer(*dtype, spec.shape);
    }
    if (spec.dtype && *spec.dtype != *dtype)
      return fail("dtype " + getDTypeName(*spec.dtype) +
                  " does not match the element type " +
                  typeString(memref.getElementType()));
    if (llvm::Error error = checkBufferShape(memref, arg.buffer.shape))
      return fail(llvm::toString(std::move(error)));
    if (spec.npyPath.empty())
      fill(arg.buffer, spec.init, seed + index, spec.initScale);
  }
  return std::move(args);
}
