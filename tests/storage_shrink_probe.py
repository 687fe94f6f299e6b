"""Every op ptcore declares, called with one tensor operand whose storage shrank
below the tensor's extent (the child of tests/test_storage_shrink_sweep.py).

The cases (:func:`cases`): each overload of ATen's that ``ptcore.ops.aten``
exposes (:mod:`ptcore._dispatch.aten_schemas`: its typed schema, the ``out=``
and in-place forms included), which binds to ptcore's public op of that name and
so passes the dispatch point and kernels a ``ptcore.X(...)`` call does; the
``Tensor.X`` method form of each overload whose first argument is ``self`` (the
tensor core's Cython methods and fast paths); and each op of the operator table
that no aten op names (operator methods, conversions, ``tolist`` ...), tried
with a few generic forms.  For each case the probe builds sample arguments from
the schema's types and names under a few *profiles* (shapes and dtypes), and
keeps the first whose call succeeds on intact tensors with a nonempty result
(an ``out=`` tensor then has the shape and dtype the op gives it); the dtypes
pass tries each case's data tensors in another dtype first (:data:`ROTATE`).

Each tensor operand (an ``out=`` tensor, an in-place ``self``, the first tensor
of a ``Tensor[]``) is then probed in turn, the arguments built afresh each time:
its storage (``untyped_storage().resize_``) one byte short of its extent
(``short``), half of it (``half``), 0 bytes (``zero``); the same values in
reversed memory order, one byte short (``strided``: the strided kernels' paths,
when the op takes that layout at all); the same values 3 elements into a
larger storage, one byte short (``offset``: the checks count the offset); and a
read operand that is a view of the
written one made before the shrink (``alias``: the overlap checks).  A probe's
outcome:

``raised``  RuntimeError with the storage-extent message (setStorage, or the
            "not allocated yet"/"out of bounds" forms of the same check);
``fits``    success, and the operand's extent fits its storage now (an out=
            tensor or ``resize_``/``set_`` that resized it);
``view``    success, every tensor result a view of an operand that is only read;
``meta``    success of an op that reads no element of that operand (metadata,
            ``*_like`` factories ...): :data:`READS_NO_ELEMENT` and the ops the
            declarations tag ``metadata``;
``part``    success of an op that touches part of the operand only, which a
            short storage still holds (:data:`READS_PART`);
``SILENT``  success that read or wrote through the shrunk operand (a hole);
``UNRAISABLE`` C code printed and dropped an exception (a ``noexcept`` function
            that raised: ``sys.unraisablehook``);
``OTHER``   another exception (type and message follow).

Each probe line ``B <key>`` is written (flushed) before the call and ``R <key>
<outcome> [detail]`` after, so the parent names a probe that crashed the
interpreter (or ran past :data:`PROBE_SECONDS`: ``faulthandler`` ends it) and
resumes after it.

    PYTHONPATH=$PWD python tests/storage_shrink_probe.py [FIRST [LAST [SKIP [DEVICE [dtypes]]]]]
"""
import faulthandler
import math
import os
import subprocess
import sys
import textwrap
import warnings
import zlib
from concurrent.futures import ThreadPoolExecutor

import ptcore
from ptcore._dispatch import op_schema as _op_schema
from ptcore._dispatch.aten_schemas import overload_lines
from ptcore._dispatch.declarations import declaration_of

# ops never called: process-wide state, files, sleeping, the allocator
SKIP_OPS = {"_assert_async", "save", "load", "from_file", "manual_seed", "seed",
            "set_num_threads", "set_default_dtype", "sleep"}
# what reads no element of the named operand (besides the ops the declarations tag
# ``metadata``): ``op``, ``op:operand`` or ``op.overload:operand``.  Factories of an
# operand's shape and dtype; the template operand of the *_as ops; in-place forms
# that change metadata only (``t_``, ``squeeze_``, ``resize_`` to the same size);
# samplers whose probabilities are another argument; an out-of-place fill.
READS_NO_ELEMENT = {
    "empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like",
    "randint_like", "new_empty", "new_empty_strided", "new_zeros", "new_ones", "new_full",
    "is_same_size", "is_set_to", "is_conj", "is_neg", "is_inference", "is_signed",
    "dense_dim", "sparse_dim", "is_distributed", "is_non_overlapping_and_dense", "is_pinned",
    "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "storage_offset", "numel",
    "stride", "fill", "isreal", "dim_order", "type", "new_tensor",
    "t_", "transpose_", "swapaxes_", "swapdims_", "squeeze_", "unsqueeze_", "detach_",
    "requires_grad_", "resize_", "resize_as_", "as_strided_",
    "expand_as:other", "reshape_as:other", "view_as:other", "type_as:other", "to:other",
    "resize_as:the_template", "resize_as_:the_template",
    "bernoulli.p:self", "bernoulli.Tensor:self", "bernoulli.Tensor_out:self",
    "bernoulli.float_out:self"}
