//===- IsmModule.cpp - the ism._ism Python extension ------------*- C++ -*-===//
//
// Binds contexts, modules, operations, blocks, regions, values, types and
// attributes generically (operations are created by name, as MLIR's own
// Python bindings do), plus pass pipelines, PTX extraction and the run entry
// point. Every call that can fail collects MLIR's diagnostics and raises a
// Python exception carrying them; nothing here lets MLIR assert on bad
// input: types and attributes come from MLIR's parser, operations are
// verified before they are handed back.
//
//===----------------------------------------------------------------------===//

#include "IsmPython.h"

#include "ism/InitIsm.h"
#include "ism/Pipelines/Pipelines.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unordered_map.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <mutex>

namespace nb = nanobind;
using namespace mlir;
using namespace mlir::ism::python;

//===----------------------------------------------------------------------===//
// Errors and diagnostics
//===----------------------------------------------------------------------===//

IsmError::IsmError(ErrorKind kind, std::string summary,
                   std::vector<DiagnosticInfo> diagnostics)
    : kind(kind), summary(std::move(summary)),
      diagnostics(std::move(diagnostics)) {
  text = this->summary;
  for (const DiagnosticInfo &d : this->diagnostics)
    text += "\n" + d.location + ": " + d.severity + ": " + d.message;
}

static const char *severityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Note:
    return "note";
  case DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

template <typename T>
static std::string printToString(const T &value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << value;
  return text;
}

DiagnosticCollector::DiagnosticCollector(MLIRContext *context)
    : handler(context, [this](Diagnostic &diag) {
        diagnostics.push_back({severityName(diag.getSeverity()),
                               printToString(diag.getLocation()), diag.str()});
        for (Diagnostic &note : diag.getNotes())
          diagnostics.push_back(
              {"note", printToString(note.getLocation()), note.str()});
        return success();
      }) {}

void DiagnosticCollector::raise(ErrorKind kind,
                                const std::string &summary) const {
  throw IsmError(kind, summary, diagnostics);
}

namespace {

//===----------------------------------------------------------------------===//
// Handles
//===----------------------------------------------------------------------===//

/// An MLIR context with every dialect ism programs use loaded.
struct ContextHandle {
  ContextHandle() {
    DialectRegistry registry;
    ism::registerAllIsmDialects(registry);
    context = std::make_unique<MLIRContext>(registry);
    context->loadAllAvailableDialects();
  }
  std::unique_ptr<MLIRContext> context;
};

/// A module owned by Python.
struct ModuleHandle {
  OwningOpRef<ModuleOp> module;
};

struct OperationHandle {
  Operation *op;
};
struct BlockHandle {
  Block *block;
};
struct RegionHandle {
  Region *region;
};
struct ValueHandle {
  Value value;
};
struct TypeHandle {
  Type type;
};
struct AttributeHandle {
  Attribute attr;
};
struct LocationHandle {
  Location loc;
};

} // namespace

/// Registers the passes and pipelines once per process.
static void registerPassesOnce() {
  static std::once_flag flag;
  std::call_once(flag, [] { ism::registerAllIsmPasses(); });
}

//===----------------------------------------------------------------------===//
// Operations
//===----------------------------------------------------------------------===//

/// Verifies `op` (and what it holds) and the symbol uses in it, such as an
/// `ism.launch`'s callee and argument types.
static void verifyOperation(Operation *op) {
  DiagnosticCollector diags(op->getContext());
  if (failed(verify(op)))
    diags.raise(ErrorKind::Verification,
                "'" + op->getName().getStringRef().str() +
                    "' failed to verify");
  SymbolTableCollection symbolTables;
  bool ok = true;
  op->walk([&](SymbolUserOpInterface user) {
    if (ok && failed(user.verifySymbolUses(symbolTables)))
      ok = false;
  });
  if (!ok)
    diags.raise(ErrorKind::Verification,
                "'" + op->getName().getStringRef().str() +
                    "' has invalid symbol uses");
}

