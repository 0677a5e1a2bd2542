//===- Reference.cpp - Reference interpreter of tile programs -------------===//
//
// Values are tiles (a shape and a dense row-major vector; scalars have an
// empty shape) of doubles for float element types and of int64 for integer
// and index types, kept sign-extended from their bit width. Each op is
// executed over whole tiles, so the per-element work is a tight loop.
//
//===----------------------------------------------------------------------===//

#include "ism/Runner/Reference.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Parallel.h"

#include <chrono>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::ism;
using namespace mlir::ism::runner;

namespace {

/// A tile, a scalar, or a buffer reference.
struct Val {
  llvm::SmallVector<int64_t, 4> shape;
  bool isInt = false;
  std::vector<double> f;
  std::vector<int64_t> i;
  int buffer = -1;

  size_t size() const { return isInt ? i.size() : f.size(); }
  double asDouble(size_t k) const { return isInt ? double(i[k]) : f[k]; }
  int64_t asInt(size_t k) const { return isInt ? i[k] : int64_t(f[k]); }
};

int64_t numElements(llvm::ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

unsigned widthOf(Type type) {
  type = getElementTypeOrSelf(type);
  if (type.isIndex())
    return 64;
  return type.getIntOrFloatBitWidth();
}

int64_t wrap(uint64_t v, unsigned width) {
  if (width >= 64)
    return static_cast<int64_t>(v);
  return static_cast<int64_t>(v << (64 - width)) >> (64 - width);
}

uint64_t unsignedOf(int64_t v, unsigned width) {
  if (width >= 64)
    return static_cast<uint64_t>(v);
  return static_cast<uint64_t>(v) & ((uint64_t(1) << width) - 1);
}

/// An empty tile shaped like `type` (a tensor or a scalar type).
Val makeVal(Type type) {
  Val v;
  Type element = getElementTypeOrSelf(type);
  v.isInt = element.isIntOrIndex();
  if (auto shaped = dyn_cast<RankedTensorType>(type))
    v.shape.assign(shaped.getShape().begin(), shaped.getShape().end());
  size_t n = numElements(v.shape);
  if (v.isInt)
    v.i.assign(n, 0);
  else
    v.f.assign(n, 0.0);
  return v;
}

double maximumF(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  return a > b ? a : b;
}

double minimumF(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  return a < b ? a : b;
}

/// Calls `fn(linear, index)` for every index of `shape` in row-major order.
template <typename Fn>
void forEachIndex(llvm::ArrayRef<int64_t> shape, Fn fn) {
  int64_t n = numElements(shape);
  llvm::SmallVector<int64_t, 4> index(shape.size(), 0);
  for (int64_t linear = 0; linear < n; ++linear) {
    fn(linear, llvm::ArrayRef<int64_t>(index));
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

/// The fast combiners recognised in reduce/scan regions.
enum class Combiner {
  None,
  AddF,
  MulF,
  MaximumF,
  MinimumF,
  MaxNumF,
  MinNumF,
  AddI,
  MulI,
  MaxSI,
  MinSI,
  MaxUI,
  MinUI,
  AndI,
  OrI,
  XOrI
};

/// Recognises a combiner region that applies one binary op to its two
/// arguments and yields the result.
Combiner matchCombiner(Region &region) {
  Block &block = region.front();
  if (block.getNumArguments() != 2 || block.getOperations().size() != 2)
    return Combiner::None;
  Operation &op = block.front();
  Operation *terminator = block.getTerminator();
  if (op.getNumOperands() != 2 || op.getNumResults() != 1 ||
      terminator->getNumOperands() != 1 ||
      terminator->getOperand(0) != op.getResult(0))
    return Combiner::None;
  llvm::SmallPtrSet<Value, 2> operands(op.getOperands().begin(),
                                       op.getOperands().end());
  if (!operands.contains(block.getArgument(0)) ||
      !operands.contains(block.getArgument(1)))
    return Combiner::None;
  if (isa<arith::AddFOp>(op))
    return Combiner::AddF;
  if (isa<arith::MulFOp>(op))
    return Combiner::MulF;
  if (isa<arith::MaximumFOp>(op))
    return Combiner::MaximumF;
  if (isa<arith::MinimumFOp>(op))
    return Combiner::MinimumF;
  if (isa<arith::MaxNumFOp>(op))
    return Combiner::MaxNumF;
  if (isa<arith::MinNumFOp>(op))
    return Combiner::MinNumF;
  if (isa<arith::AddIOp>(op))
    return Combiner::AddI;
  if (isa<arith::MulIOp>(op))
    return Combiner::MulI;
  if (isa<arith::MaxSIOp>(op))
    return Combiner::MaxSI;
  if (isa<arith::MinSIOp>(op))
    return Combiner::MinSI;
  if (isa<arith::MaxUIOp>(op))
    return Combiner::MaxUI;
  if (isa<arith::MinUIOp>(op))
    return Combiner::MinUI;
  if (isa<arith::AndIOp>(op))
    return Combiner::AndI;
  if (isa<arith::OrIOp>(op))
    return Combiner::OrI;
  if (isa<arith::XOrIOp>(op))
    return Combiner::XOrI;
  return Combiner::None;
}

double combineF(Combiner kind, double a, double b) {
  switch (kind) {
  case Combiner::AddF:
    return a + b;
  case Combiner::MulF:
    return a * b;
  case Combiner::MaximumF:
    return maximumF(a, b);
  case Combiner::MinimumF:
    return minimumF(a, b);
  case Combiner::MaxNumF:
    return std::fmax(a, b);
  case Combiner::MinNumF:
    return std::fmin(a, b);
  default:
    llvm_unreachable("not a float combiner");
  }
}

int64_t combineI(Combiner kind, int64_t a, int64_t b, unsigned w) {
  switch (kind) {
  case Combiner::AddI:
    return wrap(uint64_t(a) + uint64_t(b), w);
  case Combiner::MulI:
    return wrap(uint64_t(a) * uint64_t(b), w);
  case Combiner::MaxSI:
    return std::max(a, b);
  case Combiner::MinSI:
    return std::min(a, b);
  case Combiner::MaxUI:
    return unsignedOf(a, w) > unsignedOf(b, w) ? a : b;
  case Combiner::MinUI:
    return unsignedOf(a, w) < unsignedOf(b, w) ? a : b;
  case Combiner::AndI:
    return a & b;
  case Combiner::OrI:
    return a | b;
  case Combiner::XOrI:
    return a ^ b;
  default:
    llvm_unreachable("not an integer combiner");
  }
}

/// The time limit of one launch (ReferenceLauncher::setTimeout), shared by
/// the program instances that run in parallel.
struct Deadline {
  std::chrono::steady_clock::time_point at;
  std::atomic<bool> passed{false};
  /// Program instances started, for the message.
  std::atomic<uint64_t> started{0};

  /// Whether the time is up (and from then on, always).
  bool check() {
    if (!passed && std::chrono::steady_clock::now() > at)
      passed = true;
    return passed;
  }
};

/// Interprets one program instance of a kernel.
class Interpreter {
public:
  /// `work` counts the units of work of every instance (see
  /// ReferenceLauncher::setWorkLimit); past `workLimit` (when non-zero) the
  /// instance stops with an error.
  Interpreter(std::vector<RefBuffer> &buffers, std::mutex &atomicMutex,
              const unsigned pid[3], const unsigned grid[3],
              std::atomic<uint64_t> &work, uint64_t workLimit)
      : buffers(buffers), atomicMutex(atomicMutex), work(work),
        workLimit(workLimit) {
    for (int d = 0; d < 3; ++d) {
      programId[d] = pid[d];
      numPrograms[d] = grid[d];
    }
  }

  /// Runs `block` with `args` bound to its arguments; the terminator's
  /// operands go to `yielded`.
  llvm::Error runBlock(Block &block, llvm::ArrayRef<Val> args,
                       llvm::SmallVectorImpl<Val> &yielded);

  /// Loops stop with an error once `limit` has passed (null: no limit).
  void setDeadline(Deadline *limit) { deadline = limit; }

private:
  llvm::Error execute(Operation *op);
  llvm::Error executeArith(Operation *op);
  llvm::Error executeMath(Operation *op);
  llvm::Error executeIsm(Operation *op);
  llvm::Error executeSCF(Operation *op);
  llvm::Error executeMemory(Operation *op);
  llvm::Error executeIm2col(Im2colOp op);
  llvm::Error executeCombiner(Operation *op, bool isScan);

  const Val &get(Value v) {
    auto it = env.find(v);
    assert(it != env.end() && "value used before it was defined");
    return it->second;
  }
  void set(Value v, Val val) { env[v] = std::move(val); }

  llvm::Error fail(Operation *op, const llvm::Twine &why) {
    std::string location;
    llvm::raw_string_ostream os(location);
    os << op->getLoc();
    return llvm::createStringError("reference interpreter: " + location +
                                   ": '" + op->getName().getStringRef().str() +
                                   "': " + why.str());
  }

  /// Adds `units` to the work done; an error past the limit.
  llvm::Error charge(Operation *op, uint64_t units) {
    if (!workLimit)
      return llvm::Error::success();
    if (work.fetch_add(units, std::memory_order_relaxed) + units <= workLimit)
      return llvm::Error::success();
    return fail(op, llvm::formatv("the run went past the interpreter's work "
                                  "limit of {0} operations",
                                  workLimit)
                        .str());
  }

  std::vector<RefBuffer> &buffers;
  std::mutex &atomicMutex;
  std::atomic<uint64_t> &work;
  uint64_t workLimit;
  int64_t programId[3];
  int64_t numPrograms[3];
  llvm::DenseMap<Value, Val> env;
  Deadline *deadline = nullptr;

  /// An error once the deadline has passed (the launcher reports it).
  llvm::Error checkDeadline(Operation *op) {
    if (deadline && deadline->check())
      return fail(op, "the launch ran out of time");
    return llvm::Error::success();
  }
};

} // namespace

llvm::Error Interpreter::runBlock(Block &block, llvm::ArrayRef<Val> args,
                                  llvm::SmallVectorImpl<Val> &yielded) {
  if (llvm::Error error = charge(block.getParentOp(), 1))
    return error;
  for (auto [arg, val] : llvm::zip(block.getArguments(), args))
    set(arg, val);
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      yielded.clear();
      for (Value operand : op.getOperands())
        yielded.push_back(get(operand));
      return llvm::Error::success();
    }
    if (llvm::Error error = execute(&op))
      return error;
  }
  return llvm::Error::success();
}

llvm::Error Interpreter::execute(Operation *op) {
  if (workLimit) {
    uint64_t units = 1;
    for (Type type : op->getResultTypes())
      if (auto shaped = dyn_cast<ShapedType>(type);
          shaped && shaped.hasStaticShape())
        units += uint64_t(shaped.getNumElements());
    if (llvm::Error error = charge(op, units))
      return error;
  }
  llvm::StringRef dialect = op->getName().getDialectNamespace();
  if (dialect == "arith")
    return executeArith(op);
  if (dialect == "math")
    return executeMath(op);
  if (dialect == "scf")
    return executeSCF(op);
  if (dialect == "ism")
    return executeIsm(op);
  if (auto dim = dyn_cast<memref::DimOp>(op)) {
    const Val &source = get(dim.getSource());
    int64_t index = get(dim.getIndex()).i[0];
    const RefBuffer &buffer = buffers[source.buffer];
    if (index < 0 || index >= static_cast<int64_t>(buffer.shape.size()))
      return fail(op, "dimension index out of range");
    Val result = makeVal(dim.getType());
    result.i[0] = buffer.shape[index];
    set(dim.getResult(), std::move(result));
    return llvm::Error::success();
  }
  if (auto load = dyn_cast<memref::LoadOp>(op)) {
    // A scalar load (a kernel reading an offset or a count from a table).
    const RefBuffer &buffer = buffers[get(load.getMemRef()).buffer];
    int64_t address = 0;
    for (auto [d, index] : llvm::enumerate(load.getIndices())) {
      int64_t c = get(index).i[0];
      if (c < 0 || c >= buffer.shape[d])
        return fail(op, llvm::formatv("index {0} of dimension {1} is out of "
                                      "bounds (size {2})",
                                      c, d, buffer.shape[d])
                            .str());
      address = address * buffer.shape[d] + c;
    }
    Val result = makeVal(load.getType());
    if (result.isInt)
      result.i[0] = int64_t(buffer.data[address]);
    else
      result.f[0] = buffer.data[address];
    set(load.getResult(), std::move(result));
    return llvm::Error::success();
  }
  return fail(op, "not supported by the reference interpreter");
}

//===----------------------------------------------------------------------===//
// arith
//===----------------------------------------------------------------------===//

llvm::Error Interpreter::executeArith(Operation *op) {
  Value result = op->getResult(0);
  Type resultType = result.getType();
  Val out = makeVal(resultType);
  size_t n = out.size();

  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    Attribute value = constant.getValue();
    if (auto attr = dyn_cast<IntegerAttr>(value)) {
      out.i[0] = wrap(attr.getValue().getZExtValue(), widthOf(resultType));
    } else if (auto attr = dyn_cast<FloatAttr>(value)) {
      out.f[0] = attr.getValueAsDouble();
    } else if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
      unsigned w = out.isInt ? widthOf(resultType) : 0;
      if (dense.isSplat()) {
        if (out.isInt)
          std::fill(out.i.begin(), out.i.end(),
                    wrap(dense.getSplatValue<APInt>().getZExtValue(), w));
        else
          std::fill(out.f.begin(), out.f.end(),
                    dense.getSplatValue<APFloat>().convertToDouble());
      } else if (out.isInt) {
        size_t k = 0;
        for (const APInt &v : dense.getValues<APInt>())
          out.i[k++] = wrap(v.getZExtValue(), w);
      } else {
        size_t k = 0;
        for (const APFloat &v : dense.getValues<APFloat>()) {
          APFloat d = v;
          bool lost;
          d.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
          out.f[k++] = d.convertToDouble();
        }
      }
    } else {
      return fail(op, "unsupported constant attribute");
    }
    set(result, std::move(out));
    return llvm::Error::success();
  }

  if (auto select = dyn_cast<arith::SelectOp>(op)) {
    const Val &c = get(select.getCondition());
    const Val &a = get(select.getTrueValue());
    const Val &b = get(select.getFalseValue());
    bool scalarCond = c.size() == 1 && n != 1;
    for (size_t k = 0; k < n; ++k) {
      bool take = c.i[scalarCond ? 0 : k] != 0;
      if (out.isInt)
        out.i[k] = take ? a.i[k] : b.i[k];
      else
        out.f[k] = take ? a.f[k] : b.f[k];
    }
    set(result, std::move(out));
    return llvm::Error::success();
  }

  if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
    const Val &a = get(cmp.getLhs());
    const Val &b = get(cmp.getRhs());
    arith::CmpFPredicate p = cmp.getPredicate();
    for (size_t k = 0; k < n; ++k) {
      double x = a.f[k], y = b.f[k];
      bool unordered = std::isnan(x) || std::isnan(y);
      bool r = false;
      switch (p) {
      case arith::CmpFPredicate::AlwaysFalse:
        r = false;
        break;
      case arith::CmpFPredicate::OEQ:
        r = !unordered && x == y;
        break;
      case arith::CmpFPredicate::OGT:
        r = !unordered && x > y;
        break;
      case arith::CmpFPredicate::OGE:
        r = !unordered && x >= y;
        break;
      case arith::CmpFPredicate::OLT:
        r = !unordered && x < y;
        break;
      case arith::CmpFPredicate::OLE:
        r = !unordered && x <= y;
        break;
      case arith::CmpFPredicate::ONE:
        r = !unordered && x != y;
        break;
      case arith::CmpFPredicate::ORD:
        r = !unordered;
        break;
      case arith::CmpFPredicate::UEQ:
        r = unordered || x == y;
        break;
      case arith::CmpFPredicate::UGT:
        r = unordered || x > y;
        break;
      case arith::CmpFPredicate::UGE:
        r = unordered || x >= y;
        break;
      case arith::CmpFPredicate::ULT:
        r = unordered || x < y;
        break;
      case arith::CmpFPredicate::ULE:
        r = unordered || x <= y;
        break;
      case arith::CmpFPredicate::UNE:
        r = unordered || x != y;
        break;
      case arith::CmpFPredicate::UNO:
        r = unordered;
        break;
      case arith::CmpFPredicate::AlwaysTrue:
        r = true;
        break;
      }
      out.i[k] = r ? -1 : 0;
    }
    set(result, std::move(out));
    return llvm::Error::success();
  }

  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    const Val &a = get(cmp.getLhs());
    const Val &b = get(cmp.getRhs());
    unsigned w = widthOf(cmp.getLhs().getType());
    arith::CmpIPredicate p = cmp.getPredicate();
    for (size_t k = 0; k < n; ++k) {
      int64_t x = a.i[k], y = b.i[k];
      uint64_t ux = unsignedOf(x, w), uy = unsignedOf(y, w);
      bool r = false;
      switch (p) {
      case arith::CmpIPredicate::eq:
        r = x == y;
        break;
      case arith::CmpIPredicate::ne:
        r = x != y;
        break;
      case arith::CmpIPredicate::slt:
        r = x < y;
        break;
      case arith::CmpIPredicate::sle:
        r = x <= y;
        break;
      case arith::CmpIPredicate::sgt:
        r = x > y;
        break;
      case arith::CmpIPredicate::sge:
        r = x >= y;
        break;
      case arith::CmpIPredicate::ult:
        r = ux < uy;
        break;
      case arith::CmpIPredicate::ule:
        r = ux <= uy;
        break;
      case arith::CmpIPredicate::ugt:
        r = ux > uy;
        break;
      case arith::CmpIPredicate::uge:
        r = ux >= uy;
        break;
      }
      out.i[k] = r ? -1 : 0;
    }
    set(result, std::move(out));
    return llvm::Error::success();
  }

  // Casts.
  if (op->getNumOperands() == 1) {
    const Val &a = get(op->getOperand(0));
    Type sourceType = op->getOperand(0).getType();
    std::optional<DType> to = getDType(getElementTypeOrSelf(resultType));
    if (isa<arith::TruncFOp>(op) && to &&
        (*to == DType::F8E4M3 || *to == DType::F8E5M2)) {
      // To an 8-bit float: rounded (and saturated) as the GPU's cvt does;
      // the other float casts are exact here.
      for (size_t k = 0; k < n; ++k)
        out.f[k] = roundToDType(a.f[k], *to);
    } else if (isa<arith::ExtFOp, arith::TruncFOp>(op)) {
      out.f = a.f;
    } else if (isa<arith::NegFOp>(op)) {
      for (size_t k = 0; k < n; ++k)
        out.f[k] = -a.f[k];
    } else if (isa<arith::SIToFPOp>(op)) {
      for (size_t k = 0; k < n; ++k)
        out.f[k] = double(a.i[k]);
    } else if (isa<arith::UIToFPOp>(op)) {
      unsigned w = widthOf(sourceType);
      for (size_t k = 0; k < n; ++k)
        out.f[k] = double(unsignedOf(a.i[k], w));
    } else if (isa<arith::FPToSIOp, arith::FPToUIOp>(op)) {
      unsigned w = widthOf(resultType);
      for (size_t k = 0; k < n; ++k) {
        double v = std::trunc(a.f[k]);
        v = std::isnan(v) ? 0 : std::fmax(std::fmin(v, 9.2e18), -9.2e18);
        out.i[k] = wrap(uint64_t(int64_t(v)), w);
      }
    } else if (isa<arith::ExtSIOp, arith::TruncIOp, arith::IndexCastOp>(op)) {
      unsigned w = widthOf(resultType);
      for (size_t k = 0; k < n; ++k)
        out.i[k] = wrap(uint64_t(a.i[k]), w);
    } else if (isa<arith::ExtUIOp, arith::IndexCastUIOp>(op)) {
      unsigned ws = widthOf(sourceType), w = widthOf(resultType);
      for (size_t k = 0; k < n; ++k)
        out.i[k] = wrap(unsignedOf(a.i[k], ws), w);
    } else {
      return fail(op, "not supported by the reference interpreter");
    }
    set(result, std::move(out));
    return llvm::Error::success();
  }

  if (op->getNumOperands() != 2)
    return fail(op, "not supported by the reference interpreter");
  const Val &a = get(op->getOperand(0));
  const Val &b = get(op->getOperand(1));

  if (!out.isInt) {
    auto apply = [&](auto fn) {
      for (size_t k = 0; k < n; ++k)
        out.f[k] = fn(a.f[k], b.f[k]);
    };
    if (isa<arith::AddFOp>(op))
      apply([](double x, double y) { return x + y; });
    else if (isa<arith::SubFOp>(op))
      apply([](double x, double y) { return x - y; });
    else if (isa<arith::MulFOp>(op))
      apply([](double x, double y) { return x * y; });
    else if (isa<arith::DivFOp>(op))
      apply([](double x, double y) { return x / y; });
    else if (isa<arith::RemFOp>(op))
      apply([](double x, double y) { return std::fmod(x, y); });
    else if (isa<arith::MaximumFOp>(op))
      apply(maximumF);
    else if (isa<arith::MinimumFOp>(op))
      apply(minimumF);
    else if (isa<arith::MaxNumFOp>(op))
      apply([](double x, double y) { return std::fmax(x, y); });
    else if (isa<arith::MinNumFOp>(op))
      apply([](double x, double y) { return std::fmin(x, y); });
    else
      return fail(op, "not supported by the reference interpreter");
    set(result, std::move(out));
    return llvm::Error::success();
  }

  unsigned w = widthOf(resultType);
  bool divides =
      isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp,
          arith::CeilDivSIOp, arith::CeilDivUIOp, arith::FloorDivSIOp>(op);
  if (divides)
    for (size_t k = 0; k < n; ++k)
      if (b.i[k] == 0)
        return fail(op, "division by zero");
  auto apply = [&](auto fn) {
    for (size_t k = 0; k < n; ++k)
      out.i[k] = wrap(fn(a.i[k], b.i[k]), w);
  };
  auto u = [w](int64_t v) { return unsignedOf(v, w); };
  if (isa<arith::AddIOp>(op))
    apply([](int64_t x, int64_t y) { return uint64_t(x) + uint64_t(y); });
  else if (isa<arith::SubIOp>(op))
    apply([](int64_t x, int64_t y) { return uint64_t(x) - uint64_t(y); });
  else if (isa<arith::MulIOp>(op))
    apply([](int64_t x, int64_t y) { return uint64_t(x) * uint64_t(y); });
  else if (isa<arith::DivSIOp>(op))
    apply([](int64_t x, int64_t y) { return uint64_t(x / y); });
  else if (isa<arith::RemSIOp>(op))
    apply([](int64_t x, int64_t y) { return uint64_t(x % y); });
  else if (isa<arith::DivUIOp>(op))
    apply([&](int64_t x, int64_t y) { return u(x) / u(y); });
  else if (isa<arith::RemUIOp>(op))
    apply([&](int64_t x, int64_t y) { return u(x) % u(y); });
  else if (isa<arith::CeilDivUIOp>(op))
    apply([&](int64_t x, int64_t y) {
      return u(x) / u(y) + (u(x) % u(y) != 0 ? 1 : 0);
    });
  else if (isa<arith::CeilDivSIOp>(op))
    apply([](int64_t x, int64_t y) {
      int64_t d = x / y;
      return uint64_t((x % y != 0 && ((x < 0) == (y < 0))) ? d + 1 : d);
    });
  else if (isa<arith::FloorDivSIOp>(op))
    apply([](int64_t x, int64_t y) {
      int64_t d = x / y;
      return uint64_t((x % y != 0 && ((x < 0) != (y < 0))) ? d - 1 : d);
    });
  else if (isa<arith::MaxSIOp>(op))
    apply([](int64_t x, int64_t y) { return uint64_t(std::max(x, y)); });
  else if (isa<arith::MinSIOp>(op))
    apply([](int64_t x, int64_t y) { return uint64_t(std::min(x, y)); });
  else if (isa<arith::MaxUIOp>(op))
    apply([&](int64_t x, int64_t y) { return std::max(u(x), u(y)); });
  else if (isa<arith::MinUIOp>(op))
    apply([&](int64_t x, int64_t y) { return std::min(u(x), u(y)); });
  else if (isa<arith::AndIOp>(op))
    apply([](int64_t x, int64_t y) { return uint64_t(x & y); });
  else if (isa<arith::OrIOp>(op))
    apply([](int64_t x, int64_t y) { return uint64_t(x | y); });
  else if (isa<arith::XOrIOp>(op))
    apply([](int64_t x, int64_t y) { return uint64_t(x ^ y); });
  else if (isa<arith::ShLIOp>(op))
    apply([&](int64_t x, int64_t y) {
      return u(y) >= w ? uint64_t(0) : u(x) << u(y);
    });
  else if (isa<arith::ShRUIOp>(op))
    apply([&](int64_t x, int64_t y) {
      return u(y) >= w ? uint64_t(0) : u(x) >> u(y);
    });
  else if (isa<arith::ShRSIOp>(op))
    apply([&](int64_t x, int64_t y) {
      return uint64_t(x >> std::min<uint64_t>(u(y), 63));
    });
  else
    return fail(op, "not supported by the reference interpreter");
  set(result, std::move(out));
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// math
//===----------------------------------------------------------------------===//

