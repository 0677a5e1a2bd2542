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
