"""Non-tensor state-dict values as JSON: ``None``, bools, ints, floats (with inf/nan),
complex numbers, strings, lists, tuples, dicts (any of these as keys), dtypes, devices and
sizes.  Decoding builds only these types, so loading a checkpoint never runs code from it.
Anything else is refused at save time (torch would pickle it)."""
import ptcore

_TAGS = ("tuple", "dict", "dtype", "device", "size", "complex")


def encode(value, where):
    """The JSON-able form of ``value``; ``where`` (its key) names it in errors."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, complex):
        return {"complex": [value.real, value.imag]}
    if isinstance(value, ptcore.Size):
        return {"size": [int(v) for v in value]}
    if isinstance(value, list):
        return [encode(v, where) for v in value]
    if isinstance(value, tuple):
        return {"tuple": [encode(v, where) for v in value]}
    if isinstance(value, dict):
        return {"dict": [[encode(k, where), encode(v, where)] for k, v in value.items()]}
    if isinstance(value, ptcore.dtype):
        return {"dtype": str(value).rpartition(".")[2]}
    if isinstance(value, ptcore.device):
        return {"device": str(value)}
    if isinstance(value, ptcore.Tensor):
        raise TypeError(f"{where}: a tensor inside a tuple (or another leaf container) cannot "
                        f"be saved by ptcore's distributed checkpoint; use a list or a dict")
    raise TypeError(f"{where}: a value of type {type(value).__name__} cannot be saved by "
                    f"ptcore's distributed checkpoint (only tensors, numbers, strings, None, "
                    f"dtypes, devices and lists/tuples/dicts of these)")


def decode(data):
    """The value :func:`encode` encoded."""
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        return data
    if len(data) != 1 or next(iter(data)) not in _TAGS:
        raise ValueError(f"corrupt checkpoint metadata: unexpected value {data!r}")
    tag, body = next(iter(data.items()))
    if tag == "tuple":
        return tuple(decode(v) for v in body)
    if tag == "dict":
        return {_hashable(decode(k)): decode(v) for k, v in body}
    if tag == "size":
        return ptcore.Size([int(v) for v in body])
    if tag == "complex":
        return complex(body[0], body[1])
    if tag == "device":
        return ptcore.device(body)
    return dtype_by_name(body)


def _hashable(key):
    return tuple(key) if isinstance(key, list) else key


def dtype_by_name(name):
    """The ptcore dtype called ``name`` (``"float32"``)."""
    dt = getattr(ptcore, str(name), None)
    if not isinstance(dt, ptcore.dtype):
        raise ValueError(f"corrupt checkpoint metadata: unknown dtype {name!r}")
    return dt


def dtype_name(dt):
    """``"float32"`` for ``ptcore.float32``."""
    return str(dt).rpartition(".")[2]
