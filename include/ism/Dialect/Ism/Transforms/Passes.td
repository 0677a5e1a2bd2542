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

    A reduction whose axis lies within one warp of its source's layout
    (shuffles suffice) instead yields its totals in the `#ism.slice` of
    that layout, where the threads that reduced them already hold them:
    the elementwise math on them, the loops that carry them and the
    `ism.expand_dims` + `ism.broadcast` that bring them back to the source's
    shape follow (a conversion back only where a user cannot), so such a
    reduction needs no shared memory or barrier. Reductions of such slices
    (slices of slices) are handled the same way.

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
      converted once, so n conversions become one;
    - a conversion of a tile made only from ranges, splats, splat constants
      and elementwise math on them (at most 16 ops; e.g. the column indices
      a mask compares): those ops are made again in the target layout, next
      to the originals, since every thread can compute its own elements.
      Tiles made twice that way are merged (common subexpressions).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def IsmExpandIm2col : Pass<"ism-expand-im2col", "::mlir::ModuleOp"> {
  let summary = "Turn the ism.im2col ops wgmma does not read into gathers";
  let description = [{
    Runs before layouts are assigned. An `ism.im2col` that is the A
    operand of a tensor-core K loop on `sm_90a` (`matchDotLoop`) stays: the
    K loop's producer reads it with TMA's im2col mode (or, where no tensor
    map describes the input, element by element). Every other one becomes
    its definition in tile ops: the output pixels' and channels' index
    tiles (`ism.range`, `ism.expand_dims`, `ism.broadcast`), the input
    coordinates computed from them, and an `ism.gather` masked to the
    pixels that exist (coordinates in the padding read zero).
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "The target chip (sm_80, sm_90a, ...): im2col feeds wgmma on "
           "sm_90a only">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def IsmAccelerateDot : Pass<"ism-accelerate-dot", "::mlir::ModuleOp"> {
  let summary = "Put ism.dot K loops on tensor cores: choose the instruction and the layouts";
  let description = [{
    Finds the matrix-product loops of each kernel: an `scf.for` whose
    loop-carried accumulator is updated by an `ism.dot` of two tiles that
    `ism.load` reads in the same iteration. For each, it picks the
    tensor-core instruction from the target (`chip`) and the element types,
    and rewrites the tiles' layouts to match it:

    - the accumulator (its initial value, the loop-carried value, the dot's
      result and the loop's result) gets the `#ism.mma` layout of the
      instruction, and so does the epilogue: elementwise math on the loop's
      result, and the constants, loads and broadcasts feeding it, run in the
      accumulator's layout, and a store writes it directly. Other uses
      convert to their blocked layout.
    - the A and B tiles get the `#ism.shared` layout (128-byte swizzle): the
      loads fill shared memory that the instruction reads.

    On `sm_90a` the instruction is Hopper's warpgroup `wgmma`
    (`#ism.mma` version 3; f16 or bf16 inputs, f32 accumulator, A M x K and
    B K x N row-major in memory, 128-byte rows of the A tile, B tile width
    a multiple of 64, num_warps a multiple of 4 and M a multiple of 64).
    On `sm_80` and newer chips (and on `sm_90a` for loops wgmma cannot
    take) it is Ampere's `mma.sync` m16n8k16 (`#ism.mma` version 2; f16 or
    bf16 inputs, f32 accumulator, BLOCK_K a multiple of 16, BLOCK_M and
    BLOCK_N multiples of 16, a loop that carries only the accumulator and
    whose body holds only the loads, the dot and scalar arithmetic). Its
    warps tile the block with the squarest pieces that divide it.
    Either operand may be `ism.trans` of a loaded tile (A loaded as
    [K, M], B as [N, K]); wgmma reads such a tile from the same shared
    memory the other way (A MN-major, B K-major), mma.sync takes the loop
    as a product of its own.

    Swap-AB (sm_90a): a loop `C = A B` becomes the transpose of
    `C^T = B^T A^T` (its dot `trans(B-tile) x trans(A-tile)`, the loop
    carrying C^T and marked `ism.swap_ab`, the epilogue reading the
    transpose of its result), so that a small BLOCK_M is the instruction's
    N. The kernel's `swap_ab` attribute chooses: 1 always, 0 never, and
    without it whenever only the swapped product fits wgmma (BLOCK_M below
    64).
    Loops that do not qualify keep the portable SIMT dot. A configuration
    that qualifies for the tensor cores but cannot fit (the accumulator
    needs more registers than a thread can have: 192 for wgmma, 128 for
    mma.sync) is an error that says what to reduce.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "Target GPU (sm_90a selects wgmma, sm_80 and newer mma.sync)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def IsmPipeline : Pass<"ism-pipeline", "::mlir::ModuleOp"> {
  let summary = "Schedule tensor-core K loops as a multi-stage, warp-specialized pipeline";
  let description = [{
    For each K loop that `ism-accelerate-dot` put on wgmma, chooses the
    pipeline the lowering builds and records it on the loop
    (`ism.pipeline = {num_stages}`) and the kernel (`ism.persistent =
    {group_size, cluster_m, cluster_n, consumer_groups}`, and `cluster_k`
    when it is 2):

    - `num_stages` shared-memory buffers for the A and B tiles, filled by
      TMA (`cp.async.bulk.tensor`) and handed over on mbarriers, so the loads
      of the next stages overlap the tensor-core work of this one;
    - a producer warpgroup that only issues the loads (`setmaxnreg` gives its
      registers to the consumers) and `num_warps` consumer warps that issue
      `wgmma` and run the epilogue;
    - a persistent grid: one CTA per SM loops over the programs in grouped
      order (`group_size` programs along x share their tiles of B in L2),
      and the producer runs ahead into the next program's loads while the
      consumers store the last one;
    - optionally a thread-block cluster of two CTAs (`cluster_m = 2`: two
      programs along x, which share their B tile; `cluster_n = 2`: two along
      y, which share A): each CTA's producer loads half of the shared tile
      and TMA multicasts it into both CTAs' shared memory, so the pair reads
      that operand from L2 once;
    - optionally a cluster of two CTAs along K (`cluster_k = 2`, split-K
      without a workspace, for grids too small to fill the SMs): both CTAs
      compute the same program, the first over the first half of its K
      steps and the second over the rest; the second then writes its
      accumulator into the first's shared memory (`st.async` to
      distributed shared memory, completing on an mbarrier), and the
      first adds it to its own and runs the epilogue alone. The K loop's
      accumulator must start at zero; not with `cluster_m`/`cluster_n` or
      two consumer groups;
    - optionally two consumer groups (`consumer_groups = 2`, CUTLASS's
      ping-pong): the CTA holds two copies of the `num_warps` consumer warps,
      each computing every other program of the CTA, so one group's
      epilogue runs while the other issues its wgmma. The two take the ring's
      stages in turn; each synchronises on its own named barrier and has its
      own shared-memory scratch.
    - optionally a TMA-store epilogue (`tma_store = 1`): the store of the
      accumulator tile (16-bit elements, BLOCK_N a multiple of 64, into a
      kernel argument) goes through two 16 x 64 staging boxes a consumer
      warp in shared memory, each stored by TMA while the warp fills the
      other; partial tiles are clipped by TMA, and a memref TMA cannot
      describe is stored directly.

    A K loop on mma.sync (`#ism.mma` version 2) gets `ism.pipeline` only:
    all the kernel's warps copy the tiles `num_stages - 1` iterations ahead
    with `cp.async` into a ring of shared-memory stages and compute on the
    oldest; the kernel keeps its grid. Such a loop needs at least 2 stages,
    and a kernel may have several.

    `num_stages`, `group_size`, `cluster_m`, `cluster_n`, `cluster_k`,
    `consumer_groups` and `tma_store` come from the kernel's attributes of the same names,
    else from the pass options (a cluster is 1x1, 2x1 or 1x2, consumer
    groups 1 or 2; mma.sync loops ignore both); a `num_stages` of 0 picks the
    most stages (up to 4) whose buffers fit in shared memory (for mma.sync
    loops, in the 163 KiB of an A100 CTA where two stages fit there). A
    configuration whose buffers do not fit in the 227 KiB of shared memory
    a Hopper CTA can have is an error that names the size and what to
    reduce.
  }];
  let options = [
    Option<"numStages", "num-stages", "unsigned", /*default=*/"0",
           "Pipeline stages (0: as many as fit, up to 4)">,
    Option<"groupSize", "group-size", "unsigned", /*default=*/"8",
           "Programs along x per group of the persistent tile order">,
    Option<"clusterM", "cluster-m", "unsigned", /*default=*/"1",
           "CTAs per cluster along x (2: pairs share B by TMA multicast)">,
    Option<"clusterN", "cluster-n", "unsigned", /*default=*/"1",
           "CTAs per cluster along y (2: pairs share A by TMA multicast)">,
    Option<"clusterK", "cluster-k", "unsigned", /*default=*/"1",
           "CTAs per cluster along K (2: the pair splits each program's K "
           "loop and adds the accumulators in distributed shared memory)">,
    Option<"consumerGroups", "consumer-groups", "unsigned", /*default=*/"1",
           "Consumer warp groups of a wgmma kernel (2: ping-pong, each "
           "computes every other program)">,
    Option<"tmaStore", "tma-store", "unsigned", /*default=*/"0",
           "Store a wgmma kernel's accumulator tile through shared memory "
           "with TMA (1) or directly from registers (0)">,
  ];
}

def IsmPipelineGathers : Pass<"ism-pipeline-gathers", "::mlir::ModuleOp"> {
  let summary = "Issue the gathers of SIMT loops ahead through cp.async rings";
  let description = [{
    In an `scf.for` of a kernel whose body gathers (`ism.gather`) at
    coordinates it loads (CSR SpMM: the column indices of a chunk of
    nonzeros, then the rows of B they name), each iteration waits for two
    round trips to memory, one after the other, and has one gather in
    flight. This pass software-pipelines such loops (MLIR's
    `scf::pipelineForLoop`, the epilogue predicated, so loops of any trip
    count, zero included, stay one loop). With S = the kernel's
    `gather_stages` (2 to 8; 1, the default, leaves the kernel alone: see
    below), each gather
    becomes an `ism.async_gather` issued S - 1 iterations ahead into a ring
    of S slots in shared memory and an `ism.async_gather_wait` where the
    gather was, and the loop's stages are:

    - stage 0: the `ism.load`s the gathers' coordinates depend on (and what
      computes their addresses), S iterations ahead;
    - stage 1: the rest of the coordinates and the `ism.async_gather`s,
      S - 1 iterations ahead (in the last ones, predicated off);
    - stage S - 1: the other `ism.load`s whose addresses depend only on the
      induction variable (one iteration ahead, in registers);
    - stage S: everything else, including the waits.

    So S gathers and their coordinate loads are in flight while an
    iteration computes, without holding registers. A loop qualifies when
    its body (nested regions included) writes no memory, every gather with
    zero padding directly in its body has coordinates computed from the
    induction variable, loop-invariant values and loads only (not from the
    loop's other iteration arguments), and the rings of the loop's gathers
    take at most 48 KiB. Other loops are left as they are.

    It is off by default because it is a trade: the ring takes shared
    memory (fewer CTAs a SM, less L1) and each element costs a shared-memory
    store and load more. It pays where a loop's gathers wait on latency
    with few warps in flight, not where they are bound by throughput: the
    CSR SpMM example, which moves 8.4 TB/s through the L2 alone, is 12%
    slower with it on the H200 (docs/coschedule.md).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def IsmPipelineLoads : Pass<"ism-pipeline-loads", "::mlir::ModuleOp"> {
  let summary = "Issue the tile loads of SIMT loops ahead through cp.async rings";
  let description = [{
    A loop that streams a row in chunks (an online log-sum-exp, a norm over
    a row wider than one tile, a GEMV) waits for each iteration's loads
    before it computes, so each program has one chunk in flight. This pass
    software-pipelines such `scf.for` loops (MLIR's `scf::pipelineForLoop`,
    the epilogue not peeled, so loops of any trip count, zero included,
    stay one loop): with S = the kernel's `load_stages` (or the pass's
    default), each unmasked `ism.load` whose address depends only on the
    induction variable and values defined outside the loop becomes an
    `ism.async_copy` (cp.async into slot j % S of a ring of S slots in the
    kernel's shared memory, `ring_id`) issued S - 1 iterations ahead, with
    the ops computing its address, and an `ism.async_load` where the load
    was (wait until the copy landed, leaving the later ones in flight, then
    read the thread's own chunks back). So S - 1 chunks a program are in
    flight while an iteration computes, without holding registers. A tile
    the copy cannot take whole (a row's partial last chunk, rows not
    16-byte aligned) is read by the `ism.async_load` as `ism.load` reads
    it. The copies of the iterations past the end still run and commit
    their group (so each wait's count holds); in a loop over a row their
    tiles lie outside the memref and nothing is copied.

    A loop qualifies when it is innermost, holds no `ism.dot` (tensor-core
    loops have their own pipelines), gather or atomic, carries no value
    that one of the moved ops makes, and every `ism.store` in it writes at
    the same offsets as each moved load reads, with a tile no longer than
    the loop's step along the dimensions the induction variable indexes
    (so an iteration's store never overlaps a later iteration's load of
    the same buffer, as in a softmax or norm that writes the chunk it
    read). Different memref arguments are taken not to overlap in part (the
    same buffer passed twice, for an in-place kernel, is fine).

    S = 1 leaves the kernel alone. Without `load_stages` S is the pass's
    `default-stages`, 1: measured on the H200 the rings pay where few
    programs stream long rows (one row of 65536: 1.6-2.7x) and cost where
    the grid fills the GPU with short loops, their shared memory taking
    CTAs from the SMs (layernorm over 4096-wide rows: 0.61-0.75x), and a
    compiled kernel knows neither its grid nor its trip counts: `ism-run
    --tune` and `ism.autotune` time `load_stages` per shape. A kernel with
    an `ism.dot` keeps its shared memory for its products' pipelines
    unless `load_stages` is set (a split-K GEMM's reduction loop would take
    the rings its stages need). Rings over 96 KiB are refused with a
    warning.
  }];
  let options = [
    Option<"defaultStages", "default-stages", "unsigned", /*default=*/"1",
           "Stages for kernels without load_stages (1: loads not issued ahead)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def IsmCoschedule : Pass<"ism-coschedule", "::mlir::ModuleOp"> {
  let summary = "Fuse the launches of each ism.coschedule into one kernel";
  let description = [{
    Turns every `ism.coschedule` into one kernel and one launch. The fused
    kernel's body is an `ism.warp_specialize` with one partition per launch
    (the launched kernel's program); its parameters are the launches'
    arguments in order, then each launch's grid (three `index` values).
    The kernels must already have their layouts and pipelines
    (`ism-assign-layouts`, `ism-accelerate-dot`, `ism-pipeline`).

    `warp_specialized`: every CTA holds the warps of every partition, each
    looping over its own grid. The pass decides each partition's resources
    and records them in its `#ism.partition`:
    - warps: the kernel's `num_warps`, plus a producer warpgroup for a
      warp-specialized wgmma kernel; wgmma kernels come first, then
      partitions with tensor-core products outside K loops (attention:
      wgmma products start on a warpgroup), and next to a wgmma kernel
      every partition is whole warpgroups;
    - named barriers: three for a wgmma partition (all, consumers,
      producer), one for any other, numbered from 1 (at most 15);
    - shared memory: each partition's slice after the previous one; a
      wgmma partition's ring, and the ring a partition's products copy
      their B operands into ahead (`operand_stages`, from the kernel's
      `num_stages`, else 3), get fewer stages (down to 2) when the slices
      do not fit the 227 KiB of a CTA (then fewer CTAs per SM, then the
      products load their operands in the loop);
    - registers (when a wgmma partition is present): `setmaxnreg` per
      warpgroup, 40 for a producer, an estimate from the tile sizes for
      other partitions, and the rest of the CTA's registers for the wgmma
      consumers (at most 232); without a wgmma kernel, when every
      partition is whole warpgroups, the others keep their estimate,
      partitions with tensor-core products get the rest up to theirs
      (carried tiles and the products they compute), and the others
      share what is left;
    - work: each non-wgmma partition takes its programs from a counter in
      global memory (atomically), a wgmma partition strides over its
      tiles statically, in its grouped order;
    - CTAs per SM: 1 with a wgmma partition, else as many as threads and
      shared memory allow.

    When no partition uses the tensor cores (neither a wgmma kernel nor
    tensor-core products), the partitions compete for the same memory
    system and sharing an SM gains nothing: the pass keeps the launches
    separate, one after the other, and says so in a remark.

    `block_interleaved`: one grid whose first CTAs run the first launch's
    programs, the next ones the second's, and so on.

    `ordered`: the launches may depend on each other (in the region's
    order). One persistent kernel whose CTAs take the programs of every
    launch in order from a ticket counter; each launch waits for the
    earlier launches that write a buffer it reads or writes or read one it
    writes (the transitive reduction), with an `ism.task_wait` placed after
    the loads of buffers no earlier launch writes (and the ops computing
    their addresses), so that those are issued before the wait. Partitions
    start at warp 0 and share barrier 1; the done counters follow the
    ticket (work counters 1 to n), then the error record of a wait that
    timed out (`timeout_ms`, default 1000, in the fused kernel's
    attribute). Warp-specialized wgmma kernels and tensor-core products
    are errors. docs/coschedule.md, "Ordered regions".

    Attributes on `ism.coschedule` override the choices: `stages` (wgmma
    ring depth, and the products' operand ring depth; given, only the
    rings must fit here and the lowering checks the real sizes), `registers` (one `setmaxnreg` value per warpgroup, in
    partition order), `ctas_per_sm`, `work_counters = false` (static
    striding for every partition), `fallback = false` (keep
    `warp_specialized` without a wgmma partition) and `join = false`.

    By default a wgmma partition's consumer warpgroups, once their tiles
    are done, each run one more copy of a counter-driven one-warpgroup
    launch (`#ism.partition` `after`), in slices of the GEMM's ring, when
    its registers and slices fit there and named barriers are left. A pair that cannot share
    an SM (threads, named barriers, shared memory, registers) is an error
    that names the resource and the numbers. With `verbose` the pass
    remarks on each decision in one line.
  }];
  let options = [
    Option<"verbose", "verbose", "bool", /*default=*/"false",
           "Emit one remark per fused kernel with the resource split">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def IsmDependentLaunch : Pass<"ism-dependent-launch", "::mlir::ModuleOp"> {
  let summary = "Let each GPU kernel's launch overlap the end of the kernel before it";
  let description = [{
    On sm_90 and newer, every GPU kernel (`gpu.func` with `gpu.kernel`)
    starts with `griddepcontrol.wait`, which waits until the grids before
    it in the stream have finished and their memory is visible, and then
    `griddepcontrol.launch_dependents`, which lets the kernel after it be
    scheduled once every CTA of this one has started. The runtime launches
    a kernel whose PTX waits with programmatic stream serialization
    (`cuLaunchKernelEx`), so its CTAs are placed on the SMs while the
    previous kernel's last CTAs finish, and start at once when it is done:
    the launch gap between the kernels of a host function (split-K's sum,
    decode attention's combination) disappears. Both instructions do
    nothing for a kernel launched without that attribute. Kernels for
    older chips are left as they are, and so is a kernel that already
    waits.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "Target GPU (sm_90 and newer get the instructions)">,
  ];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect"];
}

def IsmExternDynamicShared : Pass<"ism-extern-dynamic-shared"> {
  let summary = "Declare dynamic shared memory as an extern array";
  let description = [{
    `convert-gpu-to-nvvm` lowers `gpu.dynamic_shared_memory` to an
    `internal` zero-length global in the shared address space
    (`llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3} :
    !llvm.array<0 x i8>`). The NVPTX backend demotes an internal shared
    global used by one kernel to a one-byte variable of that kernel
    (`.shared .align 16 .b8 __dynamic_shmem__0;`), so every access past its
    first byte is out of its bounds and ptxas says so ("Potential out of
    bound access"); the code works only because the dynamic region happens
    to start at that variable.

    This pass gives each such global external linkage, which NVPTX prints
    the way CUDA and Triton declare dynamic shared memory:
    `.extern .shared .align 16 .b8 __dynamic_shmem__0[];`. Globals of any
    other address space, size or with an initializer are left alone.
    Run it after `convert-gpu-to-nvvm`, on the `gpu.module`.

    ```mlir
    // before
    llvm.mlir.global internal @__dynamic_shmem__0()
        {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
    // after
    llvm.mlir.global external @__dynamic_shmem__0()
        {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
    ```
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // ISM_DIALECT_ISM_TRANSFORMS_PASSES_TD
