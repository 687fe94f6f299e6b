"""``ptcore.types``: the type aliases of ``torch.types`` used in annotations."""
import os
from typing import IO, Any, Sequence, TypeAlias, Union  # noqa: F401

from ptcore._tensor import Size, Storage, device as _device, dtype as _dtype  # noqa: F401
from ptcore._legacy_types import layout as _layout
from ptcore.tensor import Tensor
from ptcore._sym import SymBool, SymFloat, SymInt

__all__ = ["BoolLikeType", "Device", "FileLike", "FloatLikeType", "IntLikeType", "Number",
           "PySymType", "Size", "Storage", "SymBool", "SymFloat", "SymInt", "Tensor",
           "py_sym_types"]

_TensorOrTensors: TypeAlias = Union[Tensor, Sequence[Tensor]]
_int = int
_float = float
_bool = bool
_complex = complex
_str = str
_dispatchkey = Union[str, Any]
_size: TypeAlias = Union[Size, list[int], tuple[int, ...]]
_symsize: TypeAlias = Union[Size, Sequence[Union[int, SymInt]]]
_qscheme = Any

IntLikeType: TypeAlias = Union[int, SymInt]
FloatLikeType: TypeAlias = Union[float, SymFloat]
BoolLikeType: TypeAlias = Union[bool, SymBool]
py_sym_types = (SymInt, SymFloat, SymBool)
PySymType: TypeAlias = Union[SymInt, SymFloat, SymBool]
Number: TypeAlias = Union[int, float, bool]
Device: TypeAlias = Union[_device, str, int, None]
FileLike: TypeAlias = Union[str, os.PathLike[str], IO[bytes]]
