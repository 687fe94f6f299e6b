"""The CUDA op modules register each kernel and loop where it is defined
(``ptcore.cuda.ops.registration``), not in module-level tables of op names.
These tests keep frozen copies of the tables the registrations replaced and
check that every op and loop they named still gets its CUDA implementation
from the registration, and that the registration is the only source."""
import ast
import pathlib

import pytest

import ptcore
from ptcore._dispatch import device as D
from ptcore._dispatch.table import lookup
from ptcore.cuda.kernels import library as K
from ptcore.cuda.ops import complex as cuda_complex
from ptcore.cuda.ops import ctc as cuda_ctc
from ptcore.cuda.ops import fft as cuda_fft
from ptcore.cuda.ops import gemm_search_loops as cuda_gemm
from ptcore.cuda.ops import index as cuda_index
from ptcore.cuda.ops import launch as cuda_launch
from ptcore.cuda.ops import nn as cuda_nn
from ptcore.cuda.ops import reduce as cuda_reduce
from ptcore.cuda.ops.registration import Registrations, real_only_ops

# index.py's _REGISTRY: the front-end loops with a CUDA form
OLD_INDEX_LOOPS = (
    "ew_unary", "ew_binary", "ew_ternary", "index_select", "gather", "scatter", "index_put_dim",
    "scale", "scatter_mean_finish", "mod_index", "index_bounds", "masked_fill_", "masked_select",
    "masked_scatter_", "tri_", "nonzero", "index", "index_put_", "cat", "stack", "flip", "sort",
    "topk", "kthvalue", "unique", "mode", "median", "nanmedian")

# index.py's _OPERATORS: Tensor operator methods running their front-ends on CUDA
OLD_INDEX_OPERATORS = (
    "__and__", "__or__", "__xor__", "__invert__", "__rand__", "__ror__", "__rxor__", "__lshift__",
    "__rshift__", "__rlshift__", "__rrshift__", "__mod__", "__rmod__", "__floordiv__",
    "__rfloordiv__", "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__")

# nn.py's _NN_OWN: nn.functional ops whose CUDA kernel is this module's
OLD_NN_OWN = (
    "nll_loss", "cross_entropy", "embedding", "gelu", "silu", "elu", "selu", "celu", "softplus",
    "leaky_relu", "hardtanh", "relu6", "hardsigmoid", "hardswish", "mish", "elu_", "celu_",
    "selu_", "leaky_relu_", "logsigmoid")      # logsigmoid: since 2026-12-04

# complex.py's _DIRECT: ops whose CUDA kernel launches real-dtype kernels only
OLD_COMPLEX_DIRECT = (
    "neg", "exp", "log", "sqrt", "abs", "sigmoid", "tanh", "relu", "add", "sub", "mul", "div",
    "maximum", "minimum", "pow", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
    "logical_xor", "add_", "sub_", "mul_", "div_", "rsqrt", "log1p", "expm1", "erf", "reciprocal",
    "sin", "cos", "square", "all", "any", "logical_not", "sign", "sgn", "addcmul", "addcdiv",
    "addcmul_", "addcdiv_", "lerp", "lerp_", "clamp", "clip", "clamp_", "vector_norm", "xlogy",
    "__eq__", "__pow__", "__rpow__", "__rsub__", "__rtruediv__", "__neg__", "__abs__")

# the ops nn.py registered as gaps (a kernel only where none existed yet): every
# one of them already had its front-end as its CUDA kernel when nn.py installed,
# so those registrations (and their real_only marks) were removed
OLD_NN_GAPS = (
    "clip", "clamp", "clamp_min", "clamp_max", "clamp_", "clamp_min_", "clamp_max_", "lerp",
    "lerp_", "addcmul", "addcdiv", "addcmul_", "addcdiv_", "rsqrt", "log1p", "expm1", "erf",
    "reciprocal", "sin", "cos", "square", "all", "any", "bitwise_and", "bitwise_or",
    "bitwise_xor", "logical_not", "__and__", "__or__", "__xor__", "xlogy", "__eq__", "sgn",
    "sign", "vector_norm", "relu_")

# reduce.py's _REDUCTIONS and _LINES (and complex.py's copies of them)
OLD_REDUCTIONS = ("sum", "nansum", "mean", "nanmean", "prod", "amax", "amin", "max.dim", "min.dim",
                  "aminmax", "all", "any", "var", "logsumexp", "count_nonzero", "vector_norm")
OLD_LINES = ("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp")

# launch.py's _BOOL_OUT
OLD_BOOL_OUT = ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor")

# fft.py's TRANSFORMS: the fft ops whose front-end is their CUDA kernel
OLD_FFT_TRANSFORMS = ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2",
                      "irfft2", "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn",
                      "ihfftn")

