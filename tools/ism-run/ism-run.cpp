//===- ism-run.cpp - Execute, check and time ism kernels ------------------===//
//
// Parses an ism module, binds the host function's arguments from the
// command line, runs it on the GPU through the CUDA driver (or on the CPU in
// the reference interpreter with --interpret), checks the outputs against
// the reference (--check) and times the host function (--bench). See
// docs/runner.md.
//
//===----------------------------------------------------------------------===//

#include "ism/InitIsm.h"
#include "ism/Runner/ArgSpec.h"
#include "ism/Runner/Check.h"
#include "ism/Runner/Compile.h"
#include "ism/Runner/CompileCache.h"
#include "ism/Runner/GPULauncher.h"
#include "ism/Runner/HostExecutor.h"
#include "ism/Runner/Reference.h"
#include "ism/Runner/Trace.h"
#include "ism/Runner/Tune.h"
#include "ism/Runtime/CudaDriver.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>

using namespace mlir;
using namespace mlir::ism;
using namespace mlir::ism::runner;
namespace cl = llvm::cl;

static cl::OptionCategory category("ism-run options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<file.mlir>"),
                                      cl::cat(category));
static cl::opt<std::string> entryName("entry", cl::desc("Host function to run"),
                                      cl::init("main"), cl::cat(category));
static cl::opt<std::string>
    chipName("chip",
             cl::desc("GPU architecture to compile for (default: the "
                      "device's, e.g. sm_90a; sm_90a without a GPU)"),
             cl::cat(category));
static cl::opt<int> deviceOrdinal("device", cl::desc("CUDA device ordinal"),
                                  cl::init(0), cl::cat(category));
static cl::list<std::string>
    argSpecs("arg",
             cl::desc("Entry argument, in order: DTYPE:SHAPE[:INIT] "
                      "(INIT: randn, uniform, either times a scale as in "
                      "randn*0.02, zeros, ones, arange, poison, PATH.npy), "
                      "npy:PATH, DTYPE:scalar=V or V"),
             cl::cat(category));
static cl::opt<uint64_t> seed("seed", cl::desc("Seed of the initialisers"),
                              cl::init(0), cl::cat(category));
static cl::opt<bool> check("check",
                           cl::desc("Compare the outputs with the float64 "
                                    "reference interpreter"),
                           cl::cat(category));
static cl::opt<bool> interpret("interpret",
                               cl::desc("Run on the CPU in the reference "
                                        "interpreter only"),
                               cl::cat(category));
static cl::opt<bool> bench("bench", cl::desc("Time the host function"),
                           cl::cat(category));
static cl::opt<unsigned> warmup("warmup", cl::desc("Warm-up runs of --bench"),
                                cl::init(10), cl::cat(category));
static cl::opt<unsigned> reps("reps", cl::desc("Timed runs of --bench"),
                              cl::init(100), cl::cat(category));
static cl::opt<unsigned>
    callsPerRep("calls",
                cl::desc("Host-function calls back to back in each timed run "
                         "of --bench, timed together (the time is per call: "
                         "steady state, as serving runs one step after "
                         "another; the L2 flush, if any, is once a run)"),
                cl::init(1), cl::cat(category));
static cl::opt<bool>
    graphRun("graph",
             cl::desc("Launch the host function's kernels as a CUDA graph: "
                      "captured after a first call outside it, then "
                      "replayed for the checked run (on the arguments as "
                      "given again) and for each timed run of --bench (one "
                      "graph of --calls calls)"),
             cl::cat(category));
static cl::opt<bool> flushL2("flush-l2",
                             cl::desc("Flush the L2 cache before each timed "
                                      "run (default on)"),
                             cl::init(true), cl::cat(category));
static cl::opt<double> bytesOverride("bytes",
                                     cl::desc("Bytes moved per run, for GB/s "
                                              "(default: inputs read once + "
                                              "outputs written once)"),
                                     cl::init(0), cl::cat(category));
static cl::opt<double> flops("flops",
                             cl::desc("Floating-point operations per run, "
                                      "for TFLOP/s"),
                             cl::init(0), cl::cat(category));
static cl::opt<double> atolOverride("atol",
                                    cl::desc("Override the check's atol"),
                                    cl::init(-1), cl::cat(category));
static cl::opt<double> rtolOverride("rtol",
                                    cl::desc("Override the check's rtol"),
                                    cl::init(-1), cl::cat(category));
static cl::list<std::string>
    saves("save",
          cl::desc("IDX:PATH.npy: write buffer argument IDX after "
                   "the run"),
          cl::cat(category));
static cl::list<std::string>
    expects("expect",
            cl::desc("IDX:PATH.npy: with --interpret, compare buffer IDX of "
                     "the reference run with an output computed elsewhere, "
                     "as --check does"),
            cl::cat(category));
static cl::opt<bool> json("json", cl::desc("Print one JSON object"),
                          cl::cat(category));
static cl::opt<bool> listDevices("list-devices",
                                 cl::desc("List the CUDA GPUs and exit"),
                                 cl::cat(category));
static cl::opt<std::string> coscheduleMode(
    "coschedule",
    cl::desc("How the launches of an ism.coschedule run on the GPU: fused "
             "(one kernel fused by the compiler), sequential (one after "
             "another) or streams (each on its own stream); the reference "
             "always runs them one after another"),
    cl::value_desc("fused|sequential|streams"), cl::init("fused"),
    cl::cat(category));
static cl::opt<bool> verbose("verbose",
                             cl::desc("Print the launch facts of each fused "
                                      "(co-scheduled) kernel, and the compile "
                                      "cache's hits, misses and warnings"),
                             cl::cat(category));
static cl::opt<std::string> cacheDir(
    "cache-dir",
    cl::desc("Directory of the compile cache (default: $ISM_CACHE_DIR, else "
             "$XDG_CACHE_HOME/ism, else ~/.cache/ism)"),
    cl::value_desc("DIR"), cl::cat(category));
static cl::opt<bool> noCache("no-cache",
                             cl::desc("Compile without the compile cache "
                                      "(neither read nor written)"),
                             cl::cat(category));
static cl::opt<std::string> traceFile(
    "trace",
    cl::desc("Run the fused kernels of the ism.coschedule regions once with "
             "per-work-item recording (SM, start, end) and write the records "
             "as a Chrome trace (chrome://tracing, Perfetto); prints how long "
             "the co-scheduled kernels were active on the same SM"),
    cl::value_desc("FILE.json"), cl::cat(category));
static cl::opt<std::string> emit("emit",
                                 cl::desc("Stop early and print: ptx or ir"),
                                 cl::cat(category));
