"""Text rendering of tensors for ``repr()``/``str()``.

The output reproduces PyTorch's tensor printing character for character
(same number formatting, column alignment, wrapping, summarisation and
suffixes); only the dtype suffix names this library (``ptcore.float16``)
because it is built from ``str(dtype)``.

The code talks to tensors exclusively through the PyTorch-compatible public
API (``dtype``, ``shape``, ``device``, ``detach``, ``cpu``, ``to``, ``numpy``,
``narrow`` ...) and does all numeric work on NumPy arrays, so it works for
any object exposing that API (including real ``torch.Tensor`` objects, which
the test-suite relies on).

Public names: ``PRINT_OPTS``, ``set_printoptions``, ``get_printoptions``,
``printoptions`` and the ``_str`` entry point used by ``Tensor.__repr__``.
"""

import contextlib
import dataclasses
import math
import sys
from typing import Optional

import numpy as np

__all__ = ["PRINT_OPTS", "set_printoptions", "get_printoptions", "printoptions"]


# --------------------------------------------------------------------------
# options
# --------------------------------------------------------------------------

@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: Optional[bool] = None


PRINT_OPTS = _PrintOptions()

_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


def set_printoptions(
    precision=None,
    threshold=None,
    edgeitems=None,
    linewidth=None,
    profile=None,
    sci_mode=None,
):
    r"""Set options for printing tensors.

    Parameters
    ----------
    precision : int, optional
        Digits after the decimal point for floating point output (default 4).
    threshold : int, optional
        Number of elements above which the output is summarised with
        ``...`` (default 1000).
    edgeitems : int, optional
        Items kept at the start and at the end of each summarised dimension
        (default 3).
    linewidth : int, optional
        Characters per line used when wrapping rows (default 80).
    profile : {'default', 'short', 'full'}, optional
        A preset applied before the other arguments.
    sci_mode : bool, optional
        ``True``/``False`` forces scientific notation on/off; ``None`` (the
        default, and what every call without it restores) lets the formatter
        choose.
    """
    if profile is not None:
        preset = _PROFILES.get(profile)
        if preset is not None:
            for name, value in preset.items():
                setattr(PRINT_OPTS, name, value)
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    # Like PyTorch, sci_mode is always (re)set, so omitting it means "auto".
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    r"""Current print options as a dict usable as ``set_printoptions(**d)``."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    r"""Context manager applying ``set_printoptions(**kwargs)`` temporarily."""
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


# --------------------------------------------------------------------------
# number formatting
# --------------------------------------------------------------------------

class _Formatter:
    """Decides the common style/width of every element of one tensor.

    ``values`` is a NumPy array holding the (possibly summarised) data; for
    complex tensors one formatter is built for the real parts and one for the
    imaginary parts.
    """

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        self.precision = PRINT_OPTS.precision

        flat = np.asarray(values).reshape(-1)
        if not floating:
            if flat.size:
                if flat.dtype == np.bool_:
                    width = 4 if bool(flat.all()) else 5  # "True" / "False"
                else:
                    # str() length of an integer grows with |v| (plus a sign),
                    # so the extremes give the widest strings.
                    width = max(len(str(int(flat.min()))), len(str(int(flat.max()))))
                self.max_width = max(self.max_width, width)
            return

        with np.errstate(all="ignore"):
            as_double = flat.astype(np.float64)
            keep = np.isfinite(as_double) & (as_double != 0)
        vals = as_double[keep]
        if vals.size == 0:
            return  # only zeros / nan / inf: keep the defaults

        mags = np.abs(vals)
        lo = float(mags.min())
        hi = float(mags.max())
        self.int_mode = bool(np.all(np.ceil(vals) == vals))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode

        # The printed length only depends on the sign and on |v| (monotonically
        # for fixed notation; through the exponent's digit count, which peaks
        # at the extremes, for scientific notation), so the smallest and the
        # largest magnitude of each sign are enough to find the widest entry.
        candidates = []
        for group in (vals[vals > 0], vals[vals < 0]):
            if group.size:
                g = np.abs(group)
                candidates.append(float(group[g.argmin()]))
                candidates.append(float(group[g.argmax()]))
        p = self.precision
        if self.sci_mode:
            widths = [len(f"{v:.{p}e}") for v in candidates]
        elif self.int_mode:
            # the trailing "." marks the tensor as floating point
            widths = [len(f"{v:.0f}") + 1 for v in candidates]
        else:
            widths = [len(f"{v:.{p}f}") for v in candidates]
        self.max_width = max([self.max_width] + widths)

    def width(self):
        return self.max_width

    def format(self, value):
        if self.floating:
            p = self.precision
            if self.sci_mode:
                text = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if math.isfinite(value):
                    text += "."
            else:
                text = f"{value:.{p}f}"
        else:
            text = f"{value}"
        # pad on the left, never truncate (nan/inf/-0. may be wider)
        return text.rjust(self.max_width)


def _complex_element(value, real_fmt, imag_fmt):
    real_text = real_fmt.format(value.real)
    imag_text = (imag_fmt.format(value.imag) + "j").lstrip()
    if imag_text[0] in "+-":
        return real_text + imag_text
    return real_text + "+" + imag_text


# --------------------------------------------------------------------------
# layout
# --------------------------------------------------------------------------

def _layout(data, depth, ndim, indent, cuts, edge, element, element_len):
    """Render nested Python lists ``data`` (dimension ``depth`` of ``ndim``)."""
    if depth == ndim - 1:
        items = [element(v) for v in data]
        if cuts[depth]:
            items = items[:edge] + [" ..."] + items[edge:]
        per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_len))
        rows = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(rows) + "]"

    parts = [
        _layout(sub, depth + 1, ndim, indent + 1, cuts, edge, element, element_len)
        for sub in data
    ]
    if cuts[depth]:
        parts = parts[:edge] + ["..."] + parts[edge:]
    separator = "," + "\n" * (ndim - depth - 1) + " " * (indent + 1)
    return "[" + separator.join(parts) + "]"


# --------------------------------------------------------------------------
# getting values out of a tensor
# --------------------------------------------------------------------------

def _numpy_ready(t, lib):
    """Return a CPU tensor whose dtype NumPy understands (values unchanged)."""
    if t.device.type != "cpu":
        t = t.cpu()
    # lazily conjugated / negated views (PyTorch) cannot go through .numpy()
    is_conj = getattr(t, "is_conj", None)
    if is_conj is not None and is_conj():
        t = t.resolve_conj()
    is_neg = getattr(t, "is_neg", None)
    if is_neg is not None and is_neg():
        t = t.resolve_neg()
    dt = t.dtype
    if t.is_complex():
        if dt not in (lib.complex64, lib.complex128):
            t = t.to(lib.complex64)
    elif t.is_floating_point():
        if dt not in (lib.float16, lib.float32, lib.float64):
            # bfloat16 / 8-bit floats: exactly representable in float32
            t = t.to(lib.float32)
    return t


def _to_numpy(t, lib):
    t = _numpy_ready(t, lib)
    try:
        return np.asarray(t.numpy())
    except (TypeError, RuntimeError):
        # integer types NumPy cannot take directly
        return np.asarray(t.to(lib.int64).numpy())


def _direct_numpy_ok(t, lib):
    """Whether ``t`` is a CPU tensor that ``.numpy()`` can view as is."""
    if t.device.type != "cpu":
        return False
    if t.is_complex():
        return t.dtype in (lib.complex64, lib.complex128)
    if t.is_floating_point():
        return t.dtype in (lib.float16, lib.float32, lib.float64)
    return True


def _edge_values(t, cuts, edge, lib):
    """NumPy array of ``t`` with every cut dimension reduced to its edges."""
    shape = tuple(t.shape)
    # (a huge expanded tensor goes through its edges piece by piece: one of 2**62 elements
    # spans more bytes than a NumPy array may, and NumPy's take copied one of 2**40)
    if _direct_numpy_ok(t, lib) and t.numel() * t.element_size() < 2**31:
        arr = _to_numpy(t, lib)  # a view for CPU tensors, no copy
        for d, cut in enumerate(cuts):
            if cut:
                n = shape[d]
                idx = np.concatenate([np.arange(edge), np.arange(n - edge, n)])
                arr = arr.take(idx, axis=d)
        return arr

    def gather(piece, d):
        if d == len(shape):
            return _to_numpy(piece, lib)
        if cuts[d]:
            n = shape[d]
            return np.concatenate(
                [gather(piece.narrow(d, 0, edge), d + 1),
                 gather(piece.narrow(d, n - edge, edge), d + 1)],
                axis=d,
            )
        return gather(piece, d + 1)

    if any(cuts):
        return gather(t, 0)
    return _to_numpy(t, lib)


def _tensor_body(t, indent, lib):
    """The bracketed values part of the representation."""
    if t.numel() == 0:
        return "[]"
    ndim = t.dim()
    shape = tuple(t.shape)
    summarize = t.numel() > PRINT_OPTS.threshold
    edge = PRINT_OPTS.edgeitems

    if summarize and ndim > 0 and not edge:
        return "[...]"

    cuts = [summarize and n > 2 * edge for n in shape]
    arr = _edge_values(t, cuts, edge, lib)

    if arr.dtype.kind == "c":
        real_fmt = _Formatter(arr.real, True)
        imag_fmt = _Formatter(arr.imag, True)
        element_len = real_fmt.width() + 2 + imag_fmt.width() + 1

        def element(v):
            return _complex_element(v, real_fmt, imag_fmt)
    else:
        fmt = _Formatter(arr, arr.dtype.kind == "f")
        element_len = fmt.width() + 2
        element = fmt.format

    data = arr.tolist()
    if ndim == 0:
        return element(data)
    return _layout(data, 0, ndim, indent, cuts, edge, element, element_len)


def _tensor_str(self, indent):
    """``torch._tensor_str._tensor_str``: the bracketed values of ``self`` as its repr
    writes them, continuation lines indented by ``indent`` + 1 (PyG's OFF writer prints
    positions with it)."""
    import ptcore  # lazy: the package root (dtypes, default dtype), as _str takes it
    return _tensor_body(self, indent, ptcore)


# --------------------------------------------------------------------------
# suffixes and entry point
# --------------------------------------------------------------------------

def _measure(suffix):
    """Length a suffix is counted as when deciding where to wrap.

    dtype names are counted as PyTorch spells them (``dtype=torch.float64``)
    so that line breaks fall exactly where PyTorch puts them, even though
    the text printed names this library (one character longer).
    """
    for key in ("dtype=", "layout=", "quantization_scheme="):
        if suffix.startswith(key):
            return len(key) + len("torch.") + len(suffix.rsplit(".", 1)[-1])
    return len(suffix)


def _join_suffixes(text, suffixes, indent, force_newline=False):
    """``text`` + ``suffixes``, wrapped as PyTorch wraps them; ``force_newline``
    puts the first suffix on a line of its own (sparse COO tensors)."""
    out = [text]
    # (this deliberately reproduces PyTorch's arithmetic, including the +1
    # and the -1 of rfind when there is no newline)
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        size = _measure(suffix)
        if force_newline or last_line_len + size + 2 > PRINT_OPTS.linewidth:
            out.append(",\n" + " " * indent + suffix)
            last_line_len = indent + size
            force_newline = False
        else:
            out.append(", " + suffix)
            last_line_len += size + 2
    out.append(")")
    return "".join(out)


# torch._tensor_str's name for it (PyG's EdgeIndex repr calls it)
_add_suffixes = _join_suffixes


def _device_suffix_needed(device, lib):
    default_type = "cpu"
    get_default_device = getattr(lib, "get_default_device", None)
    if callable(get_default_device):
        try:
            default_type = get_default_device().type
        except Exception:
            pass
    if device.type != default_type or device.type == "mps":
        return True
    if device.type == "cuda":
        try:
            return device.index != lib.cuda.current_device()
        except Exception:
            return device.index not in (None, 0)
    return False


def _plain_types(lib):
    plain = []
    tensor_cls = getattr(lib, "Tensor", None)
    if isinstance(tensor_cls, type):
        plain.append(tensor_cls)
    param_cls = _parameter_class(lib)
    if param_cls is not None:
        plain.append(param_cls)
    return plain


def _parameter_class(lib):
    # (by the module's spec: under ptcore.as_torch ptcore's __name__ is "torch", and its
    # nn package is in sys.modules as ptcore.nn unless a program imported torch.nn itself)
    spec = getattr(lib, "__spec__", None)
    nn = sys.modules.get((getattr(spec, "name", None) or getattr(lib, "__name__", "")) + ".nn")
    cls = getattr(nn, "Parameter", None) if nn is not None else None
    return cls if isinstance(cls, type) else None


def _grad_fn_name(t):
    try:
        grad_fn = t.grad_fn
    except RuntimeError:
        return "Invalid"
    if grad_fn is None:
        return None
    name_method = getattr(grad_fn, "name", None)
    if callable(name_method):
        name = name_method()
    else:
        name = type(grad_fn).__name__
    return str(name).rsplit("::", 1)[-1]


def _str(self, *, tensor_contents=None, _lib=None) -> str:
    """Build ``repr(self)``.

    ``tensor_contents`` replaces the bracketed values (used by subclasses);
    ``_lib`` is the library module providing dtypes and
    ``get_default_dtype()`` (defaults to ``ptcore``).
    """
    if _lib is None:
        import ptcore as _lib

    plain = _plain_types(_lib)
    is_plain = not plain or type(self) in plain
    prefix = "tensor(" if is_plain else f"{type(self).__name__}("
    indent = len(prefix)
    suffixes = []

    device = self.device
    if _device_suffix_needed(device, _lib):
        suffixes.append("device='" + str(device) + "'")

    t = self.detach()
    dtype = t.dtype
    default_dtype = _lib.get_default_dtype()
    default_complex = _lib.complex128 if default_dtype == _lib.float64 else _lib.complex64
    has_default_dtype = dtype in (default_dtype, default_complex, _lib.int64, _lib.bool)
    shape_text = "size=" + str(tuple(int(n) for n in t.shape))

    if device.type == "meta":
        suffixes.append(shape_text)
        if dtype != default_dtype:
            suffixes.append("dtype=" + str(dtype))
        body = "..."
    elif t.numel() == 0:
        # like NumPy, spell the shape out unless it is (0,); with no element
        # to tell the kind apart, any non-default dtype is named
        if t.dim() != 1:
            suffixes.append(shape_text)
        if dtype != default_dtype:
            suffixes.append("dtype=" + str(dtype))
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(shape_text)
        if not has_default_dtype:
            suffixes.append("dtype=" + str(dtype))
        body = None if tensor_contents is not None else _tensor_body(t, indent, _lib)
    if tensor_contents is not None:
        body = tensor_contents

    grad_fn_name = _grad_fn_name(self)
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif self.requires_grad:
        suffixes.append("requires_grad=True")

    text = _join_suffixes(prefix + body, suffixes, indent)

    param_cls = _parameter_class(_lib)
    if param_cls is not None and isinstance(self, param_cls) and not is_plain:
        text = f"Parameter({text})"
    return text


_SPARSE_PARTS = {
    "sparse_coo": ("indices", "values"),
    "sparse_csr": ("crow_indices", "col_indices", "values"),
    "sparse_csc": ("ccol_indices", "row_indices", "values"),
}


def _sparse_str(self, parts, _lib=None) -> str:
    """``repr`` of a sparse tensor whose index and value tensors are ``parts``
    (in the order of ``_SPARSE_PARTS[layout]``), laid out as PyTorch's."""
    if _lib is None:
        import ptcore as _lib
    prefix = "tensor("
    indent = len(prefix)
    layout = self.layout
    suffixes = []
    if _device_suffix_needed(self.device, _lib):
        suffixes.append("device='" + str(self.device) + "'")
    suffixes.append("size=" + str(tuple(int(n) for n in self.shape)))
    suffixes.append("nnz=" + str(self._nnz()))
    dtype = self.dtype
    default_dtype = _lib.get_default_dtype()
    default_complex = _lib.complex128 if default_dtype == _lib.float64 else _lib.complex64
    if dtype not in (default_dtype, default_complex, _lib.int64, _lib.bool):
        suffixes.append("dtype=" + str(dtype))
    pieces = []
    for name, part in zip(_SPARSE_PARTS[layout.name], parts):
        part = part.detach()
        body = _tensor_body(part, indent + len(name) + len("=tensor("), _lib)
        if part.numel() == 0:
            body += ", size=" + str(tuple(int(n) for n in part.shape))
        pieces.append(f"{name}=tensor({body})")
    suffixes.append("layout=" + str(layout))
    grad_fn_name = _grad_fn_name(self)
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif self.requires_grad:
        suffixes.append("requires_grad=True")
    text = prefix + (",\n" + " " * indent).join(pieces)
    return _join_suffixes(text, suffixes, indent, force_newline=layout.name == "sparse_coo")
