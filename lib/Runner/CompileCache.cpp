//===- CompileCache.cpp - On-disk cache of compiled modules ---------------===//
//
// Entries are JSON files `<dir>/<key[0:2]>/<key>.json`:
//
//   {"compiler": getCompilerVersion(), "format": 5, "key": KEY,
//    "module": {"ptx": ..., "kernels": [...], "coschedules": [...],
//               "unfused": [...], "warnings": [...]}}
//
// Anything wrong with one (unreadable, not JSON, a field missing or of the
// wrong type or range, another format or compiler) makes it a miss with a
// warning; it is never trusted in part.
//
//===----------------------------------------------------------------------===//

#include "ism/Runner/CompileCache.h"

#include "ism/Runner/Version.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Errc.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

#include <chrono>
#include <climits>
#include <cstdlib>
#include <dlfcn.h>
#ifdef __GLIBC__
#include <link.h>
#endif

using namespace mlir;
using namespace mlir::ism;
using namespace mlir::ism::runner;
namespace json = llvm::json;

//===----------------------------------------------------------------------===//
// Environment
//===----------------------------------------------------------------------===//

static llvm::StringRef getEnv(const char *name) {
  const char *value = std::getenv(name);
  return value ? llvm::StringRef(value) : llvm::StringRef();
}

std::string mlir::ism::runner::getDefaultCacheDirectory() {
  if (llvm::StringRef dir = getEnv("ISM_CACHE_DIR"); !dir.empty())
    return dir.str();
  llvm::SmallString<256> path;
  // The XDG base directory specification ignores relative paths.
  if (llvm::StringRef xdg = getEnv("XDG_CACHE_HOME");
      !xdg.empty() && llvm::sys::path::is_absolute(xdg)) {
    path = xdg;
    llvm::sys::path::append(path, "ism");
    return std::string(path);
  }
  // $HOME, or the password database's home directory without it.
  if (!llvm::sys::path::home_directory(path) || path.empty())
    return "";
  llvm::sys::path::append(path, ".cache", "ism");
  return std::string(path);
}

bool mlir::ism::runner::isCacheDisabledByEnvironment() {
  std::string value = getEnv("ISM_DISABLE_CACHE").lower();
  return !value.empty() && value != "0" && value != "false" && value != "no" &&
         value != "off";
}

//===----------------------------------------------------------------------===//
// The compiler's version
//===----------------------------------------------------------------------===//

namespace {
/// getCompilerVersion's string, and whether every part was identified.
struct CompilerIdentity {
  std::string version;
  /// Empty when identified; else why not.
  std::string problem;
};
} // namespace

/// The real path of the executable or shared object that holds `address`.
static std::optional<std::string> getObjectPath(const void *address) {
  Dl_info info;
  bool mainProgram;
#ifdef __GLIBC__
  struct link_map *map = nullptr;
  if (!dladdr1(address, &info, reinterpret_cast<void **>(&map),
               RTLD_DL_LINKMAP))
    return std::nullopt;
  // glibc names the main program by argv[0], which may be relative or
  // found through PATH.
  mainProgram = !map || !map->l_name || map->l_name[0] == '\0';
#else
  if (!dladdr(address, &info))
    return std::nullopt;
  mainProgram = !info.dli_fname || !*info.dli_fname;
#endif
  llvm::SmallString<256> path;
  if (mainProgram) {
    if (llvm::sys::fs::real_path("/proc/self/exe", path))
      return std::nullopt;
  } else if (!info.dli_fname ||
             llvm::sys::fs::real_path(info.dli_fname, path)) {
    return std::nullopt;
  }
  return std::string(path);
}

/// "NAME SIZE MTIME" of the object holding `address` (once per object:
/// `seen` holds those described already), "" for one described already, or
/// std::nullopt with `problem` set.
static std::optional<std::string> describeObject(const void *address,
                                                 llvm::StringRef what,
                                                 llvm::StringSet<> &seen,
                                                 std::string &problem) {
  std::optional<std::string> path = getObjectPath(address);
  if (!path) {
    problem = ("cannot find the file that holds " + what).str();
    return std::nullopt;
  }
  if (!seen.insert(*path).second)
    return std::string();
  llvm::sys::fs::file_status status;
  if (std::error_code error = llvm::sys::fs::status(*path, status)) {
    problem = "cannot read the status of '" + *path + "': " + error.message();
    return std::nullopt;
  }
  int64_t mtime = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      status.getLastModificationTime().time_since_epoch())
                      .count();
  return llvm::formatv("; {0} {1} bytes mtime {2}",
                       llvm::sys::path::filename(*path), status.getSize(),
                       mtime)
      .str();
}