llvm::Error Interpreter::executeMath(Operation *op) {
  Value result = op->getResult(0);
  Val out = makeVal(result.getType());
  size_t n = out.size();
  if (out.isInt) {
    if (!isa<math::AbsIOp>(op))
      return fail(op, "not supported by the reference interpreter");
    const Val &a = get(op->getOperand(0));
    unsigned w = widthOf(result.getType());
    for (size_t k = 0; k < n; ++k)
      out.i[k] = wrap(uint64_t(a.i[k] < 0 ? -a.i[k] : a.i[k]), w);
    set(result, std::move(out));
    return llvm::Error::success();
  }
  if (op->getNumOperands() == 1) {
    const Val &a = get(op->getOperand(0));
    auto apply = [&](auto fn) {
      for (size_t k = 0; k < n; ++k)
        out.f[k] = fn(a.f[k]);
    };
    if (isa<math::ExpOp>(op))
      apply([](double x) { return std::exp(x); });
    else if (isa<math::Exp2Op>(op))
      apply([](double x) { return std::exp2(x); });
    else if (isa<math::ExpM1Op>(op))
      apply([](double x) { return std::expm1(x); });
    else if (isa<math::LogOp>(op))
      apply([](double x) { return std::log(x); });
    else if (isa<math::Log2Op>(op))
      apply([](double x) { return std::log2(x); });
    else if (isa<math::Log10Op>(op))
      apply([](double x) { return std::log10(x); });
    else if (isa<math::Log1pOp>(op))
      apply([](double x) { return std::log1p(x); });
    else if (isa<math::SqrtOp>(op))
      apply([](double x) { return std::sqrt(x); });
    else if (isa<math::RsqrtOp>(op))
      apply([](double x) { return 1.0 / std::sqrt(x); });
    else if (isa<math::TanhOp>(op))
      apply([](double x) { return std::tanh(x); });
    else if (isa<math::ErfOp>(op))
      apply([](double x) { return std::erf(x); });
    else if (isa<math::SinOp>(op))
      apply([](double x) { return std::sin(x); });
    else if (isa<math::CosOp>(op))
      apply([](double x) { return std::cos(x); });
    else if (isa<math::TanOp>(op))
      apply([](double x) { return std::tan(x); });
    else if (isa<math::AtanOp>(op))
      apply([](double x) { return std::atan(x); });
    else if (isa<math::AbsFOp>(op))
      apply([](double x) { return std::fabs(x); });
    else if (isa<math::CeilOp>(op))
      apply([](double x) { return std::ceil(x); });
    else if (isa<math::FloorOp>(op))
      apply([](double x) { return std::floor(x); });
    else if (isa<math::RoundOp>(op))
      apply([](double x) { return std::round(x); });
    else if (isa<math::RoundEvenOp>(op))
      apply([](double x) { return std::nearbyint(x); });
    else if (isa<math::TruncOp>(op))
      apply([](double x) { return std::trunc(x); });
    else
      return fail(op, "not supported by the reference interpreter");
  } else if (op->getNumOperands() == 2) {
    const Val &a = get(op->getOperand(0));
    const Val &b = get(op->getOperand(1));
    auto apply = [&](auto fn) {
      for (size_t k = 0; k < n; ++k)
        out.f[k] = fn(a.f[k], b.f[k]);
    };
    if (isa<math::PowFOp>(op))
      apply([](double x, double y) { return std::pow(x, y); });
    else if (isa<math::Atan2Op>(op))
      apply([](double x, double y) { return std::atan2(x, y); });
    else if (isa<math::CopySignOp>(op))
      apply([](double x, double y) { return std::copysign(x, y); });
    else
      return fail(op, "not supported by the reference interpreter");
  } else if (isa<math::FmaOp>(op)) {
    const Val &a = get(op->getOperand(0));
    const Val &b = get(op->getOperand(1));
    const Val &c = get(op->getOperand(2));
    for (size_t k = 0; k < n; ++k)
      out.f[k] = a.f[k] * b.f[k] + c.f[k];
  } else {
    return fail(op, "not supported by the reference interpreter");
  }
  set(result, std::move(out));
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// scf
//===----------------------------------------------------------------------===//

llvm::Error Interpreter::executeSCF(Operation *op) {
  llvm::SmallVector<Val> yielded;
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    int64_t lb = get(loop.getLowerBound()).i[0];
    int64_t ub = get(loop.getUpperBound()).i[0];
    int64_t step = get(loop.getStep()).i[0];
    if (step <= 0)
      return fail(op, "the step must be positive");
    llvm::SmallVector<Val> iters;
    for (Value init : loop.getInitArgs())
      iters.push_back(get(init));
    Type ivType = loop.getInductionVar().getType();
    for (int64_t iv = lb; iv < ub; iv += step) {
      if (llvm::Error error = checkDeadline(op))
        return error;
      llvm::SmallVector<Val> args;
      Val ivVal = makeVal(ivType);
      ivVal.i[0] = iv;
      args.push_back(std::move(ivVal));
      for (Val &iter : iters)
        args.push_back(std::move(iter));
      if (llvm::Error error = runBlock(*loop.getBody(), args, yielded))
        return error;
      iters.assign(yielded.begin(), yielded.end());
      // The next induction value would overflow: the loop is over.
      if (iv > std::numeric_limits<int64_t>::max() - step)
        break;
    }
    for (auto [result, value] : llvm::zip(loop.getResults(), iters))
      set(result, std::move(value));
    return llvm::Error::success();
  }
  if (auto branch = dyn_cast<scf::IfOp>(op)) {
    bool cond = get(branch.getCondition()).i[0] != 0;
    Region &region = cond ? branch.getThenRegion() : branch.getElseRegion();
    if (region.empty())
      return llvm::Error::success();
    if (llvm::Error error = runBlock(region.front(), {}, yielded))
      return error;
    for (auto [result, value] : llvm::zip(branch.getResults(), yielded))
      set(result, std::move(value));
    return llvm::Error::success();
  }
  if (auto loop = dyn_cast<scf::WhileOp>(op)) {
    llvm::SmallVector<Val> args;
    for (Value init : loop.getInits())
      args.push_back(get(init));
    for (;;) {
      if (llvm::Error error = checkDeadline(op))
        return error;
      if (llvm::Error error = runBlock(loop.getBefore().front(), args, yielded))
        return error;
      // scf.condition: the condition, then the values passed on.
      bool cond = yielded[0].i[0] != 0;
      args.assign(yielded.begin() + 1, yielded.end());
      if (!cond)
        break;
      if (llvm::Error error = runBlock(loop.getAfter().front(), args, yielded))
        return error;
      args.assign(yielded.begin(), yielded.end());
    }
    for (auto [result, value] : llvm::zip(loop.getResults(), args))
      set(result, std::move(value));
    return llvm::Error::success();
  }
  return fail(op, "not supported by the reference interpreter");
}

