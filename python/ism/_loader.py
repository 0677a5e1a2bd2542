"""Loads the native extension.

MLIR identifies op traits and interfaces by the address of a static variable
inside an inline template. The extension carries copies of some of them
(from the ism dialect compiled into it); they must bind to libMLIR.so's, or
MLIR stops recognising, e.g., ``ism.yield`` as a terminator. The dynamic
linker binds them to libMLIR.so's only when libMLIR.so is in the global
scope before the extension loads, so it is loaded here with RTLD_GLOBAL.

The wheels' extension (scripts/build-wheel.sh, CMake's ISM_PYTHON_STATIC)
carries LLVM and MLIR inside itself, hidden; its ``_config.MLIR_DYLIB`` is
empty and nothing is preloaded.
"""

import ctypes
import os

try:
    from ._config import MLIR_DYLIB
except ImportError:  # pragma: no cover - a source tree without a build
    MLIR_DYLIB = ""

if MLIR_DYLIB and os.path.exists(MLIR_DYLIB):
    ctypes.CDLL(MLIR_DYLIB, mode=os.RTLD_GLOBAL | os.RTLD_NOW)

from . import _ism  # noqa: E402,F401