static CompilerIdentity computeCompilerIdentity() {
  CompilerIdentity identity;
  identity.version = "ism " ISM_VERSION " (commit " ISM_GIT_COMMIT
                     "); LLVM " LLVM_VERSION_STRING;
  // This code, MLIR's and LLVM's: the binary, or libMLIR.so and
  // libLLVM.so when they are shared libraries.
  struct {
    const void *address;
    const char *what;
  } objects[] = {
      {reinterpret_cast<const void *>(&mlir::ism::runner::getCompilerVersion),
       "ism's compiler"},
      {reinterpret_cast<const void *>(&mlir::registerAsmPrinterCLOptions),
       "MLIR"},
      {reinterpret_cast<const void *>(&llvm::sys::getDefaultTargetTriple),
       "LLVM"},
  };
  llvm::StringSet<> seen;
  for (const auto &object : objects) {
    std::optional<std::string> description =
        describeObject(object.address, object.what, seen, identity.problem);
    if (!description)
      break;
    identity.version += *description;
  }
  if (!identity.problem.empty()) {
    // Nothing may be reused: a token unique to this process.
    int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
    identity.version += llvm::formatv("; unidentified, process {0} at {1}",
                                      llvm::sys::Process::getProcessId(), now)
                            .str();
  }
  return identity;
}

static const CompilerIdentity &getCompilerIdentity() {
  static const CompilerIdentity identity = computeCompilerIdentity();
  return identity;
}

std::string mlir::ism::runner::getCompilerVersion() {
  return getCompilerIdentity().version;
}

//===----------------------------------------------------------------------===//
// Keys
//===----------------------------------------------------------------------===//

namespace {
/// A stream whose bytes go into a SHA-256 (the module's text is hashed
/// without being held in memory).
class SHA256Stream : public llvm::raw_ostream {
public:
  explicit SHA256Stream(llvm::SHA256 &hash) : hash(hash) {}
  ~SHA256Stream() override { flush(); }

private:
  void write_impl(const char *ptr, size_t size) override {
    hash.update(llvm::StringRef(ptr, size));
    position += size;
  }
  uint64_t current_pos() const override { return position; }

  llvm::SHA256 &hash;
  uint64_t position = 0;
};
} // namespace

void mlir::ism::runner::addHashField(llvm::SHA256 &hash, llvm::StringRef name,
                                     llvm::StringRef value) {
  hash.update(name);
  hash.update("=" + std::to_string(value.size()) + ":");
  hash.update(value);
  hash.update("\n");
}

std::string CompileCache::computeKey(ModuleOp module, const PTXOptions &options,
                                     CoscheduleMode mode, bool trace) {
  // Every field of the options compileModule compiles with. A field added
  // to PTXOptions or IsmToPTXOptions that changes the output must be added
  // here.
  IsmToPTXOptions compileOptions = getCompileOptions(options, mode, trace);
  llvm::SHA256 hash;
  addHashField(hash, "ism-compile-cache-format",
               std::to_string(kFormatVersion));
  addHashField(hash, "compiler", getCompilerVersion());
  addHashField(hash, "chip", compileOptions.chip);
  addHashField(hash, "features", compileOptions.features);
  addHashField(hash, "opt-level", std::to_string(compileOptions.optLevel));
  addHashField(hash, "num-warps", std::to_string(compileOptions.numWarps));
  addHashField(hash, "fuse-coschedules",
               compileOptions.fuseCoschedules ? "1" : "0");
  addHashField(hash, "trace", compileOptions.trace ? "1" : "0");
  hash.update("module\n");
  addModuleToHash(hash, module);
  return llvm::toHex(hash.final(), /*LowerCase=*/true);
}

