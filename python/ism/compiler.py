"""Running pass pipelines and getting PTX.

    ism.apply_pipeline(module, "ism-combine,canonicalize,cse")   # a new Module
    ism.stages(module, "canonicalize,cse")   # [(pass, IR after it), ...]
    ism.to_ptx(module, chip="sm_90a")        # PTX text

Pipelines are MLIR's textual pass pipelines over every registered pass and
named pipeline (the ism passes, upstream conversions, ``ism-to-ptx`` once
the lowering provides it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Tuple

from . import _ism
from ._ism import CompileError
from .ir import Module

__all__ = ["CompiledPTX", "DEFAULT_PIPELINE", "PTX_PIPELINE",
           "apply_pipeline", "compile_ptx", "has_pass", "stages", "to_ptx"]

#: The tile-level clean-up `scripts/run-example.sh` runs.
DEFAULT_PIPELINE = "ism-combine,canonicalize,cse"

#: The named pipeline that takes a tile-level module to PTX (gpu.binary).
PTX_PIPELINE = "ism-to-ptx"


def has_pass(name: str) -> bool:
    """True when a pass or named pipeline is registered under ``name``."""
    return _ism.has_pass(name)


def apply_pipeline(module: Module, pipeline: str = DEFAULT_PIPELINE) -> Module:
    """Runs the textual pass ``pipeline`` on a copy of ``module`` and
    returns the copy; raises :class:`ism.CompileError` with MLIR's
    diagnostics when the pipeline does not parse or a pass fails."""
    out = module.clone()
    _ism.run_pipeline(out._m, pipeline, False)
    return out


def stages(module: Module, pipeline: str) -> List[Tuple[str, str]]:
    """Runs ``pipeline`` on a copy of ``module`` and returns the IR after
    every pass, as ``[(pass argument, module text), ...]``."""
    out = module.clone()
    return [tuple(s) for s in _ism.run_pipeline(out._m, pipeline, True)]


@dataclass
class KernelInfo:
    """Launch facts of one compiled kernel, as the lowering records them."""
    num_threads: int
    shared_memory_bytes: int


@dataclass
class CompiledPTX:
    """PTX text and, when known, each kernel's launch facts."""
    ptx: str
    kernels: Dict[str, KernelInfo] = field(default_factory=dict)


def _top_level_names(module: Module) -> List[str]:
    return [op.name for op in module.operations]


def compile_ptx(module: Module, chip: str = "sm_90a", features: str = "+ptx81",
                opt_level: int = 3) -> CompiledPTX:
    """Compiles ``module`` to PTX for ``chip``.

    - a module holding ``gpu.binary`` ops: their PTX is returned;
    - a GPU-level module (``gpu.module`` kernels): compiled through the
      GPU-to-PTX pipeline (the runner's ``compileGPUModuleToPTX``);
    - a tile-level module: lowered by the ``ism-to-ptx{chip=...}`` named
      pipeline when this build has it, else :class:`ism.CompileError`.
    """
    names = _top_level_names(module)
    if "gpu.binary" in names:
        return CompiledPTX(_ism.extract_ptx(module._m))
    if "gpu.module" in names:
        ptx, kernels = _ism.compile_gpu_to_ptx(module._m, chip, features,
                                               opt_level)
        return CompiledPTX(ptx, {k: KernelInfo(*v) for k, v in kernels.items()})
    if not has_pass(PTX_PIPELINE):
        raise CompileError(
            f"this build has no '{PTX_PIPELINE}' pipeline (the tile-to-GPU "
            "lowering), so a tile-level module cannot be compiled to PTX yet; "
            "GPU-level modules (gpu.module) can")
    lowered = apply_pipeline(module, f"{PTX_PIPELINE}{{chip={chip}}}")
    names = _top_level_names(lowered)
    if "gpu.binary" in names:
        return CompiledPTX(_ism.extract_ptx(lowered._m))
    if "gpu.module" in names:
        return compile_ptx(lowered, chip, features, opt_level)
    raise CompileError(f"'{PTX_PIPELINE}' produced neither gpu.binary nor "
                       "gpu.module ops")


def to_ptx(module: Module, chip: str = "sm_90a", **kwargs) -> str:
    """The PTX text of ``module`` for ``chip`` (see :func:`compile_ptx`)."""
    return compile_ptx(module, chip, **kwargs).ptx