# what reads or writes part of an operand only (the strictly lower triangle of
# householder vectors; ``t[0] = 1``): a storage short of the extent may hold all it
# touches (a storage of 0 bytes never does)
READS_PART = {"linalg_householder_product:input", "orgqr:self", "ormqr:self", "__setitem__:self"}


def _vals(n, kind):
    if kind == "int":
        return ptcore.zeros(n, dtype=ptcore.int64)
    if kind == "bool":
        return ptcore.ones(n, dtype=ptcore.bool)
    x = (ptcore.arange(n, dtype=ptcore.float64) % 5) * 0.1 + 0.5      # in (0, 1)
    if kind == "complex":
        return (x + 0.5j * x).to(ptcore.complex64)
    if kind == "int64data":
        return ptcore.arange(n, dtype=ptcore.int64) % 3 + 1
    if kind == "booldata":
        return ptcore.arange(n) % 2 == 0
    if kind == "double":
        return x
    if kind in _ROTATED:            # another dtype (the ``dtypes`` pass)
        return (x * 4).to(getattr(ptcore, kind)) if kind.startswith(("int", "uint")) \
            else x.to(getattr(ptcore, kind))
    return x.float()


def _tensor(shape, kind):
    t = _vals(math.prod(shape), kind).reshape(shape)
    if (t.dtype.is_floating_point or t.dtype.is_complex) and len(shape) >= 2 \
            and shape[-1] == shape[-2]:
        # diagonally dominant square matrices: every decomposition and solve succeeds
        eye = ptcore.eye(shape[-1], dtype=t.dtype)
        t = (t * 0.1 + eye * shape[-1]).contiguous()
    return t


# profiles: the data tensors' shape and dtype, the index tensors' shape ("same" or a
# vector along dim 0); ``param``: the parameters of a norm or conv (bias, running
# stats) are vectors, along dim 1 (``norm``) or dim 0
PROFILES = [
    dict(shape=(3, 3), kind="float", index="same"),
    dict(shape=(3, 3), kind="float", index="vec"),
    dict(shape=(4,), kind="float", index="same"),
    dict(shape=(2, 3, 3), kind="float", index="same"),
    dict(shape=(1, 2, 4, 4), kind="float", index="same", param=True),
    dict(shape=(1, 2, 4), kind="float", index="same", param=True),
    dict(shape=(2, 3), kind="float", index="vec", param=True, norm=True),
    dict(shape=(3, 3), kind="complex", index="same"),
    dict(shape=(3, 3), kind="double", index="same"),
    dict(shape=(3, 3), kind="int64data", index="same"),
    dict(shape=(3, 3), kind="booldata", index="same"),
    dict(shape=(3, 2), kind="float", index="same"),
    dict(shape=(1, 1, 2, 4, 4), kind="float", index="same", param=True),
    dict(shape=(1,), kind="float", index="same"),
]
# tensor parameters whose values are integers (indices, counts) or truth values
_INDEX_NAMES = {"index", "indices", "offsets", "sorter", "input_lengths", "target_lengths",
                "lengths", "tensor_indices_or_sections"}
_BOOL_NAMES = {"mask", "condition"}
# tensor parameters that are one value (a 0-d tensor), a vector along the last dim,
# a batch of matrices, a vector along the first dim (a norm's or conv's parameters)
_SCALAR_NAMES = {"value", "start", "end", "q", "p", "weight_scalar"}
_VECTOR_NAMES = {"vec", "vec1", "vec2", "tau", "boundaries"}
_BATCH_NAMES = {"batch1", "batch2"}
_PARAM_NAMES = {"bias", "running_mean", "running_var", "mean", "invstd", "save_mean",
                "save_invstd", "rstd"}
