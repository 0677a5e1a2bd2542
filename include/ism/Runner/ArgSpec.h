//===- ArgSpec.h - Entry arguments from the command line --------*- C++ -*-===//
//
// `--arg` specifications ("f32:1024x64:randn", "bf16:4096:npy", "1e-5",
// "npy:x.npy") and their binding to the arguments of the host function,
// checked against its signature.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_RUNNER_ARGSPEC_H
#define ISM_RUNNER_ARGSPEC_H

#include "ism/Runner/Buffer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::ism::runner {

/// One parsed `--arg`.
struct ArgSpec {
  std::string text;
  /// Buffer arguments: dtype, shape and initialiser, or an .npy path.
  std::optional<DType> dtype;
  llvm::SmallVector<int64_t, 4> shape;
  Init init = Init::Zeros;
  /// randn*S, uniform*S: the values times S.
  double initScale = 1.0;
  std::string npyPath;
  /// The spec gave the buffer's contents (an INIT, an .npy file): a buffer
  /// the host function only writes then starts with them instead of poison
  /// (a cache of which a step writes one row).
  bool contentsGiven = false;
  /// Scalar arguments: the literal value.
  bool isScalar = false;
  std::string scalarText;
};

/// Parses one `--arg` (position `index`, counted from 0, for messages).
llvm::Expected<ArgSpec> parseArgSpec(llvm::StringRef text, unsigned index);

/// A bound argument of the entry function: a host buffer (for a memref) or
/// a scalar with its MLIR type.
struct BoundArg {
  Type type;
  bool isBuffer = false;
  HostBuffer buffer;
  /// Scalars: integers (index, iN) and floats (rounded to their type).
  int64_t intValue = 0;
  double floatValue = 0;
};

/// The dtype of the buffers a memref parameter of type `type` takes: an
/// identity-layout memref of a supported element type. The error says why
/// `type` is not one.
llvm::Expected<DType> getBufferDType(Type type);

/// Checks the shape of a buffer given for memref parameter `type`: its rank
/// and the memref's static sizes. The error says where they differ.
llvm::Error checkBufferShape(MemRefType type, llvm::ArrayRef<int64_t> shape);

/// Host memory a run needs for a buffer argument besides its own bytes.
struct BufferOverhead {
  /// A float64 copy in the reference interpreter (--check, --interpret).
  bool reference = false;
  /// A second copy of its bytes (an output read back from the GPU).
  bool copy = false;
};

/// Checks `specs` against the arguments of `entry` (count, memref rank,
/// element type, static sizes; scalar types) and materialises them; buffers
/// are filled with seed `seed + position`. Before a buffer is allocated,
/// its bytes and the `overheads` of its position (none where the array is
/// shorter), with those of the buffers before it, are checked against the
/// host memory available (getAvailableHostMemory). Errors are one line
/// naming the argument.
llvm::Expected<std::vector<BoundArg>>
bindArguments(func::FuncOp entry, llvm::ArrayRef<ArgSpec> specs, uint64_t seed,
              llvm::ArrayRef<BufferOverhead> overheads = {});

} // namespace mlir::ism::runner

#endif // ISM_RUNNER_ARGSPEC_H
