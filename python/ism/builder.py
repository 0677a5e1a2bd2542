"""Builders for tile programs (``ism.kernel``) and host functions.

A :class:`KernelBuilder` appends operations to a kernel body and hands back
:class:`Value`s, which overload Python's operators the way Triton's tiles
do::

    m = ism.Module()
    with m.kernel("scale", [ism.memref((None,), "f32"), "f32"]) as k:
        x, s = k.args
        off = k.program_id("x") * 128
        t = k.load(x, [off], (128,))
        k.store(t * s, x, [off])          # the scalar s is splat

Every operation is verified as soon as it is built (operations with regions
once their region is complete); a failure raises
:class:`ism.VerificationError` with MLIR's message and the Python source
line as its location, and leaves the module as it was.
"""

from __future__ import annotations

import os
import sys
from typing import Callable, List, Optional, Sequence, Tuple, Union

from . import _ism
from .ir import (DTypeError, Module, ShapeError, _shape_text, dtype,
                 float_attr, float_literal, memref, scalar, tensor, tile)

__all__ = ["HostBuilder", "KernelBuilder", "Value"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

_AXES = {"x": 0, "y": 1, "z": 2, 0: 0, 1: 1, 2: 2}
_PRECISIONS = {"ieee": 0, "tf32": 1, "tf32x3": 2}
_ATOMIC_KINDS = {"add": 0, "max": 1, "min": 2, "umax": 3, "umin": 4,
                 "and": 5, "or": 6, "xor": 7, "xchg": 8}
_SEMANTICS = {"relaxed": 0, "acquire": 1, "release": 2, "acq_rel": 3}
_POLICIES = {"warp_specialized": 0, "block_interleaved": 1, "ordered": 2}
# arith.cmpf / arith.cmpi predicates (ordered floats, signed integers).
_CMPF = {"eq": 1, "gt": 2, "ge": 3, "lt": 4, "le": 5, "ne": 6}
_CMPI = {"eq": 0, "ne": 1, "lt": 2, "le": 3, "gt": 4, "ge": 5}

Number = Union[int, float, bool]


def _is_float_name(name: str) -> bool:
    return name in ("f16", "bf16", "f32", "f64", "tf32") or name.startswith("f8")


def _int_width(name: str) -> Optional[int]:
    if name.startswith("i") and name[1:].isdigit():
        return int(name[1:])
    return None


class Value:
    """An SSA value: a tile (ranked tensor), a scalar or a memref.

    Arithmetic operators build ``arith`` ops (``+ - * / // %``, unary
    ``-``), comparisons build ``arith.cmpf``/``cmpi`` and give ``i1`` masks,
    ``&``/``|``/``^`` combine masks. A Python number or scalar on the other
    side is splat to the tile's shape.
    """

    __slots__ = ("handle", "builder")

    def __init__(self, handle: _ism.Value, builder: "_Builder") -> None:
        self.handle = handle
        self.builder = builder

    @property
    def type(self) -> _ism.Type:
        return self.handle.type

    @property
    def shape(self) -> Optional[Tuple[Optional[int], ...]]:
        """The tile (or memref) shape; None for scalars."""
        s = self.handle.type.shape
        return None if s is None else tuple(s)

    @property
    def dtype(self) -> str:
        """The element type's MLIR name ("f32", "i1", "index", ...)."""
        return str(self.handle.type.element_type)

    @property
    def is_tile(self) -> bool:
        return self.handle.type.is_tensor

    def __str__(self) -> str:
        return str(self.handle)

    def __repr__(self) -> str:
        return f"<ism.Value {self.handle}: {self.type}>"

    __hash__ = object.__hash__

    def to(self, element) -> "Value":
        """Casts the elements to ``element`` (extf/truncf/sitofp/...)."""
        return self.builder.cast(self, element)

    # Arithmetic.
    def __add__(self, o): return self.builder.add(self, o)
    def __radd__(self, o): return self.builder.add(o, self)
    def __sub__(self, o): return self.builder.sub(self, o)
    def __rsub__(self, o): return self.builder.sub(o, self)
    def __mul__(self, o): return self.builder.mul(self, o)
    def __rmul__(self, o): return self.builder.mul(o, self)
    def __truediv__(self, o): return self.builder.div(self, o)
    def __rtruediv__(self, o): return self.builder.div(o, self)
    def __floordiv__(self, o): return self.builder.div(self, o)
    def __rfloordiv__(self, o): return self.builder.div(o, self)
    def __mod__(self, o): return self.builder.rem(self, o)
    def __rmod__(self, o): return self.builder.rem(o, self)
    def __neg__(self): return self.builder.neg(self)
    def __and__(self, o): return self.builder._binary_int("arith.andi", self, o)
    def __rand__(self, o): return self.builder._binary_int("arith.andi", o, self)
    def __or__(self, o): return self.builder._binary_int("arith.ori", self, o)
    def __ror__(self, o): return self.builder._binary_int("arith.ori", o, self)
    def __xor__(self, o): return self.builder._binary_int("arith.xori", self, o)
    def __rxor__(self, o): return self.builder._binary_int("arith.xori", o, self)

    # Comparisons give masks.
    def __lt__(self, o): return self.builder.cmp("lt", self, o)
    def __le__(self, o): return self.builder.cmp("le", self, o)
    def __gt__(self, o): return self.builder.cmp("gt", self, o)
    def __ge__(self, o): return self.builder.cmp("ge", self, o)
    def __eq__(self, o): return self.builder.cmp("eq", self, o)  # type: ignore[override]
    def __ne__(self, o): return self.builder.cmp("ne", self, o)  # type: ignore[override]

    def __bool__(self):
        raise TypeError("an ism.Value has no truth value at build time; use "
                        "where()/select() or a mask")


ValueLike = Union[Value, Number]


class _Builder:
    """What kernel and host builders share: op creation with verification,
    constants, arith/math/scf ops, and the insertion point."""

    def __init__(self, module: Module) -> None:
        self.module = module
        self.context = module.context
        self._ctx = module.context._ctx
        self._blocks: List[_ism.Block] = []
        self._op: Optional[_ism.Operation] = None
        self.args: List[Value] = []

    # -- plumbing ----------------------------------------------------------
    def _loc(self):
        """The location of the user's code that called into the builder."""
        frame = sys._getframe(1)
        while frame is not None and os.path.dirname(
                os.path.abspath(frame.f_code.co_filename)) == _PACKAGE_DIR:
            frame = frame.f_back
        if frame is None:
            return self._ctx.unknown_loc()
        return self._ctx.file_loc(frame.f_code.co_filename, frame.f_lineno, 0)

    def _type(self, text: str) -> _ism.Type:
        return self._ctx.parse_type(text)

    def _attr(self, text: str) -> _ism.Attribute:
        return self._ctx.parse_attr(text)

    @property
    def _block(self) -> _ism.Block:
        if not self._blocks:
            raise RuntimeError(f"{type(self).__name__} is finished; no more "
                               "operations can be added")
        return self._blocks[-1]

    def _create(self, name: str, operands: Sequence = (), results: Sequence = (),
                attrs: Optional[dict] = None, regions: int = 0,
                verify: bool = True) -> _ism.Operation:
        attributes = [(k, self._attr(v) if isinstance(v, str) else v)
                      for k, v in (attrs or {}).items()]
        op = _ism.Operation.create(
            name, [self._h(v) for v in operands], list(results), attributes,
            regions, self._block, self._loc())
        if verify:
            self._verify(op)
        return op

    @staticmethod
    def _verify(op: _ism.Operation) -> None:
        try:
            op.verify()
        except BaseException:
            op.erase()
            raise

    def _h(self, v) -> _ism.Value:
        if isinstance(v, Value):
            return v.handle
        if isinstance(v, _ism.Value):
            return v
        raise TypeError(f"expected an ism.Value, got {v!r}")

    def _wrap(self, op: _ism.Operation):
        results = [Value(r, self) for r in op.results]
        if not results:
            return None
        return results[0] if len(results) == 1 else tuple(results)

    def _op1(self, name, operands, result_type, attrs=None) -> Value:
        return self._wrap(self._create(name, operands, [result_type], attrs))

    # -- constants and operands ---------------------------------------------
    def const(self, value: Number, element="index") -> Value:
        """A scalar ``arith.constant``."""
        el = dtype(element)
        return self._op1("arith.constant", [], self._type(el),
                         {"value": self._literal(value, el)})

    def full(self, shape: Sequence[int], value: Number, element) -> Value:
        """A tile of one constant value (``arith.constant dense<...>``)."""
        ty = tile(shape, element, context=self.context)
        el = dtype(element)
        lit = self._literal(value, el).rsplit(" : ", 1)[0]
        return self._op1("arith.constant", [], ty,
                         {"value": f"dense<{lit}> : {ty}"})

    def zeros(self, shape: Sequence[int], element) -> Value:
        return self.full(shape, 0, element)

    @staticmethod
    def _literal(value: Number, el: str) -> str:
        if _is_float_name(el):
            return float_attr(float(value), el)
        if isinstance(value, float) and not value.is_integer():
            raise DTypeError(f"{value} is not an integer constant of type {el}")
        if el == "i1":
            return "true" if value else "false"
        return f"{int(value)} : {el}"

    def _operand(self, x: ValueLike, like: Optional[Value] = None) -> Value:
        """Turns Python numbers into constants and splats scalars to the
        shape of ``like`` when it is a tile."""
        if isinstance(x, Value):
            if like is not None and like.is_tile and not x.is_tile:
                return self.splat(x, like.shape)
            return x
        if isinstance(x, (bool, int, float)):
            if like is None:
                return self.const(x, "f32" if isinstance(x, float) else "i32")
            if like.is_tile:
                return self.full(like.shape, x, like.dtype)
            return self.const(x, like.dtype)
        raise TypeError(f"expected an ism.Value or a number, got {x!r}")

    def _pair(self, a: ValueLike, b: ValueLike) -> Tuple[Value, Value]:
        if not isinstance(a, Value) and not isinstance(b, Value):
            raise TypeError("at least one operand must be an ism.Value")
        if isinstance(a, Value) and (a.is_tile or not isinstance(b, Value)):
            return a, self._operand(b, a)
        return self._operand(a, b), b

    def _is_float(self, v: Value) -> bool:
        return _is_float_name(v.dtype)

    # -- arith and math ------------------------------------------------------
    def _binary(self, fop: str, iop: str, a: ValueLike, b: ValueLike) -> Value:
        a, b = self._pair(a, b)
        return self._op1(fop if self._is_float(a) else iop, [a, b], a.type)

    def _binary_int(self, op: str, a: ValueLike, b: ValueLike) -> Value:
        a, b = self._pair(a, b)
        return self._op1(op, [a, b], a.type)

    def add(self, a, b) -> Value:
        return self._binary("arith.addf", "arith.addi", a, b)

    def sub(self, a, b) -> Value:
        return self._binary("arith.subf", "arith.subi", a, b)

    def mul(self, a, b) -> Value:
        return self._binary("arith.mulf", "arith.muli", a, b)

    def div(self, a, b) -> Value:
        """Float division, or signed integer division."""
        return self._binary("arith.divf", "arith.divsi", a, b)

    def rem(self, a, b) -> Value:
        return self._binary("arith.remf", "arith.remsi", a, b)

    def ceildiv(self, a, b) -> Value:
        """Unsigned ceiling division (``arith.ceildivui``), e.g. grid sizes."""
        return self._binary_int("arith.ceildivui", a, b)

    def neg(self, a: Value) -> Value:
        if self._is_float(a):
            return self._op1("arith.negf", [a], a.type)
        return self.sub(0, a)

    def maximum(self, a, b) -> Value:
        """Elementwise maximum (``arith.maximumf`` / ``arith.maxsi``)."""
        return self._binary("arith.maximumf", "arith.maxsi", a, b)

    def minimum(self, a, b) -> Value:
        return self._binary("arith.minimumf", "arith.minsi", a, b)

    def cmp(self, predicate: str, a, b) -> Value:
        """Compares elementwise ("lt", "le", "gt", "ge", "eq", "ne"); floats
        use ordered predicates, integers signed ones. Gives an i1 mask."""
        a, b = self._pair(a, b)
        if self._is_float(a):
            name, pred = "arith.cmpf", _CMPF[predicate]
        else:
            name, pred = "arith.cmpi", _CMPI[predicate]
        return self._op1(name, [a, b], self._like(a, "i1"),
                         {"predicate": f"{pred} : i64"})

    def where(self, mask: Value, a, b) -> Value:
        """``arith.select``: ``a`` where ``mask`` is true, else ``b``."""
        if isinstance(a, Value):
            b = self._operand(b, a)
        elif isinstance(b, Value):
            a = self._operand(a, b)
        else:
            raise TypeError("where() needs at least one ism.Value branch")
        if mask.is_tile and not a.is_tile:
            a, b = self.splat(a, mask.shape), self.splat(b, mask.shape)
        return self._op1("arith.select", [mask, a, b], a.type)

    select = where

    def _like(self, v: Value, element: str) -> _ism.Type:
        """``v``'s type with another element type (keeping any layout)."""
        if not v.is_tile:
            return self._type(element)
        text = str(v.type)
        enc = ""
        if "," in text:
            enc = text[text.index(","):-1]
        return self._type(f"tensor<{_shape_text(v.shape)}{element}{enc}>")

    def _unary(self, name: str, x: Value) -> Value:
        return self._op1(name, [x], x.type)

    def exp(self, x: Value) -> Value: return self._unary("math.exp", x)
    def exp2(self, x: Value) -> Value: return self._unary("math.exp2", x)
    def log(self, x: Value) -> Value: return self._unary("math.log", x)
    def log2(self, x: Value) -> Value: return self._unary("math.log2", x)
    def sqrt(self, x: Value) -> Value: return self._unary("math.sqrt", x)
    def rsqrt(self, x: Value) -> Value: return self._unary("math.rsqrt", x)
    def sin(self, x: Value) -> Value: return self._unary("math.sin", x)
    def cos(self, x: Value) -> Value: return self._unary("math.cos", x)
    def tanh(self, x: Value) -> Value: return self._unary("math.tanh", x)
    def erf(self, x: Value) -> Value: return self._unary("math.erf", x)

    def abs(self, x: Value) -> Value:
        return self._unary("math.absf" if self._is_float(x) else "math.absi", x)

    def fma(self, a: Value, b: Value, c: Value) -> Value:
        return self._op1("math.fma", [a, b, c], a.type)

    # -- casts -----------------------------------------------------------------
    def extf(self, x: Value, element) -> Value:
        return self._op1("arith.extf", [x], self._like(x, dtype(element)))

    def truncf(self, x: Value, element) -> Value:
        return self._op1("arith.truncf", [x], self._like(x, dtype(element)))

    def cast(self, x: Value, element) -> Value:
        """Converts elements to ``element``, picking the arith cast: extf,
        truncf, extsi (extui for i1), trunci, sitofp, fptosi, index_cast."""
        src, dst = x.dtype, dtype(element)
        if src == dst:
            return x
        sf, df = _is_float_name(src), _is_float_name(dst)
        if sf and df:
            bits = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "tf32": 19}
            wider = bits.get(dst, 8) > bits.get(src, 8)
            return (self.extf if wider else self.truncf)(x, dst)
        if sf:
            if dst == "index":
                return self.cast(self.cast(x, "i64"), "index")
            name = "arith.fptosi"
        elif df:
            if src == "index":
                x = self.cast(x, "i64")
            name = "arith.uitofp" if src == "i1" else "arith.sitofp"
        elif "index" in (src, dst):
            name = "arith.index_cast"
        else:
            sw, dw = _int_width(src), _int_width(dst)
            if sw is None or dw is None:
                raise DTypeError(f"no cast from {src} to {dst}")
            name = ("arith.extui" if src == "i1" else "arith.extsi") \
                if dw > sw else "arith.trunci"
        return self._op1(name, [x], self._like(x, dst))

    def dim(self, buffer: Value, index: int) -> Value:
        """The size of dimension ``index`` of a memref (``memref.dim``)."""
        return self._op1("memref.dim", [buffer, self._index(index)],
                         self._type("index"))

    # -- loops -----------------------------------------------------------------
    def for_range(self, lo, hi, step=1, iter_args: Sequence[Value] = (),
                  body: Optional[Callable] = None):
        """An ``scf.for`` from ``lo`` to ``hi`` by ``step`` (ints become
        index constants) carrying ``iter_args`` (tiles or scalars).

        With ``body``, calls ``body(iv, *iter_args)``, which returns the next
        iteration's values, and returns the loop's results (one Value, a
        tuple, or None). Without it, returns a context manager::

            with k.for_range(0, K, 64, [acc]) as loop:
                kk, acc = loop.iv, loop.args[0]
                loop.yield_(k.dot(a, b, acc))
            acc = loop.result
        """
        loop = _Loop(self, lo, hi, step, iter_args)
        if body is None:
            return loop
        with loop:
            out = body(loop.iv, *loop.args)
            if out is None:
                out = ()
            elif isinstance(out, Value):
                out = (out,)
            loop.yield_(*out)
        return loop.result

    def _index(self, x) -> Value:
        if isinstance(x, Value):
            return x
        return self.const(int(x), "index")

    def _region_block(self, op: _ism.Operation, index: int, arg_types) -> _ism.Block:
        return op.regions[index].add_block(list(arg_types), self._loc())