//===----------------------------------------------------------------------===//
// ism
//===----------------------------------------------------------------------===//

llvm::Error Interpreter::executeIsm(Operation *op) {
  if (isa<LoadOp, StoreOp, GatherOp, ScatterOp, AtomicRMWOp>(op))
    return executeMemory(op);
  if (auto im2col = dyn_cast<Im2colOp>(op))
    return executeIm2col(im2col);
  if (isa<ReduceOp>(op))
    return executeCombiner(op, /*isScan=*/false);
  if (isa<ScanOp>(op))
    return executeCombiner(op, /*isScan=*/true);
  // The lowering's thread-level ops without a result (ism.async_copy,
  // ism.async_gather, ism.warp_specialize) are not tile-program ops.
  if (op->getNumResults() == 0)
    return fail(op, "not supported by the reference interpreter (it runs "
                    "tile programs, not the lowering's thread-level ops)");

  Value result = op->getResult(0);
  Val out = makeVal(result.getType());
  if (auto query = dyn_cast<ProgramIdOp>(op)) {
    out.i[0] = programId[static_cast<int>(query.getAxis())];
  } else if (auto query = dyn_cast<NumProgramsOp>(op)) {
    out.i[0] = numPrograms[static_cast<int>(query.getAxis())];
  } else if (auto range = dyn_cast<RangeOp>(op)) {
    unsigned w = widthOf(result.getType());
    for (size_t k = 0; k < out.i.size(); ++k)
      out.i[k] = wrap(uint64_t(range.getStart() + int64_t(k)), w);
  } else if (auto splat = dyn_cast<SplatOp>(op)) {
    const Val &a = get(splat.getSrc());
    if (out.isInt)
      std::fill(out.i.begin(), out.i.end(), a.i[0]);
    else
      std::fill(out.f.begin(), out.f.end(), a.f[0]);
  } else if (isa<ReshapeOp, ExpandDimsOp, ConvertLayoutOp>(op)) {
    const Val &a = get(op->getOperand(0));
    out.i = a.i;
    out.f = a.f;
  } else if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
    const Val &a = get(broadcast.getSrc());
    llvm::SmallVector<int64_t, 4> strides(a.shape.size(), 0);
    int64_t stride = 1;
    for (int d = static_cast<int>(a.shape.size()) - 1; d >= 0; --d) {
      strides[d] = a.shape[d] == 1 ? 0 : stride;
      stride *= a.shape[d];
    }
    forEachIndex(out.shape, [&](int64_t linear, llvm::ArrayRef<int64_t> idx) {
      int64_t source = 0;
      for (size_t d = 0; d < idx.size(); ++d)
        source += idx[d] * strides[d];
      if (out.isInt)
        out.i[linear] = a.i[source];
      else
        out.f[linear] = a.f[source];
    });
  } else if (auto trans = dyn_cast<TransOp>(op)) {
    const Val &a = get(trans.getSrc());
    llvm::ArrayRef<int32_t> order = trans.getOrder();
    llvm::SmallVector<int64_t, 4> sourceStrides(a.shape.size(), 1);
    for (int d = static_cast<int>(a.shape.size()) - 2; d >= 0; --d)
      sourceStrides[d] = sourceStrides[d + 1] * a.shape[d + 1];
    forEachIndex(out.shape, [&](int64_t linear, llvm::ArrayRef<int64_t> idx) {
      int64_t source = 0;
      for (size_t d = 0; d < idx.size(); ++d)
        source += idx[d] * sourceStrides[order[d]];
      if (out.isInt)
        out.i[linear] = a.i[source];
      else
        out.f[linear] = a.f[source];
    });
  } else if (auto dot = dyn_cast<DotOp>(op)) {
    const Val &a = get(dot.getA());
    const Val &b = get(dot.getB());
    const Val &c = get(dot.getC());
    size_t rank = a.shape.size();
    int64_t batch = rank == 3 ? a.shape[0] : 1;
    int64_t m = a.shape[rank - 2], kk = a.shape[rank - 1];
    int64_t nn = b.shape[rank - 1];
    if (out.isInt) {
      unsigned w = widthOf(result.getType());
      std::vector<int64_t> acc(c.i.begin(), c.i.end());
      for (int64_t p = 0; p < batch; ++p)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t k = 0; k < kk; ++k) {
            int64_t x = a.asInt((p * m + i) * kk + k);
            for (int64_t j = 0; j < nn; ++j)
              acc[(p * m + i) * nn + j] += x * b.asInt((p * kk + k) * nn + j);
          }
      for (size_t k = 0; k < acc.size(); ++k)
        out.i[k] = wrap(uint64_t(acc[k]), w);
    } else {
      out.f = c.f;
      for (int64_t p = 0; p < batch; ++p)
        for (int64_t i = 0; i < m; ++i) {
          double *row = out.f.data() + (p * m + i) * nn;
          for (int64_t k = 0; k < kk; ++k) {
            double x = a.f[(p * m + i) * kk + k];
            const double *brow = b.f.data() + (p * kk + k) * nn;
            for (int64_t j = 0; j < nn; ++j)
              row[j] += x * brow[j];
          }
        }
    }
  } else {
    return fail(op, "not supported by the reference interpreter");
  }
  set(result, std::move(out));
  return llvm::Error::success();
}

