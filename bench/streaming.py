#!/usr/bin/env python3
"""User-style streaming kernels: ism (Python builder) against the same
algorithm in Triton, PyTorch, and the read and copy rooflines, in one run
(issue 46, item 4).

The kernels are not among the examples: each program loops over a long row
(or a long column, or the K dimension) in chunks with `for_range`, the way a
user writes them, and the Triton versions (bench/streaming_triton.py) have
the same chunk and loop structure, with masks:

  lse        online log-sum-exp of each row of x (R x N) -> f32 (R): per-lane
             running max and sum tiles carried by the loop, reduced at the
             end; padding -inf, initial max -1e30 (no NaN), one exp per
             element (e = exp(-|v - m|), the larger side scales)
  softmax    the online max/sum pass of lse, then a normalise-and-store pass
  layernorm  pass 1: per-lane sum and sum of squares; pass 2: normalise with
             weight and bias and store (x's dtype)
  colsum     sum over the rows of x (R x C) -> f32 (C): a program owns
             `block` columns and loops over the rows, chunk / block at a time
  gemv       y = W x, W (N x K), x (K) -> f32 (N): a program owns `block`
             rows of W and loops over K, chunk / block at a time

    python3 bench/streaming.py --out DIR [--quick] [--only lse,softmax]
        [--dtypes bf16,f32] [--widths 3001,8192] [--reps 100]

Needs torch, triton and ism (the wheel or the build tree on PYTHONPATH) on a
GPU. Every case is >= 256 MiB of input (--min-mib), plus the single-row
1 x 65536 case of each row kernel. For each case: ism and Triton are run
once on fresh random data with their outputs poisoned (NaN) and checked
against a float64 PyTorch reference (a failure marks the row FAIL); then
ism, Triton, PyTorch (torch.logsumexp, torch.softmax, F.layer_norm,
x.sum(0, dtype=f32), torch.mv, in x's dtype: PyTorch's kernels accumulate in
f32), a read-only kernel over the same bytes (the faster of a Triton XOR
reduction and x.sum()) and a device copy y.copy_(x) are timed in
interleaved rounds (bench.py's Timer: CUDA events, L2 flushed before every
repetition, median). Bytes moved are the inputs read once plus the outputs
written once (softmax's second pass over the row is not counted: the row's
second read can come from L2). % roof is of the read kernel's GB/s for the
kernels that only read (lse, colsum, gemv) and of the copy's (read + write
counted) for those that also write a row (softmax, layernorm). The SM clock
and board power are sampled during the run (pynvml, else nvidia-smi) and
reported per case (medians).

The issue's target, per row of >= 256 MB: ism >= 90% of its roofline and
>= 1.1x Triton (Triton time / ism time).

Writes streaming.csv, streaming.json and streaming.png (% of roofline per
case for ism, Triton and PyTorch) under --out; prints the table last.

Nothing at import time needs torch, triton, ism or a GPU: the kernel
builders and NumPy references are importable on their own
(test/python/test_bench_streaming.py runs the ism kernels in the float64
reference interpreter).
"""
import argparse
import contextlib
import csv
import json
import math
import os
import statistics
import subprocess
import sys
import threading
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))

KERNELS = ("lse", "softmax", "layernorm", "colsum", "gemv")
ROW_KERNELS = ("lse", "softmax", "layernorm")
WRITES_ROW = ("softmax", "layernorm")  # roofline: the copy, not the read
DTYPES = ("bf16", "f16", "f32")
ELEMENT_BYTES = {"bf16": 2, "f16": 2, "f32": 4}
EPS = 1e-5
NEG_INIT = -1e30  # the running max's start: finite, so max - max is 0
TARGET_MIN_BYTES = 256_000_000  # the issue's ">= 256 MB"
TARGET_PCT = 90.0
TARGET_X_TRITON = 1.1

# Widths (row length N, columns C, K): multiples of 8 and not.
WIDTHS = {"lse": (3001, 4096, 8191, 16384, 32000, 65536),
          "softmax": (3001, 4096, 8191, 16384, 32000, 65536),
          "layernorm": (3001, 4096, 8191, 16384, 32000, 65536),
          "colsum": (8191, 16384, 32000, 65536),
          "gemv": (3001, 4096, 8191, 16384, 32000, 65536)}
QUICK_WIDTHS = {"lse": (4096, 8191), "softmax": (4096, 8191),
                "layernorm": (4096, 8191), "colsum": (8191, 32000),
                "gemv": (4096, 8191)}
SINGLE_ROW = 65536


def default_chunk(dtype):
    """Elements per loop iteration: 4096 for 16-bit types, 2048 for f32
    (8 KiB a program and iteration either way)."""
    return 2048 if ELEMENT_BYTES[dtype] == 4 else 4096


DEFAULT_BLOCK = {"colsum": 64, "gemv": 8}


def tile_shape(kernel, chunk, block=None):
    """The 2-D tile of colsum and gemv: (rows, columns) of one iteration.
    colsum: (chunk / block) rows of `block` columns; gemv: `block` rows of
    (chunk / block) K elements."""
    block = block or DEFAULT_BLOCK[kernel]
    if chunk % block or chunk // block < 1:
        raise ValueError(f"{kernel}: chunk {chunk} is not a multiple of "
                         f"block {block}")
    if kernel == "colsum":
        return chunk // block, block
    return block, chunk // block


# --- the ism kernels (Python builder) ---------------------------------------

