"""``assert_close`` and ``assert_allclose``: torch.testing's comparison of
tensors, numbers and nested containers, with its messages.

The inputs are first matched up: sequences and mappings are walked (their
lengths and keys must agree), and each pair of leaves is given to the first
kind of comparison that accepts it (``None``, booleans, Python/NumPy numbers,
tensor-likes).  Only when every pair is accepted are the pairs compared, in
order; the first mismatch is raised.  Failures carry the exception type, the
generated message and the path of the item ("[1]['a']") until they reach the
caller, where a user ``msg`` replaces or rewrites the message.
"""
import cmath
import collections.abc
import contextlib
import sys
import warnings

import numpy as np

import ptcore

__all__ = ["assert_close", "assert_allclose"]

# (rtol, atol) per dtype; every other dtype compares exactly
_DEFAULT_TOLERANCES = {
    ptcore.float16: (0.001, 1e-5),
    ptcore.bfloat16: (0.016, 1e-5),
    ptcore.float32: (1.3e-6, 1e-5),
    ptcore.float64: (1e-7, 1e-7),
    ptcore.complex32: (0.001, 1e-5),
    ptcore.complex64: (1.3e-6, 1e-5),
    ptcore.complex128: (1e-7, 1e-7),
}

# the looser defaults of the deprecated assert_allclose
_ALLCLOSE_TOLERANCES = {
    ptcore.float16: (1e-3, 1e-3),
    ptcore.float32: (1e-4, 1e-5),
    ptcore.float64: (1e-5, 1e-8),
}

_INTERNAL_ERROR_TAIL = (
    "If you are a user and see this message during normal operation please report it to the "
    "ptcore developers. If you are a developer and working on the comparison functions, please "
    "except the previous error and raise an expressive `_Failure` instead.")


class _Failure(Exception):
    """A comparison failure on its way to the caller: the exception type to
    raise, the generated message and the item path."""

    def __init__(self, kind, message, path=()):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.path = path

    def to_error(self, msg=None):
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.message
        if self.path:
            text += "\n\nThe failure occurred for item " + "".join(str([p]) for p in self.path)
        return self.kind(msg(text) if callable(msg) else text)


class _Unsupported(Exception):
    """A comparison kind does not handle the given inputs; the next one is tried."""


