"""Testing helpers: ``assert_close`` with PyTorch's default tolerances."""
import numpy as np

from ptcore import _tensor as _C

# (rtol, atol) defaults per dtype, as torch.testing.assert_close
_TOLS = {
    "float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7),
    "complex32": (1e-3, 1e-5),
}


def _to_numpy(x):
    if isinstance(x, _C._TensorBase):
        t = x.detach().cpu()
        if t.dtype is _C.bfloat16:
            t = t.float()
        elif t.dtype is _C.complex32:             # no NumPy dtype; complex64 is exact
            t = t.to(_C.complex64)
        return np.array(t.numpy(), copy=True), x.dtype
    a = np.asarray(x)
    return a, None


def assert_close(actual, expected, *, rtol=None, atol=None, equal_nan=False, check_dtype=True,
                 msg=None):
    """Raise AssertionError unless ``actual`` and ``expected`` are close elementwise."""
    a, adt = _to_numpy(actual)
    e, edt = _to_numpy(expected)
    if check_dtype and adt is not None and edt is not None and adt is not edt:
        raise AssertionError(f"The values for attribute 'dtype' do not match: {adt} != {edt}.")
    if a.shape != e.shape:
        raise AssertionError(f"The values for attribute 'shape' do not match: {a.shape} != {e.shape}.")
    if rtol is None or atol is None:
        name = (adt or edt)._name if (adt or edt) is not None else a.dtype.name
        r, t = _TOLS.get(name, (0.0, 0.0))
        rtol = r if rtol is None else rtol
        atol = t if atol is None else atol
    ok = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if a.dtype.kind in "biu" and e.dtype.kind in "biu":
        ok = a == e
    if not np.all(ok):
        bad = np.argwhere(~np.asarray(ok))
        first = tuple(bad[0]) if bad.size else ()
        text = (f"Tensor-likes are not close!\n\nMismatched elements: {len(bad)} / {a.size}\n"
                f"First mismatch at index {first}: {a[first] if a.ndim else a} vs "
                f"{e[first] if e.ndim else e} (rtol={rtol}, atol={atol})")
        raise AssertionError(msg or text)