void mlir::ism::runner::addModuleToHash(llvm::SHA256 &hash, ModuleOp module) {
  {
    // The generic form without locations: the text is the module, whatever
    // its custom syntax, formatting and locations. Flags that command-line
    // options could change are set explicitly: eliding large attributes
    // would lose content, and NameLoc prefixes would bring locations back.
    OpPrintingFlags flags;
    flags.printGenericOpForm()
        .enableDebugInfo(false)
        .printNameLocAsPrefix(false)
        .elideLargeElementsAttrs(std::numeric_limits<int64_t>::max())
        .elideLargeResourceString(std::numeric_limits<int64_t>::max())
        .assumeVerified();
    SHA256Stream stream(hash);
    module->print(stream, flags);
  }
}

bool CompileCache::isValidKey(llvm::StringRef key) {
  return key.size() >= 2 && llvm::all_of(key, [](char c) {
           return llvm::isAlnum(c) || c == '-' || c == '_';
         });
}

//===----------------------------------------------------------------------===//
// Entries
//===----------------------------------------------------------------------===//

/// The first string of `compiled` that is not UTF-8 (JSON holds UTF-8 only),
/// described, or std::nullopt.
static std::optional<std::string>
findNonUTF8String(const CompiledModule &compiled) {
  if (!json::isUTF8(compiled.ptx))
    return std::string("the PTX");
  for (const auto &entry : compiled.kernels) {
    if (!json::isUTF8(entry.first()))
      return std::string("a kernel name");
    if (const std::optional<CompiledKernel::Fused> &fused =
            entry.second.fused) {
      if (!json::isUTF8(fused->policy))
        return "the policy of kernel '" + entry.first().str() + "'";
      for (const std::string &partition : fused->partitions)
        if (!json::isUTF8(partition))
          return "a partition name of kernel '" + entry.first().str() + "'";
    }
  }
  for (const std::string &name : compiled.coschedules)
    if (!json::isUTF8(name))
      return std::string("a fused kernel name of CompiledModule::coschedules");
  for (const std::string &warning : compiled.warnings)
    if (!json::isUTF8(warning))
      return std::string("a warning");
  return std::nullopt;
}

static json::Object toJSON(llvm::StringRef name, const CompiledKernel &kernel) {
  json::Array tma;
  for (const CompiledKernel::TmaOperand &operand : kernel.tma)
    tma.push_back(json::Object{
        {"arg", operand.arg},
        {"box_rows", operand.boxRows},
        {"box_cols", operand.boxCols},
        {"im2col", json::Array(operand.im2col)}});
  json::Value fused = nullptr;
  if (kernel.fused) {
    json::Array params;
    for (const auto &[launch, index] : kernel.fused->params)
      params.push_back(json::Array{launch, index});
    fused = json::Object{{"policy", kernel.fused->policy},
                         {"ctas_per_sm", kernel.fused->ctasPerSM},
                         {"work_counters", kernel.fused->workCounters},
                         {"timeout_ms", kernel.fused->timeoutMs},
                         {"partitions", json::Array(kernel.fused->partitions)},
                         {"params", std::move(params)},
                         {"trace", kernel.fused->trace}};
  }
  return json::Object{{"name", name},
                      {"num_threads", kernel.numThreads},
                      {"shared_memory_bytes", kernel.sharedMemoryBytes},
                      {"tma", std::move(tma)},
                      {"persistent", kernel.persistent},
                      {"cluster_size", kernel.clusterSize},
                      {"ctas_per_program", kernel.ctasPerProgram},
                      {"fused", std::move(fused)}};
}

llvm::Expected<std::string>
mlir::ism::runner::serializeCompiledModule(llvm::StringRef key,
                                           const CompiledModule &compiled) {
  if (!json::isUTF8(key))
    return llvm::createStringError("the key is not valid UTF-8");
  if (std::optional<std::string> what = findNonUTF8String(compiled))
    return llvm::createStringError(*what + " is not valid UTF-8");
  // Kernels in name order: the same module gives the same file.
  std::vector<llvm::StringRef> names;
  for (const auto &entry : compiled.kernels)
    names.push_back(entry.first());
  llvm::sort(names);
  json::Array kernels;
  for (llvm::StringRef name : names)
    kernels.push_back(toJSON(name, compiled.kernels.find(name)->second));
  json::Array unfused;
  for (unsigned index : compiled.unfused)
    unfused.push_back(index);
  json::Object entry{
      {"format", CompileCache::kFormatVersion},
      {"compiler", getCompilerVersion()},
      {"key", key},
      {"module",
       json::Object{{"ptx", compiled.ptx},
                    {"kernels", std::move(kernels)},
                    {"coschedules", json::Array(compiled.coschedules)},
                    {"unfused", std::move(unfused)},
                    {"warnings", json::Array(compiled.warnings)}}}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:1}", json::Value(std::move(entry))) << "\n";
  return text;
}

