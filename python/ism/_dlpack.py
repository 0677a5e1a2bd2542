"""Reading a DLPack tensor's description (pointer, shape, strides, dtype,
device) with ctypes, for objects that offer ``__dlpack__`` but no
``__cuda_array_interface__``. The capsule is only read, never consumed: its
own destructor releases the producer's tensor."""

from __future__ import annotations

import ctypes
from typing import Optional, Tuple


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice),
                ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def describe(obj) -> Tuple[int, Tuple[int, ...], Optional[Tuple[int, ...]],
                           Tuple[int, int], Tuple[int, int]]:
    """(data pointer incl. byte offset, shape, strides in elements or None,
    (type code, bits), (device type, device id)) of ``obj.__dlpack__()``.
    Raises TypeError for vector (lanes > 1) dtypes or a malformed capsule."""
    capsule = obj.__dlpack__()
    address = _get_pointer(capsule, b"dltensor")
    if not address:  # pragma: no cover - PyCapsule_GetPointer raised
        raise TypeError("__dlpack__ did not return a 'dltensor' capsule")
    # DLManagedTensor starts with its DLTensor.
    t = _DLTensor.from_address(address)
    if t.dtype.lanes != 1:
        raise TypeError(f"DLPack tensors with {t.dtype.lanes} lanes are not "
                        "supported")
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = (tuple(t.strides[i] for i in range(t.ndim))
               if t.strides else None)
    ptr = (t.data or 0) + t.byte_offset
    result = (ptr, shape, strides, (t.dtype.code, t.dtype.bits),
              (t.device.device_type, t.device.device_id))
    del capsule  # releases the producer's tensor; obj keeps the memory
    return result
