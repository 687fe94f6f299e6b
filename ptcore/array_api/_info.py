"""``__array_namespace_info__``: what this namespace supports and its defaults."""
import ptcore as _pt
from ptcore.array_api._dtypes import _KINDS, _ALL, _DTYPE

_NAMES = {"bool": _pt.bool, "int8": _pt.int8, "int16": _pt.int16, "int32": _pt.int32, "int64": _pt.int64,
          "uint8": _pt.uint8, "float32": _pt.float32, "float64": _pt.float64,
          "complex64": _pt.complex64, "complex128": _pt.complex128}


class __array_namespace_info__:
    """Inspection of the ptcore array API namespace (capabilities, devices, dtypes)."""

    __module__ = "ptcore.array_api"

    def capabilities(self):
        """Optional features: boolean indexing and data-dependent shapes are supported."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self):
        """The CPU."""
        return _pt.device("cpu")

    def devices(self):
        """The CPU, then each CUDA device."""
        devs = [_pt.device("cpu")]
        if _pt.cuda.is_available():
            devs += [_pt.device("cuda", i) for i in range(_pt.cuda.device_count())]
        return tuple(devs)

    def default_dtypes(self, *, device=None):
        """float32 (or torch's current default), complex64/complex128 to match, int64 for integers and indices."""
        real = _pt.get_default_dtype()
        cplx = _pt.complex128 if real == _pt.float64 else _pt.complex64
        return {"real floating": real, "complex floating": cplx, "integral": _pt.int64, "indexing": _pt.int64}

    def dtypes(self, *, device=None, kind=None):
        """The dtypes of ``kind`` (all when None; a kind name, a dtype or a tuple of those)."""
        if kind is None:
            return dict(_NAMES)
        kinds = kind if isinstance(kind, tuple) else (kind,)
        out = {}
        for k in kinds:
            if isinstance(k, _DTYPE):
                members = (k,) if k in _ALL else ()
            elif isinstance(k, str) and k in _KINDS:
                members = _KINDS[k]
            else:
                raise ValueError(f"dtypes: unknown kind {k!r}")
            out.update({name: dt for name, dt in _NAMES.items() if dt in members})
        return out