static cl::opt<unsigned> timeout(
    "timeout",
    cl::desc("Longest wait, in seconds, for the GPU to finish (each "
             "synchronisation) and for one launch in the reference "
             "interpreter; past it ism-run stops with an error naming the "
             "kernel (default 600; 0 waits without limit)"),
    cl::value_desc("seconds"), cl::init(600), cl::cat(category));

static cl::opt<unsigned> persistentCtas(
    "persistent-ctas",
    cl::desc("Launch persistent kernels (the wgmma GEMM, kernels with "
             "persistent = true) on at most this many CTAs (default 0: one "
             "per SM), so that a small grid still has each CTA walk several "
             "programs"),
    cl::value_desc("n"), cl::init(0), cl::cat(category));

static cl::opt<std::string> tuneSpec(
    "tune",
    cl::desc("Before the run, pick kernel attributes by timing candidates: "
             "--tune=ATTR=V1,V2;ATTR=... (num_warps, num_stages, group_size, "
             "min_ctas_per_sm, cluster_m, cluster_n, cluster_k, "
             "consumer_groups, swap_ab, tma_store, gather_stages, "
             "load_stages; and "
             "coschedule=fused,sequential,streams, how ism.coschedule "
             "regions run), or a default set with "
             "a bare --tune; the winner is cached on disk"),
    cl::value_desc("SPEC"), cl::ValueOptional, cl::cat(category));
static cl::opt<unsigned> tuneReps("tune-reps",
                                  cl::desc("Timed runs of each --tune "
                                           "candidate (the median counts)"),
                                  cl::init(20), cl::cat(category));

/// Prints "ism-run: MESSAGE" and returns the exit code 1.
static int fail(const llvm::Twine &message) {
  llvm::errs() << "ism-run: " << message << "\n";
  return 1;
}

static int fail(llvm::Error error) {
  return fail(llvm::toString(std::move(error)));
}

static llvm::json::Object deviceJSON(const cuda::DeviceInfo &info) {
  return llvm::json::Object{
      {"ordinal", info.ordinal},
      {"name", info.name},
      {"sm_count", info.smCount},
      {"compute_capability",
       std::to_string(info.ccMajor) + "." + std::to_string(info.ccMinor)},
      {"chip", info.chip()},
      {"memory_bytes", static_cast<int64_t>(info.totalMemoryBytes)},
      {"l2_bytes", info.l2CacheBytes},
      {"shared_memory_per_block_optin", info.sharedMemoryPerBlockOptin}};
}

static int runListDevices() {
  llvm::Expected<cuda::Driver &> driver = cuda::Driver::get();
  if (!driver)
    return fail(driver.takeError());
  llvm::Expected<int> count = driver->getDeviceCount();
  if (!count)
    return fail(count.takeError());
  if (*count == 0)
    return fail("no CUDA GPU found");
  llvm::json::Array devices;
  for (int i = 0; i < *count; ++i) {
    llvm::Expected<cuda::DeviceInfo> info = driver->getDeviceInfo(i);
    if (!info)
      return fail(info.takeError());
    if (json) {
      devices.push_back(deviceJSON(*info));
      continue;
    }
    llvm::outs() << llvm::formatv(
        "{0}: {1}, {2} SMs, compute capability {3}.{4} ({5}), {6:F1} GiB, "
        "L2 {7:F1} MiB, shared memory per block {8} KiB (opt-in)\n",
        i, info->name, info->smCount, info->ccMajor, info->ccMinor,
        info->chip(), info->totalMemoryBytes / double(1 << 30),
        info->l2CacheBytes / double(1 << 20),
        info->sharedMemoryPerBlockOptin / 1024);
  }
  if (json)
    llvm::outs() << llvm::formatv(
        "{0:2}\n", llvm::json::Value(llvm::json::Object{
                       {"driver_version", driver->getDriverVersion()},
                       {"devices", std::move(devices)}}));
  return 0;
}

/// Parses the input, keeping only the first error as one line.
static OwningOpRef<ModuleOp> parseInput(MLIRContext &context,
                                        std::string &error) {
  std::string errorMessage;
  if (!llvm::sys::fs::exists(inputFile)) {
    error = "cannot open '" + inputFile + "': no such file";
    return nullptr;
  }
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error && error.empty()) {
      llvm::raw_string_ostream os(error);
      os << diag.getLocation() << ": " << diag;
    }
    return success();
  });
  llvm::SourceMgr sourceMgr;
  std::string includedFrom;
  auto file = llvm::MemoryBuffer::getFile(inputFile);
  if (!file) {
    error = "cannot open '" + inputFile + "': " + file.getError().message();
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(*file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module && error.empty())
    error = "cannot parse '" + inputFile + "'";
  return module;
}

/// Compares output `index` (as computed, `got`) with the reference, prints
/// the result (unless --json) and appends it to `outputs`. Returns whether it
/// passed.
static bool checkOutput(unsigned index, DType dtype,
                        llvm::ArrayRef<int64_t> shape, const HostBuffer &got,
                        llvm::ArrayRef<double> expected,
                        llvm::json::Array &outputs) {
  Tolerance tolerance = getDefaultTolerance(dtype);
  if (atolOverride >= 0)
    tolerance.atol = atolOverride;
  if (rtolOverride >= 0)
    tolerance.rtol = rtolOverride;
  CheckResult result = compareOutput(got, expected, tolerance);
  std::string first;
  if (result.firstMismatch >= 0) {
    // The first mismatch as a multi-dimensional index.
    llvm::SmallVector<int64_t, 4> position(shape.size());
    int64_t rest = result.firstMismatch;
    for (int d = static_cast<int>(position.size()) - 1; d >= 0; --d) {
      position[d] = rest % shape[d];
      rest /= shape[d];
    }
    first = "[";
    for (auto [d, v] : llvm::enumerate(position))
      first += (d ? ", " : "") + std::to_string(v);
    first += "]";
  }
  outputs.push_back(llvm::json::Object{
      {"arg", static_cast<int64_t>(index)},
      {"dtype", getDTypeName(dtype)},
      {"elements", result.numElements},
      {"passed", result.passed},
      {"mismatches", result.numMismatches},
      {"max_abs_error", result.maxAbsError},
      {"max_rel_error", result.maxRelError},
      {"rel_norm_error", result.relNormError},
      {"atol", tolerance.atol},
      {"rtol", tolerance.rtol},
      {"first_mismatch", first},
      {"first_got", result.firstMismatch >= 0 ? result.firstGot : 0.0},
      {"first_expected",
       result.firstMismatch >= 0 ? result.firstExpected : 0.0}});
  if (json)
    return result.passed;
  llvm::outs() << llvm::formatv(
      "check: arg {0} ({1}, {2} elements): {3}; max abs error {4:e}, max "
      "rel error {5:e}, rel norm error {6:e}, {7} mismatch(es) (atol "
      "{8:e} x max|ref|, rtol {9:e})\n",
      index, getDTypeName(dtype), result.numElements,
      result.passed ? "ok" : "FAILED", result.maxAbsError, result.maxRelError,
      result.relNormError, result.numMismatches, tolerance.atol,
      tolerance.rtol);
  if (result.firstMismatch >= 0)
    llvm::outs() << llvm::formatv(
        "check: arg {0}: first mismatch at {1}: got {2:e}, expected {3:e}\n",
        index, first, result.firstGot, result.firstExpected);
  return result.passed;
}

