//===- ism-parse-fuzzer.cpp - Fuzzes parsing, verifying, printing -------===//
//
// libFuzzer target: parses the input as an MLIR module with ism's dialects,
// verifies it, prints it (custom and generic forms) and parses the printed
// custom form again, which must succeed: whatever the printer writes, the
// parser must read.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::unique_ptr<MLIRContext> context = ism_fuzz::makeContext();
  OwningOpRef<ModuleOp> module = ism_fuzz::parseModule(*context, data, size);
  if (!module)
    return 0;

  std::string custom, generic;
  {
    llvm::raw_string_ostream os(custom);
    module->print(os);
  }
  {
    llvm::raw_string_ostream os(generic);
    module->print(os, OpPrintingFlags().printGenericOpForm());
  }

  // The printed module must parse and verify again.
  OwningOpRef<ModuleOp> again = ism_fuzz::parseModule(
      *context, reinterpret_cast<const uint8_t *>(custom.data()),
      custom.size());
  if (!again) {
    std::fprintf(stderr, "ism-parse-fuzzer: the printed module does not "
                         "parse again:\n%s\n",
                 custom.c_str());
    std::abort();
  }
  return 0;
}
