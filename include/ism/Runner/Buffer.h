//===- Buffer.h - Host buffers, element types and .npy files ----*- C++ -*-===//
//
// The element types ism-run moves between the command line, the GPU and the
// reference interpreter, host buffers holding their exact bytes, the
// initialisers that fill them, and NumPy .npy reading and writing.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_RUNNER_BUFFER_H
#define ISM_RUNNER_BUFFER_H

#include "ism/Runtime/CudaDriver.h"

#include "mlir/IR/Types.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::ism::runner {

/// The element types of buffers ism-run can create.
/// F8E4M3 and F8E5M2 are MLIR's f8E4M3FN (no infinities) and f8E5M2 (IEEE
/// style), PyTorch's float8_e4m3fn and float8_e5m2.
enum class DType { F16, BF16, F32, F64, I8, I32, I64, F8E4M3, F8E5M2 };

/// "f16", "bf16", ... as written on the command line.
llvm::StringRef getDTypeName(DType dtype);
/// Parses a command-line dtype name.
std::optional<DType> parseDType(llvm::StringRef name);
/// The dtype of an MLIR element type, if ism-run supports it.
std::optional<DType> getDType(Type type);
/// Bytes per element.
unsigned getDTypeSize(DType dtype);
/// True for the floating-point dtypes.
bool isFloatDType(DType dtype);

/// Rounds a double to the nearest value of `dtype` (round to nearest even;
/// integers wrap) and returns it as a double.
double roundToDType(double value, DType dtype);

//===----------------------------------------------------------------------===//
// Host memory limits
//===----------------------------------------------------------------------===//

/// The host memory a run may still allocate, in bytes: the kernel's
/// MemAvailable (physical memory where /proc/meminfo is missing), at most
/// what the cgroup's memory.max leaves, or the ISM_MEMORY_LIMIT environment
/// variable (bytes) when it is set. Read afresh on every call.
uint64_t getAvailableHostMemory();

/// `bytes` for messages (the runtime's, which names device memory the same
/// way).
using cuda::formatBytes;

/// The number of elements of `shape`; an error when a size is negative or
/// the product does not fit in int64.
llvm::Expected<int64_t> getCheckedNumElements(llvm::ArrayRef<int64_t> shape);

/// The bytes of a dense buffer of `dtype` and `shape`; an error when the
/// shape is malformed (getCheckedNumElements) or the bytes overflow int64.
llvm::Expected<uint64_t> getBufferBytes(DType dtype,
                                        llvm::ArrayRef<int64_t> shape);

/// Checks that `bytes` more bytes of host memory are available
/// (getAvailableHostMemory), for `what` ("the buffer", "the float64 copy of
/// the reference", ...). The error is one line: "WHAT needs N bytes (X GiB),
/// more than the M bytes (Y GiB) of memory available".
llvm::Error checkHostMemory(uint64_t bytes, const llvm::Twine &what);

/// A dense, row-major host buffer holding the exact bytes of its elements.
struct HostBuffer {
  DType dtype = DType::F32;
  llvm::SmallVector<int64_t, 4> shape;
  std::vector<uint8_t> bytes;

  /// Allocates a zero-filled buffer. The caller knows that it fits (the
  /// shape of an existing array); use create() for sizes from user input.
  HostBuffer(DType dtype, llvm::ArrayRef<int64_t> shape);
  HostBuffer() = default;
  /// Allocates a zero-filled buffer after checking its shape (no negative
  /// size, no overflow) and that the host has the memory for it
  /// (checkHostMemory); the error is one line.
  static llvm::Expected<HostBuffer> create(DType dtype,
                                           llvm::ArrayRef<int64_t> shape);

  int64_t getNumElements() const;
  size_t getSizeInBytes() const { return bytes.size(); }
  /// Element `i` as a double.
  double get(int64_t i) const;
  /// Sets element `i`, rounding to the dtype.
  void set(int64_t i, double value);
  /// All elements as doubles.
  std::vector<double> toDoubles() const;
  /// Fills with the poison pattern: NaN for floats, 0xFF bytes for ints.
  void poison();
};

/// How a buffer is filled.
enum class Init { Randn, Uniform, Zeros, Ones, Arange, Poison };
/// Parses an initialiser name.
std::optional<Init> parseInit(llvm::StringRef name);
/// Fills `buffer` deterministically from `seed`: randn is N(0, 1), uniform
/// is U[-1, 1), arange counts 0, 1, 2, ... (wrapping in the dtype); randn
/// and uniform values are multiplied by `scale` (weights of a layer of
/// width n: randn*0.022 for 1 / sqrt(2048)).
void fill(HostBuffer &buffer, Init init, uint64_t seed, double scale = 1.0);

/// Reads a .npy file (little-endian, C order; f2/f4/f8/i1/i4/i8/u1).
/// When `dtype` is given the values are converted (and rounded) to it.
llvm::Expected<HostBuffer> readNpy(llvm::StringRef path,
                                   std::optional<DType> dtype = std::nullopt);
/// Writes `buffer` as .npy; bf16 is written as float32 (exactly).
llvm::Error writeNpy(llvm::StringRef path, const HostBuffer &buffer);
/// Writes doubles shaped like `shape` as a .npy of `dtype` (bf16 as f32).
llvm::Error writeNpy(llvm::StringRef path, DType dtype,
                     llvm::ArrayRef<int64_t> shape,
                     llvm::ArrayRef<double> values);

} // namespace mlir::ism::runner

#endif // ISM_RUNNER_BUFFER_H
