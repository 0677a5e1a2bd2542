//===- Partitions.cpp - lowering ism.warp_specialize ----------------------===//
//
// A fused kernel (from ism-coschedule) holds one ism.warp_specialize whose
// regions are the programs of the co-scheduled kernels. Each becomes
//
//   scf.if (this thread is one of the partition's) { its program }
//
// with warp_specialized: the partition's warps of every CTA; with
// block_interleaved: every warp of the partition's range of CTAs. Inside,
//
//   - a warp-specialized wgmma program is split into its producer and
//     consumers by the GEMM lowering (HopperGemm.cpp), placed at the
//     partition's warps, named barriers, ring and setmaxnreg values, and
//     striding over its tiles in grouped order;
//   - any other program runs in a work loop: the partition's first thread
//     takes the next program from the partition's counter in global memory
//     (atomically, the fetch issued before the program runs so that its
//     latency is hidden) and hands it to the others through two slots at
//     the start of the partition's shared memory, on its named barrier.
//     With no counters (a null pointer) the loop strides from blockIdx.x by
//     gridDim.x. ism.program_id and ism.num_programs become the program's
//     coordinates in the partition's grid.
//
// Each partition is then lowered with its own LoweringContext (thread
// base, named barrier, shared-memory base), one after the other, each
// partition's shared memory starting where the previous one's ended.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "ism/Dialect/Ism/IR/IsmOps.h"
#include "ism/Dialect/Ism/Transforms/DotLoop.h"
#include "ism/Dialect/Ism/Transforms/WorkLoop.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

#include <memory>

using namespace mlir;
using namespace mlir::ism;

namespace {

Value cmp(OpBuilder &b, Location loc, arith::CmpIPredicate pred, Value lhs,
          Value rhs) {
  return arith::CmpIOp::create(b, loc, pred, lhs, rhs);
}

/// `count` elements of `elementType` at byte `offset` of dynamic shared
/// memory, as a 1-D memref.
Value getSharedView(OpBuilder &b, Location loc, int64_t offset, int64_t count,
                    Type elementType) {
  auto workgroup = gpu::AddressSpaceAttr::get(
      b.getContext(), gpu::GPUDialect::getWorkgroupAddressSpace());
  auto raw = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                             MemRefLayoutAttrInterface{}, workgroup);
  Value base = gpu::DynamicSharedMemoryOp::create(b, loc, raw);
  auto type = MemRefType::get({count}, elementType,
                              MemRefLayoutAttrInterface{}, workgroup);
  return memref::ViewOp::create(b, loc, type, base,
                                indexConstant(b, loc, offset), ValueRange{});
}

/// The two work slots of a partition, as memref<2xi32> in shared memory.
Value getWorkSlots(OpBuilder &b, Location loc, int64_t offset) {
  return getSharedView(b, loc, offset, 2, b.getI32Type());
}

/// Clones `loads` (with their slices) at `b`'s insertion point for program
/// `t` (null: loads that do not depend on the program) and returns the
/// loaded tiles.
SmallVector<Value> cloneLoads(OpBuilder &b, Location loc,
                              ArrayRef<PrefetchableLoad> loads, Value t,
                              ArrayRef<Value> grid) {
  IRMapping map;
  SmallVector<Value, 3> coords;
  if (t)
    coords = programCoords(b, loc, t, grid);
  llvm::SetVector<Operation *> ops;
  for (const PrefetchableLoad &p : loads)
    ops.insert(p.slice.begin(), p.slice.end());
  SmallVector<Operation *> ordered(ops.begin(), ops.end());
  llvm::sort(ordered,
             [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  cloneForProgram(b, ordered, coords, grid, map);
  SmallVector<Value> tiles;
  for (const PrefetchableLoad &p : loads)
    tiles.push_back(b.clone(*p.load, map)->getResult(0));
  return tiles;
}

/// An ism.async_copy of `load`'s tile for the program at `coords` of
/// `grid` (its address slice cloned there) into slot `slot` of the ring at
/// byte `ring`, `slotBytes` a slot.
void copyLoadAhead(OpBuilder &b, Location loc, const PrefetchableLoad &load,
                   ArrayRef<Value> coords, ArrayRef<Value> grid, Value slot,
                   int64_t ring, int64_t slotBytes) {
  IRMapping map;
  cloneForProgram(b, load.slice, coords, grid, map);
  LoadOp op = load.load;
  SmallVector<Value> offsets;
  for (Value v : op.getOffsets())
    offsets.push_back(map.lookupOrDefault(v));
  AsyncCopyOp::create(b, loc, op.getBase(), offsets, slot,
                      Type(op.getType()), uint64_t(ring),
                      uint64_t(slotBytes), /*ring_id=*/nullptr,
                      /*slots=*/nullptr);
}

/// Keeps the loop-invariant code of a persistent loop's programs inside it
/// (llvm.licm.disable on its latch): hoisted, every program's invariants
/// (memref sizes, bounds predicates, row addresses) would stay live across
/// all the loop's iterations, and a loop whose body is several kernels'
/// programs spills them (the ten-launch decode layer, 1116 bytes a thread,
/// at 80 registers).
void keepInvariantsInLoop(scf::WhileOp loop) {
  MLIRContext *ctx = loop.getContext();
  auto licm = LLVM::LoopLICMAttr::get(ctx, BoolAttr::get(ctx, true),
                                      /*versioningDisable=*/nullptr);
  auto annotation = LLVM::LoopAnnotationAttr::get(
      ctx, /*disableNonforced=*/nullptr, /*vectorize=*/nullptr,
      /*interleave=*/nullptr, /*unroll=*/nullptr, /*unrollAndJam=*/nullptr,
      licm, /*distribute=*/nullptr, /*pipeline=*/nullptr, /*peeled=*/nullptr,
      /*unswitch=*/nullptr, /*mustProgress=*/nullptr,
      /*isVectorized=*/nullptr, /*startLoc=*/nullptr, /*endLoc=*/nullptr,
      /*parallelAccesses=*/{});
  loop->setAttr("loop_annotation", annotation);
}

/// Wraps the ops of `block` (before its terminator) in the work loop of a
/// partition that is not a wgmma kernel. `counters` is the i64 address of
/// the kernel's work counters (the partition's is `counterOffset` bytes
/// in), or null when the partition strides statically from `first` by
/// `stride`; a null address at run time strides too.
///
/// The loop is software-pipelined over work items. Loads that do not
/// depend on the program id are issued once, before the loop. Loads that
/// depend only on it are issued ahead: with `ringStages` (D >= 2), each
/// thread copies its own chunks of the next D - 1 items into a ring of D
/// slots at byte `ringBase` of shared memory (cp.async), so D items are in
/// flight without holding registers; without, the next item's tiles are
/// loaded into registers while this one runs. The counter is read as many
/// items ahead as are in flight.
void buildWorkLoop(OpBuilder &b, Location loc, Block *block,
                   ArrayRef<Value> grid, Value first, Value stride,
                   Value counters, int64_t counterOffset, int64_t slotOffset,
                   const LoweringContext &context, bool prefetch,
                   unsigned ringStages, int64_t ringBase, Value traceBuffer,
                   Value traceFirstRecord, int64_t traceTag) {
  SmallVector<PrefetchableLoad> ahead, once;
  if (prefetch)
    for (PrefetchableLoad &p : getPrefetchableLoads(block))
      (p.invariant ? once : ahead).push_back(p);
  bool ring = ringStages >= 2 && !ahead.empty();
  unsigned depth = ring ? ringStages : ahead.empty() ? 1 : 2;
  SmallVector<Operation *> ops;
  for (Operation &op : block->without_terminator())
    ops.push_back(&op);
  b.setInsertionPoint(block->getTerminator());
  Value counter;
  if (counters)
    counter = arith::AddIOp::create(
        b, loc, counters,
        arith::ConstantIntOp::create(b, loc, counterOffset, 64));
  Value total = arith::MulIOp::create(
      b, loc, arith::MulIOp::create(b, loc, grid[0], grid[1]), grid[2]);
  Value zero = indexConstant(b, loc, 0), one = indexConstant(b, loc, 1);
  Value hasCounter, isFirst, slots, ptr;
  if (counter) {
    hasCounter = cmp(b, loc, arith::CmpIPredicate::ne, counters,
                     arith::ConstantIntOp::create(b, loc, 0, 64));
    isFirst = cmp(b, loc, arith::CmpIPredicate::eq, context.getThreadId(b, loc),
                  zero);
    slots = getWorkSlots(b, loc, slotOffset);
    ptr = LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), 1), counter);
  }
  // The next work item: thread 0's fetched value, through slot `slot`. A
  // slot is written again two publishes later, after every thread passed
  // the barrier behind which it read the slot.
  auto publish = [&](OpBuilder &pb, Value fetched, Value slot) {
    scf::IfOp::create(pb, loc, isFirst, [&](OpBuilder &tb, Location tl) {
      memref::StoreOp::create(tb, tl, fetched, slots, slot);
      scf::YieldOp::create(tb, tl);
    });
    context.barrier(pb, loc);
    Value v = memref::LoadOp::create(pb, loc, slots, slot);
    return Value(arith::IndexCastUIOp::create(pb, loc, pb.getIndexType(), v));
  };
  auto fetch = [&](OpBuilder &fb) {
    auto ifOp = scf::IfOp::create(
        fb, loc, arith::AndIOp::create(fb, loc, hasCounter, isFirst),
        [&](OpBuilder &tb, Location tl) {
          Value v = LLVM::AtomicRMWOp::create(tb, tl, LLVM::AtomicBinOp::add,
                                              ptr, i32Const(tb, tl, 1),
                                              LLVM::AtomicOrdering::monotonic);
          scf::YieldOp::create(tb, tl, v);
        },
        [&](OpBuilder &eb, Location el) {
          scf::YieldOp::create(eb, el, i32Const(eb, el, 0));
        });
    return ifOp.getResult(0);
  };
  // The shared-memory ring of each load issued ahead.
  SmallVector<int64_t> ringOffsets, slotBytes;
  int64_t ringEnd = ringBase;
  for (PrefetchableLoad &p : ahead) {
    slotBytes.push_back(
        getRingSlotBytes(p.load.getType(), context.getNumThreads()));
    ringOffsets.push_back(ringEnd);
    ringEnd += ringStages * slotBytes.back();
  }
  auto copyAhead = [&](OpBuilder &cb, Value t, Value slot) {
    SmallVector<Value, 3> coords = programCoords(cb, loc, t, grid);
    for (auto [j, p] : llvm::enumerate(ahead))
      copyLoadAhead(cb, loc, p, coords, grid, slot, ringOffsets[j],
                    slotBytes[j]);
  };
  auto slotOf = [&](OpBuilder &sb, Value item) {
    return Value(arith::RemUIOp::create(sb, loc, item,
                                        indexConstant(sb, loc, ringStages)));
  };

  // Loads that do not depend on the program: once, before the loop.
  for (auto [p, tile] : llvm::zip(once, cloneLoads(b, loc, once, {}, grid)))
    p.load.getResult().replaceAllUsesWith(tile);
  for (PrefetchableLoad &p : once) {
    llvm::erase(ops, p.load.getOperation());
    p.load.erase();
  }

  // The first `depth` items.
  SmallVector<Value> firstItems;
  Value t = first;
  for (unsigned j = 0; j < depth; ++j) {
    firstItems.push_back(t);
    t = arith::AddIOp::create(b, loc, t, stride);
  }
  if (counter) {
    SmallVector<Type> types(depth, b.getIndexType());
    auto choose = scf::IfOp::create(
        b, loc, hasCounter,
        [&](OpBuilder &tb, Location tl) {
          SmallVector<Value> items;
          for (unsigned j = 0; j < depth; ++j)
            items.push_back(
                publish(tb, fetch(tb), indexConstant(tb, tl, j % 2)));
          scf::YieldOp::create(tb, tl, items);
        },
        [&](OpBuilder &eb, Location el) {
          scf::YieldOp::create(eb, el, firstItems);
        });
    firstItems.assign(choose.getResults().begin(), choose.getResults().end());
  }
  SmallVector<Value> inits = firstItems;
  inits.push_back(zero);
  if (ring) {
    for (unsigned j = 0; j + 1 < depth; ++j)
      copyAhead(b, firstItems[j], indexConstant(b, loc, j));
  } else {
    llvm::append_range(inits, cloneLoads(b, loc, ahead, firstItems[0], grid));
  }
  SmallVector<Type> types;
  for (Value v : inits)
    types.push_back(v.getType());
  auto loop = scf::WhileOp::create(
      b, loc, types, inits,
      [&](OpBuilder &cb, Location cl, ValueRange args) {
        Value more = cmp(cb, cl, arith::CmpIPredicate::ult, args[0], total);
        scf::ConditionOp::create(cb, cl, more, args);
      },
      [&](OpBuilder &db, Location dl, ValueRange args) {
        scf::YieldOp::create(db, dl, args);
      });
  Block *body = loop.getAfterBody();
  Value current = body->getArgument(0), k = body->getArgument(depth);
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  OpBuilder lb(body, body->begin());
  Value start;
  if (traceBuffer)
    start = NVVM::GlobalTimerOp::create(lb, loc, lb.getI64Type());
  // Issued before the program runs, read after it.
  Value prefetched = counter ? fetch(lb) : Value();
  SmallVector<Value> nextTiles;
  if (ring) {
    Value newest = body->getArgument(depth - 1);
    Value slot = slotOf(lb, arith::AddIOp::create(
                                lb, loc, k, indexConstant(lb, loc, depth - 1)));
    copyAhead(lb, newest, slot);
  } else if (!ahead.empty()) {
    nextTiles = cloneLoads(lb, loc, ahead, body->getArgument(1), grid);
  }
  Value currentSlot = ring ? slotOf(lb, k) : Value();
  for (Operation *op : ops)
    op->moveBefore(yield);
  int64_t groups = ahead.size();
  for (auto [i, p] : llvm::enumerate(ahead)) {
    Value tile;
    if (ring) {
      OpBuilder rb(p.load);
      auto read = AsyncLoadOp::create(
          rb, p.load.getLoc(), p.load.getType(), p.load.getBase(),
          p.load.getOffsets(), currentSlot,
          rb.getI64IntegerAttr(ringOffsets[i]),
          rb.getI64IntegerAttr(slotBytes[i]),
          rb.getI32IntegerAttr((depth - 1) * groups + (groups - 1 - i)),
          p.load.getPaddingAttr(), /*ring_id=*/nullptr, /*slots=*/nullptr);
      tile = read.getResult();
    } else {
      tile = body->getArgument(depth + 1 + i);
    }
    p.load.getResult().replaceAllUsesWith(tile);
    p.load.erase();
  }
  lb.setInsertionPoint(yield);
  if (traceBuffer) {
    Value end = NVVM::GlobalTimerOp::create(lb, loc, lb.getI64Type());
    Value firstThread = cmp(lb, loc, arith::CmpIPredicate::eq,
                            context.getThreadId(lb, loc), zero);
    emitTraceRecord(lb, loc, traceBuffer,
                    arith::AddIOp::create(lb, loc, traceFirstRecord, current),
                    firstThread, start, end, traceTag, current);
  }
  Value after =
      arith::AddIOp::create(lb, loc, body->getArgument(depth - 1), stride);
  if (counter) {
    auto choose = scf::IfOp::create(
        lb, loc, hasCounter,
        [&](OpBuilder &tb, Location tl) {
          Value slot = arith::AndIOp::create(
              tb, tl,
              arith::AddIOp::create(tb, tl, k, indexConstant(tb, tl, depth)),
              one);
          scf::YieldOp::create(tb, tl, publish(tb, prefetched, slot));
        },
        [&](OpBuilder &eb, Location el) {
          scf::YieldOp::create(eb, el, after);
        });
    after = choose.getResult(0);
  }
  SmallVector<Value> yields;
  for (unsigned j = 1; j < depth; ++j)
    yields.push_back(body->getArgument(j));
  yields.push_back(after);
  yields.push_back(arith::AddIOp::create(lb, loc, k, one));
  llvm::append_range(yields, nextTiles);
  yield->setOperands(yields);
  OpBuilder qb(body, body->begin());
  replaceGridQueries(body, programCoords(qb, loc, current, grid), grid);
}

