"""ism: build, compile and run tile programs for NVIDIA GPUs from Python.

The package binds ism's C++ API (the LLVM packages ship no MLIR Python
bindings): :class:`Module` holds IR, :class:`KernelBuilder` and
:class:`HostBuilder` build it, :func:`compile`, :func:`stages` and
:func:`to_ptx` run pass pipelines, :func:`run` executes a host function on
the GPU and :func:`interpret` in the reference interpreter on the CPU;
:func:`compile` and :func:`jit` make programs callable on torch CUDA tensors
(on the current stream, no copies), and :func:`autotune` picks a program's
configuration by timing candidates, with an on-disk cache. See docs/python.md.
"""

from . import _loader  # noqa: F401  (loads libMLIR.so first)
from ._ism import (CompileError, IsmError, ParseError, RunError,
                   RuntimeUnavailable, VerificationError)
from .builder import HostBuilder, KernelBuilder, Value
from .compiler import (DEFAULT_PIPELINE, PTX_PIPELINE, CompiledPTX,
                       apply_pipeline, compile_ptx, has_pass, stages, to_ptx)
from .launch import (CompiledProgram, IsmWarning, JITFunction, KernelLauncher,
                     cache_dir, compile, jit)
from .autotuner import Autotuner, Config, TuningResult, autotune
from .ir import (Context, DTypeError, Module, ShapeError, blocked,
                 default_context, dtype, memref, scalar, tensor, tile)
from .profiling import nvtx_range
from .runtime import RunResult, interpret, run, runtime_available

__all__ = [
    "Autotuner", "CompileError", "Config", "CompiledPTX", "CompiledProgram", "Context",
    "DEFAULT_PIPELINE", "DTypeError", "HostBuilder", "IsmError", "IsmWarning",
    "JITFunction", "KernelBuilder", "KernelLauncher", "Module", "PTX_PIPELINE",
    "ParseError", "RunError", "RunResult", "RuntimeUnavailable", "ShapeError",
    "Value", "VerificationError", "apply_pipeline", "blocked", "cache_dir",
    "compile", "compile_ptx", "default_context", "dtype", "has_pass",
    "interpret", "jit", "memref", "nvtx_range", "run", "runtime_available",
    "scalar", "stages", "tensor", "tile", "to_ptx", "TuningResult",
    "autotune",
]