def _new_module(context=None):
    import ism
    return ism, ism.Module(context)


def build_lse(dtype="bf16", chunk=None, warps=4, load_stages=None,
              context=None, **_):
    """@lse(x: R x N, out: R f32); @main launches one program per row."""
    chunk = chunk or default_chunk(dtype)
    ism, m = _new_module(context)
    x_t = ism.memref((None, None), dtype, context)
    o_t = ism.memref((None,), "f32", context)
    with m.kernel("lse", [x_t, o_t], num_warps=warps,
                  load_stages=load_stages) as k:
        x, out = k.args
        row = k.program_id("x")
        n = k.dim(x, 1)
        mx, s = _online_max_sum(k, x, row, n, chunk)
        big = k.max(mx, 0)
        total = k.sum(s * k.exp(mx - big), 0)
        k.store(k.splat(big + k.log(total), (1,)), out, [row])
    with m.host("main", [x_t, o_t]) as h:
        x, out = h.args
        h.launch("lse", [h.dim(x, 0)], [x, out])
    return m


def _online_max_sum(k, x, row, n, chunk):
    """The loop over row `row` of x: per-lane running max m and sum s with
    sum(s * exp(m - M)) = sum(exp(x - M)). Past the row's end the load reads
    -inf, which adds exp(-inf) = 0."""
    def body(c, m, s):
        t = k.load(x, [row, c], (1, chunk), padding=-math.inf)
        v = k.reshape(t, (chunk,)).to("f32")
        e = k.exp(-k.abs(v - m))          # exp(min - max): one exp a lane
        s = k.where(v > m, s * e + 1.0, s + e)
        return k.maximum(m, v), s
    m0 = k.full((chunk,), NEG_INIT, "f32")
    s0 = k.zeros((chunk,), "f32")
    return k.for_range(0, n, chunk, [m0, s0], body)


def build_softmax(dtype="bf16", chunk=None, warps=4, load_stages=None,
              context=None, **_):
    """@softmax(x: R x N, y: R x N); @main: one program per row."""
    chunk = chunk or default_chunk(dtype)
    ism, m = _new_module(context)
    x_t = ism.memref((None, None), dtype, context)
    with m.kernel("softmax", [x_t, x_t], num_warps=warps,
                  load_stages=load_stages) as k:
        x, y = k.args
        row = k.program_id("x")
        n = k.dim(x, 1)
        mx, s = _online_max_sum(k, x, row, n, chunk)
        big = k.max(mx, 0)
        inv = 1.0 / k.sum(s * k.exp(mx - big), 0)
        with k.for_range(0, n, chunk) as loop:
            c = loop.iv
            t = k.load(x, [row, c], (1, chunk), padding=-math.inf)
            v = k.reshape(t, (chunk,)).to("f32")
            p = (k.exp(v - big) * inv).to(dtype)
            k.store(k.reshape(p, (1, chunk)), y, [row, c])
    with m.host("main", [x_t, x_t]) as h:
        x, y = h.args
        h.launch("softmax", [h.dim(x, 0)], [x, y])
    return m


def build_layernorm(dtype="bf16", chunk=None, warps=4, load_stages=None,
              context=None, **_):
    """@layernorm(x: R x N, w: N, b: N, y: R x N, eps: f32); @main: one
    program per row."""
    chunk = chunk or default_chunk(dtype)
    ism, m = _new_module(context)
    x_t = ism.memref((None, None), dtype, context)
    v_t = ism.memref((None,), dtype, context)
    with m.kernel("layernorm", [x_t, v_t, v_t, x_t, "f32"],
                  num_warps=warps,
                  load_stages=load_stages) as k:
        x, w, b, y, eps = k.args
        row = k.program_id("x")
        n = k.dim(x, 1)

        def stats(c, acc, acc2):
            t = k.load(x, [row, c], (1, chunk))   # past the end: 0
            v = k.reshape(t, (chunk,)).to("f32")
            return acc + v, acc2 + v * v
        zero = k.zeros((chunk,), "f32")
        acc, acc2 = k.for_range(0, n, chunk, [zero, zero], stats)
        nf = n.to("f32")
        mean = k.sum(acc, 0) / nf
        var = k.sum(acc2, 0) / nf - mean * mean
        rstd = k.rsqrt(var + eps)
        with k.for_range(0, n, chunk) as loop:
            c = loop.iv
            t = k.load(x, [row, c], (1, chunk))
            v = k.reshape(t, (chunk,)).to("f32")
            wv = k.load(w, [c], (chunk,)).to("f32")
            bv = k.load(b, [c], (chunk,)).to("f32")
            o = ((v - mean) * rstd * wv + bv).to(dtype)
            k.store(k.reshape(o, (1, chunk)), y, [row, c])
    with m.host("main", [x_t, v_t, v_t, x_t, "f32"]) as h:
        x, w, b, y, eps = h.args
        h.launch("layernorm", [h.dim(x, 0)], [x, w, b, y, eps])
    return m