/// Appends the fused kernel's hidden parameters (i64 each): the address of
/// its counters when `withCounters`, then the trace buffer's when `trace`
/// (and marks the kernel traced).
LogicalResult addHiddenParameters(gpu::GPUFuncOp func, Location loc,
                                  bool withCounters, bool trace,
                                  Value &counters, Value &traceBuffer) {
  Type i64 = IntegerType::get(func.getContext(), 64);
  if (withCounters) {
    if (failed(func.insertArgument(func.getNumArguments(), i64,
                                   DictionaryAttr(), loc)))
      return func.emitOpError("cannot add the work counters parameter");
    counters = func.getArgument(func.getNumArguments() - 1);
  }
  if (trace) {
    if (failed(func.insertArgument(func.getNumArguments(), i64,
                                   DictionaryAttr(), loc)))
      return func.emitOpError("cannot add the trace buffer parameter");
    traceBuffer = func.getArgument(func.getNumArguments() - 1);
    func->setAttr("ism.trace", UnitAttr::get(func.getContext()));
  }
  return success();
}

/// The address (an LLVM global pointer) of 32-bit counter `index` of the
/// counters at `counters` (i64).
Value getCounter(OpBuilder &b, Location loc, Value counters, unsigned index) {
  Value address = arith::AddIOp::create(
      b, loc, counters, arith::ConstantIntOp::create(b, loc, 4 * index, 64));
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 1), address);
}

/// An ordered kernel's shared-memory header (its first `bytes` bytes), as
/// an i8 memref.
Value getHeader(OpBuilder &b, Location loc, int64_t bytes) {
  return getSharedView(b, loc, 0, bytes, b.getI8Type());
}

/// An ordered kernel's shared-memory header: the two ticket slots (bytes
/// 0-7), the count of finished tasks the first thread has not yet added to
/// its launch's done counter (8-11), then from byte kSeenFlags one byte per
/// launch, set once the CTA has seen every program of the launch finish
/// (a launch stays finished, so later waits for it are skipped).
constexpr int64_t kPendingByte = 8;
constexpr int64_t kSeenFlags = 16;
/// After the flags, the launch table: the first ticket of each launch and
/// the end of the last (i32). A task loads what it needs from it, so that
/// a kernel of many launches keeps none of them live across its task loop.
int64_t getLaunchTableOffset(unsigned numLaunches) {
  return kSeenFlags + (int64_t(numLaunches) + 15) / 16 * 16;
}
int64_t getHeaderBytes(unsigned numLaunches) {
  return getLaunchTableOffset(numLaunches) +
         (4 * (int64_t(numLaunches) + 1) + 15) / 16 * 16;
}

/// Entry `index` (an index value) of the launch table, as an index.
Value loadLaunchTable(OpBuilder &b, Location loc, unsigned numLaunches,
                      Value index) {
  Value table = getSharedView(b, loc, getLaunchTableOffset(numLaunches),
                              numLaunches + 1, b.getI32Type());
  return arith::IndexCastUIOp::create(
      b, loc, b.getIndexType(), memref::LoadOp::create(b, loc, table, index));
}

/// Which of the launches a program shared by several launches of the same
/// kernel runs for: `conds[j - 1]` holds for member j's tickets (members
/// from 1; member 0 where none does), `current` is the task's launch and
/// `launches[j]` member j's. With one member there is nothing to pick.
struct MemberPick {
  SmallVector<Value> conds;
  Value current;
  SmallVector<int64_t> launches;

