//===- IsmAttrs.td - ism layout encodings ------------------*- tablegen -*-===//
//
// Thread-level layout encodings carried by tile tensor types. A layout says
// which thread of the CTA holds which element of a tile.
//
//===----------------------------------------------------------------------===//

#ifndef ISM_DIALECT_ISM_IR_ISMATTRS_TD
#define ISM_DIALECT_ISM_IR_ISMATTRS_TD

include "ism/Dialect/Ism/IR/IsmDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/TensorEncoding.td"

/// A bracketed list of unsigned integers, one per tile dimension: `[1, 8]`.
def Ism_DimList : ArrayRefParameter<"unsigned", "one value per tile dimension"> {
  let parser = [{ ::mlir::ism::parseDimList($_parser) }];
  let printer = [{ ::mlir::ism::printDimList($_printer, $_self) }];
}

class Ism_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Ism_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

class Ism_Encoding<string name, string attrMnemonic>
    : Ism_Attr<name, attrMnemonic,
               [DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let assemblyFormat = "`<` `{` struct(params) `}` `>`";
  let genVerifyDecl = 1;
}

def Ism_BlockedEncodingAttr : Ism_Encoding<"BlockedEncoding", "blocked"> {
  let summary = "A tile distributed in contiguous blocks over threads and warps";
  let description = [{
    Each thread holds `sizePerThread[d]` contiguous elements along dimension
    `d`; a warp spans `threadsPerWarp[d]` threads and the CTA
    `warpsPerCTA[d]` warps along it. `order` lists the dimensions from the
    fastest-varying (contiguous in memory) to the slowest. A tile larger than
    one CTA's footprint wraps around, so a thread may own several blocks.

    The product of `threadsPerWarp` is 32; the product of `warpsPerCTA` is
    the number of warps of the kernel (or of its partition).

    ```mlir
    tensor<128x64xf16, #ism.blocked<{sizePerThread = [1, 8],
        threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>>
    ```
  }];
  let parameters = (ins Ism_DimList:$sizePerThread, Ism_DimList:$threadsPerWarp,
                        Ism_DimList:$warpsPerCTA, Ism_DimList:$order);
  let extraClassDeclaration = [{
    /// The number of tile dimensions this layout describes.
    unsigned getRank() const { return getOrder().size(); }
    /// The number of warps the layout spreads the tile over.
    unsigned getNumWarps() const;
  }];
}

def Ism_MmaEncodingAttr : Ism_Encoding<"MmaEncoding", "mma"> {
  let summary = "The accumulator layout of a tensor-core instruction";
  let description = [{
    The layout of `ism.dot` results computed on tensor cores. `version` 2 is
    Ampere's `mma.sync`, version 3 Hopper's warpgroup `wgmma`.
    `instrShape` is the M x N x K shape of one instruction and `warpsPerCTA`
    how the warps tile the M x N result.

    ```mlir
    #ism.mma<{version = 3, warpsPerCTA = [4, 1], instrShape = [16, 128, 16]}>
    ```
  }];
  let parameters = (ins "unsigned":$version, Ism_DimList:$warpsPerCTA,
                        Ism_DimList:$instrShape);
}

def Ism_DotOperandEncodingAttr : Ism_Encoding<"DotOperandEncoding", "dot_op"> {
  let summary = "The layout of an ism.dot operand in registers";
  let description = [{
    Operand `opIdx` (0 for A, 1 for B) of a dot whose result has layout
    `parent`; each thread holds `kWidth` consecutive elements along K.

    ```mlir
    #ism.dot_op<{opIdx = 0, parent = #ism.mma<{version = 2,
        warpsPerCTA = [2, 2], instrShape = [16, 8, 16]}>, kWidth = 2}>
    ```
  }];
  let parameters = (ins "unsigned":$opIdx, "::mlir::Attribute":$parent,
                        "unsigned":$kWidth);
}

def Ism_SliceEncodingAttr : Ism_Encoding<"SliceEncoding", "slice"> {
  let summary = "A tile laid out as one slice of a layout of one more dimension";
  let description = [{
    The elements of a tile of rank R - 1 sit where `parent`, a layout of
    rank R, puts the elements of a tile whose dimension `dim` has size 1:
    each thread holds the rows (for `dim = 1`) or the columns (`dim = 0`)
    it holds in `parent`. A row reduction of an accumulator yields its row
    totals in this layout, and `ism.expand_dims` + `ism.broadcast` give
    them back to the accumulator's layout without moving data between
    threads; so do the row and column indices a mask compares, made from
    `ism.range` in the slice along the axis they are expanded on. `parent`
    is a 2-D `#ism.mma` (`dim` 0 or 1: its tile of one row or one column
    holds copies in the lanes and warps along the other dimension), an
    `#ism.blocked` layout (the totals of a reduction that stays within a
    warp; lanes and warps along `dim` hold copies) or another `#ism.slice`.

    ```mlir
    tensor<64xf32, #ism.slice<{dim = 1, parent = #ism.mma<{version = 2,
        warpsPerCTA = [4, 1], instrShape = [16, 8, 16]}>}>>
    ```
  }];
  let parameters = (ins "unsigned":$dim, "::mlir::Attribute":$parent);
  let extraClassDeclaration = [{
    /// The layout of the tile with dimension `dim` put back (size 1): the
    /// parent, holding one element a thread along `dim` when it is blocked
    /// (its lanes and warps there hold copies).
    ::mlir::Attribute getUnslicedLayout() const;
  }];
}

