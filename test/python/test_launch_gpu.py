"""ism.compile on torch CUDA tensors (skipped without torch or a GPU):
softmax, GEMM (TMA descriptors), decode attention's ticket counter and a
fused co-schedule against PyTorch, the extension's own path for torch
tensors,
on the current stream and inside torch.cuda.Stream blocks, direct kernel
launches, and the errors for tensors torch has but ism cannot take."""

import os

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # pragma: no cover - CPU-only machines
    pytest.skip("no CUDA GPU", allow_module_level=True)

import ism  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def read(name):
    with open(os.path.join(ROOT, "examples", name)) as f:
        return f.read()


def poisoned(*shape, dtype=torch.float16):
    return torch.full(shape, float("nan"), dtype=dtype, device="cuda")


@pytest.fixture(scope="module")
def softmax():
    return ism.compile(read("softmax.mlir"))


def test_softmax_on_tensors_matches_torch(softmax):
    for rows, cols in [(1000, 4096), (3, 100), (4097, 1000)]:
        x = torch.randn(rows, cols, dtype=torch.float16, device="cuda")
        y = poisoned(rows, cols)
        softmax(x, y)
        ref = torch.softmax(x.double(), dim=1).half()
        torch.testing.assert_close(y, ref, atol=2e-3, rtol=2e-2)


def test_softmax_inside_a_torch_stream(softmax):
    s = torch.cuda.Stream()
    x = torch.randn(2048, 4096, dtype=torch.float16, device="cuda")
    y = poisoned(2048, 4096)
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        # Queue work ahead of the kernel on s, so a launch on the wrong
        # stream would read x before it is doubled.
        x2 = x * 2
        softmax(x2, y)
        ref = torch.softmax(x2.double(), dim=1).half()
    s.synchronize()
    torch.testing.assert_close(y, ref, atol=2e-3, rtol=2e-2)


def test_explicit_stream_argument(softmax):
    s = torch.cuda.Stream()
    x = torch.randn(512, 4096, dtype=torch.float16, device="cuda")
    y = poisoned(512, 4096)
    s.wait_stream(torch.cuda.current_stream())
    softmax(x, y, stream=s)
    s.synchronize()
    torch.testing.assert_close(y, torch.softmax(x.float(), 1).half(),
                               atol=2e-3, rtol=2e-2)


def test_direct_kernel_launch(softmax):
    x = torch.randn(64, 4096, dtype=torch.float16, device="cuda")
    y = poisoned(64, 4096)
    softmax.softmax[(32,)](x, y)  # only the first 32 rows
    torch.testing.assert_close(y[:32], torch.softmax(x[:32].float(), 1).half(),
                               atol=2e-3, rtol=2e-2)
    assert torch.isnan(y[32:]).all()


def test_torch_tensors_take_the_extension_path(softmax):
    """Torch tensors are read by the extension (launch_fast answers True and
    the kernel ran), on torch's current stream and with an int handle; a
    stream object and a tensor it does not take go to the Python path
    (False, nothing launched)."""
    program, entry = softmax._program, softmax._entry
    assert program.torch_bound
    x = torch.randn(256, 4096, dtype=torch.float16, device="cuda")
    ref = torch.softmax(x.double(), dim=1).half()
    for stream in (None, torch.cuda.current_stream().cuda_stream):
        y = poisoned(256, 4096)
        assert program.launch_fast(entry.index, (x, y), (), stream) is True
        torch.testing.assert_close(y, ref, atol=2e-3, rtol=2e-2)
    y = poisoned(256, 4096)
    assert program.launch_fast(entry.index, (x, y), (),
                               torch.cuda.current_stream()) is False
    assert program.launch_fast(entry.index, (x.float(), y), (), None) is False
    assert program.launch_fast(entry.index, (x.t(), y), (), None) is False
    torch.cuda.synchronize()
    assert torch.isnan(y).all()


def test_gemm_with_tma_on_several_tensor_sets():
    k = ism.compile(read("matmul.mlir"))
    assert k.kernel_info()["matmul"]["tma_operands"] > 0
    s = torch.cuda.Stream()
    for i, (m, n, kk) in enumerate([(512, 1024, 4096), (1000, 384, 1000),
                                    (512, 1024, 4096)]):
        a = torch.randn(m, kk, dtype=torch.bfloat16, device="cuda")
        b = torch.randn(kk, n, dtype=torch.bfloat16, device="cuda")
        c = poisoned(m, n, dtype=torch.bfloat16)
        if i == 2:  # the same shapes again, on another stream
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                k(a, b, c)
            torch.cuda.current_stream().wait_stream(s)
        else:
            k(a, b, c)
        ref = (a.double() @ b.double())
        torch.testing.assert_close(c.double(), ref, atol=0.5, rtol=2e-2)


