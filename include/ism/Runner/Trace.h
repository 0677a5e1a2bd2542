//===- Trace.h - Per-work-item traces of fused kernels ----------*- C++ -*-===//
//
// `ism-run --trace=FILE.json`: a fused kernel compiled with
// IsmToPTXOptions::trace writes one record per work item of every launch of
// its ism.coschedule region (start and end %globaltimer, SM, launch, copy,
// item). This file decodes those records, computes how long the region's
// kernels were active on the same SM at the same time, and writes them as a
// Chrome trace (the "traceEvents" format of chrome://tracing and Perfetto).
// See docs/runner.md.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_RUNNER_TRACE_H
#define ISM_RUNNER_TRACE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace mlir::ism::runner {

/// Words per trace record: [0] start %globaltimer (ns), [1] end (ns),
/// [2] (smid << 32) | (launchIndex << 16) | copy, [3] the work item's
/// linear index within its launch's grid.
constexpr unsigned kTraceRecordWords = 4;
constexpr unsigned kTraceRecordBytes = kTraceRecordWords * sizeof(uint64_t);

/// The trace buffer of one launch of a traced fused kernel, copied back.
struct FusedTrace {
  /// The fused kernel.
  std::string kernel;
  /// The kernel of each launch of the region, in region order.
  std::vector<std::string> launchNames;
  /// gx * gy * gz of each launch, in region order. Launch i's records start
  /// at the sum of the earlier launches' items.
  std::vector<uint64_t> launchItems;
  /// kTraceRecordWords words per work item of every launch.
  std::vector<uint64_t> words;
};

/// One decoded record of a work item that ran.
struct TraceItem {
  uint64_t start = 0, end = 0;
  uint32_t sm = 0;
  uint16_t launch = 0, copy = 0;
  uint64_t item = 0;
  /// Which FusedTrace (fused launch) the record belongs to.
  unsigned region = 0;
};

/// What a trace shows.
struct TraceSummary {
  /// Work items with a record, and the SMs they ran on.
  uint64_t items = 0;
  unsigned sms = 0;
  /// Distinct (fused launch, launch index) pairs with records: 2 for a
  /// region of two launches.
  unsigned kernels = 0;
  /// Summed over SMs: the time during which items of at least two
  /// different launches were active on the SM, over the time during which
  /// any item was active on it (0 when nothing ran).
  double overlapFraction = 0;
  /// Work items whose record stayed all-zero (never ran).
  uint64_t unrecorded = 0;
  /// Records whose launch or item field disagrees with the record's
  /// position in the buffer.
  uint64_t misplaced = 0;
};

/// Decodes the records of `traces` (skipping all-zero ones) and summarises
/// them.
std::vector<TraceItem> decodeTrace(llvm::ArrayRef<FusedTrace> traces,
                                   TraceSummary &summary);

/// The overlap fraction of `items` (TraceSummary::overlapFraction): per SM,
/// the union of each (region, launch)'s intervals, then the time during
/// which at least two of those unions hold, summed over SMs, over the sum
/// over SMs of the union of all intervals.
double computeOverlapFraction(llvm::ArrayRef<TraceItem> items);

/// Writes `items` as a Chrome trace: one complete ("X") event per item
/// with ts and dur in microseconds relative to the earliest start, pid =
/// SM (process_name "SM <n>"), tid = region * 10000 + launch * 100 + copy
/// (thread_name: the launch's kernel and copy), name = the kernel, args =
/// {"item": t}.
llvm::Error writeChromeTrace(llvm::StringRef path,
                             llvm::ArrayRef<FusedTrace> traces,
                             llvm::ArrayRef<TraceItem> items,
                             const TraceSummary &summary);

} // namespace mlir::ism::runner

#endif // ISM_RUNNER_TRACE_H
