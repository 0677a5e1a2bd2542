//===- Pipelines.h - ism compilation pipelines ------------------*- C++ -*-===//
//
// The pipelines that take ism modules to PTX, and the in-process entry point
// the runner and the Python bindings compile through.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_PIPELINES_PIPELINES_H
#define ISM_PIPELINES_PIPELINES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::ism {

/// Options shared by the pipelines to PTX.
struct PTXOptions {
  /// The target GPU architecture, e.g. "sm_90a" or "sm_80".
  std::string chip = "sm_90a";
  /// PTX ISA features passed to the NVPTX backend.
  std::string features = "+ptx81";
  /// LLVM optimisation level for the device code (0-3).
  unsigned optLevel = 3;
};

/// Adds the passes that take every `gpu.module` of a module (GPU dialect,
/// with arith/math/memref/scf/vector/nvgpu/nvvm ops inside) to a
/// `gpu.binary` holding PTX assembly: NVVM target attachment, lowering to
/// the LLVM/NVVM dialects, and the NVPTX backend. Host code is left alone.
void buildGPUToPTXPipeline(OpPassManager &pm, const PTXOptions &options);

/// buildGPUToPTXPipeline without its last step (gpu-module-to-binary, the
/// NVPTX backend): the `gpu.module`s end in the LLVM/NVVM dialects, with
/// their NVVM target attached.
void buildGPUToNVVMPipeline(OpPassManager &pm, const PTXOptions &options);

/// Options of the whole tile-program pipeline.
struct IsmToPTXOptions : PTXOptions {
  /// Warps per program for every kernel (0: each kernel's num_warps).
  unsigned numWarps = 0;
  /// Fuse the launches of each `ism.coschedule` into one kernel
  /// (ism-coschedule). Without it the launches stay separate kernels and
  /// the `ism.coschedule` ops are left in the host functions.
  bool fuseCoschedules = true;
  /// Fused kernels record, for each work item, the SM and %globaltimer at
  /// its start and end into a trace buffer (CompiledKernel::Fused::trace).
  /// Off by default: without it the kernels hold no tracing code.
  bool trace = false;
};

/// Adds the tile-level clean-up, layout assignment and lowering of ism
/// kernels to GPU-dialect kernels (ism-combine, canonicalize, cse,
/// ism-assign-layouts, ism-remove-layout-conversions, convert-ism-to-gpu).
void buildIsmToGPUPipeline(OpPassManager &pm, const IsmToPTXOptions &options);

/// The whole pipeline from tile programs to a `gpu.binary` holding PTX:
/// buildIsmToGPUPipeline then buildGPUToPTXPipeline.
void buildIsmToPTXPipeline(OpPassManager &pm, const IsmToPTXOptions &options);

/// Registers `ism-to-gpu` and `ism-to-ptx` as named pipelines with options
/// (chip, features, opt-level, num-warps).
void registerIsmPipelines();

/// What the runner needs to know to launch one compiled kernel.
struct CompiledKernel {
  /// The PTX entry name (the kernel's symbol name).
  std::string name;
  /// Threads per CTA (block size along x; y and z are 1).
  unsigned numThreads = 0;
  /// Dynamic shared memory the kernel needs, in bytes.
  unsigned sharedMemoryBytes = 0;
  /// A tile the kernel loads with TMA: the kernel argument (a row-major
  /// memref of rank 2 to 5; -1 when it is not an argument) and the box
  /// (rows x columns of the last two dimensions, one index of each leading
  /// one; or, in im2col mode, pixels x channels). The
  /// launcher appends one i64 parameter per operand: the device address of
  /// the operand's CUtensorMap, or 0 when none can describe it (the kernel
  /// then copies that operand without TMA).
  struct TmaOperand {
    int64_t arg = -1;
    unsigned boxRows = 0, boxCols = 0;
    /// Empty for a tile; for TMA's im2col mode (an ism.im2col A tile of an
    /// NHWC memref: boxRows output pixels by boxCols channels) the
    /// convolution: filter R, S, stride, padding and dilation (each along
    /// H, then W).
    llvm::SmallVector<int64_t, 8> im2col;
  };
  std::vector<TmaOperand> tma;
  /// The kernel loops over its programs (a persistent grid): the launcher
  /// appends the logical grid as three i32 parameters (after the TMA
  /// descriptors) and launches at most one CTA per SM.
  bool persistent = false;
  /// CTAs per thread-block cluster (along x; the kernel's
  /// `.reqnctapercluster`): the grid must be a multiple of it, and a
  /// persistent kernel is launched with as many clusters as fit at once.
  unsigned clusterSize = 1;
  /// CTAs that compute one program of a persistent kernel together (2 for
  /// a K loop split over a cluster, cluster_k = 2): the launcher runs up to
  /// this many CTAs per program.
  unsigned ctasPerProgram = 1;

