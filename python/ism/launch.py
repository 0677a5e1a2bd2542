"""Compiled kernels that run on GPU tensors: ``ism.compile`` and ``ism.jit``.

    k = ism.compile(module)              # compiled once, cached on disk
    k(x, y, n)                           # torch CUDA tensors and numbers
    k.softmax[(rows,)](x, y)             # one ism.kernel, with a grid

The host function (``func.func @main`` and its ``ism.launch``es) is the
entry point, so grids are still computed in IR. Arguments follow its
signature: a memref takes a CUDA tensor -- a ``torch.Tensor``, or any object
with ``__cuda_array_interface__`` (CuPy, Numba) or ``__dlpack__`` -- whose
dtype, rank, static sizes and device must match, and which must be
contiguous (call ``.contiguous()`` on a strided view); a scalar takes a
Python or NumPy number. Kernels run on the current torch CUDA stream (or
``stream=``: a ``torch.cuda.Stream``, a CuPy stream or a raw ``CUstream``
handle), asynchronously: no copies, no synchronisation. See docs/python.md.
"""

from __future__ import annotations

import numbers
import os
import sys
import threading
import warnings
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import _ism
from .ir import Module

__all__ = ["CompiledProgram", "JITFunction", "KernelLauncher", "cache_dir",
           "compile", "jit"]

# Element type names (MLIR spelling) -> torch dtype attribute names.
_TORCH_DTYPES = {
    "f16": ("float16",), "bf16": ("bfloat16",), "f32": ("float32",),
    "f64": ("float64",), "i1": ("bool",), "i8": ("int8", "uint8"),
    "i16": ("int16",), "i32": ("int32",), "i64": ("int64",),
    "f8E4M3FN": ("float8_e4m3fn",), "f8E5M2": ("float8_e5m2",),
}
# __cuda_array_interface__ typestrs (little-endian or native) per element.
_CAI_TYPESTRS = {
    "f16": {"<f2"}, "f32": {"<f4"}, "f64": {"<f8"}, "i1": {"|b1"},
    "i8": {"|i1", "|u1"}, "i16": {"<i2"}, "i32": {"<i4"}, "i64": {"<i8"},
}
# DLPack (type code, bits) per element: codes 0 int, 1 uint, 2 float,
# 4 bfloat, 6 bool.
_DLPACK_TYPES = {
    "f16": {(2, 16)}, "bf16": {(4, 16)}, "f32": {(2, 32)}, "f64": {(2, 64)},
    "i1": {(6, 8), (1, 1)}, "i8": {(0, 8), (1, 8)}, "i16": {(0, 16)},
    "i32": {(0, 32)}, "i64": {(0, 64)},
    # DLPack 1.1's kDLFloat8_e4m3fn and kDLFloat8_e5m2.
    "f8E4M3FN": {(10, 8)}, "f8E5M2": {(12, 8)},
}
_FLOAT_SCALARS = {"f16", "bf16", "f32", "f64"}


def cache_dir() -> str:
    """The directory of the compile cache ("" when ``ISM_DISABLE_CACHE=1``
    disables it): ``$ISM_CACHE_DIR``, else ``$XDG_CACHE_HOME/ism``, else
    ``~/.cache/ism``. ``ism-run`` uses the same one."""
    return _ism.default_cache_dir()


def _memref_text(element: str, shape: Sequence[int]) -> str:
    dims = "x".join("?" if s < 0 else str(s) for s in shape)
    return f"memref<{dims + 'x' if dims else ''}{element}>"


