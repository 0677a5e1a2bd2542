//===- GPULauncher.h - Running launches on the GPU --------------*- C++ -*-===//
//
// Launches the kernels of a host function on a GPU through the CUDA driver,
// passing arguments by the ism kernel ABI: a memref of rank r is the
// expanded descriptor (allocated pointer, aligned pointer, offset, r sizes,
// r strides), `index` is i64, iN an N-bit integer (i1 a byte), f16/bf16 2
// bytes, f32 4, f64 8. The block is (numThreads, 1, 1) and the dynamic
// shared memory is the kernel's, as compiled.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_RUNNER_GPULAUNCHER_H
#define ISM_RUNNER_GPULAUNCHER_H

#include "ism/Pipelines/Pipelines.h"
#include <map>
#include <vector>

#include "ism/Runner/HostExecutor.h"
#include "ism/Runner/Trace.h"
#include "ism/Runtime/CudaDriver.h"
#include "ism/Runtime/PowerMonitor.h"

#include "llvm/ADT/StringMap.h"

namespace mlir::ism::runner {

/// A buffer of the host function on the device.
struct DeviceArg {
  cuda::CUdeviceptr ptr = 0;
  llvm::SmallVector<int64_t, 4> shape;
};

/// Runs launches on the GPU, on one stream, asynchronously. The launches of
/// an `ism.coschedule` run on that stream one after another (launch), each
/// on its own stream (launchConcurrently: auxiliary streams forked from and
/// joined back into the main one with events, so that events recorded on
/// the main stream time the whole region), or as the fused kernel
/// (launchFused).
class GPULauncher : public LaunchHandler {
public:
  /// `buffers` has one entry per host-function argument (unused for
  /// scalars). The compiled module must be loaded into `context`; when
  /// `module` is given, kernels are looked up in that module only (the one
  /// loaded from `compiled.ptx`).
  GPULauncher(cuda::Context &context, const CompiledModule &compiled,
              llvm::ArrayRef<DeviceArg> buffers, cuda::CUstream stream,
              cuda::CUmodule module = nullptr)
      : context(context), compiled(compiled), buffers(buffers), stream(stream),
        module(module) {}
  GPULauncher(const GPULauncher &) = delete;
  GPULauncher &operator=(const GPULauncher &) = delete;
  /// Destroys the auxiliary streams and events.
  ~GPULauncher() override;

  llvm::Error launch(LaunchOp op, const unsigned grid[3],
                     llvm::ArrayRef<HostValue> args) override;
  llvm::Error launchGPUFunc(gpu::LaunchFuncOp op, const unsigned grid[3],
                            const unsigned block[3],
                            unsigned dynamicSharedMemoryBytes,
                            llvm::ArrayRef<HostValue> args) override;
  /// The first launch goes on the main stream, launch i > 0 on auxiliary
  /// stream i - 1, which first waits for an event recorded on the main
  /// stream; the main stream then waits for an event recorded on each
  /// auxiliary stream after its launch. The auxiliary streams are created
  /// once, as many as the largest region needs, and reused.
  llvm::Error
  launchConcurrently(CoscheduleOp op,
                     llvm::ArrayRef<RegionLaunch> launches) override;
  /// Launches the fused kernel by its ABI (CompiledKernel::Fused): the
  /// launches' arguments, each launch's grid as three i64, one i64 per TMA
  /// descriptor, and the address of the kernel's zeroed work counters when
  /// it has any (set to zero on the stream before every launch). Grid:
  /// warp_specialized runs min(largest launch grid, SMs x ctasPerSM) CTAs,
  /// block_interleaved the sum of the launch grids, ordered min(sum of the
  /// launch grids, SMs x ctasPerSM); block (numThreads, 1, 1) and the
  /// kernel's dynamic shared memory. An ordered kernel's counters are
  /// zeroed once, when they are made: the kernel's last CTA zeroes its
  /// ticket and done counters, and checkOrderedWaits clears its error
  /// record.
  ///
  /// A kernel compiled for tracing (CompiledKernel::Fused::trace) takes one
  /// more i64 after those: the device address of its trace buffer while
  /// trace recording is on (setTraceRecording), else 0. Each such launch
  /// gets its own buffer of kTraceRecordBytes per work item of every launch
  /// of the region, set to zero on the stream before the kernel.
  llvm::Error launchFused(CoscheduleOp op, llvm::StringRef kernel,
                          llvm::ArrayRef<std::array<unsigned, 3>> grids,
                          llvm::ArrayRef<HostValue> args) override;

