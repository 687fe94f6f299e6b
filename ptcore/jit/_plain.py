"""What scripted graphs may reach: tensors and plain values, nothing else.

A graph read from a file (a TorchScript archive, a ``ptcore.jit`` file) is
untrusted.  Its values are tensors and plain data (numbers, strings, lists,
tuples, dicts, dtypes, devices, the records of script classes), and every
primitive keeps them so:

* attributes: a tensor's (``TENSOR_ATTRS``), a dtype's and a device's data
  attributes, a named tuple's fields, a script object's fields — never a
  method, a class, a function or its globals;
* Tensor methods: the operator table's, less those that hand out a
  non-tensor object (``numpy``, ``untyped_storage``, ``data_ptr``) or call
  back into Python (``apply_``, ``register_hook``);
* string formatting: ``{}``/``{N}`` fields with a plain format spec —
  ``str.format``'s attribute and item walk (``{0.__class__}``, ``{0[k]}``)
  is refused.
"""
import string

from ptcore.jit._errors import JitError

__all__ = ["DTYPE_ATTRS", "DEVICE_ATTRS", "TENSOR_METHODS_REFUSED", "check_format", "safe_format"]

# attributes of a dtype a graph may read (not op names: ``torch.dtype`` attributes)
DTYPE_ATTRS = frozenset({"is_floating_point", "is_complex", "is_signed", "itemsize"})
DEVICE_ATTRS = frozenset({"type", "index"})

# Tensor methods of the operator table a graph may not call: they return an
# object that is neither a tensor nor plain data, a memory address, or call a
# Python callable (a list on purpose: what an untrusted graph may not reach is
# reviewed in this one module, not inferred from declarations)
TENSOR_METHODS_REFUSED = frozenset({
    "numpy", "storage", "untyped_storage", "storage_type", "data_ptr", "const_data_ptr",
    "apply_", "map_", "map2_", "register_hook", "register_post_accumulate_grad_hook",
    "record_stream", "as_subclass", "module_load", "__reduce_ex__", "__reduce__",
    "__setstate__", "__getstate__", "__dlpack__", "__array__", "__dict__",
})

_FORMATTER = string.Formatter()
_MAX_FIELD = 4096


def _refuse(fmt, why):
    return JitError(f"format string {fmt[:80]!r}: {why} (a scripted graph formats its "
                    "arguments with {} or {N} fields, an optional conversion and format "
                    "spec; attribute and item access in a field are not available)")


def _fields(fmt):
    """``(literal, index or None, spec, conversion)`` of each part of ``fmt``."""
    if not isinstance(fmt, str):
        raise TypeError(f"format: the format must be a str, got {type(fmt).__name__}")
    try:
        parsed = list(_FORMATTER.parse(fmt))
    except ValueError as e:
        raise _refuse(fmt, str(e)) from None
    out = []
    auto, manual = 0, False
    for literal, field, spec, conv in parsed:
        if field is None:
            out.append((literal, None, "", None))
            continue
        if field == "":
            if manual:
                raise _refuse(fmt, "cannot switch from manual field specification to "
                                   "automatic field numbering")
            idx = auto
            auto += 1
        elif field.isascii() and field.isdigit():
            if auto:
                raise _refuse(fmt, "cannot switch from automatic field numbering to manual "
                                   "field specification")
            manual = True
            idx = int(field)
        else:
            raise _refuse(fmt, f"field {{{field}}} names an attribute or item")
        if "{" in spec or "}" in spec:
            raise _refuse(fmt, "nested fields in a format spec")
        digits = "".join(c if c.isdigit() else " " for c in spec).split()
        if any(len(d) > 4 or int(d) > _MAX_FIELD for d in digits):
            raise _refuse(fmt, f"format spec {spec!r} is wider than {_MAX_FIELD}")
        if conv not in (None, "s", "r", "a"):
            raise _refuse(fmt, f"unknown conversion !{conv}")
        out.append((literal, idx, spec, conv))
    return out


def check_format(fmt):
    """Raise JitError if format string ``fmt`` has a field a graph does not format."""
    _fields(fmt)


def safe_format(fmt, *args):
    """``fmt.format(*args)`` for the fields a scripted graph may use: ``{}``,
    ``{N}``, ``{!r}``, ``{:>8.3f}``; JitError for an attribute or item access
    (``{0.x}``, ``{0[k]}``), a nested field or a width past 4096."""
    out = []
    for literal, idx, spec, conv in _fields(fmt):
        out.append(literal)
        if idx is None:
            continue
        if idx >= len(args):
            raise JitError(f"Too few arguments for format string: {fmt}")
        v = args[idx]
        if conv == "r":
            v = repr(v)
        elif conv == "a":
            v = ascii(v)
        elif conv == "s":
            v = str(v)
        out.append(format(v, spec))
    return "".join(out)
