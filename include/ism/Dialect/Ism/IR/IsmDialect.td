//===- IsmDialect.td - ism dialect definition --------------*- tablegen -*-===//
//
// The ism dialect: block-level tile programs (one program per CTA, values are
// whole tiles) and the host-level launches that run them.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_DIALECT_ISM_IR_ISMDIALECT_TD
#define ISM_DIALECT_ISM_IR_ISMDIALECT_TD

include "mlir/IR/OpBase.td"

def Ism_Dialect : Dialect {
  let name = "ism";
  let cppNamespace = "::mlir::ism";
  let summary = "Block-level tile programs and intra-SM co-scheduling";
  let description = [{
    The `ism` dialect expresses GPU kernels in the tile programming model: an
    `ism.kernel` is the program one CTA runs, and its values are whole tiles
    (statically shaped, power-of-two ranked tensors). Global memory is passed
    as memrefs and accessed in structured, bounds-checked blocks
    (`ism.load` / `ism.store`) or through index tiles (`ism.gather` /
    `ism.scatter` / `ism.atomic_rmw`). Elementwise math is upstream `arith`
    and `math` on tensors; loops are `scf.for` with tiles as `iter_args`.

    Host functions (`func.func`) launch kernels with `ism.launch`, and ask for
    several kernels to run concurrently on the same SMs with
    `ism.coschedule`.

    At the thread level, tensors carry layout encodings (`#ism.blocked`,
    `#ism.mma`, `#ism.dot_op`, `#ism.shared`) that say how a tile is
    distributed over the threads of a CTA.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Registers the layout encoding attributes (IsmAttrs.cpp).
    void registerAttributes();

    /// `ism.zeroed` on a host function's `memref.alloc`: the temporary
    /// starts at zero and the programs leave it at zero (ticket counters;
    /// docs/runner.md).
    static constexpr ::llvm::StringLiteral kZeroedAttrName = "ism.zeroed";
  }];
}

class Ism_Op<string mnemonic, list<Trait> traits = []>
    : Op<Ism_Dialect, mnemonic, traits>;

#endif // ISM_DIALECT_ISM_IR_ISMDIALECT_TD
