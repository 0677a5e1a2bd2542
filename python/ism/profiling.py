"""NVTX ranges around ism calls, for Nsight Systems and the PyTorch
profiler.

    with ism.nvtx_range("attention"):
        k(q, kv, out)

ism kernels keep their source names in PTX (``ism.kernel @softmax`` is the
entry ``softmax``), so ncu, nsys and ``torch.profiler`` list them by name; a
range groups the launches of one step. The range goes through
``torch.cuda.nvtx`` when torch is importable, else through the ``nvtx``
package when installed; without either it marks nothing (as NVTX does when
no tool is attached).
"""

from __future__ import annotations

import contextlib
import sys

__all__ = ["nvtx_range"]


def _backend():
    torch = sys.modules.get("torch")
    if torch is None:
        try:
            import torch  # noqa: F401
        except ImportError:
            torch = None
    if torch is not None and hasattr(torch, "cuda") and hasattr(torch.cuda,
                                                                "nvtx"):
        return torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop
    try:
        import nvtx  # type: ignore
        return (lambda name: nvtx.push_range(name)), nvtx.pop_range
    except ImportError:
        return None, None


@contextlib.contextmanager
def nvtx_range(name: str):
    """Pushes an NVTX range named ``name`` for the duration of the block
    (also usable as a decorator)."""
    push, pop = _backend()
    if push is None:
        yield
        return
    push(name)
    try:
        yield
    finally:
        pop()
