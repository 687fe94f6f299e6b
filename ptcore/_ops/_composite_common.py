"""Shared argument checks and result helpers of the composite op modules
(``*_composite``, ``calculus``, ``tensor_info``)."""
import builtins

import ptcore
from ptcore import _tensor as _C
from ptcore._tensor import _TensorBase
from ptcore._ops._out import check_inplace_shape, copy_out, check_written  # noqa: F401
from ptcore._dispatch.device import in_host_memory, no_kernel_error
from ptcore._ops.sorting import _named as mk

__all__ = []


def _is_int_dtype(dt):
    return not (dt.is_floating_point or dt.is_complex)


def _tname(dt):
    """torch's C++ scalar type name (``Float``, ``Long`` ...)."""
    return dt._legacy


def _check_tensor(x, fn, name, pos):
    if not isinstance(x, _TensorBase):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def _wrap_dim(dim, ndim):
    n = builtins.max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def _recording(*ts):
    return ptcore.is_grad_enabled() and builtins.any(
        isinstance(t, _TensorBase) and t.requires_grad for t in ts)


def _write_out(res, out):
    return res if out is None else copy_out(out, res)


def _inplace(self, fn, *args, **kwargs):
    """``self.op_(...)``: compute ``fn(self, ...)`` and write it back, with
    torch's checks (result dtype castable, shape unchanged by broadcasting)."""
    check_inplace_shape(self, args)
    src = self.clone() if _recording(self) else self
    r = fn(src, *args, **kwargs)
    if not ptcore.can_cast(r.dtype, self.dtype):
        raise RuntimeError(f"result type {_tname(r.dtype)} can't be cast to the desired output "
                           f"type {_tname(self.dtype)}")
    if tuple(r.shape) != tuple(self.shape):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast "
                           f"shape {list(r.shape)}")
    self.copy_(r)
    return self


# (name, fn) -> fn recording a node whose backward raises torch's "the
# derivative for 'name' is not implemented": supplied by the autograd layer
# (ptcore.autograd._composite_functions) when autograd installs
NOT_IMPLEMENTED_GRAD = [None]


def _not_implemented_grad(name, fn):
    """Run ``fn``; if an input requires grad, give the result a node that
    raises torch's "the derivative for 'name' is not implemented"."""
    def wrapper(*args, **kwargs):
        w = _NOT_IMPL_CACHE.get(name)
        if w is None:
            w = NOT_IMPLEMENTED_GRAD[0](name, fn)
            _NOT_IMPL_CACHE[name] = w
        return w(*args, **kwargs)
    wrapper.__name__ = fn.__name__
    wrapper.__qualname__ = fn.__qualname__
    wrapper.__doc__ = fn.__doc__
    wrapper.__wrapped__ = fn
    return wrapper


_NOT_IMPL_CACHE = {}


def _named(name, fields, out_twin=True):
    return mk(name, fields, out_twin=out_twin)


def _to_np(t, fname=None):
    """``t``'s values as a NumPy array: host computations (SciPy special
    functions) run on CPU tensors only; a device tensor raises the
    device layer's ``NotImplementedError`` (no silent copy to the host)."""
    if not in_host_memory(t):
        raise no_kernel_error(fname or "this op", t.device)
    return t.detach().resolve_conj().numpy()


def _from_np(a, dt):
    import numpy as np
    a = np.asarray(a)
    # (np.ascontiguousarray makes a 0-d array 1-d; a 0-d one is contiguous already)
    r = ptcore.from_numpy(a if a.flags.c_contiguous else np.ascontiguousarray(a))
    return r.to(dt) if r.dtype is not dt else r


def _float_dtype(x):
    return x.dtype if x.dtype.is_floating_point else _C.get_default_dtype()


def _fresh(t):
    return t.clone(memory_format=_C.contiguous_format)