# argument values that one op (or overload) needs: (op[.overload], argument name) ->
# value, or a function of the profile's shape that makes it
_OP_VALUES = {
    ("index_reduce", "reduce"): "prod", ("index_reduce_", "reduce"): "prod",
    ("scatter", "reduce"): "add", ("scatter_", "reduce"): "add",
    ("einsum", "equation"): "ij,jk->ik", ("linalg_cond.p_str", "p"): "fro",
    ("linalg_norm.ord_str", "ord"): "fro", ("nuclear_norm", "dim"): [0, 1],
    ("tensordot", "dims_self"): [1], ("tensordot", "dims_other"): [0], ("tile", "dims"): [2],
    ("upsample_bilinear2d", "output_size"): [2, 2], ("upsample_nearest2d", "output_size"): [2, 2],
    ("narrow.Tensor", "start"): lambda shape: ptcore.tensor(0),
    ("linalg_cond.p_str_out", "p"): "fro", ("linalg_norm.ord_str_out", "ord"): "fro",
    ("orgqr", "input2"): lambda shape: _tensor(shape[-1:], "float"),
    ("ormqr", "input2"): lambda shape: _tensor(shape[-1:], "float"),
    ("multilabel_margin_loss", "target"): lambda shape: _tensor(shape, "int"),
    ("fractional_max_pool2d", "random_samples"):
        lambda shape: _tensor((shape[0], shape[1], 2), "float") * 0.5,
    ("fractional_max_pool3d", "random_samples"):
        lambda shape: _tensor((shape[0], shape[1], 3), "float") * 0.5,
    ("addmv", "self"): lambda shape: _tensor(shape[:1], "float"),
    ("addmv_", "self"): lambda shape: _tensor(shape[:1], "float"),
    ("diagonal_scatter", "src"): lambda shape: _tensor(shape[-1:], "float"),
    ("select_scatter", "src"): lambda shape: _tensor(shape[1:], "float"),
    ("scaled_dot_product_attention", "value"): lambda shape: _tensor(shape, "float"),
    ("_scaled_dot_product_flash_attention_for_cpu", "value"):
        lambda shape: _tensor(shape, "float"),
}
# ops that are no-ops on a real tensor: sampled on a complex one first
_COMPLEX_FIRST = {"conj_physical", "conj_physical_", "resolve_conj", "imag", "view_as_real",
                  "view_as_real_copy"}
_INT_VALUES = {"dim": 0, "dim0": 0, "dim1": 1, "k": 1, "n": 2, "diagonal": 0, "groups": 1,
               "chunks": 1, "sections": 1, "start": -1, "end": 1, "length": 1, "index": -1,
               "num_classes": 3, "reduction": 1, "offset": 0, "source": 0, "destination": 0,
               "bins": 3, "num_samples": 1, "high": 2, "low": 0, "size": 2,
               "upscale_factor": 1, "downscale_factor": 1, "step": 1, "repeats": 1,
               "split_size": 1, "p": 2, "blank": 0}
_STR_VALUES = {"reduce": "sum", "reduction": "mean", "approximate": "none", "side": "left",
               "UPLO": "L", "mode": "reduced", "interpolation": "linear", "indexing": "ij",
               "padding_mode": "zeros", "equation": "ij->ij"}
_LIMITS = {"min": 0.6, "max": 2.0}
_OUT_DTYPES = ("float32", "float64", "complex64", "int64", "bool", "int32")


def _arg(key, a, prof, fill_optional, outs):
    """The sample value of schema argument ``a`` of ``op`` under ``prof`` (``_MISSING``:
    its default); ``outs``: name -> (shape, dtype) of the out= tensors, or a dtype name
    (each an empty tensor of it, resized by the op)."""
    t = a.type
    base, name = t.base, a.name
    op = key.split(".")[0]
    shape = prof["shape"]
    nd = len(shape)
    spatial = max(nd - 2, 1)
    v = _OP_VALUES.get((key, name), _OP_VALUES.get((op, name), _MISSING))
    if v is not _MISSING:
        return v(shape) if callable(v) else v
    if a.is_out:
        if isinstance(outs, str):
            return ptcore.empty(0, dtype=getattr(ptcore, outs))
        oshape, odt = outs[name]
        return ptcore.zeros(oshape, dtype=odt)
    if base == "Scalar" and name in _LIMITS:
        return _LIMITS[name]
    if a.has_default_value() and not (fill_optional and base == "Tensor"):
        return _MISSING
    if t.optional and base != "Tensor":
        return None
    if base == "Tensor":
        if t.optional and not fill_optional:
            return None
        if name in ("pivots", "LU_pivots"):        # LAPACK's 1-based pivots: no row swap
            piv = ptcore.arange(1, shape[-1] + 1, dtype=ptcore.int32)
            return piv.expand(tuple(shape[:-2]) + (shape[-1],)).contiguous()
        if name in _INDEX_NAMES or (name == "target" and prof.get("norm")):
            ishape = (shape[0],) if prof["index"] == "vec" else shape
            return _tensor(ishape if name != "offsets" else (1,), "int")
        if name == "repeats":
            return ptcore.ones(shape[0], dtype=ptcore.int64)
        if name in _BOOL_NAMES:
            return _tensor(shape, "bool")
        if name in _SCALAR_NAMES:
            return ptcore.tensor(0.5)
        if name in _VECTOR_NAMES:
            return _tensor((shape[-1],), "float")
        if name in _BATCH_NAMES and nd == 2:
            return _tensor((2,) + tuple(shape), "float")
        if prof.get("param") and (name in _PARAM_NAMES or (prof.get("norm") and name == "weight")):
            return _tensor((shape[1] if prof.get("norm") else shape[0],), "float")
        return _tensor(shape, prof["kind"])
    if base == "List":
        elem = t.elem.base
        if elem == "Tensor":
            if t.elem.optional or name == "indices":   # index/index_put: one index tensor
                return [_tensor((shape[0],), "int")]
            return [_tensor(shape, prof["kind"]), _tensor(shape, prof["kind"])]
        if elem in ("int", "SymInt"):
            k = t.size or spatial
            if name in ("dim", "dims"):
                return [0]
            if name in ("size", "shape", "sizes"):
                return list(shape)
            if name in ("kernel_size", "dilation", "stride", "output_size"):
                return [1] * k
            if name in ("padding", "output_padding"):
                return [0] * k
            if name == "normalized_shape":
                return [shape[-1]]
            if name == "pad":
                return [0, 0]
            if name == "repeats":
                return [1] * nd
            return [1] * (t.size or 1)
        if elem == "float":
            return [1.0] * (t.size or 1)
        if elem == "bool":
            return [True] * (t.size or 1)
        return [1]
    if base in ("int", "SymInt"):
        return _INT_VALUES.get(name, 1)
    if base == "bool":
        return name in ("train", "training")
    if base == "float":
        return {"eps": 1e-5, "momentum": 0.1}.get(name, 0.5)
    if base == "Scalar":
        return {"alpha": 1, "beta": 1, "end": 3, "start": 0, "step": 1, "p": 0.5}.get(name, 2)
    if base == "complex":
        return 1j
    if base == "str":
        return _STR_VALUES.get(name, "sum")
    if base == "ScalarType":
        return ptcore.float32
    if base == "Device":
        return ptcore.device("cpu")
    return None