llvm::Error Interpreter::executeCombiner(Operation *op, bool isScan) {
  unsigned axis = op->getAttrOfType<IntegerAttr>("axis").getInt();
  bool reverse = isScan && cast<ScanOp>(op).getReverse();
  Region &combiner = op->getRegion(0);
  unsigned numSources = op->getNumOperands();
  llvm::SmallVector<const Val *> sources;
  for (Value source : op->getOperands())
    sources.push_back(&get(source));
  llvm::ArrayRef<int64_t> shape = sources[0]->shape;
  int64_t outer = 1, inner = 1, length = shape[axis];
  for (unsigned d = 0; d < axis; ++d)
    outer *= shape[d];
  for (unsigned d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
  llvm::SmallVector<Val> results;
  for (Value result : op->getResults())
    results.push_back(makeVal(result.getType()));

  // The position of element `a` along the axis in the source and result.
  auto sourceIndex = [&](int64_t o, int64_t a, int64_t in) {
    return (o * length + a) * inner + in;
  };
  auto resultIndex = [&](int64_t o, int64_t a, int64_t in) {
    return isScan ? sourceIndex(o, a, in) : o * inner + in;
  };

  Combiner kind = numSources == 1 ? matchCombiner(combiner) : Combiner::None;
  if (kind != Combiner::None && length > 0) {
    const Val &src = *sources[0];
    Val &res = results[0];
    unsigned w = src.isInt ? widthOf(op->getOperand(0).getType()) : 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t in = 0; in < inner; ++in) {
        int64_t first = reverse ? length - 1 : 0;
        int64_t step = reverse ? -1 : 1;
        if (src.isInt) {
          int64_t acc = src.i[sourceIndex(o, first, in)];
          if (isScan)
            res.i[resultIndex(o, first, in)] = acc;
          for (int64_t s = 1; s < length; ++s) {
            int64_t a = first + s * step;
            acc = combineI(kind, acc, src.i[sourceIndex(o, a, in)], w);
            if (isScan)
              res.i[resultIndex(o, a, in)] = acc;
          }
          if (!isScan)
            res.i[resultIndex(o, 0, in)] = acc;
        } else {
          double acc = src.f[sourceIndex(o, first, in)];
          if (isScan)
            res.f[resultIndex(o, first, in)] = acc;
          for (int64_t s = 1; s < length; ++s) {
            int64_t a = first + s * step;
            acc = combineF(kind, acc, src.f[sourceIndex(o, a, in)]);
            if (isScan)
              res.f[resultIndex(o, a, in)] = acc;
          }
          if (!isScan)
            res.f[resultIndex(o, 0, in)] = acc;
        }
      }
  } else if (length > 0) {
    // General combiners: run the region on scalars.
    Block &block = combiner.front();
    auto scalarOf = [&](const Val &v, int64_t k, Type type) {
      Val s = makeVal(getElementTypeOrSelf(type));
      if (s.isInt)
        s.i[0] = v.i[k];
      else
        s.f[0] = v.f[k];
      return s;
    };
    auto store = [&](int64_t k, llvm::ArrayRef<Val> acc) {
      for (unsigned r = 0; r < numSources; ++r) {
        if (results[r].isInt)
          results[r].i[k] = acc[r].i[0];
        else
          results[r].f[k] = acc[r].f[0];
      }
    };
    llvm::SmallVector<Val> yielded;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t in = 0; in < inner; ++in) {
        int64_t first = reverse ? length - 1 : 0;
        int64_t step = reverse ? -1 : 1;
        llvm::SmallVector<Val> acc;
        for (unsigned r = 0; r < numSources; ++r)
          acc.push_back(scalarOf(*sources[r], sourceIndex(o, first, in),
                                 op->getOperand(r).getType()));
        if (isScan)
          store(resultIndex(o, first, in), acc);
        for (int64_t s = 1; s < length; ++s) {
          int64_t a = first + s * step;
          llvm::SmallVector<Val> args(acc.begin(), acc.end());
          for (unsigned r = 0; r < numSources; ++r)
            args.push_back(scalarOf(*sources[r], sourceIndex(o, a, in),
                                    op->getOperand(r).getType()));
          if (llvm::Error error = runBlock(block, args, yielded))
            return error;
          acc.assign(yielded.begin(), yielded.end());
          if (isScan)
            store(resultIndex(o, a, in), acc);
        }
        if (!isScan)
          store(resultIndex(o, 0, in), acc);
      }
  }
  for (auto [result, value] : llvm::zip(op->getResults(), results))
    set(result, std::move(value));
  return llvm::Error::success();
}

