//===- HostExecutor.cpp - Interpreter of host functions -------------------===//

#include "ism/Runner/HostExecutor.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ism;
using namespace mlir::ism::runner;

LaunchHandler::~LaunchHandler() = default;

llvm::Error
LaunchHandler::launchConcurrently(CoscheduleOp op,
                                  llvm::ArrayRef<RegionLaunch> launches) {
  for (const RegionLaunch &launch : launches)
    if (llvm::Error error =
            this->launch(launch.op, launch.grid.data(), launch.args))
      return error;
  return llvm::Error::success();
}

llvm::Error
LaunchHandler::launchFused(CoscheduleOp op, llvm::StringRef kernel,
                           llvm::ArrayRef<std::array<unsigned, 3>> grids,
                           llvm::ArrayRef<HostValue> args) {
  return llvm::createStringError(
      "fused kernel '" + kernel.str() +
      "': this launcher runs the original launches only (fused kernels run "
      "on the GPU)");
}

llvm::Expected<unsigned>
LaunchHandler::allocate(unsigned, DType, llvm::ArrayRef<int64_t>, bool) {
  return llvm::createStringError(
      "this launcher has no temporary buffers (memref.alloc)");
}

llvm::StringRef mlir::ism::runner::getCoscheduleModeName(CoscheduleMode mode) {
  switch (mode) {
  case CoscheduleMode::Fused:
    return "fused";
  case CoscheduleMode::Sequential:
    return "sequential";
  case CoscheduleMode::Streams:
    return "streams";
  }
  return "";
}

std::optional<CoscheduleMode>
mlir::ism::runner::parseCoscheduleMode(llvm::StringRef name) {
  for (CoscheduleMode mode : {CoscheduleMode::Fused, CoscheduleMode::Sequential,
                              CoscheduleMode::Streams})
    if (name == getCoscheduleModeName(mode))
      return mode;
  return std::nullopt;
}

/// The bit width of an integer or index type (index is 64).
static unsigned getWidth(Type type) {
  return type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
}

/// Sign-extends the low `width` bits of `v`.
static int64_t wrap(uint64_t v, unsigned width) {
  if (width >= 64)
    return static_cast<int64_t>(v);
  return static_cast<int64_t>(v << (64 - width)) >> (64 - width);
}

/// The low `width` bits of `v`, as unsigned.
static uint64_t unsignedOf(int64_t v, unsigned width) {
  if (width >= 64)
    return static_cast<uint64_t>(v);
  return static_cast<uint64_t>(v) & ((uint64_t(1) << width) - 1);
}

namespace {
/// Evaluates one host function.
class HostInterpreter {
public:
  HostInterpreter(LaunchHandler &handler, llvm::ArrayRef<BoundArg> args,
                  const HostExecutionOptions &options)
      : handler(handler), args(args), options(options) {}

  llvm::Error run(func::FuncOp entry);

private:
  llvm::Error execute(Operation *op);
  llvm::Error executeArith(Operation *op);
  llvm::Error executeLaunch(LaunchOp op);
  llvm::Error executeCoschedule(CoscheduleOp op);
  llvm::Expected<RegionLaunch> evaluateLaunch(LaunchOp op);
  void note(const llvm::Twine &text) {
    if (options.notes)
      options.notes->push_back(text.str());
  }
  llvm::Error executeGPULaunch(gpu::LaunchFuncOp op);
  llvm::Error executeAlloc(memref::AllocOp op);
  llvm::Error executeAssert(AssertOp op);
  /// Evaluates the function's ism.asserts, and the scalar arithmetic and
  /// argument dims they need, before anything runs.
  llvm::Error checkAsserts(func::FuncOp entry);
  /// The shape of buffer `buffer` (an argument or a temporary).
  const llvm::SmallVector<int64_t, 4> *getShape(unsigned buffer) const;
  /// The value of `value` as a launch dimension from 0 to `max`; the error
  /// names it as `what`.
  llvm::Expected<unsigned> getDim(Value value, llvm::StringRef what,
                                  int64_t max);

