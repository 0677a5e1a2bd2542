//===- Passes.td - ism conversion passes -------------------*- tablegen -*-===//

#ifndef ISM_CONVERSION_PASSES_TD
#define ISM_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertIsmToGPU : Pass<"convert-ism-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower ism kernels to GPU-dialect kernels, one thread's share of each tile at a time";
  let description = [{
    Turns every `ism.kernel` into a `gpu.func` kernel in the `gpu.module`
    `@ism_kernels`, and every host `ism.launch` into a `gpu.launch_func`.
    Tiles must carry `#ism.blocked` layouts (run `ism-assign-layouts`
    first); each becomes one vector per thread holding that thread's
    elements. Loads and stores become 16-byte vector accesses of global
    memory when the whole tile is in bounds and aligned, and predicated
    element accesses otherwise (a tile access never leaves its memref).
    Reductions combine in registers, across lanes with shuffles and across
    warps through shared memory; scans, shape changes between layouts and
    the SIMT `ism.dot` go through shared memory.

    The lowering never assumes it owns the whole CTA: thread ids are counted
    from `warp-base`, CTA-wide synchronisation is `bar.sync barrier-id,
    threads` when `barrier-id` is non-zero (a named barrier over the
    kernel's own warps), and shared memory is allocated from
    `shared-memory-base` bytes on. With the defaults a kernel owns its CTA.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"];
  let options = [
    Option<"warpBase", "warp-base", "unsigned", /*default=*/"0",
           "First warp of the CTA that runs the kernels">,
    Option<"barrierId", "barrier-id", "unsigned", /*default=*/"0",
           "Named barrier (1-15) the kernels synchronise on; 0 = bar.sync 0 "
           "over the whole CTA">,
    Option<"sharedMemoryBase", "shared-memory-base", "unsigned",
           /*default=*/"0",
           "Offset in bytes of the kernels' slice of dynamic shared memory">,
    Option<"trace", "trace", "bool", /*default=*/"false",
           "Fused kernels record each work item's SM and start and end "
           "%globaltimer into a trace buffer (a hidden parameter)">,
  ];
}

#endif // ISM_CONVERSION_PASSES_TD