  /// The member's value of index constants (`values[j]`: member j's).
  Value pick(OpBuilder &b, Location loc, ArrayRef<int64_t> values) const {
    Value v = indexConstant(b, loc, values.front());
    for (unsigned j = 1; j < values.size(); ++j)
      if (values[j] != values.front())
        v = arith::SelectOp::create(b, loc, conds[j - 1],
                                    indexConstant(b, loc, values[j]), v);
    return v;
  }
  /// The member's value of each column (`columns[c][j]`: member j's), the
  /// columns that differ between members picked by one switch on the
  /// current launch: a task reads only its own member's values (kernel
  /// parameters), where a chain of selects would read every member's
  /// (ptxas loads each from the constant bank, and for a model's many
  /// layers those loads, not the weights, bounded each task).
  SmallVector<Value> pickAll(OpBuilder &b, Location loc,
                             ArrayRef<SmallVector<Value>> columns) const {
    SmallVector<Value> picked(columns.size());
    SmallVector<unsigned> differing;
    for (auto [c, column] : llvm::enumerate(columns)) {
      if (llvm::all_equal(column))
        picked[c] = column.front();
      else
        differing.push_back(c);
    }
    if (differing.empty())
      return picked;
    SmallVector<Type> types;
    for (unsigned c : differing)
      types.push_back(columns[c].front().getType());
    auto sw = scf::IndexSwitchOp::create(b, loc, types, current,
                                         ArrayRef(launches).drop_front(),
                                         launches.size() - 1);
    auto fill = [&](Region &region, unsigned j) {
      Block *block = b.createBlock(&region);
      OpBuilder yb = OpBuilder::atBlockEnd(block);
      SmallVector<Value> values;
      for (unsigned c : differing)
        values.push_back(columns[c][j]);
      scf::YieldOp::create(yb, loc, values);
    };
    OpBuilder::InsertionGuard guard(b);
    fill(sw.getDefaultRegion(), 0);
    for (unsigned j = 1; j < launches.size(); ++j)
      fill(sw.getCaseRegions()[j - 1], j);
    for (auto [k, c] : llvm::enumerate(differing))
      picked[c] = sw.getResult(k);
    return picked;
  }
};

/// The address of 32-bit counter `index` (an index value) of `counters`.
Value getCounterAt(OpBuilder &b, Location loc, Value counters, Value index) {
  Value offset = arith::MulIOp::create(
      b, loc, arith::IndexCastUIOp::create(b, loc, b.getI64Type(), index),
      arith::ConstantIntOp::create(b, loc, 4, 64));
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 1),
      Value(arith::AddIOp::create(b, loc, counters, offset)));
}

/// Lowers the ism.task_wait ops of a program (in `block`) of an ordered
/// kernel, run for the launches `launches` (one, or several launches of
/// the same kernel: `members` picks among them). `deps[j][k]` are the
/// launches the k-th wait (in walk order) of member j's program names.
/// When the CTA has seen every launch it names
/// finish (their flags in the header), nothing is done. Otherwise its first
/// thread reads each awaited launch's done counter (relaxed, GPU scope)
/// until it holds the launch's program count, then fences (acquire), the
/// partition's barrier hands the order on to its other threads, and the
/// first thread sets the launches' flags. A wait that lasts longer than
/// `timeoutNs` (by %globaltimer), or that finds an error recorded, gives
/// up: the first records the error (the waiting launch + 1, its program,
/// the launch waited for, the count seen), and the others see it and stop
/// waiting, so a broken kernel ends instead of hanging. With no counters
/// (a null address: one CTA runs every task in order) there is nothing to
/// wait for.
void lowerTaskWaits(Block *block, ArrayRef<unsigned> launches,
                    const MemberPick &members, Value current,
                    ArrayRef<SmallVector<SmallVector<int32_t>>> deps,
                    Value program, Value counters, Value hasCounters,
                    unsigned numLaunches, int64_t timeoutNs,
                    const LoweringContext &context) {
  // A launch's programs, from the launch table.
  auto totalOf = [&](OpBuilder &b, Location loc, Value launch) {
    Value next =
        arith::AddIOp::create(b, loc, launch, indexConstant(b, loc, 1));
    return Value(arith::SubIOp::create(
        b, loc, loadLaunchTable(b, loc, numLaunches, next),
        loadLaunchTable(b, loc, numLaunches, launch)));
  };
  SmallVector<TaskWaitOp> waits;
  block->walk([&](TaskWaitOp wait) { waits.push_back(wait); });
  for (auto [k, wait] : llvm::enumerate(waits)) {
    OpBuilder ob(wait);
    Location loc = wait.getLoc();
    // The d-th launch awaited: a constant when every member awaits the
    // same one, else picked by the member.
    unsigned numDeps = wait.getLaunches().size();
    auto awaited = [&](unsigned d) {
      SmallVector<int64_t> of;
      for (unsigned j = 0; j < launches.size(); ++j)
        of.push_back(deps[j][k][d]);
      return of;
    };
    auto same = [](ArrayRef<int64_t> of) {
      return llvm::all_equal(of);
    };
    // The d-th launch awaited as a value: the current launch plus an offset
    // when that is the same for every member (a model's layers), else
    // picked.
    auto awaitedValue = [&](OpBuilder &xb, Location xl, unsigned d) {
      SmallVector<int64_t> of = awaited(d);
      SmallVector<int64_t> offsets;
      for (unsigned j = 0; j < launches.size(); ++j)
        offsets.push_back(of[j] - int64_t(launches[j]));
      if (same(offsets))
        return Value(arith::AddIOp::create(
            xb, xl, current, indexConstant(xb, xl, offsets.front())));
      return members.pick(xb, xl, of);
    };
    Value header = getHeader(ob, loc, getHeaderBytes(numLaunches));
    auto seenIndex = [&](OpBuilder &xb, unsigned d) {
      SmallVector<int64_t> of = awaited(d);
      if (same(of))
        return indexConstant(xb, loc, kSeenFlags + of.front());
      return Value(arith::AddIOp::create(xb, loc, awaitedValue(xb, loc, d),
                                         indexConstant(xb, loc, kSeenFlags)));
    };
    Value zeroByte = arith::ConstantIntOp::create(ob, loc, 0, 8);
    Value unseen = arith::ConstantIntOp::create(ob, loc, 0, 1);
    for (unsigned d = 0; d < numDeps; ++d) {
      Value flag = memref::LoadOp::create(ob, loc, header, seenIndex(ob, d));
      unseen = arith::OrIOp::create(
          ob, loc, unseen,
          cmp(ob, loc, arith::CmpIPredicate::eq, flag, zeroByte));
    }
    auto waiting = scf::IfOp::create(ob, loc, unseen, /*withElse=*/false);
    OpBuilder b(waiting.thenBlock()->getTerminator());
    Value zero = indexConstant(b, loc, 0);
    Value isFirstThread = cmp(b, loc, arith::CmpIPredicate::eq,
                              context.getThreadId(b, loc), zero);
    Value first = arith::AndIOp::create(b, loc, hasCounters, isFirstThread);
    unsigned errorWord = kOrderedDoneCounters + numLaunches;
    scf::IfOp::create(b, loc, first, [&](OpBuilder &tb, Location tl) {
      Type i32 = tb.getI32Type(), i64 = tb.getI64Type();
      Value error = getCounter(tb, tl, counters, errorWord);
      Value start = NVVM::GlobalTimerOp::create(tb, tl, i64);
      Value limit = arith::ConstantIntOp::create(tb, tl, timeoutNs, 64);
      Value noError = arith::ConstantIntOp::create(tb, tl, 0, 32);
      for (unsigned d = 0; d < numDeps; ++d) {
        SmallVector<int64_t> of = awaited(d);
        Value done, need, launchWord;
        if (same(of)) {
          unsigned launch = unsigned(of.front());
          done = getCounter(tb, tl, counters, kOrderedDoneCounters + launch);
          need = totalOf(tb, tl, indexConstant(tb, tl, launch));
          launchWord = arith::ConstantIntOp::create(tb, tl, launch, 32);
        } else {
          Value launch = awaitedValue(tb, tl, d);
          done = getCounterAt(
              tb, tl, counters,
              arith::AddIOp::create(
                  tb, tl, launch, indexConstant(tb, tl, kOrderedDoneCounters)));
          need = totalOf(tb, tl, launch);
          launchWord = arith::IndexCastUIOp::create(tb, tl, i32, launch);
        }
        need = arith::IndexCastUIOp::create(tb, tl, i32, need);
        // while (count < need && no error && not timed out) read again
        auto loop = scf::WhileOp::create(
            tb, tl, TypeRange{i32, tb.getI1Type()}, ValueRange{},
            [&](OpBuilder &cb, Location cl, ValueRange) {
              Value count = LLVM::LoadOp::create(
                  cb, cl, i32, done, /*alignment=*/4, /*isVolatile=*/false,
                  /*isNonTemporal=*/false, /*isInvariant=*/false,
                  /*isInvariantGroup=*/false, LLVM::AtomicOrdering::monotonic,
                  "device");
              Value recorded = LLVM::LoadOp::create(
                  cb, cl, i32, error, 4, false, false, false, false,
                  LLVM::AtomicOrdering::monotonic, "device");
              Value now = NVVM::GlobalTimerOp::create(cb, cl, i64);
              Value waiting =
                  cmp(cb, cl, arith::CmpIPredicate::ult, count, need);
              Value clean =
                  cmp(cb, cl, arith::CmpIPredicate::eq, recorded, noError);
              Value inTime = cmp(cb, cl, arith::CmpIPredicate::ult,
                                 arith::SubIOp::create(cb, cl, now, start),
                                 limit);
              Value again = arith::AndIOp::create(
                  cb, cl, waiting,
                  arith::AndIOp::create(cb, cl, clean, inTime));
              // (whether it gave up with an error of its own to record)
              Value timedOut = arith::AndIOp::create(
                  cb, cl, waiting,
                  arith::AndIOp::create(
                      cb, cl, clean,
                      arith::XOrIOp::create(
                          cb, cl, inTime,
                          arith::ConstantIntOp::create(cb, cl, 1, 1))));
              scf::ConditionOp::create(cb, cl, again,
                                       ValueRange{count, timedOut});
            },
            [&](OpBuilder &db, Location dl, ValueRange) {
              scf::YieldOp::create(db, dl);
            });
        Value seen = loop.getResult(0), timedOut = loop.getResult(1);
        scf::IfOp::create(tb, tl, timedOut, [&](OpBuilder &eb, Location el) {
          Value mine =
              launches.size() == 1
                  ? Value(arith::ConstantIntOp::create(eb, el,
                                                       launches[0] + 1, 32))
                  : Value(arith::IndexCastUIOp::create(
                        eb, el, i32,
                        arith::AddIOp::create(eb, el, current,
                                              indexConstant(eb, el, 1))));
          auto exchange = LLVM::AtomicCmpXchgOp::create(
              eb, el, error, noError, mine, LLVM::AtomicOrdering::monotonic,
              LLVM::AtomicOrdering::monotonic, "device");
          Value won = LLVM::ExtractValueOp::create(eb, el, exchange, 1);
          scf::IfOp::create(eb, el, won, [&](OpBuilder &wb, Location wl) {
            Value values[3] = {
                arith::IndexCastUIOp::create(wb, wl, i32, program), launchWord,
                seen};
            for (unsigned w = 0; w < 3; ++w)
              LLVM::StoreOp::create(
                  wb, wl, values[w],
                  getCounter(wb, wl, counters, errorWord + 1 + w));
            scf::YieldOp::create(wb, wl);
          });
          scf::YieldOp::create(eb, el);
        });
      }
      LLVM::FenceOp::create(tb, tl, LLVM::AtomicOrdering::acquire, "device");
      scf::YieldOp::create(tb, tl);
    });
    context.barrier(b, loc);
    // (read by the other threads before the barrier above; by any thread
    // again only after the CTA's barrier at the end of this task)
    scf::IfOp::create(b, loc, isFirstThread, [&](OpBuilder &fb, Location fl) {
      Value one = arith::ConstantIntOp::create(fb, fl, 1, 8);
      for (unsigned d = 0; d < numDeps; ++d)
        memref::StoreOp::create(fb, fl, one, header, seenIndex(fb, d));
      scf::YieldOp::create(fb, fl);
    });
    wait.erase();
  }
}