def build_colsum(dtype="bf16", chunk=None, warps=4, load_stages=None,
              block=None, context=None,
                 **_):
    """@colsum(x: R x C, out: C f32); @main: ceil(C / block) programs."""
    chunk = chunk or default_chunk(dtype)
    br, bc = tile_shape("colsum", chunk, block)
    ism, m = _new_module(context)
    x_t = ism.memref((None, None), dtype, context)
    o_t = ism.memref((None,), "f32", context)
    with m.kernel("colsum", [x_t, o_t], num_warps=warps,
                  load_stages=load_stages) as k:
        x, out = k.args
        c0 = k.program_id("x") * bc
        rows = k.dim(x, 0)

        def body(r, acc):
            return acc + k.load(x, [r, c0], (br, bc)).to("f32")
        acc = k.for_range(0, rows, br, [k.zeros((br, bc), "f32")], body)
        k.store(k.sum(acc, 0), out, [c0])
    with m.host("main", [x_t, o_t]) as h:
        x, out = h.args
        h.launch("colsum", [h.ceildiv(h.dim(x, 1), bc)], [x, out])
    return m


def build_gemv(dtype="bf16", chunk=None, warps=4, load_stages=None,
              block=None, context=None,
               **_):
    """@gemv(W: N x K, x: K, y: N f32); @main: ceil(N / block) programs."""
    chunk = chunk or default_chunk(dtype)
    bn, bk = tile_shape("gemv", chunk, block)
    ism, m = _new_module(context)
    w_t = ism.memref((None, None), dtype, context)
    x_t = ism.memref((None,), dtype, context)
    y_t = ism.memref((None,), "f32", context)
    with m.kernel("gemv", [w_t, x_t, y_t], num_warps=warps,
                  load_stages=load_stages) as k:
        w, x, y = k.args
        r0 = k.program_id("x") * bn
        kdim = k.dim(w, 1)

        def body(kk, acc):
            wt = k.load(w, [r0, kk], (bn, bk)).to("f32")
            xt = k.load(x, [kk], (bk,)).to("f32")
            return acc + wt * k.broadcast(k.expand_dims(xt, 0), (bn, bk))
        acc = k.for_range(0, kdim, bk, [k.zeros((bn, bk), "f32")], body)
        k.store(k.sum(acc, 1), y, [r0])
    with m.host("main", [w_t, x_t, y_t]) as h:
        w, x, y = h.args
        h.launch("gemv", [h.ceildiv(h.dim(w, 0), bn)], [w, x, y])
    return m


BUILDERS = {"lse": build_lse, "softmax": build_softmax,
            "layernorm": build_layernorm, "colsum": build_colsum,
            "gemv": build_gemv}


def build(kernel, dtype="bf16", chunk=None, warps=4, block=None,
          context=None, load_stages=None):
    """The ism module (kernel + @main) of `kernel` for this configuration."""
    return BUILDERS[kernel](dtype=dtype, chunk=chunk, warps=warps,
                            block=block, context=context,
                            load_stages=load_stages)


# --- shapes and bytes ---------------------------------------------------------

def shapes(kernel, rows, width):
    """name -> (shape, dtype or None for x's) of @main's arguments, in
    order, for a case of `rows` x `width` (gemv: W is rows x width)."""
    if kernel == "lse":
        return [("x", (rows, width), None), ("out", (rows,), "f32")]
    if kernel == "softmax":
        return [("x", (rows, width), None), ("y", (rows, width), None)]
    if kernel == "layernorm":
        return [("x", (rows, width), None), ("w", (width,), None),
                ("b", (width,), None), ("y", (rows, width), None)]
    if kernel == "colsum":
        return [("x", (rows, width), None), ("out", (width,), "f32")]
    return [("W", (rows, width), None), ("x", (width,), None),
            ("y", (rows,), "f32")]


OUTPUTS = {"lse": ("out",), "softmax": ("y",), "layernorm": ("y",),
           "colsum": ("out",), "gemv": ("y",)}


def bytes_moved(kernel, dtype, rows, width):
    """Inputs read once plus outputs written once."""
    total = 0
    for _, shape, dt in shapes(kernel, rows, width):
        total += math.prod(shape) * ELEMENT_BYTES[dt or dtype]
    return total