namespace {
/// Reads the fields of an entry, reporting the first problem at its path
/// (json::Path::Root says "expected ... at entry.module.kernels[0].name").
struct EntryReader {
  static const json::Value *get(const json::Object &object,
                                llvm::StringLiteral name, json::Path path) {
    const json::Value *value = object.get(name);
    if (!value)
      path.field(name).report("missing");
    return value;
  }
  static const json::Object *getObject(const json::Value &value,
                                       json::Path path) {
    const json::Object *object = value.getAsObject();
    if (!object)
      path.report("expected an object");
    return object;
  }
  static const json::Array *getArray(const json::Object &object,
                                     llvm::StringLiteral name,
                                     json::Path path) {
    const json::Value *value = get(object, name, path);
    if (!value)
      return nullptr;
    const json::Array *array = value->getAsArray();
    if (!array)
      path.field(name).report("expected an array");
    return array;
  }
  static bool readString(const json::Value &value, json::Path path,
                         std::string &out) {
    std::optional<llvm::StringRef> string = value.getAsString();
    if (!string) {
      path.report("expected a string");
      return false;
    }
    out = string->str();
    return true;
  }
  static bool readString(const json::Object &object, llvm::StringLiteral name,
                         json::Path path, std::string &out) {
    const json::Value *value = get(object, name, path);
    return value && readString(*value, path.field(name), out);
  }
  static bool readInt64(const json::Value &value, json::Path path,
                        int64_t &out) {
    std::optional<int64_t> integer = value.getAsInteger();
    if (!integer) {
      path.report("expected an integer");
      return false;
    }
    out = *integer;
    return true;
  }
  static bool readInt64(const json::Object &object, llvm::StringLiteral name,
                        json::Path path, int64_t &out) {
    const json::Value *value = get(object, name, path);
    return value && readInt64(*value, path.field(name), out);
  }
  static bool readUnsigned(const json::Value &value, json::Path path,
                           unsigned &out) {
    std::optional<int64_t> integer = value.getAsInteger();
    if (!integer || *integer < 0 || *integer > UINT_MAX) {
      path.report("expected an integer from 0 to 2^32 - 1");
      return false;
    }
    out = static_cast<unsigned>(*integer);
    return true;
  }
  static bool readUnsigned(const json::Object &object, llvm::StringLiteral name,
                           json::Path path, unsigned &out) {
    const json::Value *value = get(object, name, path);
    return value && readUnsigned(*value, path.field(name), out);
  }
  static bool readBool(const json::Object &object, llvm::StringLiteral name,
                       json::Path path, bool &out) {
    const json::Value *value = get(object, name, path);
    if (!value)
      return false;
    std::optional<bool> boolean = value->getAsBoolean();
    if (!boolean) {
      path.field(name).report("expected a boolean");
      return false;
    }
    out = *boolean;
    return true;
  }
  static bool readStrings(const json::Object &object, llvm::StringLiteral name,
                          json::Path path, std::vector<std::string> &out) {
    const json::Array *array = getArray(object, name, path);
    if (!array)
      return false;
    out.clear();
    json::Path arrayPath = path.field(name);
    for (auto [i, value] : llvm::enumerate(*array))
      if (!readString(value, arrayPath.index(i), out.emplace_back()))
        return false;
    return true;
  }