/// ism.im2col by its definition: row i is output pixel m0 + i, column j
/// channel c0 + j of the input pixel tap (r, s) reads, zero outside.
llvm::Error Interpreter::executeIm2col(Im2colOp op) {
  const RefBuffer &buffer = buffers[get(op.getBase()).buffer];
  if (buffer.shape.size() != 4)
    return fail(op, "reads a rank-4 buffer");
  int64_t N = buffer.shape[0], H = buffer.shape[1], W = buffer.shape[2],
          C = buffer.shape[3];
  ArrayRef<int64_t> filter = op.getFilter(), stride = op.getStride(),
                    pad = op.getPadding(), dil = op.getDilation();
  int64_t P = (H + 2 * pad[0] - dil[0] * (filter[0] - 1) - 1) / stride[0] + 1;
  int64_t Q = (W + 2 * pad[1] - dil[1] * (filter[1] - 1) - 1) / stride[1] + 1;
  int64_t m0 = get(op.getPixel()).i[0], c0 = get(op.getChannel()).i[0];
  int64_t r = get(op.getR()).i[0], s = get(op.getS()).i[0];
  Val out = makeVal(op.getType());
  forEachIndex(out.shape, [&](int64_t linear, llvm::ArrayRef<int64_t> idx) {
    int64_t m = m0 + idx[0], c = c0 + idx[1];
    double v = 0;
    if (P > 0 && Q > 0 && m >= 0 && m < N * P * Q && c >= 0 && c < C) {
      int64_t n = m / (P * Q), p = (m / Q) % P, q = m % Q;
      int64_t h = p * stride[0] - pad[0] + r * dil[0];
      int64_t w = q * stride[1] - pad[1] + s * dil[1];
      if (h >= 0 && h < H && w >= 0 && w < W)
        v = buffer.data[((n * H + h) * W + w) * C + c];
    }
    if (out.isInt)
      out.i[linear] = int64_t(v);
    else
      out.f[linear] = v;
  });
  set(op.getResult(), std::move(out));
  return llvm::Error::success();
}