  llvm::Error fail(Operation *op, const llvm::Twine &why) {
    std::string location;
    llvm::raw_string_ostream os(location);
    os << op->getLoc();
    return llvm::createStringError(location + ": " + why.str());
  }

  LaunchHandler &handler;
  llvm::ArrayRef<BoundArg> args;
  const HostExecutionOptions &options;
  llvm::DenseMap<Value, HostValue> values;
  /// The ops checkAsserts evaluated, which the run does not evaluate again.
  llvm::DenseSet<Operation *> evaluated;
  /// The position of each ism.coschedule of the module in walk order (the
  /// numbering of CompiledModule::coschedules), for the fused mode.
  llvm::DenseMap<Operation *, unsigned> coscheduleIndex;
  /// The temporary buffers (memref.alloc) made so far: the handler's
  /// buffer number and the shape of each, in the order they were made.
  llvm::SmallVector<std::pair<unsigned, llvm::SmallVector<int64_t, 4>>>
      temporaries;
};
} // namespace

const llvm::SmallVector<int64_t, 4> *
HostInterpreter::getShape(unsigned buffer) const {
  if (buffer < args.size())
    return args[buffer].isBuffer ? &args[buffer].buffer.shape : nullptr;
  for (const auto &[number, shape] : temporaries)
    if (number == buffer)
      return &shape;
  return nullptr;
}

llvm::Error HostInterpreter::executeAlloc(memref::AllocOp op) {
  MemRefType type = op.getType();
  if (!type.getLayout().isIdentity() || type.getMemorySpace())
    return fail(op, "memref.alloc of a temporary buffer must have the "
                    "identity layout and the default memory space");
  llvm::Expected<DType> dtype = getBufferDType(type);
  if (!dtype)
    return fail(op, "memref.alloc: " + llvm::toString(dtype.takeError()));
  if (!op.getSymbolOperands().empty())
    return fail(op, "memref.alloc with symbol operands is not supported in "
                    "a host function");
  llvm::SmallVector<int64_t, 4> shape;
  auto dynamic = op.getDynamicSizes().begin();
  for (int64_t size : type.getShape()) {
    int64_t v =
        ShapedType::isDynamic(size) ? values.lookup(*dynamic++).intValue : size;
    if (v < 0)
      return fail(op, llvm::formatv("memref.alloc: size {0} is {1}; it must "
                                    "not be negative",
                                    shape.size(), v)
                          .str());
    shape.push_back(v);
  }
  if (llvm::Expected<uint64_t> bytes = getBufferBytes(*dtype, shape); !bytes)
    return fail(op, "memref.alloc: " + llvm::toString(bytes.takeError()));
  llvm::Expected<unsigned> number =
      handler.allocate(temporaries.size(), *dtype, shape,
                       op->hasAttr(IsmDialect::kZeroedAttrName));
  if (!number)
    return fail(op, "memref.alloc: " + llvm::toString(number.takeError()));
  if (*number < args.size())
    return fail(op, "memref.alloc: the launcher gave the temporary buffer "
                    "the number of an argument");
  temporaries.emplace_back(*number, shape);
  values[op.getResult()] = HostValue::getBuffer(*number);
  return llvm::Error::success();
}

llvm::Error HostInterpreter::executeAssert(AssertOp op) {
  if (values.lookup(op.getCondition()).intValue != 0)
    return llvm::Error::success();
  // The message with each {N} replaced by operand N's value.
  std::string text;
  llvm::raw_string_ostream os(text);
  StringRef message = op.getMessage();
  while (!message.empty()) {
    size_t open = message.find('{');
    os << message.take_front(open);
    if (open == StringRef::npos)
      break;
    size_t close = message.find('}', open);
    unsigned index = 0;
    message.slice(open + 1, close).getAsInteger(10, index);
    HostValue value = values.lookup(op.getValues()[index]);
    if (isa<FloatType>(op.getValues()[index].getType()))
      os << llvm::formatv("{0}", value.floatValue);
    else
      os << value.intValue;
    message = message.drop_front(close + 1);
  }
  auto func = op->getParentOfType<func::FuncOp>();
  return llvm::createStringError(
      (func ? "@" + func.getName().str() + ": " : std::string()) + text);
}