def Ism_SharedEncodingAttr : Ism_Encoding<"SharedEncoding", "shared"> {
  let summary = "A tile held in swizzled shared memory";
  let description = [{
    A tile stored in shared memory with an XOR swizzle: along the contiguous
    dimension (`order[0]`) elements move in vectors of `vec`; every
    `perPhase` rows the phase advances, up to `maxPhase` phases, and a
    vector's column index is XOR-ed with the phase. `vec = 1, perPhase = 1,
    maxPhase = 1` is the unswizzled layout.

    ```mlir
    #ism.shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>
    ```
  }];
  let parameters = (ins "unsigned":$vec, "unsigned":$perPhase,
                        "unsigned":$maxPhase, Ism_DimList:$order);
}

//===----------------------------------------------------------------------===//
// Partitions of a fused kernel
//===----------------------------------------------------------------------===//

def Ism_PartitionAttr : Ism_Attr<"Partition", "partition"> {
  let summary = "The resources one partition of an ism.warp_specialize owns";
  let description = [{
    What a partition of a fused kernel (`ism.warp_specialize`) gets:

    - `warp_base`, `num_warps`: its warps of the CTA, `[warp_base,
      warp_base + num_warps)`; its thread ids count from `32 * warp_base`.
    - `registers`: one `setmaxnreg` value per warpgroup of the partition
      (empty: the partition keeps the registers the kernel starts with).
    - `barriers`: the named barriers (1-15) it synchronises on. A
      warp-specialized wgmma partition takes three (all its warps, its
      consumers, its producer), any other partition one.
    - `shared_memory`: the byte offset of its slice of dynamic shared
      memory (the lowering places it there or, if the partition before it
      ended up larger, right after that one).
    - `stages`: the shared-memory pipeline depth of a wgmma partition's K
      loop (0 for other partitions).
    - `work_counter`: the index of the global-memory counter it takes its
      work items from (-1: it strides over its grid statically).
    - `group_size`: programs along x per group of its tile order (0: plain
      row-major order of its grid).
    - `cluster_m`, `cluster_n` (default 1, not printed then): the
      thread-block cluster of a wgmma partition, 2x1 or 1x2 CTAs whose
      producers multicast the shared tile (the fused kernel is then
      launched in clusters of two).
    - `operand_stages` (default 0, not printed then): the depth of the
      cp.async ring that a partition's tensor-core products outside K loops
      (attention's S = Q K^T and O += P V) load their B operands through: 1
      loads them in the loop, 0 leaves it to the lowering (the kernel's
      `num_stages`, else 3 within its budget). `ism-coschedule` sets it so
      that every partition's shared memory fits.
    - `after` (default -1, not printed then): the index of an earlier
      wgmma partition whose consumer warps this partition runs on once they
      have computed their last tile (an extra copy of a memory-bound
      launch, taking items from the same counter). Its warps are one of
      that partition's consumer warpgroups, its `shared_memory` lies in that
      partition's ring (free once its consumers are done: the copy first
      waits for all of them on their named barrier), and its `setmaxnreg`
      moves from the consumers' count.

    ```mlir
    #ism.partition<{warp_base = 0, num_warps = 12, registers = [232, 232, 40],
                    barriers = [1, 2, 3], shared_memory = 0, stages = 4,
                    work_counter = -1, group_size = 8}>
    ```
  }];
  let parameters = (ins "unsigned":$warpBase, "unsigned":$numWarps,
                        Ism_DimList:$registers, Ism_DimList:$barriers,
                        "unsigned":$sharedMemory, "unsigned":$stages,
                        "int":$workCounter, "unsigned":$groupSize,
                        DefaultValuedParameter<"unsigned", "1">:$clusterM,
                        DefaultValuedParameter<"unsigned", "1">:$clusterN,
                        DefaultValuedParameter<"unsigned", "0">:$operandStages,
                        DefaultValuedParameter<"int", "-1">:$after);
  let assemblyFormat = "`<` `{` struct(params) `}` `>`";
  let genVerifyDecl = 1;
}

#endif // ISM_DIALECT_ISM_IR_ISMATTRS_TD