  /// A temporary buffer of the host function (memref.alloc): device memory
  /// kept per stream and slot and reused by later runs on that stream (grown
  /// when a run asks for more, after the stream finishes with the old one).
  /// Numbered from kFirstTemporary, above every argument's number. A
  /// `zeroed` one is set to zero on the stream when it is made or grown or
  /// last held a temporary that was not zeroed, and never poisoned.
  llvm::Expected<unsigned> allocate(unsigned slot, DType dtype,
                                    llvm::ArrayRef<int64_t> shape,
                                    bool zeroed) override;
  static constexpr unsigned kFirstTemporary = 1u << 30;
  /// Whether each temporary buffer is filled with 0xFF bytes (NaN for
  /// floats) on the stream when a run makes it, so that a program reading a
  /// temporary before writing it fails a check instead of passing by
  /// chance (ism-run --check). Off by default: it costs a memset a run.
  void setPoisonTemporaries(bool poison) { poisonTemporaries = poison; }

  /// Persistent kernels (CompiledKernel::persistent) launch on at most
  /// `ctas` CTAs (0: one per SM, the default), so that a test can have each
  /// CTA walk several programs of a small grid (ism-run --persistent-ctas).
  void setPersistentCtas(unsigned ctas) { persistentCtas = ctas; }

  /// Kernels launched so far (a fused kernel counts once).
  unsigned getNumLaunches() const { return numLaunches; }

  /// Makes later launches go on `newStream` and read the buffers of
  /// `newBuffers` (which must outlive them, as the constructor's), so that
  /// one launcher, with its kernels, descriptors and counters, serves many
  /// calls of a host function on different tensors and streams (the Python
  /// package's compiled kernels).
  void rebind(llvm::ArrayRef<DeviceArg> newBuffers, cuda::CUstream newStream) {
    buffers = newBuffers;
    stream = newStream;
  }

  /// Whether the traced fused kernels launched from now on record their
  /// work items (off: they get a null trace buffer and record nothing).
  void setTraceRecording(bool record) { recordTraces = record; }
  /// Waits for the GPU, copies back the trace buffers of the fused launches
  /// recorded so far, in launch order, and releases them.
  llvm::Expected<std::vector<FusedTrace>> takeTraces();
  /// Waits for the GPU and reads the error record of every ordered fused
  /// kernel launched so far: an error naming the task whose wait timed out
  /// (its launch and program) and the launch it waited for, if one did.
  /// The record is cleared; the kernel's outputs are not to be trusted.
  llvm::Error checkOrderedWaits();

private:
  llvm::Expected<const cuda::Kernel *> getKernel(llvm::StringRef name,
                                                 unsigned sharedMemoryBytes);
  /// `ctas` CTAs of `facts`'s kernel as whole thread-block clusters, no
  /// more clusters than run at once (asked of the driver once per kernel);
  /// `ctas` itself for a kernel without a cluster.
  llvm::Expected<uint64_t> inWholeClusters(const cuda::Kernel &kernel,
                                           const CompiledKernel &facts,
                                           uint64_t ctas);
  /// launch() on `onStream`.
  llvm::Error launchOn(LaunchOp op, const unsigned grid[3],
                       llvm::ArrayRef<HostValue> args, cuda::CUstream onStream);
  llvm::Error run(const cuda::Kernel &kernel, const unsigned grid[3],
                  const unsigned block[3], llvm::ArrayRef<Type> types,
                  llvm::ArrayRef<HostValue> args,
                  llvm::ArrayRef<uint64_t> hiddenSlots,
                  cuda::CUstream onStream);
  /// Creates auxiliary streams (and their events) until there are `count`.
  llvm::Error ensureAuxiliaryStreams(size_t count);
  /// The device address of a CUtensorMap for operand `operand` of a launch
  /// with `types`/`args` on `onStream`, or 0 when TMA cannot describe it
  /// (the kernel then copies the operand itself). Descriptors are made once
  /// per buffer, shape and box, in a slab of device memory, and copied to it
  /// asynchronously on the stream of the launch that first needs them (again
  /// on another stream that uses them later), so that no launch waits for
  /// the GPU; a full slab is reused after one synchronisation.
  llvm::Expected<uint64_t>
  getTensorMap(const CompiledKernel::TmaOperand &operand,
               llvm::ArrayRef<Type> types, llvm::ArrayRef<HostValue> args,
               cuda::CUstream onStream);
  /// getTensorMap for each TMA operand of `facts`, in order: the first
  /// hidden parameters of its launches.
  llvm::Expected<std::vector<uint64_t>>
  getTensorMaps(const CompiledKernel &facts, llvm::ArrayRef<Type> types,
                llvm::ArrayRef<HostValue> args, cuda::CUstream onStream);

