"""The ONNX converter registry.  Each converter registers itself where it is
defined, with the op names it converts written once at the function (as
torch's exporter registers its symbolic functions per op):

    @converter("narrow")                      # ptcore.narrow and Tensor.narrow
    def _narrow(b, node): ...

    @converter("nn.functional.pad", "Tensor.__getitem__")
    def ...

A name is ``"<namespace>.<name>"`` (the namespace of the traced node:
``Tensor``, ``ptcore``, ``nn.functional``, ``linalg``, ``prim``,
``nn.modules``), or a bare ``"<name>"`` for both the function ``ptcore.<name>``
and the method ``Tensor.<name>``.  A converter takes the builder and the node
and returns the ONNX value name(s).

The ops that map one to one onto an ONNX operator (``relu`` -> ``Relu``,
``add`` -> ``Add``) register that operator with :func:`elementwise`: the
export converts them under every namespace, with type promotion for the
binary ones."""

__all__ = ["CONVERTERS", "ELEMENTWISE", "converter", "register", "elementwise"]

# (namespace, name) -> converter; filled by @converter / register() at each converter
CONVERTERS = {}
# op name -> (ONNX operator, number of tensor operands); filled by elementwise()
ELEMENTWISE = {}

_METHOD_AND_FUNCTION = ("ptcore", "Tensor")


def _keys(name):
    ns, dot, op = name.rpartition(".")
    if not dot:
        return [(n, op) for n in _METHOD_AND_FUNCTION]
    return [(ns, op)]


def register(fn, *names):
    """Register ``fn`` as the converter of each of ``names`` (see the module
    docstring); returns ``fn``.  A name registered twice is an error."""
    for name in names:
        for key in _keys(name):
            if key in CONVERTERS:
                raise ValueError(f"ONNX converter of {key[0]}::{key[1]} registered twice")
            CONVERTERS[key] = fn
    return fn


def converter(*names):
    """Decorator form of :func:`register`."""
    return lambda fn: register(fn, *names)


def elementwise(onnx_op, *names, arity):
    """Register ``names`` as ops that are the ONNX operator ``onnx_op`` applied
    to their ``arity`` tensor operands."""
    for name in names:
        if name in ELEMENTWISE:
            raise ValueError(f"ONNX elementwise op {name} registered twice")
        ELEMENTWISE[name] = (onnx_op, arity)