_MISSING = object()
# a probe running longer than this is stuck (each takes milliseconds; the margin is
# for a CI machine whose two cores other jobs share)
PROBE_SECONDS = 60
# the device of the operands (``main``'s fourth argument: "cuda" on the emulated
# device, with PTCORE_CUDA_EMULATE set)
DEVICE = "cpu"
# the dtypes pass (``main``'s fifth argument "dtypes"): each case's data tensors
# first in one of these dtypes, by a hash of its key, so the passes together run
# every kernel family on several dtypes at the cost of one
ROTATE = False
_ROTATED = ("float64", "float16", "bfloat16", "complex64", "int64", "int32", "uint8",
            "int16", "complex128")
# the storage sizes a shrunk operand gets, from the bytes its extent needs
VARIANTS = {"short": lambda need: need - 1, "half": lambda need: need // 2,
            "zero": lambda need: 0}


def _on_device(v):
    if isinstance(v, ptcore.Tensor):
        return v.to(DEVICE)
    if isinstance(v, list):
        return [_on_device(x) for x in v]
    if isinstance(v, ptcore.device):
        return ptcore.device(DEVICE)
    return v


def build(key, schema, prof, fill_optional, outs):
    """(args, kwargs, operands): operands lists (label, tensor) of the tensors to shrink."""
    args, kwargs, operands = [], {}, []
    skipped = False
    for a in schema.arguments:
        v = _arg(key, a, prof, fill_optional, outs)
        if v is _MISSING:
            skipped = True          # (the positional arguments after it go by name)
            continue
        if DEVICE != "cpu":
            v = _on_device(v)
        if a.kwarg_only or skipped:
            kwargs[a.name] = v
        else:
            args.append(v)
        if isinstance(v, ptcore.Tensor):
            operands.append((a.name, v))
        elif isinstance(v, list) and v and isinstance(v[0], ptcore.Tensor):
            operands.append((a.name + "[0]", v[0]))
    return args, kwargs, operands


def _extent_fits(t):
    return t.numel() == 0 or _extent_bytes(t) <= t.untyped_storage().nbytes()


def _tensors(r):
    if isinstance(r, ptcore.Tensor):
        yield r
    elif isinstance(r, (tuple, list)):
        for x in r:
            yield from _tensors(x)


_STORAGE_MESSAGES = ("setStorage", "not allocated yet", "out of bounds for storage",
                     "unallocated storage")


def _reads_no_element(key, label):
    op = key.split(".")[0]
    if {op, f"{op}:{label}", f"{key}:{label}"} & READS_NO_ELEMENT:
        return True
    d = declaration_of("ptcore", op)
    return d is not None and "metadata" in d.tags


# the exceptions that C code printed and dropped (a ``noexcept`` Cython function that
# raised: sys.unraisablehook), since the last probe
_UNRAISABLE = []


def _unraisable(u):
    _UNRAISABLE.append(f"{type(u.exc_value).__name__} in {u.object!r}: {u.exc_value}")


def outcome(fn, schema, args, kwargs, key, label, variant, victim):
    """What calling ``fn`` did with the shrunk operand ``victim``."""
    del _UNRAISABLE[:]
    res, detail = _outcome(fn, schema, args, kwargs, key, label, variant, victim)
    if _UNRAISABLE:
        return "UNRAISABLE", _UNRAISABLE[0][:300].replace("\n", " ")
    return res, detail


