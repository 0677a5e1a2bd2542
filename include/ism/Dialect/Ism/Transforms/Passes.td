//===- Passes.td - ism dialect passes ----------------------*- tablegen -*-===//

#ifndef ISM_DIALECT_ISM_TRANSFORMS_PASSES_TD
#define ISM_DIALECT_ISM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def IsmCombine : Pass<"ism-combine"> {
  let summary = "Fold tile-level idioms into richer ism ops";
  let description = [{
    Rewrites common tile-program idioms into the single ism op that says the
    same thing, so that later passes see it:

    - `arith.addf(ism.dot(a, b, zeros), c)` (or `arith.addi` for integers)
      becomes `ism.dot(a, b, c)`: the addition is folded into the
      accumulator.
    - `arith.select(m, ism.load(...), splat(p))` becomes
      `ism.load(...) mask m {padding = p}` when the load has no mask of its
      own and `p` is the load's padding (zero by default): masked elements
      are then never read from memory.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

#endif // ISM_DIALECT_ISM_TRANSFORMS_PASSES_TD