/// One --save request.
struct SaveRequest {
  unsigned index;
  std::string path;
};

/// Prints the run's report: the whole JSON object with --json, else its
/// notes, one per line.
static void printReport(llvm::json::Object report,
                        const std::vector<std::string> &notes) {
  report["notes"] = llvm::json::Array(notes);
  if (json) {
    llvm::outs() << llvm::formatv("{0:2}\n",
                                  llvm::json::Value(std::move(report)));
    return;
  }
  for (const std::string &note : notes)
    llvm::outs() << "note: " << note << "\n";
}

/// Median, min, max and mean of timed runs, in ms.
struct TimeStats {
  double median = 0, min = 0, max = 0, mean = 0;
};

static TimeStats summarize(std::vector<double> times) {
  TimeStats stats;
  if (times.empty())
    return stats;
  std::sort(times.begin(), times.end());
  size_t n = times.size();
  stats.median = n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
  stats.min = times.front();
  stats.max = times.back();
  for (double t : times)
    stats.mean += t / n;
  return stats;
}

static llvm::json::Object statsJSON(const TimeStats &stats) {
  return llvm::json::Object{{"median_ms", stats.median},
                            {"min_ms", stats.min},
                            {"max_ms", stats.max},
                            {"mean_ms", stats.mean}};
}

/// The fused kernels of `compiled`, one per ism.coschedule in walk order:
/// printed one line each (--verbose), or added to `report` with --json.
static void describeFusedKernels(const CompiledModule &compiled,
                                 llvm::json::Object &report,
                                 llvm::raw_ostream &os) {
  llvm::json::Array kernels;
  for (const std::string &name : compiled.coschedules) {
    auto it = compiled.kernels.find(name);
    if (name.empty() || it == compiled.kernels.end() || !it->second.fused)
      continue;
    const CompiledKernel &kernel = it->second;
    const CompiledKernel::Fused &fused = *kernel.fused;
    // (warp_specialized and ordered kernels run persistent grids)
    bool warpSpecialized = fused.policy != "block_interleaved";
    if (json) {
      kernels.push_back(llvm::json::Object{
          {"name", name},
          {"policy", fused.policy},
          {"partitions", llvm::json::Array(fused.partitions)},
          {"threads", kernel.numThreads},
          {"shared_memory_bytes", kernel.sharedMemoryBytes},
          {"ctas_per_sm", fused.ctasPerSM},
          {"work_counters", fused.workCounters},
          {"tma_descriptors", static_cast<int64_t>(kernel.tma.size())},
          {"trace", fused.trace}});
      continue;
    }
    os << "coschedule: kernel " << name << ", " << fused.policy
       << ", partitions " << llvm::join(fused.partitions, " + ") << ", "
       << kernel.numThreads << " threads, " << kernel.sharedMemoryBytes
       << " B shared memory, ";
    if (warpSpecialized)
      os << fused.ctasPerSM << " CTA/SM, ";
    os << fused.workCounters << " work counters, " << kernel.tma.size()
       << " TMA descriptors";
    if (fused.trace)
      os << ", traced";
    os << "\n";
  }
  if (json)
    report["fused_kernels"] = std::move(kernels);
}

/// The compile cache ism-run uses: none with --no-cache, --cache-dir, none
/// with ISM_DISABLE_CACHE, or the default directory.
static std::optional<CompileCache> openCompileCache() {
  if (noCache)
    return std::nullopt;
  if (!cacheDir.empty())
    return CompileCache(cacheDir);
  if (isCacheDisabledByEnvironment())
    return std::nullopt;
  std::string directory = getDefaultCacheDirectory();
  if (directory.empty()) {
    if (verbose)
      llvm::errs() << "ism-run: warning: compiling without the compile "
                      "cache: none of ISM_CACHE_DIR, XDG_CACHE_HOME and HOME "
                      "is set\n";
    return std::nullopt;
  }
  return CompileCache(std::move(directory));
}

/// compileModule through `cache` (or without it when null); with --verbose,
/// one line says whether it was a hit or a miss, and one line each warning
/// (a corrupt entry, an entry that could not be stored). The passes'
/// warnings are printed always.
static llvm::Expected<CompiledModule> compile(ModuleOp module,
                                              const PTXOptions &options,
                                              CoscheduleMode mode, bool trace,
                                              const CompileCache *cache) {
  bool hit = false;
  std::vector<std::string> warnings;
  std::string key;
  llvm::Expected<CompiledModule> compiled = compileModuleCached(
      module, options, mode, trace, cache, &hit, &warnings, &key);
  if (verbose) {
    if (!key.empty())
      llvm::errs() << "ism-run: compile cache " << (hit ? "hit " : "miss ")
                   << key << "\n";
    for (const std::string &warning : warnings)
      llvm::errs() << "ism-run: warning: " << warning << "\n";
  }
  // The compiler's own warnings, compiled now or given back by the cache.
  if (compiled)
    for (const std::string &warning : compiled->warnings)
      llvm::errs() << warning << "\n";
  return compiled;
}

static int run();

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "ism-run: execute, check and time ism kernels on NVIDIA GPUs\n");
  int status = run();
  if (cuda::Driver::hasTimedOut()) {
    // A kernel may still be running: the driver's exit handlers could wait
    // for it for ever. The kernel driver reclaims the GPU when the process
    // is gone.
    llvm::outs().flush();
    llvm::errs().flush();
    std::_Exit(status);
  }
  return status;
}

