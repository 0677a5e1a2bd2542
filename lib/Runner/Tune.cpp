//===- Tune.cpp - ism-run --tune: candidates and the tuning cache ---------===//
//
// A tuning cache entry is one JSON file:
//   {"format": 1, "key": KEY, "compiler": getCompilerVersion(),
//    "best": {"num_warps": 8, ...}, "best_ms": 0.123}
//
//===----------------------------------------------------------------------===//

#include "ism/Runner/Tune.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"
#include "ism/Runner/CompileCache.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::ism;
using namespace mlir::ism::runner;

llvm::ArrayRef<llvm::StringLiteral> mlir::ism::runner::getTunableAttributes() {
  static const llvm::StringLiteral names[] = {
      "num_warps",    "num_stages", "group_size",    "min_ctas_per_sm",
      "cluster_m",    "cluster_n",  "cluster_k",     "consumer_groups",
      "swap_ab",      "tma_store",  "gather_stages", "load_stages",
      kCoscheduleAxis};
  return names;
}

/// Whether the tunable attribute `name` is a switch, 0 (off) or 1 (on):
/// swap_ab and tma_store, whose 0 is a choice rather than no value.
static bool isSwitch(llvm::StringRef name) {
  return name == "swap_ab" || name == "tma_store";
}

std::optional<CoscheduleMode>
mlir::ism::runner::getCandidateCoschedule(const TuneCandidate &candidate) {
  for (const auto &[name, value] : candidate)
    if (name == kCoscheduleAxis)
      return CoscheduleMode(value - 1);
  return std::nullopt;
}

/// A candidate's value as the spec and describeCandidate write it: the
/// mode's name on the coschedule axis, else the integer.
static std::string getValueText(llvm::StringRef name, int64_t value) {
  if (name == kCoscheduleAxis)
    return getCoscheduleModeName(CoscheduleMode(value - 1)).str();
  return std::to_string(value);
}

/// A candidate's value as the cache and the --json report write it (and the
/// cache lookup compares it): the mode's name, else the integer.
static llvm::json::Value getValueJSON(llvm::StringRef name, int64_t value) {
  if (name == kCoscheduleAxis)
    return getValueText(name, value);
  return value;
}