  /// Buffer `number` of the host function (an argument or a temporary),
  /// or null when there is no such buffer.
  const DeviceArg *getBuffer(unsigned number) const;

  cuda::Context &context;
  const CompiledModule &compiled;
  llvm::ArrayRef<DeviceArg> buffers;
  /// The temporaries of the current run, by slot, and their storage per
  /// stream and slot.
  std::vector<DeviceArg> temporaries;
  struct TemporaryStorage {
    cuda::DeviceBuffer buffer;
    /// Whether the programs keep the buffer at zero (an ism.zeroed alloc
    /// had it last, and it was zeroed since it was made).
    bool zeroed = false;
  };
  std::map<std::pair<cuda::CUstream, unsigned>, TemporaryStorage>
      temporaryStorage;
  bool poisonTemporaries = false;
  unsigned persistentCtas = 0;
  cuda::CUstream stream;
  cuda::CUmodule module;
  llvm::StringMap<cuda::Kernel> kernels;
  /// inWholeClusters: per kernel, the shared memory it was asked for with
  /// and the clusters of it that run at once.
  llvm::StringMap<std::pair<unsigned, unsigned>> maxActiveClusters;
  /// launchConcurrently: the auxiliary streams, the event each records after
  /// its launch, and the event the main stream records before the region.
  std::vector<cuda::CUstream> auxiliaryStreams;
  std::vector<cuda::CUevent> joinEvents;
  cuda::CUevent forkEvent = nullptr;
  /// launchFused: each fused kernel's work counters.
  llvm::StringMap<cuda::DeviceBuffer> workCounters;
  /// Ordered fused kernels, by their counters' key: the kernel, its
  /// launches' kernels (in region order) and its wait limit.
  struct OrderedKernel {
    std::string kernel;
    std::vector<std::string> launchNames;
    unsigned timeoutMs = 0;
  };
  llvm::StringMap<OrderedKernel> orderedKernels;
  /// The descriptor slab: kTensorMapSlots CUtensorMaps of 128 bytes; each
  /// key's slot and the stream its bytes were last copied on.
  static constexpr size_t kTensorMapSlots = 1024;
  struct TensorMapSlot {
    size_t index;
    cuda::CUstream stream;
  };
  cuda::DeviceBuffer tensorMapSlab;
  std::map<std::vector<uint64_t>, TensorMapSlot> tensorMaps;
  unsigned numLaunches = 0;
  /// Trace recording: the buffer of each recorded fused launch.
  struct PendingTrace {
    FusedTrace trace;
    cuda::DeviceBuffer buffer;
  };
  bool recordTraces = false;
  std::vector<PendingTrace> pendingTraces;
};

/// The device copies of the buffer arguments of a host function.
struct DeviceBuffers {
  /// One entry per argument (empty for scalars); owns the memory.
  std::vector<cuda::DeviceBuffer> buffers;
  /// The same buffers as GPULauncher takes them.
  std::vector<DeviceArg> args;
};

/// Allocates a device buffer for every buffer argument of `args` and copies
/// the argument's bytes into it. An allocation that fails is an error naming
/// the argument as `names[i]` says ("argument i" where `names` is shorter)
/// and its size.
llvm::Expected<DeviceBuffers>
uploadArguments(cuda::Context &gpu, llvm::ArrayRef<BoundArg> args,
                llvm::ArrayRef<std::string> names = {});

/// How to time a host function.
struct TimingOptions {
  unsigned warmup = 10;
  unsigned repetitions = 100;
  /// Write a buffer twice the size of the L2 cache before each run, which
  /// evicts the previous run's inputs and outputs.
  bool flushL2 = true;
  /// Calls of the host function, back to back, in each timed run; the time
  /// returned is the run's over this (a call's share of a steady stream of
  /// calls, as serving runs one decode step after another: launches and
  /// host work overlap the previous call's kernels).
  unsigned callsPerRep = 1;
  /// Launch each timed run's calls as one CUDA graph (captured once, after
  /// a first call outside it; captureHostFunction) instead of calling the
  /// host function: the launches' host cost leaves the timing.
  bool graph = false;
  /// When set, the SM clock and board power during the timed runs (NVML;
  /// without it, why not).
  nvml::PowerSummary *power = nullptr;
};

/// Runs `entry` with `args` through `launcher` (which launches on `stream`)
/// `options.warmup + options.repetitions` times, timing each run with
/// events on `stream`; returns the times of the timed runs in milliseconds,
/// in order. `execution` says how ism.coschedule regions run (its notes are
/// ignored).
llvm::Expected<std::vector<double>> timeHostFunction(
    cuda::Context &gpu, cuda::CUstream stream, func::FuncOp entry,
    llvm::ArrayRef<BoundArg> args, LaunchHandler &launcher,
    const TimingOptions &options,
    const HostExecutionOptions &execution = HostExecutionOptions());

/// Captures `calls` calls of `entry` with `args` (their launches, memsets
/// and copies on `stream`, which `launcher` launches on) in a CUDA graph and
/// instantiates it: replaying it (cuda::Context::launchGraph) runs those
/// calls again without the host function. The function must have run once
/// before on these arguments (its temporary buffers, the counters of
/// ordered kernels, kernel attributes: made then, not in the graph).
/// Destroy the graph with cuda::Context::destroyGraph.
llvm::Expected<cuda::CUgraphExec>
captureHostFunction(cuda::Context &gpu, cuda::CUstream stream,
                    func::FuncOp entry, llvm::ArrayRef<BoundArg> args,
                    LaunchHandler &launcher, unsigned calls,
                    const HostExecutionOptions &execution =
                        HostExecutionOptions());

/// Runs `entry` once more, from a CUDA graph, on its arguments as given:
/// copies every buffer argument's bytes (`args`) into its device buffer
/// (`deviceArgs`) again, captures one call (captureHostFunction), launches
/// the graph on `stream` and waits for it. What the buffers then hold is the
/// graph's doing. The function must have run once already.
llvm::Error replayHostFunction(cuda::Context &gpu, cuda::CUstream stream,
                               func::FuncOp entry,
                               llvm::ArrayRef<BoundArg> args,
                               llvm::ArrayRef<DeviceArg> deviceArgs,
                               LaunchHandler &launcher,
                               const HostExecutionOptions &execution =
                                   HostExecutionOptions());

} // namespace mlir::ism::runner

#endif // ISM_RUNNER_GPULAUNCHER_H