  /// Set on a kernel that ism-coschedule fused from the launches of one
  /// `ism.coschedule` (see docs/coschedule.md for the ABI). Its parameters
  /// are the launches' arguments in order, then each launch's grid as three
  /// `index` values, then the hidden ones: the TMA descriptors (`tma`, whose
  /// `arg` indexes the fused parameter list), then, when `workCounters` is
  /// non-zero, the device address (i64) of `workCounters` i32 counters that
  /// must be zero when the kernel starts (0: the partitions stride over
  /// their programs statically instead).
  struct Fused {
    /// "warp_specialized", "block_interleaved" or "ordered".
    std::string policy;
    /// warp_specialized: CTAs per SM of the persistent grid (the launch runs
    /// min(largest partition grid, SMs x ctasPerSM) CTAs).
    /// block_interleaved: unused (one CTA per program of every launch).
    /// ordered: CTAs per SM of the persistent grid (min(sum of the
    /// launches' grids, SMs x ctasPerSM) CTAs).
    unsigned ctasPerSM = 1;
    unsigned workCounters = 0;
    /// ordered: the longest a task waits for an earlier launch (ms).
    unsigned timeoutMs = 0;
    /// The kernels fused, one per partition, in the region's order.
    std::vector<std::string> partitions;
    /// The fused parameter list as ism-coschedule made it (before the
    /// hidden ones): parameter k is launch params[k].first's argument
    /// params[k].second, or its grid size -1 - params[k].second when that
    /// is negative. (Host values several launches pass are one parameter:
    /// the first launch that passes it names it.)
    std::vector<std::pair<unsigned, int>> params;
    /// Compiled with IsmToPTXOptions::trace: one more hidden i64 parameter
    /// after the work counters (or after the TMA descriptors without
    /// counters), the device address of the trace buffer (0: no
    /// recording). The buffer holds four u64 per work item of every
    /// launch, at (the earlier launches' programs) + t: start and end
    /// %globaltimer (ns), (smid << 32) | (launch << 16) | copy, and t.
    bool trace = false;
  };
  std::optional<Fused> fused;
};

/// The PTX of a module's GPU code and the launch facts of its kernels.
struct CompiledModule {
  std::string ptx;
  llvm::StringMap<CompiledKernel> kernels;
  /// For each `ism.coschedule` of the host functions, in walk order: the
  /// name of the fused kernel that replaces its launches (empty when the
  /// module was compiled without fusing them).
  std::vector<std::string> coschedules;
  /// The ism.coschedule ops (walk order) ism-coschedule left unfused (a
  /// pair without a wgmma kernel): their launches run one after the other.
  std::vector<unsigned> unfused;
  /// The warnings the passes emitted, one line each (`FILE:LINE:COL:
  /// warning: ...`), for the caller to print; a compile-cache hit gives
  /// them back too.
  std::vector<std::string> warnings;
};

/// Compiles a copy of `module` (which must already be at the GPU level:
/// kernels in `gpu.module`s) to PTX. `module` itself is not changed. Kernels
/// take their block size from `ism.num_threads` or `known_block_size` and
/// their dynamic shared memory from `ism.shared_memory_bytes`.
llvm::Expected<CompiledModule> compileGPUModuleToPTX(ModuleOp module,
                                                     const PTXOptions &options);

/// Compiles a copy of a tile-level (or GPU-level) module to PTX: runs
/// buildIsmToGPUPipeline, then compileGPUModuleToPTX.
llvm::Expected<CompiledModule> compileToPTX(ModuleOp module,
                                            const IsmToPTXOptions &options);

} // namespace mlir::ism

#endif // ISM_PIPELINES_PIPELINES_H
