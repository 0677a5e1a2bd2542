"""Tiled bf16 matrix product built from Python; reproduces
examples/matmul.mlir with the default tile sizes.

    PYTHONPATH=build/python_packages python3 python/examples/matmul.py
"""

import ism


def build_matmul(bm: int = 128, bn: int = 128, bk: int = 64,
                 num_warps: int = 8, element: str = "bf16",
                 context: ism.Context = None) -> ism.Module:
    """C = A x B with fp32 accumulation; each program computes one
    ``bm x bn`` block of C, stepping through K in ``bk``-wide slices."""
    m = ism.Module(context)
    buf = ism.memref((None, None), element, context)
    with m.kernel("matmul", [buf, buf, buf], num_warps=num_warps) as k:
        a_buf, b_buf, c_buf = k.args
        pm, pn = k.program_id("x"), k.program_id("y")
        c0, c1 = k.const(0, "index"), k.const(1, "index")
        block_m, block_n = k.const(bm, "index"), k.const(bn, "index")
        block_k = k.const(bk, "index")
        m0, n0 = pm * block_m, pn * block_n
        kdim = k.dim(a_buf, c1)
        zero = k.zeros((bm, bn), "f32")

        def step(kk, acc):
            a = k.load(a_buf, [m0, kk], (bm, bk))
            b = k.load(b_buf, [kk, n0], (bk, bn))
            return k.dot(a, b, acc)

        acc = k.for_range(c0, kdim, block_k, [zero], step)
        k.store(acc.to(element), c_buf, [m0, n0])
    with m.host("main", [buf, buf, buf]) as h:
        a_buf, b_buf, c_buf = h.args
        c0, c1 = h.const(0, "index"), h.const(1, "index")
        block = h.const(bm, "index")
        rows, cols = h.dim(a_buf, c0), h.dim(b_buf, c1)
        grid = [h.ceildiv(rows, block), h.ceildiv(cols, h.const(bn, "index")
                                                  if bn != bm else block)]
        h.launch("matmul", grid, [a_buf, b_buf, c_buf])
    return m


if __name__ == "__main__":
    print(build_matmul())