def rows_for(kernel, dtype, width, min_bytes):
    """Rows (gemv: rows of W; colsum: rows of x) so that the streamed
    input is at least min_bytes."""
    return max(1, -(-min_bytes // (width * ELEMENT_BYTES[dtype])))


# --- references and checks (NumPy float64; the GPU run uses torch) ------------

def reference_np(kernel, arrays, eps=EPS):
    """(float64 reference output, error scale) of `kernel` on float64 NumPy
    inputs (the dict of shapes()'s names). The scale is what each output's
    error is measured against (tolerance()): |ref| for element-wise
    outputs, sum |terms| for the sums."""
    import numpy as np
    if kernel == "gemv":
        w, x = arrays["W"], arrays["x"]
        return w @ x, np.abs(w) @ np.abs(x)
    x = arrays["x"]
    if kernel == "colsum":
        return x.sum(0), np.abs(x).sum(0)
    rows, n = x.shape
    if kernel == "lse":
        if n == 0:
            ref = np.full(rows, -np.inf)
        else:
            mx = x.max(1)
            ref = mx + np.log(np.exp(x - mx[:, None]).sum(1))
        return ref, np.abs(ref)
    if n == 0:
        ref = np.zeros((rows, 0))
        return ref, ref
    if kernel == "softmax":
        e = np.exp(x - x.max(1, keepdims=True))
        ref = e / e.sum(1, keepdims=True)
        return ref, np.abs(ref)
    mean = x.mean(1, keepdims=True)
    var = ((x - mean) ** 2).mean(1, keepdims=True)
    ref = (x - mean) / np.sqrt(var + eps) * arrays["w"] + arrays["b"]
    return ref, np.abs(ref)


def reference_torch(kernel, tensors, eps=EPS):
    """reference_np on CUDA tensors, in float64 on the GPU."""
    import torch
    t = {name: v.double() for name, v in tensors.items()
         if name not in OUTPUTS[kernel]}
    if kernel == "gemv":
        return t["W"] @ t["x"], t["W"].abs() @ t["x"].abs()
    x = t["x"]
    if kernel == "colsum":
        return x.sum(0), x.abs().sum(0)
    if kernel == "lse":
        ref = torch.logsumexp(x, -1)
        return ref, ref.abs()
    if kernel == "softmax":
        ref = torch.softmax(x, -1)
        return ref, ref.abs()
    ref = torch.nn.functional.layer_norm(x, (x.shape[1],), t["w"], t["b"],
                                         eps)
    return ref, ref.abs()


# Output rounding (rtol) of x's dtype for the row outputs; the f32 sums'
# error is measured against sum |terms| (f32 accumulation), lse's against
# |lse| with an absolute floor.
_ROUND = {"bf16": 8e-3, "f16": 1.5e-3, "f32": 3e-5}
_FLOOR = {"bf16": 1e-6, "f16": 1e-7, "f32": 1e-9}  # f16 subnormal steps


def tolerance(kernel, dtype):
    """(atol, rtol): an output passes when |out - ref| <= atol + rtol *
    scale (reference_*()'s scale)."""
    if kernel == "lse":
        return 1e-4, 1e-5
    if kernel in ("colsum", "gemv"):
        return 1e-6, 2e-5
    if kernel == "softmax":
        return _FLOOR[dtype], _ROUND[dtype]
    return 1e-4, _ROUND[dtype]  # layernorm


def worst_ratio(out, ref, scale, atol, rtol):
    """max over elements of |out - ref| / (atol + rtol * scale), for NumPy
    arrays or torch tensors alike; a NaN anywhere (a poisoned output left
    unwritten) is inf, equal infinities (lse of an empty row) are 0. <= 1
    passes."""
    try:  # inf - inf and 0 / 0 are expected here
        import numpy as np
        quiet = np.errstate(invalid="ignore", divide="ignore", over="ignore")
    except ImportError:
        quiet = contextlib.nullcontext()
    with quiet:
        bound = scale * rtol + atol
        ratio = abs(out - ref) / bound
        ratio[out == ref] = 0
        ratio[ratio != ratio] = math.inf
    flat = ratio.reshape(-1)
    return float(flat.max()) if len(flat) else 0.0


# --- the benchmark (GPU) ---------------------------------------------------------

class GpuMonitor:
    """The SM clock (MHz) and board power (W) sampled every `interval`
    seconds in a thread: through pynvml (nvidia-ml-py) when importable,
    else an `nvidia-smi -lms` process; no samples when neither works.
    `window(t0, t1)` gives the medians of the samples taken between two
    time.monotonic() readings."""

    def __init__(self, interval=0.05):
        self.interval = interval
        self.samples = []  # (monotonic s, clock MHz, watts)
        self.source = None
        self._stop = threading.Event()
        self._thread = None
        self._proc = None

    def start(self, cuda_index=0):
        try:
            import pynvml
            pynvml.nvmlInit()
            handle = self._nvml_handle(pynvml, cuda_index)

            def read():
                return (pynvml.nvmlDeviceGetClockInfo(
                            handle, pynvml.NVML_CLOCK_SM),
                        pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0)
            read()
            self.source = "pynvml"
            self._thread = threading.Thread(target=self._poll, args=(read,),
                                            daemon=True)
        except Exception:
            try:
                self._proc = subprocess.Popen(
                    ["nvidia-smi", "-i", str(self._smi_index(cuda_index)),
                     "--query-gpu=clocks.sm,power.draw",
                     "--format=csv,noheader,nounits",
                     "-lms", str(max(20, int(self.interval * 1000)))],
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                    text=True)
            except OSError:
                self.source = None
                return self
            self.source = "nvidia-smi"
            self._thread = threading.Thread(target=self._read_smi,
                                            daemon=True)
        self._thread.start()
        return self

    @staticmethod
    def _smi_index(cuda_index):
        visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
        entries = [e.strip() for e in visible.split(",") if e.strip()]
        if cuda_index < len(entries) and entries[cuda_index].isdigit():
            return int(entries[cuda_index])
        return cuda_index

    def _nvml_handle(self, pynvml, cuda_index):
        try:
            import torch
            p = torch.cuda.get_device_properties(cuda_index)
            bus = (f"{p.pci_domain_id:08x}:{p.pci_bus_id:02x}:"
                   f"{p.pci_device_id:02x}.0")
            return pynvml.nvmlDeviceGetHandleByPciBusId(bus)
        except Exception:
            return pynvml.nvmlDeviceGetHandleByIndex(
                self._smi_index(cuda_index))

    def _poll(self, read):
        while not self._stop.is_set():
            try:
                clock, watts = read()
                self.samples.append((time.monotonic(), float(clock), watts))
            except Exception:
                pass
            self._stop.wait(self.interval)

    def _read_smi(self):
        for line in self._proc.stdout:
            parts = [p.strip() for p in line.split(",")]
            try:
                self.samples.append((time.monotonic(), float(parts[0]),
                                     float(parts[1])))
            except (ValueError, IndexError):
                continue

    def stop(self):
        self._stop.set()
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def window(self, t0, t1):
        """(median SM clock, median watts, samples) between t0 and t1."""
        inside = [s for s in self.samples if t0 <= s[0] <= t1]
        if not inside:
            return None, None, 0
        return (statistics.median(s[1] for s in inside),
                statistics.median(s[2] for s in inside), len(inside))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="streaming-out",
                   help="directory for streaming.csv/json/png")
    p.add_argument("--quick", action="store_true",
                   help="two widths a kernel (one a multiple of 8, one "
                   "not), bf16 and f32")
    p.add_argument("--only", default="",
                   help="comma-separated kernels (" + ",".join(KERNELS) + ")")
    p.add_argument("--dtypes", default="", help="comma-separated: "
                   + ",".join(DTYPES))
    p.add_argument("--widths", default="",
                   help="comma-separated widths (N, C or K) for every kernel")
    p.add_argument("--min-mib", type=float, default=None,
                   help="input size of a case in MiB (default 256)")
    p.add_argument("--no-single-row", action="store_true",
                   help="leave out the 1 x 65536 cases")
    p.add_argument("--chunk16", type=int, default=4096,
                   help="elements a loop iteration for bf16/f16")
    p.add_argument("--chunk32", type=int, default=2048,
                   help="elements a loop iteration for f32")
    p.add_argument("--warps", type=int, default=4,
                   help="num_warps of every ism and Triton kernel")
    p.add_argument("--load-stages", type=int, default=None,
                   help="load_stages of every ism kernel (how far a loop's "
                        "loads run ahead; default: the compiler's choice, "
                        "1: not at all)")
    p.add_argument("--colsum-block", type=int, default=DEFAULT_BLOCK["colsum"],
                   help="columns a colsum program owns")
    p.add_argument("--gemv-block", type=int, default=DEFAULT_BLOCK["gemv"],
                   help="rows of W a gemv program owns")
    p.add_argument("--triton-stages", type=int, default=None,
                   help="num_stages of the Triton kernels (default: "
                   "Triton's)")
    p.add_argument("--reps", type=int, default=100)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3,
                   help="interleaved timing rounds (clock drift)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cpu-dry-run", action="store_true",
                   help="no GPU: run the script's plumbing on tiny CPU "
                   "cases (Triton's interpreter, ism's reference "
                   "interpreter, wall-clock times); use with small "
                   "--min-mib, --widths, --chunk16/32")
    return p.parse_args(argv)