llvm::Expected<std::vector<TuneAxis>>
mlir::ism::runner::parseTuneSpec(llvm::StringRef spec) {
  auto fail = [&](const llvm::Twine &why) {
    return llvm::createStringError(("--tune '" + spec + "': " + why).str());
  };
  std::vector<TuneAxis> axes;
  llvm::StringSet<> seen;
  llvm::SmallVector<llvm::StringRef> parts;
  spec.split(parts, ';', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  llvm::SmallVector<llvm::StringRef> words;
  for (llvm::StringRef part : parts) {
    llvm::SmallVector<llvm::StringRef> split;
    llvm::SplitString(part, split, " \t");
    words.append(split.begin(), split.end());
  }
  if (words.empty())
    return fail("expected ATTR=V1,V2,... (e.g. num_warps=4,8;num_stages=3,4)");
  for (llvm::StringRef word : words) {
    auto [name, list] = word.split('=');
    if (!word.contains('=') || name.empty() || list.empty())
      return fail("'" + word + "' is not ATTR=V1,V2,...");
    if (!llvm::is_contained(getTunableAttributes(), name))
      return fail("'" + name + "' is not a tunable attribute (" +
                  llvm::join(getTunableAttributes(), ", ") + ")");
    if (!seen.insert(name).second)
      return fail("'" + name + "' appears twice");
    TuneAxis axis{name.str(), {}};
    llvm::SmallVector<llvm::StringRef> values;
    list.split(values, ',');
    for (llvm::StringRef text : values) {
      int64_t value;
      if (name == kCoscheduleAxis) {
        std::optional<CoscheduleMode> mode = parseCoscheduleMode(text.trim());
        if (!mode)
          return fail("'coschedule' takes fused, sequential or streams, not '" +
                      text + "'");
        value = int64_t(*mode) + 1;
      } else if (isSwitch(name)) {
        if (text.trim().getAsInteger(10, value) || value < 0 || value > 1)
          return fail("'" + name + "' takes 0 or 1, not '" + text + "'");
      } else if (text.trim().getAsInteger(10, value) || value < 1 ||
                 value > std::numeric_limits<int32_t>::max())
        return fail("'" + name + "' takes positive integers, not '" + text +
                    "'");
      if (!llvm::is_contained(axis.values, value))
        axis.values.push_back(value);
    }
    axes.push_back(std::move(axis));
  }
  return axes;
}

std::vector<TuneAxis> mlir::ism::runner::getDefaultTuneAxes(ModuleOp module) {
  // Gathers in a loop (CSR SpMM) may be pipelined (ism-pipeline-gathers):
  // it pays where the grid leaves the SMs latency-bound (1.5x at one program
  // an SM on the H200) and costs where the L2 is the limit (0.87x at many),
  // so the grid's size decides. Not beside a K loop (a GEMM + SpMM
  // co-schedule): its set is large already, and the ring loses there
  // (0.88x fused on the H200, docs/coschedule.md).
  // Tile loads in a loop without products (a row streamed in chunks) may
  // be issued ahead (ism-pipeline-loads): 1 (not), 2 and 3 besides the
  // compiler's own choice.
  bool hasDot = false, hasDotLoop = false, hasGatherLoop = false;
  bool hasLoadLoop = false;
  module.walk([&](Operation *op) {
    bool inLoop = isa_and_nonnull<scf::ForOp>(op->getParentOp());
    if (isa<DotOp>(op)) {
      hasDot = true;
      hasDotLoop |= inLoop;
    } else if (isa<GatherOp>(op)) {
      hasGatherLoop |= inLoop;
    } else if (isa<LoadOp>(op)) {
      hasLoadLoop |= inLoop;
    }
  });
  std::vector<TuneAxis> axes;
  axes.push_back({"num_warps", hasDot ? std::vector<int64_t>{4, 8}
                                      : std::vector<int64_t>{2, 4, 8, 16}});
  if (hasDotLoop) {
    // 6 and 8 fill the ring of the small tiles (64x128: 24 KiB a stage),
    // which the skinny shapes want; the large tiles prune them.
    axes.push_back({"num_stages", {2, 3, 4, 6, 8}});
    axes.push_back({"group_size", {8, 16}});
    axes.push_back({"consumer_groups", {1, 2}});
  }
  if (hasGatherLoop && !hasDotLoop)
    axes.push_back({"gather_stages", {1, 2, 3}});
  else if (hasLoadLoop && !hasDot)
    axes.push_back({"load_stages", {1, 2, 3, 4}});
  return axes;
}

std::vector<TuneCandidate>
mlir::ism::runner::enumerateCandidates(llvm::ArrayRef<TuneAxis> axes) {
  std::vector<TuneCandidate> out{{}};
  for (const TuneAxis &axis : axes) {
    std::vector<TuneCandidate> next;
    for (const TuneCandidate &prefix : out)
      for (int64_t value : axis.values) {
        TuneCandidate c = prefix;
        c.emplace_back(axis.attr, value);
        next.push_back(std::move(c));
      }
    out = std::move(next);
  }
  return out;
}

void mlir::ism::runner::applyCandidate(ModuleOp module,
                                       const TuneCandidate &candidate) {
  Builder b(module.getContext());
  module.walk([&](KernelOp kernel) {
    for (const auto &[name, value] : candidate)
      if (name != kCoscheduleAxis)
        kernel->setAttr(name, b.getI32IntegerAttr(value));
  });
}

std::string
mlir::ism::runner::describeCandidate(const TuneCandidate &candidate) {
  std::string out;
  for (const auto &[name, value] : candidate)
    out += (out.empty() ? "" : " ") + name + "=" + getValueText(name, value);
  return out;
}

llvm::json::Object
mlir::ism::runner::candidateToJSON(const TuneCandidate &candidate) {
  llvm::json::Object object;
  for (const auto &[name, value] : candidate)
    object[name] = getValueJSON(name, value);
  return object;
}

std::string mlir::ism::runner::computeTuneKey(ModuleOp module,
                                              llvm::ArrayRef<TuneAxis> axes,
                                              llvm::ArrayRef<BoundArg> args,
                                              llvm::StringRef deviceName,
                                              llvm::StringRef chip,
                                              llvm::StringRef coscheduleMode) {
  llvm::SHA256 hash;
  addHashField(hash, "ism-tune-format",
               std::to_string(TuneCache::kFormatVersion));
  addHashField(hash, "compiler", getCompilerVersion());
  addHashField(hash, "device", deviceName);
  addHashField(hash, "chip", chip);
  addHashField(hash, "coschedule", coscheduleMode);
  for (const TuneAxis &axis : axes) {
    std::string values;
    for (int64_t v : axis.values)
      values += std::to_string(v) + ",";
    addHashField(hash, "axis " + axis.attr, values);
  }
  for (const BoundArg &arg : args) {
    if (!arg.isBuffer) {
      std::string type;
      llvm::raw_string_ostream os(type);
      arg.type.print(os);
      addHashField(hash, "scalar", type);
      continue;
    }
    std::string shape;
    for (int64_t size : arg.buffer.shape)
      shape += std::to_string(llvm::PowerOf2Ceil(uint64_t(size))) + "x";
    addHashField(hash, "buffer",
                 getDTypeName(arg.buffer.dtype).str() + ":" + shape);
  }
  hash.update("module\n");
  addModuleToHash(hash, module);
  return llvm::toHex(hash.final(), /*LowerCase=*/true);
}

std::string TuneCache::getPath(llvm::StringRef key) const {
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, "tune", key + ".json");
  return std::string(path);
}