class _Loop:
    """The context manager :meth:`_Builder.for_range` returns."""

    def __init__(self, b: _Builder, lo, hi, step, iter_args) -> None:
        self.b = b
        inits = [b._operand(v) for v in iter_args]
        bounds = [b._index(lo), b._index(hi), b._index(step)]
        self.op = b._create("scf.for", bounds + inits, [v.type for v in inits],
                            regions=1, verify=False)
        block = b._region_block(self.op, 0,
                                [bounds[0].type] + [v.type for v in inits])
        self.block = block
        block_args = [Value(a, b) for a in block.arguments]
        self.iv, self.args = block_args[0], block_args[1:]
        self._yielded = False
        self.result = None
        self.results: Tuple[Value, ...] = ()

    def __enter__(self) -> "_Loop":
        self.b._blocks.append(self.block)
        return self

    def yield_(self, *values) -> None:
        """Ends the body, passing ``values`` to the next iteration."""
        vals = [self.b._operand(v, a) for v, a in zip(values, self.args)]
        if len(values) != len(self.args):
            vals = [self.b._operand(v) for v in values]
        self.b._create("scf.yield", vals, verify=False)
        self._yielded = True

    def __exit__(self, exc_type, exc, tb) -> None:
        self.b._blocks.pop()
        if exc_type is not None:
            self.op.erase()
            return
        if not self._yielded:
            if self.args:
                self.op.erase()
                raise ValueError("a for_range body with iter_args must end "
                                 "with loop.yield_(...)")
            self.b._blocks.append(self.block)
            self.yield_()
            self.b._blocks.pop()
        self.b._verify(self.op)
        self.results = tuple(Value(r, self.b) for r in self.op.results)
        if len(self.results) == 1:
            self.result = self.results[0]
        elif self.results:
            self.result = self.results