def _outcome(fn, schema, args, kwargs, key, label, variant, victim):
    try:
        r = fn(*args, **kwargs)
    except RuntimeError as e:
        msg = str(e)
        if any(m in msg for m in _STORAGE_MESSAGES):
            return "raised", ""
        return "OTHER", f"RuntimeError: {msg[:200]}"
    except Exception as e:      # noqa: BLE001 - reported to the parent
        return "OTHER", f"{type(e).__name__}: {str(e)[:200]}"
    if _extent_fits(victim):
        return "fits", ""
    # a result that aliases an operand the op only reads is a view: nothing was computed
    # (one that aliases an out= tensor or an in-place self is what the op wrote)
    written = {a.name for a in schema.arguments if a.is_write}
    read = [v for a, v in zip(_positional(schema), args) if a not in written]
    read += [v for a, v in kwargs.items() if a not in written]
    stores = [t.untyped_storage() for t in _tensors(read)]
    results = list(_tensors(r))
    if results and all(any(x.untyped_storage() is s for s in stores) for x in results):
        return "view", ""
    if _reads_no_element(key, label):
        return "meta", ""
    if variant != "zero" and f"{key.split('.')[0]}:{label}" in READS_PART:
        return "part", ""
    return "SILENT", ""


def _positional(schema):
    return [a.name for a in schema.arguments if not a.kwarg_only]


# the forms a public op without an aten schema is tried with (its method or function)
_PUBLIC_FORMS = ["(Tensor self)", "(Tensor self, Tensor other)", "(Tensor self, Scalar other)",
                 "(Tensor self, int dim)", "(Tensor self, int dim0, int dim1)",
                 "(Tensor self, Tensor other, Tensor target)"]
# public forms never called: hooks, process-wide or file state, other devices, Python
# callbacks (``map_``/``apply_`` run Python on each element)
_PUBLIC_SKIP = {"register_hook", "register_post_accumulate_grad_hook", "share_memory_",
                "record_stream", "module_load", "ipu", "mtia", "xpu", "to_device", "apply_",
                "map_", "map2_", "reinforce", "as_subclass", "storage", "untyped_storage",
                "storage_type", "from_dlpack", "from_numpy", "asarray", "is_shared",
                "handle_torch_function", "has_torch_function", "has_torch_function_unary",
                "has_torch_function_variadic", "assert_int_or_pair"}


class Case:
    """One op form to probe: ``call(*args, **kwargs)`` with arguments built from one of
    ``schemas`` (its first that has a sample)."""

    def __init__(self, key, schemas, call):
        self.key, self.schemas, self.call = key, schemas, call


def _method(name):
    def call(self, *args, **kwargs):
        return getattr(self, name)(*args, **kwargs)
    return call


def cases():
    """Every case, in a fixed order: each aten overload; the method form ``Tensor.X``
    of each overload whose first argument is ``self`` (the tensor core's own methods
    are reached there); each declared op that no aten op names, by its method or
    function, and each nn.functional function no aten op names, with the forms of
    :data:`_PUBLIC_FORMS`."""
    from ptcore._dispatch.table import OPS
    out, named = [], set()
    for op, lines in sorted(overload_lines().items()):
        named.add(op.rstrip("_"))
        if op in SKIP_OPS:
            continue
        packet = getattr(ptcore.ops.aten, op)
        for name in packet.overloads():
            ov = getattr(packet, name)
            out.append(Case(f"{op}.{name}", [ov._schema], ov))
            first = ov._schema.arguments[0] if ov._schema.arguments else None
            if (first is not None and first.name == "self" and first.type.base == "Tensor"
                    and not any(a.is_out for a in ov._schema.arguments)
                    and callable(getattr(ptcore.Tensor, op, None))):
                out.append(Case(f"{op}.{name}@method", [ov._schema], _method(op)))
    forms = [_op_schema.parse("f" + f + " -> Tensor") for f in _PUBLIC_FORMS]
    for (ns, name), _ in sorted(OPS.items()):
        if name.rstrip("_") in named or name in _PUBLIC_SKIP or ns not in ("Tensor", "ptcore"):
            continue
        fn = _method(name) if ns == "Tensor" else getattr(ptcore, name, None)
        if fn is not None:
            out.append(Case(f"{name}.public@{ns}", forms, fn))
    F = ptcore.nn.functional
    for name in sorted(dir(F)):
        fn = getattr(F, name)
        if name.startswith("_") or name in named or name.rstrip("_") in named \
                or name in _PUBLIC_SKIP or not callable(fn) or isinstance(fn, type):
            continue
        out.append(Case(f"{name}.public@nn.functional", forms, fn))
    return out


def _call(key, case, schema, prof, fill, outs):
    args, kwargs, operands = build(key, schema, prof, fill, outs)
    if not operands or any(t.numel() == 0 for name, t in operands
                           if not (isinstance(outs, str) and name in kwargs)):
        return None
    r = list(_tensors(case.call(*args, **kwargs)))
    if r and all(x.numel() == 0 for x in r):
        return None                 # an empty result reads nothing: no sample
    return args, kwargs


