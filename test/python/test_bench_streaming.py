"""bench/streaming.py's ism kernels on the CPU (issue 46, item 4): each kernel
(online log-sum-exp, two-pass softmax and layernorm, column sum, GEMV)
built with the Python builder for a few widths and dtypes, run in the
float64 reference interpreter against a NumPy float64 reference with its
outputs poisoned (NaN) first: partial last chunks, one-chunk rows, widths
that are and are not multiples of 8, and empty loops (width 0, or no rows
for the column sum). The default configurations lower to PTX. The
benchmark's plan, target and table logic on made-up rows; the Triton
versions in Triton's interpreter where torch and Triton are installed; the
shared-memory microbenchmark compiles where nvcc is. No GPU."""

import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

import ism
from conftest import ROOT

np = pytest.importorskip("numpy")

sys.path.insert(0, os.path.join(ROOT, "bench"))
import streaming  # noqa: E402

BF16_NAN = 0x7FC0


def to_bits(a):
    """float32 values -> bf16 bit patterns (round to nearest even)."""
    u = np.ascontiguousarray(a, np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16)


def from_bits(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


def make_array(rng, shape, dtype, out=False):
    """(array passed to ism, its float64 values). Outputs are NaN."""
    if dtype == "bf16":
        if out:
            bits = np.full(shape, BF16_NAN, np.uint16)
        else:
            bits = to_bits(rng.standard_normal(shape))
        return bits, from_bits(bits).astype(np.float64)
    npdt = {"f16": np.float16, "f32": np.float32}[dtype]
    a = (np.full(shape, np.nan) if out else rng.standard_normal(shape))
    a = a.astype(npdt)
    return a, a.astype(np.float64)


def as_f64(a, dtype):
    return from_bits(a).astype(np.float64) if dtype == "bf16" and \
        a.dtype == np.uint16 else a.astype(np.float64)


def run_case(kernel, dtype, rows, width, chunk=64, block=None, warps=4,
             seed=0):
    """Runs the kernel in the interpreter; returns (worst error ratio,
    output)."""
    rng = np.random.default_rng(seed + rows * 7919 + width)
    m = streaming.build(kernel, dtype, chunk=chunk, warps=warps, block=block)
    arrays, f64 = [], {}
    outputs = streaming.OUTPUTS[kernel]
    for name, shape, dt in streaming.shapes(kernel, rows, width):
        a, v = make_array(rng, shape, dt or dtype, out=name in outputs)
        arrays.append(a)
        f64[name] = v
    extra = [streaming.EPS] if kernel == "layernorm" else []
    ism.interpret(m, "main", *arrays, *extra)
    names = [n for n, _, _ in streaming.shapes(kernel, rows, width)]
    out_dtype = dict((n, dt) for n, _, dt in
                     streaming.shapes(kernel, rows, width))[outputs[0]]
    out = as_f64(arrays[names.index(outputs[0])], out_dtype or dtype)
    ref, scale = streaming.reference_np(kernel, f64)
    atol, rtol = streaming.tolerance(kernel, dtype)
    return streaming.worst_ratio(out, ref, scale, atol, rtol), out


# (rows, width) with chunk 64: empty loop, one element, a partial first
# chunk (not a multiple of 8), exactly one chunk, one past it, several
# chunks with a partial last one.
ROW_SHAPES = [(3, 0), (2, 1), (3, 37), (2, 64), (3, 65), (2, 200)]


@pytest.mark.parametrize("dtype", ["bf16", "f16", "f32"])
@pytest.mark.parametrize("rows,width", ROW_SHAPES)
@pytest.mark.parametrize("kernel", ["lse", "softmax", "layernorm"])
def test_row_kernels(kernel, dtype, rows, width):
    worst, out = run_case(kernel, dtype, rows, width)
    assert worst <= 1.0, (kernel, dtype, rows, width, worst)
    if kernel == "lse" and width == 0:
        assert np.all(out == -np.inf)  # log(0), no NaN


# colsum (chunk 64, 16 columns a program: 4 rows an iteration): no rows
# (the loop runs zero times: sums are 0), one row, partial row chunks and
# partial column blocks.
@pytest.mark.parametrize("dtype", ["bf16", "f16", "f32"])
@pytest.mark.parametrize("rows,width", [(0, 20), (1, 16), (4, 16), (5, 37),
                                        (13, 40), (9, 3)])
def test_colsum(dtype, rows, width):
    worst, out = run_case("colsum", dtype, rows, width, block=16)
    assert worst <= 1.0, (dtype, rows, width, worst)
    if rows == 0:
        assert np.all(out == 0)


# gemv (chunk 64, 8 rows of W a program: 8 K elements an iteration): K = 0
# (zero trips: y = 0), K within one chunk, partial chunks, rows not a
# multiple of the block.
@pytest.mark.parametrize("dtype", ["bf16", "f16", "f32"])
@pytest.mark.parametrize("rows,width", [(8, 0), (3, 5), (8, 8), (9, 37),
                                        (17, 64), (5, 100)])
def test_gemv(dtype, rows, width):
    worst, out = run_case("gemv", dtype, rows, width, block=8)
    assert worst <= 1.0, (dtype, rows, width, worst)
    if width == 0:
        assert np.all(out == 0)


# The benchmark's default configuration (4096 / 2048 elements an
# iteration), one case a kernel: two iterations with a partial second.
@pytest.mark.parametrize("kernel", streaming.KERNELS)
@pytest.mark.parametrize("dtype", ["bf16", "f32"])
def test_default_configuration(kernel, dtype):
    chunk = streaming.default_chunk(dtype)
    if kernel == "colsum":
        rows, width = chunk // streaming.DEFAULT_BLOCK["colsum"] + 3, 70
    elif kernel == "gemv":
        rows, width = 10, chunk // streaming.DEFAULT_BLOCK["gemv"] + 5
    else:
        rows, width = 2, chunk + 7
    worst, _ = run_case(kernel, dtype, rows, width, chunk=chunk)
    assert worst <= 1.0, (kernel, dtype, worst)


def test_poisoned_output_fails_the_check():
    """The check catches an output left unwritten (NaN) or off by a
    little more than the tolerance."""
    ref = np.array([1.0, 2.0, -np.inf])
    atol, rtol = streaming.tolerance("lse", "bf16")
    assert streaming.worst_ratio(ref.copy(), ref, abs(ref), atol, rtol) == 0
    bad = ref.copy()
    bad[1] = np.nan
    assert streaming.worst_ratio(bad, ref, abs(ref), atol, rtol) == np.inf
    bad = ref.copy()
    bad[2] = 0.0
    assert streaming.worst_ratio(bad, ref, abs(ref), atol, rtol) > 1
    bad = ref.copy()
    bad[0] += 3 * (atol + rtol)
    assert streaming.worst_ratio(bad, ref, abs(ref), atol, rtol) > 1


def test_lowers_to_ptx():
    if not ism.has_pass(ism.PTX_PIPELINE):
        pytest.skip("this build has no ism-to-ptx pipeline")
    for kernel in streaming.KERNELS:
        for dtype in ("bf16", "f32"):  # f16 lowers as bf16 does
            ptx = streaming.build(kernel, dtype).to_ptx(chip="sm_90a")
            assert f".entry {kernel}" in ptx, (kernel, dtype)
            assert "ld.global" in ptx, (kernel, dtype)


def test_imports_without_torch_or_triton():
    code = ("import sys; sys.modules['torch'] = None; "
            "sys.modules['triton'] = None; import streaming as s; "
            "ms = [str(s.build(k, 'bf16')) for k in s.KERNELS]; "
            "assert all('@main' in m for m in ms)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.join(ROOT, "bench")] + sys.path))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_plan_sizes():
    args = streaming.parse_args([])
    cases = streaming.plan(args)
    single = [c for c in cases if c["rows"] == 1]
    assert len(single) == 3 * 3  # 1 x 65536, row kernels x dtypes
    for c in cases:
        if c["rows"] == 1:
            continue
        read = c["rows"] * c["width"] * streaming.ELEMENT_BYTES[c["dtype"]]
        assert read >= 256 << 20
        assert streaming.bytes_moved(c["kernel"], c["dtype"], c["rows"],
                                     c["width"]) >= read
    widths = {c["width"] for c in cases}
    assert any(w % 8 for w in widths) and any(w % 8 == 0 for w in widths)
    assert {c["dtype"] for c in cases} == {"bf16", "f16", "f32"}
    assert {c["kernel"] for c in cases} == set(streaming.KERNELS)
    quick = streaming.plan(streaming.parse_args(["--quick"]))
    assert len(quick) < len(cases) / 3
    only = streaming.plan(streaming.parse_args(
        ["--only", "gemv", "--dtypes", "f16", "--widths", "3001"]))
    assert [(c["kernel"], c["dtype"], c["width"]) for c in only] == \
        [("gemv", "f16", 3001)]


def fake_row(kernel="lse", ism_pct=95.0, x_triton=1.2, mb=300.0,
             check="ok"):
    return dict(kernel=kernel, dtype="bf16", shape="1x1", mb=mb,
                ism_check=check, triton_check="ok", ism_pct=ism_pct,
                triton_pct=80.0, torch_pct=70.0, x_triton=x_triton,
                x_torch=1.3, roof="read", roof_gbps=4000.0, ism_ms=1.0,
                triton_ms=1.2, torch_ms=1.3, ism_gbps=3800.0,
                triton_gbps=3000.0, torch_gbps=2800.0, clock_mhz=1980.0,
                watts=500.0)


def test_targets():
    assert streaming.target(fake_row()) == "met"
    assert streaming.target(fake_row(ism_pct=89.9)) == "MISSED"
    assert streaming.target(fake_row(x_triton=1.09)) == "MISSED"
    assert streaming.target(fake_row(check="FAIL")) == "MISSED"
    assert streaming.target(fake_row(mb=0.13)) == "n/a"
    rows = [dict(fake_row(), target="met"),
            dict(fake_row(kernel="gemv", x_triton=1.0), target="MISSED"),
            dict(fake_row(mb=0.13), target="n/a")]
    lines = streaming.summary(rows)
    assert lines[0].startswith("target lse: 1/1 rows met")
    assert lines[1].startswith("target gemv: 0/1 rows met")
    assert lines[-1].startswith("target overall: 1/2 rows")
    table = streaming.table(rows)
    assert len(table) == 4 and "MISSED" in table[2]


def test_triton_kernels_interpreted():
    """The Triton versions in Triton's interpreter (CPU tensors) against
    the same NumPy references: where torch and Triton are installed."""
    # Looked up, not imported: libtriton.so loaded after a build tree's
    # libMLIR.so crashes; the check runs in a process of its own.
    for name in ("torch", "triton"):
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"no {name}")
    if os.path.exists("/dev/nvidia0") or os.path.exists("/dev/nvidiactl"):
        pytest.skip("a GPU machine: bench/streaming.py checks the Triton "
                    "kernels there, on the GPU, against float64")
    code = r"""
import sys
import numpy as np, torch
import streaming as s, streaming_triton as st
tdt = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
for kernel in s.KERNELS:
    for dtype in ("bf16", "f32"):
        for rows, width in [(3, 0), (3, 37), (2, 64), (3, 200)]:
            if kernel == "colsum" and width == 0:
                rows, width = 0, 20
            cfg = dict(chunk=64, warps=4,
                       block=16 if kernel == "colsum" else 8)
            g = torch.Generator().manual_seed(rows * 100 + width)
            t = {}
            for name, shape, dt in s.shapes(kernel, rows, width):
                ty = tdt[dtype] if dt is None else torch.float32
                t[name] = (torch.full(shape, float("nan"), dtype=ty)
                           if name in s.OUTPUTS[kernel] else
                           torch.randn(shape, generator=g).to(ty))
            st.runner(kernel, [t[n] for n, _, _ in
                               s.shapes(kernel, rows, width)], cfg, s.EPS)()
            ref, scale = s.reference_np(
                kernel, {n: v.double().numpy() for n, v in t.items()})
            out = t[s.OUTPUTS[kernel][0]].double().numpy()
            worst = s.worst_ratio(out, ref, scale, *s.tolerance(kernel, dtype))
            assert worst <= 1, (kernel, dtype, rows, width, worst)
w = torch.arange(1, 5000, dtype=torch.int32)
p = torch.empty(st.read_programs(w.numel()), dtype=torch.int32)
st.run_read(w, p)
assert p[0].item() == int(np.bitwise_xor.reduce(w.numpy()[:st.READ_BLOCK]))
print("ok")
"""
    env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=os.pathsep.join(
        [os.path.join(ROOT, "bench")] + sys.path))
    proc = subprocess.run([sys.executable, "-c", code], env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr[-3000:]


def test_smem_bandwidth_builds(tmp_path):
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not os.path.exists(nvcc):
        pytest.skip("no nvcc")
    out = tmp_path / "smem_bandwidth"
    # nvcc is not built for the ASan runtime that scripts/sanitize.sh
    # preloads into Python (it segfaults with it): compile without it.
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "ASAN_OPTIONS")}
    proc = subprocess.run([nvcc, "-O3", "-std=c++17", "-arch=sm_90a", "-o",
                           str(out),
                           os.path.join(ROOT, "bench", "smem_bandwidth.cu")],
                          env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert out.exists()