llvm::Error HostInterpreter::checkAsserts(func::FuncOp entry) {
  auto known = [&](Operation &op) {
    return llvm::all_of(op.getOperands(),
                        [&](Value v) { return values.count(v) != 0; });
  };
  for (Operation &op : entry.getBody().front()) {
    if (!known(op))
      continue;
    if (auto assertOp = dyn_cast<AssertOp>(op)) {
      if (llvm::Error error = executeAssert(assertOp))
        return error;
      evaluated.insert(&op);
      continue;
    }
    bool scalar =
        op.getDialect() && op.getDialect()->getNamespace() == "arith" &&
        op.getNumResults() == 1 && !isa<ShapedType>(op.getResult(0).getType());
    if (!scalar && !isa<memref::DimOp, memref::CastOp>(op))
      continue;
    // An op that fails here fails again, with its error, when it runs.
    if (llvm::Error error = execute(&op))
      llvm::consumeError(std::move(error));
    else
      evaluated.insert(&op);
  }
  return llvm::Error::success();
}

llvm::Error HostInterpreter::run(func::FuncOp entry) {
  if (entry.isExternal())
    return llvm::createStringError("@" + entry.getName().str() +
                                   " has no body");
  for (auto [index, arg] : llvm::enumerate(entry.getArguments())) {
    const BoundArg &bound = args[index];
    if (bound.isBuffer)
      values[arg] = HostValue::getBuffer(index);
    else if (isa<FloatType>(bound.type))
      values[arg] = HostValue::getFloat(bound.floatValue);
    else
      values[arg] = HostValue::getInt(bound.intValue);
  }
  if (!entry.getBody().hasOneBlock())
    return fail(entry, "host functions with more than one block are not "
                       "supported");
  if (llvm::Error error = checkAsserts(entry))
    return error;
  for (Operation &op : entry.getBody().front()) {
    // What checkAsserts evaluated (asserts that held, the scalars and dims
    // they needed) is not evaluated again: a host function runs on every
    // call, between the launches.
    if (evaluated.contains(&op))
      continue;
    if (llvm::Error error = execute(&op))
      return error;
  }
  return llvm::Error::success();
}

llvm::Error HostInterpreter::execute(Operation *op) {
  if (isa<func::ReturnOp>(op)) {
    if (op->getNumOperands())
      return fail(op, "the host function must not return values");
    return llvm::Error::success();
  }
  if (op->getDialect() && op->getDialect()->getNamespace() == "arith")
    return executeArith(op);
  if (auto dim = dyn_cast<memref::DimOp>(op)) {
    HostValue source = values.lookup(dim.getSource());
    HostValue index = values.lookup(dim.getIndex());
    const llvm::SmallVector<int64_t, 4> *shape =
        source.kind == HostValue::Kind::Buffer ? getShape(source.buffer)
                                               : nullptr;
    if (!shape || index.intValue < 0 ||
        index.intValue >= static_cast<int64_t>(shape->size()))
      return fail(op, "memref.dim index out of range");
    values[dim.getResult()] = HostValue::getInt((*shape)[index.intValue]);
    return llvm::Error::success();
  }
  if (auto alloc = dyn_cast<memref::AllocOp>(op))
    return executeAlloc(alloc);
  if (auto assertOp = dyn_cast<AssertOp>(op))
    return executeAssert(assertOp);
  if (isa<memref::DeallocOp>(op))
    return llvm::Error::success();
  if (auto cast = dyn_cast<memref::CastOp>(op)) {
    values[cast.getResult()] = values.lookup(cast.getSource());
    return llvm::Error::success();
  }
  if (auto launch = dyn_cast<LaunchOp>(op))
    return executeLaunch(launch);
  if (auto coschedule = dyn_cast<CoscheduleOp>(op))
    return executeCoschedule(coschedule);
  if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op))
    return executeGPULaunch(launch);
  if (isa<gpu::WaitOp>(op)) {
    // Launches are ordered on one stream; a wait has nothing to do.
    for (Value result : op->getResults())
      values[result] = HostValue::getInt(0);
    return llvm::Error::success();
  }
  return fail(op, "ism-run cannot execute '" + op->getName().getStringRef() +
                      "' in a host function (supported: arith on scalars, "
                      "memref.dim, memref.alloc, memref.dealloc, memref.cast, "
                      "ism.assert, ism.launch, ism.coschedule, "
                      "gpu.launch_func, func.return)");
}

