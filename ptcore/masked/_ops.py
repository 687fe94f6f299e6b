"""The masked reductions and normalizations of ``ptcore.masked``
(``torch.masked.sum`` ...): each reduces or normalizes only the elements
where ``mask`` is True.

Masked-out elements are replaced by the identity of the operation (0 for
``sum``, -inf for ``amax`` ...) before the ordinary op runs, so a slice
with no masked-in element gives that identity (``mean``/``var``/``std``
give nan), and gradients are zero at masked-out positions (nan in the
slices of ``var``/``std`` with no masked-in element, as torch's).  A
:class:`MaskedTensor` input brings its own mask when ``mask`` is None; the
result is a plain tensor.
"""
import ptcore
import ptcore.nn.functional as _F

import ptcore.masked._mask_utils as _mu
from ptcore.masked._tensor import MaskedTensor, masked_data

__all__ = ["sum", "prod", "cumsum", "cumprod", "amax", "amin", "argmax", "argmin", "mean",
           "median", "logsumexp", "logaddexp", "norm", "var", "std", "softmax", "log_softmax",
           "softmin", "normalize"]


def _small_int(dtype):
    return dtype in (ptcore.uint8, ptcore.bool, ptcore.int8, ptcore.int16, ptcore.int32)


def _unwrap(input, mask):
    """(plain data, mask) of ``input``; a MaskedTensor brings its own mask."""
    if not isinstance(input, ptcore.Tensor) or input.layout is not ptcore.strided:
        raise ValueError(f"ptcore.masked expects a strided Tensor (sparse layouts are not "
                         f"supported), got {type(input).__name__}")
    if isinstance(input, MaskedTensor):
        return masked_data(input), input.get_mask() if mask is None else mask
    return input, mask


def _combine(op_name, input, mask, *args):
    """``input`` with its masked-out elements replaced by ``op_name``'s identity."""
    if mask is None:
        return input
    m = _mu.input_mask(input, mask)
    return ptcore.where(m, input, _mu.reduction_identity(op_name, input, *args))


def _reduce_then_cast(op_name, fn, input, dim, keepdim, dtype, mask):
    """``fn(masked input, dims, keepdim)`` cast to ``dtype`` (the input's by default)."""
    input, mask = _unwrap(input, mask)
    if dtype is None:
        dtype = input.dtype
    dims = _mu.canonical_dim(dim, input.ndim)
    return fn(_combine(op_name, input, mask), dims, bool(keepdim)).to(dtype=dtype)


def _normalized(fn, op_name, input, dim, dtype, mask):
    """``fn(masked input, dim, dtype=dtype)``: the softmax family."""
    input, mask = _unwrap(input, mask)
    if dtype is None:
        dtype = input.dtype
    d = _mu.canonical_dim(dim, input.ndim)[0]
    return fn(_combine(op_name, input, mask), d, dtype=dtype)


def _cumulative(fn, op_name, input, dim, dtype, mask):
    """``fn(masked input, dim, dtype=dtype)`` cast to ``dtype``: cumsum, cumprod."""
    return _normalized(fn, op_name, input, dim, dtype, mask).to(
        dtype=input.dtype if dtype is None else dtype)


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Sum of the masked-in elements over ``dim`` (all dims when None).

    A slice with no masked-in element sums to 0.  ``dtype`` defaults to the
    input's, integer types narrower than int64 (and bool) giving int64, as
    :func:`ptcore.sum`.
    """
    input, mask = _unwrap(input, mask)
    if dtype is None:
        dtype = ptcore.int64 if _small_int(input.dtype) else input.dtype
    dims = _mu.canonical_dim(dim, input.ndim)
    return ptcore.sum(_combine("sum", input, mask), dims, bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Product of the masked-in elements over ``dim``; an empty slice gives 1."""
    input, mask = _unwrap(input, mask)
    if dtype is None:
        dtype = ptcore.int64 if _small_int(input.dtype) else input.dtype
    dims = _mu.canonical_dim(dim, input.ndim)
    r = _combine("prod", input, mask).to(dtype=dtype)
    for d in reversed(dims):
        r = r.prod(dim=d, keepdim=bool(keepdim))
    return r


def cumsum(input, dim, *, dtype=None, mask=None):
    """Cumulative sum along ``dim``, masked-out elements counting as 0."""
    return _cumulative(ptcore.cumsum, "sum", input, dim, dtype, mask)


def cumprod(input, dim, *, dtype=None, mask=None):
    """Cumulative product along ``dim``, masked-out elements counting as 1."""
    return _cumulative(ptcore.cumprod, "prod", input, dim, dtype, mask)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Maximum of the masked-in elements over ``dim``; an empty slice gives
    -inf for floating point input, the smallest integer for integer input."""
    return _reduce_then_cast("amax", ptcore.amax, input, dim, keepdim, dtype, mask)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Minimum of the masked-in elements over ``dim``; an empty slice gives
    inf for floating point input, the largest integer for integer input."""
    return _reduce_then_cast("amin", ptcore.amin, input, dim, keepdim, dtype, mask)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Index of the largest masked-in element along ``dim`` (of the flattened
    input when None).  As torch, the result has the input's dtype unless
    ``dtype`` is given."""
    input, mask = _unwrap(input, mask)
    out = ptcore.argmax(_combine("argmax", input, mask), dim, bool(keepdim))
    return out.to(dtype=input.dtype if dtype is None else dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Index of the smallest masked-in element along ``dim`` (of the flattened
    input when None), in the input's dtype unless ``dtype`` is given."""
    input, mask = _unwrap(input, mask)
    out = ptcore.argmin(_combine("argmin", input, mask), dim, bool(keepdim))
    return out.to(dtype=input.dtype if dtype is None else dtype)