# gemm_search_loops.py's _LOOPS
OLD_GEMM_LOOPS = ("product", "product_out_dtype", "dot", "searchsorted", "sorting_minmax", "histc",
                  "histogram", "bincount", "isin", "unique_dim", "repeat_interleave_index",
                  "quantile", "nanquantile", "ctc_loss")   # ctc_loss: now ctc.py's

# launch.py's _FLOAT_ONLY_UNARY and nn.py's _ACT_FORWARD
OLD_FLOAT_ONLY_UNARY = ("exp", "log", "sqrt", "sigmoid", "tanh")
OLD_ACT_FORWARD = ("gelu", "gelu_tanh", "silu", "elu", "softplus", "leaky_relu", "hardtanh",
                   "hardsigmoid", "hardswish", "mish", "logsigmoid")


@pytest.fixture(scope="module", autouse=True)
def _installed():
    ptcore.zeros(1, device="cuda")          # the CUDA registration runs at first use


def test_index_loops_registered_where_defined():
    assert sorted(cuda_index.cuda.names("loop")) == sorted(OLD_INDEX_LOOPS)
    for name in OLD_INDEX_LOOPS:
        fn = D.loop_for(name, "cuda", None)
        assert fn is not None, name
        assert fn.__module__ == "ptcore.cuda.ops.index", name


def test_index_operators_run_their_front_ends():
    for name in OLD_INDEX_OPERATORS:
        d = lookup(name, "Tensor")
        if d is None:
            continue
        assert d.family == "pointwise", name
        assert d.kernels.get("cuda") is not None, name


def test_nn_functional_kernels_registered_where_defined():
    assert sorted(cuda_nn.cuda.names("kernel")) == sorted(OLD_NN_OWN + ("softmax", "log_softmax"))
    for name in OLD_NN_OWN:
        d = lookup(name, "nn.functional")
        assert d is not None, name
        k = d.kernels["cuda"]
        assert k is getattr(cuda_nn, name), name


def test_real_only_kernels_are_the_old_direct_list():
    # less nn.py's gaps, and launch.py's __neg__/__abs__ kernels (optional=True, never
    # installed: the operators are forms of neg and abs, whose kernels they run)
    assert set(real_only_ops()) == set(OLD_COMPLEX_DIRECT) - set(OLD_NN_GAPS) - {"__neg__",
                                                                                  "__abs__"}
    # and each of them with a kernel of its own is wrapped for complex operands
    wrapped = 0
    for name in real_only_ops():
        for ns in ("ptcore", "Tensor"):
            d = lookup(name, ns)
            if d is None or d.kernels.get("cuda") in (None, d.raw, d.body):
                continue
            assert d.kernels["cuda"].__code__ is cuda_complex._delegate(d, None).__code__, (ns, name)
            wrapped += 1
    assert wrapped > 30


def _installed_forms(k):
    """``k`` and the kernels it wraps (complex.py's wrappers keep theirs in ``orig``)."""
    forms = []
    while k is not None and k not in forms:
        forms.append(k)
        cells = dict(zip(k.__code__.co_freevars, k.__closure__ or ())) \
            if hasattr(k, "__code__") else {}
        k = cells["orig"].cell_contents if "orig" in cells else None
    return forms


_MODULES = (cuda_index, cuda_launch, cuda_nn, cuda_reduce, cuda_gemm, cuda_ctc)


@pytest.mark.parametrize("module", _MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[1])
def test_every_registration_is_installed(module):
    """Each loop and kernel a module registers is what runs on CUDA (itself or
    wrapped by complex.py): a registration that installs nothing -- for an op
    no form of which is declared, or replaced by a later one -- fails here."""
    regs = [v for v in vars(module).values() if isinstance(v, Registrations)]
    assert regs, module.__name__
    dead = []
    for reg in regs:
        for kind, op, fn, namespaces, *_flags in reg._entries:
            if kind == "loop":
                live = fn in _installed_forms(D._LOOPS.get((op, "cuda")))
            else:
                live = any(lookup(op, ns) is not None
                           and fn in _installed_forms(lookup(op, ns).kernels.get("cuda"))
                           for ns in namespaces)
            if not live:
                dead.append((kind, op))
    assert not dead, dead