llvm::Error HostInterpreter::executeArith(Operation *op) {
  if (op->getNumResults() != 1 || isa<ShapedType>(op->getResult(0).getType()))
    return fail(op, "'" + op->getName().getStringRef() +
                        "' on tensors or vectors is not supported in a host "
                        "function");
  Value result = op->getResult(0);
  Type type = result.getType();
  auto operand = [&](unsigned i) { return values.lookup(op->getOperand(i)); };

  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    if (auto attr = dyn_cast<IntegerAttr>(constant.getValue()))
      values[result] = HostValue::getInt(
          wrap(attr.getValue().getZExtValue(), getWidth(type)));
    else if (auto attr = dyn_cast<FloatAttr>(constant.getValue()))
      values[result] = HostValue::getFloat(attr.getValueAsDouble());
    else
      return fail(op, "unsupported constant");
    return llvm::Error::success();
  }

  if (isa<FloatType>(type) && op->getNumOperands() == 2 &&
      isa<FloatType>(op->getOperand(0).getType())) {
    double a = operand(0).floatValue, b = operand(1).floatValue;
    std::optional<double> r =
        llvm::TypeSwitch<Operation *, std::optional<double>>(op)
            .Case([&](arith::AddFOp) { return a + b; })
            .Case([&](arith::SubFOp) { return a - b; })
            .Case([&](arith::MulFOp) { return a * b; })
            .Case([&](arith::DivFOp) { return a / b; })
            .Case([&](arith::MaximumFOp) { return std::fmax(a, b); })
            .Case([&](arith::MinimumFOp) { return std::fmin(a, b); })
            .Default([](Operation *) { return std::nullopt; });
    if (!r)
      return fail(op, "'" + op->getName().getStringRef() +
                          "' is not supported in a host function");
    values[result] = HostValue::getFloat(*r);
    return llvm::Error::success();
  }

  if (isa<FloatType>(type)) {
    HostValue a = operand(0);
    Type from = op->getOperand(0).getType();
    std::optional<double> r =
        llvm::TypeSwitch<Operation *, std::optional<double>>(op)
            .Case([&](arith::SIToFPOp) {
              return double(wrap(a.intValue, getWidth(from)));
            })
            .Case([&](arith::UIToFPOp) {
              return double(unsignedOf(a.intValue, getWidth(from)));
            })
            .Case<arith::ExtFOp, arith::TruncFOp>(
                [&](Operation *) { return a.floatValue; })
            .Case([&](arith::NegFOp) { return -a.floatValue; })
            .Case([&](arith::SelectOp) {
              return operand(0).intValue ? operand(1).floatValue
                                         : operand(2).floatValue;
            })
            .Default([](Operation *) { return std::nullopt; });
    if (!r)
      return fail(op, "'" + op->getName().getStringRef() +
                          "' is not supported in a host function");
    values[result] = HostValue::getFloat(*r);
    return llvm::Error::success();
  }

  if (!type.isIntOrIndex())
    return fail(op, "unsupported result type in a host function");
  unsigned width = getWidth(type);
  HostValue a = operand(0);
  HostValue b = op->getNumOperands() > 1 ? operand(1) : HostValue();
  int64_t x = a.intValue, y = b.intValue;
  uint64_t ux = unsignedOf(x, width), uy = unsignedOf(y, width);
  bool divides =
      isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
          arith::CeilDivSIOp, arith::CeilDivUIOp, arith::FloorDivSIOp>(op);
  if (divides && y == 0)
    return fail(op, "division by zero in the host function");
  auto floorDiv = [](int64_t p, int64_t q) {
    int64_t d = p / q;
    return (p % q != 0 && ((p < 0) != (q < 0))) ? d - 1 : d;
  };
  auto ceilDiv = [](int64_t p, int64_t q) {
    int64_t d = p / q;
    return (p % q != 0 && ((p < 0) == (q < 0))) ? d + 1 : d;
  };
  std::optional<uint64_t> r =
      llvm::TypeSwitch<Operation *, std::optional<uint64_t>>(op)
          .Case([&](arith::AddIOp) { return uint64_t(x) + uint64_t(y); })
          .Case([&](arith::SubIOp) { return uint64_t(x) - uint64_t(y); })
          .Case([&](arith::MulIOp) { return uint64_t(x) * uint64_t(y); })
          .Case([&](arith::DivSIOp) { return uint64_t(x / y); })
          .Case([&](arith::DivUIOp) { return ux / uy; })
          .Case([&](arith::RemSIOp) { return uint64_t(x % y); })
          .Case([&](arith::RemUIOp) { return ux % uy; })
          .Case([&](arith::CeilDivUIOp) { return (ux + uy - 1) / uy; })
          .Case([&](arith::CeilDivSIOp) { return uint64_t(ceilDiv(x, y)); })
          .Case([&](arith::FloorDivSIOp) { return uint64_t(floorDiv(x, y)); })
          .Case([&](arith::MaxSIOp) { return uint64_t(std::max(x, y)); })
          .Case([&](arith::MinSIOp) { return uint64_t(std::min(x, y)); })
          .Case([&](arith::MaxUIOp) { return std::max(ux, uy); })
          .Case([&](arith::MinUIOp) { return std::min(ux, uy); })
          .Case([&](arith::AndIOp) { return uint64_t(x & y); })
          .Case([&](arith::OrIOp) { return uint64_t(x | y); })
          .Case([&](arith::XOrIOp) { return uint64_t(x ^ y); })
          .Case([&](arith::ShLIOp) { return uy >= width ? 0 : ux << uy; })
          .Case([&](arith::ShRUIOp) { return uy >= width ? 0 : ux >> uy; })
          .Case([&](arith::ShRSIOp) {
            return uint64_t(x >> std::min<uint64_t>(uy, 63));
          })
          .Case<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp>(
              [&](Operation *) {
                return uint64_t(wrap(x, getWidth(op->getOperand(0).getType())));
              })
          .Case<arith::IndexCastUIOp, arith::ExtUIOp>([&](Operation *) {
            return unsignedOf(x, getWidth(op->getOperand(0).getType()));
          })
          .Case(
              [&](arith::FPToSIOp) { return uint64_t(int64_t(a.floatValue)); })
          .Case([&](arith::FPToUIOp) { return uint64_t(a.floatValue); })
          .Case([&](arith::SelectOp) {
            return uint64_t(a.intValue ? y : operand(2).intValue);
          })
          .Case([&](arith::CmpIOp cmp) -> std::optional<uint64_t> {
            unsigned w = getWidth(cmp.getLhs().getType());
            int64_t sx = wrap(x, w), sy = wrap(y, w);
            uint64_t vx = unsignedOf(x, w), vy = unsignedOf(y, w);
            switch (cmp.getPredicate()) {
            case arith::CmpIPredicate::eq:
              return vx == vy;
            case arith::CmpIPredicate::ne:
              return vx != vy;
            case arith::CmpIPredicate::slt:
              return sx < sy;
            case arith::CmpIPredicate::sle:
              return sx <= sy;
            case arith::CmpIPredicate::sgt:
              return sx > sy;
            case arith::CmpIPredicate::sge:
              return sx >= sy;
            case arith::CmpIPredicate::ult:
              return vx < vy;
            case arith::CmpIPredicate::ule:
              return vx <= vy;
            case arith::CmpIPredicate::ugt:
              return vx > vy;
            case arith::CmpIPredicate::uge:
              return vx >= vy;
            }
            return std::nullopt;
          })
          .Case([&](arith::CmpFOp cmp) -> std::optional<uint64_t> {
            double p = a.floatValue, q = b.floatValue;
            bool unordered = std::isnan(p) || std::isnan(q);
            switch (cmp.getPredicate()) {
            case arith::CmpFPredicate::OEQ:
              return !unordered && p == q;
            case arith::CmpFPredicate::ONE:
              return !unordered && p != q;
            case arith::CmpFPredicate::OLT:
              return !unordered && p < q;
            case arith::CmpFPredicate::OLE:
              return !unordered && p <= q;
            case arith::CmpFPredicate::OGT:
              return !unordered && p > q;
            case arith::CmpFPredicate::OGE:
              return !unordered && p >= q;
            case arith::CmpFPredicate::UNE:
              return unordered || p != q;
            default:
              return std::nullopt;
            }
          })
          .Default([](Operation *) { return std::nullopt; });
  if (!r)
    return fail(op, "'" + op->getName().getStringRef() +
                        "' is not supported in a host function");
  values[result] = HostValue::getInt(wrap(*r, width));
  return llvm::Error::success();
}