std::optional<TuneResult>
TuneCache::lookup(llvm::StringRef key, llvm::ArrayRef<TuneCandidate> candidates,
                  std::string *warning) const {
  std::string path = getPath(key);
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return std::nullopt; // a miss
  auto ignore = [&](const llvm::Twine &why) {
    if (warning)
      *warning =
          ("ignoring the tuning cache entry '" + path + "': " + why).str();
    return std::nullopt;
  };
  llvm::Expected<llvm::json::Value> parsed =
      llvm::json::parse((*buffer)->getBuffer());
  if (!parsed)
    return ignore("not JSON (" + llvm::toString(parsed.takeError()) + ")");
  const llvm::json::Object *object = parsed->getAsObject();
  if (!object)
    return ignore("not a JSON object");
  if (object->getInteger("format") != kFormatVersion)
    return ignore("another format");
  if (object->getString("key") != key)
    return ignore("another key");
  if (object->getString("compiler") != getCompilerVersion())
    return ignore("another compiler version");
  const llvm::json::Object *best = object->getObject("best");
  std::optional<double> ms = object->getNumber("best_ms");
  if (!best || !ms)
    return ignore("no \"best\" object or \"best_ms\" number");
  for (const TuneCandidate &candidate : candidates) {
    bool same = best->size() == candidate.size();
    for (const auto &[name, value] : candidate) {
      const llvm::json::Value *stored = best->get(name);
      same = same && stored && *stored == getValueJSON(name, value);
    }
    if (same)
      return TuneResult{candidate, *ms};
  }
  return ignore("its winner is not one of the candidates");
}

llvm::Error TuneCache::store(llvm::StringRef key,
                             const TuneResult &result) const {
  llvm::json::Object entry{{"format", kFormatVersion},
                           {"key", key},
                           {"compiler", getCompilerVersion()},
                           {"best", candidateToJSON(result.best)},
                           {"best_ms", result.bestMs}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(entry))) << "\n";
  std::string path = getPath(key);
  if (llvm::Error error = writeFileAtomically(path, text))
    return llvm::createStringError("cannot write the tuning cache entry '" +
                                   path +
                                   "': " + llvm::toString(std::move(error)));
  return llvm::Error::success();
}