def find_sample(case):
    """The first (schema, profile, fill_optional, outs) whose call succeeds on intact
    tensors with a nonempty result.  An out= tensor of the sample has the shape and
    dtype the op gives it (found by a call with empty ones of each dtype, which it
    resizes), so the op writes it as it is."""
    key = case.key.split("@")[0]
    for schema in case.schemas:
        if not any(a.type.base == "Tensor" or
                   (a.type.elem is not None and a.type.elem.base == "Tensor")
                   for a in schema.arguments):
            continue
        out_names = [a.name for a in schema.arguments if a.is_out]
        profiles = PROFILES
        if key.split(".")[0] in _COMPLEX_FIRST:
            profiles = sorted(PROFILES, key=lambda p: p["kind"] != "complex")
        elif ROTATE:
            # the dtypes pass: the float profiles in the case's own dtype first
            kind = _ROTATED[zlib.crc32(case.key.encode()) % len(_ROTATED)]
            profiles = [dict(p, kind=kind) for p in PROFILES if p["kind"] == "float"] + profiles
        for fill in (True, False):
            for prof in profiles:
                for odt in (_OUT_DTYPES if out_names else (None,)):
                    try:
                        got = _call(key, case, schema, prof, fill, odt)
                        if got is None:
                            continue
                        if not out_names:
                            return schema, prof, fill, None
                        kwargs = got[1]
                        outs = {n: (tuple(kwargs[n].shape), kwargs[n].dtype) for n in out_names}
                        if _call(key, case, schema, prof, fill, outs) is not None:
                            return schema, prof, fill, outs
                    except Exception:       # noqa: BLE001 - the next profile
                        continue
    return None


def _extent_bytes(t):
    need = t.storage_offset() + sum((s - 1) * st for s, st in zip(t.shape, t.stride())) + 1
    return need * t.element_size()


def _reversed_layout(t):
    """A tensor equal to ``t`` whose memory order is reversed (strides increasing)."""
    perm = list(range(t.dim() - 1, -1, -1))
    return t.permute(perm).contiguous().permute(perm)


def _offset(t, k=3):
    """A tensor equal to ``t`` (contiguous) that starts ``k`` elements into its storage."""
    base = ptcore.empty(t.numel() + k, dtype=t.dtype, device=t.device)
    v = base[k:].view(tuple(t.shape))
    v.copy_(t)
    return v


def _replace(v, old, new):
    """``v`` (args, kwargs, a list in them) with the tensor ``old`` replaced by ``new``."""
    if v is old:
        return new
    if isinstance(v, list):
        return [_replace(x, old, new) for x in v]
    if isinstance(v, dict):
        return {k: _replace(x, old, new) for k, x in v.items()}
    return v


def probe_case(idx, case, skip=0):
    """Sample and shrink probes of one case, written to stdout."""
    w = sys.stdout.write
    w(f"B {idx} {case.key} sample\n")
    sys.stdout.flush()
    found = find_sample(case)
    if found is None:
        w(f"R {idx} {case.key} sample none\n")
        return
    schema, prof, fill, outs = found
    key = case.key.split("@")[0]
    w(f"R {idx} {case.key} sample {prof['kind']}{list(prof['shape'])}{'+opt' if fill else ''}\n")
    operands = build(key, schema, prof, fill, outs)[2]
    n_operands = len(operands)
    kinds = list(VARIANTS) + ["strided", "offset"]
    for k in range(n_operands):
        for j, variant in enumerate(kinds):
            probe = len(kinds) * k + j
            if probe < skip or (variant == "strided" and operands[k][1].dim() < 2):
                continue
            ptcore.manual_seed(0)
            args, kwargs, ops = build(key, schema, prof, fill, outs)
            label, victim = ops[k]
            if variant in ("strided", "offset"):
                # the same values in reversed memory order (the strided kernels' paths), or
                # at an offset into a larger storage (the checks count the offset)
                moved = _reversed_layout(victim) if variant == "strided" else _offset(victim)
                args, kwargs = _replace(args, victim, moved), _replace(kwargs, victim, moved)
                victim = moved
                try:
                    case.call(*args, **kwargs)
                except Exception:       # noqa: BLE001 - the op refuses the layout itself
                    continue
            nbytes = VARIANTS.get(variant, VARIANTS["short"])(_extent_bytes(victim))
            victim.untyped_storage().resize_(nbytes)
            desc = f"{idx} {case.key} {probe} {label} {variant}"
            w(f"B {desc}\n")
            sys.stdout.flush()
            # a probe stuck in C code (a loop over a garbage size) ends the process
            faulthandler.dump_traceback_later(PROBE_SECONDS, exit=True)
            res, detail = outcome(case.call, schema, args, kwargs, key, label.split("[")[0],
                                  variant, victim)
            faulthandler.cancel_dump_traceback_later()
            w(f"R {desc} {res} {detail}".rstrip() + "\n")
    # aliasing: a read operand that is a view of the written one (out= or in-place
    # self), made before the storage shrank (the overlap checks take both extents)
    written = {a.name for a in schema.arguments if a.is_write}
    pairs = [(i, j) for i, (wl, wt) in enumerate(operands) if wl in written
             for j, (rl, rt) in enumerate(operands) if rl not in written and "[" not in rl
             and tuple(rt.shape) == tuple(wt.shape) and rt.dtype == wt.dtype]
    for n, (i, j) in enumerate(pairs):
        probe = len(kinds) * n_operands + n
        if probe < skip:
            continue
        ptcore.manual_seed(0)
        args, kwargs, operands = build(key, schema, prof, fill, outs)
        (wl, wt), (rl, rt) = operands[i], operands[j]
        alias = wt.view(tuple(wt.shape))
        args = [alias if v is rt else v for v in args]
        kwargs = {k: alias if v is rt else v for k, v in kwargs.items()}
        wt.untyped_storage().resize_(VARIANTS["short"](_extent_bytes(wt)))
        desc = f"{idx} {case.key} {probe} {rl}={wl} alias"
        w(f"B {desc}\n")
        sys.stdout.flush()
        faulthandler.dump_traceback_later(PROBE_SECONDS, exit=True)
        res, detail = outcome(case.call, schema, args, kwargs, key, wl, "short", wt)
        faulthandler.cancel_dump_traceback_later()
        w(f"R {desc} {res} {detail}".rstrip() + "\n")
    sys.stdout.flush()