def test_nn_gaps_keep_their_front_ends():
    # the removed gap registrations' ops run their own front-ends on CUDA
    for name in OLD_NN_GAPS:
        forms = [d for d in (lookup(name, ns) for ns in ("ptcore", "Tensor", "linalg"))
                 if d is not None]
        assert forms, name
        for d in forms:
            assert d.kernels["cuda"] in (d.raw, d.body), (d.namespace, name)
    assert not hasattr(Registrations, "gap")
    x = ptcore.tensor([[-1.5, 0.25, 2.0], [3.0, -0.5, 0.0]])
    y = ptcore.tensor([0.5, 1.0, -2.0])
    for fn in (lambda t, u: ptcore.clamp(t, -1, 1), lambda t, u: t.clamp_(max=0.5),
               lambda t, u: ptcore.lerp(t, t * 2, 0.25),
               lambda t, u: ptcore.addcdiv(t, t, u, value=2), lambda t, u: ptcore.rsqrt(t),
               lambda t, u: ptcore.square(t), lambda t, u: t.any(1), lambda t, u: ptcore.sign(t),
               lambda t, u: ptcore.logical_not(t), lambda t, u: ptcore.xlogy(t, u),
               lambda t, u: ptcore.linalg.vector_norm(t, 3, 1), lambda t, u: t.relu_(),
               lambda t, u: t == u):
        got, want = fn(x.cuda(), y.cuda()).cpu(), fn(x.clone(), y)
        assert got.dtype == want.dtype
        assert ptcore.allclose(got, want, equal_nan=True)


def test_complex_direct_ops_take_complex_operands():
    x = ptcore.tensor([1 + 2j, -3 + 0.5j], device="cuda")
    for fn in (ptcore.exp, ptcore.neg, ptcore.sqrt, lambda t: t + t, lambda t: t * 2, ptcore.abs):
        got = fn(x).cpu()
        want = fn(x.cpu())
        assert got.dtype == want.dtype
        assert ptcore.allclose(got, want)


def test_reduction_and_scan_loops_registered_once():
    assert sorted(cuda_reduce.reductions.names("loop")) == sorted(OLD_REDUCTIONS)
    assert sorted(cuda_reduce.scans.names("loop")) == sorted(OLD_LINES)
    # complex.py wraps each of them (it read its own copies of the lists before)
    red = cuda_complex._complex_reduction("sum", None).__code__
    line = cuda_complex._complex_line("cumsum", None).__code__
    for names, code in ((OLD_REDUCTIONS, red), (OLD_LINES, line)):
        for name in names:
            fn = D.loop_for(name, "cuda", None)
            assert fn.__code__ is code, name


def test_complex_reductions_and_scans():
    x = ptcore.tensor([[1 + 2j, -3 + 0.5j], [2 - 1j, 0.25j]], dtype=ptcore.complex128)
    for fn in (lambda t: t.sum(0), lambda t: t.mean(1), lambda t: t.prod(), lambda t: t.cumsum(1),
               lambda t: t.cumprod(0), lambda t: t.var(0), lambda t: ptcore.linalg.vector_norm(t)):
        got, want = fn(x.cuda()).cpu(), fn(x)
        assert got.dtype == want.dtype
        assert ptcore.allclose(got, want)


def test_bool_out_from_the_kernel_library():
    assert cuda_launch._BOOL_OUT == frozenset(OLD_BOOL_OUT)
    assert all(row[2] == "bool" for row in K.BINARY if row[0] in OLD_BOOL_OUT)
    x, y = ptcore.tensor([1.0, 2.0, 3.0]), ptcore.tensor([2.0, 2.0, 1.0])
    for op in OLD_BOOL_OUT:
        got = getattr(ptcore, op)(x.cuda(), y.cuda())
        assert got.dtype == ptcore.bool
        assert ptcore.equal(got.cpu(), getattr(ptcore, op)(x, y))


def test_scalar_ops_name_the_library_scalar_kernels():
    # the scalar kernels each binary registration names (launch._binary's
    # ``scalar``: its scalar kernel with the number second, first): each is one
    # of the library's, and every library scalar kernel is reached through one,
    # but the reflected floor division and remainder (``2 // t``), which the
    # front-ends' elementwise loop launches
    lib = {row[0] for row in K.SCALAR + K.SCALAR_CMP}
    scalar = {op: s for op, (_dense, s) in cuda_launch._FAST_PATHS.items() if s is not None}
    named = {k for pair in scalar.values() for k in pair if k is not None}
    assert named | {K.REFLECTED_SCALAR["div_floor"], K.REFLECTED_SCALAR["remainder"]} == lib
    assert all(second == op for op, (second, _first) in scalar.items())
    x = ptcore.tensor([1.5, -2.0, 4.0])
    for fn in (lambda t: t - 3, lambda t: 3 - t, lambda t: 2.5 / t, lambda t: t / 2.5,
               lambda t: t ** 2, lambda t: t != 4.0):
        got, want = fn(x.cuda()).cpu(), fn(x)
        assert got.dtype == want.dtype
        assert ptcore.equal(got, want)


