"""CUDA kernels of pointwise ops whose CPU front-ends are composites of
other ops (:mod:`ptcore._ops.pointwise_composite`).

On the device a composite costs a launch per constituent op, and ``gcd``'s
Euclid loop a launch and a host synchronization per step (88 launches and
13 synchronizations for 2^21 int32 pairs).  Here each op is one elementwise
kernel of :mod:`ptcore.cuda.kernels.library` (``gcd``, ``lcm``, ``sinc``), run by the
``ew_*`` loops of :mod:`ptcore.cuda.ops.index`; the front-ends' argument
checks and dtype rules are reused, so errors are the CPU's.  ``logaddexp``/
``logaddexp2`` are one kernel each (their composite: 7-15 launches), and
``frexp`` two (mantissa and int32 exponent; the composite: 50), and
float16/bfloat16 ``nextafter`` one (the composite: 25).  A call
that records autograd (or a complex one) takes the front-end's composite:
its ops record the graph, the op itself has no autograd body to wrap a
kernel in.
"""
from ptcore import _tensor as _C
from ptcore._dispatch.device import register_kernel
from ptcore._dispatch.table import lookup
from ptcore._ops import pointwise as PW
from ptcore._ops import pointwise_composite as PC
from ptcore._ops._out import check_inplace_shape
from ptcore._return_types import as_out
from ptcore.cuda.ops import index as LI

__all__ = ["register"]


def _checks():
    return PC


def _int_pair(op):
    def kernel(input, other, *, out=None):
        dt = _checks()._int_binary(input, other, op, out)
        return LI._ew_binary(op, input, other, out, dt, dt, op)
    kernel.__name__ = op
    return kernel


def _int_pair_(op):
    def kernel(self, other):
        PC = _checks()
        if not isinstance(other, _C._TensorBase):
            raise TypeError(f"{op}_(): argument 'other' (position 1) must be Tensor, not "
                            f"{type(other).__name__}")
        check_inplace_shape(self, (other,))
        dt = PC._int_binary(self, other, op, self)
        return LI._ew_binary(op, self, other, self, dt, dt, op + "_", inplace=True)
    kernel.__name__ = op + "_"
    return kernel


def _front_end(name, ns="ptcore"):
    """The op's own front-end (its module attribute is the dispatching entry)."""
    return lookup(name, ns).raw


def _sinc_dtype(input):
    PC = _checks()
    PC._check_tensor(input, "sinc", "input", 1)
    dt = input.dtype
    if PC._is_int_dtype(dt):
        dt = _C.get_default_dtype()
    return dt


def _sinc(input, *, out=None):
    dt = _sinc_dtype(input)
    if dt.is_complex or _checks()._recording(input):
        # the composite: its complex formula, and autograd through its ops
        return _front_end("sinc")(input, out=out)
    _checks()._check_out_cast(out, dt)
    return LI._ew_unary("sinc", input, out, dt, dt, "sinc")


def _sinc_(self):
    PC = _checks()
    dt = _sinc_dtype(self)
    if dt.is_complex or PC._recording(self):
        return _front_end("sinc_", "Tensor")(self)
    PC._check_out_cast(self, dt)
    return LI._ew_unary("sinc", self, self, dt, dt, "sinc_", inplace=True)


def _logaddexp(op):
    def kernel(input, other, *, out=None):
        PC = _checks()
        dt = PC._float_binary_check(input, other, op, op + "_cpu", out)
        if dt.is_complex or PC._recording(input, other):
            # the composite: complex operands, and autograd through its ops
            return _front_end(op)(input, other, out=out)
        return LI._ew_binary(op, input, other, out, dt, dt, op)
    kernel.__name__ = op
    return kernel


def _frexp(input, *, out=None):
    PC = _checks()
    PC._frexp_checks(input, out)
    if PC._recording(input):
        return _front_end("frexp")(input, out=out)
    dt = input.dtype
    m_out, e_out = (None, None) if out is None else out
    m = LI._ew_unary("frexp_mantissa", input, m_out, dt, dt, "frexp")
    e = LI._ew_unary("frexp_exponent", input, e_out, dt, _C.int32, "frexp")
    if out is None:
        return PC.FrexpResult(m, e)
    return as_out(PC.FrexpResult(m, e))


def _half_dtype(dt):
    return dt is _C.float16 or dt is _C.bfloat16


def _nextafter(input, other, *, out=None):
    input, other = PW._operands("nextafter", input, other, PW._SCALARS_NONE)
    dt = PW._result_type(input, other)
    if not _half_dtype(dt) or _checks()._recording(input, other):
        return _front_end("nextafter")(input, other, out=out)
    if out is not None and not PW._can_cast_py(dt, out.dtype):
        raise RuntimeError(f"result type {dt._legacy} can't be cast to the desired output type "
                           f"{out.dtype._legacy}")
    return LI._ew_binary("nextafter", input, other, out, dt, dt, "nextafter")


def _nextafter_(self, other):
    PW._other_tensor("nextafter_", other)
    dt = PW._result_type(self, other)
    if not (_half_dtype(dt) and self.dtype is dt) or _checks()._recording(self, other):
        return _front_end("nextafter_", "Tensor")(self, other)
    check_inplace_shape(self, (other,))
    return LI._ew_binary("nextafter", self, other, self, dt, dt, "nextafter_", inplace=True)


_registered = [False]


def register():
    if _registered[0]:
        return
    for op in ("gcd", "lcm"):
        register_kernel(op, "cuda", _int_pair(op))
        register_kernel(op + "_", "cuda", _int_pair_(op), namespaces=("ptcore", "Tensor"), optional=True)
    register_kernel("sinc", "cuda", _sinc, namespaces=("ptcore", "Tensor", "special"), optional=True)
    register_kernel("sinc_", "cuda", _sinc_, namespaces=("ptcore", "Tensor"), optional=True)
    for op in ("logaddexp", "logaddexp2"):
        register_kernel(op, "cuda", _logaddexp(op), namespaces=("ptcore", "Tensor"), optional=True)
    register_kernel("frexp", "cuda", _frexp, namespaces=("ptcore", "Tensor"), optional=True)
    register_kernel("nextafter", "cuda", _nextafter, namespaces=("ptcore", "Tensor"), optional=True)
    register_kernel("nextafter_", "cuda", _nextafter_, namespaces=("ptcore", "Tensor"), optional=True)
    _registered[0] = True
