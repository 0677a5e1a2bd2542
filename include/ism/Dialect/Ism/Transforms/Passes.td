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

def IsmAssignLayouts : Pass<"ism-assign-layouts", "::mlir::ModuleOp"> {
  let summary = "Give every tile of every kernel a blocked thread layout";
  let description = [{
    Chooses a `#ism.blocked` layout for each tile shape of each `ism.kernel`
    and rewrites every tile type (op results, block arguments, loop-carried
    values, constants) to carry it. All tiles of one shape in a kernel share
    one layout, so elementwise ops never need a conversion; ops that change
    shapes (reshape, trans, broadcast, expand_dims, reduce) move data
    between layouts when they are lowered.

    The layout puts the contiguous (last) dimension first: each thread holds
    16 bytes of it (`sizePerThread`), lanes then warps spread along it and
    then along the slower dimensions, so each warp issues 16-byte accesses
    that coalesce into full 128-byte lines. The element size is the
    smallest among the loads and stores of that shape (or among its values
    when there is no memory access). Lanes and warps left over when a tile
    is smaller than one CTA's footprint replicate it.

    The source of an `ism.broadcast` (and the `ism.expand_dims` chain that
    makes it) instead gets the broadcast result's layout sliced to its
    shape: each thread then holds exactly the source elements its share of
    the result needs, lanes and warps along the broadcast dimensions
    replicate them, and the broadcast moves no data.

    Tiles that already carry an encoding are left as they are.
  }];
  let options = [
    Option<"numWarps", "num-warps", "unsigned", /*default=*/"0",
           "Warps per program for every kernel (0: each kernel's num_warps); "
           "also rewrites each kernel's num_warps">,
  ];
}

def IsmRemoveLayoutConversions : Pass<"ism-remove-layout-conversions"> {
  let summary = "Remove ism.convert_layout ops that move data for nothing";
  let description = [{
    A layout conversion that is not needed costs a trip through shared
    memory and two barriers. This pass removes them:

    - a conversion to the layout the tile already has, and a chain of
      conversions (folded to one);
    - a conversion whose result is only stored (`ism.store` writes a tile of
      any layout) or reduced (`ism.reduce` reduces a tile of any layout):
      the op takes the unconverted tile;
    - conversions of every tile operand of an elementwise op from one layout
      to another: the op runs in the source layout and its result is
      converted once, so n conversions become one.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

#endif // ISM_DIALECT_ISM_TRANSFORMS_PASSES_TD
