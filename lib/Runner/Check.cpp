//===- Check.cpp - Comparing outputs with the reference -------------------===//

#include "ism/Runner/Check.h"

#include <cmath>

using namespace mlir::ism::runner;

Tolerance mlir::ism::runner::getDefaultTolerance(DType dtype) {
  switch (dtype) {
  case DType::F64:
    return {1e-9, 1e-9};
  case DType::F32:
    return {1e-4, 1e-4};
  case DType::F16:
    return {1e-2, 1e-2};
  case DType::BF16:
    return {2e-2, 2e-2};
  // 3 and 2 mantissa bits: an ulp is up to 1/8 and 1/4 of the value (a
  // value the GPU computed in f32 and the reference in float64 may round
  // to either neighbour).
  case DType::F8E4M3:
    return {6.25e-2, 1.25e-1};
  case DType::F8E5M2:
    return {1.25e-1, 2.5e-1};
  case DType::I8:
  case DType::I32:
  case DType::I64:
    return {0, 0};
  }
  return {0, 0};
}

CheckResult mlir::ism::runner::compareOutput(const HostBuffer &got,
                                             llvm::ArrayRef<double> expected,
                                             Tolerance tolerance) {
  CheckResult result;
  result.tolerance = tolerance;
  result.numElements = got.getNumElements();
  double scale = 1e-30;
  for (double e : expected)
    if (std::isfinite(e))
      scale = std::max(scale, std::fabs(e));
  double absTolerance = tolerance.atol * scale;
  double errorNorm = 0, refNorm = 0;
  for (int64_t i = 0; i < result.numElements; ++i) {
    double g = got.get(i);
    double e = expected[i];
    // Equal values, infinities included (a -inf maximum of an empty set
    // is a correct result), have no error.
    double error = g == e ? 0.0 : std::fabs(g - e);
    bool ok = !std::isnan(g) && !std::isnan(e) &&
              (g == e || error <= absTolerance + tolerance.rtol * std::fabs(e));
    if (std::isfinite(error)) {
      result.maxAbsError = std::max(result.maxAbsError, error);
      if (e != 0)
        result.maxRelError = std::max(result.maxRelError, error / std::fabs(e));
      errorNorm += error * error;
    } else if (!ok || std::isnan(error)) {
      result.maxAbsError = INFINITY;
      result.maxRelError = INFINITY;
      errorNorm = INFINITY;
    }
    if (std::isfinite(e))
      refNorm += e * e;
    if (!ok) {
      if (result.firstMismatch < 0) {
        result.firstMismatch = i;
        result.firstGot = g;
        result.firstExpected = e;
      }
      ++result.numMismatches;
    }
  }
  errorNorm = std::sqrt(errorNorm);
  refNorm = std::sqrt(refNorm);
  result.relNormError =
      refNorm > 0 ? errorNorm / refNorm : (errorNorm > 0 ? INFINITY : 0);
  bool normOk = result.relNormError <= std::max(tolerance.rtol, 0.0) ||
                (tolerance.rtol == 0 && errorNorm == 0);
  result.passed = result.numMismatches == 0 && normOk;
  return result;
}
