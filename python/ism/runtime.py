"""Running host functions on the GPU.

    result = ism.run(module, x, y, entry="main", timing=True)

NumPy arrays go in as the host function's memref arguments (the runner
copies them to the device and the results back into the same arrays);
Python numbers are its scalar arguments. The arguments are checked against
the function's signature here; the run itself goes through the runner
library that ``ism-run`` uses. A build without it, or a machine without a
CUDA driver or GPU, raises :class:`ism.RuntimeUnavailable`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

from . import _ism
from .ir import Module

__all__ = ["RunResult", "run", "runtime_available"]

# NumPy dtype names of the MLIR element types a buffer may hold.
_NUMPY_NAMES = {
    "f16": {"float16"}, "bf16": {"bfloat16"}, "f32": {"float32"},
    "f64": {"float64"}, "i1": {"bool"}, "i8": {"int8", "uint8"},
    "i16": {"int16", "uint16"}, "i32": {"int32", "uint32"},
    "i64": {"int64", "uint64"}, "f8E4M3FN": {"float8_e4m3fn"},
    "f8E5M2": {"float8_e5m2"},
}


@dataclass
class RunResult:
    """Per-repetition times of a timed run, in milliseconds."""
    times_ms: List[float] = field(default_factory=list)

    @property
    def median_ms(self) -> Optional[float]:
        if not self.times_ms:
            return None
        t = sorted(self.times_ms)
        n = len(t)
        return t[n // 2] if n % 2 else (t[n // 2 - 1] + t[n // 2]) / 2


def runtime_available() -> bool:
    """True when this build links the GPU runner (a GPU may still be
    missing; :func:`run` says so)."""
    return _ism.runtime_available()


def _split_top_level(text: str) -> List[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _signature(module: Module, entry: str) -> List[str]:
    for op in module.operations:
        if op.name == "func.func" and op.attr("sym_name") == f'"{entry}"':
            fn_type = op.attr("function_type")
            inputs = fn_type[fn_type.index("(") + 1:fn_type.index(") ->")]
            return _split_top_level(inputs)
    raise ValueError(f"the module has no host function @{entry}")


def _describe(i: int, arg, ty: str):
    if ty.startswith("memref<"):
        try:
            import numpy as np
        except ImportError as e:  # pragma: no cover - numpy is a dependency
            raise TypeError("buffer arguments are NumPy arrays") from e
        if not isinstance(arg, np.ndarray):
            raise TypeError(f"argument #{i} must be a NumPy array for {ty}, "
                            f"got {type(arg).__name__}")
        body = ty[len("memref<"):-1].split(",")[0]
        dims = body.split("x")
        element, dims = dims[-1], dims[:-1]
        if arg.dtype.name not in _NUMPY_NAMES.get(element, set()):
            raise TypeError(f"argument #{i} has dtype {arg.dtype.name} but "
                            f"the function takes {ty}")
        if arg.ndim != len(dims):
            raise ValueError(f"argument #{i} has {arg.ndim} dimensions but "
                             f"the function takes {ty}")
        for d, (want, have) in enumerate(zip(dims, arg.shape)):
            if want != "?" and int(want) != have:
                raise ValueError(f"argument #{i} dimension {d} is {have} but "
                                 f"the function takes {ty}")
        if not arg.flags.writeable:
            raise ValueError(f"argument #{i} is read-only; the runner writes "
                             "results back into the arrays")
        strides = [s // arg.itemsize for s in arg.strides]
        return ("buffer", arg.ctypes.data, element, list(arg.shape), strides)
    if ty in ("f16", "bf16", "f32", "f64"):
        if not isinstance(arg, (int, float)):
            raise TypeError(f"argument #{i} must be a number for {ty}")
        return ("float", float(arg))
    if not isinstance(arg, int) or isinstance(arg, float):
        raise TypeError(f"argument #{i} must be an integer for {ty}")
    return ("int", int(arg))


def run(module: Module, *args, entry: str = "main", chip: Optional[str] = None,
        timing: bool = False, warmup: int = 3, repetitions: int = 20) -> RunResult:
    """Runs host function ``entry`` of ``module`` on the GPU with ``args``
    (NumPy arrays for memrefs, numbers for scalars); output arrays are
    updated in place. With ``timing``, returns the per-repetition times.

    Raises TypeError/ValueError for arguments that do not match the
    signature, :class:`ism.RuntimeUnavailable` when there is no runner,
    driver or GPU, :class:`ism.RunError` when the run fails.
    """
    module.verify()
    sig = _signature(module, entry)
    if len(args) != len(sig):
        raise TypeError(f"@{entry} takes {len(sig)} arguments "
                        f"({', '.join(sig)}), got {len(args)}")
    described = [_describe(i, a, t) for i, (a, t) in enumerate(zip(args, sig))]
    times = _ism.run(module._m, entry, described, chip or "", timing, warmup,
                     repetitions)
    return RunResult(list(times))
