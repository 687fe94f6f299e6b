"""The protobuf wire format of the ONNX messages ``ptcore.onnx.export``
writes (``ModelProto`` and what it contains), encoded by hand so that
exporting needs no ``onnx`` package: field numbers from onnx.proto
(ONNX IR version 8)."""
import struct

__all__ = ["model", "graph", "node", "tensor", "value_info", "attr", "DTYPES"]

# TensorProto.DataType
DTYPES = {"float32": 1, "uint8": 2, "int8": 3, "int16": 5, "int32": 6, "int64": 7, "bool": 9,
          "float16": 10, "float64": 11, "bfloat16": 16}


def _varint(n):
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field, wire):
    return _varint((field << 3) | wire)


def _len(field, payload):
    return _key(field, 2) + _varint(len(payload)) + payload


def _str(field, s):
    return _len(field, s.encode() if isinstance(s, str) else s)


def _int(field, n):
    return _key(field, 0) + _varint(int(n))


def _float(field, x):
    return _key(field, 5) + struct.pack("<f", float(x))


def tensor(name, dtype, dims, raw):
    """TensorProto with raw little-endian data."""
    out = b"".join(_int(1, d) for d in dims)
    return out + _int(2, DTYPES[dtype]) + _str(8, name) + _len(9, raw)


def attr(name, value):
    """AttributeProto for an int, float, string, tensor (a bytes TensorProto
    tagged ``("tensor", payload)``) or a list of ints/floats."""
    out = _str(1, name)
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "tensor":
        return out + _len(5, value[1]) + _int(20, 4)
    if isinstance(value, bool) or isinstance(value, int):
        return out + _int(3, int(value)) + _int(20, 2)
    if isinstance(value, float):
        return out + _float(2, value) + _int(20, 1)
    if isinstance(value, str):
        return out + _str(4, value) + _int(20, 3)
    if isinstance(value, (list, tuple)):
        if all(isinstance(v, int) for v in value):
            return out + b"".join(_int(8, v) for v in value) + _int(20, 7)
        return out + b"".join(_float(7, v) for v in value) + _int(20, 6)
    raise TypeError(f"cannot encode attribute {name}={value!r}")


def node(op_type, inputs, outputs, name="", attrs=None, domain=""):
    out = b"".join(_str(1, i) for i in inputs) + b"".join(_str(2, o) for o in outputs)
    out += _str(3, name) + _str(4, op_type)
    for k, v in (attrs or {}).items():
        out += _len(5, attr(k, v))
    if domain:
        out += _str(7, domain)
    return out


def value_info(name, dtype, shape):
    """ValueInfoProto: ``shape`` items are ints (fixed), strings (named,
    dynamic) or None (unknown)."""
    dims = b""
    for d in shape:
        dims += _len(1, b"" if d is None else _str(2, d) if isinstance(d, str) else _int(1, d))
    tensor_type = _int(1, DTYPES[dtype]) + _len(2, dims)
    return _str(1, name) + _len(2, _len(1, tensor_type))


def graph(name, nodes, initializers, inputs, outputs):
    out = b"".join(_len(1, n) for n in nodes) + _str(2, name)
    out += b"".join(_len(5, t) for t in initializers)
    out += b"".join(_len(11, v) for v in inputs) + b"".join(_len(12, v) for v in outputs)
    return out


def model(graph_bytes, opset, producer="ptcore", producer_version="0.1", ir_version=8,
          domains=None):
    """ModelProto; ``domains``: custom operator domains -> their versions."""
    opset_id = _len(8, _str(1, "") + _int(2, opset))
    for dom, ver in sorted((domains or {}).items()):
        opset_id += _len(8, _str(1, dom) + _int(2, int(ver)))
    return (_int(1, ir_version) + _str(2, producer) + _str(3, producer_version)
            + _len(7, graph_bytes) + opset_id)