  static bool readFused(const json::Value &value, json::Path path,
                        std::optional<CompiledKernel::Fused> &out) {
    if (value.getAsNull()) {
      out.reset();
      return true;
    }
    const json::Object *object = getObject(value, path);
    if (!object)
      return false;
    CompiledKernel::Fused &fused = out.emplace();
    return readString(*object, "policy", path, fused.policy) &&
           readUnsigned(*object, "ctas_per_sm", path, fused.ctasPerSM) &&
           readUnsigned(*object, "work_counters", path, fused.workCounters) &&
           readUnsigned(*object, "timeout_ms", path, fused.timeoutMs) &&
           readStrings(*object, "partitions", path, fused.partitions) &&
           readParams(*object, path, fused.params) &&
           readBool(*object, "trace", path, fused.trace);
  }

  static bool readParams(const json::Object &object, json::Path path,
                         std::vector<std::pair<unsigned, int>> &out) {
    const json::Array *array = getArray(object, "params", path);
    if (!array)
      return false;
    out.clear();
    json::Path arrayPath = path.field("params");
    for (auto [i, value] : llvm::enumerate(*array)) {
      json::Path pairPath = arrayPath.index(i);
      const json::Array *pair = value.getAsArray();
      if (!pair || pair->size() != 2) {
        pairPath.report("expected a [launch, index] pair");
        return false;
      }
      int64_t index = 0;
      unsigned launch = 0;
      if (!readUnsigned((*pair)[0], pairPath.index(0), launch) ||
          !readInt64((*pair)[1], pairPath.index(1), index))
        return false;
      out.emplace_back(launch, int(index));
    }
    return true;
  }

  static bool readKernel(const json::Value &value, json::Path path,
                         std::string &name, CompiledKernel &kernel) {
    const json::Object *object = getObject(value, path);
    if (!object || !readString(*object, "name", path, name) ||
        !readUnsigned(*object, "num_threads", path, kernel.numThreads) ||
        !readUnsigned(*object, "shared_memory_bytes", path,
                      kernel.sharedMemoryBytes))
      return false;
    const json::Array *tma = getArray(*object, "tma", path);
    if (!tma)
      return false;
    // (A json::Path points to its parent: each one a named variable.)
    json::Path tmaPath = path.field("tma");
    for (auto [i, operandValue] : llvm::enumerate(*tma)) {
      json::Path operandPath = tmaPath.index(i);
      const json::Object *operand = getObject(operandValue, operandPath);
      CompiledKernel::TmaOperand &out = kernel.tma.emplace_back();
      if (!operand || !readInt64(*operand, "arg", operandPath, out.arg) ||
          !readUnsigned(*operand, "box_rows", operandPath, out.boxRows) ||
          !readUnsigned(*operand, "box_cols", operandPath, out.boxCols))
        return false;
      if (const json::Array *im2col = operand->getArray("im2col"))
        for (const json::Value &v : *im2col) {
          std::optional<int64_t> i = v.getAsInteger();
          if (!i)
            return false;
          out.im2col.push_back(*i);
        }
    }
    const json::Value *fused = get(*object, "fused", path);
    return readBool(*object, "persistent", path, kernel.persistent) &&
           readUnsigned(*object, "cluster_size", path, kernel.clusterSize) &&
           readUnsigned(*object, "ctas_per_program", path,
                        kernel.ctasPerProgram) &&
           fused && readFused(*fused, path.field("fused"), kernel.fused);
  }

  static bool readModule(const json::Value &value, json::Path path,
                         CompiledModule &compiled) {
    const json::Object *object = getObject(value, path);
    if (!object || !readString(*object, "ptx", path, compiled.ptx))
      return false;
    const json::Array *kernels = getArray(*object, "kernels", path);
    if (!kernels)
      return false;
    json::Path kernelsPath = path.field("kernels");
    for (auto [i, kernelValue] : llvm::enumerate(*kernels)) {
      json::Path kernelPath = kernelsPath.index(i);
      std::string name;
      CompiledKernel kernel;
      if (!readKernel(kernelValue, kernelPath, name, kernel))
        return false;
      if (!compiled.kernels.try_emplace(name, std::move(kernel)).second) {
        kernelPath.field("name").report("a second kernel of this name");
        return false;
      }
    }
    if (!readStrings(*object, "coschedules", path, compiled.coschedules))
      return false;
    const json::Array *unfused = getArray(*object, "unfused", path);
    if (!unfused)
      return false;
    json::Path unfusedPath = path.field("unfused");
    for (auto [i, index] : llvm::enumerate(*unfused))
      if (!readUnsigned(index, unfusedPath.index(i),
                        compiled.unfused.emplace_back()))
        return false;
    return readStrings(*object, "warnings", path, compiled.warnings);
  }
};
} // namespace

