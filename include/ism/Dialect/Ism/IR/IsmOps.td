//===- IsmOps.td - ism operations --------------------------*- tablegen -*-===//

#ifndef ISM_DIALECT_ISM_IR_ISMOPS_TD
#define ISM_DIALECT_ISM_IR_ISMOPS_TD

include "ism/Dialect/Ism/IR/IsmDialect.td"
include "ism/Dialect/Ism/IR/IsmAttrs.td"
include "ism/Dialect/Ism/IR/IsmEnums.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Type constraints and traits
//===----------------------------------------------------------------------===//

/// Every ranked-tensor operand and result of the op is a tile: a statically
/// shaped tensor whose dimensions are powers of two.
def Ism_TileShaped : NativeOpTrait<"TileShaped"> {
  let cppNamespace = "::mlir::OpTrait::ism";
}

def Ism_Tile : RankedTensorOf<[AnyType]>;
def Ism_IntTile : RankedTensorOf<[AnySignlessInteger]>;
def Ism_MaskTile : RankedTensorOf<[I1]>;
def Ism_GlobalMemRef : MemRefOf<[AnyType]>;
def Ism_Scalar : AnyTypeOf<[AnySignlessIntegerOrIndex, AnyFloat]>;

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

def Ism_KernelOp : Ism_Op<"kernel", [
    AutomaticAllocationScope, FunctionOpInterface, IsolatedFromAbove,
    Symbol]> {
  let summary = "A tile program: the code one CTA (program instance) runs";
  let description = [{
    `ism.kernel` defines a tile program. Each program instance (one CTA)
    runs the body; `ism.program_id` tells it which one it is. Arguments are
    global memory (memrefs) and scalars (integers, index, floats); a kernel
    returns nothing and writes its results through memrefs. `num_warps`
    (default 4, a power of two up to 32) is how many warps a program has.

    `min_ctas_per_sm` (optional, CUDA's `__launch_bounds__` second
    argument, PTX `.minnctapersm`) asks ptxas to fit at least that many
    programs on one SM at once, capping each thread's registers at
    65536 / (32 * num_warps * min_ctas_per_sm) (rounded down to a multiple
    of 8). A memory-bound kernel whose occupancy is limited by registers
    can gain from it; if the cap is below what the code needs, ptxas
    spills. A kernel fused into an `ism.coschedule` takes the fused
    kernel's resource split instead.

    ```mlir
    ism.kernel @scale(%x: memref<?xf32>, %s: f32) attributes {num_warps = 4 : i32} {
      %pid = ism.program_id x : index
      %c128 = arith.constant 128 : index
      %off = arith.muli %pid, %c128 : index
      %t = ism.load %x[%off] : memref<?xf32> -> tensor<128xf32>
      %sv = ism.splat %s : f32 -> tensor<128xf32>
      %y = arith.mulf %t, %sv : tensor<128xf32>
      ism.store %y, %x[%off] : tensor<128xf32> -> memref<?xf32>
      ism.return
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs,
                       DefaultValuedAttr<I32Attr, "4">:$num_warps,
                       OptionalAttr<I32Attr>:$min_ctas_per_sm);
  let regions = (region AnyRegion:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    //===------------------------------------------------------------------===//
    // FunctionOpInterface / CallableOpInterface
    //===------------------------------------------------------------------===//
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
    /// How the body uses argument `index`: whether an op reads it and
    /// whether one writes it (an op that uses it without declaring its
    /// memory effects counts as both). `{false, false}` for a body-less
    /// kernel or an argument out of range.
    struct ArgumentAccess { bool reads = false, writes = false; };
    ArgumentAccess getArgumentAccess(unsigned index);
  }];
}

def Ism_ReturnOp : Ism_Op<"return", [Pure, HasParent<"KernelOp">, ReturnLike,
                                     Terminator]> {
  let summary = "Ends a program instance";
  let description = [{
    Terminates an `ism.kernel` body. Kernels produce no values; results go
    through memrefs.

    ```mlir
    ism.return
    ```
  }];
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Program instance queries
//===----------------------------------------------------------------------===//

class Ism_GridQueryOp<string mnemonic, string what> : Ism_Op<mnemonic, [Pure]> {
  let arguments = (ins Ism_GridAxis:$axis);
  let results = (outs AnySignlessIntegerOrIndex:$result);
  let assemblyFormat = "$axis attr-dict `:` type($result)";
  let hasVerifier = 1;
  let summary = what;
}

def Ism_ProgramIdOp : Ism_GridQueryOp<"program_id",
    "The index of this program instance along a grid axis"> {
  let description = [{
    Returns the coordinate of the running program instance (the CTA) along
    grid axis `x`, `y` or `z`, as an integer or index.

    ```mlir
    %pid = ism.program_id x : index
    ```
  }];
}

def Ism_NumProgramsOp : Ism_GridQueryOp<"num_programs",
    "The number of program instances along a grid axis"> {
  let description = [{
    Returns the size of the launch grid along axis `x`, `y` or `z`.

    ```mlir
    %n = ism.num_programs y : i32
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Tile construction and shape manipulation
//===----------------------------------------------------------------------===//

def Ism_RangeOp : Ism_Op<"range", [Pure, Ism_TileShaped]> {
  let summary = "A 1-D tile of consecutive integers";
  let description = [{
    `ism.range start to end` is the tile `[start, start + 1, ..., end - 1]`;
    its size `end - start` must be the tile's (power-of-two) length.

    ```mlir
    %r = ism.range 0 to 128 : tensor<128xi32>
    ```
  }];
  let arguments = (ins I32Attr:$start, I32Attr:$end);
  let results = (outs Ism_IntTile:$result);
  let assemblyFormat = "$start `to` $end attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Ism_SplatOp : Ism_Op<"splat", [Pure, Ism_TileShaped,
    TypesMatchWith<"result element type is the scalar's type", "result",
                   "src", "::mlir::getElementTypeOrSelf($_self)">]> {
  let summary = "A tile whose every element is one scalar";
  let description = [{
    ```mlir
    %t = ism.splat %s : f32 -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins Ism_Scalar:$src);
  let results = (outs Ism_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasFolder = 1;
}

def Ism_BroadcastOp : Ism_Op<"broadcast", [Pure, Ism_TileShaped]> {
  let summary = "Repeats a tile along its size-1 dimensions";
  let description = [{
    The source and result have the same rank and element type; each source
    dimension equals the result's or is 1, and size-1 dimensions are
    repeated.

    ```mlir
    %b = ism.broadcast %row : tensor<1x128xf32> -> tensor<64x128xf32>
    ```
  }];
  let arguments = (ins Ism_Tile:$src);
  let results = (outs Ism_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Ism_ExpandDimsOp : Ism_Op<"expand_dims", [Pure, Ism_TileShaped]> {
  let summary = "Inserts a size-1 dimension into a tile";
  let description = [{
    ```mlir
    %c = ism.expand_dims %v axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    ```
  }];
  let arguments = (ins Ism_Tile:$src, I32Attr:$axis);
  let results = (outs Ism_Tile:$result);
  let assemblyFormat =
      "$src `axis` `=` $axis attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Ism_ReshapeOp : Ism_Op<"reshape", [Pure, Ism_TileShaped]> {
  let summary = "Reinterprets a tile's elements in a new shape";
  let description = [{
    The elements, in row-major order, are kept; the number of elements and
    the element type are unchanged.

    ```mlir
    %r = ism.reshape %t : tensor<16x8xf32> -> tensor<128xf32>
    ```
  }];
  let arguments = (ins Ism_Tile:$src);
  let results = (outs Ism_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Ism_TransOp : Ism_Op<"trans", [Pure, Ism_TileShaped]> {
  let summary = "Permutes a tile's dimensions";
  let description = [{
    Result dimension `i` is source dimension `order[i]`.

    ```mlir
    %t = ism.trans %x order = [1, 0] : tensor<64x32xf16> -> tensor<32x64xf16>
    ```
  }];
  let arguments = (ins Ism_Tile:$src, DenseI32ArrayAttr:$order);
  let results = (outs Ism_Tile:$result);
  let assemblyFormat =
      "$src `order` `=` $order attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Memory access
//===----------------------------------------------------------------------===//

def Ism_LoadOp : Ism_Op<"load", [Ism_TileShaped, AttrSizedOperandSegments,
    TypesMatchWith<"mask is an i1 tile shaped like the result", "result",
                   "mask", "::mlir::ism::getMaskType($_self)",
                   "!::llvm::cast<::mlir::ism::LoadOp>(&$_op).getMask() || std::equal_to<>()">]> {
  let summary = "Reads a tile from a block of global memory";
  let description = [{
    Reads the block of the memref whose first element is at `offsets` (one
    index per memref dimension) into a tile of the same rank. Elements
    outside the memref's bounds, and elements whose `mask` bit is false,
    are not read and take the value `padding` (default zero): a tile access
    never goes out of bounds.

    ```mlir
    %t = ism.load %A[%i, %j] : memref<?x?xf16> -> tensor<128x64xf16>
    %u = ism.load %x[%off] mask %m {padding = 0xFF800000 : f32}
        : memref<?xf32> -> tensor<1024xf32>
    ```
  }];
  let arguments = (ins Arg<Ism_GlobalMemRef, "", [MemRead]>:$base,
                       Variadic<Index>:$offsets,
                       Optional<Ism_MaskTile>:$mask,
                       OptionalAttr<TypedAttrInterface>:$padding);
  let results = (outs Ism_Tile:$result);
  let assemblyFormat = [{
    $base `[` $offsets `]` (`mask` $mask^)? attr-dict `:` type($base) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def Ism_StoreOp : Ism_Op<"store", [Ism_TileShaped, AttrSizedOperandSegments,
    TypesMatchWith<"mask is an i1 tile shaped like the value", "value",
                   "mask", "::mlir::ism::getMaskType($_self)",
                   "!::llvm::cast<::mlir::ism::StoreOp>(&$_op).getMask() || std::equal_to<>()">]> {
  let summary = "Writes a tile to a block of global memory";
  let description = [{
    Writes `value` to the block of the memref whose first element is at
    `offsets`. Elements that fall outside the memref, or whose `mask` bit is
    false, are not written.

    ```mlir
    ism.store %t, %C[%i, %j] : tensor<128x128xf32> -> memref<?x?xf32>
    ```
  }];
  let arguments = (ins Ism_Tile:$value,
                       Arg<Ism_GlobalMemRef, "", [MemWrite]>:$base,
                       Variadic<Index>:$offsets,
                       Optional<Ism_MaskTile>:$mask);
  let assemblyFormat = [{
    $value `,` $base `[` $offsets `]` (`mask` $mask^)? attr-dict `:`
    type($value) `->` type($base)
  }];
  let hasVerifier = 1;
}

def Ism_GatherOp : Ism_Op<"gather", [Ism_TileShaped, AttrSizedOperandSegments,
    TypesMatchWith<"mask is an i1 tile shaped like the result", "result",
                   "mask", "::mlir::ism::getMaskType($_self)",
                   "!::llvm::cast<::mlir::ism::GatherOp>(&$_op).getMask() || std::equal_to<>()">]> {
  let summary = "Reads global memory at the coordinates held in index tiles";
  let description = [{
    Element `e` of the result is `base[indices#0[e], indices#1[e], ...]`:
    one index tile per memref dimension, each shaped like the result.
    Coordinates outside the memref, and masked-off elements, read `padding`
    (default zero) without touching memory.

    ```mlir
    %rows = ism.gather %table[%ri, %ci] : memref<?x?xf32>[tensor<16x64xi32>,
        tensor<16x64xi32>] -> tensor<16x64xf32>
    ```
  }];
  let arguments = (ins Arg<Ism_GlobalMemRef, "", [MemRead]>:$base,
                       Variadic<Ism_IntTile>:$indices,
                       Optional<Ism_MaskTile>:$mask,
                       OptionalAttr<TypedAttrInterface>:$padding);
  let results = (outs Ism_Tile:$result);
  let assemblyFormat = [{
    $base `[` $indices `]` (`mask` $mask^)? attr-dict `:` type($base)
    `[` type($indices) `]` `->` type($result)
  }];
  let hasVerifier = 1;
}

def Ism_Im2colOp : Ism_Op<"im2col", [Ism_TileShaped]> {
  let summary = "Reads a convolution's implicit-GEMM A tile from NHWC input";
  let description = [{
    The rows of an implicit GEMM's A matrix for one filter tap: `base` is
    an activation tensor in NHWC order (N x H x W x C); output pixel `m`
    (row `m` of the GEMM, pixels in N, P, Q order) of a convolution with
    filter size `filter` (R, S), `stride`, `padding` and `dilation` (each
    [along H, along W]) reads, for tap (`r`, `s`), input pixel

        n = m / (P * Q), p = (m / Q) mod P, q = m mod Q,
        h = p * stride[0] - padding[0] + r * dilation[0],
        w = q * stride[1] - padding[1] + s * dilation[1],

    with P = (H + 2 * padding[0] - dilation[0] * (R - 1) - 1) / stride[0] + 1
    and Q likewise from W. Element (i, j) of the result is
    `base[n, h, w, c0 + j]` for output pixel `m0 + i`, or zero where that
    pixel is past the last (m >= N * P * Q), falls in the padding (h or w
    outside the input) or the channel is past C. A K loop over the taps
    and channel blocks of C multiplies such tiles with the filter's
    (KRSC, K x R*S*C) tiles: a convolution as a GEMM without materialising
    im2col. On sm_90a the K loop's wgmma producer reads it with TMA's
    im2col mode; elsewhere it is an `ism.gather`.

    ```mlir
    %a = ism.im2col %x[%m0, %c0] tap [%r, %s] {filter = array<i64: 3, 3>,
        stride = array<i64: 1, 1>, padding = array<i64: 1, 1>,
        dilation = array<i64: 1, 1>} : memref<?x?x?x?xbf16>
        -> tensor<128x64xbf16>
    ```
  }];
  let arguments = (ins Arg<Ism_GlobalMemRef, "", [MemRead]>:$base,
                       Index:$pixel, Index:$channel, Index:$r, Index:$s,
                       DenseI64ArrayAttr:$filter, DenseI64ArrayAttr:$stride,
                       DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation);
  let results = (outs Ism_Tile:$result);
  let assemblyFormat = [{
    $base `[` $pixel `,` $channel `]` `tap` `[` $r `,` $s `]` attr-dict `:`
    type($base) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Ism_ScatterOp : Ism_Op<"scatter", [Ism_TileShaped, AttrSizedOperandSegments,
    TypesMatchWith<"mask is an i1 tile shaped like the value", "value",
                   "mask", "::mlir::ism::getMaskType($_self)",
                   "!::llvm::cast<::mlir::ism::ScatterOp>(&$_op).getMask() || std::equal_to<>()">]> {
  let summary = "Writes a tile to the coordinates held in index tiles";
  let description = [{
    Writes element `e` of `value` to `base[indices#0[e], ...]`. Coordinates
    outside the memref, and masked-off elements, are skipped. When two
    elements name one location, which write lands is unspecified.

    ```mlir
    ism.scatter %v, %out[%idx] : tensor<128xf32> -> memref<?xf32>[tensor<128xi32>]
    ```
  }];
  let arguments = (ins Ism_Tile:$value,
                       Arg<Ism_GlobalMemRef, "", [MemWrite]>:$base,
                       Variadic<Ism_IntTile>:$indices,
                       Optional<Ism_MaskTile>:$mask);
  let assemblyFormat = [{
    $value `,` $base `[` $indices `]` (`mask` $mask^)? attr-dict `:`
    type($value) `->` type($base) `[` type($indices) `]`
  }];
  let hasVerifier = 1;
}

def Ism_AtomicRMWOp : Ism_Op<"atomic_rmw", [Ism_TileShaped,
    AttrSizedOperandSegments, AllTypesMatch<["value", "result"]>,
    TypesMatchWith<"mask is an i1 tile shaped like the value", "value",
                   "mask", "::mlir::ism::getMaskType($_self)",
                   "!::llvm::cast<::mlir::ism::AtomicRMWOp>(&$_op).getMask() || std::equal_to<>()">]> {
  let summary = "Atomically updates global memory at index-tile coordinates";
  let description = [{
    For each element `e`, atomically applies `kind` to
    `base[indices#0[e], ...]` and `value[e]`, and returns the value the
    location held before; every thread holding a copy of `e` gets that
    value. Out-of-bounds and masked-off elements do nothing and return
    zero. `add`, `max`, `min` and `xchg` take integers or floats; `umax`,
    `umin`, `and`, `or` and `xor` take integers.

    `sem` orders the updates with the program's other memory accesses, at
    GPU scope (the other programs of the launch):
    - `relaxed` (the default): no order; the updates are atomic only.
    - `release`: every access the program (any of its threads) made before
      the op happens before the updates, so that another program that sees
      an update also sees those accesses.
    - `acquire`: the updates happen before every access the program makes
      after the op, so that it sees what other programs released before
      the values it read.
    - `acq_rel`: both. A ticket counter is the usual use: each program
      stores its partial result and takes a ticket; the program that gets
      the last ticket reads every partial result.

    ```mlir
    %old = ism.atomic_rmw add %hist[%bins], %ones
        : memref<?xi32>[tensor<256xi32>], tensor<256xi32>
    %ticket = ism.atomic_rmw add %count[%head], %one sem = acq_rel
        : memref<?xi32>[tensor<1xi32>], tensor<1xi32>
    ```
  }];
  let arguments = (ins Ism_AtomicKind:$kind,
                       Arg<Ism_GlobalMemRef, "", [MemRead, MemWrite]>:$base,
                       Variadic<Ism_IntTile>:$indices,
                       Ism_Tile:$value,
                       Optional<Ism_MaskTile>:$mask,
                       DefaultValuedAttr<Ism_MemorySemantics,
                           "::mlir::ism::MemorySemantics::Relaxed">:$sem);
  let results = (outs Ism_Tile:$result);
  let assemblyFormat = [{
    $kind $base `[` $indices `]` `,` $value (`mask` $mask^)?
    (`sem` `=` $sem^)? attr-dict `:`
    type($base) `[` type($indices) `]` `,` type($value)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Computation
//===----------------------------------------------------------------------===//

def Ism_DotOp : Ism_Op<"dot", [Pure, Ism_TileShaped,
    AllTypesMatch<["c", "result"]>]> {
  let summary = "Tile matrix product with accumulation: A x B + C";
  let description = [{
    Multiplies an `M x K` tile by a `K x N` tile and adds the `M x N`
    accumulator (a leading batch dimension may be present on all three).
    A and B share an element type (f16, bf16, f32, f64, i8, f8E4M3FN or
    f8E5M2), except that f8E4M3FN and f8E5M2 mix (as wgmma multiplies
    them); the accumulator is f32 (f16 also for f16 inputs, f64 for f64,
    i32 for i8). `input_precision` says how f32 operands are multiplied:
    `ieee` (default), `tf32`, or `tf32x3` (`precision = tf32` in the
    assembly).

    ```mlir
    %d = ism.dot %a, %b, %c : tensor<128x32xf16> * tensor<32x128xf16>
        -> tensor<128x128xf32>
    ```
  }];
  let arguments = (ins Ism_Tile:$a, Ism_Tile:$b, Ism_Tile:$c,
      DefaultValuedAttr<Ism_InputPrecision, "::mlir::ism::InputPrecision::IEEE">:$input_precision);
  let results = (outs Ism_Tile:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $c (`precision` `=` $input_precision^)? attr-dict `:`
    type($a) `*` type($b) `->` type($result)
  }];
  let hasVerifier = 1;
}

class Ism_CombinerOp<string mnemonic> : Ism_Op<mnemonic, [Pure, Ism_TileShaped,
    SingleBlock]> {
  let arguments = (ins Variadic<Ism_Tile>:$srcs, I32Attr:$axis);
  let regions = (region SizedRegion<1>:$combiner);
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Ism_ReduceOp : Ism_CombinerOp<"reduce"> {
  let summary = "Reduces tiles along one axis with a combiner region";
  let description = [{
    Combines the elements of each source tile along `axis` with the
    combiner region, which takes two values per source (the accumulated and
    the next, in source order) and yields one per source. The combiner must
    be associative; the order of combination is unspecified. Each result
    has the source's shape with `axis` removed, or is a scalar when the
    source is 1-D. Several sources are reduced together (an argmax carries
    values and indices).

    ```mlir
    %m = ism.reduce %x axis = 1 : tensor<64x128xf32> -> tensor<64xf32> {
    ^bb0(%a: f32, %b: f32):
      %r = arith.maximumf %a, %b : f32
      ism.yield %r : f32
    }
    ```
  }];
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    $srcs `axis` `=` $axis attr-dict `:` type($srcs) `->` type($results)
    $combiner
  }];
}

def Ism_ScanOp : Ism_CombinerOp<"scan"> {
  let summary = "Inclusive scan of tiles along one axis";
  let description = [{
    Element `i` along `axis` of each result combines source elements
    `0..i` (or `i..n-1` with `reverse`) with the combiner region, as for
    `ism.reduce`. Results have the sources' types.

    ```mlir
    %c = ism.scan %x axis = 0 : tensor<1024xi32> -> tensor<1024xi32> {
    ^bb0(%a: i32, %b: i32):
      %s = arith.addi %a, %b : i32
      ism.yield %s : i32
    }
    ```
  }];
  let arguments = (ins Variadic<Ism_Tile>:$srcs, I32Attr:$axis, UnitAttr:$reverse);
  let results = (outs Variadic<Ism_Tile>:$results);
  let assemblyFormat = [{
    $srcs `axis` `=` $axis (`reverse` $reverse^)? attr-dict `:` type($srcs)
    `->` type($results) $combiner
  }];
}

def Ism_YieldOp : Ism_Op<"yield", [Pure, ReturnLike, Terminator,
    ParentOneOf<["ReduceOp", "ScanOp"]>]> {
  let summary = "Yields the combined values of a reduce or scan combiner";
  let description = [{
    ```mlir
    ism.yield %sum : f32
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

//===----------------------------------------------------------------------===//
// Thread level
//===----------------------------------------------------------------------===//

def Ism_ConvertLayoutOp : Ism_Op<"convert_layout", [Pure, Ism_TileShaped]> {
  let summary = "Moves a tile to another thread layout";
  let description = [{
    The values are unchanged; only the layout encoding (which thread holds
    which element) changes. Shape and element type must match.

    ```mlir
    %b = ism.convert_layout %a : tensor<128xf32, #blocked0>
        -> tensor<128xf32, #blocked1>
    ```
  }];
  let arguments = (ins Ism_Tile:$src);
  let results = (outs Ism_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ism_AsyncCopyOp : Ism_Op<"async_copy"> {
  let summary = "Starts copying a tile into a slot of a shared-memory ring";
  let description = [{
    Thread level, made by the work loops of fused kernels: each thread starts
    asynchronous 16-byte copies (`cp.async`) of its own elements of the
    `tile`-shaped block of `base` at `offsets` into slot `slot` of the ring
    at byte `ring` of dynamic shared memory (`slot_bytes` bytes a slot),
    and commits them as one group. Blocks that are not wholly in bounds and
    aligned are not copied (an empty group is committed); the matching
    `ism.async_load` then reads them from global memory itself.

    With `ring_id` (made by `ism-pipeline-loads` in a kernel of its own)
    the ring is not at byte `ring` but in the kernel's scratch shared
    memory, `slots` slots placed by the lowering; the copies and loads of
    one `ring_id` share it.

    ```mlir
    ism.async_copy %x[%row, %c0] slot %s {ring = 132160, slot_bytes = 8192,
        tile = tensor<1x4096xbf16, #blocked>} : memref<?x?xbf16>
    ```
  }];
  let arguments = (ins Ism_GlobalMemRef:$base, Variadic<Index>:$offsets,
                       Index:$slot, TypeAttr:$tile, I64Attr:$ring,
                       I64Attr:$slot_bytes, OptionalAttr<I32Attr>:$ring_id,
                       OptionalAttr<I32Attr>:$slots);
  let assemblyFormat = [{
    $base `[` $offsets `]` `slot` $slot attr-dict `:` type($base)
  }];
}

def Ism_AsyncLoadOp : Ism_Op<"async_load", [
    Ism_TileShaped]> {
  let summary = "Reads a tile an ism.async_copy put into a shared-memory ring";
  let description = [{
    Waits until at most `pending` copy groups of this thread are in flight
    (`cp.async.wait_group`), then reads the thread's elements of the block
    of `base` at `offsets` from slot `slot` of the ring, as the matching
    `ism.async_copy` laid them out; a block that copy left to it (not
    wholly in bounds, or not aligned) is read from global memory with
    `padding` outside the memref, as `ism.load` does.

    ```mlir
    %t = ism.async_load %x[%row, %c0] slot %s {ring = 132160,
        slot_bytes = 8192, pending = 3 : i32}
        : memref<?x?xbf16> -> tensor<1x4096xbf16, #blocked>
    ```
  }];
  let arguments = (ins Ism_GlobalMemRef:$base, Variadic<Index>:$offsets,
                       Index:$slot, I64Attr:$ring, I64Attr:$slot_bytes,
                       I32Attr:$pending,
                       OptionalAttr<TypedAttrInterface>:$padding,
                       OptionalAttr<I32Attr>:$ring_id,
                       OptionalAttr<I32Attr>:$slots);
  let results = (outs Ism_Tile:$result);
  let assemblyFormat = [{
    $base `[` $offsets `]` `slot` $slot attr-dict `:` type($base) `->`
    type($result)
  }];
}

def Ism_AsyncGatherOp : Ism_Op<"async_gather", [AttrSizedOperandSegments]> {
  let summary = "Starts a gather into a slot of a shared-memory ring";
  let description = [{
    Thread level, made by `ism-pipeline-gathers`: when `pred` holds (always
    without it), each thread starts copying its own elements of the gather
    `base[indices...]` (as `ism.gather` reads them: coordinates outside the
    memref and masked-off elements read zero) into slot `slot` of ring
    `ring`, a buffer of `slots` slots in the kernel's shared memory that only
    this op and the `ism.async_gather_wait` ops of the same `ring` use.
    Then it commits the copies as one group (`cp.async.commit_group`), also
    when `pred` is false. Where a thread's elements are consecutive, aligned
    and in bounds the copies are `cp.async` of up to 16 bytes, which hold no
    registers while in flight; elsewhere the thread loads the elements and
    stores them into its slot. Each thread reads back only what it copied,
    so no barrier is needed.

    ```mlir
    ism.async_gather %B[%rows, %cols] slot %s if %p {ring = 0 : i32,
        slots = 2 : i32} : memref<?x?xf32>[tensor<8x512xi32, #blocked>,
        tensor<8x512xi32, #blocked>]
    ```
  }];
  let arguments = (ins Arg<Ism_GlobalMemRef, "", [MemRead]>:$base,
                       Variadic<Ism_IntTile>:$indices,
                       Optional<Ism_MaskTile>:$mask, Index:$slot,
                       Optional<I1>:$pred, I32Attr:$ring, I32Attr:$slots);
  let assemblyFormat = [{
    $base `[` $indices `]` (`mask` $mask^)? `slot` $slot (`if` $pred^)?
    attr-dict `:` type($base) `[` type($indices) `]` (`,` type($mask)^)?
  }];
  let extraClassDeclaration = [{
    /// The gathered tile's type: the index tiles' shape and layout with the
    /// memref's element type.
    ::mlir::RankedTensorType getTileType();
  }];
  let hasVerifier = 1;
}

def Ism_AsyncGatherWaitOp : Ism_Op<"async_gather_wait", [Ism_TileShaped]> {
  let summary = "Reads a tile an ism.async_gather put into a ring slot";
  let description = [{
    Waits until at most `pending` of this thread's copy groups are in flight
    (`cp.async.wait_group`), then reads the thread's elements of the tile
    from slot `slot` of ring `ring`, where the matching `ism.async_gather`
    (same ring, same result type) put them.

    ```mlir
    %t = ism.async_gather_wait ring 0 slot %s {slots = 2 : i32,
        pending = 1 : i32} : tensor<8x512xf32, #blocked>
    ```
  }];
  let arguments = (ins Index:$slot, I32Attr:$ring, I32Attr:$slots,
                       I32Attr:$pending);
  let results = (outs Ism_Tile:$result);
  let assemblyFormat = [{
    `ring` $ring `slot` $slot attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Host level
//===----------------------------------------------------------------------===//

def Ism_AssertOp : Ism_Op<"assert"> {
  let summary = "States a requirement of a host function on its arguments";
  let description = [{
    A host function states what it requires of its arguments (shapes,
    sizes) with `ism.assert`: when `condition` is false, running the host
    function (ism-run, `ism.run`, a compiled program on torch tensors, the
    reference interpreter) stops before anything launches, with the error
    `@<function>: <message>`. `{0}`, `{1}`, ... in the message are replaced
    by the values of the operands after the condition, in order.

    ```mlir
    %same = arith.cmpi eq, %k, %k2 : index
    ism.assert %same, "A is {0}x{1} and B is {2}x{3}: inner dimensions differ"
        (%m, %k, %k2, %n) : index, index, index, index
    ```

    The runner evaluates every `ism.assert` of a host function, with the
    scalar arithmetic and `memref.dim`s it needs, before the first launch;
    asserts on values the launches or `memref.alloc` produce are not
    supported.
  }];
  let arguments = (ins I1:$condition, StrAttr:$message,
                       Variadic<Ism_Scalar>:$values);
  let assemblyFormat = [{
    $condition `,` $message (`(` $values^ `)` `:` type($values))? attr-dict
  }];
  let hasVerifier = 1;
}

def Ism_LaunchOp : Ism_Op<"launch", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Runs a kernel over a grid of program instances";
  let description = [{
    Launches `kernel` with a grid of 1 to 3 dimensions (missing ones are 1)
    and the given arguments, whose types must be the kernel's.

    ```mlir
    ism.launch @vector_add grid(%n_blocks) (%x, %y, %out, %n)
        : (memref<?xf32>, memref<?xf32>, memref<?xf32>, index)
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel, Variadic<Index>:$grid,
                       Variadic<AnyType>:$args);
  let assemblyFormat = [{
    $kernel `grid` `(` $grid `)` `(` $args `)` attr-dict
    (`:` `(` type($args)^ `)`)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The kernel this op launches, or null when the symbol does not resolve.
    KernelOp getKernelOp(::mlir::SymbolTableCollection &symbolTable);
  }];
}

def Ism_CoscheduleOp : Ism_Op<"coschedule", [SingleBlock, NoTerminator,
    RecursiveMemoryEffects]> {
  let summary = "Runs several launches concurrently on the same SMs";
  let description = [{
    Asks for the enclosed `ism.launch`es to run concurrently in one fused
    launch. `warp_specialized` gives every CTA warps of each launch (each
    loops over its own grid, synchronises with named barriers and gets its
    own slice of shared memory and registers); `block_interleaved` assigns
    CTA index ranges to the launches. The region holds only launches, at
    least two.

    `ordered` runs them as one persistent kernel in which later launches
    may read what earlier ones write (a chain of dependent kernels, such as
    the operations of an LLM decode step): CTAs take programs (tasks) in
    launch order from a counter, and a task waits, before its first access
    to a buffer an earlier launch writes, until every program of that
    launch has finished. Its loads of buffers no earlier launch writes
    (weights) are issued before the wait. A wait longer than `timeout_ms`
    (default 1000) stops the kernel with an error naming the task and the
    launch it waited for. docs/coschedule.md describes it.

    ```mlir
    ism.coschedule warp_specialized {
      ism.launch @matmul grid(%gm, %gn) (%a, %b, %c) : (...)
      ism.launch @rmsnorm grid(%rows) (%x, %w, %y) : (...)
    }
    ```

    The optional attributes override the choices of `ism-coschedule`
    (docs/coschedule.md): `stages` (the wgmma ring depth), `registers` (one
    setmaxnreg value per warpgroup, in partition order), `replicas` (copies
    per launch), `ctas_per_sm`, `ring_stages` (work items in flight per
    copy, 0 or 2-8; `ordered`: the depth of the task ring, none by
    default), `work_counters` (false: static striding), `prefetch`
    (false: nothing loaded one work item ahead; with `ordered`, nothing
    issued before a task's wait), `fallback` (false: fuse a pair without
    tensor-core work too), `join` (false: the GEMM's consumer warps do not
    take the other launch's items after their tiles) and `timeout_ms`
    (`ordered`: the longest wait, 1 to 600000).
    Any other attribute must carry a dialect prefix (`mine.note`), so that a
    misspelt override is an error, not silently ignored.
  }];
  let arguments = (ins Ism_CoschedulePolicy:$policy,
                       OptionalAttr<APIntAttr>:$stages,
                       OptionalAttr<DenseI32ArrayAttr>:$registers,
                       OptionalAttr<DenseI32ArrayAttr>:$replicas,
                       OptionalAttr<APIntAttr>:$ctas_per_sm,
                       OptionalAttr<APIntAttr>:$ring_stages,
                       OptionalAttr<BoolAttr>:$work_counters,
                       OptionalAttr<BoolAttr>:$prefetch,
                       OptionalAttr<BoolAttr>:$fallback,
                       OptionalAttr<BoolAttr>:$join,
                       OptionalAttr<APIntAttr>:$timeout_ms);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$policy attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The launches of the region, in order.
    auto getLaunches() { return getBody().front().getOps<LaunchOp>(); }
  }];
}

def Ism_TaskWaitOp : Ism_Op<"task_wait"> {
  let summary = "Waits for earlier launches of an ordered fused kernel";
  let description = [{
    In a partition of an `ordered` `ism.warp_specialize` (made by
    `ism-coschedule` from an `ordered` `ism.coschedule`): the program
    waits here until every program of the partitions `launches` (earlier
    ones, by index) has finished and its writes are visible. The ops before
    it in the partition's block are those that touch no buffer an earlier
    launch writes (loads of weights, address arithmetic): they are issued
    before the wait, while the launches waited for still run.

    ```mlir
    %w = ism.load %W[%n0, %c0] : memref<?x?xbf16> -> tensor<16x2048xbf16>
    ism.task_wait [0]
    %x = ism.load %X[%c0, %c0] : memref<?x?xbf16> -> tensor<1x2048xbf16>
    ```

    The lowering spins on the launches' done counters in global memory
    (acquire), for at most the fused kernel's timeout.
  }];
  let arguments = (ins DenseI32ArrayAttr:$launches);
  let assemblyFormat = "$launches attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Partitions of a fused kernel
//===----------------------------------------------------------------------===//

def Ism_WarpSpecializeOp : Ism_Op<"warp_specialize", [
    RecursiveMemoryEffects, SingleBlock, NoTerminator]> {
  let summary = "Partitions of a kernel that run different programs";
  let description = [{
    Each region is one partition: the program of one kernel, over its own
    grid. `grids` holds three `index` sizes per partition (x, y, z);
    `ism.program_id` and `ism.num_programs` inside a region refer to that
    partition's grid. The partitions' resources (warps, registers, named
    barriers, shared memory, pipeline stages, work counter) are the
    `#ism.partition` attributes in `partitions`, one per region.

    With `warp_specialized` every CTA holds the warps of every partition,
    and each partition loops over its grid (from its work counter, or from
    `blockIdx.x` with a stride of `gridDim.x`). With `block_interleaved`
    the CTAs `[sum of the earlier partitions' programs, + this one's)` run
    one program of the partition each, on warps `[0, num_warps)`. With
    `ordered` a persistent grid takes the partitions' programs in order
    from a counter, each on warps `[0, num_warps)`, and `ism.task_wait`
    in a partition waits for earlier ones.

    `ism-coschedule` makes this op from an `ism.coschedule`;
    `convert-ism-to-gpu` lowers each region with its own thread base,
    barriers and shared-memory slice. The regions hold no terminator.

    ```mlir
    ism.warp_specialize warp_specialized grids(%gx, %gy, %c1, %rows, %c1, %c1)
        partitions [#ism.partition<{...}>, #ism.partition<{...}>] {
      // the matmul program
    }, {
      // the rmsnorm program
    }
    ```
  }];
  let arguments = (ins Ism_CoschedulePolicy:$policy, Variadic<Index>:$grids,
                       TypedArrayAttrBase<Ism_PartitionAttr,
                                          "partition resources">:$partitions);
  let regions = (region VariadicRegion<SizedRegion<1>>:$bodies);
  let assemblyFormat = [{
    $policy `grids` `(` $grids `)` `partitions` $partitions attr-dict-with-keyword
    $bodies
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The partition attribute of region `i`.
    PartitionAttr getPartition(unsigned i) {
      return ::llvm::cast<PartitionAttr>(getPartitions()[i]);
    }
    /// The grid sizes (x, y, z) of partition `i`.
    ::mlir::OperandRange getGrid(unsigned i) {
      return getGrids().slice(3 * i, 3);
    }
  }];
}

#endif // ISM_DIALECT_ISM_IR_ISMOPS_TD