class KernelBuilder(_Builder):
    """Builds one ``ism.kernel``: ``args`` are the kernel's arguments;
    methods append ops; :meth:`finish` (or leaving the ``with`` block) adds
    ``ism.return`` and verifies the whole kernel."""

    def __init__(self, module: Module, name: str, arg_types: Sequence,
                 num_warps: int = 4,
                 min_ctas_per_sm: Optional[int] = None,
                 gather_stages: Optional[int] = None,
                 load_stages: Optional[int] = None) -> None:
        super().__init__(module)
        self.name = name
        types = [t if isinstance(t, _ism.Type) else scalar(t, module.context)
                 for t in arg_types]
        sig = "(" + ", ".join(str(t) for t in types) + ") -> ()"
        self._blocks.append(module._m.body)
        attrs = {"sym_name": _string_attr(name), "function_type": sig,
                 "num_warps": f"{int(num_warps)} : i32"}
        if min_ctas_per_sm is not None:
            attrs["min_ctas_per_sm"] = f"{int(min_ctas_per_sm)} : i32"
        # ism-pipeline-gathers: gathers at loaded coordinates issued
        # gather_stages - 1 iterations ahead through a shared-memory ring.
        if gather_stages is not None:
            attrs["gather_stages"] = f"{int(gather_stages)} : i32"
        # ism-pipeline-loads: the loads of streaming loops issued
        # load_stages - 1 iterations ahead (None: the compiler's choice).
        if load_stages is not None:
            attrs["load_stages"] = f"{int(load_stages)} : i32"
        self._op = self._create("ism.kernel", [], [], attrs, regions=1,
                                verify=False)
        self._blocks.pop()
        entry = self._region_block(self._op, 0, types)
        self._blocks.append(entry)
        self.args = [Value(a, self) for a in entry.arguments]

    def __enter__(self) -> "KernelBuilder":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            if self._op is not None:
                self._op.erase()
                self._op = None
            self._blocks.clear()
            return
        self.finish()

    def finish(self) -> None:
        """Adds ``ism.return`` and verifies the kernel; on failure the kernel
        is removed from the module and VerificationError raised."""
        if self._op is None:
            return
        self._create("ism.return", verify=False)
        self._blocks.clear()
        op, self._op = self._op, None
        self._verify(op)

    # -- program instances -----------------------------------------------------
    def program_id(self, axis="x", element="index") -> Value:
        """This program instance's index along grid axis x/y/z (0/1/2)."""
        return self._op1("ism.program_id", [], self._type(dtype(element)),
                         {"axis": f"{_axis(axis)} : i32"})

    def num_programs(self, axis="x", element="index") -> Value:
        """The grid size along axis x/y/z."""
        return self._op1("ism.num_programs", [], self._type(dtype(element)),
                         {"axis": f"{_axis(axis)} : i32"})

    # -- tiles -----------------------------------------------------------------
    def range(self, start: int, end: int, element="i32") -> Value:
        """The 1-D tile ``[start, ..., end - 1]`` (``ism.range``)."""
        ty = self._tile_type((end - start,), element)
        return self._op1("ism.range", [], ty,
                         {"start": f"{int(start)} : i32", "end": f"{int(end)} : i32"})

    def arange(self, start: int, end: int, element="i32") -> Value:
        return self.range(start, end, element)

    def splat(self, x: ValueLike, shape: Sequence[int]) -> Value:
        """A tile of ``shape`` whose elements are the scalar ``x``."""
        x = self._operand(x) if not isinstance(x, Value) else x
        return self._op1("ism.splat", [x], self._tile_type(shape, x.dtype))

    def broadcast(self, x: Value, shape: Sequence[int]) -> Value:
        """Repeats ``x`` along its size-1 dimensions to ``shape``; a scalar
        is splat."""
        if not x.is_tile:
            return self.splat(x, shape)
        return self._op1("ism.broadcast", [x], self._tile_type(shape, x.dtype))

    def expand_dims(self, x: Value, axis: int) -> Value:
        """Inserts a size-1 dimension at ``axis``."""
        shape = list(x.shape or ())
        pos = axis if 0 <= axis <= len(shape) else len(shape)
        shape.insert(pos, 1)
        return self._op1("ism.expand_dims", [x], self._tensor_type(shape, x.dtype),
                         {"axis": f"{int(axis)} : i32"})

    def reshape(self, x: Value, shape: Sequence[int]) -> Value:
        return self._op1("ism.reshape", [x], self._tile_type(shape, x.dtype))

    def trans(self, x: Value, order: Optional[Sequence[int]] = None) -> Value:
        """Permutes dimensions: result dimension i is source dimension
        ``order[i]`` (default: reversed)."""
        src = list(x.shape or ())
        if order is None:
            order = list(reversed(range(len(src))))
        order = [int(o) for o in order]
        if sorted(order) == list(range(len(src))):
            shape = [src[o] for o in order]
        else:
            shape = src
        return self._op1("ism.trans", [x], self._tensor_type(shape, x.dtype),
                         {"order": "array<i32" + "".join(
                             (": " if i == 0 else ", ") + str(o)
                             for i, o in enumerate(order)) + ">"})

    def convert_layout(self, x: Value, result_type: _ism.Type) -> Value:
        """Moves a tile to another layout (``result_type`` from
        ``ism.tile(shape, dtype, encoding=...)``)."""
        return self._op1("ism.convert_layout", [x], result_type)

    # -- memory ----------------------------------------------------------------
    def load(self, base: Value, offsets: Sequence, shape: Sequence[int],
             mask: Optional[Value] = None, padding: Optional[Number] = None) -> Value:
        """Reads the ``shape`` block of ``base`` at ``offsets`` (one index per
        memref dimension); out-of-bounds and masked-off elements read
        ``padding`` (default 0)."""
        offs = [self._index(o) for o in offsets]
        operands = [base] + offs + ([mask] if mask is not None else [])
        attrs = {"operandSegmentSizes": _segments(1, len(offs), int(mask is not None))}
        if padding is not None:
            attrs["padding"] = self._literal(padding, base.dtype)
        return self._op1("ism.load", operands,
                         self._tile_type(shape, base.dtype), attrs)

    def store(self, value: Value, base: Value, offsets: Sequence,
              mask: Optional[Value] = None) -> None:
        """Writes ``value`` to the block of ``base`` at ``offsets``, skipping
        out-of-bounds and masked-off elements."""
        offs = [self._index(o) for o in offsets]
        operands = [value, base] + offs + ([mask] if mask is not None else [])
        self._create("ism.store", operands, [],
                     {"operandSegmentSizes": _segments(1, 1, len(offs),
                                                       int(mask is not None))})

    def gather(self, base: Value, indices: Sequence[Value],
               mask: Optional[Value] = None, padding: Optional[Number] = None) -> Value:
        """Reads ``base[indices[0][e], indices[1][e], ...]`` for every element
        ``e`` (one index tile per memref dimension)."""
        indices = list(indices)
        if not indices:
            raise ValueError("gather needs one index tile per memref dimension")
        operands = [base] + indices + ([mask] if mask is not None else [])
        attrs = {"operandSegmentSizes": _segments(1, len(indices), int(mask is not None))}
        if padding is not None:
            attrs["padding"] = self._literal(padding, base.dtype)
        return self._op1("ism.gather", operands,
                         self._tensor_type(indices[0].shape, base.dtype), attrs)

    def scatter(self, value: Value, base: Value, indices: Sequence[Value],
                mask: Optional[Value] = None) -> None:
        """Writes ``value[e]`` to ``base[indices[0][e], ...]``."""
        indices = list(indices)
        operands = [value, base] + indices + ([mask] if mask is not None else [])
        self._create("ism.scatter", operands, [],
                     {"operandSegmentSizes": _segments(1, 1, len(indices),
                                                       int(mask is not None))})

    def atomic_rmw(self, kind: str, base: Value, indices: Sequence[Value],
                   value: ValueLike, mask: Optional[Value] = None,
                   sem: str = "relaxed") -> Value:
        """Atomically applies ``kind`` (add, max, min, umax, umin, and, or,
        xor, xchg) at index-tile coordinates; returns the old values.
        ``sem`` (relaxed, acquire, release, acq_rel) orders the updates
        with the program's other memory accesses, at GPU scope."""
        if kind not in _ATOMIC_KINDS:
            raise ValueError(f"unknown atomic kind {kind!r}; one of "
                             f"{', '.join(_ATOMIC_KINDS)}")
        if sem not in _SEMANTICS:
            raise ValueError(f"unknown memory semantics {sem!r}; one of "
                             f"{', '.join(_SEMANTICS)}")
        indices = list(indices)
        if not isinstance(value, Value):
            if not indices:
                raise ValueError("atomic_rmw needs index tiles")
            value = self.full(indices[0].shape, value, base.dtype)
        operands = [base] + indices + [value] + ([mask] if mask is not None else [])
        attrs = {"kind": f"{_ATOMIC_KINDS[kind]} : i32",
                 "operandSegmentSizes": _segments(1, len(indices), 1, int(mask is not None))}
        if sem != "relaxed":
            attrs["sem"] = f"{_SEMANTICS[sem]} : i32"
        return self._op1("ism.atomic_rmw", operands, value.type, attrs)

    # -- computation -----------------------------------------------------------
    def dot(self, a: Value, b: Value, acc: Optional[Value] = None,
            precision: str = "ieee", acc_dtype="f32") -> Value:
        """``a x b + acc`` (``ism.dot``); ``acc`` defaults to zeros of
        ``acc_dtype``. ``precision`` is ieee, tf32 or tf32x3."""
        if precision not in _PRECISIONS:
            raise ValueError(f"unknown precision {precision!r}; one of "
                             "ieee, tf32, tf32x3")
        if acc is None:
            sa, sb = a.shape or (), b.shape or ()
            if len(sa) >= 2 and len(sb) >= 2:
                acc = self.zeros(tuple(sa[:-1]) + (sb[-1],), acc_dtype)
            else:
                acc = self.zeros((1, 1), acc_dtype)
        attrs = {}
        if precision != "ieee":
            attrs["input_precision"] = f"{_PRECISIONS[precision]} : i32"
        return self._op1("ism.dot", [a, b, acc], acc.type, attrs)

    def reduce(self, srcs, axis: int, combiner: Callable):
        """``ism.reduce``: combines the elements of ``srcs`` (one tile or a
        list) along ``axis`` with ``combiner(acc..., next...)``, which builds
        scalar ops and returns one value per source. A 1-D source reduces to
        a scalar."""
        return self._combine("ism.reduce", srcs, axis, combiner, False)

    def scan(self, srcs, axis: int, combiner: Callable, reverse: bool = False):
        """``ism.scan``: inclusive scan along ``axis`` with ``combiner``."""
        return self._combine("ism.scan", srcs, axis, combiner, reverse)

    def sum(self, x: Value, axis: int = 0):
        return self.reduce(x, axis, lambda a, b: a + b)

    def max(self, x: Value, axis: int = 0):
        """Reduces with maximum along ``axis`` (use :meth:`maximum` for the
        elementwise maximum of two values)."""
        return self.reduce(x, axis, self.maximum)

    def min(self, x: Value, axis: int = 0):
        return self.reduce(x, axis, self.minimum)

    def cumsum(self, x: Value, axis: int = 0, reverse: bool = False):
        return self.scan(x, axis, lambda a, b: a + b, reverse)

    def _combine(self, name, srcs, axis, combiner, reverse):
        srcs = [srcs] if isinstance(srcs, Value) else list(srcs)
        if not srcs or not all(isinstance(s, Value) and s.is_tile for s in srcs):
            raise TypeError(f"{name} takes one or more tiles")
        results = []
        for s in srcs:
            shape = list(s.shape)
            if name == "ism.scan" or not 0 <= axis < len(shape):
                results.append(s.type)
            elif len(shape) == 1:
                results.append(self._type(s.dtype))
            else:
                del shape[axis]
                results.append(self._tensor_type(shape, s.dtype))
        attrs = {"axis": f"{int(axis)} : i32"}
        if reverse:
            attrs["reverse"] = "unit"
        op = self._create(name, srcs, results, attrs, regions=1, verify=False)
        try:
            scalars = [self._type(s.dtype) for s in srcs]
            block = self._region_block(op, 0, scalars + scalars)
            self._blocks.append(block)
            try:
                args = [Value(a, self) for a in block.arguments]
                out = combiner(*args)
                if isinstance(out, Value):
                    out = [out]
                out = [self._operand(v, args[i]) for i, v in enumerate(out)]
                self._create("ism.yield", out, verify=False)
            finally:
                self._blocks.pop()
        except BaseException:
            op.erase()
            raise
        self._verify(op)
        return self._wrap(op)

    # -- tiles from Python -------------------------------------------------------
    def _tile_type(self, shape, element) -> _ism.Type:
        return tile(tuple(shape), element, context=self.context)

    def _tensor_type(self, shape, element) -> _ism.Type:
        return tensor(tuple(shape), element, context=self.context)