# the tables the binary, complex32 and reduction registrations replaced
# (the table as it last stood, with the reflected pow kernel added since: ``2 ** t``)
OLD_SCALAR_OPS = {"add": ("add", "add"), "sub": ("sub", "rsub"), "mul": ("mul", "mul"),
                  "div": ("div", "rdiv"), "pow": ("pow", "rpow"), "eq": ("eq", "eq"),
                  "ne": ("ne", "ne"), "lt": ("lt", None), "le": ("le", None),
                  "gt": ("gt", None), "ge": ("ge", None)}
OLD_DENSE_OPS = {"add", "sub", "mul", "div", "maximum", "minimum"}
OLD_C32 = {"add", "sub", "mul", "eq", "ne", "neg", "abs"}
OLD_EXACT_LOOPS = {"amax", "amin", "max.dim", "min.dim", "aminmax", "all", "any",
                   "count_nonzero"}


def test_registration_facts_are_the_old_tables():
    from ptcore.cuda.ops import reduce as cuda_reduce
    from ptcore.cuda.ops.registration import Registrations, complex32_ops
    fast = cuda_launch._FAST_PATHS
    assert {op: s for op, (_d, s) in fast.items() if s is not None} == OLD_SCALAR_OPS
    assert {op for op, (d, _s) in fast.items() if d} == OLD_DENSE_OPS
    assert complex32_ops() == OLD_C32
    exact = {op for op in cuda_reduce.reductions.names("loop") if _loop_exact(cuda_reduce, op)}
    assert exact == OLD_EXACT_LOOPS
    with pytest.raises(ValueError, match="complex32"):
        Registrations().kernel("add", complex32=True)


def _loop_exact(cuda_reduce, op):
    # the ``exact`` argument its registration gave the loop (a closure variable)
    fn = [e[2] for e in cuda_reduce.reductions._entries if e[1] == op][0]
    return dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__)))["exact"]


def test_fft_transforms_are_declared_frontends():
    from ptcore.fft import _transforms
    for name in OLD_FFT_TRANSFORMS:
        d = lookup(name, "fft")
        assert d.decl.device == "frontend", name
        assert d.kernels["cuda"] is getattr(_transforms, name), name
    x = ptcore.randn(8, dtype=ptcore.float64)
    assert ptcore.allclose(ptcore.fft.rfft(x.cuda()).cpu(), ptcore.fft.rfft(x))


def test_gemm_search_loops_registered_where_defined():
    assert sorted(cuda_gemm.cuda.names("loop") + cuda_ctc.cuda.names("loop")) == \
        sorted(OLD_GEMM_LOOPS)
    assert cuda_ctc.cuda.names("loop") == ["ctc_loss"]
    assert D.loop_for("ctc_loss", "cuda", None) is cuda_ctc.ctc_loop
    assert sorted(cuda_gemm.cuda.names("kernel")) == ["allclose", "equal"]
    for name in OLD_GEMM_LOOPS:
        assert D.loop_for(name, "cuda", None) is not None, name
    for name in ("allclose", "equal"):
        assert lookup(name, "ptcore").kernels["cuda"].__module__ == cuda_gemm.__name__


def test_kernel_tables_read_from_the_kernel_library():
    # the direct unary launchers promote an integer input where the old list did,
    # and not where it did not (neg, abs, relu, sign have integer kernels)
    for op in ("neg", "abs", "relu", "sign", "exp", "log", "sqrt", "sigmoid", "tanh"):
        assert (op in cuda_launch._FLOAT_ONLY_UNARY) == (op in OLD_FLOAT_ONLY_UNARY), op
    x = ptcore.tensor([1, 2, 3])
    for op in OLD_FLOAT_ONLY_UNARY:
        got, want = getattr(ptcore, op)(x.cuda()).cpu(), getattr(ptcore, op)(x)
        assert got.dtype == want.dtype == ptcore.float32
        assert ptcore.allclose(got, want)
    assert cuda_nn._ACT_FORWARD == OLD_ACT_FORWARD
    # reduce.py's _SPLIT_EXACT: the exact reduce kernels (the library's "ext" rule)
    assert cuda_reduce._SPLIT_EXACT == {"amax", "amin", "all", "any", "count_nonzero", "argmax",
                                        "argmin"}


@pytest.mark.parametrize("module", [cuda_index, cuda_launch, cuda_nn, cuda_complex, cuda_reduce,
                                    cuda_fft, cuda_gemm])
def test_no_table_of_op_names_left(module):
    """The folded tables stay gone: no module-level name binds them again."""
    tree = ast.parse(pathlib.Path(module.__file__).read_text())
    names = {t.id for node in tree.body if isinstance(node, ast.Assign)
             for t in node.targets if isinstance(t, ast.Name)}
    assert not names & {"_REGISTRY", "_OPERATORS", "_NN_OWN", "_MORE_UNARY", "_DIRECT",
                        "_REDUCTIONS", "_LINES", "TRANSFORMS", "_LOOPS"}