def _count(input, dim, keepdim, mask):
    if mask is None:
        ones = ptcore.ones(input.shape, dtype=ptcore.int64, device=input.device)
        return sum(ones, dim, keepdim=keepdim)
    return _mu.input_mask(input, mask).sum(dim=_mu.canonical_dim(dim, input.ndim),
                                           keepdim=bool(keepdim))


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Mean of the masked-in elements over ``dim``; an empty slice gives nan.
    The input (or ``dtype``) must be floating point or complex (ValueError)."""
    input, mask = _unwrap(input, mask)
    source = "Optional"
    if dtype is None:
        dtype, source = input.dtype, "Input"
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either "
                         f"a floating point or complex dtype. Got: {dtype}")
    total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=mask)
    return total / _count(input, dim, keepdim, mask)


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    """Median of the masked-in elements along ``dim`` (the lower of the two
    middle values for an even count); an empty slice gives nan, which a
    non-floating ``dtype`` cannot hold (ValueError)."""
    input, mask = _unwrap(input, mask)
    if dtype is None:
        dtype = input.dtype
    d = _mu.canonical_dim(dim, input.ndim)[0]
    is_float = input.dtype.is_floating_point
    if not is_float:
        input = input.to(dtype=ptcore.float32)
    out = ptcore.nanmedian(_combine("median", input, mask), d, bool(keepdim)).values
    if is_float:
        return out
    if bool(ptcore.isnan(out).any()):
        raise ValueError("masked median expects no fully masked out rows if dtype is not "
                         "floating point")
    return out.to(dtype=dtype)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """``log(sum(exp(x)))`` of the masked-in elements over ``dim``; an empty
    slice gives -inf."""
    return _reduce_then_cast("logsumexp", lambda x, d, k: ptcore.logsumexp(x, d, keepdim=k),
                             input, dim, keepdim, dtype, mask)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    """Elementwise ``log(exp(input) + exp(other))`` where masked-out elements
    of either operand count as -inf."""
    input, input_mask = _unwrap(input, input_mask)
    other, other_mask = _unwrap(other, other_mask)
    if dtype is None:
        dtype = input.dtype
    return ptcore.logaddexp(_combine("logaddexp", input, input_mask),
                            _combine("logaddexp", other, other_mask)).to(dtype=dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Vector ``ord``-norm of the masked-in elements over ``dim``
    (:func:`ptcore.linalg.vector_norm`); an empty slice gives 0 (inf for
    ``ord=-inf``)."""
    input, mask = _unwrap(input, mask)
    if dtype is None:
        dtype = input.dtype
    if ord is None:
        ord = 2.0
    dims = _mu.canonical_dim(dim, input.ndim)
    return ptcore.linalg.vector_norm(_combine("norm", input, mask, ord), ord, dims,
                                     bool(keepdim), dtype=dtype)


def _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt):
    input, mask = _unwrap(input, mask)
    if unbiased is not None and correction is not None:
        raise RuntimeError("Only one of unbiased and correction may be given")
    corr = 1.0
    if unbiased is not None:
        corr = 1.0 if unbiased else 0.0
    if correction is not None:
        corr = float(correction)
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = ptcore.float32
    compute = dtype if (dtype.is_floating_point or dtype.is_complex) else ptcore.float32
    inmask = None if mask is None else _mu.input_mask(input, mask)
    count = _count(input, dim, True, inmask)
    sample_mean = ptcore.divide(sum(input, dim, keepdim=True, dtype=dtype, mask=inmask), count)
    x = ptcore.subtract(input, sample_mean)
    total = sum(x * x.conj(), dim, keepdim=keepdim, dtype=compute, mask=inmask)
    if not keepdim:
        count = count.reshape(total.shape)
    if corr != 0:
        real = compute.to_real() if compute.is_complex else compute
        count = count.to(real)
        count = ptcore.subtract(count, corr)
        count = ptcore.maximum(count, count.new_zeros([]))
    out = ptcore.divide(total, count).to(dtype=dtype)
    return ptcore.sqrt(out) if take_sqrt else out


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    """Variance of the masked-in elements over ``dim``, divided by
    ``count - correction`` (``correction`` 1 by default, 0 with
    ``unbiased=False``); a slice with too few elements gives nan or inf."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    """Standard deviation of the masked-in elements over ``dim`` (the square
    root of :func:`var`)."""
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def softmax(input, dim, *, dtype=None, mask=None):
    """Softmax along ``dim`` over the masked-in elements: masked-out
    elements get 0, and a slice with no masked-in element gives nan."""
    return _normalized(_F.softmax, "amax", input, dim, dtype, mask)


def log_softmax(input, dim, *, dtype=None, mask=None):
    """Log-softmax along ``dim`` over the masked-in elements: masked-out
    elements get -inf, and a slice with no masked-in element gives nan."""
    return _normalized(_F.log_softmax, "amax", input, dim, dtype, mask)


def softmin(input, dim, *, dtype=None, mask=None):
    """Softmin (softmax of ``-input``) along ``dim`` over the masked-in
    elements: masked-out elements get 0."""
    return _normalized(_F.softmin, "amin", input, dim, dtype, mask)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    """``input`` divided by the masked ``ord``-norm along ``dim`` (at least
    ``eps``); masked-out elements become 0."""
    input, mask = _unwrap(input, mask)
    if dtype is None:
        dtype = input.dtype
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    denom = ptcore.maximum(nrm, nrm.new_full([], eps))
    return ptcore.divide(_combine("sum", input, mask), denom)
