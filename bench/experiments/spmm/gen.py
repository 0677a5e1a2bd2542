import re, sys
src = open("examples/coschedule_matmul_spmm.mlir").read()
def variant(bn, ch):
    k = src[src.index("ism.kernel @spmm"):src.index("func.func @main")]
    k2 = (k.replace("tensor<32x128x", f"tensor<{ch}x{bn}x").replace("tensor<32x128xf32>", f"tensor<{ch}x{bn}xf32>")
           .replace("tensor<32x128xi32>", f"tensor<{ch}x{bn}xi32>")
           .replace("tensor<1x128x", f"tensor<1x{bn}x").replace("tensor<128x", f"tensor<{bn}x")
           .replace("tensor<32x1x", f"tensor<{ch}x1x").replace("tensor<32x", f"tensor<{ch}x")
           .replace("ism.range 0 to 32", f"ism.range 0 to {ch}").replace("ism.range 0 to 128", f"ism.range 0 to {bn}")
           .replace("%c128 = arith.constant 128", f"%c128 = arith.constant {bn}").replace("%c32 = arith.constant 32", f"%c32 = arith.constant {ch}"))
    out = src.replace(k, k2)
    m = out[out.index("func.func @main"):]
    m2 = m.replace("%block = arith.constant 128 : index", "%block = arith.constant 128 : index\n  %blockn = arith.constant " + str(bn) + " : index").replace("%gc = arith.ceildivui %cols, %block", "%gc = arith.ceildivui %cols, %blockn")
    return out.replace(m, m2)
bn, ch = int(sys.argv[1]), int(sys.argv[2])
sys.stdout.write(variant(bn, ch))