/// Launches of an ordered kernel that share one program: regions equal up
/// to the values they use from outside them and the launches their waits
/// name, with the same resources (a model's layers launch the same kernels
/// on their own weights). `values[j]` are member j's outer values, in the
/// order the first member's program uses them; `deps[j][k]` the launches
/// its k-th wait names.
struct SharedProgram {
  SmallVector<unsigned> members;
  SmallVector<SmallVector<Value>> values;
  SmallVector<SmallVector<SmallVector<int32_t>>> deps;
};

/// The values `r` uses from outside it, in the order it first uses them.
SmallVector<Value> getOuterValues(Region &r) {
  llvm::SetVector<Value> outer;
  r.walk<WalkOrder::PreOrder>([&](Operation *op) {
    for (Value v : op->getOperands())
      if (!r.isAncestor(v.getParentRegion()))
        outer.insert(v);
  });
  return outer.takeVector();
}

/// Whether `b`'s program is `a`'s up to the values they use from outside
/// (`outer`: which of `b`'s each of `a`'s stands for) and the launches
/// their waits name.
bool isSameProgram(Region &a, Region &b, llvm::DenseMap<Value, Value> &outer) {
  Block &blockA = a.front(), &blockB = b.front();
  if (blockA.getOperations().size() != blockB.getOperations().size())
    return false;
  llvm::DenseMap<Value, Value> inner;
  auto check = [&](Value va, Value vb) -> LogicalResult {
    if (auto it = inner.find(va); it != inner.end())
      return success(it->second == vb);
    if (a.isAncestor(va.getParentRegion()) ||
        b.isAncestor(vb.getParentRegion()) || va.getType() != vb.getType())
      return failure();
    auto [it, inserted] = outer.insert({va, vb});
    return success(inserted || it->second == vb);
  };
  auto mark = [&](Value va, Value vb) { inner[va] = vb; };
  for (auto [opA, opB] : llvm::zip(blockA, blockB)) {
    auto waitA = dyn_cast<TaskWaitOp>(opA);
    auto waitB = dyn_cast<TaskWaitOp>(opB);
    if (waitA || waitB) {
      if (!waitA || !waitB ||
          waitA.getLaunches().size() != waitB.getLaunches().size())
        return false;
      continue;
    }
    if (!OperationEquivalence::isEquivalentTo(
            &opA, &opB, check, mark, OperationEquivalence::IgnoreLocations))
      return false;
  }
  // (isEquivalentTo does not ask about operands that are the same value:
  // each of `a`'s outer values must stand for one of `b`'s everywhere)
  SmallVector<Operation *> opsA, opsB;
  a.walk<WalkOrder::PreOrder>([&](Operation *op) { opsA.push_back(op); });
  b.walk<WalkOrder::PreOrder>([&](Operation *op) { opsB.push_back(op); });
  if (opsA.size() != opsB.size())
    return false;
  for (auto [opA, opB] : llvm::zip(opsA, opsB))
    for (auto [va, vb] : llvm::zip(opA->getOperands(), opB->getOperands())) {
      if (a.isAncestor(va.getParentRegion()))
        continue;
      auto [it, inserted] = outer.insert({va, vb});
      if (!inserted && it->second != vb)
        return false;
    }
  return true;
}

/// Groups the partitions of ordered `ws` into shared programs (each
/// partition alone when `share` is false).
SmallVector<SharedProgram> groupPrograms(WarpSpecializeOp ws, bool share) {
  SmallVector<SharedProgram> groups;
  auto waitsOf = [&](unsigned i) {
    SmallVector<SmallVector<int32_t>> deps;
    ws.getBodies()[i].walk([&](TaskWaitOp wait) {
      deps.emplace_back(wait.getLaunches().begin(), wait.getLaunches().end());
    });
    return deps;
  };
  for (unsigned i = 0, n = ws.getBodies().size(); i < n; ++i) {
    PartitionAttr p = ws.getPartition(i);
    bool placed = false;
    for (SharedProgram &g : share ? MutableArrayRef<SharedProgram>(groups)
                                  : MutableArrayRef<SharedProgram>()) {
      unsigned r = g.members.front();
      PartitionAttr q = ws.getPartition(r);
      if (p.getNumWarps() != q.getNumWarps() ||
          p.getWarpBase() != q.getWarpBase() ||
          p.getBarriers() != q.getBarriers() ||
          p.getRegisters() != q.getRegisters() ||
          p.getStages() != q.getStages() ||
          p.getSharedMemory() != q.getSharedMemory() ||
          p.getGroupSize() != q.getGroupSize())
        continue;
      llvm::DenseMap<Value, Value> outer;
      if (!isSameProgram(ws.getBodies()[r], ws.getBodies()[i], outer) ||
          outer.size() != g.values.front().size())
        continue;
      SmallVector<Value> values;
      for (Value v : g.values.front())
        values.push_back(outer.lookup(v));
      if (llvm::is_contained(values, Value()))
        continue;
      g.members.push_back(i);
      g.values.push_back(std::move(values));
      g.deps.push_back(waitsOf(i));
      placed = true;
      break;
    }
    if (placed)
      continue;
    SharedProgram g;
    g.members.push_back(i);
    g.values.push_back(getOuterValues(ws.getBodies()[i]));
    g.deps.push_back(waitsOf(i));
    groups.push_back(std::move(g));
  }
  return groups;
}

