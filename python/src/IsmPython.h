//===- IsmPython.h - shared pieces of the ism Python extension --*- C++ -*-===//
//
// The extension `ism._ism` binds a small, generic slice of the MLIR C++ API
// (contexts, modules, operations, blocks, values, types, attributes, pass
// pipelines); the Pythonic builders live in the `ism` Python package on top
// of it. MLIR itself is built without exceptions: every call into it reports
// failures through diagnostics, which this file turns into C++ exceptions
// that the extension translates into Python ones.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_PYTHON_ISMPYTHON_H
#define ISM_PYTHON_ISMPYTHON_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <nanobind/nanobind.h>

#include <cstdint>
#include <exception>
#include <string>
#include <vector>

namespace mlir::ism::python {

/// One diagnostic MLIR reported: severity ("error", "warning", "note",
/// "remark"), location and message.
struct DiagnosticInfo {
  std::string severity;
  std::string location;
  std::string message;
};

/// The kinds of failure the extension reports; each maps to one Python
/// exception class of the same name.
enum class ErrorKind { Parse, Verification, Compile, RuntimeUnavailable, Run };

/// A failure carrying MLIR's diagnostics, thrown by the binding code only
/// (never through MLIR frames) and translated into a Python exception.
class IsmError : public std::exception {
public:
  IsmError(ErrorKind kind, std::string summary,
           std::vector<DiagnosticInfo> diagnostics = {});
  const char *what() const noexcept override { return text.c_str(); }

  ErrorKind kind;
  std::string summary;
  std::vector<DiagnosticInfo> diagnostics;

private:
  std::string text;
};

/// Collects every diagnostic emitted on `context` while it is alive, so
/// that a failed MLIR call can be reported with MLIR's own messages.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext *context);

  /// Throws an IsmError of `kind` with `summary` and the diagnostics
  /// collected so far.
  [[noreturn]] void raise(ErrorKind kind, const std::string &summary) const;

  std::vector<DiagnosticInfo> diagnostics;

private:
  mlir::ScopedDiagnosticHandler handler;
};

/// One argument of a host function run: a host buffer (a NumPy array the
/// runner copies to the device and back) or a scalar.
struct HostArgument {
  bool isBuffer = false;
  /// Buffer: host data, element type name (MLIR spelling), shape and
  /// strides in elements.
  void *data = nullptr;
  std::string elementType;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  /// Scalar: its value (integers and index in `intValue`).
  int64_t intValue = 0;
  double floatValue = 0.0;
  bool isFloat = false;
};

/// How to run a host function.
struct RunOptions {
  /// Target chip; empty means "the GPU's own compute capability".
  std::string chip;
  /// Time the host function after the run: `warmup` runs, then
  /// `repetitions` timed runs, each after flushing the L2 cache.
  bool timing = false;
  unsigned warmup = 10;
  unsigned repetitions = 100;
  /// How ism.coschedule regions run: "fused", "sequential" or "streams".
  std::string coschedule = "fused";
  /// Calls back to back in each timed run (the time is per call), whether
  /// to flush the L2 cache before each timed run, and whether the run and
  /// the timed runs replay the calls from a CUDA graph (TimingOptions).
  unsigned calls = 1;
  bool flushL2 = true;
  bool graph = false;
};

/// What a run reports: per-repetition times in milliseconds when timing.
struct RunResult {
  std::vector<double> timesMs;
  /// The SM clock and board power during the timed runs (NVML), or why
  /// they were not measured.
  bool powerMeasured = false;
  std::string powerUnavailable;
  double smClockMhz = 0, powerW = 0, powerCapped = 0;
  unsigned powerSamples = 0;
};

/// Registers ism._ism.PowerMonitor: the SM clock and board power of a GPU
/// between start() and stop() (NVML), for the autotuner's report.
void registerPowerBindings(nanobind::module_ &m);

/// True when this build of the extension links the runner library (a GPU
/// or its driver may still be missing; runHostFunction says so).
bool isRuntimeAvailable();

/// Runs host function `entry` of `module` on GPU 0 through the runner
/// library (the same runtime as `ism-run`): copies the buffer arguments to
/// the device, runs the function once, copies every buffer back into its
/// host memory and, when timing, then times further runs. Throws IsmError:
/// RuntimeUnavailable when there is no CUDA driver or GPU, Run when the
/// arguments do not fit the function or compiling or running fails.
RunResult runHostFunction(mlir::ModuleOp module, const std::string &entry,
                          std::vector<HostArgument> &args,
                          const RunOptions &options);

/// Runs host function `entry` of `module` in the runner's float64 reference
/// interpreter on the CPU and writes every buffer back into its host memory
/// (rounded to its element type). Throws IsmError (Run) on failure.
void interpretHostFunction(mlir::ModuleOp module, const std::string &entry,
                           std::vector<HostArgument> &args);

/// Adds `Program` (Launch.cpp): a module compiled once and launched on
/// device memory (torch tensors, CuPy arrays) on the caller's stream.
void registerProgramBindings(nanobind::module_ &m);

} // namespace mlir::ism::python

#endif // ISM_PYTHON_ISMPYTHON_H
