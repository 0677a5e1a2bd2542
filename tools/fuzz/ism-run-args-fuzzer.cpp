//===- ism-run-args-fuzzer.cpp - Fuzzes ism-run's argument parsing ------===//
//
// libFuzzer target for what ism-run reads from its user besides the module:
// `--arg` specifications and `.npy` files. The input is text, then
// optionally a NUL byte and the bytes of an .npy file:
//   - the .npy bytes are written to a temporary file and read with readNpy;
//   - each text line is one `--arg` (parseArgSpec); the lines are bound
//     (bindArguments) to the parameters of a host function that takes as
//     many as there are lines, from a fixed list of types (memrefs of every
//     dtype and rank, scalars); an `npy:` or `.npy` argument reads the
//     temporary file, whatever path it names.
// Buffers of more than 2^20 elements are not bound (the run would only
// measure memset speed); shapes whose size overflows are, as ism-run must
// reject them.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "ism/Runner/ArgSpec.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <unistd.h>

using namespace mlir;
using namespace mlir::ism::runner;

/// Host functions taking 0 to 8 parameters of these types, in order.
static const char *kModule = R"mlir(
func.func @f0() { return }
func.func @f1(%a: memref<?xf32>) { return }
func.func @f2(%a: memref<?xf32>, %b: memref<?x?xbf16>) { return }
func.func @f3(%a: memref<?xf32>, %b: memref<?x?xbf16>, %c: memref<4x?xi32>) { return }
func.func @f4(%a: memref<?xf32>, %b: memref<?x?xbf16>, %c: memref<4x?xi32>,
              %d: f32) { return }
func.func @f5(%a: memref<?xf32>, %b: memref<?x?xbf16>, %c: memref<4x?xi32>,
              %d: f32, %e: index) { return }
func.func @f6(%a: memref<?xf32>, %b: memref<?x?xbf16>, %c: memref<4x?xi32>,
              %d: f32, %e: index, %f: i8) { return }
func.func @f7(%a: memref<?xf32>, %b: memref<?x?xbf16>, %c: memref<4x?xi32>,
              %d: f32, %e: index, %f: i8, %g: memref<2x3x?xf16>) { return }
func.func @f8(%a: memref<?xf32>, %b: memref<?x?xbf16>, %c: memref<4x?xi32>,
              %d: f32, %e: index, %f: i8, %g: memref<2x3x?xf16>,
              %h: memref<?xf64>) { return }
)mlir";

/// Whether the buffer `spec` asks for is small enough to bind: at most 2^20
/// elements, or a size that overflows (which must be rejected).
static bool isSmallOrOverflowing(const ArgSpec &spec) {
  uint64_t elements = 1;
  for (int64_t size : spec.shape) {
    if (size < 0)
      return true;
    if (size != 0 && elements > UINT64_MAX / uint64_t(size))
      return true;
    elements *= uint64_t(size);
  }
  return elements <= (1u << 20) || elements > (uint64_t(1) << 62);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static std::unique_ptr<MLIRContext> context = ism_fuzz::makeContext();
  static OwningOpRef<ModuleOp> module = ism_fuzz::parseModule(
      *context, reinterpret_cast<const uint8_t *>(kModule),
      std::strlen(kModule));
  static const std::string npyPath =
      "/tmp/ism-run-args-fuzzer-" + std::to_string(getpid()) + ".npy";

  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  auto [text, npy] = input.split('\0');
  if (text.size() != input.size()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(npyPath, ec);
    if (ec)
      return 0;
    os << npy;
    os.close();
    llvm::Expected<HostBuffer> buffer = readNpy(npyPath, std::nullopt);
    if (!buffer)
      llvm::consumeError(buffer.takeError());
  }

  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  if (lines.size() > 8)
    return 0;
  std::vector<ArgSpec> specs;
  for (auto [i, line] : llvm::enumerate(lines)) {
    llvm::Expected<ArgSpec> spec = parseArgSpec(line, i);
    if (!spec) {
      llvm::consumeError(spec.takeError());
      return 0;
    }
    if (!isSmallOrOverflowing(*spec))
      return 0;
    // Only the file written above is ever read.
    if (!spec->npyPath.empty())
      spec->npyPath = npyPath;
    specs.push_back(std::move(*spec));
  }
  auto entry = module->lookupSymbol<func::FuncOp>(
      "f" + std::to_string(specs.size()));
  llvm::Expected<std::vector<BoundArg>> bound =
      bindArguments(entry, specs, /*seed=*/size);
  if (!bound)
    llvm::consumeError(bound.takeError());
  return 0;
}