llvm::Expected<unsigned>
HostInterpreter::getDim(Value value, llvm::StringRef what, int64_t max) {
  int64_t v = values.lookup(value).intValue;
  if (v < 0)
    return llvm::createStringError(
        llvm::formatv("{0} is {1}; it must not be negative", what, v).str());
  if (v > max)
    return llvm::createStringError(
        llvm::formatv("{0} is {1}, more than the {2} CUDA allows", what, v, max)
            .str());
  return static_cast<unsigned>(v);
}

/// "x", "y" or "z".
static const char *getAxisName(unsigned i) {
  return i == 0 ? "x" : i == 1 ? "y" : "z";
}

llvm::Expected<RegionLaunch> HostInterpreter::evaluateLaunch(LaunchOp op) {
  RegionLaunch launch;
  launch.op = op;
  if (op.getGrid().size() > 3)
    return fail(op, "a launch grid has at most three dimensions");
  for (auto [i, size] : llvm::enumerate(op.getGrid())) {
    llvm::Expected<unsigned> dim =
        getDim(size, (llvm::Twine("grid ") + getAxisName(i)).str(),
               i == 0 ? kMaxGridX : kMaxGridYZ);
    if (!dim)
      return fail(op, "ism.launch @" + op.getKernel() + ": " +
                          llvm::toString(dim.takeError()));
    launch.grid[i] = *dim;
  }
  for (Value arg : op.getArgs())
    launch.args.push_back(values.lookup(arg));
  return std::move(launch);
}