/// --tune: compiles every candidate (in parallel, each in its own context),
/// prunes the ones the compiler rejects or the GPU cannot run, times the
/// rest like --bench (L2 flushed, median of --tune-reps after 3 warm-up
/// runs) on buffers of their own, and applies the fastest to `module`. The
/// winner is stored in the tuning cache beside the compile cache, and a
/// later run with the same key takes it from there without tuning. With a
/// `coschedule` axis each candidate compiles and runs in its own mode, and
/// the winner's becomes `mode`.
static llvm::Error tune(ModuleOp module, const DialectRegistry &registry,
                        cuda::Context &gpu, const PTXOptions &ptxOptions,
                        CoscheduleMode &mode, llvm::ArrayRef<TuneAxis> axes,
                        llvm::ArrayRef<BoundArg> args,
                        const CompileCache *compileCache,
                        llvm::json::Object &report) {
  auto started = std::chrono::steady_clock::now();
  std::vector<TuneCandidate> candidates = enumerateCandidates(axes);
  std::string key =
      computeTuneKey(module, axes, args, gpu.getDeviceInfo().name,
                     ptxOptions.chip, getCoscheduleModeName(mode));
  std::optional<TuneCache> cache;
  if (compileCache)
    cache.emplace(compileCache->getDirectory());
  auto apply = [&](const TuneResult &result, bool cached,
                   llvm::json::Array timings) {
    applyCandidate(module, result.best);
    if (std::optional<CoscheduleMode> picked =
            getCandidateCoschedule(result.best))
      mode = *picked;
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - started)
                         .count();
    report["tune"] = llvm::json::Object{{"key", key},
                                        {"cached", cached},
                                        {"best", candidateToJSON(result.best)},
                                        {"best_ms", result.bestMs},
                                        {"candidates", std::move(timings)},
                                        {"seconds", seconds}};
    if (!json)
      llvm::outs() << llvm::formatv(
          "tune: {0} {1} ({2:F4} ms{3})\n", cached ? "cached" : "best",
          describeCandidate(result.best), result.bestMs,
          cached ? ", " + cache->getPath(key)
                 : llvm::formatv("; {0} candidates in {1:F1} s",
                                 candidates.size(), seconds)
                       .str());
  };
  if (cache) {
    std::string warning;
    if (std::optional<TuneResult> hit =
            cache->lookup(key, candidates, &warning)) {
      apply(*hit, true, {});
      return llvm::Error::success();
    }
    if (!warning.empty())
      llvm::errs() << "ism-run: warning: " << warning << "\n";
  }

  // Every candidate from the module's text, in a context of its own (with
  // the locations, so that diagnostics name the input file's lines).
  std::string text;
  {
    llvm::raw_string_ostream os(text);
    module->print(os, OpPrintingFlags().printGenericOpForm().enableDebugInfo());
  }
  struct Candidate {
    std::unique_ptr<MLIRContext> context;
    OwningOpRef<ModuleOp> module;
    std::optional<CompiledModule> compiled;
    std::string pruned;
    double ms = 0;
    CoscheduleMode mode = CoscheduleMode::Fused;
  };
  std::vector<Candidate> built(candidates.size());
  {
    llvm::DefaultThreadPool pool; // one thread per hardware thread
    for (size_t i = 0; i < candidates.size(); ++i)
      pool.async([&, i] {
        Candidate &c = built[i];
        c.context = std::make_unique<MLIRContext>(
            registry, MLIRContext::Threading::DISABLED);
        c.context->loadAllAvailableDialects();
        std::string diagnostic;
        ScopedDiagnosticHandler handler(c.context.get(), [&](Diagnostic &d) {
          if (d.getSeverity() == DiagnosticSeverity::Error &&
              diagnostic.empty())
            diagnostic = d.str();
          return success();
        });
        c.module = parseSourceString<ModuleOp>(text, c.context.get());
        if (!c.module) {
          c.pruned = "cannot parse: " + diagnostic;
          return;
        }
        applyCandidate(*c.module, candidates[i]);
        c.mode = getCandidateCoschedule(candidates[i]).value_or(mode);
        if (failed(verify(*c.module))) {
          c.pruned = diagnostic;
          return;
        }
        llvm::Expected<CompiledModule> compiled = compileModuleCached(
            *c.module, ptxOptions, c.mode, /*trace=*/false, compileCache);
        if (!compiled) {
          c.pruned = llvm::toString(compiled.takeError());
          return;
        }
        c.compiled = std::move(*compiled);
      });
    pool.wait();
  }

  // Those that fit the GPU, timed one after another on buffers of their
  // own (the run's buffers stay as they were bound).
  const cuda::DeviceInfo &info = gpu.getDeviceInfo();
  llvm::Expected<DeviceBuffers> device = uploadArguments(gpu, args);
  if (!device)
    return device.takeError();
  llvm::Expected<cuda::CUstream> stream = gpu.createStream();
  if (!stream)
    return stream.takeError();
  TimingOptions timing;
  timing.warmup = 3;
  timing.repetitions = tuneReps;
  timing.flushL2 = flushL2;
  for (Candidate &c : built) {
    if (!c.compiled)
      continue;
    for (const auto &[name, kernel] : c.compiled->kernels) {
      if (int(kernel.numThreads) > info.maxThreadsPerBlock)
        c.pruned = llvm::formatv("kernel '{0}' has {1} threads; a CTA holds "
                                 "at most {2}",
                                 name.str(), kernel.numThreads,
                                 info.maxThreadsPerBlock);
      else if (int(kernel.sharedMemoryBytes) > info.sharedMemoryPerBlockOptin)
        c.pruned = llvm::formatv("kernel '{0}' needs {1} bytes of shared "
                                 "memory; a CTA gets at most {2}",
                                 name.str(), kernel.sharedMemoryBytes,
                                 info.sharedMemoryPerBlockOptin);
      if (!c.pruned.empty())
        break;
    }
    if (!c.pruned.empty())
      continue;
    auto entry = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        *c.module, StringAttr::get(c.context.get(), entryName));
    llvm::Expected<cuda::CUmodule> loaded = gpu.loadModule(c.compiled->ptx);
    if (!loaded) {
      c.pruned = llvm::toString(loaded.takeError());
      continue;
    }
    GPULauncher launcher(gpu, *c.compiled, device->args, *stream, *loaded);
    launcher.setPersistentCtas(persistentCtas);
    HostExecutionOptions how;
    how.coschedule = c.mode;
    how.fusedKernels = c.compiled->coschedules;
    how.unfused = c.compiled->unfused;
    llvm::Expected<std::vector<double>> times =
        timeHostFunction(gpu, *stream, entry, args, launcher, timing, how);
    if (!times) {
      // Kept loaded: a kernel that failed or timed out may still be queued.
      c.pruned = llvm::toString(times.takeError());
      continue;
    }
    c.ms = summarize(std::move(*times)).median;
    // A timed candidate's module goes (the timing waited for its last
    // launch), so a long sweep does not keep every one loaded.
    if (llvm::Error error = gpu.synchronize())
      return error;
    if (llvm::Error error = gpu.unloadModule(*loaded))
      return error;
  }
  if (llvm::Error error = gpu.destroyStream(*stream))
    return error;

  llvm::json::Array timings;
  std::optional<size_t> best;
  for (auto [i, c] : llvm::enumerate(built)) {
    std::string name = describeCandidate(candidates[i]);
    // A reason is reported as its first line.
    c.pruned = llvm::StringRef(c.pruned).split('\n').first.str();
    if (!c.pruned.empty()) {
      timings.push_back(
          llvm::json::Object{{"config", name}, {"pruned", c.pruned}});
      if (!json)
        llvm::outs() << "tune: " << name << ": pruned: " << c.pruned << "\n";
      continue;
    }
    timings.push_back(
        llvm::json::Object{{"config", name}, {"median_ms", c.ms}});
    if (!json)
      llvm::outs() << llvm::formatv("tune: {0}: median {1:F4} ms\n", name,
                                    c.ms);
    if (!best || c.ms < built[*best].ms)
      best = i;
  }
  if (!best)
    return llvm::createStringError(
        "--tune: every candidate was pruned (the first: " +
        describeCandidate(candidates.front()) + ": " + built.front().pruned +
        ")");
  TuneResult result{candidates[*best], built[*best].ms};
  if (cache)
    if (llvm::Error error = cache->store(key, result))
      llvm::errs() << "ism-run: warning: " << llvm::toString(std::move(error))
                   << "\n";
  apply(result, false, std::move(timings));
  return llvm::Error::success();
}

