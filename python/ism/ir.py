"""Contexts, types and modules.

Types are built from NumPy-style dtype names ("f16", "bf16", "float32",
"i32", "bool", "index", ...) and shapes::

    ism.tile((128, 64), "f16")        # tensor<128x64xf16>, a tile
    ism.memref((None, None), "f16")   # memref<?x?xf16>, global memory
    ism.scalar("index")               # index

Everything MLIR rejects raises a Python exception carrying MLIR's message.
"""

from __future__ import annotations

import math
import struct
from typing import Iterable, Optional, Sequence, Union

from . import _ism
from ._ism import IsmError, ParseError, VerificationError

__all__ = [
    "Context",
    "DTypeError",
    "Module",
    "ShapeError",
    "blocked",
    "default_context",
    "dtype",
    "float_attr",
    "memref",
    "scalar",
    "tensor",
    "tile",
]


class DTypeError(IsmError, ValueError):
    """An element type name that ism does not know."""


class ShapeError(IsmError, ValueError):
    """A shape that cannot be a tile (not static, or not powers of two)."""


class Context:
    """An MLIR context with the ism dialect and everything it lowers through.

    Most programs use the process-wide default context
    (:func:`default_context`); pass ``context=`` to keep modules apart.
    """

    def __init__(self) -> None:
        self._ctx = _ism.Context()

    def parse_type(self, text: str) -> _ism.Type:
        """Parses MLIR type text, raising :class:`ism.ParseError`."""
        return self._ctx.parse_type(text)

    def parse_attr(self, text: str) -> _ism.Attribute:
        """Parses MLIR attribute text, raising :class:`ism.ParseError`."""
        return self._ctx.parse_attr(text)


_DEFAULT_CONTEXT: Optional[Context] = None


def default_context() -> Context:
    """The process-wide context used when no ``context=`` is given."""
    global _DEFAULT_CONTEXT
    if _DEFAULT_CONTEXT is None:
        _DEFAULT_CONTEXT = Context()
    return _DEFAULT_CONTEXT


def _ctx(context: Optional[Context]) -> Context:
    return context if context is not None else default_context()


# NumPy-style names (and MLIR's own spellings) of the element types.
_DTYPES = {
    "f16": "f16", "float16": "f16", "half": "f16",
    "bf16": "bf16", "bfloat16": "bf16",
    "f32": "f32", "float32": "f32", "float": "f32",
    "f64": "f64", "float64": "f64", "double": "f64",
    "tf32": "tf32",
    "f8e4m3fn": "f8E4M3FN", "float8_e4m3fn": "f8E4M3FN",
    "f8e5m2": "f8E5M2", "float8_e5m2": "f8E5M2",
    "i1": "i1", "bool": "i1", "bool_": "i1", "int1": "i1",
    "i8": "i8", "int8": "i8",
    "i16": "i16", "int16": "i16",
    "i32": "i32", "int32": "i32",
    "i64": "i64", "int64": "i64",
    "index": "index",
}

DTypeLike = Union[str, "_ism.Type", object]


def dtype(name: DTypeLike) -> str:
    """The MLIR spelling of an element type given by name ("float16",
    "f16", "bool", "index", ...), a NumPy dtype or an ism type."""
    if isinstance(name, _ism.Type):
        return str(name)
    key = name
    if not isinstance(key, str):
        key = getattr(key, "name", None) or getattr(key, "__name__", None)
        if key is None:
            raise DTypeError(f"not an element type: {name!r}")
    mlir = _DTYPES.get(key.lower()) if isinstance(key, str) else None
    if mlir is None:
        known = ", ".join(sorted({k for k in _DTYPES if k == _DTYPES[k]}))
        raise DTypeError(
            f"unknown dtype {name!r}; ism knows {known} "
            "(and their NumPy names: float16, bfloat16, float32, int32, bool, ...)")
    return mlir


def _check_dims(shape: Sequence[int]) -> None:
    for d, size in enumerate(shape):
        if not isinstance(size, int) or isinstance(size, bool):
            raise ShapeError(f"tile dimension {d} is {size!r}; tile dimensions "
                             "are static integers")
        if size <= 0 or size & (size - 1):
            raise ShapeError(
                f"not a tile: dimension {d} is {size}, but tile dimensions "
                "must be powers of two")


def _shape_text(shape: Iterable[Optional[int]]) -> str:
    return "".join(("?" if d is None else str(d)) + "x" for d in shape)


def tile(shape: Sequence[int], element: DTypeLike, encoding: Optional[str] = None,
         context: Optional[Context] = None) -> _ism.Type:
    """A tile type: a ranked tensor with static power-of-two dimensions,
    optionally carrying a layout encoding (see :func:`blocked`)."""
    shape = tuple(shape)
    _check_dims(shape)
    return tensor(shape, element, encoding, context)


def tensor(shape: Sequence[Optional[int]], element: DTypeLike,
           encoding: Optional[str] = None,
           context: Optional[Context] = None) -> _ism.Type:
    """Any ranked tensor type (no tile checks: ops that need tiles say so
    when they verify)."""
    enc = f", {encoding}" if encoding else ""
    return _ctx(context).parse_type(
        f"tensor<{_shape_text(shape)}{dtype(element)}{enc}>")


