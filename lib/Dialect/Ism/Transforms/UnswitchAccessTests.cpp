//===- UnswitchAccessTests.cpp - ism-unswitch-access-tests ------*- C++ -*-===//
//
// Versions a kernel's straight-line body on the fast-path tests of all its
// tile accesses at once: the tests are ANDed before the first access, and
// the body is cloned into an `scf.if` whose then-branch takes every
// access's fast path with no test left and whose else-branch is the body
// as it was (Passes.td has the details).
//
//===----------------------------------------------------------------------===//

#include "ism/Dialect/Ism/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::ism {
#define GEN_PASS_DEF_ISMUNSWITCHACCESSTESTS
#include "ism/Dialect/Ism/Transforms/Passes.h.inc"
} // namespace mlir::ism

using namespace mlir;
using namespace mlir::ism;

namespace {

/// Collects into `slice` (in no particular order) the ops of `block` that
/// compute `value`, when all of them are pure ops without regions whose
/// operands come, in the end, from `block`'s arguments or from such ops.
/// False when anything else feeds it.
bool collectPureSlice(Value value, Block *block,
                      llvm::SetVector<Operation *> &slice) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() == block;
  Operation *def = value.getDefiningOp();
  if (def->getBlock() != block || def->getNumRegions() != 0 || !isPure(def))
    return false;
  if (slice.contains(def))
    return true;
  for (Value operand : def->getOperands())
    if (!collectPureSlice(operand, block, slice))
      return false;
  slice.insert(def);
  return true;
}

/// Replaces `ifOp` by the ops of its then-branch.
void inlineThenBranch(RewriterBase &rewriter, scf::IfOp ifOp) {
  Block *then = ifOp.thenBlock();
  auto yield = cast<scf::YieldOp>(then->getTerminator());
  SmallVector<Value> results(yield.getOperands());
  rewriter.eraseOp(yield);
  rewriter.inlineBlockBefore(then, ifOp);
  rewriter.replaceOp(ifOp, results);
}

struct IsmUnswitchAccessTests
    : mlir::ism::impl::IsmUnswitchAccessTestsBase<IsmUnswitchAccessTests> {
  void runOnOperation() override {
    gpu::GPUFuncOp func = getOperation();
    if (func.getBody().empty())
      return;
    unswitch(func);
    func->walk([](scf::IfOp ifOp) { ifOp->removeAttr(kAccessTestAttrName); });
  }

  void unswitch(gpu::GPUFuncOp func) {
    Block *entry = &func.getBody().front();
    // The tested accesses of the entry block whose tests can move up.
    SmallVector<scf::IfOp> tests;
    llvm::SetVector<Operation *> slice;
    for (Operation &op : *entry) {
      auto ifOp = dyn_cast<scf::IfOp>(&op);
      if (!ifOp || !ifOp->hasAttr(kAccessTestAttrName))
        continue;
      llvm::SetVector<Operation *> opSlice(slice.begin(), slice.end());
      if (!collectPureSlice(ifOp.getCondition(), entry, opSlice))
        continue;
      slice = std::move(opSlice);
      tests.push_back(ifOp);
    }
    if (tests.size() < 2)
      return;
    Operation *first = tests.front();
    // Only straight-line code is versioned: a loop after the first access
    // would be duplicated for nothing (its accesses keep their tests).
    bool hasLoop = false;
    for (Operation *op = first; op; op = op->getNextNode())
      op->walk([&](LoopLikeOpInterface) { hasLoop = true; });
    if (hasLoop)
      return;

    // The tests' computations move above the first access, in order.
    for (Operation &op : llvm::make_early_inc_range(*entry))
      if (slice.contains(&op) && first->isBeforeInBlock(&op))
        op.moveBefore(first);

    // Nothing after the body uses its values: it ends at the terminator,
    // which (gpu.return of a kernel) takes none.
    Operation *terminator = entry->getTerminator();
    if (terminator->getNumOperands() != 0)
      return;

    IRRewriter rewriter(func.getContext());
    rewriter.setInsertionPoint(first);
    Location loc = first->getLoc();
    Value all = tests.front().getCondition();
    for (scf::IfOp test : ArrayRef(tests).drop_front())
      all = arith::AndIOp::create(rewriter, loc, all, test.getCondition());

    // [first, terminator) becomes the else-branch; a clone of it, with the
    // tested accesses on their fast paths, the then-branch.
    auto version =
        scf::IfOp::create(rewriter, loc, TypeRange{}, all, /*withElse=*/true);
    Block *fast = version.thenBlock(), *edge = version.elseBlock();
    SmallVector<Operation *> body;
    for (Operation *op = first; op != terminator; op = op->getNextNode())
      body.push_back(op);
    IRMapping mapping;
    rewriter.setInsertionPoint(fast->getTerminator());
    for (Operation *op : body)
      rewriter.clone(*op, mapping);
    for (Operation *op : body)
      op->moveBefore(edge->getTerminator());
    for (scf::IfOp test : tests)
      inlineThenBranch(rewriter,
                       cast<scf::IfOp>(mapping.lookup(test.getOperation())));
  }
};

} // namespace