static int run() {
  if (listDevices)
    return runListDevices();
  if (inputFile.empty())
    return fail("no input file (usage: ism-run FILE.mlir [options])");
  if (!emit.empty() && emit != "ptx" && emit != "ir")
    return fail("--emit takes ptx or ir, not '" + emit + "'");
  if (cacheDir.getNumOccurrences() && cacheDir.empty())
    return fail("--cache-dir takes a directory: --cache-dir=DIR");
  if (interpret && bench)
    return fail("--interpret runs on the CPU; it cannot be combined with "
                "--bench");
  std::optional<CoscheduleMode> mode = parseCoscheduleMode(coscheduleMode);
  if (!mode)
    return fail("--coschedule takes fused, sequential or streams, not '" +
                coscheduleMode + "'");
  if (callsPerRep == 0)
    return fail("--calls must be at least 1");
  if (graphRun) {
    if (interpret)
      return fail("--graph launches on the GPU; it cannot be combined with "
                  "--interpret");
    if (*mode == CoscheduleMode::Streams)
      return fail("--graph captures one stream; --coschedule=streams "
                  "launches on several (use fused or sequential)");
  }
  bool tuning = tuneSpec.getNumOccurrences() > 0;
  std::optional<std::vector<TuneAxis>> tuneAxes;
  if (tuning) {
    if (interpret || !emit.empty())
      return fail("--tune times candidates on the GPU; it cannot be combined "
                  "with --interpret or --emit");
    if (tuneReps == 0)
      return fail("--tune-reps must be at least 1");
    if (!tuneSpec.empty()) {
      llvm::Expected<std::vector<TuneAxis>> axes = parseTuneSpec(tuneSpec);
      if (!axes)
        return fail(axes.takeError());
      tuneAxes = std::move(*axes);
    }
  }
  bool tracing = traceFile.getNumOccurrences() > 0;
  if (tracing) {
    if (traceFile.empty())
      return fail("--trace takes a file name: --trace=FILE.json");
    if (*mode != CoscheduleMode::Fused)
      return fail("--trace records fused kernels; use --coschedule=fused");
    if (interpret)
      return fail("--trace records the fused kernels on the GPU; it cannot "
                  "be combined with --interpret");
  }

  DialectRegistry registry;
  registerAllIsmDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  std::string parseError;
  OwningOpRef<ModuleOp> module = parseInput(context, parseError);
  if (!module)
    return fail(parseError);
  unsigned numCoschedules = getNumCoschedules(*module);
  if (tracing && numCoschedules == 0)
    return fail("--trace needs a module with an ism.coschedule");

  if (emit == "ir") {
    module->print(llvm::outs());
    llvm::outs() << "\n";
    return 0;
  }

  // The host function and its arguments, checked before any GPU work.
  func::FuncOp entry;
  std::vector<BoundArg> args;
  std::vector<BufferUse> uses;
  std::vector<SaveRequest> saveRequests;
  if (emit != "ptx") {
    entry = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        *module, StringAttr::get(&context, entryName));
    if (!entry) {
      std::string names;
      for (auto func : module->getOps<func::FuncOp>())
        names += (names.empty() ? "@" : ", @") + func.getName().str();
      return fail("no host function @" + entryName + " in '" + inputFile + "'" +
                  (names.empty() ? std::string(" (it has none)")
                                 : " (functions: " + names + ")"));
    }

    // Arguments, and which buffers the kernels read and write.
    uses = analyzeBufferUse(entry);
    std::vector<ArgSpec> specs;
    for (auto [i, text] : llvm::enumerate(argSpecs)) {
      llvm::Expected<ArgSpec> spec = parseArgSpec(text, i);
      if (!spec)
        return fail(spec.takeError());
      specs.push_back(std::move(*spec));
    }
    for (const std::string &text : saves) {
      llvm::StringRef index, path;
      std::tie(index, path) = llvm::StringRef(text).split(':');
      unsigned i;
      if (index.getAsInteger(10, i) || path.empty())
        return fail("--save '" + text + "': expected IDX:PATH.npy");
      if (i >= specs.size())
        return fail("--save '" + text + "': there is no argument " + index);
      saveRequests.push_back({i, path.str()});
    }
    // The host memory of each buffer beyond its own bytes: the reference's
    // float64 copy, and the copy of an output read back from the GPU.
    std::vector<BufferOverhead> overheads(uses.size());
    for (auto [overhead, use] : llvm::zip(overheads, uses)) {
      overhead.reference = check || interpret;
      overhead.copy = !interpret && use.written;
    }
    llvm::Expected<std::vector<BoundArg>> bound =
        bindArguments(entry, specs, seed, overheads);
    if (!bound)
      return fail(bound.takeError());
    args = std::move(*bound);
    // Unwritten elements of an output fail the check; an output whose
    // contents the spec gives (a cache the step writes one row of) keeps
    // them, and its elements the program leaves must still hold them.
    for (auto [arg, use, spec] : llvm::zip(args, uses, specs))
      if (arg.isBuffer && use.written && !use.read && !spec.contentsGiven)
        arg.buffer.poison();
    for (const SaveRequest &save : saveRequests)
      if (!args[save.index].isBuffer)
        return fail(llvm::formatv("--save {0}: argument {0} is not a buffer",
                                  save.index)
                        .str());
  }

  // The GPU, unless the run stays on the CPU.
  std::unique_ptr<cuda::Context> gpu;
  bool needGPU = !interpret;
  if (needGPU) {
    llvm::Expected<std::unique_ptr<cuda::Context>> created =
        cuda::Context::create(deviceOrdinal);
    if (!created) {
      // --emit=ptx works without a GPU when the chip is known.
      if (emit != "ptx")
        return fail(created.takeError());
      llvm::consumeError(created.takeError());
    } else {
      gpu = std::move(*created);
      gpu->setTimeout(timeout);
    }
  }
  PTXOptions ptxOptions;
  if (!chipName.empty())
    ptxOptions.chip = chipName;
  else if (gpu)
    ptxOptions.chip = gpu->getDeviceInfo().chip();

  llvm::json::Object report{{"file", inputFile}, {"entry", entryName}};
  std::vector<std::string> notes;

  // --bench on a module with ism.coschedule times all three modes: it
  // compiles both fused and unfused (sequential and streams run the same
  // unfused kernels).
  bool benchCoschedules = bench && numCoschedules > 0 && emit != "ptx";
  // --trace: without --check and --bench the traced run is the run itself
  // (and --emit=ptx prints the traced PTX); otherwise the trace run is
  // separate, after the checked run, with a separately compiled module, and
  // --bench times the untraced kernels.
  bool traceOnly = tracing && ((!check && !bench) || emit == "ptx");
  std::optional<CompiledModule> compiled, otherCompiled, tracedCompiled;
  if (needGPU) {
    std::optional<CompileCache> cache = openCompileCache();
    const CompileCache *cachePtr = cache ? &*cache : nullptr;
    if (tuning) {
      std::vector<TuneAxis> axes =
          tuneAxes ? *tuneAxes : getDefaultTuneAxes(*module);
      if (llvm::Error error = tune(*module, registry, *gpu, ptxOptions, *mode,
                                   axes, args, cachePtr, report))
        return fail(std::move(error));
    }
    llvm::Expected<CompiledModule> result =
        compile(*module, ptxOptions, *mode, traceOnly, cachePtr);
    if (!result)
      return fail(result.takeError());
    compiled = std::move(*result);
    if (tracing && !traceOnly) {
      llvm::Expected<CompiledModule> traced =
          compile(*module, ptxOptions, CoscheduleMode::Fused, true, cachePtr);
      if (!traced)
        return fail(traced.takeError());
      tracedCompiled = std::move(*traced);
    }
    if (benchCoschedules) {
      CoscheduleMode other = *mode == CoscheduleMode::Fused
                                 ? CoscheduleMode::Sequential
                                 : CoscheduleMode::Fused;
      llvm::Expected<CompiledModule> second =
          compile(*module, ptxOptions, other, false, cachePtr);
      if (!second)
        return fail(
            "--bench compiles the module " +
            llvm::Twine(other == CoscheduleMode::Fused ? "fused" : "unfused") +
            " as well, to time every --coschedule mode: " +
            llvm::toString(second.takeError()));
      otherCompiled = std::move(*second);
    }
    if (verbose) {
      const CompiledModule &fusedModule = *mode == CoscheduleMode::Fused
                                              ? *compiled
                                          : otherCompiled ? *otherCompiled
                                                          : *compiled;
      describeFusedKernels(fusedModule, report,
                           emit == "ptx" ? llvm::errs() : llvm::outs());
    }
    if (emit == "ptx") {
      llvm::outs() << compiled->ptx;
      return 0;
    }
  }

  // The reference run: the launches of an ism.coschedule run one after
  // another there, whatever --coschedule says.
  std::vector<RefBuffer> reference;
  if (check || interpret) {
    reference = makeReferenceBuffers(args);
    ReferenceLauncher launcher(reference);
    launcher.setTimeout(timeout);
    if (llvm::Error error = executeHostFunction(entry, args, launcher))
      return fail(std::move(error));
    report["reference_instances"] =
        static_cast<int64_t>(launcher.getNumInstances());
    if (interpret)
      entry.walk([&](CoscheduleOp op) {
        notes.push_back(
            llvm::formatv("ism.coschedule {0}: its launches ran one after "
                          "another in the reference interpreter",
                          stringifyCoschedulePolicy(op.getPolicy()))
                .str());
      });
  }

  if (interpret) {
    for (const SaveRequest &save : saveRequests) {
      const BoundArg &arg = args[save.index];
      if (llvm::Error error =
              writeNpy(save.path, arg.buffer.dtype, arg.buffer.shape,
                       reference[save.index].data))
        return fail(std::move(error));
    }
    llvm::json::Array outputs;
    bool expectFailed = false;
    for (const std::string &text : expects) {
      llvm::StringRef indexText, path;
      std::tie(indexText, path) = llvm::StringRef(text).split(':');
      unsigned i;
      if (indexText.getAsInteger(10, i) || path.empty() || i >= args.size() ||
          !args[i].isBuffer)
        return fail("--expect '" + text +
                    "': expected IDX:PATH.npy naming a buffer argument");
      llvm::Expected<HostBuffer> got = readNpy(path, args[i].buffer.dtype);
      if (!got)
        return fail(got.takeError());
      if (got->shape != args[i].buffer.shape)
        return fail("--expect '" + text + "': the shape differs from " +
                    "argument " + indexText + "'s");
      expectFailed |=
          !checkOutput(i, args[i].buffer.dtype, args[i].buffer.shape, *got,
                       reference[i].data, outputs);
    }
    if (!expects.empty())
      report["check"] = llvm::json::Object{{"passed", !expectFailed},
                                           {"outputs", std::move(outputs)}};
    report["mode"] = "interpret";
    printReport(std::move(report), notes);
    return expectFailed ? 1 : 0;
  }

  // The GPU run, in the --coschedule mode.
  llvm::Expected<cuda::CUmodule> loaded = gpu->loadModule(compiled->ptx);
  if (!loaded)
    return fail(loaded.takeError());
  report["device"] = deviceJSON(gpu->getDeviceInfo());
  report["chip"] = ptxOptions.chip;
  if (numCoschedules > 0)
    report["coschedule_mode"] = getCoscheduleModeName(*mode);
  std::vector<std::string> argNames;
  for (auto [i, text] : llvm::enumerate(argSpecs))
    argNames.push_back(llvm::formatv("--arg {0} ('{1}')", i, text).str());
  llvm::Expected<DeviceBuffers> device = uploadArguments(*gpu, args, argNames);
  if (!device)
    return fail(device.takeError());
  const std::vector<DeviceArg> &deviceArgs = device->args;
  llvm::Expected<cuda::CUstream> stream = gpu->createStream();
  if (!stream)
    return fail(stream.takeError());
  GPULauncher launcher(*gpu, *compiled, deviceArgs, *stream, *loaded);
  // A program that reads a temporary buffer before writing it fails the
  // check instead of passing on leftover data.
  launcher.setPoisonTemporaries(check);
  launcher.setPersistentCtas(persistentCtas);
  HostExecutionOptions execution;
  execution.coschedule = *mode;
  execution.fusedKernels = compiled->coschedules;
  execution.unfused = compiled->unfused;
  execution.notes = &notes;
  // The trace run starts, like a --bench run, with a cold L2 (unless
  // --flush-l2=false).
  auto flushBeforeTrace = [&]() -> llvm::Error {
    if (!flushL2)
      return llvm::Error::success();
    size_t bytes =
        std::max<size_t>(2 * size_t(gpu->getDeviceInfo().l2CacheBytes), 1);
    llvm::Expected<cuda::DeviceBuffer> buffer = gpu->allocate(bytes);
    if (!buffer)
      return buffer.takeError();
    if (llvm::Error error = gpu->memset(buffer->get(), 0, bytes, *stream))
      return error;
    // The buffer is freed after the flush has run.
    return gpu->synchronize();
  };
  if (traceOnly) {
    if (llvm::Error error = flushBeforeTrace())
      return fail(std::move(error));
    launcher.setTraceRecording(true);
  }
  if (llvm::Error error = executeHostFunction(entry, args, launcher, execution))
    return fail(std::move(error));
  if (llvm::Error error = gpu->synchronize())
    return fail(std::move(error));
  if (graphRun && !traceOnly) {
    HostExecutionOptions quiet = execution;
    quiet.notes = nullptr;
    if (llvm::Error error = replayHostFunction(*gpu, *stream, entry, args,
                                               deviceArgs, launcher, quiet))
      return fail(std::move(error));
    notes.push_back("the checked run replayed the host function's launches "
                    "from a CUDA graph (--graph)");
  }
  if (llvm::Error error = launcher.checkOrderedWaits())
    return fail(std::move(error));
  report["launches"] = launcher.getNumLaunches();

  // Results back to the host.
  std::vector<HostBuffer> results(args.size());
  for (auto [i, arg] : llvm::enumerate(args)) {
    if (!arg.isBuffer || !uses[i].written)
      continue;
    results[i] = arg.buffer;
    if (llvm::Error error =
            gpu->copyToHost(results[i].bytes.data(), deviceArgs[i].ptr,
                            results[i].getSizeInBytes()))
      return fail(std::move(error));
  }
  for (const SaveRequest &save : saveRequests) {
    const HostBuffer &buffer = uses[save.index].written
                                   ? results[save.index]
                                   : args[save.index].buffer;
    if (llvm::Error error = writeNpy(save.path, buffer))
      return fail(std::move(error));
  }

  bool checkFailed = false;
  if (check) {
    llvm::json::Array outputs;
    unsigned numOutputs = 0;
    for (auto [i, arg] : llvm::enumerate(args)) {
      if (!arg.isBuffer || !uses[i].written)
        continue;
      ++numOutputs;
      checkFailed |= !checkOutput(i, arg.buffer.dtype, arg.buffer.shape,
                                  results[i], reference[i].data, outputs);
    }
    if (numOutputs == 0)
      return fail("--check: the kernels write none of the buffers");
    report["check"] = llvm::json::Object{{"passed", !checkFailed},
                                         {"outputs", std::move(outputs)}};
  }

  if (tracing) {
    // The traced run: the run above itself, or one more run of the traced
    // kernels (loaded as their own CUDA module) on the same buffers.
    llvm::Expected<std::vector<FusedTrace>> traces = [&]() {
      if (traceOnly)
        return launcher.takeTraces();
      llvm::Expected<cuda::CUmodule> tracedLoaded =
          gpu->loadModule(tracedCompiled->ptx);
      if (!tracedLoaded)
        return llvm::Expected<std::vector<FusedTrace>>(
            tracedLoaded.takeError());
      GPULauncher traced(*gpu, *tracedCompiled, deviceArgs, *stream,
                         *tracedLoaded);
      traced.setTraceRecording(true);
      HostExecutionOptions how;
      how.coschedule = CoscheduleMode::Fused;
      how.fusedKernels = tracedCompiled->coschedules;
      how.unfused = tracedCompiled->unfused;
      if (llvm::Error error = flushBeforeTrace())
        return llvm::Expected<std::vector<FusedTrace>>(std::move(error));
      if (llvm::Error error = executeHostFunction(entry, args, traced, how))
        return llvm::Expected<std::vector<FusedTrace>>(std::move(error));
      return traced.takeTraces();
    }();
    if (!traces)
      return fail("--trace: " + llvm::toString(traces.takeError()));
    TraceSummary summary;
    std::vector<TraceItem> items = decodeTrace(*traces, summary);
    if (llvm::Error error =
            writeChromeTrace(traceFile, *traces, items, summary))
      return fail(std::move(error));
    if (traces->empty())
      notes.push_back("trace: no fused kernel ran (every launch of the "
                      "ism.coschedule regions is empty)");
    if (summary.unrecorded > 0) {
      uint64_t total = summary.items + summary.unrecorded;
      notes.push_back(
          llvm::formatv("trace: {0} of the {1} work items have no record "
                        "(they did not run, or the kernel did not record "
                        "them)",
                        summary.unrecorded, total)
              .str());
    }
    if (summary.misplaced > 0)
      notes.push_back(
          llvm::formatv("trace: {0} record(s) name another launch or work "
                        "item than their position in the trace buffer",
                        summary.misplaced)
              .str());
    report["trace"] = llvm::json::Object{
        {"file", traceFile},
        {"items", static_cast<int64_t>(summary.items)},
        {"sms", summary.sms},
        {"kernels", summary.kernels},
        {"unrecorded_items", static_cast<int64_t>(summary.unrecorded)},
        {"overlap_fraction", summary.overlapFraction}};
    if (!json)
      llvm::outs() << llvm::formatv(
          "trace: {0}: {1} work items on {2} SMs; {3} active on the same SM "
          "{4:F1}% of the time\n",
          traceFile, summary.items, summary.sms,
          summary.kernels > 2 ? "at least two kernels" : "both kernels",
          100 * summary.overlapFraction);
  }

  if (bench) {
    TimingOptions timing;
    timing.warmup = warmup;
    timing.repetitions = reps;
    timing.flushL2 = flushL2;
    timing.callsPerRep = callsPerRep;
    timing.graph = graphRun;
    // The clock and power of the last timing (NVML).
    nvml::PowerSummary lastPower, power;
    timing.power = &lastPower;
    auto time =
        [&](GPULauncher &handler,
            const HostExecutionOptions &how) -> llvm::Expected<TimeStats> {
      llvm::Expected<std::vector<double>> timed =
          timeHostFunction(*gpu, *stream, entry, args, handler, timing, how);
      if (!timed)
        return timed.takeError();
      // A wait of an ordered kernel that timed out in a timed run.
      if (llvm::Error error = handler.checkOrderedWaits())
        return std::move(error);
      return summarize(std::move(*timed));
    };

    TimeStats stats;
    if (!benchCoschedules) {
      llvm::Expected<TimeStats> timed = time(launcher, execution);
      if (!timed)
        return fail(timed.takeError());
      stats = *timed;
      power = lastPower;
    } else {
      // Every mode, on the same buffers and stream: sequential and streams
      // run the unfused kernels, fused the fused ones.
      llvm::Expected<cuda::CUmodule> otherLoaded =
          gpu->loadModule(otherCompiled->ptx);
      if (!otherLoaded)
        return fail(otherLoaded.takeError());
      GPULauncher otherLauncher(*gpu, *otherCompiled, deviceArgs, *stream,
                                *otherLoaded);
      bool fusedFirst = *mode == CoscheduleMode::Fused;
      GPULauncher &fusedLauncher = fusedFirst ? launcher : otherLauncher;
      GPULauncher &unfusedLauncher = fusedFirst ? otherLauncher : launcher;
      const CompiledModule &fusedModule =
          fusedFirst ? *compiled : *otherCompiled;
      CoscheduleMode modes[3] = {CoscheduleMode::Sequential,
                                 CoscheduleMode::Streams,
                                 CoscheduleMode::Fused};
      TimeStats perMode[3];
      for (unsigned i = 0; i < 3; ++i) {
        HostExecutionOptions how;
        how.coschedule = modes[i];
        if (modes[i] == CoscheduleMode::Fused)
          how.fusedKernels = fusedModule.coschedules;
        how.unfused = fusedModule.unfused;
        llvm::Expected<TimeStats> timed = time(
            modes[i] == CoscheduleMode::Fused ? fusedLauncher : unfusedLauncher,
            how);
        if (!timed)
          return fail(
              "--bench --coschedule=" + getCoscheduleModeName(modes[i]) + ": " +
              llvm::toString(timed.takeError()));
        perMode[i] = *timed;
        if (modes[i] == *mode) {
          stats = *timed;
          power = lastPower;
        }
      }
      const TimeStats &sequential = perMode[0], &streams = perMode[1],
                      &fused = perMode[2];
      double vsSequential =
          fused.median > 0 ? sequential.median / fused.median : 0;
      double vsStreams = fused.median > 0 ? streams.median / fused.median : 0;
      report["coschedule"] =
          llvm::json::Object{{"sequential", statsJSON(sequential)},
                             {"streams", statsJSON(streams)},
                             {"fused", statsJSON(fused)},
                             {"fused_vs_sequential", vsSequential},
                             {"fused_vs_streams", vsStreams}};
      if (!json)
        llvm::outs() << llvm::formatv(
            "bench: sequential median {0:F4} ms | streams {1:F4} ms | fused "
            "{2:F4} ms; fused is {3:F2}x sequential, {4:F2}x streams\n",
            sequential.median, streams.median, fused.median, vsSequential,
            vsStreams);
    }

    double median = stats.median;
    double bytes = bytesOverride;
    if (bytes <= 0)
      for (auto [i, arg] : llvm::enumerate(args))
        if (arg.isBuffer)
          bytes += arg.buffer.getSizeInBytes() *
                   (double(uses[i].read) + double(uses[i].written));
    double gbps = median > 0 ? bytes / (median * 1e-3) / 1e9 : 0;
    double tflops =
        median > 0 && flops > 0 ? flops / (median * 1e-3) / 1e12 : 0;
    report["bench"] =
        llvm::json::Object{{"median_ms", median},
                           {"min_ms", stats.min},
                           {"max_ms", stats.max},
                           {"mean_ms", stats.mean},
                           {"reps", static_cast<int64_t>(reps)},
                           {"calls", static_cast<int64_t>(callsPerRep)},
                           {"graph", bool(graphRun)},
                           {"warmup", static_cast<int64_t>(warmup)},
                           {"l2_flushed", static_cast<bool>(flushL2)},
                           {"bytes", bytes},
                           {"gbps", gbps},
                           {"flops", static_cast<double>(flops)},
                           {"tflops", tflops},
                           {"power", power.toJSON(median)}};
    if (!json) {
      llvm::outs() << llvm::formatv(
          "bench: median {0:F4} ms (min {1:F4}, max {2:F4}) over {3} runs "
          "after {4} warm-up, L2 {5}; {6:F1} GB/s ({7:F1} MB moved)",
          median, stats.min, stats.max, unsigned(reps), unsigned(warmup),
          flushL2 ? "flushed" : "not flushed", gbps, bytes / 1e6);
      if (tflops > 0)
        llvm::outs() << llvm::formatv(", {0:F1} TFLOP/s", tflops);
      if (benchCoschedules)
        llvm::outs() << " (--coschedule=" << getCoscheduleModeName(*mode)
                     << ")";
      if (graphRun)
        llvm::outs() << llvm::formatv("; replayed from a CUDA graph of {0} "
                                      "call(s)",
                                      unsigned(callsPerRep));
      llvm::outs() << "\n";
      llvm::outs() << "bench: " << power.describe();
      if (power.available)
        llvm::outs() << llvm::formatv("; {0:F3} mJ a call",
                                      power.energyPerCallMj(median));
      llvm::outs() << "\n";
    }
  }
  if (llvm::Error error = gpu->destroyStream(*stream))
    return fail(std::move(error));

  printReport(std::move(report), notes);
  return checkFailed ? 1 : 0;
}