/// Lowers an ordered ism.warp_specialize: a persistent grid whose CTAs take
/// tasks (the programs of every partition, in partition order: a task
/// ticket) from a counter in global memory, the next one fetched before the
/// current one runs and handed from the first thread to the others through
/// two slots at the start of shared memory. A task runs partition i's
/// program on warps [0, its num_warps) (the others skip it); its
/// ism.task_wait ops wait for the done counters of the launches they name;
/// once every thread of the CTA is past it, the first thread fences
/// (release) and counts the program done. Tasks are taken in order and only
/// wait for tasks with smaller tickets, which CTAs that are running hold:
/// no deadlock, whatever CTAs are resident. Without counters (a null
/// address, the gpu.launch_func path) CTA 0 runs every task in order.
LogicalResult
lowerOrderedPartitions(gpu::GPUFuncOp func, WarpSpecializeOp ws, bool trace,
                       function_ref<LogicalResult(Operation *,
                                                  LoweringContext &)>
                           convert) {
  Location loc = ws.getLoc();
  unsigned n = ws.getBodies().size();
  auto fused = func->getAttrOfType<DictionaryAttr>("ism.coschedule");
  auto timeoutAttr = fused ? fused.getAs<IntegerAttr>("timeout_ms") : nullptr;
  auto countersAttr =
      fused ? fused.getAs<IntegerAttr>("work_counters") : nullptr;
  if (!timeoutAttr || !countersAttr ||
      countersAttr.getInt() != int64_t(getOrderedCounterCount(n)))
    return ws.emitOpError("an ordered kernel needs its ism.coschedule "
                          "attribute with timeout_ms and work_counters = ")
           << getOrderedCounterCount(n);
  int64_t timeoutNs = timeoutAttr.getInt() * 1000000;
  unsigned ctasPerSM = 1;
  if (auto c = fused.getAs<IntegerAttr>("ctas_per_sm"))
    ctasPerSM = c.getInt();

  unsigned numWarps = 0;
  for (unsigned i = 0; i < n; ++i)
    numWarps = std::max(numWarps, ws.getPartition(i).getNumWarps());
  unsigned threads = 32 * numWarps;
  OpBuilder b(ws);
  func->setAttr(kNumThreadsAttrName, b.getI32IntegerAttr(threads));
  func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({int32_t(threads), 1, 1}));
  if (ctasPerSM > 1)
    func->setAttr("nvvm.minctasm", b.getI32IntegerAttr(ctasPerSM));

  Value counters, traceBuffer;
  if (failed(addHiddenParameters(func, loc, /*withCounters=*/true, trace,
                                 counters, traceBuffer)))
    return failure();

  Value zero = indexConstant(b, loc, 0), one = indexConstant(b, loc, 1);
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value bid = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  SmallVector<Value> totals, starts;
  Value all = zero;
  for (unsigned i = 0; i < n; ++i) {
    auto grid = ws.getGrid(i);
    totals.push_back(arith::MulIOp::create(
        b, loc, arith::MulIOp::create(b, loc, grid[0], grid[1]), grid[2]));
    starts.push_back(all);
    all = arith::AddIOp::create(b, loc, all, totals.back());
  }
  // The CTA's own context: bar.sync 0 over every thread.
  LoweringContext cta(PartitionInfo{0, 0, 0}, numWarps);
  Value hasCounters = cmp(b, loc, arith::CmpIPredicate::ne, counters,
                          arith::ConstantIntOp::create(b, loc, 0, 64));
  Value isFirst = cmp(b, loc, arith::CmpIPredicate::eq, tid, zero);
  Value slots = getWorkSlots(b, loc, 0);
  // The rest of the header (pending count, seen flags) starts at zero, and
  // the launch table holds the launches' first tickets; the first
  // hand-over's barrier orders them before any use.
  int64_t headerBytes = getHeaderBytes(n);
  Value header = getHeader(b, loc, headerBytes);
  for (int64_t first = 0; first < headerBytes; first += threads) {
    Value byte = arith::AddIOp::create(b, loc, tid, indexConstant(b, loc, first));
    Value inHeader = arith::AndIOp::create(
        b, loc, cmp(b, loc, arith::CmpIPredicate::uge, byte,
                    indexConstant(b, loc, kPendingByte)),
        cmp(b, loc, arith::CmpIPredicate::ult, byte,
            indexConstant(b, loc, getLaunchTableOffset(n))));
    scf::IfOp::create(b, loc, inHeader, [&](OpBuilder &zb, Location zl) {
      memref::StoreOp::create(zb, zl, arith::ConstantIntOp::create(zb, zl, 0, 8),
                              header, byte);
      scf::YieldOp::create(zb, zl);
    });
  }
  // The launch table, by the first thread (the same hand-over orders it).
  scf::IfOp::create(b, loc, isFirst, [&](OpBuilder &wb, Location wl) {
    Value table = getSharedView(wb, wl, getLaunchTableOffset(n), n + 1,
                                wb.getI32Type());
    for (unsigned i = 0; i <= n; ++i)
      memref::StoreOp::create(
          wb, wl,
          arith::IndexCastUIOp::create(wb, wl, wb.getI32Type(),
                                       i < n ? starts[i] : all),
          table, indexConstant(wb, wl, i));
    scf::YieldOp::create(wb, wl);
  });
  Value ticket = getCounter(b, loc, counters, 0);
  // The next ticket: fetched by the first thread, handed over through slot
  // `slot` (written again two hand-overs later, after every thread passed
  // the barrier behind which it read it). Without counters, CTA 0 takes
  // every task in turn and the others none.
  auto fetch = [&](OpBuilder &fb, Value fallback) {
    auto ifOp = scf::IfOp::create(
        fb, loc, arith::AndIOp::create(fb, loc, hasCounters, isFirst),
        [&](OpBuilder &tb, Location tl) {
          Value v = LLVM::AtomicRMWOp::create(
              tb, tl, LLVM::AtomicBinOp::add, ticket, i32Const(tb, tl, 1),
              LLVM::AtomicOrdering::monotonic, "device");
          scf::YieldOp::create(
              tb, tl, Value(arith::IndexCastUIOp::create(tb, tl,
                                                         tb.getIndexType(), v)));
        },
        [&](OpBuilder &eb, Location el) {
          scf::YieldOp::create(eb, el, fallback);
        });
    return ifOp.getResult(0);
  };
  // The first thread's ticket into slot `slot`.
  auto storeTicket = [&](OpBuilder &sb, Value fetched, Value slot) {
    scf::IfOp::create(sb, loc, isFirst, [&](OpBuilder &tb, Location tl) {
      memref::StoreOp::create(
          tb, tl, arith::IndexCastUIOp::create(tb, tl, tb.getI32Type(), fetched),
          slots, slot);
      scf::YieldOp::create(tb, tl);
    });
  };
  auto publish = [&](OpBuilder &pb, Value fetched, Value slot) {
    storeTicket(pb, fetched, slot);
    cta.barrier(pb, loc);
    Value v = memref::LoadOp::create(pb, loc, slots, slot);
    return Value(arith::IndexCastUIOp::create(pb, loc, pb.getIndexType(), v));
  };
  // The task ring: each task's loads that the slices of its program id
  // address and that come before its wait (buffers no earlier launch
  // writes: weights) are copied into a slot of a ring in shared memory
  // (cp.async) D - 1 tasks ahead, so that the next tasks' weights stream
  // while this one waits and computes. A slot is S bytes (the largest
  // partition's loads, each in its threads' 16-byte chunks) and every
  // ticket commits G copy groups in every thread (empty ones where its
  // partition has fewer loads or the thread none), so that a load's wait
  // (cp.async.wait_group) leaves exactly the later groups in flight. Only
  // with ring_stages on the region (not with prefetch = false), when two
  // slots fit, and when no program copies asynchronously itself.
  bool prefetch = true;
  if (auto pf = fused.getAs<BoolAttr>("prefetch"))
    prefetch = pf.getValue();
  SmallVector<SmallVector<PrefetchableLoad>> ringLoads(n);
  SmallVector<SmallVector<int64_t>> ringOffsets(n);
  int64_t slotBytes = 0;
  unsigned groups = 0, depth = 0;
  bool ownCopies = false;
  for (unsigned i = 0; i < n; ++i)
    ws.getBodies()[i].walk([&](Operation *op) {
      ownCopies |= isa<AsyncCopyOp, AsyncLoadOp, AsyncGatherOp>(op);
    });
  if (prefetch && !ownCopies) {
    for (unsigned i = 0; i < n; ++i) {
      Block *block = &ws.getBodies()[i].front();
      Operation *wait = nullptr;
      for (Operation &op : *block)
        if (isa<TaskWaitOp>(op)) {
          wait = &op;
          break;
        }
      int64_t bytes = 0;
      for (PrefetchableLoad &load : getPrefetchableLoads(block)) {
        if (wait && wait->isBeforeInBlock(load.load))
          continue;
        ringOffsets[i].push_back(bytes);
        bytes += getRingSlotBytes(load.load.getType(),
                                  32 * ws.getPartition(i).getNumWarps());
        ringLoads[i].push_back(load);
      }
      slotBytes = std::max(slotBytes, bytes);
      groups = std::max<unsigned>(groups, ringLoads[i].size());
    }
    // What is left for the ring beside the slots and the partitions'
    // scratch (reductions and layout changes: a few KiB).
    constexpr int64_t kScratchReserve = 8192;
    int64_t room = getSharedMemoryPerCTA(ctasPerSM) - headerBytes -
                   kScratchReserve;
    // ring_stages on the region: the depth wanted (as many as fit), or 0:
    // no ring, the loads before the wait go to registers. Off by default:
    // on the H200 the decode MLP block (examples/decode_mlp.mlir) took
    // 39.3 us a step with a 2-slot ring at 2 CTAs an SM and 37.8 without
    // (at 3 CTAs an SM, its default, two 40 KiB slots do not fit: 34.0).
    int64_t wanted = 0;
    if (auto r = fused.getAs<IntegerAttr>("ring_stages"); r && r.getInt() >= 0)
      wanted = r.getInt();
    if (slotBytes > 0)
      depth = unsigned(std::min<int64_t>(wanted, room / slotBytes));
    if (depth < 2)
      depth = 0;
  }
  int64_t ringBase = headerBytes;
  int64_t scratchBase = ringBase + int64_t(depth) * slotBytes;
  unsigned ahead = std::max(1u, depth);

  // The first `ahead` tickets (CTA 0 takes 0, 1, ... without counters).
  SmallVector<Value> firstTickets;
  Value ctaZero = cmp(b, loc, arith::CmpIPredicate::eq, bid, zero);
  for (unsigned j = 0; j < ahead; ++j) {
    Value staticTicket = arith::SelectOp::create(
        b, loc, ctaZero, indexConstant(b, loc, j),
        arith::AddIOp::create(b, loc, all, indexConstant(b, loc, j)));
    firstTickets.push_back(
        publish(b, fetch(b, staticTicket), indexConstant(b, loc, j % 2)));
  }
  SmallVector<Value> inits = firstTickets;
  inits.push_back(zero);
  SmallVector<Type> types(inits.size(), b.getIndexType());
  auto loop = scf::WhileOp::create(
      b, loc, types, inits,
      [&](OpBuilder &cb, Location cl, ValueRange args) {
        scf::ConditionOp::create(
            cb, cl, cmp(cb, cl, arith::CmpIPredicate::ult, args[0], all), args);
      },
      [&](OpBuilder &db, Location dl, ValueRange args) {
        scf::YieldOp::create(db, dl, args);
      });
  keepInvariantsInLoop(loop);
  Block *body = loop.getAfterBody();
  Value t = body->getArgument(0), k = body->getArgument(ahead);
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  OpBuilder lb(yield);
  Value start;
  if (traceBuffer)
    start = NVVM::GlobalTimerOp::create(lb, loc, lb.getI64Type());
  // Issued before the task runs, read after it.
  Value next = fetch(lb, arith::AddIOp::create(
                             lb, loc, body->getArgument(ahead - 1), one));
  // The CTA's next task (the first thread's fetch when none is held
  // ahead: only the first thread reads it).
  Value following = ahead > 1 ? Value(body->getArgument(1)) : next;
  Value publishSlot = arith::AndIOp::create(
      lb, loc, arith::AddIOp::create(lb, loc, k, indexConstant(lb, loc, ahead)),
      one);
  Value depthValue = indexConstant(lb, loc, std::max(1u, depth));
  Value currentSlot = arith::RemUIOp::create(lb, loc, k, depthValue);

  // Launches of the same kernel share one program (not with the ring,
  // whose copies are per launch): its outer values, program, grid, done
  // counter and waits are picked by the launch the ticket is in.
  SmallVector<SharedProgram> shared = groupPrograms(ws, depth == 0);
  unsigned numPrograms = shared.size();
  // The launch the ticket is in: the last whose first ticket is at most t
  // (binary lifting over the launch table; launches without programs
  // share their first ticket with the next).
  Value current = zero;
  if (n > 1) {
    Value last = indexConstant(lb, loc, n - 1);
    for (unsigned step = llvm::bit_floor(n - 1); step >= 1; step >>= 1) {
      Value candidate =
          arith::AddIOp::create(lb, loc, current, indexConstant(lb, loc, step));
      Value clamped = arith::MinUIOp::create(lb, loc, candidate, last);
      Value fits = arith::AndIOp::create(
          lb, loc, cmp(lb, loc, arith::CmpIPredicate::ule, candidate, last),
          cmp(lb, loc, arith::CmpIPredicate::ule,
              loadLaunchTable(lb, loc, n, clamped), t));
      current = arith::SelectOp::create(lb, loc, fits, candidate, current);
    }
  }
  SmallVector<std::unique_ptr<LoweringContext>> contexts(numPrograms);
  SmallVector<scf::IfOp> programs(numPrograms);
  SmallVector<MemberPick> picks(numPrograms);
  // Each program's grid, as its task's launch has it.
  SmallVector<SmallVector<Value>> grids(numPrograms);
  // Each program's task: its program id in its launch's grid.
  SmallVector<Value> programIds(numPrograms);
  SmallVector<SmallVector<Operation *>> copyBranches(n);
  int64_t total = scratchBase;
  for (auto [g, group] : llvm::enumerate(shared)) {
    unsigned rep = group.members.front();
    PartitionAttr p = ws.getPartition(rep);
    MemberPick &pick = picks[g];
    Value inRange = arith::ConstantIntOp::create(lb, loc, 0, 1);
    for (auto [j, i] : llvm::enumerate(group.members)) {
      Value in = cmp(lb, loc, arith::CmpIPredicate::eq, current,
                     indexConstant(lb, loc, i));
      inRange = j == 0 ? in : arith::OrIOp::create(lb, loc, inRange, in);
      if (j > 0)
        pick.conds.push_back(in);
      pick.launches.push_back(i);
    }
    pick.current = current;
    auto task = scf::IfOp::create(lb, loc, inRange, /*withElse=*/false);
    OpBuilder tb(task.thenBlock()->getTerminator());
    Value start_ = loadLaunchTable(tb, loc, n, current);
    Value end_ = loadLaunchTable(
        tb, loc, n, arith::AddIOp::create(tb, loc, current, one));
    Value program = arith::SubIOp::create(tb, loc, t, start_);
    programIds[g] = program;
    // The member's own values for those the program uses from outside,
    // and its grid.
    unsigned numOuter = group.values.front().size();
    SmallVector<SmallVector<Value>> columns(numOuter + 3);
    for (auto [j, i] : llvm::enumerate(group.members)) {
      for (unsigned v = 0; v < numOuter; ++v)
        columns[v].push_back(group.values[j][v]);
      for (unsigned d = 0; d < 3; ++d)
        columns[numOuter + d].push_back(ws.getGrid(i)[d]);
    }
    SmallVector<Value> outer = pick.pickAll(tb, loc, columns);
    grids[g].assign(outer.begin() + numOuter, outer.end());
    outer.resize(numOuter);
    Value mine = cmp(tb, loc, arith::CmpIPredicate::ult, tid,
                     indexConstant(tb, loc, 32 * p.getNumWarps()));
    auto run = scf::IfOp::create(tb, loc, mine, /*withElse=*/false);
    Block *then = run.thenBlock();
    then->getOperations().splice(Block::iterator(then->getTerminator()),
                                 ws.getBodies()[rep].front().getOperations());
    for (auto [from, to] : llvm::zip(group.values.front(), outer))
      if (from != to)
        from.replaceUsesWithIf(to, [&](OpOperand &use) {
          return run->isProperAncestor(use.getOwner());
        });
    programs[g] = run;
    contexts[g] = std::make_unique<LoweringContext>(
        PartitionInfo{0, p.getBarriers().front(), unsigned(scratchBase)},
        p.getNumWarps());

    // After every thread is past the program, it counts as done: the
    // first thread keeps the count of the launch's tasks this CTA finished
    // and adds it to the done counter (after a release fence) when the
    // CTA's next task is of another launch or there is none. (No task
    // waits for its own launch, so holding the count back cannot keep a
    // task of this CTA from running; tasks that wait for this launch wait
    // for all of it.)
    // (The next ticket goes into its slot before the same barrier.)
    storeTicket(tb, next, publishSlot);
    cta.barrier(tb, loc);
    scf::IfOp::create(
        tb, loc, arith::AndIOp::create(tb, loc, hasCounters, isFirst),
        [&](OpBuilder &rb, Location rl) {
          Value pending =
              getSharedView(rb, rl, kPendingByte, 1, rb.getI32Type());
          Value zeroIndex = indexConstant(rb, rl, 0);
          Value count = arith::AddIOp::create(
              rb, rl, memref::LoadOp::create(rb, rl, pending, zeroIndex),
              i32Const(rb, rl, 1));
          Value sameLaunch = arith::AndIOp::create(
              rb, rl,
              cmp(rb, rl, arith::CmpIPredicate::uge, following, start_),
              cmp(rb, rl, arith::CmpIPredicate::ult, following, end_));
          auto keep = scf::IfOp::create(
              rb, rl, TypeRange{rb.getI32Type()}, sameLaunch,
              /*withElseRegion=*/true);
          {
            OpBuilder kb(keep.thenBlock(), keep.thenBlock()->begin());
            scf::YieldOp::create(kb, rl, count);
          }
          {
            OpBuilder fb(keep.elseBlock(), keep.elseBlock()->begin());
            LLVM::FenceOp::create(fb, rl, LLVM::AtomicOrdering::release,
                                  "device");
            // (a launch's done counter: kOrderedDoneCounters + launch)
            Value counter =
                group.members.size() == 1
                    ? getCounter(fb, rl, counters, p.getWorkCounter())
                    : getCounterAt(fb, rl, counters,
                                   arith::AddIOp::create(
                                       fb, rl, current,
                                       indexConstant(fb, rl,
                                                     kOrderedDoneCounters)));
            LLVM::AtomicRMWOp::create(fb, rl, LLVM::AtomicBinOp::add, counter,
                                      count, LLVM::AtomicOrdering::monotonic,
                                      "device");
            scf::YieldOp::create(fb, rl, i32Const(fb, rl, 0));
          }
          memref::StoreOp::create(rb, rl, keep.getResult(0), pending,
                                  zeroIndex);
          scf::YieldOp::create(rb, rl);
        });
    if (traceBuffer) {
      Value stop = NVVM::GlobalTimerOp::create(tb, loc, tb.getI64Type());
      Value tag = arith::ShLIOp::create(
          tb, loc,
          arith::IndexCastUIOp::create(tb, loc, tb.getI64Type(), current),
          arith::ConstantIntOp::create(tb, loc, 16, 64));
      emitTraceRecord(tb, loc, traceBuffer, t, isFirst, start, stop, tag,
                      program);
    }
  }

  // The copies of ticket `ticket` into slot `slot`: one branch per
  // partition with ring loads (its threads), then empty groups for the
  // threads that copied nothing, so that every thread commits `groups`.
  auto copyAhead = [&](OpBuilder &cb, Value ticket, Value slot) {
    Value copied = arith::ConstantIntOp::create(cb, loc, 0, 1);
    for (unsigned i = 0; i < n; ++i) {
      if (ringLoads[i].empty())
        continue;
      PartitionAttr p = ws.getPartition(i);
      Value end = arith::AddIOp::create(cb, loc, starts[i], totals[i]);
      Value mine = arith::AndIOp::create(
          cb, loc,
          arith::AndIOp::create(
              cb, loc,
              cmp(cb, loc, arith::CmpIPredicate::uge, ticket, starts[i]),
              cmp(cb, loc, arith::CmpIPredicate::ult, ticket, end)),
          cmp(cb, loc, arith::CmpIPredicate::ult, tid,
              indexConstant(cb, loc, 32 * p.getNumWarps())));
      copied = arith::OrIOp::create(cb, loc, copied, mine);
      auto branch = scf::IfOp::create(cb, loc, mine, /*withElse=*/false);
      OpBuilder bb(branch.thenBlock()->getTerminator());
      auto grid = ws.getGrid(i);
      SmallVector<Value> gridValues(grid.begin(), grid.end());
      SmallVector<Value, 3> coords = programCoords(
          bb, loc, arith::SubIOp::create(bb, loc, ticket, starts[i]),
          gridValues);
      for (auto [j, load] : llvm::enumerate(ringLoads[i]))
        copyLoadAhead(bb, loc, load, coords, gridValues, slot,
                      ringBase + ringOffsets[i][j], slotBytes);
      for (unsigned g = ringLoads[i].size(); g < groups; ++g)
        NVVM::CpAsyncCommitGroupOp::create(bb, loc);
      copyBranches[i].push_back(branch);
    }
    Value none = arith::XOrIOp::create(
        cb, loc, copied, arith::ConstantIntOp::create(cb, loc, 1, 1));
    scf::IfOp::create(cb, loc, none, [&](OpBuilder &eb, Location el) {
      for (unsigned g = 0; g < groups; ++g)
        NVVM::CpAsyncCommitGroupOp::create(eb, el);
      scf::YieldOp::create(eb, el);
    });
  };
  if (depth) {
    OpBuilder pb(loop);
    for (unsigned j = 0; j + 1 < depth; ++j)
      copyAhead(pb, firstTickets[j], indexConstant(pb, loc, j));
    OpBuilder cb(body, body->begin());
    Value newest = body->getArgument(depth - 1);
    Value slot = arith::RemUIOp::create(
        cb, loc,
        arith::AddIOp::create(cb, loc, k, indexConstant(cb, loc, depth - 1)),
        indexConstant(cb, loc, depth));
    copyAhead(cb, newest, slot);
    // The loads read their slot of the ring.
    for (unsigned i = 0; i < n; ++i)
      for (auto [j, load] : llvm::enumerate(ringLoads[i])) {
        OpBuilder rb(load.load);
        auto read = AsyncLoadOp::create(
            rb, load.load.getLoc(), load.load.getType(), load.load.getBase(),
            load.load.getOffsets(), currentSlot,
            rb.getI64IntegerAttr(ringBase + ringOffsets[i][j]),
            rb.getI64IntegerAttr(slotBytes),
            rb.getI32IntegerAttr((depth - 1) * groups + (groups - 1 - j)),
            load.load.getPaddingAttr(), /*ring_id=*/nullptr,
            /*slots=*/nullptr);
        load.load.getResult().replaceAllUsesWith(read.getResult());
        load.load.erase();
      }
  }
  for (auto [g, group] : llvm::enumerate(shared)) {
    Block *then = programs[g].thenBlock();
    OpBuilder qb(then, then->begin());
    ArrayRef<Value> gridValues = grids[g];
    Value program = programIds[g];
    replaceGridQueries(then, programCoords(qb, loc, program, gridValues),
                       gridValues);
    lowerTaskWaits(then, group.members, picks[g], current, group.deps,
                   program, counters, hasCounters, n, timeoutNs,
                   *contexts[g]);
  }
  SmallVector<Value> yields;
  for (unsigned j = 1; j < ahead; ++j)
    yields.push_back(body->getArgument(j));
  // The next ticket, stored by the first thread before the task's last
  // barrier.
  yields.push_back(arith::IndexCastUIOp::create(
      lb, loc, lb.getIndexType(),
      memref::LoadOp::create(lb, loc, slots, publishSlot)));
  yields.push_back(arith::AddIOp::create(lb, loc, k, one));
  yield->setOperands(yields);

  // The last CTA to finish sets the ticket and done counters (and the
  // count of finished CTAs) back to zero for the next launch. Every CTA
  // has added its tasks to the done counters and fetched its last ticket
  // before it counts itself finished.
  {
    OpBuilder eb(loop->getBlock(), std::next(Block::iterator(loop)));
    scf::IfOp::create(
        eb, loc, arith::AndIOp::create(eb, loc, hasCounters, isFirst),
        [&](OpBuilder &xb, Location xl) {
          LLVM::FenceOp::create(xb, xl, LLVM::AtomicOrdering::acq_rel,
                                "device");
          Value old = LLVM::AtomicRMWOp::create(
              xb, xl, LLVM::AtomicBinOp::add,
              getCounter(xb, xl, counters, getOrderedExitCounter(n)),
              i32Const(xb, xl, 1), LLVM::AtomicOrdering::acq_rel, "device");
          Value grid = arith::IndexCastUIOp::create(
              xb, xl, xb.getI32Type(),
              gpu::GridDimOp::create(xb, xl, gpu::Dimension::x));
          Value last = cmp(xb, xl, arith::CmpIPredicate::eq, old,
                           arith::SubIOp::create(xb, xl, grid,
                                                 i32Const(xb, xl, 1)));
          scf::IfOp::create(xb, xl, last, [&](OpBuilder &rb, Location rl) {
            Value zeroWord = i32Const(rb, rl, 0);
            for (unsigned c = 0; c < kOrderedDoneCounters + n; ++c)
              LLVM::StoreOp::create(rb, rl, zeroWord,
                                    getCounter(rb, rl, counters, c));
            LLVM::StoreOp::create(
                rb, rl, zeroWord,
                getCounter(rb, rl, counters, getOrderedExitCounter(n)));
            scf::YieldOp::create(rb, rl);
          });
          scf::YieldOp::create(xb, xl);
        });
  }

  for (unsigned i = 0; i < n; ++i)
    // (with a ring no launches share a program: program i is partition i)
    for (Operation *branch : copyBranches[i])
      if (failed(convert(branch, *contexts[i])))
        return failure();
  for (unsigned g = 0; g < numPrograms; ++g) {
    if (failed(convert(programs[g], *contexts[g])))
      return failure();
    total = std::max<int64_t>(total, contexts[g]->getSharedMemoryBytes());
  }
  int64_t limit = getSharedMemoryPerCTA(ctasPerSM);
  if (total > limit)
    return ws.emitOpError("shared memory: the partitions need ")
           << total << " bytes, more than the " << limit
           << " a CTA can have at " << ctasPerSM << " CTA(s) per SM";
  func->setAttr(kSharedMemoryAttrName, b.getI32IntegerAttr(total));
  ws.erase();
  return success();
}

} // namespace