class HostBuilder(_Builder):
    """Builds a host function (``func.func``) that launches kernels::

        with m.host("main", [ism.memref((None,), "f32")]) as h:
            n = h.dim(h.args[0], 0)
            h.launch("kernel", [h.ceildiv(n, 128)], h.args)
    """

    def __init__(self, module: Module, name: str, arg_types: Sequence) -> None:
        super().__init__(module)
        self.name = name
        types = [t if isinstance(t, _ism.Type) else scalar(t, module.context)
                 for t in arg_types]
        sig = "(" + ", ".join(str(t) for t in types) + ") -> ()"
        self._blocks.append(module._m.body)
        self._op = self._create("func.func", [], [],
                                {"sym_name": _string_attr(name),
                                 "function_type": sig},
                                regions=1, verify=False)
        self._blocks.pop()
        entry = self._region_block(self._op, 0, types)
        self._blocks.append(entry)
        self.args = [Value(a, self) for a in entry.arguments]

    def __enter__(self) -> "HostBuilder":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            if self._op is not None:
                self._op.erase()
                self._op = None
            self._blocks.clear()
            return
        self.finish()

    def finish(self) -> None:
        """Adds ``func.return`` and verifies the function."""
        if self._op is None:
            return
        del self._blocks[1:]
        self._create("func.return", verify=False)
        self._blocks.clear()
        op, self._op = self._op, None
        self._verify(op)

    def require(self, condition: Value, message: str,
                *values: Value) -> None:
        """``ism.assert``: the host function requires ``condition`` (an i1
        scalar) of its arguments. When it is false, running the function
        stops before anything launches with ``@name: message``, ``{0}``,
        ``{1}``, ... in ``message`` replaced by ``values``::

            m_, k = h.dim(A, 0), h.dim(A, 1)
            k2, n = h.dim(B, 0), h.dim(B, 1)
            h.require(k == k2, "A is {0}x{1} and B is {2}x{3}: inner "
                      "dimensions differ", m_, k, k2, n)
        """
        vals = [self._operand(v) for v in values]
        self._create("ism.assert", [self._h(condition)] + vals, [],
                     {"message": _string_attr(message)})

    def launch(self, kernel, grid: Sequence, args: Sequence[Value]) -> None:
        """``ism.launch``: runs ``kernel`` (a name or KernelBuilder) over a
        1-3 dimensional grid; the arguments must match the kernel's."""
        name = kernel.name if isinstance(kernel, KernelBuilder) else str(kernel)
        grid_vals = [self._index(g) for g in grid]
        args = list(args)
        self._create("ism.launch", grid_vals + args, [], {
            "kernel": "@" + _symbol(name),
            "operandSegmentSizes": _segments(len(grid_vals), len(args))})

    def coschedule(self, policy: str = "warp_specialized", *,
                   stages: Optional[int] = None,
                   registers: Optional[Sequence[int]] = None,
                   replicas: Optional[Sequence[int]] = None,
                   ctas_per_sm: Optional[int] = None,
                   work_counters: Optional[bool] = None,
                   prefetch: Optional[bool] = None,
                   fallback: Optional[bool] = None,
                   join: Optional[bool] = None,
                   timeout_ms: Optional[int] = None,
                   ring_stages: Optional[int] = None) -> "_Coschedule":
        """``ism.coschedule``: the launches made inside the ``with`` block
        run concurrently on the same SMs (policy warp_specialized or
        block_interleaved), fused into one kernel by ism-coschedule; with
        policy ordered, later launches may read what earlier ones write
        (one persistent kernel whose tasks wait for the launches they
        depend on, at most ``timeout_ms``, default 1000).

        The keyword options override the pass's choices (docs/coschedule.md):
        ``stages`` (wgmma ring depth), ``registers`` (one setmaxnreg value
        per warpgroup, in partition order), ``replicas`` (copies per launch
        of a counter-driven partition), ``ctas_per_sm``, ``work_counters``
        (False: static striding), ``prefetch`` (False: no loads issued one
        work item ahead), ``fallback`` (False: keep warp_specialized for
        pairs without a wgmma kernel), ``join`` (False: a GEMM's consumer
        warps do not take the other launch's items after their tiles) and
        ``ring_stages`` (0: the next work item's tiles in registers; 2 to 8:
        a shared-memory ring of that many items; with ordered, the depth of
        the task ring, none by default)."""
        if policy not in _POLICIES:
            raise ValueError(f"unknown coschedule policy {policy!r}; one of "
                             f"{', '.join(_POLICIES)}")
        attrs = {}
        for name, value in (("stages", stages), ("ctas_per_sm", ctas_per_sm),
                            ("timeout_ms", timeout_ms)):
            if value is None:
                continue
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
            attrs[name] = f"{value} : i32"
        if ring_stages is not None:
            if (not isinstance(ring_stages, int) or isinstance(ring_stages, bool)
                    or not (ring_stages == 0 or 2 <= ring_stages <= 8)):
                raise ValueError(f"ring_stages must be 0 or an int from 2 to 8, "
                                 f"got {ring_stages!r}")
            attrs["ring_stages"] = f"{ring_stages} : i32"
        for name, values in (("registers", registers), ("replicas", replicas)):
            if values is None:
                continue
            values = list(values)
            if not values or not all(isinstance(v, int) and
                                     not isinstance(v, bool) and v > 0
                                     for v in values):
                raise ValueError(f"{name} must be a non-empty list of positive "
                                 f"ints, got {values!r}")
            attrs[name] = "array<i32: " + ", ".join(map(str, values)) + ">"
        for name, flag in (("work_counters", work_counters),
                           ("prefetch", prefetch), ("fallback", fallback),
                           ("join", join)):
            if flag is None:
                continue
            if not isinstance(flag, bool):
                raise ValueError(f"{name} must be a bool, got {flag!r}")
            attrs[name] = "true" if flag else "false"
        return _Coschedule(self, policy, attrs)


class _Coschedule:
    def __init__(self, b: HostBuilder, policy: str, attrs: dict) -> None:
        self.b = b
        self.op = b._create("ism.coschedule", [], [],
                            {"policy": f"{_POLICIES[policy]} : i32", **attrs},
                            regions=1, verify=False)
        self.block = b._region_block(self.op, 0, [])

    def __enter__(self) -> "_Coschedule":
        self.b._blocks.append(self.block)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.b._blocks.pop()
        if exc_type is not None:
            self.op.erase()
            return
        # Operands made inside the block (grid constants, ...) belong
        # before the coschedule, which holds only launches.
        for op in self.block.operations:
            if op.name != "ism.launch":
                op.move_before(self.op)
        self.b._verify(self.op)


def _axis(axis) -> int:
    if axis not in _AXES:
        raise ValueError(f"grid axis must be x, y or z (or 0-2), got {axis!r}")
    return _AXES[axis]


def _segments(*sizes: int) -> str:
    return "array<i32: " + ", ".join(str(s) for s in sizes) + ">"


def _string_attr(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _symbol(name: str) -> str:
    if name.replace("_", "a").replace("$", "a").replace(".", "a").isalnum() \
            and not name[:1].isdigit():
        return name
    return _string_attr(name)
