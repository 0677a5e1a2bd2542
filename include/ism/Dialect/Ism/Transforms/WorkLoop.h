//===- WorkLoop.h - loads a work loop may issue ahead -----------*- C++ -*-===//
//
// A partition of a fused kernel runs its program in a loop over work items.
// Its tile loads whose addresses depend only on the kernel's arguments and
// the program id can be issued before the program runs: for the next work
// item while this one computes (software pipelining across programs, legal
// because the programs of a launch are unordered), or once for the whole
// loop when they do not depend on the program id at all.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_DIALECT_ISM_TRANSFORMS_WORKLOOP_H
#define ISM_DIALECT_ISM_TRANSFORMS_WORKLOOP_H

#include "ism/Dialect/Ism/IR/IsmOps.h"

namespace mlir::ism {

struct PrefetchableLoad {
  LoadOp load;
  /// The ops of the program's block the load's operands are computed from,
  /// in block order (scalar arithmetic, program ids and grid sizes).
  SmallVector<Operation *> slice;
  /// The address does not depend on the program id.
  bool invariant = false;
};

/// The unmasked ism.load ops at the top level of `body` (a program) that
/// may be issued ahead: their memref is an argument of the kernel, their
/// offsets are computed from arguments, constants, program ids and grid
/// sizes by ops without side effects, nothing before them in `body`
/// writes the same memref, and their tile is not an operand of a
/// tensor-core product (whose lowering places it in shared memory itself).
SmallVector<PrefetchableLoad> getPrefetchableLoads(Block *body);

/// The parameters of the kernel ism-coschedule fuses a region into, as the
/// runner must pass them: the distinct host values the launches take,
/// arguments first (each launch's in order), then grid sizes (x, y, z of
/// each launch; a size a launch leaves out is 1). A value several launches
/// (or a launch and a grid) take is one parameter. `params[k]` names the
/// first use of parameter k: (launch, argument index), or (launch, -1 - d)
/// for grid size d (`value` null for a size left out: 1).
struct FusedParameters {
  struct Use {
    unsigned launch;
    int index;
    Value value;
  };
  SmallVector<Use> params;
  /// Parameter of each launch's arguments and grid sizes.
  SmallVector<SmallVector<unsigned>> argParam, gridParam;
};
inline FusedParameters getFusedParameters(ArrayRef<LaunchOp> launches) {
  FusedParameters result;
  llvm::DenseMap<Value, unsigned> index;
  std::optional<unsigned> one;
  auto paramOf = [&](Value value, unsigned launch, int at) {
    if (!value) {
      if (!one) {
        one = result.params.size();
        result.params.push_back({launch, at, value});
      }
      return *one;
    }
    auto [it, inserted] = index.insert({value, result.params.size()});
    if (inserted)
      result.params.push_back({launch, at, value});
    return it->second;
  };
  result.argParam.resize(launches.size());
  result.gridParam.resize(launches.size());
  for (unsigned i = 0; i < launches.size(); ++i) {
    LaunchOp launch = launches[i];
    for (auto [j, value] : llvm::enumerate(launch.getArgs()))
      result.argParam[i].push_back(paramOf(value, i, int(j)));
  }
  for (unsigned i = 0; i < launches.size(); ++i) {
    LaunchOp launch = launches[i];
    auto grid = launch.getGrid();
    for (unsigned d = 0; d < 3; ++d)
      result.gridParam[i].push_back(
          paramOf(d < grid.size() ? Value(grid[d]) : Value(), i, -1 - int(d)));
  }
  return result;
}

/// Bytes at the start of a counter-driven partition's shared memory (of an
/// ordered kernel's, before its partitions): two slots that hand the next
/// work item from the thread that fetched it to the others.
inline constexpr int64_t kWorkSlotBytes = 16;

/// The counters of an ordered kernel of `n` launches (32-bit words in
/// global memory, zero when it first runs): the task ticket, then from
/// kOrderedDoneCounters the programs of each launch that have finished,
/// then kOrderedErrorWords words recording the first wait that timed out
/// (the waiting launch + 1, 0: none; its program; the launch it waited
/// for; the count it saw), then the CTAs that have finished. The last CTA
/// to finish sets the ticket, the done counters and its own count back to
/// zero, so the next launch needs no memset; the error record stays until
/// the runner reads it.
inline constexpr unsigned kOrderedDoneCounters = 1;
inline constexpr unsigned kOrderedErrorWords = 4;
inline unsigned getOrderedExitCounter(unsigned n) {
  return kOrderedDoneCounters + n + kOrderedErrorWords;
}
inline unsigned getOrderedCounterCount(unsigned n) {
  return getOrderedExitCounter(n) + 1;
}

/// Bytes one slot of a shared-memory ring needs for `tile` copied by
/// `threads` threads in 16-byte chunks (each thread at least one chunk).
int64_t getRingSlotBytes(RankedTensorType tile, int64_t threads);

} // namespace mlir::ism

#endif // ISM_DIALECT_ISM_TRANSFORMS_WORKLOOP_H
