//===- IsmEnums.td - ism enumerations ----------------------*- tablegen -*-===//

#ifndef ISM_DIALECT_ISM_IR_ISMENUMS_TD
#define ISM_DIALECT_ISM_IR_ISMENUMS_TD

include "mlir/IR/EnumAttr.td"

def Ism_GridAxis : I32EnumAttr<"GridAxis", "a dimension of the launch grid", [
    I32EnumAttrCase<"X", 0, "x">, I32EnumAttrCase<"Y", 1, "y">,
    I32EnumAttrCase<"Z", 2, "z">]> {
  let cppNamespace = "::mlir::ism";
}

def Ism_InputPrecision : I32EnumAttr<"InputPrecision",
    "how ism.dot treats f32 operands", [
    I32EnumAttrCase<"IEEE", 0, "ieee">, I32EnumAttrCase<"TF32", 1, "tf32">,
    I32EnumAttrCase<"TF32x3", 2, "tf32x3">]> {
  let cppNamespace = "::mlir::ism";
}

def Ism_AtomicKind : I32EnumAttr<"AtomicKind", "the update ism.atomic_rmw performs", [
    I32EnumAttrCase<"Add", 0, "add">, I32EnumAttrCase<"Max", 1, "max">,
    I32EnumAttrCase<"Min", 2, "min">, I32EnumAttrCase<"UMax", 3, "umax">,
    I32EnumAttrCase<"UMin", 4, "umin">, I32EnumAttrCase<"And", 5, "and">,
    I32EnumAttrCase<"Or", 6, "or">, I32EnumAttrCase<"Xor", 7, "xor">,
    I32EnumAttrCase<"Xchg", 8, "xchg">]> {
  let cppNamespace = "::mlir::ism";
}

def Ism_MemorySemantics : I32EnumAttr<"MemorySemantics",
    "how ism.atomic_rmw orders the program's other memory accesses", [
    I32EnumAttrCase<"Relaxed", 0, "relaxed">,
    I32EnumAttrCase<"Acquire", 1, "acquire">,
    I32EnumAttrCase<"Release", 2, "release">,
    I32EnumAttrCase<"AcqRel", 3, "acq_rel">]> {
  let cppNamespace = "::mlir::ism";
}

def Ism_CoschedulePolicy : I32EnumAttr<"CoschedulePolicy",
    "how ism.coschedule shares the SMs between its launches", [
    I32EnumAttrCase<"WarpSpecialized", 0, "warp_specialized">,
    I32EnumAttrCase<"BlockInterleaved", 1, "block_interleaved">,
    I32EnumAttrCase<"Ordered", 2, "ordered">]> {
  let cppNamespace = "::mlir::ism";
}

#endif // ISM_DIALECT_ISM_IR_ISMENUMS_TD