llvm::Error HostInterpreter::executeLaunch(LaunchOp op) {
  llvm::Expected<RegionLaunch> launch = evaluateLaunch(op);
  if (!launch)
    return launch.takeError();
  if (llvm::Error error = handler.launch(op, launch->grid.data(), launch->args))
    return fail(op, llvm::toString(std::move(error)));
  return llvm::Error::success();
}

llvm::Error HostInterpreter::executeCoschedule(CoscheduleOp op) {
  Block &body = op.getBody().front();
  // Numbered at the first region met (not per call: the per-call path of
  // the Python package runs host functions without one).
  if (options.coschedule == CoscheduleMode::Fused && coscheduleIndex.empty())
    if (auto module = op->getParentOfType<ModuleOp>())
      module.walk([&](CoscheduleOp region) {
        unsigned index = coscheduleIndex.size();
        coscheduleIndex[region.getOperation()] = index;
      });
  auto position = coscheduleIndex.find(op.getOperation());
  if (options.coschedule == CoscheduleMode::Fused &&
      position != coscheduleIndex.end() &&
      llvm::is_contained(options.unfused, position->second)) {
    for (Operation &inner : body)
      if (llvm::Error error = execute(&inner))
        return error;
    note("ism.coschedule: ism-coschedule kept the launches separate (no "
         "partition uses the tensor cores, so fusing would only share the "
         "memory system); they ran one after another");
    return llvm::Error::success();
  }
  bool ordered = op.getPolicy() == CoschedulePolicy::Ordered;
  if (options.coschedule == CoscheduleMode::Sequential ||
      (ordered && options.coschedule == CoscheduleMode::Streams)) {
    for (Operation &inner : body)
      if (llvm::Error error = execute(&inner))
        return error;
    note(options.coschedule == CoscheduleMode::Sequential
             ? "ism.coschedule: launches ran one after another "
               "(--coschedule=sequential)"
             : "ism.coschedule: an ordered region's launches depend on each "
               "other, so --coschedule=streams ran them one after another");
    return llvm::Error::success();
  }

  // Streams and fused: every launch of the region is evaluated first (its
  // grid and arguments are values defined before the region).
  llvm::SmallVector<RegionLaunch> launches;
  for (Operation &inner : body) {
    auto launch = dyn_cast<LaunchOp>(&inner);
    if (!launch)
      return fail(&inner, "an ism.coschedule region may only hold ism.launch "
                          "ops, found '" +
                              inner.getName().getStringRef() + "'");
    llvm::Expected<RegionLaunch> evaluated = evaluateLaunch(launch);
    if (!evaluated)
      return evaluated.takeError();
    launches.push_back(std::move(*evaluated));
  }

  if (options.coschedule == CoscheduleMode::Streams) {
    if (llvm::Error error = handler.launchConcurrently(op, launches))
      return fail(op, llvm::toString(std::move(error)));
    note(llvm::formatv("ism.coschedule: {0} launches ran concurrently, each "
                       "on its own stream (--coschedule=streams)",
                       launches.size()));
    return llvm::Error::success();
  }

  auto index = coscheduleIndex.find(op.getOperation());
  if (index == coscheduleIndex.end() ||
      index->second >= options.fusedKernels.size() ||
      options.fusedKernels[index->second].empty())
    return fail(op, "no fused kernel for this ism.coschedule (the module was "
                    "compiled without fusing it); run it with "
                    "--coschedule=sequential or --coschedule=streams");
  llvm::StringRef kernel = options.fusedKernels[index->second];
  llvm::SmallVector<std::array<unsigned, 3>> grids;
  llvm::SmallVector<HostValue> fusedArgs;
  for (const RegionLaunch &launch : launches) {
    grids.push_back(launch.grid);
    fusedArgs.append(launch.args.begin(), launch.args.end());
  }
  if (llvm::Error error = handler.launchFused(op, kernel, grids, fusedArgs))
    return fail(op, llvm::toString(std::move(error)));
  note("ism.coschedule: launches ran as one fused kernel, " + kernel +
       " (--coschedule=fused)");
  return llvm::Error::success();
}