def memref(shape: Sequence[Optional[int]], element: DTypeLike,
           context: Optional[Context] = None) -> _ism.Type:
    """A global-memory buffer type; ``None`` dimensions are dynamic."""
    return _ctx(context).parse_type(
        f"memref<{_shape_text(shape)}{dtype(element)}>")


def scalar(element: DTypeLike, context: Optional[Context] = None) -> _ism.Type:
    """A scalar type ("f32", "i32", "index", ...)."""
    return _ctx(context).parse_type(dtype(element))


def blocked(size_per_thread: Sequence[int], threads_per_warp: Sequence[int],
            warps_per_cta: Sequence[int], order: Sequence[int]) -> str:
    """The text of an ``#ism.blocked`` layout encoding, for :func:`tile`."""
    def lst(xs):
        return "[" + ", ".join(str(x) for x in xs) + "]"
    return (f"#ism.blocked<{{sizePerThread = {lst(size_per_thread)}, "
            f"threadsPerWarp = {lst(threads_per_warp)}, "
            f"warpsPerCTA = {lst(warps_per_cta)}, order = {lst(order)}}}>")


def float_literal(value: float) -> str:
    """A finite float as an MLIR literal (which needs a decimal point)."""
    text = repr(float(value))
    if "." not in text:
        if "e" in text:
            mantissa, exponent = text.split("e")
            text = f"{mantissa}.0e{exponent}"
        else:
            text += ".0"
    return text


def float_attr(value: float, element: str) -> str:
    """MLIR attribute text for a float constant of type ``element``; values
    without a decimal form (inf, nan) are written as bit patterns."""
    if math.isfinite(value):
        return f"{float_literal(value)} : {element}"
    if element == "f16":
        bits = struct.unpack("<H", struct.pack("<e", value))[0]
        return f"0x{bits:04X} : f16"
    if element == "bf16":
        bits = struct.unpack("<I", struct.pack("<f", value))[0] >> 16
        return f"0x{bits:04X} : bf16"
    if element == "f32":
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
        return f"0x{bits:08X} : f32"
    if element == "f64":
        bits = struct.unpack("<Q", struct.pack("<d", value))[0]
        return f"0x{bits:016X} : f64"
    raise DTypeError(f"cannot write {value} as a constant of type {element}")


class Module:
    """An MLIR module: kernels (``ism.kernel``) and host functions.

    Build one with :meth:`kernel` and :meth:`host`, or parse text with
    :meth:`parse`. ``str(module)`` prints it.
    """

    def __init__(self, context: Optional[Context] = None, _handle=None) -> None:
        self.context = _ctx(context)
        if _handle is None:
            _handle = _ism.Module.create(self.context._ctx,
                                         self.context._ctx.unknown_loc())
        self._m = _handle

    @staticmethod
    def parse(text: str, context: Optional[Context] = None,
              source_name: str = "<string>") -> "Module":
        """Parses and verifies MLIR text; raises :class:`ism.ParseError`
        (syntax) or carries the verifier's diagnostics."""
        ctx = _ctx(context)
        return Module(ctx, _ism.Module.parse(ctx._ctx, text, source_name))

    @staticmethod
    def parse_file(path: str, context: Optional[Context] = None) -> "Module":
        with open(path) as f:
            return Module.parse(f.read(), context, source_name=str(path))

    def __str__(self) -> str:
        return str(self._m)

    def print(self, debug_info: bool = False, generic: bool = False) -> str:
        """The module's text, optionally with locations or in generic form."""
        return self._m.print(debug_info, generic)

    def verify(self) -> None:
        """Raises :class:`ism.VerificationError` with MLIR's diagnostics
        (text and location) when the module is invalid."""
        self._m.verify()

    def clone(self) -> "Module":
        return Module(self.context, self._m.clone())

    @property
    def operations(self):
        """The top-level operations (kernels, functions, gpu modules)."""
        return self._m.body.operations

    # Builders (see ism.builder).
    def kernel(self, name: str, arg_types: Sequence, num_warps: int = 4,
               min_ctas_per_sm: Optional[int] = None,
               gather_stages: Optional[int] = None,
               load_stages: Optional[int] = None):
        """Starts an ``ism.kernel``; see :class:`ism.KernelBuilder`."""
        from .builder import KernelBuilder
        return KernelBuilder(self, name, arg_types, num_warps,
                             min_ctas_per_sm, gather_stages, load_stages)

    def host(self, name: str, arg_types: Sequence):
        """Starts a host function (``func.func``); see
        :class:`ism.HostBuilder`."""
        from .builder import HostBuilder
        return HostBuilder(self, name, arg_types)

    # Compilation (see ism.compiler and ism.launch).
    def apply_pipeline(self, pipeline: str) -> "Module":
        from .compiler import apply_pipeline as _apply
        return _apply(self, pipeline)

    def compile(self, **kwargs):
        """``ism.compile(self, **kwargs)``: a program callable on CUDA
        tensors."""
        from .launch import compile as _compile
        return _compile(self, **kwargs)

    def stages(self, pipeline: str):
        from .compiler import stages as _stages
        return _stages(self, pipeline)

    def to_ptx(self, chip: str = "sm_90a", **kwargs) -> str:
        from .compiler import to_ptx as _to_ptx
        return _to_ptx(self, chip=chip, **kwargs)

    def run(self, *args, **kwargs):
        from .runtime import run as _run
        return _run(self, *args, **kwargs)