/// The deepest nesting of arrays and objects in `text` (outside strings),
/// so that a hostile file cannot exhaust the stack of the recursive parser.
static unsigned getNestingDepth(llvm::StringRef text) {
  unsigned depth = 0, deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

llvm::Expected<CompiledModule>
mlir::ism::runner::deserializeCompiledModule(llvm::StringRef text,
                                             llvm::StringRef key) {
  // An entry nests six deep (the entry, module, kernels, a kernel, tma or
  // fused, a TMA operand or the partitions).
  constexpr unsigned kMaxDepth = 16;
  if (getNestingDepth(text) > kMaxDepth)
    return llvm::createStringError(
        llvm::formatv("arrays and objects nest more than {0} deep", kMaxDepth));
  llvm::Expected<json::Value> value = json::parse(text);
  if (!value)
    return llvm::createStringError("not JSON: " +
                                   llvm::toString(value.takeError()));
  const json::Object *entry = value->getAsObject();
  if (!entry)
    return llvm::createStringError("not a JSON object");
  // The format and the compiler first, so that an entry of another version
  // says so rather than which field it lacks.
  std::optional<int64_t> format = entry->getInteger("format");
  if (!format)
    return llvm::createStringError("no format version");
  if (*format != CompileCache::kFormatVersion)
    return llvm::createStringError(llvm::formatv(
        "format version {0}, not {1}", *format, CompileCache::kFormatVersion));
  std::optional<llvm::StringRef> compiler = entry->getString("compiler");
  if (!compiler)
    return llvm::createStringError("no compiler version");
  std::string version = getCompilerVersion();
  if (*compiler != version)
    return llvm::createStringError(
        llvm::formatv("written by another compiler ('{0}'; this one is "
                      "'{1}')",
                      *compiler, version));
  std::optional<llvm::StringRef> entryKey = entry->getString("key");
  if (!entryKey || *entryKey != key)
    return llvm::createStringError(llvm::formatv(
        "it holds the key '{0}', not '{1}'", entryKey.value_or("<none>"), key));
  json::Path::Root root("entry");
  CompiledModule compiled;
  json::Path rootPath(root);
  const json::Value *module = EntryReader::get(*entry, "module", rootPath);
  if (!module ||
      !EntryReader::readModule(*module, rootPath.field("module"), compiled))
    return root.getError();
  return compiled;
}

//===----------------------------------------------------------------------===//
// The cache
//===----------------------------------------------------------------------===//

CompileCache::CompileCache(std::string directory)
    : directory(std::move(directory)) {}

std::string CompileCache::getEntryPath(llvm::StringRef key) const {
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, key.take_front(2), key + ".json");
  return std::string(path);
}

std::optional<CompiledModule> CompileCache::lookup(llvm::StringRef key,
                                                   std::string *warning) const {
  if (!isValidKey(key)) {
    if (warning)
      *warning = ("ignoring the compile cache key '" + key +
                  "': expected letters, digits, '-' and '_'")
                     .str();
    return std::nullopt;
  }
  std::string path = getEntryPath(key);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer) {
    std::error_code error = buffer.getError();
    // No entry (or no directory to hold it): an ordinary miss.
    if (error == llvm::errc::no_such_file_or_directory ||
        error == llvm::errc::not_a_directory)
      return std::nullopt;
    if (warning)
      *warning =
          "ignoring unreadable cache entry '" + path + "': " + error.message();
    return std::nullopt;
  }
  llvm::Expected<CompiledModule> compiled =
      deserializeCompiledModule((*buffer)->getBuffer(), key);
  if (!compiled) {
    std::string why = llvm::toString(compiled.takeError());
    if (warning)
      *warning = "ignoring corrupt cache entry '" + path + "': " + why;
    return std::nullopt;
  }
  return std::move(*compiled);
}