llvm::Error HostInterpreter::executeGPULaunch(gpu::LaunchFuncOp op) {
  unsigned grid[3], block[3];
  gpu::KernelDim3 g = op.getGridSizeOperandValues();
  gpu::KernelDim3 b = op.getBlockSizeOperandValues();
  Value sizes[6] = {g.x, g.y, g.z, b.x, b.y, b.z};
  std::string kernel = "gpu.launch_func @" + op.getKernelName().str() + ": ";
  for (unsigned i = 0; i < 6; ++i) {
    int64_t max = i == 0   ? kMaxGridX
                  : i < 3  ? kMaxGridYZ
                  : i == 5 ? kMaxBlockZ
                           : kMaxBlockXY;
    llvm::Expected<unsigned> dim = getDim(
        sizes[i],
        (llvm::Twine(i < 3 ? "grid " : "block ") + getAxisName(i % 3)).str(),
        max);
    if (!dim)
      return fail(op, kernel + llvm::toString(dim.takeError()));
    (i < 3 ? grid[i] : block[i - 3]) = *dim;
  }
  uint64_t threads = uint64_t(block[0]) * block[1] * block[2];
  if (threads == 0)
    return fail(op, kernel + "a block needs at least one thread");
  if (threads > kMaxBlockThreads)
    return fail(op, llvm::formatv("{0}a block of {1}x{2}x{3} = {4} threads "
                                  "is more than the {5} CUDA allows",
                                  kernel, block[0], block[1], block[2], threads,
                                  kMaxBlockThreads)
                        .str());
  unsigned shared = 0;
  if (Value size = op.getDynamicSharedMemorySize()) {
    llvm::Expected<unsigned> bytes =
        getDim(size, "dynamic shared memory", 0x7fffffff);
    if (!bytes)
      return fail(op, kernel + llvm::toString(bytes.takeError()));
    shared = *bytes;
  }
  llvm::SmallVector<HostValue> operands;
  for (Value arg : op.getKernelOperands())
    operands.push_back(values.lookup(arg));
  if (llvm::Error error =
          handler.launchGPUFunc(op, grid, block, shared, operands))
    return fail(op, llvm::toString(std::move(error)));
  if (Value token = op.getAsyncToken())
    values[token] = HostValue::getInt(0);
  return llvm::Error::success();
}