/// Creates an operation by name at the end of `block` (before its
/// terminator when `beforeTerminator`). It is not verified: callers fill
/// its regions first, then call verify().
static OperationHandle createOperation(
    const std::string &name, const std::vector<ValueHandle> &operands,
    const std::vector<TypeHandle> &resultTypes,
    const std::vector<std::pair<std::string, AttributeHandle>> &attrs,
    unsigned numRegions, BlockHandle block, LocationHandle loc,
    bool beforeTerminator) {
  MLIRContext *context = loc.loc.getContext();
  std::optional<RegisteredOperationName> opName =
      RegisteredOperationName::lookup(name, context);
  if (!opName)
    throw IsmError(ErrorKind::Verification,
                   "'" + name + "' is not a registered operation");
  OperationState state(loc.loc, *opName);
  for (const ValueHandle &v : operands)
    state.operands.push_back(v.value);
  for (const TypeHandle &t : resultTypes)
    state.types.push_back(t.type);
  for (const auto &[attrName, attr] : attrs)
    state.addAttribute(attrName, attr.attr);
  for (unsigned i = 0; i < numRegions; ++i)
    state.addRegion();
  Operation *op = Operation::create(state);
  Block *b = block.block;
  if (beforeTerminator && !b->empty() &&
      b->back().hasTrait<OpTrait::IsTerminator>())
    b->getOperations().insert(Block::iterator(&b->back()), op);
  else
    b->push_back(op);
  return {op};
}

static std::string printOperation(Operation *op, bool debugInfo, bool generic) {
  OpPrintingFlags flags;
  if (debugInfo)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  if (generic)
    flags.printGenericOpForm();
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os, flags);
  return text;
}

//===----------------------------------------------------------------------===//
// Pipelines
//===----------------------------------------------------------------------===//

namespace {
/// Records the IR after every pass (not after pass-manager adaptors).
struct StageRecorder : public PassInstrumentation {
  explicit StageRecorder(std::vector<std::pair<std::string, std::string>> &out)
      : stages(out) {}
  void runAfterPass(Pass *pass, Operation *op) override {
    if (pass->getArgument().empty())
      return;
    Operation *top = op;
    while (Operation *parent = top->getParentOp())
      top = parent;
    stages.emplace_back(pass->getArgument().str(),
                        printOperation(top, false, false));
  }
  std::vector<std::pair<std::string, std::string>> &stages;
};
} // namespace

/// Runs pass pipeline `pipeline` (textual, with or without the
/// `builtin.module(...)` anchor) on `module` in place. With `recordStages`,
/// returns the module's IR after each pass.
static std::vector<std::pair<std::string, std::string>>
runPipeline(ModuleHandle &module, const std::string &pipeline,
            bool recordStages) {
  registerPassesOnce();
  MLIRContext *context = module.module->getContext();
  std::vector<std::pair<std::string, std::string>> stages;
  DiagnosticCollector diags(context);

  StringRef text = StringRef(pipeline).trim();
  if (text.consume_front("builtin.module(")) {
    if (!text.consume_back(")"))
      throw IsmError(ErrorKind::Compile,
                     "unbalanced parentheses in pipeline '" + pipeline + "'");
  }
  PassManager pm(context, ModuleOp::getOperationName());
  std::string parseErrors;
  llvm::raw_string_ostream errorStream(parseErrors);
  if (failed(parsePassPipeline(text, pm, errorStream)))
    throw IsmError(ErrorKind::Compile,
                   "invalid pass pipeline '" + pipeline + "': " + parseErrors);

  // Recording prints the whole module from inside nested pass managers,
  // which is only safe when they do not run in parallel.
  bool wasMultithreaded = context->isMultithreadingEnabled();
  if (recordStages) {
    context->disableMultithreading();
    pm.addInstrumentation(std::make_unique<StageRecorder>(stages));
  }
  LogicalResult result = pm.run(*module.module);
  if (recordStages && wasMultithreaded)
    context->enableMultithreading();
  if (failed(result))
    diags.raise(ErrorKind::Compile, "pass pipeline '" + pipeline + "' failed");
  return stages;
}

