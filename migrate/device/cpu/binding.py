"""Python arguments -> buffer pointers, as torch.mps.compile_shader binds them.

Arguments bind to [[buffer(N)]] in order. Tensors and numpy arrays bind by
pointer; Python numbers, numpy scalars and 0-dim tensors bound to a constant
slot become a small buffer holding the value in the parameter's type;
tuples/lists become small constant arrays.
"""

from __future__ import annotations

import ctypes
import struct
from dataclasses import dataclass
from numbers import Number

from ..errors import KernelArgumentError

KIND_NAMES = {-1: "unused", 0: "opaque", 1: "float", 2: "half", 3: "bfloat", 4: "int", 5: "uint", 6: "bool"}


class ArgInfo(ctypes.Structure):
    _fields_ = [
        ("kind", ctypes.c_int32),
        ("size", ctypes.c_int32),
        ("elem_size", ctypes.c_int32),
        ("lanes", ctypes.c_int32),
        ("is_const", ctypes.c_int32),
        ("is_pointer", ctypes.c_int32),
    ]


@dataclass
class Bound:
    ptr: int
    nbytes: int  # extent usable from ptr (0 if unknown/empty)
    keep: object = None
    owned: bool = False  # a temporary made from a Python value


def _bf16_bits(x: float) -> int:
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    if (bits & 0x7F800000) == 0x7F800000 and bits & 0x7FFFFF:
        return 0x7FC0
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


def _pack_elem(value, info: ArgInfo, what: str) -> bytes:
    kind, size = info.kind, info.elem_size
    try:
        if kind == 1:
            return struct.pack("<f" if size == 4 else "<d", float(value))
        if kind == 2:
            return struct.pack("<e", float(value))
        if kind == 3:
            return struct.pack("<H", _bf16_bits(float(value)))
        if kind in (4, 5):
            if isinstance(value, float) and not value.is_integer():
                raise KernelArgumentError(f"{what}: {value!r} is not an integer for an integer parameter")
            v = int(value) & ((1 << (8 * size)) - 1)
            return v.to_bytes(size, "little")
        if kind == 6:
            return bytes([1 if value else 0])
    except (TypeError, ValueError, OverflowError) as e:
        raise KernelArgumentError(f"{what}: cannot convert {value!r}: {e}") from None
    raise KernelArgumentError(
        f"{what}: a Python value cannot be bound to an untyped (void/struct) buffer; pass a tensor or numpy array"
    )


def _value_buffer(values: list, info: ArgInfo, what: str) -> Bound:
    # complex numbers are float2/half2 in Metal: (real, imag)
    values = [x for v in values for x in ((v.real, v.imag) if isinstance(v, complex) else (v,))]
    data = b"".join(_pack_elem(v, info, what) for v in values)
    if not info.is_pointer and info.lanes > 1 and len(values) > info.lanes:
        raise KernelArgumentError(f"{what}: {len(values)} values for a {info.lanes}-element vector")
    need = max(info.size, len(data))
    data = data + b"\0" * (need - len(data))
    buf = ctypes.create_string_buffer(data, max(len(data), 16))
    return Bound(ctypes.addressof(buf), len(data), buf, True)


def _is_tensor(x) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "data_ptr") and hasattr(x, "untyped_storage")


def _is_ndarray(x) -> bool:
    return type(x).__module__ == "numpy" and hasattr(x, "__array_interface__") and hasattr(x, "ctypes")


def bind(arg, info: ArgInfo, what: str) -> Bound:
    if _is_tensor(arg):
        if arg.device.type != "cpu":
            raise KernelArgumentError(f"{what}: tensor is on {arg.device}, the CPU backend needs CPU tensors")
        if arg.dim() == 0 and info.kind > 0 and info.is_const:
            return _value_buffer([arg.item()], info, what)
        start = arg.data_ptr()
        storage = arg.untyped_storage()
        end = storage.data_ptr() + storage.nbytes()
        return Bound(start, max(0, end - start) if start else 0, arg)
    if _is_ndarray(arg):
        if arg.ndim == 0 and info.kind > 0 and info.is_const:
            return _value_buffer([arg.item()], info, what)
        start = arg.ctypes.data
        base = arg
        while getattr(base, "base", None) is not None and _is_ndarray(base.base):
            base = base.base
        end = base.ctypes.data + base.nbytes
        return Bound(start, max(0, end - start), arg)
    if isinstance(arg, (bool, Number)) or type(arg).__module__ == "numpy":
        if hasattr(arg, "item"):
            arg = arg.item()
        return _value_buffer([arg], info, what)
    if isinstance(arg, (tuple, list)):
        if not arg:
            raise KernelArgumentError(f"{what}: empty tuple/list")
        values = [a.item() if hasattr(a, "item") else a for a in arg]
        if not all(isinstance(v, (bool, Number)) for v in values):
            raise KernelArgumentError(f"{what}: tuples/lists must hold numbers")
        return _value_buffer(values, info, what)
    if arg is None:
        raise KernelArgumentError(f"{what}: None cannot be bound to a buffer")
    raise KernelArgumentError(
        f"{what}: unsupported argument type {type(arg).__name__} "
        "(expected a CPU tensor, numpy array, number or tuple of numbers)"
    )