llvm::Error mlir::ism::runner::executeHostFunction(
    func::FuncOp entry, llvm::ArrayRef<BoundArg> args, LaunchHandler &handler,
    const HostExecutionOptions &options) {
  HostInterpreter interpreter(handler, args, options);
  return interpreter.run(entry);
}

llvm::Error mlir::ism::runner::executeHostFunction(
    func::FuncOp entry, llvm::ArrayRef<BoundArg> args, LaunchHandler &handler,
    std::vector<std::string> *notes) {
  HostExecutionOptions options;
  options.notes = notes;
  return executeHostFunction(entry, args, handler, options);
}

//===----------------------------------------------------------------------===//
// Buffer use
//===----------------------------------------------------------------------===//

/// Whether ops in `body` read or write `arg` or a view of it.
static BufferUse getUse(BlockArgument arg) {
  BufferUse use;
  llvm::SmallVector<Value> worklist = {arg};
  llvm::DenseSet<Value> seen = {arg};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
        for (Value result : user->getResults())
          if (isa<BaseMemRefType>(result.getType()) &&
              seen.insert(result).second)
            worklist.push_back(result);
      } else if (isa<memref::CastOp, memref::ReinterpretCastOp>(user)) {
        if (seen.insert(user->getResult(0)).second)
          worklist.push_back(user->getResult(0));
      }
      auto effects = dyn_cast<MemoryEffectOpInterface>(user);
      if (!effects) {
        // An op with unknown effects on the buffer may do anything.
        if (!user->hasTrait<OpTrait::HasRecursiveMemoryEffects>() &&
            !isa<ViewLikeOpInterface>(user)) {
          use.read = true;
          use.written = true;
        }
        continue;
      }
      llvm::SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffectsOnValue(value, instances);
      for (const MemoryEffects::EffectInstance &instance : instances) {
        if (isa<MemoryEffects::Read>(instance.getEffect()))
          use.read = true;
        if (isa<MemoryEffects::Write>(instance.getEffect()))
          use.written = true;
      }
    }
  }
  return use;
}

std::vector<BufferUse> mlir::ism::runner::analyzeBufferUse(func::FuncOp entry) {
  std::vector<BufferUse> uses(entry.getNumArguments());
  SymbolTableCollection symbols;
  auto moduleOp = entry->getParentOfType<ModuleOp>();
  auto record = [&](ValueRange operands, Region &body) {
    if (body.empty())
      return;
    for (auto [operand, param] :
         llvm::zip(operands, body.front().getArguments())) {
      auto arg = dyn_cast<BlockArgument>(operand);
      if (!arg || arg.getOwner()->getParentOp() != entry.getOperation() ||
          !isa<BaseMemRefType>(arg.getType()))
        continue;
      BufferUse use = getUse(param);
      uses[arg.getArgNumber()].read |= use.read;
      uses[arg.getArgNumber()].written |= use.written;
    }
  };
  entry.walk([&](Operation *op) {
    if (auto launch = dyn_cast<LaunchOp>(op)) {
      if (KernelOp kernel = launch.getKernelOp(symbols))
        record(launch.getArgs(), kernel.getBody());
    } else if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
      auto func = symbols.lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          moduleOp, launch.getKernel());
      if (func)
        record(launch.getKernelOperands(), func.getBody());
    }
  });
  return uses;
}
