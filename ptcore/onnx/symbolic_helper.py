"""``torch.onnx.symbolic_helper`` for symbolic functions registered with
:func:`ptcore.onnx.register_custom_op_symbolic`: ``parse_args`` and
``quantized_args``-free helpers.  ptcore hands a symbolic function its
non-tensor arguments as the Python values the trace recorded, so
``parse_args`` only converts them to the types its descriptors name."""
import functools

__all__ = ["parse_args"]

_CONVERT = {"v": lambda v: v, "none": lambda v: v, "i": int, "f": float, "b": bool,
            "s": str, "t": lambda v: v,
            "is": lambda v: [int(i) for i in v] if v is not None else None,
            "fs": lambda v: [float(i) for i in v] if v is not None else None}


def parse_args(*arg_descriptors):
    """Decorator: convert a symbolic function's arguments after ``g`` by the
    descriptors (``"v"`` value, ``"i"`` int, ``"f"`` float, ``"b"`` bool,
    ``"s"`` str, ``"is"``/``"fs"`` lists, ``"none"`` as is)."""
    for d in arg_descriptors:
        if d not in _CONVERT:
            raise ValueError(f"parse_args: unknown descriptor {d!r}")

    def deco(fn):
        @functools.wraps(fn)
        def wrapper(g, *args, **kwargs):
            args = [a if a is None else _CONVERT[d](a)
                    for d, a in zip(arg_descriptors, args)] + list(args[len(arg_descriptors):])
            return fn(g, *args, **kwargs)
        return wrapper
    return deco
