//===- Tune.h - ism-run --tune: kernel attributes chosen by timing --*- C++
//-*-===//
//
// `ism-run --tune` picks the kernel attributes that do not change a tile
// program's meaning (num_warps, num_stages, group_size, min_ctas_per_sm,
// cluster_m, cluster_n, consumer_groups) by compiling every candidate and
// timing the ones that fit the GPU, and remembers the winner on disk
// (docs/runner.md, "Tuning"). This file holds the parts that need no GPU: the
// candidate space, applying a candidate to a module, and the tuning cache.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_RUNNER_TUNE_H
#define ISM_RUNNER_TUNE_H

#include "ism/Runner/ArgSpec.h"
#include "ism/Runner/HostExecutor.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::ism::runner {

/// The kernel attributes --tune may set, and `coschedule` (not an
/// attribute: how the module's ism.coschedule regions run, fused,
/// sequential or streams).
llvm::ArrayRef<llvm::StringLiteral> getTunableAttributes();

/// The --tune axis that picks the coschedule mode. Its values are the
/// modes as 1 + CoscheduleMode (1 fused, 2 sequential, 3 streams), written
/// by name in the spec, in describeCandidate and in the cache.
inline constexpr llvm::StringLiteral kCoscheduleAxis = "coschedule";

/// One attribute and the values to try.
struct TuneAxis {
  std::string attr;
  std::vector<int64_t> values;
};

/// One candidate: a value for each axis, in the axes' order.
using TuneCandidate = std::vector<std::pair<std::string, int64_t>>;

/// The coschedule mode a candidate picks, if it has the axis.
std::optional<CoscheduleMode>
getCandidateCoschedule(const TuneCandidate &candidate);

/// Parses a --tune value: axes `ATTR=V1,V2,...` separated by ';' or spaces,
/// e.g. "num_warps=4,8;num_stages=3,4" or "coschedule=fused,sequential".
/// Attributes must be tunable and appear once; values are positive
/// integers (coschedule: mode names). The error is one line naming the
/// problem.
llvm::Expected<std::vector<TuneAxis>> parseTuneSpec(llvm::StringRef spec);

/// The axes of a bare --tune: num_warps = 2, 4, 8, 16 (4 and 8 when a kernel
/// has an ism.dot); when a kernel has an ism.dot in a loop (a K loop that
/// ism-pipeline schedules), num_stages = 2, 3, 4, 6, 8, group_size = 8, 16
/// and consumer_groups = 1, 2; otherwise, when a kernel has an ism.gather
/// in a loop, gather_stages = 1, 2, 3; otherwise, when a kernel without
/// ism.dot has an ism.load in a loop, load_stages = 1, 2, 3, 4.
std::vector<TuneAxis> getDefaultTuneAxes(ModuleOp module);

/// Every combination of the axes' values (the first axis varies slowest).
std::vector<TuneCandidate> enumerateCandidates(llvm::ArrayRef<TuneAxis> axes);

/// Sets the candidate's attributes (i32) on every ism.kernel of `module`
/// (the coschedule axis is no attribute: the caller runs its mode).
void applyCandidate(ModuleOp module, const TuneCandidate &candidate);

/// "num_warps=8 num_stages=3".
std::string describeCandidate(const TuneCandidate &candidate);

/// {"num_warps": 8, "num_stages": 3}: how the cache entry and ism-run's
/// --json report write a candidate.
llvm::json::Object candidateToJSON(const TuneCandidate &candidate);

/// The tuning key: the hex SHA-256 of the module's generic text without
/// locations, the axes, the arguments' dtypes and shapes (each size rounded
/// up to a power of two; scalars by dtype only), the device's name, the
/// chip, the coschedule mode's name and the compiler version.
std::string computeTuneKey(ModuleOp module, llvm::ArrayRef<TuneAxis> axes,
                           llvm::ArrayRef<BoundArg> args,
                           llvm::StringRef deviceName, llvm::StringRef chip,
                           llvm::StringRef coscheduleMode);

/// A stored result: the winner and its median time.
struct TuneResult {
  TuneCandidate best;
  double bestMs = 0;
};

/// The tuning cache: `<directory>/tune/<key>.json`.
class TuneCache {
public:
  static constexpr int64_t kFormatVersion = 1;

  explicit TuneCache(std::string directory) : directory(std::move(directory)) {}

  std::string getPath(llvm::StringRef key) const;

  /// The entry under `key` when there is one that names one of
  /// `candidates`. A file that cannot be read or parsed, of another format
  /// or key, or whose winner is not among the candidates, is ignored with
  /// one line in `*warning` ("ignoring the tuning cache entry 'PATH':
  /// WHY"); a missing one is a miss without a warning.
  std::optional<TuneResult> lookup(llvm::StringRef key,
                                   llvm::ArrayRef<TuneCandidate> candidates,
                                   std::string *warning) const;

  /// Stores `result` under `key` atomically (a temporary file, then a
  /// rename). The error is one line naming the file.
  llvm::Error store(llvm::StringRef key, const TuneResult &result) const;

private:
  std::string directory;
};

} // namespace mlir::ism::runner

#endif // ISM_RUNNER_TUNE_H