def test_linear_layer_weight_as_torch_keeps_it():
    """x @ W^T with W as torch.nn.Linear stores it (N x K), from the Python
    example: no transposed copy of the weight."""
    import sys
    sys.path.insert(0, os.path.join(ROOT, "python", "examples"))
    import matmul
    k = ism.compile(matmul.build_matmul(transpose_b=True))
    for m, n, kk in [(512, 1024, 4096), (1000, 384, 1000)]:
        x = torch.randn(m, kk, dtype=torch.bfloat16, device="cuda")
        w = torch.randn(n, kk, dtype=torch.bfloat16, device="cuda")
        c = poisoned(m, n, dtype=torch.bfloat16)
        k(x, w, c)
        ref = x.double() @ w.double().t()
        torch.testing.assert_close(c.double(), ref, atol=0.5, rtol=2e-2)


def test_decode_ticket_counters_across_launches_and_streams():
    """examples/decode_attention.mlir merges a head's chunks in the program
    that takes the last ticket of the head's counter (an ism.zeroed
    temporary of the host function, kept per stream) and resets it: launches
    in a row, then one on each of two streams at once, are all right."""
    k = ism.compile(read("decode_attention.mlir"))
    bh, seq, d, splits = 5, 3000, 128, 16
    scale = d ** -0.5

    def case():
        q = torch.randn(bh, d, dtype=torch.bfloat16, device="cuda")
        kk = torch.randn(bh, seq, d, dtype=torch.bfloat16, device="cuda")
        v = torch.randn(bh, seq, d, dtype=torch.bfloat16, device="cuda")
        o = poisoned(bh, d, dtype=torch.bfloat16)
        work = (poisoned(bh, splits, dtype=torch.float32),
                poisoned(bh, splits, dtype=torch.float32),
                poisoned(bh, splits, d, dtype=torch.float32))
        p = torch.softmax(scale * (kk.double() @ q.double()[:, :, None])[..., 0],
                          dim=1)
        ref = (p[:, None, :] @ v.double())[:, 0]
        return (q, kk, v, o, *work, scale), o, ref

    for _ in range(3):
        args, o, ref = case()
        k(*args)
        torch.testing.assert_close(o.double(), ref, atol=2e-2, rtol=2e-2)
    cases = [case(), case()]
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    for s in streams:
        s.wait_stream(torch.cuda.current_stream())
    for _ in range(3):
        for s, (args, _, _) in zip(streams, cases):
            with torch.cuda.stream(s):
                k(*args)
    for s in streams:
        torch.cuda.current_stream().wait_stream(s)
    for _, o, ref in cases:
        torch.testing.assert_close(o.double(), ref, atol=2e-2, rtol=2e-2)


def test_one_pass_split_k_repeats_on_its_counters():
    """bench/gemm.py's one-pass split-K keeps its tile counters in an
    ism.zeroed temporary of the host function: zeroed once, reset by the
    last split of each tile, so that repeated calls stay right."""
    import sys
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import gemm
    k = ism.compile(gemm.splitk_program(bm=64, bn=128, warps=4, splits=4))
    for i in range(4):
        m = 16 if i % 2 == 0 else 200
        a = torch.randn(m, 4000, dtype=torch.bfloat16, device="cuda")
        b = torch.randn(4000, 1000, dtype=torch.bfloat16, device="cuda")
        c = poisoned(m, 1000, dtype=torch.bfloat16)
        k(a, b, c)
        ref = a.double() @ b.double()
        torch.testing.assert_close(c.double(), ref, atol=0.5, rtol=2e-2)


def test_fused_coschedule_on_tensors():
    k = ism.compile(read("coschedule_matmul_rmsnorm.mlir"))
    a = torch.randn(1024, 2048, dtype=torch.bfloat16, device="cuda")
    b = torch.randn(2048, 1024, dtype=torch.bfloat16, device="cuda")
    c = poisoned(1024, 1024, dtype=torch.bfloat16)
    x = torch.randn(3000, 4096, dtype=torch.bfloat16, device="cuda")
    w = torch.randn(4096, dtype=torch.bfloat16, device="cuda")
    y = poisoned(3000, 4096, dtype=torch.bfloat16)
    for _ in range(2):  # the work counters start at zero on every launch
        c.fill_(float("nan"))
        y.fill_(float("nan"))
        k(a, b, c, x, w, y, 1e-6)
        torch.testing.assert_close(c.double(), a.double() @ b.double(),
                                   atol=0.5, rtol=2e-2)
        xd = x.double()
        ref = xd * torch.rsqrt(xd.pow(2).mean(1, keepdim=True) + 1e-6) \
            * w.double()
        torch.testing.assert_close(y.double(), ref, atol=3e-2, rtol=2e-2)