llvm::Error Interpreter::executeMemory(Operation *op) {
  // Operands common to the five ops.
  Value baseValue, valueOperand, maskValue, resultValue;
  llvm::SmallVector<Value, 4> offsets, indices;
  std::optional<Attribute> padding;
  if (auto load = dyn_cast<LoadOp>(op)) {
    baseValue = load.getBase();
    offsets.assign(load.getOffsets().begin(), load.getOffsets().end());
    maskValue = load.getMask();
    resultValue = load.getResult();
    if (load.getPadding())
      padding = *load.getPadding();
  } else if (auto store = dyn_cast<StoreOp>(op)) {
    baseValue = store.getBase();
    offsets.assign(store.getOffsets().begin(), store.getOffsets().end());
    maskValue = store.getMask();
    valueOperand = store.getValue();
  } else if (auto gather = dyn_cast<GatherOp>(op)) {
    baseValue = gather.getBase();
    indices.assign(gather.getIndices().begin(), gather.getIndices().end());
    maskValue = gather.getMask();
    resultValue = gather.getResult();
    if (gather.getPadding())
      padding = *gather.getPadding();
  } else if (auto scatter = dyn_cast<ScatterOp>(op)) {
    baseValue = scatter.getBase();
    indices.assign(scatter.getIndices().begin(), scatter.getIndices().end());
    maskValue = scatter.getMask();
    valueOperand = scatter.getValue();
  } else {
    auto atomic = cast<AtomicRMWOp>(op);
    baseValue = atomic.getBase();
    indices.assign(atomic.getIndices().begin(), atomic.getIndices().end());
    maskValue = atomic.getMask();
    valueOperand = atomic.getValue();
    resultValue = atomic.getResult();
  }

  RefBuffer &buffer = buffers[get(baseValue).buffer];
  size_t rank = buffer.shape.size();
  llvm::SmallVector<int64_t, 4> strides(rank, 1);
  for (int d = static_cast<int>(rank) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * buffer.shape[d + 1];
  const Val *mask = maskValue ? &get(maskValue) : nullptr;
  const Val *value = valueOperand ? &get(valueOperand) : nullptr;
  llvm::SmallVector<int64_t, 4> base;
  for (Value offset : offsets)
    base.push_back(get(offset).i[0]);
  llvm::SmallVector<const Val *, 4> indexTiles;
  for (Value index : indices)
    indexTiles.push_back(&get(index));

  Type tileType = resultValue ? resultValue.getType() : valueOperand.getType();
  Val out = makeVal(tileType);
  double pad = 0;
  if (padding) {
    if (auto attr = dyn_cast<FloatAttr>(*padding))
      pad = attr.getValueAsDouble();
    else if (auto attr = dyn_cast<IntegerAttr>(*padding))
      pad = double(attr.getValue().getSExtValue());
  }
  bool isLoad = isa<LoadOp, GatherOp>(op);
  bool isAtomic = isa<AtomicRMWOp>(op);
  unsigned width = out.isInt ? widthOf(tileType) : 0;
  AtomicKind atomicKind =
      isAtomic ? cast<AtomicRMWOp>(op).getKind() : AtomicKind::Add;
  std::unique_lock<std::mutex> lock(atomicMutex, std::defer_lock);
  if (isAtomic)
    lock.lock();

  llvm::ArrayRef<int64_t> shape = out.shape;
  forEachIndex(shape, [&](int64_t linear, llvm::ArrayRef<int64_t> idx) {
    bool active = !mask || mask->i[linear] != 0;
    int64_t address = 0;
    for (size_t d = 0; d < rank && active; ++d) {
      int64_t c =
          indexTiles.empty() ? base[d] + idx[d] : indexTiles[d]->i[linear];
      if (c < 0 || c >= buffer.shape[d])
        active = false;
      address += c * strides[d];
    }
    if (isLoad) {
      double v = active ? buffer.data[address] : pad;
      if (out.isInt)
        out.i[linear] = int64_t(v);
      else
        out.f[linear] = v;
      return;
    }
    if (!active)
      return;
    double v = value->asDouble(linear);
    if (!isAtomic) {
      buffer.data[address] = v;
      return;
    }
    double old = buffer.data[address];
    double updated = v;
    int64_t a = int64_t(old), b = int64_t(v);
    switch (atomicKind) {
    case AtomicKind::Add:
      updated =
          out.isInt ? double(wrap(uint64_t(a) + uint64_t(b), width)) : old + v;
      break;
    case AtomicKind::Max:
      updated = std::max(old, v);
      break;
    case AtomicKind::Min:
      updated = std::min(old, v);
      break;
    case AtomicKind::UMax:
      updated = unsignedOf(a, width) > unsignedOf(b, width) ? old : v;
      break;
    case AtomicKind::UMin:
      updated = unsignedOf(a, width) < unsignedOf(b, width) ? old : v;
      break;
    case AtomicKind::And:
      updated = double(a & b);
      break;
    case AtomicKind::Or:
      updated = double(a | b);
      break;
    case AtomicKind::Xor:
      updated = double(a ^ b);
      break;
    case AtomicKind::Xchg:
      updated = v;
      break;
    }
    buffer.data[address] = updated;
    if (out.isInt)
      out.i[linear] = a;
    else
      out.f[linear] = old;
  });
  if (resultValue)
    set(resultValue, std::move(out));
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// ReferenceLauncher
//===----------------------------------------------------------------------===//

/// `a * b`, saturating at UINT64_MAX.
static uint64_t mulSaturating(uint64_t a, uint64_t b) {
  uint64_t product;
  return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
}

/// The host memory one program instance of `kernel` may hold, bounded from
/// above: every tile value of the body at once, 8 bytes per element (the
/// interpreter keeps each value until the instance ends), plus two copies of
/// the largest (an op's operands are read while its result is built).
/// Checked against the memory available: an error when one instance cannot
/// fit; `serial` is set when the instances fit one at a time but not one
/// per thread.
static llvm::Error checkInstanceMemory(KernelOp kernel, bool &serial) {
  uint64_t total = 0, largest = 0;
  Type largestType;
  Operation *largestOp = nullptr;
  auto account = [&](Type type, Operation *op) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return;
    uint64_t elements = 1;
    for (int64_t size : tensor.getShape())
      elements = mulSaturating(elements, uint64_t(size));
    uint64_t bytes = mulSaturating(elements, 8);
    total = total + bytes < total ? UINT64_MAX : total + bytes;
    if (bytes > largest) {
      largest = bytes;
      largestType = type;
      largestOp = op;
    }
  };
  kernel.walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      account(type, op);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          account(arg.getType(), op);
  });
  if (largest == 0)
    return llvm::Error::success();
  uint64_t perInstance = mulSaturating(largest, 2);
  perInstance = perInstance + total < total ? UINT64_MAX : perInstance + total;
  uint64_t available = getAvailableHostMemory();
  if (perInstance <= available) {
    unsigned threads =
        std::max(1u, llvm::parallel::strategy.compute_thread_count());
    serial = mulSaturating(perInstance, threads) > available;
    return llvm::Error::success();
  }
  std::string type, location;
  llvm::raw_string_ostream typeOS(type), locationOS(location);
  typeOS << largestType;
  locationOS << largestOp->getLoc();
  return llvm::createStringError(
      "reference interpreter: kernel '" + kernel.getSymName().str() +
      "': the tiles of one program instance need up to " +
      formatBytes(perInstance) + " as float64 (the largest, " + type + " of '" +
      largestOp->getName().getStringRef().str() + "' at " + location + ", " +
      formatBytes(largest) + "), more than the " + formatBytes(available) +
      " of memory available");
}

