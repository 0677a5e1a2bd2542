//===- ArgSpec.cpp - Entry arguments from the command line ----------------===//

#include "ism/Runner/ArgSpec.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdlib>

using namespace mlir;
using namespace mlir::ism::runner;

/// Parses "1024", "64x128" or "scalar" into `shape`.
static bool parseShape(llvm::StringRef text,
                       llvm::SmallVectorImpl<int64_t> &shape) {
  if (text == "scalar")
    return true;
  llvm::SmallVector<llvm::StringRef, 4> parts;
  text.split(parts, 'x');
  for (llvm::StringRef part : parts) {
    int64_t size;
    if (part.empty() || part.getAsInteger(10, size) || size < 0)
      return false;
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
    spec.npyPath = text.drop_front(4).str();
    return spec;
  }
  spec.dtype = parseDType(parts[0]);
  if (!spec.dtype)
    return fail("unknown dtype '" + parts[0] +
                "' (expected f16, bf16, f32, f64, i8, i32 or i64)");
  llvm::StringRef rest = text.drop_front(parts[0].size() + 1);
  if (rest.consume_front("scalar=")) {
    spec.isScalar = true;
    spec.scalarText = rest.str();
    return spec;
  }
  if (!parseShape(parts[1], spec.shape))
    return fail("cannot parse shape '" + parts[1] +
                "' (expected sizes like 1024 or 64x128)");
  if (parts.size() < 3)
    return spec;
  llvm::StringRef init = parts[2];
  if (init.consume_front("npy=") || init.ends_with(".npy")) {
    spec.npyPath = init.str();
    return spec;
  }
  std::optional<Init> parsed = parseInit(init);
  if (!parsed)
    return fail("unknown initialiser '" + init +
                "' (expected randn, uniform, zeros, ones, arange, poison or "
                "a .npy path)");
  spec.init = *parsed;
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

llvm::Expected<std::vector<BoundArg>>
mlir::ism::runner::bindArguments(func::FuncOp entry,
                                 llvm::ArrayRef<ArgSpec> specs, uint64_t seed) {
  FunctionType type = entry.getFunctionType();
  if (specs.size() != type.getNumInputs())
    return llvm::createStringError(
        llvm::formatv("@{0} takes {1} argument(s) but {2} --arg were given",
                      entry.getName(), type.getNumInputs(), specs.size())
            .str());
  std::vector<BoundArg> args(specs.size());
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
    if (!spec.npyPath.empty()) {
      llvm::Expected<HostBuffer> loaded = readNpy(spec.npyPath, *dtype);
      if (!loaded)
        return fail(llvm::toString(loaded.takeError()));
      arg.buffer = std::move(*loaded);
    } else {
      if (*spec.dtype != *dtype)
        return fail("dtype " + getDTypeName(*spec.dtype) +
                    " does not match the element type " +
                    typeString(memref.getElementType()));
      arg.buffer = HostBuffer(*dtype, spec.shape);
    }
    if (spec.dtype && *spec.dtype != *dtype)
      return fail("dtype " + getDTypeName(*spec.dtype) +
                  " does not match the element type " +
                  typeString(memref.getElementType()));
    if (llvm::Error error = checkBufferShape(memref, arg.buffer.shape))
      return fail(llvm::toString(std::move(error)));
    if (spec.npyPath.empty())
      fill(arg.buffer, spec.init, seed + index);
  }
  return std::move(args);
}
