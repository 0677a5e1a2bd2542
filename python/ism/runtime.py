"""Running host functions on the GPU, or in the reference interpreter.

    ism.run(module, "main", x, y, z)                 # z is written in place
    result = ism.run(module, "main", x, y, z, time=True)
    ism.interpret(module, "main", x, y, z)           # float64, on the CPU

NumPy arrays go in as the host function's memref arguments (copied to the
device and, after the run, every one of them back into the same array);
Python and NumPy numbers are its scalar arguments. The arguments are checked
against the function's signature here; the run itself goes through the
runner library that ``ism-run`` uses. A machine without a CUDA driver or GPU
raises :class:`ism.RuntimeUnavailable`; a failed compile or run raises
:class:`ism.RunError`.

bf16 buffers take NumPy arrays of dtype ``bfloat16`` (from ml_dtypes, when
installed) or ``uint16`` arrays holding the bf16 bit patterns (e.g.
``(f32_array.view(np.uint32) >> 16).astype(np.uint16)`` truncates to bf16).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import List, Optional

from . import _ism
from .ir import Module

__all__ = ["RunResult", "interpret", "run", "runtime_available"]

# NumPy dtype names of the element types the runner moves: bf16 as
# ml_dtypes' bfloat16 or as its bit patterns in uint16; signless integers as
# either signedness.
_NUMPY_NAMES = {
    "f16": {"float16"}, "bf16": {"bfloat16", "uint16"}, "f32": {"float32"},
    "f64": {"float64"}, "i8": {"int8", "uint8"}, "i32": {"int32", "uint32"},
    "i64": {"int64", "uint64"},
    # ml_dtypes' 8-bit floats, or their bit patterns in uint8.
    "f8E4M3FN": {"float8_e4m3fn", "uint8"}, "f8E5M2": {"float8_e5m2", "uint8"},
}


@dataclass
class RunResult:
    """Per-repetition times of a timed run, in milliseconds (empty when the
    run was not timed), and what the GPU did meanwhile, read through NVML:
    the median SM clock (MHz), the mean board power (W) and the share of
    samples in which the software power cap held the clock down (0 to 1).
    Without NVML those are None and ``power_unavailable`` says why."""
    times_ms: List[float] = field(default_factory=list)
    sm_clock_mhz: Optional[float] = None
    power_w: Optional[float] = None
    power_capped: Optional[float] = None
    power_unavailable: Optional[str] = None

    @property
    def energy_per_call_mj(self) -> Optional[float]:
        """Energy of one call at the mean board power: power x median time
        (mJ), None without NVML or timing."""
        median = self.median_ms
        if self.power_w is None or median is None:
            return None
        return self.power_w * median

    @property
    def median_ms(self) -> Optional[float]:
        if not self.times_ms:
            return None
        t = sorted(self.times_ms)
        n = len(t)
        return t[n // 2] if n % 2 else (t[n // 2 - 1] + t[n // 2]) / 2

    @property
    def min_ms(self) -> Optional[float]:
        return min(self.times_ms) if self.times_ms else None

    @property
    def max_ms(self) -> Optional[float]:
        return max(self.times_ms) if self.times_ms else None


def runtime_available() -> bool:
    """True when this build links the runner library (a CUDA driver or GPU
    may still be missing; :func:`run` says so)."""
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
        if element not in _NUMPY_NAMES:
            raise TypeError(f"argument #{i}: the runner does not support "
                            f"{ty} (element types: "
                            f"{', '.join(_NUMPY_NAMES)})")
        if arg.dtype.name not in _NUMPY_NAMES[element]:
            raise TypeError(f"argument #{i} has dtype {arg.dtype.name} but "
                            f"the function takes {ty} (arrays of "
                            f"{' or '.join(sorted(_NUMPY_NAMES[element]))})")
        if not arg.dtype.isnative:
            raise TypeError(f"argument #{i} is not in native byte order")
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
    if isinstance(arg, (bool, str, bytes)) or not isinstance(arg,
                                                              numbers.Real):
        raise TypeError(f"argument #{i} must be a number for {ty}, got "
                        f"{type(arg).__name__}")
    if ty in ("f16", "bf16", "f32", "f64"):
        return ("float", float(arg))
    if not isinstance(arg, numbers.Integral):
        raise TypeError(f"argument #{i} must be an integer for {ty}")
    return ("int", int(arg))


def _describe_all(module: Module, entry: str, args) -> list:
    module.verify()
    sig = _signature(module, entry)
    if len(args) != len(sig):
        raise TypeError(f"@{entry} takes {len(sig)} arguments "
                        f"({', '.join(sig)}), got {len(args)}")
    return [_describe(i, a, t) for i, (a, t) in enumerate(zip(args, sig))]


_COSCHEDULE_MODES = ("fused", "sequential", "streams")


def run(module: Module, entry: str, *args, chip: Optional[str] = None,
        time: bool = False, warmup: int = 10, reps: int = 100,
        coschedule: str = "fused", calls: int = 1, flush_l2: bool = True,
        graph: bool = False) -> RunResult:
    """Runs host function ``entry`` of ``module`` on the GPU with ``args``
    (NumPy arrays for memrefs, numbers for scalars).

    Every array is copied to the device, the function runs once and every
    array is copied back, so outputs appear in place. With ``time``, the
    function then runs ``warmup`` more times and ``reps`` timed times, each
    after flushing the L2 cache (as ``ism-run --bench``; ``flush_l2=False``
    leaves it), and the result holds the timed runs' times; arrays keep the
    first run's results. Each timed run makes ``calls`` calls back to back
    and its time is per call (steady state, as ``ism-run --calls``). With
    ``graph``, the function's launches are captured in a CUDA graph after
    the first run and replayed (as ``ism-run --graph``): the arrays come
    back from a replay on the arguments as given, and each timed run
    launches one graph of ``calls`` calls.
    ``chip`` defaults to the GPU's (sm_90a on compute capability 9.0, sm_80
    on 8.x). ``coschedule`` says how ``ism.coschedule`` regions run:
    ``fused`` (one kernel, ism-coschedule), ``sequential`` (the launches one
    after another) or ``streams`` (each launch on its own stream).

    Raises TypeError/ValueError for arguments that do not match the
    signature, :class:`ism.RuntimeUnavailable` when there is no CUDA driver
    or GPU, :class:`ism.RunError` when compiling or running fails.
    """
    if coschedule not in _COSCHEDULE_MODES:
        raise ValueError(f"coschedule must be one of "
                         f"{', '.join(_COSCHEDULE_MODES)}, got {coschedule!r}")
    if isinstance(calls, bool) or not isinstance(calls, int) or calls < 1:
        raise ValueError(f"calls must be an int of at least 1, got {calls!r}")
    if graph and coschedule == "streams":
        raise ValueError("graph captures one stream; coschedule='streams' "
                         "launches on several (use 'fused' or 'sequential')")
    described = _describe_all(module, entry, args)
    times, power = _ism.run(module._m, entry, described, chip or "", time,
                            warmup, reps, coschedule, calls, bool(flush_l2),
                            bool(graph))
    return RunResult(list(times), power.get("sm_clock_mhz"),
                     power.get("power_w"), power.get("power_capped"),
                     power.get("unavailable"))


def interpret(module: Module, entry: str, *args) -> None:
    """Runs host function ``entry`` of ``module`` with ``args`` in the
    runner's reference interpreter (``ism-run --interpret``): every program
    instance of every launch on the CPU in float64 (float casts are exact).
    The buffers' final values, rounded to their element types, are written
    back into the arrays. Needs no GPU.

    Raises TypeError/ValueError as :func:`run` does and
    :class:`ism.RunError` when the interpreter fails.
    """
    described = _describe_all(module, entry, args)
    _ism.interpret(module._m, entry, described)
