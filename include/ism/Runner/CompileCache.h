//===- CompileCache.h - On-disk cache of compiled modules -------*- C++ -*-===//
//
// Compiling the same module for the same target with the same compiler twice
// reuses the first result from disk instead of running the pass pipeline.
// ism-run and the Python package share it (docs/runner.md, "Compile
// cache").
//
//===----------------------------------------------------------------------===//

#ifndef ISM_RUNNER_COMPILECACHE_H
#define ISM_RUNNER_COMPILECACHE_H

#include "ism/Runner/Compile.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/SHA256.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::ism::runner {

/// Where the cache lives: $ISM_CACHE_DIR when set and non-empty; else
/// $XDG_CACHE_HOME/ism (when it is an absolute path); else $HOME/.cache/ism
/// (the XDG convention; the home directory from the password database when
/// HOME is unset). Empty when there is no home directory either.
std::string getDefaultCacheDirectory();

/// Whether caching is disabled by the environment: ISM_DISABLE_CACHE is set
/// to anything but "", "0", "false", "no" or "off" (case-insensitive).
bool isCacheDisabledByEnvironment();

/// A string that changes whenever the compiler changes: ism's version and git
/// commit (read when CMake configured the build), LLVM's version, and the
/// size and modification time of the executable or shared object that holds
/// this code (found with dladdr) and of those that hold MLIR's and LLVM's
/// (libMLIR.so, libLLVM.so where they are shared), so that a rebuilt compiler
/// never reuses an old entry. Computed once per process. When one of them
/// cannot be identified, the string holds a token unique to the process, so
/// nothing is ever reused (and compileModuleCached does not use the cache).
std::string getCompilerVersion();

/// Adds `name=<size>:<value>` to `hash`: the size makes the fields
/// unambiguous whatever they hold.
void addHashField(llvm::SHA256 &hash, llvm::StringRef name,
                  llvm::StringRef value);

/// Adds `module` to `hash` as its generic-form text without locations, so
/// that formatting, custom syntax and locations do not change the hash
/// (the module part of CompileCache::computeKey and of the tuning key).
void addModuleToHash(llvm::SHA256 &hash, ModuleOp module);

/// Writes `text` to `path` so that readers see the old file or the new one,
/// never a part: a temporary file in the same directory (created with the
/// directories), then a rename. The error says what failed, without the
/// path.
llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef text);

/// A directory of compiled modules, one JSON file per key:
/// `<directory>/<key[0:2]>/<key>.json`.
class CompileCache {
public:
  /// The format of the entries; entries of another format are misses.
  static constexpr int64_t kFormatVersion = 5;

  explicit CompileCache(std::string directory);

  /// The key of compiling `module` with these options: the hex SHA-256 of
  /// the module's generic-form text without locations (so locations and
  /// formatting do not matter), the options compileModule compiles with
  /// (getCompileOptions: chip, features, opt level, num-warps override,
  /// fusing, tracing), and getCompilerVersion(). `mode` matters only as
  /// fused or not: CoscheduleMode::Sequential and Streams compile the same
  /// module and share a key.
  static std::string computeKey(ModuleOp module, const PTXOptions &options,
                                CoscheduleMode mode, bool trace);

  /// Whether `key` can name an entry: at least two characters, all ASCII
  /// letters, digits, '-' or '_' (computeKey's are 64 hex digits).
  static bool isValidKey(llvm::StringRef key);

  /// The entry stored under `key`, or std::nullopt on a miss. An entry that
  /// cannot be read or parsed, or that was written by another compiler
  /// version or format, is a miss, and `*warning` (when not null) gets one
  /// line saying which file and why ("ignoring corrupt cache entry 'PATH':
  /// WHY"); a missing entry is a miss without a warning.
  std::optional<CompiledModule> lookup(llvm::StringRef key,
                                       std::string *warning = nullptr) const;

  /// Stores `compiled` under `key` atomically (a temporary file in the same
  /// directory, then a rename), creating the directories. Errors (a
  /// read-only directory, a full disk, a string that is not UTF-8) are
  /// returned as one line naming the file; callers treat them as warnings.
  llvm::Error store(llvm::StringRef key, const CompiledModule &compiled) const;

  /// The file of `key`'s entry.
  std::string getEntryPath(llvm::StringRef key) const;

  const std::string &getDirectory() const { return directory; }

private:
  std::string directory;
};

/// The JSON text of an entry holding `compiled` under `key` (what store
/// writes), and its inverse (what lookup reads; the errors say what is
/// wrong and where). The round trip is exact.
llvm::Expected<std::string>
serializeCompiledModule(llvm::StringRef key, const CompiledModule &compiled);
llvm::Expected<CompiledModule> deserializeCompiledModule(llvm::StringRef text,
                                                         llvm::StringRef key);

/// compileModule through `cache` (nullptr: no cache). On a hit no pass
/// pipeline runs; the hit passes the same checks as a compiled result
/// (checkCompiledModule), or it is ignored with a warning. A result that
/// compiled is stored. `*hit` (when not null) says whether it was a hit;
/// warnings (corrupt entries, failed stores, a compiler that cannot be
/// identified) are appended to `*warnings` when not null; `*key` (when not
/// null) gets the key looked up (empty when the cache was not used).
llvm::Expected<CompiledModule> compileModuleCached(
    ModuleOp module, const PTXOptions &options, CoscheduleMode mode, bool trace,
    const CompileCache *cache, bool *hit = nullptr,
    std::vector<std::string> *warnings = nullptr, std::string *key = nullptr);

} // namespace mlir::ism::runner

#endif // ISM_RUNNER_COMPILECACHE_H
