//===- Reference.h - Reference interpreter of tile programs -----*- C++ -*-===//
//
// The independent reference `--check` compares against: an interpreter of
// ism tile programs on the CPU in float64. It executes every program
// instance of every launch over host copies of the buffers (inputs hold the
// exact values uploaded to the GPU). Integers keep their width and wrap;
// float casts between float types are the identity, so the reference is
// the exact-arithmetic result the kernel approximates.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_RUNNER_REFERENCE_H
#define ISM_RUNNER_REFERENCE_H

#include "ism/Runner/HostExecutor.h"

#include <atomic>
#include <mutex>

namespace mlir::ism::runner {

/// A buffer of the reference run, in float64 (integers are exact up to
/// 2^53, which covers i8 and i32 buffers).
struct RefBuffer {
  llvm::SmallVector<int64_t, 4> shape;
  std::vector<double> data;
  bool isInt = false;
};

/// The reference buffers of bound arguments: each buffer argument's values
/// as doubles (empty entries for scalars).
std::vector<RefBuffer> makeReferenceBuffers(llvm::ArrayRef<BoundArg> args);

/// Checks that the host has the memory for makeReferenceBuffers(args) (8
/// bytes per element of every buffer); the error is one line.
llvm::Error checkReferenceMemory(llvm::ArrayRef<BoundArg> args);

/// The most program instances the reference interpreter runs in one launch
/// (2^31 - 1, what one dimension of a CUDA grid holds); a larger grid is an
/// error before anything runs.
constexpr uint64_t kMaxInterpretedPrograms = 0x7fffffff;

/// Runs launches in the reference interpreter. Program instances of one
/// launch run in parallel on the host's cores (ism.atomic_rmw serialises).
class ReferenceLauncher : public LaunchHandler {
public:
  /// `buffers` has one entry per argument of the host function (unused for
  /// scalars).
  explicit ReferenceLauncher(std::vector<RefBuffer> &buffers)
      : buffers(buffers) {}

  /// Bounds the time of each launch that follows: a launch still running
  /// after `seconds` stops (between program instances, and at each
  /// iteration of an scf loop) with the error "kernel 'X' did not finish
  /// within N s". 0 (the default) means no limit.
  void setTimeout(unsigned seconds) { timeoutSeconds = seconds; }

  llvm::Error launch(LaunchOp op, const unsigned grid[3],
                     llvm::ArrayRef<HostValue> args) override;
  llvm::Error launchGPUFunc(gpu::LaunchFuncOp op, const unsigned grid[3],
                            const unsigned block[3],
                            unsigned dynamicSharedMemoryBytes,
                            llvm::ArrayRef<HostValue> args) override;
  /// A temporary buffer (memref.alloc) appended to the buffers, filled with
  /// NaN (floats) or the integer 0x7fffffff: never what a kernel that
  /// writes it before reading it would see; `zeroed` ones with zeros.
  llvm::Expected<unsigned> allocate(unsigned slot, DType dtype,
                                    llvm::ArrayRef<int64_t> shape,
                                    bool zeroed) override;

  /// Program instances interpreted so far.
  uint64_t getNumInstances() const { return numInstances; }

  /// Bounds the work of the launches that follow: a launch whose program
  /// instances, counted with every op they execute (one unit per op and per
  /// tile element it produces) and every block they enter, would go past
  /// `limit` units in all fails with an error saying so. 0 (the default)
  /// means no limit. The fuzz targets use it so that a kernel that loops
  /// for ever is an error, not a hang.
  void setWorkLimit(uint64_t limit) { workLimit = limit; }

private:
  std::vector<RefBuffer> &buffers;
  std::mutex atomicMutex;
  std::atomic<uint64_t> numInstances{0};
  uint64_t workLimit = 0;
  std::atomic<uint64_t> work{0};
  unsigned timeoutSeconds = 0;
  SymbolTableCollection symbols;
};

} // namespace mlir::ism::runner

#endif // ISM_RUNNER_REFERENCE_H
