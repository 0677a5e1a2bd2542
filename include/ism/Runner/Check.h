//===- Check.h - Comparing outputs with the reference -----------*- C++ -*-===//
//
// Element-wise and norm-wise comparison of a GPU output with the float64
// reference, with tolerances that depend on the output's dtype.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_RUNNER_CHECK_H
#define ISM_RUNNER_CHECK_H

#include "ism/Runner/Buffer.h"

namespace mlir::ism::runner {

/// An element passes when |got - ref| <= atol * scale + rtol * |ref|, where
/// scale is the largest finite |ref| of the output (at least 1e-30); the
/// whole output also needs ||got - ref||_2 <= rtol * ||ref||_2. NaN never
/// passes. Integers must match exactly.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

/// The default tolerance of a dtype: f64 1e-9, f32 1e-4, f16 1e-2, bf16
/// 2e-2 (atol and rtol alike), integers exact.
Tolerance getDefaultTolerance(DType dtype);

/// The outcome of comparing one output.
struct CheckResult {
  int64_t numElements = 0;
  int64_t numMismatches = 0;
  /// Row-major position of the first mismatch, -1 when none.
  int64_t firstMismatch = -1;
  double firstGot = 0;
  double firstExpected = 0;
  double maxAbsError = 0;
  double maxRelError = 0;
  double relNormError = 0;
  Tolerance tolerance;
  bool passed = false;
};

/// Compares `got` with `expected` (same number of elements).
CheckResult compareOutput(const HostBuffer &got,
                          llvm::ArrayRef<double> expected, Tolerance tolerance);

} // namespace mlir::ism::runner

#endif // ISM_RUNNER_CHECK_H