LogicalResult mlir::ism::lowerPartitions(
    Operation *funcOp, Operation *warpSpecialize, bool trace,
    function_ref<LogicalResult(Operation *, LoweringContext &)> convert) {
  auto func = cast<gpu::GPUFuncOp>(funcOp);
  auto ws = cast<WarpSpecializeOp>(warpSpecialize);
  if (ws.getPolicy() == CoschedulePolicy::Ordered)
    return lowerOrderedPartitions(func, ws, trace, convert);
  Location loc = ws.getLoc();
  unsigned n = ws.getBodies().size();
  bool shared = ws.getPolicy() == CoschedulePolicy::WarpSpecialized;
  unsigned ctasPerSM = 1, numCounters = 0;
  bool prefetch = true;
  unsigned ringStages = 0;
  if (auto fused = func->getAttrOfType<DictionaryAttr>("ism.coschedule")) {
    if (auto p = fused.getAs<BoolAttr>("prefetch"))
      prefetch = p.getValue();
    if (auto r = fused.getAs<IntegerAttr>("ring_stages"))
      ringStages = r.getInt();
    if (auto c = fused.getAs<IntegerAttr>("ctas_per_sm"))
      ctasPerSM = c.getInt();
    if (auto c = fused.getAs<IntegerAttr>("work_counters"))
      numCounters = c.getInt();
  }

  unsigned numWarps = 0;
  bool setsRegisters = false;
  for (unsigned i = 0; i < n; ++i) {
    PartitionAttr p = ws.getPartition(i);
    numWarps = std::max(numWarps, p.getWarpBase() + p.getNumWarps());
    setsRegisters |= !p.getRegisters().empty();
  }
  unsigned threads = 32 * numWarps;
  OpBuilder b(ws);
  func->setAttr(kNumThreadsAttrName, b.getI32IntegerAttr(threads));
  func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({int32_t(threads), 1, 1}));
  // setmaxnreg moves registers from the pool the CTA starts with, so that
  // pool is fixed: as many registers a thread as `ctasPerSM` CTAs allow.
  unsigned atLaunch =
      std::min<unsigned>(248, 65536 / (threads * ctasPerSM) / 8 * 8);
  if (setsRegisters)
    func->setAttr("nvvm.maxnreg", b.getI32IntegerAttr(atLaunch));

  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value bid = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value gridDim = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
  SmallVector<Value> totals, starts;
  Value running = indexConstant(b, loc, 0);
  for (unsigned i = 0; i < n; ++i) {
    auto grid = ws.getGrid(i);
    Value total = arith::MulIOp::create(
        b, loc, arith::MulIOp::create(b, loc, grid[0], grid[1]), grid[2]);
    totals.push_back(total);
    starts.push_back(running);
    running = arith::AddIOp::create(b, loc, running, total);
  }

  // Which launch each partition runs (copies of a launch share its grid
  // operands), which copy it is, and the first trace record of its launch.
  SmallVector<int64_t> launchOf(n), copyOf(n);
  SmallVector<Value> launchGrid;
  for (unsigned i = 0; i < n; ++i) {
    Value gx = ws.getGrid(i)[0];
    auto it = llvm::find(launchGrid, gx);
    launchOf[i] = it - launchGrid.begin();
    if (it == launchGrid.end())
      launchGrid.push_back(gx);
    copyOf[i] = 0;
    for (unsigned j = 0; j < i; ++j)
      copyOf[i] += launchOf[j] == launchOf[i];
  }
  SmallVector<Value> firstRecord(n);
  for (unsigned i = 0; i < n; ++i) {
    Value sum = indexConstant(b, loc, 0);
    SmallVector<int64_t> counted;
    for (unsigned j = 0; j < n; ++j)
      if (launchOf[j] < launchOf[i] &&
          !llvm::is_contained(counted, launchOf[j])) {
        counted.push_back(launchOf[j]);
        sum = arith::AddIOp::create(b, loc, sum, totals[j]);
      }
    firstRecord[i] = sum;
  }

  // A partition in a thread-block cluster (at most one, of a
  // warp_specialized kernel: the op's verifier) synchronises the cluster's
  // CTAs (barrier.cluster) before its producers multicast, and every thread
  // of the CTA must arrive there: the other partitions arrive once, here,
  // before any partition runs (and are not waited for when they end:
  // exited threads count).
  for (unsigned i = 0; i < n; ++i) {
    PartitionAttr p = ws.getPartition(i);
    if (p.getClusterM() * p.getClusterN() == 1)
      continue;
    Value lo = indexConstant(b, loc, 32 * p.getWarpBase());
    Value hi = indexConstant(b, loc, 32 * (p.getWarpBase() + p.getNumWarps()));
    Value below = cmp(b, loc, arith::CmpIPredicate::ult, tid, lo);
    Value above = cmp(b, loc, arith::CmpIPredicate::uge, tid, hi);
    Value outside = arith::OrIOp::create(b, loc, below, above);
    scf::IfOp::create(b, loc, outside, [&](OpBuilder &tb, Location tl) {
      NVVM::ClusterArriveRelaxedOp::create(tb, tl, UnitAttr());
      scf::YieldOp::create(tb, tl);
    });
  }

  // One branch per partition, holding its program.
  SmallVector<scf::IfOp> branches;
  SmallVector<Value> firsts;
  for (unsigned i = 0; i < n; ++i) {
    PartitionAttr p = ws.getPartition(i);
    Value lo = indexConstant(b, loc, 32 * p.getWarpBase());
    Value hi = indexConstant(b, loc, 32 * (p.getWarpBase() + p.getNumWarps()));
    // One statement per op: the order of function arguments is unspecified,
    // and the IR must not depend on the compiler that built ism.
    Value aboveLo = cmp(b, loc, arith::CmpIPredicate::uge, tid, lo);
    Value belowHi = cmp(b, loc, arith::CmpIPredicate::ult, tid, hi);
    Value cond = arith::AndIOp::create(b, loc, aboveLo, belowHi);
    Value first = bid;
    if (!shared) {
      Value end = arith::AddIOp::create(b, loc, starts[i], totals[i]);
      Value afterStart =
          cmp(b, loc, arith::CmpIPredicate::uge, bid, starts[i]);
      Value beforeEnd = cmp(b, loc, arith::CmpIPredicate::ult, bid, end);
      Value inRange = arith::AndIOp::create(b, loc, afterStart, beforeEnd);
      cond = arith::AndIOp::create(b, loc, cond, inRange);
      first = arith::SubIOp::create(b, loc, bid, starts[i]);
    }
    firsts.push_back(first);
    auto branch = scf::IfOp::create(b, loc, cond, /*withElse=*/false);
    Block *then = branch.thenBlock();
    then->getOperations().splice(Block::iterator(then->getTerminator()),
                                 ws.getBodies()[i].front().getOperations());
    branches.push_back(branch);
  }

  // The wgmma programs split into producer and consumers; they add their
  // TMA descriptors to the hidden parameters.
  SmallVector<std::unique_ptr<LoweringContext>> contexts(n);
  SmallVector<WgmmaPartition> wgmmaConfigs(n);
  for (unsigned i = 0; i < n; ++i) {
    PartitionAttr p = ws.getPartition(i);
    if (p.getStages() == 0)
      continue;
    ArrayRef<unsigned> barriers = p.getBarriers();
    if (barriers.size() != 3 || p.getNumWarps() < 8 || p.getNumWarps() % 4)
      return ws.emitOpError("partition ")
             << i << " is a wgmma partition (stages = " << p.getStages()
             << ") and needs three named barriers and whole warpgroups "
                "including its producer";
    unsigned consumerWarps = p.getNumWarps() - 4;
    contexts[i] = std::make_unique<LoweringContext>(
        PartitionInfo{p.getWarpBase(), barriers[1], p.getSharedMemory()},
        consumerWarps);
    WgmmaPartition config;
    config.block = branches[i].thenBlock();
    config.warpBase = p.getWarpBase();
    config.allBarrier = barriers[0];
    config.consumerBarrier = barriers[1];
    config.producerBarrier = barriers[2];
    if (!p.getRegisters().empty()) {
      config.consumerRegisters = p.getRegisters().front();
      config.producerRegisters = p.getRegisters().back();
    }
    config.sharedMemoryBase = p.getSharedMemory();
    config.groupSize = std::max(1u, p.getGroupSize());
    config.clusterM = p.getClusterM();
    config.clusterN = p.getClusterN();
    auto grid = ws.getGrid(i);
    config.grid.assign(grid.begin(), grid.end());
    if (!shared) {
      config.first = firsts[i];
      config.stride = totals[i];
    }
    config.stages = p.getStages();
    config.traceFirstRecord = firstRecord[i];
    config.traceTag = (launchOf[i] << 16) | copyOf[i];
    wgmmaConfigs[i] = config;
  }

  Value counters, traceBuffer;
  if (failed(addHiddenParameters(func, loc, numCounters > 0, trace, counters,
                                 traceBuffer)))
    return failure();

  for (unsigned i = 0; i < n; ++i) {
    if (!contexts[i])
      continue;
    PartitionAttr p = ws.getPartition(i);
    WgmmaPartition &config = wgmmaConfigs[i];
    config.traceBuffer = traceBuffer;
    config.hiddenAfterTma = (counters ? 1 : 0) + (traceBuffer ? 1 : 0);
    if (failed(prepareWarpSpecializedProgram(func, config, *contexts[i])))
      return failure();
    if (!contexts[i]->pipeline)
      return ws.emitOpError("partition ")
             << i << " has stages = " << p.getStages()
             << " but no pipelined wgmma K loop";
  }

  // Lower the partitions in the order of their shared memory, each from
  // where the previous one ended.
  SmallVector<unsigned> order;
  for (unsigned i = 0; i < n; ++i)
    order.push_back(i);
  // (Partitions that run after a wgmma partition's tiles come last: their
  // slices lie in its ring.)
  llvm::stable_sort(order, [&](unsigned x, unsigned y) {
    PartitionAttr px = ws.getPartition(x), py = ws.getPartition(y);
    return std::make_pair(px.getAfter() >= 0, px.getSharedMemory()) <
           std::make_pair(py.getAfter() >= 0, py.getSharedMemory());
  });
  int64_t end = 0, total = 0;
  for (unsigned i : order) {
    PartitionAttr p = ws.getPartition(i);
    bool joined = p.getAfter() >= 0;
    int64_t base = shared && !joined
                       ? std::max<int64_t>(p.getSharedMemory(), end)
                       : p.getSharedMemory();
    int64_t partitionEnd;
    if (contexts[i]) {
      if (base != p.getSharedMemory())
        return ws.emitOpError("partition ")
               << i << "'s ring at " << p.getSharedMemory()
               << " overlaps the shared memory of the partition before it "
                  "(which ends at "
               << end << ")";
      if (failed(convert(branches[i], *contexts[i])))
        return failure();
      partitionEnd = std::max<int64_t>(contexts[i]->getSharedMemoryBytes(),
                                       contexts[i]->pipeline->ringEnd());
    } else {
      bool counted = counters && p.getWorkCounter() >= 0;
      // Work slots, then the rings of the loads issued ahead, then scratch.
      int64_t ringBase = base + (counted ? kWorkSlotBytes : 0);
      int64_t scratch = ringBase;
      bool ahead = prefetch && shared;
      if (ahead && ringStages >= 2)
        for (PrefetchableLoad &load :
             getPrefetchableLoads(branches[i].thenBlock()))
          if (!load.invariant)
            scratch += ringStages * getRingSlotBytes(load.load.getType(),
                                                     32 * p.getNumWarps());
      contexts[i] = std::make_unique<LoweringContext>(
          PartitionInfo{p.getWarpBase(), p.getBarriers().front(),
                        unsigned(scratch)},
          p.getNumWarps());
      // The depth ism-coschedule chose for its products' operand ring.
      contexts[i]->ringStages = p.getOperandStages();
      OpBuilder lb(branches[i]);
      auto grid = ws.getGrid(i);
      SmallVector<Value> gridValues(grid.begin(), grid.end());
      // Copies of one launch share its counter; without counters at run
      // time they take every copies-th program.
      Value first = firsts[i], stride = shared ? gridDim : totals[i];
      unsigned copies = 0, copy = 0;
      for (unsigned j = 0; j < n; ++j)
        if (p.getWorkCounter() >= 0 &&
            ws.getPartition(j).getWorkCounter() == p.getWorkCounter()) {
          if (j < i)
            ++copy;
          ++copies;
        }
      if (shared && copies > 1) {
        Value c = indexConstant(lb, loc, copies);
        first = arith::AddIOp::create(lb, loc,
                                      arith::MulIOp::create(lb, loc, first, c),
                                      indexConstant(lb, loc, copy));
        stride = arith::MulIOp::create(lb, loc, stride, c);
      }
      buildWorkLoop(lb, loc, branches[i].thenBlock(), gridValues, first, stride,
                    counted ? counters : Value(), 4 * p.getWorkCounter(), base,
                    *contexts[i], ahead, ringStages, ringBase, traceBuffer,
                    firstRecord[i], (launchOf[i] << 16) | copyOf[i]);
      // The partition's registers, set once before its work loop. Even a
      // count equal to the one at launch is set: ptxas allocates the
      // registers of the code after a setmaxnreg by its count, and code
      // beside setmaxnreg regions without one spills.
      // A partition after a wgmma partition's tiles moves from its
      // consumers' count.
      unsigned from = atLaunch;
      if (joined && !ws.getPartition(p.getAfter()).getRegisters().empty())
        from = ws.getPartition(p.getAfter()).getRegisters().front();
      if (!p.getRegisters().empty()) {
        OpBuilder rb(branches[i].thenBlock(), branches[i].thenBlock()->begin());
        unsigned regs = p.getRegisters().front();
        NVVM::SetMaxRegisterOp::create(
            rb, loc, regs,
            regs > from || (regs == from && !joined)
                ? NVVM::SetMaxRegisterAction::increase
                : NVVM::SetMaxRegisterAction::decrease);
      }
      if (joined) {
        // Its slice is in the ring: first every consumer of the wgmma
        // partition must be done with it (their named barrier; each
        // consumer warpgroup runs one such copy). The consumer warpgroups
        // reach it from different instructions (one branch each), so it is
        // barrier.sync without .aligned: bar.sync (nvvm.barrier) requires
        // every participating thread to execute the same instruction
        // (compute-sanitizer's synccheck reports "divergent threads").
        PartitionAttr gemm = ws.getPartition(p.getAfter());
        OpBuilder rb(branches[i].thenBlock(), branches[i].thenBlock()->begin());
        LLVM::InlineAsmOp::create(
            rb, loc, TypeRange{},
            ValueRange{
                arith::ConstantIntOp::create(rb, loc, gemm.getBarriers()[1],
                                             32),
                arith::ConstantIntOp::create(
                    rb, loc, 32 * (gemm.getNumWarps() - 4), 32)},
            "barrier.sync $0, $1;", "r,r", /*has_side_effects=*/true,
            /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
            LLVM::AsmDialectAttr(), ArrayAttr());
      }
      // Its wgmma products, with the partition's warps.
      WalkResult products = branches[i].walk([&](DotOp dot) {
        auto loop = dot->getParentOfType<scf::ForOp>();
        if (loop && loop->hasAttr(kPipelineAttrName))
          return WalkResult::advance();
        return failed(
                   checkWgmmaProductOp(dot, p.getNumWarps(), p.getWarpBase()))
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      });
      if (products.wasInterrupted())
        return failure();
      if (failed(convert(branches[i], *contexts[i])))
        return failure();
      partitionEnd =
          std::max<int64_t>(contexts[i]->getSharedMemoryBytes(), scratch);
      if (joined) {
        LoweringContext *gemm = contexts[p.getAfter()].get();
        int64_t ringEnd =
            gemm && gemm->pipeline ? gemm->pipeline->ringEnd() : 0;
        if (partitionEnd > ringEnd)
          return ws.emitOpError("partition ")
                 << i << " runs after partition " << p.getAfter()
                 << "'s tiles in its ring, but its shared memory ends at "
                 << partitionEnd << ", past the ring's end at " << ringEnd;
        total = std::max(total, partitionEnd);
        continue;
      }
    }
    end = shared ? (partitionEnd + 15) / 16 * 16 : 0;
    total = std::max(total, partitionEnd);
  }
  int64_t limit = getSharedMemoryPerCTA(ctasPerSM);
  if (total > limit)
    return ws.emitOpError("shared memory: the partitions need ")
           << total << " bytes, more than the " << limit << " a CTA can have";
  func->setAttr(kSharedMemoryAttrName, b.getI32IntegerAttr(total));
  ws.erase();
  return success();
}