llvm::Error ReferenceLauncher::launch(LaunchOp op, const unsigned grid[3],
                                      llvm::ArrayRef<HostValue> args) {
  KernelOp kernel = op.getKernelOp(symbols);
  if (!kernel)
    return llvm::createStringError("kernel @" + op.getKernel().str() +
                                   " not found");
  Block &body = kernel.getBody().front();
  llvm::SmallVector<Val> argVals;
  for (auto [param, arg] : llvm::zip(body.getArguments(), args)) {
    Val v;
    if (arg.kind == HostValue::Kind::Buffer) {
      v.buffer = arg.buffer;
    } else {
      v = makeVal(param.getType());
      if (v.isInt)
        v.i[0] = wrap(uint64_t(arg.intValue), widthOf(param.getType()));
      else
        v.f[0] = arg.floatValue;
    }
    argVals.push_back(std::move(v));
  }

  uint64_t total = uint64_t(grid[0]) * grid[1] * grid[2];
  if (total > kMaxInterpretedPrograms)
    return llvm::createStringError(
        llvm::formatv("reference interpreter: kernel '{0}': the grid "
                      "{1}x{2}x{3} has {4} program instances, more than the "
                      "{5} the interpreter runs in one launch; use smaller "
                      "sizes",
                      op.getKernel(), grid[0], grid[1], grid[2], total,
                      kMaxInterpretedPrograms)
            .str());
  // Program instances run one per thread, unless their tiles fit in memory
  // one at a time only.
  bool serial = false;
  if (total > 0)
    if (llvm::Error error = checkInstanceMemory(kernel, serial))
      return error;
  Deadline deadline;
  deadline.at =
      std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds);
  Deadline *limit = timeoutSeconds ? &deadline : nullptr;
  if (workLimit && work + total > workLimit)
    return llvm::createStringError(
        llvm::formatv("reference interpreter: the {0} program instances of "
                      "@{1} go past the interpreter's work limit of {2} "
                      "operations",
                      total, op.getKernel(), workLimit)
            .str());
  // Program instances run in chunks in parallel; the first error wins.
  const uint64_t chunk = 64;
  std::mutex errorMutex;
  std::string firstError;
  auto runChunk = [&](size_t c) {
    llvm::SmallVector<Val> yielded;
    for (uint64_t linear = c * chunk;
         linear < std::min<uint64_t>(total, (c + 1) * chunk); ++linear) {
      unsigned pid[3] = {unsigned(linear % grid[0]),
                         unsigned((linear / grid[0]) % grid[1]),
                         unsigned(linear / (uint64_t(grid[0]) * grid[1]))};
      Interpreter interpreter(buffers, atomicMutex, pid, grid, work, workLimit);
      if (limit) {
        if (limit->check())
          return;
        interpreter.setDeadline(limit);
        ++limit->started;
      }
      if (llvm::Error error = interpreter.runBlock(body, argVals, yielded)) {
        std::lock_guard<std::mutex> guard(errorMutex);
        if (firstError.empty())
          firstError = llvm::toString(std::move(error));
        else
          llvm::consumeError(std::move(error));
        return;
      }
    }
  };
  uint64_t numChunks = (total + chunk - 1) / chunk;
  if (serial)
    for (uint64_t c = 0; c < numChunks && firstError.empty(); ++c)
      runChunk(c);
  else
    llvm::parallelFor(0, numChunks, runChunk);
  numInstances += total;
  if (limit && limit->passed)
    return llvm::createStringError(
        llvm::formatv("reference interpreter: kernel '{0}' did not finish "
                      "within {1} s ({2} of its {3} program instances "
                      "started; --timeout={1}, --timeout=0 waits without "
                      "limit)",
                      op.getKernel(), timeoutSeconds, limit->started.load(),
                      total)
            .str());
  if (!firstError.empty())
    return llvm::createStringError(firstError);
  return llvm::Error::success();
}