def main(argv):
    warnings.simplefilter("ignore")
    sys.unraisablehook = _unraisable
    all_cases = cases()
    first = int(argv[0]) if argv else 0
    last = int(argv[1]) if len(argv) > 1 else len(all_cases)
    skip = int(argv[2]) if len(argv) > 2 else 0
    global DEVICE, ROTATE
    DEVICE = argv[3] if len(argv) > 3 else "cpu"
    ROTATE = len(argv) > 4 and argv[4] == "dtypes"
    for idx in range(first, min(last, len(all_cases))):
        probe_case(idx, all_cases[idx], skip=skip if idx == first else 0)
    sys.stdout.write("done\n")


# ---------------------------------------------------------------------------
# the parent's side: the probes in subprocesses
# ---------------------------------------------------------------------------

# a batch stops after this many dead probes (the first ones name the hole)
MAX_DEAD = 6


def _env():
    env = dict(os.environ)
    parent = os.path.dirname(os.path.dirname(os.path.abspath(ptcore.__file__)))
    env["PYTHONPATH"] = parent + os.pathsep + env.get("PYTHONPATH", "")
    env["OMP_NUM_THREADS"] = "1"
    return env


def run_range(first, last, device="cpu", mode="", timeout=600):
    """The result lines of cases [first, last) probed in a subprocess, and the
    probes that killed or hung its interpreter (each then skipped, the rest of
    the range run on in a new one)."""
    lines, dead = [], []
    skip = 0
    while first < last:
        cmd = [sys.executable, os.path.abspath(__file__), str(first), str(last), str(skip), device,
               mode]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=timeout)
            out, rc, err = r.stdout, r.returncode, r.stderr
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            rc, err = "timeout", ""
        got = out.splitlines()
        lines += [g for g in got if g.startswith("R ")]
        if rc == 0 and got and got[-1] == "done":
            break
        begun = [g for g in got if g.startswith("B ")]
        if not begun:
            dead.append(f"cases [{first}, {last}): no probe started (rc {rc}): {err[-1500:]}")
            break
        last_begun = begun[-1].split()
        dead.append(f"{' '.join(last_begun[1:])}: rc {rc}: {err[-600:]}")
        if len(dead) >= MAX_DEAD:
            dead.append(f"(stopped after {MAX_DEAD} in cases [{first}, {last}))")
            break
        first = int(last_begun[1])
        if last_begun[-1] == "sample":
            first, skip = first + 1, 0
        else:
            skip = int(last_begun[3]) + 1
    return lines, dead