llvm::Error CompileCache::store(llvm::StringRef key,
                                const CompiledModule &compiled) const {
  if (!isValidKey(key))
    return llvm::createStringError(
        ("cannot store under the compile cache key '" + key +
         "': expected letters, digits, '-' and '_'")
            .str());
  std::string path = getEntryPath(key);
  auto fail = [&](const llvm::Twine &why) {
    return llvm::createStringError(
        ("cannot write compile cache entry '" + path + "': " + why).str());
  };
  llvm::Expected<std::string> text = serializeCompiledModule(key, compiled);
  if (!text)
    return fail(llvm::toString(text.takeError()));
  if (llvm::Error error = writeFileAtomically(path, *text))
    return fail(llvm::toString(std::move(error)));
  return llvm::Error::success();
}

llvm::Error mlir::ism::runner::writeFileAtomically(llvm::StringRef path,
                                                   llvm::StringRef text) {
  auto fail = [](const llvm::Twine &why) {
    return llvm::createStringError(why.str());
  };
  llvm::StringRef parent = llvm::sys::path::parent_path(path);
  if (std::error_code error = llvm::sys::fs::create_directories(parent))
    return fail("cannot create '" + parent + "': " + error.message());
  // A temporary file next to the entry, renamed over it: readers see the
  // old entry or the new one, never a part. (Not llvm::sys::fs::TempFile,
  // which installs signal handlers in the process, e.g. Python.)
  llvm::SmallString<256> temp;
  int fd = -1;
  std::error_code error;
  for (unsigned attempt = 0; attempt < 16; ++attempt) {
    temp = llvm::formatv("{0}.tmp-{1}-{2:x}", path,
                         llvm::sys::Process::getProcessId(),
                         llvm::sys::Process::GetRandomNumber())
               .str();
    error =
        llvm::sys::fs::openFileForWrite(temp, fd, llvm::sys::fs::CD_CreateNew);
    if (error != llvm::errc::file_exists)
      break;
  }
  if (error)
    return fail("cannot create a temporary file in '" + parent +
                "': " + error.message());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << text;
    os.close();
    if (os.has_error()) {
      error = os.error();
      os.clear_error();
    }
  }
  if (!error)
    error = llvm::sys::fs::rename(temp, path);
  if (error) {
    llvm::sys::fs::remove(temp);
    return fail(error.message());
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Compiling through the cache
//===----------------------------------------------------------------------===//

llvm::Expected<CompiledModule> mlir::ism::runner::compileModuleCached(
    ModuleOp module, const PTXOptions &options, CoscheduleMode mode, bool trace,
    const CompileCache *cache, bool *hit, std::vector<std::string> *warnings,
    std::string *key) {
  if (hit)
    *hit = false;
  if (key)
    key->clear();
  auto warn = [&](std::string warning) {
    if (warnings)
      warnings->push_back(std::move(warning));
  };
  if (!cache)
    return compileModule(module, options, mode, trace);
  if (const std::string &problem = getCompilerIdentity().problem;
      !problem.empty()) {
    warn("compiling without the compile cache: " + problem);
    return compileModule(module, options, mode, trace);
  }
  // Requests compileModule refuses are refused before hashing the module.
  if (llvm::Error error = checkCompileRequest(module, mode, trace))
    return std::move(error);

  std::string entryKey = CompileCache::computeKey(module, options, mode, trace);
  if (key)
    *key = entryKey;
  std::string warning;
  if (std::optional<CompiledModule> cached =
          cache->lookup(entryKey, &warning)) {
    // What compileModule would have checked: an entry that fails is as
    // corrupt as one that does not parse.
    llvm::Error error = checkCompiledModule(module, *cached, mode, trace);
    if (!error) {
      if (hit)
        *hit = true;
      return std::move(*cached);
    }
    warning = "ignoring corrupt cache entry '" + cache->getEntryPath(entryKey) +
              "': " + llvm::toString(std::move(error));
  }
  if (!warning.empty())
    warn(std::move(warning));

  llvm::Expected<CompiledModule> compiled =
      compileModule(module, options, mode, trace);
  if (!compiled)
    return compiled.takeError();
  if (llvm::Error error = cache->store(entryKey, *compiled))
    warn(llvm::toString(std::move(error)));
  return compiled;
}