llvm::Error ReferenceLauncher::launchGPUFunc(gpu::LaunchFuncOp op,
                                             const unsigned[3],
                                             const unsigned[3], unsigned,
                                             llvm::ArrayRef<HostValue>) {
  return llvm::createStringError(
      "the reference interpreter runs ism.kernel tile programs only; "
      "gpu.launch_func of @" +
      op.getKernelName().str() + " cannot be checked or interpreted");
}

llvm::Expected<unsigned>
ReferenceLauncher::allocate(unsigned, DType dtype,
                            llvm::ArrayRef<int64_t> shape, bool zeroed) {
  uint64_t elements = 1;
  for (int64_t size : shape)
    elements *= uint64_t(size);
  if (llvm::Error error = checkHostMemory(
          8 * elements, "a temporary buffer of the reference interpreter"))
    return std::move(error);
  RefBuffer buffer;
  buffer.shape.assign(shape.begin(), shape.end());
  buffer.isInt = !isFloatDType(dtype);
  buffer.data.assign(elements, zeroed         ? 0.0
                               : buffer.isInt ? double(0x7fffffff)
                                              : NAN);
  buffers.push_back(std::move(buffer));
  return unsigned(buffers.size() - 1);
}

llvm::Error
mlir::ism::runner::checkReferenceMemory(llvm::ArrayRef<BoundArg> args) {
  uint64_t bytes = 0;
  for (const BoundArg &arg : args)
    if (arg.isBuffer)
      bytes += 8 * uint64_t(arg.buffer.getNumElements());
  return checkHostMemory(bytes, "the float64 copy of the buffers for the "
                                "reference interpreter");
}

std::vector<RefBuffer>
mlir::ism::runner::makeReferenceBuffers(llvm::ArrayRef<BoundArg> args) {
  std::vector<RefBuffer> buffers;
  for (const BoundArg &arg : args) {
    RefBuffer buffer;
    if (arg.isBuffer) {
      buffer.shape = arg.buffer.shape;
      buffer.data = arg.buffer.toDoubles();
      buffer.isInt = !isFloatDType(arg.buffer.dtype);
    }
    buffers.push_back(std::move(buffer));
  }
  return buffers;
}