def sweep(device="cpu", batches=2, mode=""):
    """Every case probed in ``batches`` subprocesses side by side (``mode``
    "dtypes": the dtypes pass): (number of cases sampled, probe result lines split
    in fields, failures: the probes that died and those whose outcome is a hole)."""
    n = len(cases())
    bounds = [n * i // batches for i in range(batches + 1)]
    with ThreadPoolExecutor(batches) as pool:
        parts = list(pool.map(lambda i: run_range(bounds[i], bounds[i + 1], device, mode),
                              range(batches)))
    lines = [ln for got, _ in parts for ln in got]
    dead = [d for _, ds in parts for d in ds]
    probes = [ln.split(None, 7) for ln in lines if " sample " not in ln]
    sampled = sum(1 for ln in lines if " sample " in ln and not ln.endswith(" none"))
    bad = [" ".join(p[1:]) for p in probes if p[6] in ("SILENT", "OTHER", "UNRAISABLE")]
    return sampled, probes, dead, bad


# ---------------------------------------------------------------------------
# compiled code (ptcore.compile): a few functions over each path of the
# compiler, each input shrunk in turn after the function was captured
# ---------------------------------------------------------------------------

COMPILE_PROBE = textwrap.dedent('''
    import sys
    import ptcore
    import ptcore.nn.functional as F

    DEVICE = sys.argv[1]
    UNRAISABLE = []
    sys.unraisablehook = UNRAISABLE.append

    def chain(x, y):
        return (x * 2 + y).sin().exp() - y
    def chain_sum(x, y):
        return ((x - y) ** 2).mean(1)
    def bcast(x, b):
        return (x + b).relu() * b
    def relu_addmm(x, w, b):
        return F.relu(F.linear(x, w, b))
    def residual(x, w, r):
        return x @ w + r
    def softmax(x, y):
        return (x.softmax(-1) * y).sum()
    def mutate(x, y):
        x.mul_(2).add_(y)
        return x.cos()
    def index(x, i):
        return x[i].tanh() + 1
    def where(x, y):
        return ptcore.where(x > 0.5, x, y).abs()
    def attention(q, k):
        return F.scaled_dot_product_attention(q, k, k)
    def transposed(x, y):
        return (x.t() * y).sigmoid()
    def cat(x, y):
        return ptcore.cat([x.sin(), y.cos()]).sum(0)

    FUNCS = [
        (chain, [(3, 4), (3, 4)]), (chain_sum, [(3, 4), (3, 4)]), (bcast, [(3, 4), (4,)]),
        (relu_addmm, [(3, 4), (5, 4), (5,)]), (residual, [(3, 4), (4, 4), (3, 4)]),
        (softmax, [(3, 4), (3, 4)]), (mutate, [(3, 4), (3, 4)]), (index, [(3, 4), "i"]),
        (where, [(3, 4), (3, 4)]), (attention, [(1, 2, 3, 4), (1, 2, 3, 4)]),
        (transposed, [(4, 3), (3, 4)]), (cat, [(3, 4), (3, 4)]),
    ]

    def inputs(shapes, grad=False):
        out = []
        for s in shapes:
            if s == "i":
                out.append(ptcore.tensor([2, 0, 1], device=DEVICE))
                continue
            n = 1
            for d in s:
                n *= d
            t = (ptcore.arange(n, dtype=ptcore.float32) % 7 * 0.1 + 0.2).reshape(s).to(DEVICE)
            out.append(t.requires_grad_(True) if grad else t)
        return out

    for fn, shapes in FUNCS:
        for backend in ("inductor", "eager") + (("cudagraphs",) if DEVICE != "cpu" else ()):
            for grad in (False, True):
                if grad and fn is mutate:
                    continue
                c = ptcore.compile(fn, backend=backend)
                for _ in range(3):              # captured, then the compiled path
                    r = c(*inputs(shapes, grad))
                    if grad:
                        r.sum().backward()
                for k in range(len(shapes)):
                    for variant in ("short", "half", "zero"):
                        args = inputs(shapes, grad)
                        v = args[k]
                        need = v.numel() * v.element_size()
                        nbytes = {"short": need - 1, "half": need // 2, "zero": 0}[variant]
                        v.untyped_storage().resize_(nbytes)
                        key = f"{fn.__name__} {backend} grad={grad} arg{k} {variant}"
                        print("B", key, flush=True)
                        del UNRAISABLE[:]
                        try:
                            r = c(*args)
                            if grad:
                                r.sum().backward()
                            print("R", key, "no error", flush=True)
                        except RuntimeError as e:
                            ok = ("setStorage" in str(e) or "not allocated yet" in str(e)) \
                                and not UNRAISABLE
                            print("R", key, "raised" if ok else "other: " + str(e)[:200],
                                  flush=True)
                        except Exception as e:      # noqa: BLE001 - reported
                            print("R", key, f"other: {type(e).__name__}: {str(e)[:200]}",
                                  flush=True)
    print("done")
''')


def compile_sweep(device="cpu"):
    """The compile probe's result lines (``key outcome``) and, when its interpreter
    died, the probe it died in."""
    p = subprocess.run([sys.executable, "-c", COMPILE_PROBE, device], capture_output=True,
                       text=True, timeout=600, env=_env())
    lines = p.stdout.splitlines()
    begun = [ln[2:] for ln in lines if ln.startswith("B ")]
    dead = None
    if p.returncode != 0 or not lines or lines[-1] != "done":
        dead = f"died (rc {p.returncode}) in: {begun[-1] if begun else None}\n{p.stderr[-2000:]}"
    return [ln[2:] for ln in lines if ln.startswith("R ")], dead


if __name__ == "__main__":
    main(sys.argv[1:])