/// True when `name` is a registered pass or named pipeline.
static bool hasPass(const std::string &name) {
  registerPassesOnce();
  return PassPipelineInfo::lookup(name) || PassInfo::lookup(name);
}

/// The PTX held by every `gpu.binary` of the module, concatenated.
static std::string extractPTX(ModuleHandle &module) {
  std::string ptx;
  module.module->walk([&](gpu::BinaryOp binary) {
    for (Attribute object : binary.getObjects())
      if (auto obj = dyn_cast<gpu::ObjectAttr>(object))
        ptx += obj.getObject().getValue().str();
  });
  return ptx;
}

/// Compiles a GPU-level module (kernels in `gpu.module`s) to PTX; returns
/// the PTX and, per kernel, its block size and dynamic shared memory.
static std::pair<std::string,
                 std::unordered_map<std::string, std::pair<unsigned, unsigned>>>
compileGPUToPTX(ModuleHandle &module, const std::string &chip,
                const std::string &features, unsigned optLevel) {
  ism::PTXOptions options;
  options.chip = chip;
  options.features = features;
  options.optLevel = optLevel;
  if (optLevel > 3)
    throw IsmError(ErrorKind::Compile, "opt_level must be 0 to 3");
  llvm::Expected<ism::CompiledModule> compiled =
      ism::compileGPUModuleToPTX(*module.module, options);
  if (!compiled)
    throw IsmError(ErrorKind::Compile, llvm::toString(compiled.takeError()));
  std::unordered_map<std::string, std::pair<unsigned, unsigned>> kernels;
  for (const auto &entry : compiled->kernels)
    kernels[entry.getKey().str()] = {entry.getValue().numThreads,
                                     entry.getValue().sharedMemoryBytes};
  return {compiled->ptx, kernels};
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

/// Converts the Python-side description of each argument: a tuple
/// ("buffer", data address, element type, shape, strides) or
/// ("int"|"float", value).
static std::vector<HostArgument> toHostArguments(const nb::list &arguments) {
  std::vector<HostArgument> args;
  for (nb::handle item : arguments) {
    nb::tuple t = nb::cast<nb::tuple>(item);
    std::string kind = nb::cast<std::string>(t[0]);
    HostArgument arg;
    if (kind == "buffer") {
      arg.isBuffer = true;
      arg.data = reinterpret_cast<void *>(nb::cast<uintptr_t>(t[1]));
      arg.elementType = nb::cast<std::string>(t[2]);
      arg.shape = nb::cast<std::vector<int64_t>>(t[3]);
      arg.strides = nb::cast<std::vector<int64_t>>(t[4]);
    } else if (kind == "float") {
      arg.isFloat = true;
      arg.floatValue = nb::cast<double>(t[1]);
    } else {
      arg.intValue = nb::cast<int64_t>(t[1]);
    }
    args.push_back(std::move(arg));
  }
  return args;
}

/// Runs a host function on the GPU; returns the times of the timed runs
/// and a dict of the SM clock and board power during them.
static nb::tuple
runEntry(ModuleHandle &module, const std::string &entry,
         const nb::list &arguments, const std::string &chip, bool timing,
         unsigned warmup, unsigned repetitions, const std::string &coschedule,
         unsigned calls, bool flushL2, bool graph) {
  std::vector<HostArgument> args = toHostArguments(arguments);
  RunOptions options;
  options.chip = chip;
  options.coschedule = coschedule;
  options.timing = timing;
  options.warmup = warmup;
  options.repetitions = repetitions;
  options.calls = calls;
  options.flushL2 = flushL2;
  options.graph = graph;
  RunResult result;
  {
    nb::gil_scoped_release release;
    result = runHostFunction(*module.module, entry, args, options);
  }
  nb::dict power;
  if (result.powerMeasured) {
    power["sm_clock_mhz"] = result.smClockMhz;
    power["power_w"] = result.powerW;
    power["power_capped"] = result.powerCapped;
    power["samples"] = result.powerSamples;
  } else if (timing) {
    power["unavailable"] = result.powerUnavailable;
  }
  return nb::make_tuple(result.timesMs, power);
}

/// Runs a host function in the reference interpreter.
static void interpretEntry(ModuleHandle &module, const std::string &entry,
                           const nb::list &arguments) {
  std::vector<HostArgument> args = toHostArguments(arguments);
  nb::gil_scoped_release release;
  interpretHostFunction(*module.module, entry, args);
}

//===----------------------------------------------------------------------===//
// The module
//===----------------------------------------------------------------------===//

/// The Python exception classes, created once at import.
static PyObject *errorClasses[5];
static PyObject *baseErrorClass;

static PyObject *makeErrorClass(nb::module_ &m, const char *name,
                                PyObject *bases, const char *doc) {
  std::string qualified = std::string("ism.") + name;
  PyObject *cls =
      PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  m.attr(name) = nb::handle(cls);
  return cls;
}

static void translateIsmError(const std::exception_ptr &p, void *) {
  try {
    std::rethrow_exception(p);
  } catch (const IsmError &e) {
    PyObject *cls = errorClasses[static_cast<int>(e.kind)];
    nb::list diagnostics;
    for (const DiagnosticInfo &d : e.diagnostics)
      diagnostics.append(nb::make_tuple(d.severity, d.location, d.message));
    nb::object instance = nb::borrow(nb::handle(cls))(nb::str(e.what()));
    instance.attr("summary") = e.summary;
    instance.attr("diagnostics") = diagnostics;
    // The first error's location and message, when MLIR reported one.
    nb::object location = nb::none(), message = nb::none();
    for (const DiagnosticInfo &d : e.diagnostics) {
      if (d.severity == "error") {
        location = nb::str(d.location.c_str());
        message = nb::str(d.message.c_str());
        break;
      }
    }
    instance.attr("location") = location;
    instance.attr("mlir_message") = message;
    PyErr_SetObject(cls, instance.ptr());
  }
}

NB_MODULE(_ism, m) {
  m.doc() = "ism's native extension: generic MLIR handles for the ism "
            "Python package";

  baseErrorClass = makeErrorClass(m, "IsmError", PyExc_Exception,
                                  "Base class of ism errors.");
  nb::object valueBases =
      nb::make_tuple(nb::handle(baseErrorClass), nb::handle(PyExc_ValueError));
  nb::object runtimeBases = nb::make_tuple(nb::handle(baseErrorClass),
                                           nb::handle(PyExc_RuntimeError));
  errorClasses[static_cast<int>(ErrorKind::Parse)] = makeErrorClass(
      m, "ParseError", valueBases.ptr(), "MLIR could not parse the text.");
  errorClasses[static_cast<int>(ErrorKind::Verification)] = makeErrorClass(
      m, "VerificationError", valueBases.ptr(),
      "An operation or module failed to verify; carries MLIR's diagnostics.");
  errorClasses[static_cast<int>(ErrorKind::Compile)] =
      makeErrorClass(m, "CompileError", baseErrorClass,
                     "A pass pipeline could not be parsed or failed.");
  errorClasses[static_cast<int>(ErrorKind::RuntimeUnavailable)] =
      makeErrorClass(m, "RuntimeUnavailable", runtimeBases.ptr(),
                     "No CUDA driver or GPU is available.");
  errorClasses[static_cast<int>(ErrorKind::Run)] =
      makeErrorClass(m, "RunError", runtimeBases.ptr(),
                     "Compiling or running a host function failed.");
  nb::register_exception_translator(translateIsmError);

  nb::class_<ContextHandle>(m, "Context")
      .def(nb::init<>())
      .def(
          "parse_type",
          [](ContextHandle &self, const std::string &text) {
            DiagnosticCollector diags(self.context.get());
            size_t numRead = 0;
            Type type = parseType(text, self.context.get(), &numRead);
            if (!type || numRead != text.size())
              diags.raise(ErrorKind::Parse, "invalid type '" + text + "'");
            return TypeHandle{type};
          },
          "Parses an MLIR type, e.g. 'tensor<128xf32>'.")
      .def(
          "parse_attr",
          [](ContextHandle &self, const std::string &text) {
            DiagnosticCollector diags(self.context.get());
            size_t numRead = 0;
            Attribute attr =
                parseAttribute(text, self.context.get(), Type(), &numRead);
            if (!attr || numRead != text.size())
              diags.raise(ErrorKind::Parse, "invalid attribute '" + text + "'");
            return AttributeHandle{attr};
          },
          "Parses an MLIR attribute, e.g. '128 : index'.")
      .def("file_loc",
           [](ContextHandle &self, const std::string &file, unsigned line,
              unsigned col) {
             return LocationHandle{
                 FileLineColLoc::get(self.context.get(), file, line, col)};
           })
      .def("unknown_loc",
           [](ContextHandle &self) {
             return LocationHandle{UnknownLoc::get(self.context.get())};
           })
      .def("set_multithreading", [](ContextHandle &self, bool enable) {
        self.context->enableMultithreading(enable);
      });

  nb::class_<ModuleHandle>(m, "Module")
      .def_static(
          "parse",
          [](ContextHandle &ctx, const std::string &text,
             const std::string &sourceName) {
            DiagnosticCollector diags(ctx.context.get());
            ParserConfig config(ctx.context.get(), /*verifyAfterParse=*/false);
            OwningOpRef<ModuleOp> module =
                parseSourceString<ModuleOp>(text, config, sourceName);
            if (!module)
              diags.raise(ErrorKind::Parse, "could not parse the module");
            verifyOperation(*module);
            return new ModuleHandle{std::move(module)};
          },
          nb::arg("context"), nb::arg("text"),
          nb::arg("source_name") = "<string>", nb::keep_alive<0, 1>(),
          "Parses (and verifies) a module from MLIR text.")
      .def_static(
          "create",
          [](ContextHandle &ctx, LocationHandle loc) {
            return new ModuleHandle{ModuleOp::create(loc.loc)};
          },
          nb::keep_alive<0, 1>())
      .def("__str__",
           [](ModuleHandle &self) {
             return printOperation(*self.module, false, false);
           })
      .def(
          "print",
          [](ModuleHandle &self, bool debugInfo, bool generic) {
            return printOperation(*self.module, debugInfo, generic);
          },
          nb::arg("debug_info") = false, nb::arg("generic") = false)
      .def("verify", [](ModuleHandle &self) { verifyOperation(*self.module); })
      .def("clone",
           [](ModuleHandle &self) {
             return new ModuleHandle{
                 OwningOpRef<ModuleOp>(self.module->clone())};
           })
      .def_prop_ro("body",
                   [](ModuleHandle &self) {
                     return BlockHandle{self.module->getBody()};
                   })
      .def_prop_ro("operation", [](ModuleHandle &self) {
        return OperationHandle{self.module->getOperation()};
      });

  nb::class_<OperationHandle>(m, "Operation")
      .def_static("create", &createOperation, nb::arg("name"),
                  nb::arg("operands"), nb::arg("result_types"),
                  nb::arg("attributes"), nb::arg("num_regions"),
                  nb::arg("block"), nb::arg("loc"),
                  nb::arg("before_terminator") = false,
                  "Creates an operation (unverified) at the end of a block.")
      .def_prop_ro("name",
                   [](OperationHandle &self) {
                     return self.op->getName().getStringRef().str();
                   })
      .def_prop_ro("results",
                   [](OperationHandle &self) {
                     std::vector<ValueHandle> results;
                     for (Value v : self.op->getResults())
                       results.push_back({v});
                     return results;
                   })
      .def_prop_ro("operands",
                   [](OperationHandle &self) {
                     std::vector<ValueHandle> operands;
                     for (Value v : self.op->getOperands())
                       operands.push_back({v});
                     return operands;
                   })
      .def_prop_ro("regions",
                   [](OperationHandle &self) {
                     std::vector<RegionHandle> regions;
                     for (Region &r : self.op->getRegions())
                       regions.push_back({&r});
                     return regions;
                   })
      .def(
          "attr",
          [](OperationHandle &self,
             const std::string &name) -> std::optional<std::string> {
            Attribute attr = self.op->getAttr(name);
            if (!attr)
              return std::nullopt;
            return printToString(attr);
          },
          "The named attribute (inherent or discardable) as text, or None.")
      .def("verify", [](OperationHandle &self) { verifyOperation(self.op); })
      .def("erase", [](OperationHandle &self) { self.op->erase(); })
      .def(
          "move_before",
          [](OperationHandle &self, OperationHandle &other) {
            self.op->moveBefore(other.op);
          },
          "Moves this operation right before `other` (same region tree).")
      .def("__str__", [](OperationHandle &self) {
        return printOperation(self.op, false, false);
      });

  nb::class_<RegionHandle>(m, "Region")
      .def(
          "add_block",
          [](RegionHandle &self, const std::vector<TypeHandle> &argTypes,
             LocationHandle loc) {
            Block *block = new Block();
            self.region->push_back(block);
            for (const TypeHandle &t : argTypes)
              block->addArgument(t.type, loc.loc);
            return BlockHandle{block};
          },
          nb::arg("arg_types"), nb::arg("loc"))
      .def_prop_ro("blocks", [](RegionHandle &self) {
        std::vector<BlockHandle> blocks;
        for (Block &b : *self.region)
          blocks.push_back({&b});
        return blocks;
      });

  nb::class_<BlockHandle>(m, "Block")
      .def_prop_ro("arguments",
                   [](BlockHandle &self) {
                     std::vector<ValueHandle> args;
                     for (Value v : self.block->getArguments())
                       args.push_back({v});
                     return args;
                   })
      .def_prop_ro("operations",
                   [](BlockHandle &self) {
                     std::vector<OperationHandle> ops;
                     for (Operation &op : *self.block)
                       ops.push_back({&op});
                     return ops;
                   })
      .def("__eq__", [](BlockHandle &self, BlockHandle &other) {
        return self.block == other.block;
      });

  nb::class_<ValueHandle>(m, "Value")
      .def_prop_ro(
          "type",
          [](ValueHandle &self) { return TypeHandle{self.value.getType()}; })
      .def_prop_ro("owner",
                   [](ValueHandle &self) -> std::optional<OperationHandle> {
                     if (Operation *op = self.value.getDefiningOp())
                       return OperationHandle{op};
                     return std::nullopt;
                   })
      .def("__eq__",
           [](ValueHandle &self, ValueHandle &other) {
             return self.value == other.value;
           })
      .def("__hash__",
           [](ValueHandle &self) {
             return reinterpret_cast<uintptr_t>(
                 self.value.getAsOpaquePointer());
           })
      .def("__str__", [](ValueHandle &self) {
        std::string text;
        llvm::raw_string_ostream os(text);
        self.value.printAsOperand(os, OpPrintingFlags());
        return text;
      });

  nb::class_<TypeHandle>(m, "Type")
      .def("__str__", [](TypeHandle &self) { return printToString(self.type); })
      .def("__eq__", [](TypeHandle &self,
                        TypeHandle &other) { return self.type == other.type; })
      .def("__hash__",
           [](TypeHandle &self) {
             return reinterpret_cast<uintptr_t>(self.type.getAsOpaquePointer());
           })
      .def_prop_ro(
          "shape",
          [](TypeHandle &self)
              -> std::optional<std::vector<std::optional<int64_t>>> {
            auto shaped = dyn_cast<ShapedType>(self.type);
            if (!shaped || !shaped.hasRank())
              return std::nullopt;
            std::vector<std::optional<int64_t>> shape;
            for (int64_t d : shaped.getShape())
              shape.push_back(ShapedType::isDynamic(d)
                                  ? std::nullopt
                                  : std::optional<int64_t>(d));
            return shape;
          },
          "Dimensions of a shaped type (None for dynamic ones), else None.")
      .def_prop_ro("element_type",
                   [](TypeHandle &self) {
                     return TypeHandle{getElementTypeOrSelf(self.type)};
                   })
      .def_prop_ro(
          "is_tensor",
          [](TypeHandle &self) { return isa<RankedTensorType>(self.type); })
      .def_prop_ro("is_memref",
                   [](TypeHandle &self) { return isa<MemRefType>(self.type); })
      .def_prop_ro("is_index",
                   [](TypeHandle &self) { return self.type.isIndex(); })
      .def_prop_ro("is_integer",
                   [](TypeHandle &self) { return isa<IntegerType>(self.type); })
      .def_prop_ro("is_float",
                   [](TypeHandle &self) { return isa<FloatType>(self.type); })
      .def_prop_ro("width", [](TypeHandle &self) -> std::optional<unsigned> {
        if (self.type.isIntOrFloat())
          return self.type.getIntOrFloatBitWidth();
        return std::nullopt;
      });

  nb::class_<AttributeHandle>(m, "Attribute")
      .def("__str__",
           [](AttributeHandle &self) { return printToString(self.attr); })
      .def("__eq__", [](AttributeHandle &self, AttributeHandle &other) {
        return self.attr == other.attr;
      });

  nb::class_<LocationHandle>(m, "Location")
      .def("__str__",
           [](LocationHandle &self) { return printToString(self.loc); });

  m.def("run_pipeline", &runPipeline, nb::arg("module"), nb::arg("pipeline"),
        nb::arg("record_stages") = false,
        "Runs a textual pass pipeline on the module in place; returns "
        "[(pass, IR after it)] when record_stages.");
  m.def("has_pass", &hasPass, nb::arg("name"),
        "True when a pass or named pipeline is registered under name.");
  m.def("extract_ptx", &extractPTX, nb::arg("module"),
        "The PTX text of every gpu.binary in the module.");
  m.def("compile_gpu_to_ptx", &compileGPUToPTX, nb::arg("module"),
        nb::arg("chip"), nb::arg("features") = "+ptx81",
        nb::arg("opt_level") = 3,
        "Compiles a GPU-level module to PTX: (ptx, {kernel: (threads, "
        "shared memory bytes)}).");
  m.def("runtime_available", &isRuntimeAvailable,
        "True when this build links the GPU runner.");
  m.def("run", &runEntry, nb::arg("module"), nb::arg("entry"),
        nb::arg("arguments"), nb::arg("chip") = "", nb::arg("timing") = false,
        nb::arg("warmup") = 10, nb::arg("repetitions") = 100,
        nb::arg("coschedule") = "fused", nb::arg("calls") = 1,
        nb::arg("flush_l2") = true, nb::arg("graph") = false,
        "Runs a host function through the GPU runner; returns (times in ms, "
        "{sm_clock_mhz, power_w, power_capped, samples} or {unavailable}).");
  m.def("interpret", &interpretEntry, nb::arg("module"), nb::arg("entry"),
        nb::arg("arguments"),
        "Runs a host function in the runner's float64 reference interpreter.");
  registerProgramBindings(m);
  registerPowerBindings(m);
}