def plan(args):
    """The cases: dicts with kernel, dtype, rows, width."""
    kernels = [k for k in args.only.split(",") if k] or list(KERNELS)
    for k in kernels:
        if k not in KERNELS:
            raise SystemExit(f"streaming: unknown kernel {k!r}; one of "
                             f"{', '.join(KERNELS)}")
    dtypes = [d for d in args.dtypes.split(",") if d] or (
        ["bf16", "f32"] if args.quick else list(DTYPES))
    for d in dtypes:
        if d not in DTYPES:
            raise SystemExit(f"streaming: unknown dtype {d!r}")
    forced = [int(w) for w in args.widths.split(",") if w]
    mib = args.min_mib or 256
    cases = []
    for kernel in kernels:
        for dtype in dtypes:
            widths = forced or (QUICK_WIDTHS if args.quick else WIDTHS)[kernel]
            for width in widths:
                cases.append(dict(kernel=kernel, dtype=dtype, width=width,
                                  rows=rows_for(kernel, dtype, width,
                                                int(mib * 2**20))))
            if kernel in ROW_KERNELS and not args.no_single_row:
                cases.append(dict(kernel=kernel, dtype=dtype, rows=1,
                                  width=SINGLE_ROW))
    return cases


def config(args, kernel, dtype):
    chunk = args.chunk32 if ELEMENT_BYTES[dtype] == 4 else args.chunk16
    block = {"colsum": args.colsum_block, "gemv": args.gemv_block}.get(kernel)
    return dict(chunk=chunk, warps=args.warps, block=block,
                load_stages=args.load_stages)