def _contiguous_strides(shape: Sequence[int]) -> Tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def _is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether ``strides`` (in elements) are row-major for ``shape``, ignoring
    the strides of dimensions of size 1 (as torch does)."""
    step = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1 and stride != step:
            return False
        step *= size
    return True


def _stream_handle(stream, device: int) -> int:
    """The raw CUstream of ``stream``: an int, a torch.cuda.Stream, a CuPy
    stream, or None for torch's current stream on ``device`` (the legacy
    default stream, 0, without torch)."""
    if stream is None:
        torch = sys.modules.get("torch")
        if torch is not None:
            raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
            if raw is not None:
                return raw(device)
            return torch.cuda.current_stream(device).cuda_stream
        return 0
    if isinstance(stream, int):
        return stream
    for attr in ("cuda_stream", "ptr", "handle"):
        handle = getattr(stream, attr, None)
        if isinstance(handle, int):
            return handle
    raise TypeError(f"stream must be a torch.cuda.Stream, a CuPy stream or a "
                    f"CUstream handle (int), got {type(stream).__name__}")


class _Param:
    """One parameter of a host function and how to pass an argument to it."""

    __slots__ = ("index", "kind", "type", "shape", "torch_dtypes", "text",
                 "fn")

    def __init__(self, fn: str, index: int, kind: str, type_: str,
                 shape: List[int]):
        self.fn = fn
        self.index = index
        self.kind = kind
        self.type = type_
        self.shape = tuple(shape)
        self.text = _memref_text(type_, shape) if kind == "buffer" else type_
        self.torch_dtypes = None

    def _where(self) -> str:
        return f"argument #{self.index} of @{self.fn} ({self.text})"

    def _torch_dtypes(self, torch):
        if self.torch_dtypes is None:
            names = _TORCH_DTYPES.get(self.type, ())
            self.torch_dtypes = tuple(getattr(torch, n) for n in names
                                      if hasattr(torch, n))
        return self.torch_dtypes

    def convert(self, arg, device: int, waits: List[int]):
        """``arg`` as the extension takes it: (pointer, shape) for a buffer,
        an int or float for a scalar. Raises TypeError/ValueError naming the
        argument. The stream a ``__cuda_array_interface__`` producer names
        (its data is ready in that stream's order) goes into ``waits``."""
        if self.kind == "scalar":
            return self._scalar(arg)
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(arg, torch.Tensor):
            return self._torch(arg, torch, device)
        cai = getattr(arg, "__cuda_array_interface__", None)
        if cai is not None:
            return self._cuda_array_interface(cai, waits)
        if hasattr(arg, "__dlpack__"):
            return self._dlpack(arg, device)
        raise TypeError(
            f"{self._where()} must be a CUDA tensor (torch.Tensor, or an "
            f"object with __cuda_array_interface__ or __dlpack__), got "
            f"{type(arg).__module__}.{type(arg).__name__}"
            + ("; host arrays run with ism.run" if
               type(arg).__name__ == "ndarray" else ""))

    def _scalar(self, arg):
        t = type(arg)
        if t is int:  # the common cases first, without ABC checks
            return float(arg) if self.type in _FLOAT_SCALARS else arg
        if t is float and self.type in _FLOAT_SCALARS:
            return arg
        if isinstance(arg, bool) or not isinstance(arg, numbers.Real):
            raise TypeError(f"{self._where()} must be a number, got "
                            f"{type(arg).__name__}")
        if self.type in _FLOAT_SCALARS:
            return float(arg)
        if not isinstance(arg, numbers.Integral):
            raise TypeError(f"{self._where()} must be an integer, got "
                            f"{arg!r}")
        return int(arg)

    def _check_shape(self, shape) -> None:
        if len(shape) != len(self.shape):
            raise ValueError(f"{self._where()} takes {len(self.shape)} "
                             f"dimension(s), got a tensor of shape "
                             f"{tuple(shape)}")
        for d, (want, have) in enumerate(zip(self.shape, shape)):
            if want >= 0 and want != have:
                raise ValueError(f"{self._where()}: dimension {d} is {have}, "
                                 f"not {want}")

    def _torch(self, t, torch, device: int):
        dtypes = self._torch_dtypes(torch)
        if t.dtype not in dtypes:
            raise TypeError(f"{self._where()} takes "
                            f"{' or '.join(str(d) for d in dtypes) or self.type}"
                            f" tensors, got {t.dtype}")
        where = t.get_device()
        if where != device:
            raise ValueError(
                f"{self._where()} is on "
                f"{'the CPU' if where < 0 else f'cuda:{where}'} but the "
                f"kernel was compiled for cuda:{device}"
                + (" (pass device= to ism.compile)" if where >= 0 else
                   " (move it with .cuda(); host arrays run with ism.run)"))
        if not t.is_contiguous():
            raise ValueError(f"{self._where()} is not contiguous (strides "
                             f"{tuple(t.stride())}); pass .contiguous()")
        # torch.Size is a tuple: the extension checks the rank and the
        # static sizes.
        return (t.data_ptr(), t.shape)

    def _cuda_array_interface(self, cai: Dict[str, Any], waits: List[int]):
        typestr = cai.get("typestr", "")
        allowed = _CAI_TYPESTRS.get(self.type, set())
        native = typestr.replace("=", "<") if sys.byteorder == "little" \
            else typestr
        if native not in allowed:
            raise TypeError(f"{self._where()}: the array holds {typestr} "
                            f"elements (__cuda_array_interface__), not "
                            f"{self.type}")
        shape = tuple(int(s) for s in cai["shape"])
        self._check_shape(shape)
        strides = cai.get("strides")
        if strides is not None:
            itemsize = int(typestr[2:])
            if any(s % itemsize for s in strides) or not _is_contiguous(
                    shape, [s // itemsize for s in strides]):
                raise ValueError(f"{self._where()} is not contiguous "
                                 f"(strides {tuple(strides)} bytes)")
        # Version 3: the producer's stream, which the launch must follow
        # (None: the data is ready now; 1 and 2: the legacy and per-thread
        # default streams; 0 is ambiguous and disallowed by the protocol).
        producer = cai.get("stream")
        if producer is not None:
            if isinstance(producer, bool) or not isinstance(producer, int):
                raise TypeError(f"{self._where()}: __cuda_array_interface__ "
                                f"stream must be an int or None, got "
                                f"{producer!r}")
            if producer == 0:
                raise ValueError(f"{self._where()}: __cuda_array_interface__ "
                                 f"stream 0 is ambiguous (the protocol "
                                 f"disallows it): 1 is the legacy default "
                                 f"stream, 2 the per-thread one")
            waits.append(producer)
        data, readonly = cai["data"]
        return (int(data or 0), shape)

    def _dlpack(self, arg, device: int):
        from . import _dlpack
        ptr, shape, strides, (code, bits), (dev_type, dev_id) = \
            _dlpack.describe(arg)
        if dev_type == 1:  # kDLCPU
            raise TypeError(f"{self._where()} must be a CUDA tensor, got "
                            f"host memory ({type(arg).__name__}); host arrays "
                            f"run with ism.run")
        if dev_type not in (2, 13):  # kDLCUDA, kDLCUDAManaged
            raise ValueError(f"{self._where()} is not in CUDA memory "
                             f"(DLPack device type {dev_type})")
        if dev_type == 2 and dev_id != device:
            raise ValueError(f"{self._where()} is on cuda:{dev_id} but the "
                             f"kernel was compiled for cuda:{device}")
        if (code, bits) not in _DLPACK_TYPES.get(self.type, set()):
            raise TypeError(f"{self._where()}: the tensor holds DLPack type "
                            f"(code {code}, {bits} bits), not {self.type}")
        self._check_shape(shape)
        if strides is not None and not _is_contiguous(shape, strides):
            raise ValueError(f"{self._where()} is not contiguous (strides "
                             f"{tuple(strides)})")
        return (ptr, shape)


def _bind_torch(program) -> None:
    """Gives ``program``'s fast path torch's types once torch is imported
    (the fast path declines every call until then)."""
    torch = sys.modules.get("torch")
    if torch is None or getattr(program, "torch_bound", True):
        return
    current = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if current is None:
        return
    dtypes = {element: tuple(getattr(torch, n) for n in names
                             if hasattr(torch, n))
              for element, names in _TORCH_DTYPES.items()}
    program.bind_torch(torch.Tensor, current, dtypes)


class _Function:
    """One host function of a compiled program and its call path: the
    extension's ``launch_fast`` takes torch tensors and numbers as they are;
    anything else (CuPy, DLPack, a stream object, a wrong argument) comes
    here, is converted or rejected with an error naming the argument, and
    goes through ``launch``."""

    __slots__ = ("program", "index", "name", "params", "device", "fast")

    def __init__(self, program, index: int, name: str, params, device: int):
        self.program = program
        self.index = index
        self.name = name
        self.device = device
        self.params = [_Param(name, i, kind, ty, shape)
                       for i, (kind, ty, shape) in enumerate(params)]
        self.fast = program.launch_fast

    def __call__(self, args: Tuple[Any, ...], stream=None,
                 tail: Tuple[int, ...] = ()) -> None:
        """Runs the function with ``args`` followed by ``tail`` (values the
        caller has already checked: a direct launch's grid)."""
        if not self.fast(self.index, args, tail, stream):
            self.convert_and_launch(args, stream, tail)

    def convert_and_launch(self, args: Sequence[Any], stream,
                           tail: Tuple[int, ...]) -> None:
        """The Python path: converts every argument (raising for one it
        cannot pass) and launches."""
        _bind_torch(self.program)
        params = self.params
        if len(args) + len(tail) != len(params):
            raise TypeError(
                f"@{self.name} takes {len(params)} argument(s) "
                f"({', '.join(p.text for p in params)}), got {len(args)}")
        device = self.device
        waits: List[int] = []
        converted = tuple([p.convert(a, device, waits)
                           for p, a in zip(params, args)]) + tail
        handle = _stream_handle(stream, device)
        if waits:
            # __cuda_array_interface__ producers' streams: the launch waits
            # for the work queued on them so far (an event, no host wait).
            self.program.wait_for(handle, waits)
        self.program.launch(self.index, converted, handle)


class KernelLauncher:
    """``k.<kernel>``: launches one ``ism.kernel`` directly; index it with
    its grid (an int or a tuple of up to three ints) and call the result
    with the kernel's arguments: ``k.softmax[(rows,)](x, y)``."""

    def __init__(self, function: _Function, kernel: str):
        self._function = function
        self.name = kernel

    @property
    def signature(self) -> List[str]:
        """The kernel's parameter types (without the grid)."""
        return [p.text for p in self._function.params[:-3]]

    def __getitem__(self, grid) -> Callable[..., None]:
        if isinstance(grid, int):
            grid = (grid,)
        if not isinstance(grid, tuple) or not 1 <= len(grid) <= 3 or not all(
                isinstance(g, int) and not isinstance(g, bool) for g in grid):
            raise TypeError(f"the grid of {self.name} must be an int or a "
                            f"tuple of 1 to 3 ints, got {grid!r}")
        if any(g < 0 for g in grid):
            raise ValueError(f"the grid of {self.name} has a negative size: "
                             f"{grid}")
        full = tuple(grid) + (1,) * (3 - len(grid))
        function = self._function

        n = len(function.params) - 3

        def launch(*args, stream=None):
            if len(args) != n:
                raise TypeError(f"kernel {self.name} takes {n} argument(s) "
                                f"({', '.join(self.signature)}), got "
                                f"{len(args)}")
            function(args, stream, full)
        return launch

    def __repr__(self) -> str:
        return f"<ism kernel {self.name}({', '.join(self.signature)})>"


_DIRECT_PREFIX = "__ism_launch_"


class IsmWarning(UserWarning):
    """A warning of ism's compiler (``FILE:LINE:COL: warning: ...``), issued
    by :func:`compile` when the module compiles, or comes from the disk
    cache, with one (e.g. a co-scheduled kernel's ``min_ctas_per_sm`` that
    the fused kernel cannot honour)."""


class CompiledProgram:
    """A module compiled for one GPU: call it like its host function, or
    launch one kernel with ``k.<kernel>[grid](...)``. Made by
    :func:`compile`."""

    def __init__(self, program, entry: Optional[str]):
        self._program = program
        self.entry = entry
        self.device = program.device
        self._entry: Optional[_Function] = None
        self._kernels: Dict[str, KernelLauncher] = {}
        _bind_torch(program)
        for index, (name, params) in enumerate(program.functions()):
            fn = _Function(program, index, name, params, program.device)
            if name.startswith(_DIRECT_PREFIX):
                kernel = name[len(_DIRECT_PREFIX):]
                self._kernels[kernel] = KernelLauncher(fn, kernel)
            elif name == entry:
                self._entry = fn

    @property
    def chip(self) -> str:
        return self._program.chip

    @property
    def cache_hit(self) -> bool:
        """Whether compiling found the result in the disk cache (no pass
        pipeline ran)."""
        return self._program.cache_hit

    @property
    def cache_key(self) -> str:
        return self._program.cache_key

    @property
    def warnings(self) -> List[str]:
        """Compile-cache warnings (an ignored corrupt entry, a failed
        store)."""
        return list(self._program.warnings)

    @property
    def ptx(self) -> str:
        return self._program.ptx

    @property
    def kernels(self) -> Dict[str, KernelLauncher]:
        """The kernels of the module, by name (``k.kernels["softmax"]`` is
        ``k.softmax``)."""
        return dict(self._kernels)

    def kernel_info(self) -> Dict[str, Dict[str, Any]]:
        """Launch facts of every compiled kernel (fused ones included)."""
        return {name: {"threads": threads, "shared_memory_bytes": smem,
                       "tma_operands": tma, "persistent": persistent}
                for name, threads, smem, tma, persistent
                in self._program.kernels()}

    @property
    def signature(self) -> List[str]:
        if self._entry is None:
            return []
        return [p.text for p in self._entry.params]

    def __call__(self, *args, stream=None) -> None:
        if self._entry is None:
            raise TypeError(f"the module has no host function @{self.entry}; "
                            f"launch a kernel with k.<kernel>[grid](...)")
        self._entry(args, stream)

    def __getattr__(self, name: str) -> KernelLauncher:
        kernels = self.__dict__.get("_kernels", {})
        if name in kernels:
            return kernels[name]
        raise AttributeError(f"the module has no ism.kernel @{name} (its "
                             f"kernels: {', '.join(sorted(kernels)) or 'none'})")

    def __repr__(self) -> str:
        return (f"<ism.CompiledProgram @{self.entry} for {self.chip} on "
                f"cuda:{self.device}, kernels: "
                f"{', '.join(sorted(self._kernels))}>")


_COSCHEDULE_MODES = ("fused", "sequential", "streams")
_compiled: Dict[tuple, CompiledProgram] = {}
_compiled_lock = threading.Lock()


def _default_device() -> int:
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_available():
                return torch.cuda.current_device()
        except Exception:  # pragma: no cover - a broken CUDA setup
            pass
    return 0


def compile(module, pipeline: Optional[str] = None, *,
            entry: Optional[str] = "main", chip: Optional[str] = None,
            coschedule: str = "fused", device: Optional[int] = None,
            cache=True) -> CompiledProgram:
    """Compiles ``module`` (an :class:`ism.Module` or its text) for a GPU
    and returns a :class:`CompiledProgram`, callable on CUDA tensors.

    ``entry`` names the host function that calling the program runs (None:
    only direct kernel launches); ``chip`` defaults to the device's (e.g.
    sm_90a; give it to compile without a GPU); ``device`` defaults to torch's
    current device (0 without torch); ``coschedule`` says how
    ``ism.coschedule`` regions run (fused, sequential, streams).

    ``cache``: True uses the on-disk compile cache (:func:`cache_dir`), a
    path uses that directory, False compiles every time. A warm cache
    starts a kernel without running the pass pipeline; programs are also
    remembered for the life of the process.

    Raises :class:`ism.ParseError`, :class:`ism.VerificationError` or
    :class:`ism.CompileError` for a bad module,
    :class:`ism.RuntimeUnavailable` when ``chip`` is not given and there is
    no GPU.
    """
    if isinstance(pipeline, str):
        raise TypeError(
            "ism.compile(module) compiles a module into a callable kernel; "
            "to run a pass pipeline use ism.apply_pipeline(module, "
            f"{pipeline!r})")
    if coschedule not in _COSCHEDULE_MODES:
        raise ValueError(f"coschedule must be one of "
                         f"{', '.join(_COSCHEDULE_MODES)}, got {coschedule!r}")
    if isinstance(module, Module):
        text = str(module)
    elif isinstance(module, str):
        text = module
    else:
        raise TypeError(f"module must be an ism.Module or its text, got "
                        f"{type(module).__name__}")
    if device is None:
        device = _default_device()
    if cache is True:
        directory = cache_dir()
    elif cache is False or cache is None:
        directory = ""
    else:
        directory = os.fspath(cache)
    key = (text, entry, chip or "", coschedule, device, directory)
    with _compiled_lock:
        hit = _compiled.get(key)
        if hit is not None:
            return hit
    program = _ism.Program(text, entry or "", chip or "", coschedule,
                           directory, device)
    for message in program.compiler_warnings:
        warnings.warn(message, IsmWarning, stacklevel=2)
    compiled = CompiledProgram(program, entry)
    with _compiled_lock:
        return _compiled.setdefault(key, compiled)


class JITFunction:
    """``@ism.jit`` over a builder: ``builder(**constexprs)`` returns the
    module (an :class:`ism.Module` or text); calling the function with
    tensors and constexpr keywords compiles once per distinct set of
    constexpr values and runs the host function."""

    def __init__(self, builder: Callable[..., Any], **options):
        self.builder = builder
        self.options = options
        self._programs: Dict[tuple, CompiledProgram] = {}
        self.__name__ = getattr(builder, "__name__", "jit")
        self.__doc__ = getattr(builder, "__doc__", None)

    def compile(self, **constexprs) -> CompiledProgram:
        """The program for these constexpr values (compiled on first use)."""
        key = tuple(sorted(constexprs.items()))
        program = self._programs.get(key)
        if program is None:
            program = compile(self.builder(**constexprs), **self.options)
            self._programs[key] = program
        return program

    def __call__(self, *args, stream=None, **constexprs) -> None:
        self.compile(**constexprs)(*args, stream=stream)


def jit(builder: Optional[Callable[..., Any]] = None, **options):
    """Decorator: ``@ism.jit`` or ``@ism.jit(entry="main", chip=...)`` over
    a function that builds a module from constexpr keyword arguments (block
    sizes, warps). See :class:`JITFunction`."""
    if builder is None:
        return lambda b: JITFunction(b, **options)
    return JITFunction(builder, **options)
