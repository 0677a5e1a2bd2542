"""Row softmax built from Python; reproduces examples/softmax.mlir.

    PYTHONPATH=build/python_packages python3 python/examples/softmax.py
"""

import math

import ism


def build_softmax(cols: int = 4096, num_warps: int = 4,
                  context: ism.Context = None) -> ism.Module:
    """One program per row of an fp16 matrix; fp32 arithmetic; a row of up
    to ``cols`` columns is one tile, and columns past its end read -inf."""
    m = ism.Module(context)
    buf = ism.memref((None, None), "f16", context)
    with m.kernel("softmax", [buf, buf], num_warps=num_warps) as k:
        x, y = k.args
        row = k.program_id("x")
        c0 = k.const(0, "index")
        t = k.load(x, [row, c0], (1, cols), padding=-math.inf)
        v = k.reshape(t, (cols,)).to("f32")
        mx = k.max(v, axis=0)
        e = k.exp(v - mx)
        s = k.sum(e, axis=0)
        p = (e / s).to("f16")
        k.store(k.reshape(p, (1, cols)), y, [row, c0])
    with m.host("main", [buf, buf]) as h:
        x, y = h.args
        c0, c1 = h.const(0, "index"), h.const(1, "index")
        rows, width = h.dim(x, c0), h.dim(x, c1)
        y_rows, y_width = h.dim(y, c0), h.dim(y, c1)
        h.require((y_rows == rows) & (y_width == width),
                  "x is {0}x{1} and y is {2}x{3}: they must have the same "
                  "shape", rows, width, y_rows, y_width)
        h.require(width <= h.const(cols, "index"),
                  "rows of {0} columns: this softmax takes rows of up to "
                  f"{cols}", width)
        h.launch("softmax", [rows], [x, y])
    return m


if __name__ == "__main__":
    print(build_softmax())