def run_case(case, args, env):
    """Checks and times one case; returns its row."""
    import torch
    st, timer, monitor = env["triton"], env["timer"], env["monitor"]
    kernel, dtype, rows, width = (case["kernel"], case["dtype"],
                                  case["rows"], case["width"])
    tdt = {"bf16": torch.bfloat16, "f16": torch.float16,
           "f32": torch.float32}[dtype]
    cfg = config(args, kernel, dtype)
    nbytes = bytes_moved(kernel, dtype, rows, width)
    in_bytes = rows * width * ELEMENT_BYTES[dtype]
    row = dict(kernel=kernel, dtype=dtype, shape=f"{rows}x{width}",
               rows=rows, width=width, mb=nbytes / 1e6,
               chunk=cfg["chunk"], warps=cfg["warps"], block=cfg["block"],
               ism_check="-", triton_check="-", ism_err=None,
               triton_err=None, error="")

    dev = env["device"]
    gen = torch.Generator(device=dev).manual_seed(
        args.seed * 1000003 + zlib.crc32(f"{kernel} {dtype} {rows} "
                                         f"{width}".encode()))
    tensors = {}
    for name, shape, dt in shapes(kernel, rows, width):
        t = tdt if dt is None else torch.float32
        if name in OUTPUTS[kernel]:
            tensors[name] = torch.empty(shape, dtype=t, device=dev)
        else:
            tensors[name] = torch.randn(shape, dtype=t, device=dev,
                                        generator=gen)
    ins = [tensors[n] for n, _, _ in shapes(kernel, rows, width)]
    out = tensors[OUTPUTS[kernel][0]]
    ref, scale = reference_torch(kernel, tensors)
    atol, rtol = tolerance(kernel, dtype)

    # ism and Triton: poisoned output, one run, check.
    fns = {}
    program = env["ism"](kernel, dtype, cfg)
    if isinstance(program, Exception):
        row["ism_check"] = "ERROR"
        row["error"] += f"ism: {program}; "
    else:
        call = (lambda: program(*ins, EPS)) if kernel == "layernorm" \
            else (lambda: program(*ins))
        fns["ism"] = call
    triton_fn = st.runner(kernel, ins, cfg, EPS, args.triton_stages)
    fns["triton"] = triton_fn
    for impl in ("ism", "triton"):
        if impl not in fns:
            continue
        out.fill_(float("nan"))
        try:
            fns[impl]()
            env["sync"]()
        except Exception as e:  # report it, keep benchmarking the others
            row[f"{impl}_check"] = "ERROR"
            row["error"] += f"{impl}: {str(e).splitlines()[0][:200]}; "
            del fns[impl]
            continue
        err = worst_ratio(out.double(), ref, scale, atol, rtol)
        row[f"{impl}_err"] = err
        row[f"{impl}_check"] = "ok" if err <= 1.0 else "FAIL"
    del ref, scale

    # Baselines over the same bytes.
    x = ins[0]
    fns["torch"] = env["torch_fn"](kernel, tensors)
    flat8 = x.reshape(-1).view(torch.uint8)
    words = flat8[:flat8.numel() // 4 * 4].view(torch.int32)
    partial = torch.empty(st.read_programs(words.numel()), dtype=torch.int32,
                          device=dev)
    fns["read_triton"] = lambda: st.run_read(words, partial)
    fns["read_torch"] = lambda: x.sum()
    copy_dst = torch.empty_like(x)
    fns["copy"] = lambda: copy_dst.copy_(x)

    t0 = time.monotonic()
    ms = timer.interleaved(fns, rounds=args.rounds)
    t1 = time.monotonic()
    clock, watts, nsamples = monitor.window(t0, t1)

    def gbps(b, t):
        return b / (t * 1e-3) / 1e9 if t else None

    read_gbps = max(gbps(words.numel() * 4, ms["read_triton"]),
                    gbps(in_bytes, ms["read_torch"]))
    copy_gbps = gbps(2 * in_bytes, ms["copy"])
    roof_kind = "copy" if kernel in WRITES_ROW else "read"
    roof = copy_gbps if roof_kind == "copy" else read_gbps
    for impl in ("ism", "triton", "torch"):
        t = ms.get(impl)
        row[f"{impl}_ms"] = t
        row[f"{impl}_gbps"] = gbps(nbytes, t)
        row[f"{impl}_pct"] = 100 * gbps(nbytes, t) / roof if t else None
    row.update(read_gbps=read_gbps, copy_gbps=copy_gbps,
               read_triton_ms=ms["read_triton"],
               read_torch_ms=ms["read_torch"], copy_ms=ms["copy"],
               roof=roof_kind, roof_gbps=roof,
               x_triton=(ms["triton"] / ms["ism"]
                         if "ism" in ms and "triton" in ms else None),
               x_torch=(ms["torch"] / ms["ism"] if "ism" in ms else None),
               clock_mhz=clock, watts=watts, power_samples=nsamples)
    row["target"] = target(row)
    return row  # the case's tensors go with this frame


def target(row):
    """The issue's target on this row: 'met', 'MISSED' or 'n/a' (smaller
    than 256 MB)."""
    if row["mb"] * 1e6 < TARGET_MIN_BYTES:
        return "n/a"
    ok = (row["ism_check"] == "ok" and row.get("ism_pct") is not None
          and row["ism_pct"] >= TARGET_PCT
          and row.get("x_triton") is not None
          and row["x_triton"] >= TARGET_X_TRITON)
    return "met" if ok else "MISSED"


def torch_baseline(kernel, t):
    """PyTorch's own op on the case's tensors (a new output tensor from
    the caching allocator, as bench.py does)."""
    import torch
    import torch.nn.functional as F
    if kernel == "lse":
        return lambda: torch.logsumexp(t["x"], -1)
    if kernel == "softmax":
        return lambda: torch.softmax(t["x"], -1)
    if kernel == "layernorm":
        n = t["x"].shape[1]
        return lambda: F.layer_norm(t["x"], (n,), t["w"], t["b"], EPS)
    if kernel == "colsum":
        return lambda: t["x"].sum(0, dtype=torch.float32)
    return lambda: torch.mv(t["W"], t["x"])


def fmt(v, spec=".3f"):
    return "-" if v is None else format(v, spec)


def table(rows):
    """The text table (one line per case)."""
    head = (f"{'kernel':<9} {'dt':<4} {'shape':>11} {'MB':>6} {'ism ms':>8} "
            f"{'tri ms':>8} {'pt ms':>8} {'ism GB/s':>8} {'tri GB/s':>8} "
            f"{'pt GB/s':>7} {'roof':>10} {'ism%':>5} {'tri%':>5} "
            f"{'pt%':>5} {'xtri':>5} {'xpt':>5} {'MHz':>5} {'W':>4} "
            f"{'check':>9} {'target':>6}")
    lines = [head]
    for r in rows:
        check = ("ok" if r["ism_check"] == r["triton_check"] == "ok" else
                 f"{r['ism_check']}/{r['triton_check']}")
        roof = f"{r['roof']} {fmt(r.get('roof_gbps'), '.0f')}"
        lines.append(
            f"{r['kernel']:<9} {r['dtype']:<4} {r['shape']:>11} "
            f"{fmt(r['mb'], '.0f' if r['mb'] >= 10 else '.2f'):>6} "
            f"{fmt(r.get('ism_ms')):>8} "
            f"{fmt(r.get('triton_ms')):>8} {fmt(r.get('torch_ms')):>8} "
            f"{fmt(r.get('ism_gbps'), '.0f'):>8} "
            f"{fmt(r.get('triton_gbps'), '.0f'):>8} "
            f"{fmt(r.get('torch_gbps'), '.0f'):>7} {roof:>10} "
            f"{fmt(r.get('ism_pct'), '.0f'):>5} "
            f"{fmt(r.get('triton_pct'), '.0f'):>5} "
            f"{fmt(r.get('torch_pct'), '.0f'):>5} "
            f"{fmt(r.get('x_triton'), '.2f'):>5} "
            f"{fmt(r.get('x_torch'), '.2f'):>5} "
            f"{fmt(r.get('clock_mhz'), '.0f'):>5} "
            f"{fmt(r.get('watts'), '.0f'):>4} {check:>9} {r['target']:>6}")
    return lines


def summary(rows):
    """Lines: the issue's target per kernel and overall, and the checks."""
    lines = []
    big = [r for r in rows if r["target"] != "n/a"]
    for kernel in KERNELS:
        mine = [r for r in big if r["kernel"] == kernel]
        if not mine:
            continue
        met = sum(r["target"] == "met" for r in mine)
        pct = [r["ism_pct"] for r in mine if r.get("ism_pct") is not None]
        xt = [r["x_triton"] for r in mine if r.get("x_triton") is not None]
        lines.append(
            f"target {kernel}: {met}/{len(mine)} rows met (ism >= "
            f"{TARGET_PCT:.0f}% of roofline and >= {TARGET_X_TRITON}x "
            f"Triton); ism % roof min {fmt(min(pct) if pct else None, '.0f')}"
            f", x Triton min {fmt(min(xt) if xt else None, '.2f')}")
    fails = [r for r in rows
             if r["ism_check"] != "ok" or r["triton_check"] != "ok"]
    met = sum(r["target"] == "met" for r in big)
    lines.append(f"target overall: {met}/{len(big)} rows of >= 256 MB met; "
                 f"checks: {len(rows) - len(fails)}/{len(rows)} rows ok"
                 + (", FAIL/ERROR on " + ", ".join(
                     f"{r['kernel']} {r['dtype']} {r['shape']}"
                     for r in fails) if fails else ""))
    return lines


def plot(rows, path, title):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("streaming: matplotlib missing; no plot written")
        return False
    kernels = [k for k in KERNELS if any(r["kernel"] == k for r in rows)]
    fig, axes = plt.subplots(len(kernels), 1, squeeze=False,
                             figsize=(max(8, 0.55 * max(
                                 sum(r["kernel"] == k for r in rows)
                                 for k in kernels) + 2), 3.2 * len(kernels)))
    width = 0.27
    for ax, kernel in zip(axes[:, 0], kernels):
        mine = [r for r in rows if r["kernel"] == kernel]
        xs = range(len(mine))
        for i, (key, label) in enumerate([("ism_pct", "ism"),
                                          ("triton_pct", "Triton"),
                                          ("torch_pct", "PyTorch")]):
            ax.bar([j + (i - 1) * width for j in xs],
                   [r.get(key) or 0 for r in mine], width, label=label)
        for j, r in enumerate(mine):
            if r["ism_check"] != "ok" or r["triton_check"] != "ok":
                ax.text(j, 5, "FAIL", ha="center", color="red", fontsize=7,
                        rotation=90)
        ax.axhline(TARGET_PCT, color="k", linestyle="--", linewidth=0.8)
        ax.set_xticks(list(xs))
        ax.set_xticklabels([f"{r['dtype']}\n{r['shape']}" for r in mine],
                           fontsize=7)
        roof = "copy" if kernel in WRITES_ROW else "read"
        ax.set_ylabel(f"% of {roof} GB/s")
        ax.set_title(kernel, fontsize=10)
        top = max([r.get(k) or 0 for r in mine
                   for k in ("ism_pct", "triton_pct", "torch_pct")] + [105])
        ax.set_ylim(0, top * 1.05)
    axes[0, 0].legend(loc="upper left", fontsize=8, ncol=3)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_outputs(rows, meta, out):
    os.makedirs(out, exist_ok=True)
    keys = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with open(os.path.join(out, "streaming.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(out, "streaming.json"), "w") as f:
        json.dump(dict(meta, rows=rows), f, indent=1)


class _WallTimer:
    """--cpu-dry-run's stand-in for bench.Timer: wall-clock medians."""

    def __init__(self, warmup, reps):
        self.warmup, self.reps = warmup, reps

    def interleaved(self, fns, rounds=3):
        times = {name: [] for name in fns}
        for _ in range(rounds):
            for name, fn in fns.items():
                for i in range(self.warmup + self.reps):
                    t0 = time.perf_counter()
                    fn()
                    if i >= self.warmup:
                        times[name].append((time.perf_counter() - t0) * 1e3)
        return {name: statistics.median(t) for name, t in times.items()}


def _interpreted(module):
    """--cpu-dry-run's stand-in for a compiled program: ism.interpret on
    NumPy views of CPU tensors (bf16 as uint16 bit patterns)."""
    import numpy as np
    import torch
    import ism

    def view(t):
        if not isinstance(t, torch.Tensor):
            return t
        if t.dtype == torch.bfloat16:
            return t.view(torch.int16).numpy().view(np.uint16)
        return t.numpy()

    def call(*args):
        ism.interpret(module, "main", *[view(a) for a in args])
    return call


def main(argv=None):
    args = parse_args(argv)
    cases = plan(args)
    dry = args.cpu_dry_run
    if dry:  # before triton is imported
        os.environ["TRITON_INTERPRET"] = "1"
    import torch
    sys.path.insert(0, HERE)
    # Triton before ism: a build tree's ism loads libMLIR.so globally, and
    # libtriton.so's own LLVM loaded after it crashes (the wheel loads in
    # either order).
    import streaming_triton
    import ism

    if not dry and not torch.cuda.is_available():
        raise SystemExit("streaming: no CUDA device (--cpu-dry-run runs the "
                         "script's plumbing on the CPU)")
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)
    if dry:
        device = "CPU dry run (Triton and ism interpreters)"
        monitor = GpuMonitor()
        timer = _WallTimer(0, 1)
    else:
        from bench import Timer
        device = torch.cuda.get_device_name(0)
        monitor = GpuMonitor().start(torch.cuda.current_device())
        timer = Timer(args.warmup, args.reps)
    programs = {}

    def ism_program(kernel, dtype, cfg):
        key = (kernel, dtype, tuple(sorted(cfg.items())))
        if key not in programs:
            try:
                module = build(kernel, dtype, **cfg)
                programs[key] = (_interpreted(module) if dry
                                 else ism.compile(module))
            except Exception as e:  # a compile failure is a row's ERROR
                programs[key] = RuntimeError(str(e).splitlines()[0][:300])
        return programs[key]

    env = dict(triton=streaming_triton, timer=timer, monitor=monitor,
               ism=ism_program, torch_fn=torch_baseline,
               device="cpu" if dry else "cuda",
               sync=(lambda: None) if dry else torch.cuda.synchronize)
    print(f"streaming: {device}, {len(cases)} cases, monitor "
          f"{monitor.source or 'none'}", flush=True)
    rows = []
    start = time.monotonic()
    meta = dict(device=device, args=vars(args), monitor=monitor.source,
                torch=torch.__version__,
                triton=getattr(sys.modules.get("triton"), "__version__", None))
    try:
        for i, case in enumerate(cases):
            row = run_case(case, args, env)
            if not dry:
                torch.cuda.empty_cache()
            rows.append(row)
            print(f"[{i + 1}/{len(cases)}] {row['kernel']} {row['dtype']} "
                  f"{row['shape']} ({row['mb']:.0f} MB): ism "
                  f"{fmt(row.get('ism_pct'), '.0f')}% triton "
                  f"{fmt(row.get('triton_pct'), '.0f')}% torch "
                  f"{fmt(row.get('torch_pct'), '.0f')}% of {row['roof']} "
                  f"{fmt(row.get('roof_gbps'), '.0f')} GB/s, x Triton "
                  f"{fmt(row.get('x_triton'), '.2f')}, check "
                  f"{row['ism_check']}/{row['triton_check']}"
                  + (f" [{row['error']}]" if row["error"] else ""),
                  flush=True)
            # After every case, so that a run cut short keeps its rows.
            write_outputs(rows, meta, args.out)
    finally:
        monitor.stop()
    elapsed = time.monotonic() - start
    meta["seconds"] = elapsed
    samples = list(monitor.samples)
    meta["summary"] = summary(rows)
    if samples:
        clocks = [s[1] for s in samples]
        watts = [s[2] for s in samples]
        meta.update(clock_mhz_median=statistics.median(clocks),
                    watts_median=statistics.median(watts))
        meta["summary"].append(
            f"GPU during the run ({monitor.source}, {len(samples)} "
            f"samples): SM clock median {statistics.median(clocks):.0f} MHz "
            f"({min(clocks):.0f}-{max(clocks):.0f}), board power median "
            f"{statistics.median(watts):.0f} W (max {max(watts):.0f})")
    elif not dry:
        meta["summary"].append("GPU clock and power: no samples (neither "
                               "pynvml nor nvidia-smi worked)")
    write_outputs(rows, meta, args.out)
    plotted = plot(rows, os.path.join(args.out, "streaming.png"),
                   f"user-style streaming kernels, {device}\n% of the "
                   f"roofline (read; copy for softmax and layernorm) "
                   f"measured in the same run, median, L2 flushed; dashed: "
                   f"{TARGET_PCT:.0f}%")
    print()
    print(f"streaming: {len(rows)} cases in {elapsed:.0f} s; wrote "
          f"{args.out}/streaming.csv, streaming.json"
          + (", streaming.png" if plotted else ""))
    for line in table(rows):
        print(line)
    print("roof: the read kernel's GB/s (read) or the copy's, read + write "
          "(copy); xtri/xpt: Triton/PyTorch time over ism time (> 1: ism "
          "faster); MHz, W: medians while the case was timed")
    for line in meta["summary"]:
        print(line)
    bad = any(r["ism_check"] != "ok" or r["triton_check"] != "ok"
              for r in rows)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
