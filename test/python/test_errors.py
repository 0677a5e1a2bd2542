"""Wrong constructions raise Python exceptions carrying MLIR's message and
location, leave the module usable, and never crash the interpreter."""

import pytest

import ism


def buf(el="f32", rank=1):
    return ism.memref((None,) * rank, el)


def test_bad_dtype_name():
    with pytest.raises(ism.DTypeError, match="unknown dtype 'f17'"):
        ism.tile((16,), "f17")
    with pytest.raises(ValueError):
        ism.memref((None,), "complex128")


def test_non_power_of_two_tile():
    with pytest.raises(ism.ShapeError, match="dimension 1 is 100.*powers of two"):
        ism.tile((64, 100), "f32")
    with pytest.raises(ism.ShapeError):
        ism.tile((0,), "f32")


def test_non_power_of_two_tile_in_an_op_uses_mlir_message():
    m = ism.Module()
    with m.kernel("k", [buf()]) as k:
        with pytest.raises(ism.ShapeError):
            k.load(k.args[0], [0], (100,))
        t = k.load(k.args[0], [0], (128,))
        with pytest.raises(ism.VerificationError, match="powers of two") as info:
            k.convert_layout(t, ism.tensor((96,), "f32"))
        assert info.value.mlir_message is not None


def test_dot_of_incompatible_shapes():
    m = ism.Module()
    with m.kernel("k", [buf("f16", 2)]) as k:
        a = k.load(k.args[0], [0, 0], (64, 32), )
        b = k.load(k.args[0], [0, 0], (64, 64))
        with pytest.raises(ism.VerificationError) as info:
            k.dot(a, b)
        err = info.value
        assert "'ism.dot' op contraction dimensions differ" in str(err)
        assert "contraction dimensions differ" in err.mlir_message
        # The location is the Python line that built the op.
        assert "test_errors.py" in err.location
        assert any(d[0] == "error" for d in err.diagnostics)
        # The failed op was removed; the kernel still builds and verifies.
        c = k.dot(a, k.load(k.args[0], [0, 0], (32, 64)))
        k.store(c.to("f16"), k.args[0], [0, 0])
    m.verify()
    assert "ism.dot" in str(m)


def test_launch_with_wrong_argument_count():
    m = ism.Module()
    with m.kernel("k", [buf(), "index"]) as k:
        k.program_id()
    with m.host("main", [buf()]) as h:
        with pytest.raises(ism.VerificationError,
                           match="passes 1 arguments but @k takes 2"):
            h.launch("k", [1], [h.args[0]])
        with pytest.raises(ism.VerificationError, match="does not name an ism.kernel"):
            h.launch("nope", [1], [h.args[0]])
        h.launch("k", [1], [h.args[0], h.dim(h.args[0], 0)])
    m.verify()


def test_kernel_failing_to_verify_is_removed():
    m = ism.Module()
    with pytest.raises(ism.VerificationError, match="num_warps must be a power of two"):
        with m.kernel("k", [buf()], num_warps=3) as k:
            k.program_id()
    assert "ism.kernel" not in str(m)


def test_bad_reduce_axis_and_combiner():
    m = ism.Module()
    with m.kernel("k", [buf()]) as k:
        t = k.load(k.args[0], [0], (128,))
        with pytest.raises(ism.VerificationError, match="axis 3 is out of range"):
            k.sum(t, axis=3)
        with pytest.raises(ism.VerificationError, match="combiner yield #0 has type"):
            k.reduce(t, 0, lambda a, b: (a + b).to("f16"))
        with pytest.raises(ZeroDivisionError):
            k.reduce(t, 0, lambda a, b: 1 / 0)
        k.sum(t, 0)


def test_parse_and_module_verification_errors():
    with pytest.raises(ism.ParseError) as info:
        ism.Module.parse("func.func @f( {", source_name="bad.mlir")
    assert "bad.mlir" in str(info.value)
    bad = """
    ism.kernel @k(%x: memref<?xf32>) {
      %t = ism.range 0 to 100 : tensor<100xi32>
      ism.return
    }"""
    with pytest.raises(ism.VerificationError, match="powers of two") as info:
        ism.Module.parse(bad, source_name="k.mlir")
    assert info.value.location.startswith('loc("k.mlir":3:')


def test_bad_enum_values():
    m = ism.Module()
    with m.kernel("k", [buf("i32")]) as k:
        r = k.range(0, 16)
        with pytest.raises(ValueError, match="grid axis"):
            k.program_id("w")
        with pytest.raises(ValueError, match="unknown atomic kind"):
            k.atomic_rmw("mul", k.args[0], [r], 1)
        with pytest.raises(ValueError, match="unknown memory semantics"):
            k.atomic_rmw("add", k.args[0], [r], 1, sem="seq_cst")
        with pytest.raises(ValueError, match="precision"):
            k.dot(r, r, precision="fp8")
    with m.host("main", []) as h:
        with pytest.raises(ValueError, match="policy"):
            h.coschedule("round_robin")


def test_value_has_no_truth_value():
    m = ism.Module()
    with m.kernel("k", [buf()]) as k:
        t = k.load(k.args[0], [0], (16,))
        with pytest.raises(TypeError):
            if t > 0.0:
                pass


def test_errors_are_ism_errors():
    assert issubclass(ism.VerificationError, ism.IsmError)
    assert issubclass(ism.VerificationError, ValueError)
    assert issubclass(ism.RuntimeUnavailable, RuntimeError)
    assert issubclass(ism.DTypeError, ism.IsmError)


def _matmul_host(m):
    """A host function that states the shapes a product takes."""
    A, B = ism.memref((None, None), "f32"), ism.memref((None, None), "f32")
    with m.host("main", [A, B]) as h:
        a, b = h.args
        rows, k = h.dim(a, 0), h.dim(a, 1)
        k2, cols = h.dim(b, 0), h.dim(b, 1)
        h.require(k == k2, "A is {0}x{1} and B is {2}x{3}: inner dimensions "
                  "differ", rows, k, k2, cols)


def test_host_requirement_fails_with_one_line():
    import numpy as np
    m = ism.Module()
    _matmul_host(m)
    a = np.ones((3, 5), np.float32)
    b = np.ones((7, 2), np.float32)
    with pytest.raises(ism.RunError) as info:
        ism.interpret(m, "main", a, b)
    message = str(info.value)
    assert "@main: A is 3x5 and B is 7x2: inner dimensions differ" in message
    assert "\n" not in message.strip()
    # Shapes that meet the requirement run.
    ism.interpret(m, "main", a, np.ones((5, 2), np.float32))


def test_host_requirement_placeholders_are_checked():
    m = ism.Module()
    with m.host("main", [ism.memref((None,), "f32")]) as h:
        n = h.dim(h.args[0], 0)
        with pytest.raises(ism.VerificationError, match=r"refers to \{1\}"):
            h.require(n == n, "{0} and {1}", n)