class ProducedOn:
    """A torch tensor seen through __cuda_array_interface__ v3, as CuPy
    shows an array: with the stream its data is ready on."""

    def __init__(self, t, stream):
        self.__cuda_array_interface__ = dict(
            t.__cuda_array_interface__, stream=stream.cuda_stream)


def test_cuda_array_interface_producer_stream_is_waited_for(softmax):
    """The input is written on a producer stream behind a ~50 ms sleep; the
    kernel, launched on another stream, must wait for it (through the
    interface's stream) instead of reading the poison still there."""
    producer, consumer = torch.cuda.Stream(), torch.cuda.Stream()
    src = torch.randn(512, 4096, dtype=torch.float16, device="cuda")
    x = poisoned(512, 4096)
    y = poisoned(512, 4096)
    torch.cuda.synchronize()
    with torch.cuda.stream(producer):
        torch.cuda._sleep(100_000_000)
        x.copy_(src)
    softmax(ProducedOn(x, producer), y, stream=consumer)
    consumer.synchronize()
    ref = torch.softmax(src.double(), dim=1).half()
    torch.testing.assert_close(y, ref, atol=2e-3, rtol=2e-2)


def test_errors_for_tensors_ism_cannot_take(softmax):
    x = torch.randn(8, 64, dtype=torch.float16, device="cuda")
    with pytest.raises(ValueError, match="on the CPU"):
        softmax(x, torch.empty(8, 64, dtype=torch.float16))
    with pytest.raises(TypeError, match="torch.float16"):
        softmax(x, torch.empty(8, 64, dtype=torch.float32, device="cuda"))
    with pytest.raises(ValueError, match="not contiguous"):
        softmax(x, torch.empty(64, 8, dtype=torch.float16, device="cuda").t())


def test_rope_autograd_example():
    import rope_autograd
    rope_autograd.check(device="cuda")


def test_autotune_on_tensors(tmp_path):
    # Real timing (CUDA events) of three candidates on torch tensors; the
    # tuned call computes the right sum; a second tuner (a new process)
    # takes the winner from the disk cache and times nothing.
    from test_autotune import CONFIGS, vector_add
    x = torch.randn(1 << 20, device="cuda")
    y = torch.randn(1 << 20, device="cuda")
    z = torch.full_like(x, float("nan"))
    tuned = ism.autotune(configs=CONFIGS, cache=str(tmp_path), reps=5)(
        vector_add)
    tuned(x, y, z)
    torch.testing.assert_close(z, x + y)
    r = tuned.tune(x, y, z)
    assert not r.from_cache and set(r.timings_ms) == set(CONFIGS)
    assert all(ms > 0 for ms in r.timings_ms.values())
    again = ism.autotune(configs=CONFIGS, cache=str(tmp_path))(vector_add)
    z2 = torch.full_like(x, float("nan"))
    again(x, y, z2)
    assert again.tune(x, y, z2).from_cache
    torch.testing.assert_close(z2, x + y)


def test_autotune_restores_in_place_outputs(tmp_path):
    # z = x + z in place: without restore the tuning runs would add x to z
    # several times over.
    from test_autotune import CONFIGS, vector_add
    x = torch.randn(4096, device="cuda")
    z = torch.randn(4096, device="cuda")
    expected = x + z
    ism.autotune(configs=CONFIGS, cache=str(tmp_path), reps=3,
                 restore=[2])(vector_add)(x, z, z)
    torch.testing.assert_close(z, expected)


def test_host_shape_requirement_on_tensors():
    # examples/matmul.mlir states that the inner dimensions agree: a wrong
    # pair is one line naming both shapes, and nothing is launched.
    matmul = ism.compile(read("matmul.mlir"))
    a = torch.randn(3, 5, dtype=torch.bfloat16, device="cuda")
    b = torch.randn(7, 2, dtype=torch.bfloat16, device="cuda")
    c = poisoned(3, 2, dtype=torch.bfloat16)
    with pytest.raises(ism.IsmError,
                       match="@main: A is 3x5 and B is 7x2: inner "
                             "dimensions differ"):
        matmul(a, b, c)
    torch.cuda.synchronize()
    assert torch.isnan(c).all()