def _tolerances(dtypes, rtol, atol, path, table=_DEFAULT_TOLERANCES):
    if (rtol is None) != (atol is None):
        raise _Failure(ValueError,
                       "Both 'rtol' and 'atol' must be either specified or omitted, "
                       f"but got no {'rtol' if rtol is None else 'atol'}.", path)
    if rtol is not None:
        return rtol, atol
    pairs = [table.get(dt, (0.0, 0.0)) for dt in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


# -- messages -------------------------------------------------------------

def _mismatch_message(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    exact = rtol == 0 and atol == 0
    lines = [f"{identifier} are not {'equal' if exact else 'close'}!", "", extra.strip()]
    for kind, diff, idx, tol in (("absolute", abs_diff, abs_idx, atol),
                                 ("relative", rel_diff, rel_idx, rtol)):
        line = (f"{kind.title()} difference: {diff}" if idx is None
                else f"Greatest {kind} difference: {diff} at index {idx}")
        lines.append(line if exact else f"{line} (up to {tol} allowed)")
    return "\n".join(lines)


def _scalar_message(actual, expected, rtol, atol, identifier="Scalars"):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_message(identifier, f"Expected {expected} but got {actual}.",
                             abs_diff, None, atol, rel_diff, None, rtol)


def _unravel(flat, shape):
    index = []
    for size in reversed(shape):
        flat, rem = divmod(flat, size)
        index.append(rem)
    return tuple(reversed(index))


def _tensor_message(actual, expected, matches, rtol, atol, identifier):
    total = matches.numel()
    bad = total - int(matches.sum())
    extra = f"Mismatched elements: {bad} / {total} ({bad / total:.1%})"
    a, e, hit = actual.flatten(), expected.flatten(), matches.flatten()
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        a, e = a.to(ptcore.int64), e.to(ptcore.int64)
    abs_diff = (a - e).abs()
    abs_diff[hit] = 0
    max_abs, abs_at = abs_diff.max(0)
    rel_diff = abs_diff / e.abs()
    rel_diff[hit] = 0
    max_rel, rel_at = rel_diff.max(0)
    shape = tuple(matches.shape)
    return _mismatch_message(identifier, extra, max_abs.item(), _unravel(int(abs_at), shape),
                             atol, max_rel.item(), _unravel(int(rel_at), shape), rtol)


# -- kinds of comparison -----------------------------------------------------

class _Pair:
    """One matched-up pair of leaves; ``compare`` raises a ``_Failure``."""

    _options = ()          # the settings its repr shows

    def __init__(self, actual, expected, path):
        self.actual, self.expected, self.path = actual, expected, path

    def fail(self, kind, message):
        raise _Failure(kind, message, self.path)

    def __repr__(self):
        fields = [("id", self.path), ("actual", self.actual), ("expected", self.expected)]
        fields += [(name, getattr(self, name)) for name in self._options]
        return "\n".join([f"{type(self).__name__}("] + [f"    {k}={v!s}," for k, v in fields]
                         + [")"])


class NonePair(_Pair):
    def __init__(self, actual, expected, path, **options):
        if actual is not None and expected is not None:
            raise _Unsupported
        super().__init__(actual, expected, path)

    def compare(self):
        if self.actual is not None or self.expected is not None:
            self.fail(AssertionError, f"None mismatch: {self.actual} is not {self.expected}")


class BooleanPair(_Pair):
    def __init__(self, actual, expected, path, **options):
        if not all(isinstance(x, (bool, np.bool_)) for x in (actual, expected)):
            raise _Unsupported
        super().__init__(*(bool(x) for x in (actual, expected)), path)

    def compare(self):
        if self.actual is not self.expected:
            self.fail(AssertionError, f"Booleans mismatch: {self.actual} is not {self.expected}")


class NumberPair(_Pair):
    _DTYPES = {int: ptcore.int64, float: ptcore.float64, complex: ptcore.complex128}
    _options = ("rtol", "atol", "equal_nan", "check_dtype")

    def __init__(self, actual, expected, path, *, rtol=None, atol=None, equal_nan=False,
                 check_dtype=False, **options):
        kinds = (int, float, complex, np.number)
        if not all(isinstance(x, kinds) for x in (actual, expected)):
            raise _Unsupported
        actual, expected = (x.item() if isinstance(x, np.number) else x
                            for x in (actual, expected))
        super().__init__(actual, expected, path)
        # a bool (an int subclass) has no dtype here: torch fails the same way
        dtypes = [self._DTYPES[type(x)] for x in (actual, expected)]
        self.rtol, self.atol = _tolerances(dtypes, rtol, atol, path)
        self.equal_nan, self.check_dtype = equal_nan, check_dtype

    def compare(self):
        a, e = self.actual, self.expected
        if self.check_dtype and type(a) is not type(e):
            self.fail(AssertionError, f"The (d)types do not match: {type(a)} != {type(e)}.")
        if a == e or (self.equal_nan and cmath.isnan(a) and cmath.isnan(e)):
            return
        diff = abs(a - e)
        if cmath.isfinite(diff) and diff <= self.atol + self.rtol * abs(e):
            return
        self.fail(AssertionError, _scalar_message(a, e, self.rtol, self.atol))


# compressed layout name -> (format, compressed indices, plain indices)
_COMPRESSED = {
    "sparse_csr": ("CSR", "crow_indices", "col_indices"),
    "sparse_csc": ("CSC", "ccol_indices", "row_indices"),
}


def _is_sparse_tensor(x):
    # ptcore.sparse is imported on first use: without it there are no sparse tensors
    module = sys.modules.get("ptcore.sparse._tensor")
    return module is not None and isinstance(x, module.SparseTensor)


def _tensor_type(x):
    # a sparse tensor is a ptcore.Tensor to the caller, as torch's sparse tensors are
    return ptcore.Tensor if _is_sparse_tensor(x) else type(x)


class TensorLikePair(_Pair):
    _options = ("rtol", "atol", "equal_nan", "check_device", "check_dtype", "check_layout",
                "check_stride")

    def __init__(self, actual, expected, path, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, **options):
        ta, te = _tensor_type(actual), _tensor_type(expected)
        if not (issubclass(ta, te) or issubclass(te, ta)):
            raise _Unsupported
        if not allow_subclasses and ta is not te:
            raise _Unsupported
        actual, expected = self._as_tensor(actual), self._as_tensor(expected)
        super().__init__(actual, expected, path)
        self.rtol, self.atol = _tolerances((actual.dtype, expected.dtype), rtol, atol, path)
        self.equal_nan = equal_nan
        self.check_device, self.check_dtype = check_device, check_dtype
        self.check_layout, self.check_stride = check_layout, check_stride

    @staticmethod
    def _as_tensor(x):
        if isinstance(x, ptcore.Tensor) or _is_sparse_tensor(x):
            return x
        try:
            return ptcore.as_tensor(x)
        except Exception:  # noqa: BLE001 - not a tensor-like: the next kind is tried
            raise _Unsupported from None

    def compare(self):
        a, e = self.actual, self.expected
        self._compare_attributes(a, e)
        if a.device.type == "meta" or e.device.type == "meta":
            return
        a, e = self._equalize(a, e)
        with ptcore.no_grad():
            layout = getattr(a.layout, "name", None)
            if layout == "sparse_coo":
                self._compare_coo(a, e)
            elif layout in _COMPRESSED:
                self._compare_compressed(a, e)
            elif getattr(a, "is_quantized", False):
                # torch's: the schemes, then the real values
                if a.qscheme() != e.qscheme():
                    self.fail(AssertionError, f"qscheme(): {a.qscheme()} != {e.qscheme()}")
                self._compare_values(a.dequantize(), e.dequantize(), self.rtol, self.atol,
                                     self.equal_nan)
            else:
                self._compare_values(a, e, self.rtol, self.atol, self.equal_nan)

    def _compare_attributes(self, a, e):
        def mismatch(name, x, y):
            self.fail(AssertionError,
                      f"The values for attribute '{name}' do not match: {x} != {y}.")

        if a.shape != e.shape:
            mismatch("shape", a.shape, e.shape)
        qa, qe = (getattr(x, "is_quantized", False) for x in (a, e))
        if qa != qe:
            mismatch("is_quantized", qa, qe)
        if a.layout != e.layout:
            if self.check_layout:
                mismatch("layout", a.layout, e.layout)
        elif a.layout is ptcore.strided and self.check_stride and a.stride() != e.stride():
            mismatch("stride()", a.stride(), e.stride())
        if self.check_device and a.device != e.device:
            mismatch("device", a.device, e.device)
        if self.check_dtype and a.dtype != e.dtype:
            mismatch("dtype", a.dtype, e.dtype)

    @staticmethod
    def _equalize(a, e):
        if a.device != e.device:
            a, e = a.cpu(), e.cpu()
        if a.dtype != e.dtype:
            # wide unsigned integers compare as int64 (promote_types refuses them)
            wide = (ptcore.uint16, ptcore.uint32, ptcore.uint64)
            da, de = (ptcore.int64 if x.dtype in wide else x.dtype for x in (a, e))
            dtype = ptcore.promote_types(da, de)
            a, e = a.to(dtype), e.to(dtype)
        if a.layout != e.layout:
            a, e = (x if x.layout is ptcore.strided else x.to_dense() for x in (a, e))
        return a, e

    def _compare_values(self, a, e, rtol, atol, equal_nan, identifier=None):
        matches = ptcore.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
        if bool(matches.all()):
            return
        if a.dim() == 0:
            message = _scalar_message(a.item(), e.item(), rtol, atol, identifier or "Scalars")
        else:
            message = _tensor_message(a, e, matches, rtol, atol, identifier or "Tensor-likes")
        self.fail(AssertionError, message)

    def _compare_coo(self, a, e):
        if a.sparse_dim() != e.sparse_dim():
            self.fail(AssertionError, "The number of sparse dimensions in sparse COO tensors "
                                      f"does not match: {a.sparse_dim()} != {e.sparse_dim()}")
        self._compare_nnz(a, e, "COO")
        self._compare_values(a._indices(), e._indices(), 0, 0, False, "Sparse COO indices")
        self._compare_values(a._values(), e._values(), self.rtol, self.atol, self.equal_nan,
                             "Sparse COO values")

    def _compare_compressed(self, a, e):
        name, compressed, plain = _COMPRESSED[a.layout.name]
        self._compare_nnz(a, e, name)
        # the index dtypes (int32 or int64) may differ between the two tensors
        ca, ce = getattr(a, compressed)(), getattr(e, compressed)()
        dtype = ptcore.promote_types(ca.dtype, ce.dtype)
        self._compare_values(ca.to(dtype), ce.to(dtype), 0, 0, False,
                             f"Sparse {name} {compressed}")
        self._compare_values(getattr(a, plain)().to(dtype), getattr(e, plain)().to(dtype), 0, 0,
                             False, f"Sparse {name} {plain}")
        self._compare_values(a.values(), e.values(), self.rtol, self.atol, self.equal_nan,
                             f"Sparse {name} values")

    def _compare_nnz(self, a, e, name):
        if a._nnz() != e._nnz():
            self.fail(AssertionError, f"The number of specified values in sparse {name} "
                                      f"tensors does not match: {a._nnz()} != {e._nnz()}")


_PAIR_KINDS = (NonePair, BooleanPair, NumberPair, TensorLikePair)


# -- matching up the inputs -------------------------------------------------------

def _is_sequence(x):
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)


def _pairs(actual, expected, path, options):
    """The leaf pairs of two (nested) inputs, in comparison order."""
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Failure(AssertionError, "The length of the sequences mismatch: "
                                           f"{len(actual)} != {len(expected)}", path)
        return [p for i in range(len(actual))
                for p in _pairs(actual[i], expected[i], (*path, i), options)]
    mapping = collections.abc.Mapping
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        keys, other = set(actual.keys()), set(expected.keys())
        if keys != other:
            raise _Failure(AssertionError,
                           "The keys of the mappings do not match:\n"
                           f"Missing keys in the actual mapping: {sorted(other - keys)}\n"
                           f"Additional keys in the actual mapping: {sorted(keys - other)}", path)
        with contextlib.suppress(Exception):     # a deterministic order where keys sort
            keys = sorted(keys)
        return [p for k in keys for p in _pairs(actual[k], expected[k], (*path, k), options)]
    for kind in _PAIR_KINDS:
        try:
            return [kind(actual, expected, path, **options)]
        except _Unsupported:
            continue
        except _Failure:
            raise
        except Exception as exc:
            where = "".join(str([p]) for p in path)
            raise RuntimeError(
                f"Originating a {kind.__name__}() at item {where} with\n\n"
                f"{type(actual).__name__}(): {actual}\n\nand\n\n"
                f"{type(expected).__name__}(): {expected}\n\n"
                f"resulted in the unexpected exception above. {_INTERNAL_ERROR_TAIL}") from exc
    raise _Failure(TypeError, "No comparison pair was able to handle inputs of type "
                              f"{type(actual)} and {type(expected)}.", path)


def _first_failure(actual, expected, options):
    try:
        pairs = _pairs(actual, expected, (), options)
    except _Failure as failure:
        # a structural or usage error: ``msg`` does not replace it
        raise failure.to_error() from None
    for pair in pairs:
        try:
            pair.compare()
        except _Failure as failure:
            return failure
        except Exception as exc:
            raise RuntimeError(f"Comparing\n\n{pair}\n\nresulted in the unexpected exception "
                               f"above. {_INTERNAL_ERROR_TAIL}") from exc
    return None


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    r"""Assert that ``actual`` and ``expected`` are close (``torch.testing.assert_close``).

    Tensors (and tensor-likes that :func:`ptcore.as_tensor` converts, such as
    NumPy arrays; except for Python numbers the two types must be directly
    related) are close if their shapes agree, their device, dtype and layout
    (and stride, with ``check_stride``) agree unless the ``check_*`` flag is
    off, and elementwise

    .. math:: |\text{actual} - \text{expected}| \le \text{atol} + \text{rtol} \cdot |\text{expected}|

    compared in the promoted dtype on the CPU.  Infinities match only
    themselves; NaNs match each other only with ``equal_nan``.  Integer and
    boolean values compare exactly, floating and complex ones with defaults per
    dtype (the loosest of the two dtypes'): float16 (1e-3, 1e-5), bfloat16
    (1.6e-2, 1e-5), float32 and complex64 (1.3e-6, 1e-5), float64 and
    complex128 (1e-7, 1e-7), complex32 (1e-3, 1e-5).  Sparse COO, CSR and CSC
    tensors compare their indices exactly and their values closely.  Python
    numbers and booleans, ``None``, and sequences and mappings of all of these
    (recursively) are accepted.

    Parameters
    ----------
    actual, expected : object
        The inputs.
    allow_subclasses : bool, optional
        Accept directly related types (default); if False the types must be equal.
    rtol, atol : float, optional
        Relative and absolute tolerance; give both or neither.
    equal_nan : bool, optional
        NaNs compare equal.
    check_device, check_dtype, check_layout : bool, optional
        Require equal devices, dtypes and layouts (default); otherwise the values
        are moved to the CPU, promoted, or made dense before the comparison.
    check_stride : bool, optional
        Require equal strides of strided tensors.
    msg : str or callable, optional
        A message that replaces the generated one, or a function of the generated
        one that returns the message.

    Raises
    ------
    AssertionError
        If the inputs do not match.
    ValueError
        If only one of ``rtol`` and ``atol`` is given.
    TypeError
        If no kind of comparison handles a pair of inputs.

    Examples
    --------
    >>> import ptcore
    >>> ptcore.testing.assert_close(ptcore.tensor([1.0, 2.0]), ptcore.tensor([1.0, 2.0 + 1e-7]))
    >>> ptcore.testing.assert_close(ptcore.tensor([1.0, 2.5]), ptcore.tensor([1.0, 2.0]))
    Traceback (most recent call last):
    ...
    AssertionError: Tensor-likes are not close!
    <BLANKLINE>
    Mismatched elements: 1 / 2 (50.0%)
    Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)
    Greatest relative difference: 0.25 at index (1,) (up to 1.3e-06 allowed)
    """
    __tracebackhide__ = True
    failure = _first_failure(actual, expected, dict(
        allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
        check_device=check_device, check_dtype=check_dtype, check_layout=check_layout,
        check_stride=check_stride))
    if failure is not None:
        raise failure.to_error(msg)


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated form of :func:`assert_close` (``torch.testing.assert_allclose``).

    Warns with a ``FutureWarning``; converts non-tensors with
    :func:`ptcore.tensor` (``expected`` in ``actual``'s dtype), uses looser
    default tolerances (float16 (1e-3, 1e-3), float32 (1e-4, 1e-5), float64
    (1e-5, 1e-8)), treats NaNs as equal and does not check dtypes.
    """
    warnings.warn(
        "`ptcore.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a "
        "future release. Please use `ptcore.testing.assert_close()` instead. You can find "
        "detailed upgrade instructions in https://github.com/pytorch/pytorch/issues/61844.",
        FutureWarning, stacklevel=2)
    __tracebackhide__ = True
    if not isinstance(actual, ptcore.Tensor):
        actual = ptcore.tensor(actual)
    if not isinstance(expected, ptcore.Tensor):
        expected = ptcore.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _tolerances((actual.dtype, expected.dtype), None, None, (),
                                 _ALLCLOSE_TOLERANCES)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)
