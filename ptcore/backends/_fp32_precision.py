"""The ``fp32_precision`` switches (PyTorch 2.9's replacement for
``allow_tf32`` and ``set_float32_matmul_precision``).

One table of settings keyed by (backend, op): backend ``generic``, ``cuda``
or ``mkldnn``; op ``all``, ``matmul``, ``conv`` or ``rnn``.  A setting of
``"none"`` defers to the backend's ``all`` and that to ``generic``.  The
values: ``"none"``, ``"ieee"`` (full float32) and ``"tf32"``; oneDNN also
takes ``"bf16"``.  ``cuda``/``matmul`` is the setting ptcore's cuBLAS calls
read: ``"tf32"`` allows TF32 there (``float32_matmul_precision`` "high"),
``"ieee"`` forbids it ("highest"); ``set_float32_matmul_precision`` and
``backends.cuda.matmul.allow_tf32`` set the matmul entries, as in PyTorch.
"""
from ptcore import _settings

__all__ = ["get", "set", "FP32Precision", "module_property"]

_VALID = {"generic": ("none", "ieee", "tf32"), "cuda": ("none", "ieee", "tf32"),
          "mkldnn": ("none", "ieee", "tf32", "bf16")}
_ALL_VALUES = ("none", "ieee", "tf32", "bf16")
_table = _settings._state["fp32_precision"]     # set_float32_matmul_precision writes it too


def get(backend, op):
    """The effective setting of ``op`` on ``backend``."""
    return _settings.fp32_precision_of(backend, op)


def set(backend, op, value):  # noqa: A001 - torch's name
    """Set ``op`` on ``backend`` (``RuntimeError`` for an unknown or unsupported value)."""
    if not isinstance(value, str) or value not in _ALL_VALUES:
        raise RuntimeError(f"Unknown precision: {value}")
    if value not in _VALID[backend]:
        raise RuntimeError(f"backend '{backend}' does not support precision '{value}'")
    _table[(backend, op)] = value
    if backend in ("generic", "cuda") and op in ("all", "matmul"):
        eff = get("cuda", "matmul")
        if eff != "none":
            _settings._state["matmul_precision"] = "high" if eff == "tf32" else "highest"


def module_property(backend, op, doc):
    """A ``fp32_precision`` property for a backend module's class."""
    return property(lambda self: get(backend, op), lambda self, value: set(backend, op, value),
                    doc=doc)


class FP32Precision:
    """An object with one ``fp32_precision`` attribute (``backends.cudnn.conv`` ...)."""
    __slots__ = ("_backend", "_op")

    def __init__(self, backend, op):
        object.__setattr__(self, "_backend", backend)
        object.__setattr__(self, "_op", op)

    def __getattr__(self, name):
        if name == "fp32_precision":
            return get(self._backend, self._op)
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        if name != "fp32_precision":
            raise AttributeError(f"Unknown attribute {name}")
        set(self._backend, self._op, value)

    def __repr__(self):
        return f"<fp32_precision of {self._backend}/{self._op}: {get(self._backend, self._op)!r}>"
