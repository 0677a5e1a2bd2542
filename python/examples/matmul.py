"""Tiled bf16 matrix product built from Python; reproduces
examples/matmul.mlir with the default tile sizes. ``transpose_b=True``
builds ``x @ W^T`` for a weight stored N x K, as torch.nn.Linear keeps it
(each [BLOCK_N, BLOCK_K] tile of W is loaded and transposed; on sm_90a the
tensor cores read it K-major, nothing is copied).

    PYTHONPATH=build/python_packages python3 python/examples/matmul.py [--transpose-b]
"""

import sys

import ism


def build_matmul(bm: int = 128, bn: int = 128, bk: int = 64,
                 num_warps: int = 8, element: str = "bf16",
                 context: ism.Context = None,
                 transpose_b: bool = False) -> ism.Module:
    """C = A x B with fp32 accumulation; each program computes one
    ``bm x bn`` block of C, stepping through K in ``bk``-wide slices.
    With ``transpose_b`` the second argument is W (N x K) and C = A x W^T."""
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
            if transpose_b:
                b = k.trans(k.load(b_buf, [n0, kk], (bn, bk)))
            else:
                b = k.load(b_buf, [kk, n0], (bk, bn))
            return k.dot(a, b, acc)

        acc = k.for_range(c0, kdim, block_k, [zero], step)
        k.store(acc.to(element), c_buf, [m0, n0])
    with m.host("main", [buf, buf, buf]) as h:
        a_buf, b_buf, c_buf = h.args
        c0, c1 = h.const(0, "index"), h.const(1, "index")
        block = h.const(bm, "index")
        rows, inner = h.dim(a_buf, c0), h.dim(a_buf, c1)
        inner_b = h.dim(b_buf, c1 if transpose_b else c0)
        cols = h.dim(b_buf, c0 if transpose_b else c1)
        c_rows, c_cols = h.dim(c_buf, c0), h.dim(c_buf, c1)
        h.require(inner == inner_b,
                  ("A is {0}x{1} and W is {3}x{2}" if transpose_b else
                   "A is {0}x{1} and B is {2}x{3}") +
                  ": inner dimensions differ", rows, inner, inner_b, cols)
        h.require((c_rows == rows) & (c_cols == cols),
                  "C is {0}x{1} but A x B is {2}x{3}" if not transpose_b else
                  "C is {0}x{1} but A x W^T is {2}x{3}",
                  c_rows, c_cols, rows, cols)
        grid = [h.ceildiv(rows, block), h.ceildiv(cols, h.const(bn, "index")
                                                  if bn != bm else block)]
        h.launch("matmul", grid, [a_buf, b_buf, c_buf])
    return m


if __name__ == "__main__":
    print(build_matmul(transpose_b="--transpose-b" in sys.argv[1:]))
