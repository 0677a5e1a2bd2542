//===- ism-opt.cpp - ism optimizer driver ---------------------------------===//
//
// An mlir-opt-like driver: the ism dialect and passes plus the upstream
// dialects, passes and translations the ism pipeline lowers through.
//
//===----------------------------------------------------------------------===//

#include "ism/InitIsm.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::ism::registerAllIsmDialects(registry);
  mlir::ism::registerAllIsmPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "ism optimizer driver\n", registry));
}
