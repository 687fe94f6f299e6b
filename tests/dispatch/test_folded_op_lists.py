"""Facts that were module-level op-name lists and are now read from the ops'
declarations (``ptcore/_ops/declarations``) or registered at the handlers that
implement them: each derived set equals the frozen copy of the old list."""
import pytest

import ptcore
import ptcore.nn.functional  # noqa: F401
from ptcore._dispatch.declarations import DECLARED, family

# ptcore/fx/proxy.py's former _F_CONVENTION
OLD_F_CONVENTION = {
    "adaptive_avg_pool2d": 2, "adaptive_avg_pool3d": 2, "adaptive_max_pool1d_with_indices": 2,
    "adaptive_max_pool2d_with_indices": 2, "adaptive_max_pool3d_with_indices": 2,
    "affine_grid": 2, "alpha_dropout": 1, "batch_norm": 3, "binary_cross_entropy": 2,
    "binary_cross_entropy_with_logits": 2, "celu": 1, "cosine_embedding_loss": 3,
    "cross_entropy": 2, "ctc_loss": 4, "dropout": 1, "dropout1d": 1, "dropout2d": 1,
    "dropout3d": 1, "elu": 1, "embedding": 2, "embedding_bag": 2, "feature_alpha_dropout": 1,
    "fold": 3, "fractional_max_pool2d_with_indices": 2,
    "fractional_max_pool3d_with_indices": 2, "gaussian_nll_loss": 3, "glu": 1,
    "grid_sample": 2, "group_norm": 2, "gumbel_softmax": 1, "hardsigmoid": 1, "hardswish": 1,
    "hardtanh": 1, "hinge_embedding_loss": 2, "huber_loss": 2, "instance_norm": 1,
    "interpolate": 1, "kl_div": 2, "l1_loss": 2, "layer_norm": 2, "leaky_relu": 1,
    "linear_cross_entropy": 3, "local_response_norm": 2, "log_softmax": 1, "lp_pool1d": 3,
    "lp_pool2d": 3, "lp_pool3d": 3, "margin_ranking_loss": 3, "max_pool1d_with_indices": 2,
    "max_pool2d_with_indices": 2, "max_pool3d_with_indices": 2, "max_unpool1d": 3,
    "max_unpool2d": 3, "max_unpool3d": 3, "mish": 1, "mse_loss": 2,
    "multi_head_attention_forward": 13, "multi_margin_loss": 2, "multilabel_margin_loss": 2,
    "multilabel_soft_margin_loss": 2, "nll_loss": 2, "normalize": 1, "pad": 2,
    "poisson_nll_loss": 2, "relu": 1, "relu6": 1, "rms_norm": 2, "rrelu": 1, "selu": 1,
    "silu": 1, "smooth_l1_loss": 2, "soft_margin_loss": 2, "softmax": 1, "softmin": 1,
    "softsign": 1, "tanhshrink": 1, "threshold": 3, "triplet_margin_loss": 3,
    "triplet_margin_with_distance_loss": 3, "unfold": 2,
    # torch's boolean_dispatch pairs, recorded under the public name
    "max_pool1d": 2, "max_pool2d": 2, "max_pool3d": 2, "adaptive_max_pool1d": 2,
    "adaptive_max_pool2d": 2, "adaptive_max_pool3d": 2, "fractional_max_pool2d": 2,
    "fractional_max_pool3d": 2,
}


def test_tf_args_are_the_old_fx_convention():
    derived = {name: d.tf_args for (group, name), d in DECLARED.items()
               if d.tf_args is not None}
    assert all(group == "nn.functional" for (group, _), d in DECLARED.items()
               if d.tf_args is not None)
    assert derived == OLD_F_CONVENTION


@pytest.mark.parametrize("bad", [0, -1, 2.0, "2"])
def test_tf_args_is_validated(bad):
    op = family("test", group="nn.functional")
    with pytest.raises(ValueError, match="tf_args"):
        op("not_an_op_tf_args", "function", tf_args=bad)
    with pytest.raises(ValueError, match="tf_args"):
        family("test")("not_an_op_tf_args", "function", tf_args=1)
    assert ("nn.functional", "not_an_op_tf_args") not in DECLARED


def test_fx_records_the_declared_positional_arguments():
    torch = pytest.importorskip("torch")
    from ptcore import fx

    def f(x, w):
        return ptcore.nn.functional.layer_norm(x, (3,), w)

    def g(x, w):
        return torch.nn.functional.layer_norm(x, (3,), w)

    node = next(n for n in fx.symbolic_trace(f).graph.nodes if n.op == "call_function")
    tnode = next(n for n in torch.fx.symbolic_trace(g).graph.nodes if n.op == "call_function")
    assert len(node.args) == len(tnode.args) == DECLARED[("nn.functional", "layer_norm")].tf_args
    assert sorted(node.kwargs) == sorted(tnode.kwargs)


# ptcore/sparse/_ops.py's former _HANDLERS (its own keys and VALUE_OPS')
OLD_SPARSE_HANDLERS = frozenset("""
    __abs__ __add__ __matmul__ __mul__ __neg__ __pow__ __radd__ __rmatmul__ __rmul__ __sub__
    add add_ addmm bmm cat concat concatenate div div_ divide empty_like index_select matmul
    mm mul mv narrow_copy neg pow sampled_addmm select smm sparse_mask spmm stack sub sum t
    to_dense true_divide unsqueeze zeros_like
    abs sqrt sin tan tanh sinh asin asinh atan atanh expm1 log1p sign sgn floor ceil round
    trunc frac erf erfinv deg2rad rad2deg relu signbit isnan isinf isposinf isneginf
    square nan_to_num conj_physical positive""".split())
# added since (sentence-transformers: tensor/as_tensor of a sparse tensor, its predicates,
# unbind; PEFT's SHiRA: dense -= sparse)
ADDED_SPARSE_HANDLERS = frozenset("tensor as_tensor is_floating_point is_complex numel unbind"
                                  " sub_".split())

# ptcore/masked/_tensor_ops.py's former _HANDLERS and _REDUCE_PARAMS
OLD_MASKED_HANDLERS = frozenset("""
    clone detach contiguous ones_like zeros_like copy_ to_dense item numpy tolist backward
    __bool__ __float__ __int__ __index__ softmax log_softmax softmin""".split())
OLD_MASKED_REDUCE_PARAMS = {
    "sum": (("dim", None), ("keepdim", False), ("dtype", None)),
    "mean": (("dim", None), ("keepdim", False), ("dtype", None)),
    "prod": (("dim", None), ("keepdim", False), ("dtype", None)),
    "amax": (("dim", ()), ("keepdim", False)),
    "amin": (("dim", ()), ("keepdim", False)),
    "argmax": (("dim", None), ("keepdim", False)),
    "argmin": (("dim", None), ("keepdim", False)),
    "all": (("dim", None), ("keepdim", False)),
    "any": (("dim", None), ("keepdim", False)),
    "norm": (("p", "fro"), ("dim", None), ("keepdim", False), ("dtype", None)),
    "var": (("dim", None), ("unbiased", None), ("keepdim", False), ("correction", None)),
    "std": (("dim", None), ("unbiased", None), ("keepdim", False), ("correction", None)),
}


def test_sparse_implementations_are_the_old_handlers():
    from ptcore.sparse import _ops
    assert set(_ops.implements) == OLD_SPARSE_HANDLERS | ADDED_SPARSE_HANDLERS
    assert _ops.implements["div"] is _ops.implements["divide"] is _ops.div


def test_masked_implementations_are_the_old_handlers_and_reductions():
    from ptcore.masked import _tensor_ops
    assert set(_tensor_ops.implements) == OLD_MASKED_HANDLERS | set(OLD_MASKED_REDUCE_PARAMS)
    # each reduction binds its arguments by the old parameters
    assert {name: _tensor_ops.implements[name].params
            for name in OLD_MASKED_REDUCE_PARAMS} == OLD_MASKED_REDUCE_PARAMS


def test_a_second_implementation_of_an_op_is_refused():
    from ptcore._dispatch.handlers import Handlers
    implements = Handlers("test")

    @implements("a", "b")
    def f():
        pass
    assert implements == {"a": f, "b": f}
    with pytest.raises(ValueError, match="'b' has two implementations"):
        implements("b")(lambda: None)


# ptcore/_ops/pointwise_composite.py's former _INPLACE_ALIASES
OLD_INPLACE_ALIASES = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
    "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_",
    "clamp_", "clamp_max_", "clamp_min_", "clip_", "conj_physical_", "cosh_", "deg2rad_",
    "detach_", "erf_", "erfc_", "exp2_", "expm1_", "fix_", "floor_", "frac_", "i0_", "log10_",
    "log1p_", "log2_", "logit_", "nan_to_num_", "negative_", "rad2deg_", "reciprocal_", "relu_",
    "resize_as_", "round_", "sinh_", "square_", "tan_", "trunc_", "xlogy_",
)


def test_inplace_fn_is_the_old_inplace_aliases():
    from ptcore._ops import pointwise_composite
    declared = sorted(d.name + "_" for d in DECLARED.values() if d.inplace_fn)
    assert declared == sorted(OLD_INPLACE_ALIASES)
    assert all(d.group == "ptcore" and "inplace" in d.variants
               for d in DECLARED.values() if d.inplace_fn)
    assert [n for n in pointwise_composite.__all__ if n in OLD_INPLACE_ALIASES] == \
        list(OLD_INPLACE_ALIASES)
    x = ptcore.tensor([-1.5, 2.0])
    assert ptcore.abs_(x) is x and x.tolist() == [1.5, 2.0]


def test_inplace_fn_is_validated():
    with pytest.raises(ValueError, match="inplace_fn"):
        family("test")("not_an_op_inplace_fn", "function method", inplace_fn=True)
    with pytest.raises(ValueError, match="inplace_fn"):
        family("test", group="linalg")("not_an_op_inplace_fn", "function inplace",
                                       inplace_fn=True)
    assert ("ptcore", "not_an_op_inplace_fn") not in DECLARED


# ptcore/_ops/foreach.py's former _UNARY and _BINARY (binary op: takes alpha,
# accepts a single 0-d tensor, method used with a number)
OLD_FOREACH_UNARY = (
    "abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
    "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal",
    "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")
OLD_FOREACH_BINARY = {
    "add": (True, True, "add"), "sub": (True, False, "sub"),
    "mul": (False, True, "mul"), "div": (False, True, "div"),
    "clamp_max": (False, False, "clamp_max"), "clamp_min": (False, False, "clamp_min"),
    "maximum": (False, False, "clamp_min"), "minimum": (False, False, "clamp_max"),
    "pow": (False, False, "pow"),
}


def test_foreach_forms_are_the_old_lists():
    from ptcore._ops import foreach
    assert sorted(d.name for d in DECLARED.values() if d.foreach) == sorted(OLD_FOREACH_UNARY)
    old_all = [f"_foreach_{n}{s}" for n in (*OLD_FOREACH_UNARY, *OLD_FOREACH_BINARY,
                                            "addcmul", "addcdiv", "lerp") for s in ("", "_")]
    old_all += ["_foreach_zero_", "_foreach_copy_", "_foreach_clone", "_foreach_norm",
                "_foreach_powsum", "_foreach_max", "_foreach_mm"]
    assert foreach.__all__ == old_all
    assert all(callable(getattr(ptcore, n)) for n in old_all)
    xs = [ptcore.tensor([1.0, -2.0]), ptcore.tensor([3.0])]
    assert [t.tolist() for t in ptcore._foreach_abs(xs)] == [[1.0, 2.0], [3.0]]
    # the binary forms' overloads as before: alpha (add, sub), one 0-d tensor (add, mul, div),
    # the scalar method of maximum/minimum (clamp_min/clamp_max)
    zero_d = ptcore.tensor(2.0)
    for op, (alpha, tensor_ok, _) in OLD_FOREACH_BINARY.items():
        f = getattr(ptcore, f"_foreach_{op}")
        if alpha:
            assert [t.tolist() for t in f(xs, xs, alpha=2)] == \
                [getattr(t, op)(t, alpha=2).tolist() for t in xs]
        else:
            with pytest.raises(TypeError, match="alpha"):
                f(xs, xs, alpha=2)
        if tensor_ok:
            assert [t.tolist() for t in f(xs, zero_d)] == [getattr(t, op)(zero_d).tolist()
                                                           for t in xs]
    assert [t.tolist() for t in ptcore._foreach_maximum(xs, 0.0)] == [[1.0, 0.0], [3.0]]
    assert [t.tolist() for t in ptcore._foreach_minimum(xs, 0.0)] == [[0.0, -2.0], [0.0]]


def test_foreach_is_validated():
    with pytest.raises(ValueError, match="foreach"):
        family("test")("not_an_op_foreach", "function method", foreach=True)
    assert ("ptcore", "not_an_op_foreach") not in DECLARED


# ptcore/_ops/shape_composite.py's former _COPY_OPS ("view_as_self": the tensor itself,
# now declared "alias")
OLD_COPY_OPS = {
    "alias_copy": "view_as_self", "as_strided_copy": "as_strided", "detach_copy": "detach",
    "diagonal_copy": "diagonal", "expand_copy": "expand", "permute_copy": "permute",
    "select_copy": "select", "split_copy": "split", "split_with_sizes_copy": "split",
    "squeeze_copy": "squeeze", "t_copy": "t", "transpose_copy": "transpose",
    "unbind_copy": "unbind", "unfold_copy": "unfold", "unsqueeze_copy": "unsqueeze",
    "view_copy": "view",
}


def test_copy_of_is_the_old_copy_ops():
    from ptcore._ops import shape_composite
    declared = {d.name: d.copy_of for d in DECLARED.values() if d.copy_of is not None}
    assert declared == {n: "alias" if m == "view_as_self" else m for n, m in OLD_COPY_OPS.items()}
    assert [n for n in shape_composite.__all__ if n in OLD_COPY_OPS] == sorted(OLD_COPY_OPS)
    x = ptcore.arange(6.0).reshape(2, 3)
    for name, args in (("alias_copy", ()), ("t_copy", ()), ("view_copy", ((3, 2),)),
                       ("split_with_sizes_copy", ((1, 2), 1))):
        r = getattr(ptcore, name)(x, *args)
        m = OLD_COPY_OPS[name]
        want = x if m == "view_as_self" else getattr(x, m)(*args)
        for a, b in zip(r if isinstance(r, tuple) else (r,),
                        want if isinstance(want, tuple) else (want,)):
            assert a.tolist() == b.tolist() and a.is_contiguous()
            assert a.data_ptr() != x.data_ptr()


def test_copy_of_is_validated():
    with pytest.raises(ValueError, match="copy_of"):
        family("test")("not_an_op", "function", copy_of="view")
    with pytest.raises(ValueError, match="copy_of"):
        family("test", group="linalg")("not_an_op_copy", "function", copy_of="view")
    assert ("ptcore", "not_an_op") not in DECLARED


# ptcore/nested/_ops.py's former _REDUCE (now named at the handler's registration)
OLD_NESTED_REDUCE = ("sum", "mean", "amax", "amin", "prod", "logsumexp", "nansum", "nanmean",
                     "all", "any", "std", "var")


def test_nested_reductions_are_the_old_list():
    from ptcore.nested import _ops
    assert {n for n, f in _ops._TABLE.items() if f is _ops._reduce} == set(OLD_NESTED_REDUCE)


# ptcore/utils/flop_counter.py's former _LOWERED
OLD_FLOP_LOWERED = frozenset("""linear matmul einsum conv1d conv2d conv3d conv_transpose1d
    conv_transpose2d conv_transpose3d scaled_dot_product_attention
    multi_head_attention_forward""".split())


def test_flop_counter_lowerings_are_the_old_list():
    from ptcore.utils import flop_counter
    assert set(flop_counter._lowering) == OLD_FLOP_LOWERED


# ptcore/func/_batching_rules_nn.py's former _FOLD_N (op -> its spatial dims)
OLD_FOLD_N = {
    "max_pool1d": 1, "max_pool2d": 2, "max_pool3d": 3, "avg_pool1d": 1, "avg_pool2d": 2,
    "avg_pool3d": 3, "adaptive_avg_pool1d": 1, "adaptive_avg_pool2d": 2,
    "adaptive_avg_pool3d": 3, "adaptive_max_pool1d": 1, "adaptive_max_pool2d": 2,
    "adaptive_max_pool3d": 3, "max_pool1d_with_indices": 1,
    "max_pool2d_with_indices": 2, "max_pool3d_with_indices": 3,
    "adaptive_max_pool1d_with_indices": 1, "adaptive_max_pool2d_with_indices": 2,
    "adaptive_max_pool3d_with_indices": 3, "lp_pool1d": 1, "lp_pool2d": 2, "lp_pool3d": 3,
    "pixel_shuffle": 2, "pixel_unshuffle": 2, "dropout1d": 1,
    "dropout2d": None, "dropout3d": 3, "feature_dropout": None,
    "feature_alpha_dropout": None, "channel_shuffle": None,
    "native_channel_shuffle": None, "interpolate": None, "upsample": None,
    "upsample_nearest": None, "upsample_bilinear": None, "group_norm": None,
    "local_response_norm": None, "fold": None}


def test_fold_rules_are_the_old_list():
    import ptcore.func  # noqa: F401
    from ptcore.func import _batching_rules_nn
    from ptcore.func._batching_rules import RULES
    for group in ("nn.functional", "ptcore"):
        got = {name: f.spatial_dims for (g, name), f in
               ((k, v) for k, v in RULES.items() if isinstance(k, tuple))
               if g == group and hasattr(f, "spatial_dims")}
        assert got == OLD_FOLD_N, group
    assert RULES[("nn.functional", "unfold")] is _batching_rules_nn._fold_n


# ptcore/_meta/_infer.py's former _DATA_DEPENDENT and _READS_ITEM
OLD_DATA_DEPENDENT = frozenset({
    "nonzero", "argwhere", "masked_select", "unique", "unique_consecutive", "bincount",
    "histc", "histogram", "histogramdd", "equal", "allclose", "is_nonzero", "combinations",
})
OLD_READS_ITEM = frozenset({"allclose", "is_nonzero"})


def test_data_dependent_is_the_old_meta_lists():
    declared = {d.name: d.data_dependent for d in DECLARED.values()
                if d.data_dependent is not None}
    assert set(declared) == OLD_DATA_DEPENDENT
    assert {n for n, v in declared.items() if v == "item"} == OLD_READS_ITEM
    x = ptcore.empty(3, device="meta")
    with pytest.raises(RuntimeError, match="item"):
        ptcore.is_nonzero(ptcore.empty(1, device="meta"))
    with pytest.raises(Exception, match="nonzero"):
        ptcore.nonzero(x)
    with pytest.raises(ValueError, match="data_dependent"):
        family("test")("not_an_op_dd", "function", data_dependent="shape")


# ptcore/_ops/removed.py's former _MESSAGES: each removed function raises its own message
@pytest.mark.parametrize("name, replacement", [
    ("lstsq", "ptcore.linalg.lstsq(A, B).solution"), ("solve", "ptcore.linalg.solve(A, B)"),
    ("symeig", "ptcore.linalg.eigh(A, UPLO="), ("eig", "ptcore.linalg.eig(A)"),
    ("matrix_rank", "renamed in `ptcore.linalg.matrix_rank()` to 'hermitian'")])
def test_removed_functions_raise_their_messages(name, replacement):
    x = ptcore.ones(2, 2)
    with pytest.raises(RuntimeError, match="deprecated since version 1.9 and is now removed") \
            as e:
        getattr(ptcore, name)(x, x)
    assert replacement in str(e.value)
    if name != "matrix_rank":       # (torch has no Tensor.matrix_rank)
        with pytest.raises(RuntimeError) as m:
            getattr(x, name)(x)
        assert str(m.value) == str(e.value)


# ptcore/_dispatch/default_device.py's former DEVICE_CONSTRUCTORS (torch 2.13's
# _device_constructors under ptcore's names); the sparse constructors in it were never
# entries of the dispatch point, so the layer never saw them
OLD_DEVICE_CONSTRUCTORS = {
    "arange", "as_tensor", "asarray", "bartlett_window", "blackman_window", "empty",
    "empty_permuted", "empty_strided", "eye", "fftfreq", "rfftfreq", "full", "hamming_window",
    "hann_window", "kaiser_window", "linspace", "logspace", "ones", "rand", "randint", "randn",
    "randperm", "range", "scalar_tensor", "sparse_coo_tensor", "sparse_csr_tensor",
    "sparse_csc_tensor", "sparse_bsr_tensor", "sparse_bsc_tensor", "sparse_compressed_tensor",
    "tensor", "tril_indices", "triu_indices", "zeros"}


def test_default_device_is_the_old_device_constructors():
    import ptcore.fft  # noqa: F401
    from ptcore._dispatch.table import OPS
    declared = {name for (_, name), d in DECLARED.items() if d.default_device}
    assert declared == OLD_DEVICE_CONSTRUCTORS - {n for n in OLD_DEVICE_CONSTRUCTORS
                                                  if n.startswith("sparse_")}
    # the entries the layer gives the default device are the ones it gave before
    old = {k for k, o in OPS.items() if o.name in OLD_DEVICE_CONSTRUCTORS and o.kind != "method"}
    new = {k for k, o in OPS.items()
           if o.decl is not None and o.decl.default_device and o.kind != "method"}
    assert new == old and ("fft", "fftfreq") in new
    with ptcore.device("meta"):
        assert ptcore.zeros(2).device.type == "meta"
        assert ptcore.fft.rfftfreq(4).device.type == "meta"
        assert ptcore.ones(2, device="cpu").zero_().device.type == "cpu"


# ptcore/__init__.py's former _METHOD_FUNCTIONS (view_copy in it had no Tensor method,
# so it was skipped: shape_composite makes it from copy_of)
OLD_METHOD_FUNCTIONS = (
    "reshape", "view_copy", "transpose", "swapaxes", "swapdims", "permute", "t", "squeeze",
    "unsqueeze", "flatten", "unflatten", "narrow", "select", "unbind", "split", "chunk",
    "tensor_split", "diagonal", "movedim", "moveaxis", "as_strided", "clone", "broadcast_to",
    "detach")


def test_method_fn_is_the_old_method_functions():
    declared = {name for (g, name), d in DECLARED.items() if d.method_fn}
    assert declared == set(OLD_METHOD_FUNCTIONS) - {"view_copy"}
    x = ptcore.arange(6.0).reshape(2, 3)
    for name in declared:
        fn = getattr(ptcore, name)
        assert fn.__name__ == name and getattr(ptcore.Tensor, name)
    assert ptcore.transpose(x, 0, 1).tolist() == x.t().tolist()
    assert [p.tolist() for p in ptcore.split(tensor=x, split_size_or_sections=1)] == \
        [[[0.0, 1.0, 2.0]], [[3.0, 4.0, 5.0]]]
    assert not hasattr(ptcore, "_METHOD_FUNCTIONS")


@pytest.mark.parametrize("fact, variants, bad", [
    ("method_fn", "function method", dict(method_fn="yes")),
    ("method_fn", "function", dict(method_fn=True)),
    ("default_device", "function", dict(default_device="yes")),
    ("default_device", "method", dict(default_device=True))])
def test_method_fn_and_default_device_are_validated(fact, variants, bad):
    op = family("shape")
    with pytest.raises(ValueError, match=fact):
        op("not_declared_" + fact, variants, **bad)
    assert ("ptcore", "not_declared_" + fact) not in DECLARED


# ptcore/_ops/pointwise.py's former _COMPLEX_COMPOSED, _REFUSE_COMPLEX_FIRST, _TWO_SCALARS
def test_pointwise_registrations_are_the_old_lists():
    from ptcore._ops import pointwise as pw
    assert set(pw._complex_form) == {"exp2", "log2", "log10", "expm1", "log1p"}
    z = ptcore.tensor([0.5 + 0.25j, 3 - 2j])
    for name in ("sign", "floor", "ceil", "trunc"):
        with pytest.raises(NotImplementedError, match="complex"):
            getattr(ptcore, name)(z, out=ptcore.empty(2))    # (before out= is looked at)
    for name in ("add", "sub", "mul", "div", "true_divide", "floor_divide"):
        r = getattr(ptcore, name)(7, 2)
        assert r.dim() == 0 and r.item() == {"add": 9, "sub": 5, "mul": 14, "div": 3.5,
                                             "true_divide": 3.5, "floor_divide": 3}[name]
    for name in ("remainder", "maximum", "atan2", "eq"):
        with pytest.raises(TypeError):
            getattr(ptcore, name)(7, 2)


def _entries_declaring(fact):
    from ptcore._dispatch.table import OPS
    return {k for k, o in OPS.items() if o.decl is not None and getattr(o.decl, fact)}


# ptcore/_inductor/aot.py's former _LAYOUT_BOUND (looked up by entry name, any namespace)
def test_layout_bound_is_the_old_list():
    from ptcore._dispatch.table import OPS
    old = {"as_strided", "as_strided_", "set_", "as_strided_scatter"}
    assert _entries_declaring("layout_bound") == {k for k in OPS if k[1] in old}
    with pytest.raises(ValueError, match="layout_bound"):
        family("shape")("not_declared_layout_bound", "function", layout_bound="yes")


# ptcore/_dispatch/python_dispatch.py's former _CORRECTION_OPS
def test_correction_is_the_old_list():
    from ptcore.utils._python_dispatch import TorchDispatchMode
    assert {n for (g, n), d in DECLARED.items() if d.correction} == \
        {"var", "std", "var_mean", "std_mean"}
    seen = []

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((str(func), kwargs))
            return func(*args, **(kwargs or {}))
    x = ptcore.arange(6.0).reshape(2, 3)
    with Log():
        x.var(0)
        ptcore.std_mean(x, 1, unbiased=False)
    assert seen == [("aten.var.correction", {"correction": 1}),
                    ("aten.std_mean.correction", {"correction": 0})]
    with pytest.raises(ValueError, match="correction"):
        family("reduction", "linalg")("not_declared_correction", "function", correction=True)


# ptcore/autograd/_record.py's former _FALLBACK
def test_grad_fallback_is_the_old_list():
    from ptcore.autograd._record import not_implemented
    old = {"floor_divide", "heaviside", "histogram", "binomial", "detach_copy"}
    assert {n for (g, n), d in DECLARED.items() if d.grad_fallback} == old
    x = ptcore.tensor([1.5, 2.5], requires_grad=True)
    y = ptcore.heaviside(x, ptcore.tensor([0.5, 0.5]))
    assert y.grad_fn.name() == "torch::autograd::NotImplemented"
    with pytest.raises(RuntimeError, match="aten::heaviside has no derivative formula"):
        y.sum().backward()
    f = not_implemented("renorm")       # (no fallback: derivatives.yaml's not_implemented)
    y = x * 1
    f(y, x)
    with pytest.raises(NotImplementedError, match="'renorm' is not implemented"):
        y.sum().backward()
    with pytest.raises(ValueError, match="grad_fallback"):
        family("shape", "linalg")("not_declared_grad_fallback", "function", grad_fallback=True)


# ptcore/autograd/_jvp_formulas.py's former in-place and protocol lists
OLD_META_INPLACE = {"t_", "transpose_", "squeeze_", "unsqueeze_", "swapaxes_", "swapdims_",
                    "as_strided_", "resize_", "resize_as_"}
OLD_NO_OLD = {"add_", "sub_", "copy_", "fill_", "zero_", "__setitem__", "index_put_",
              "masked_fill_", "index_fill_", "index_add_", "index_copy_", "scatter_add_", "neg_"}
OLD_INPLACE_SPECIAL = {"copy_", "fill_", "zero_", "__setitem__", "index_put_"}
OLD_PROTOCOL_NO_TANGENT = {"__bool__", "__int__", "__float__", "__index__", "__len__",
                           "__repr__", "__format__"}


def test_jvp_inplace_and_protocol_facts_are_the_old_lists():
    from ptcore._dispatch.declarations import PROTOCOL_METHODS
    from ptcore._dispatch.table import OPS
    from ptcore.autograd import _jvp_formulas as J
    for key, o in OPS.items():
        how = J._jvp_inplace(o, o.name)
        assert (how == "same") == (o.name in OLD_META_INPLACE), key
        assert (how == "linear" or o.name in J._inplace_rule) == (o.name in OLD_NO_OLD), key
        protocol = PROTOCOL_METHODS.get(o.name) if o.decl is None else None
        kind = protocol.jvp if protocol is not None else None
        assert ("inplace" in o.tags or kind == "inplace") == \
            ("inplace" in o.tags or o.name in OLD_INPLACE_SPECIAL), key
        assert (kind == "none") == (o.name in OLD_PROTOCOL_NO_TANGENT), key
    import ptcore.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        x = fwAD.make_dual(ptcore.ones(2, 3), ptcore.arange(6.0).reshape(2, 3))
        y = x.clone()
        y.t_()                                          # the same op on the tangent
        assert fwAD.unpack_dual(y).tangent.tolist() == [[0, 3], [1, 4], [2, 5]]
        y = x.clone()
        y[0] = 5.0                                      # __setitem__'s own rule
        assert fwAD.unpack_dual(y).tangent.tolist() == [[0, 0, 0], [3, 4, 5]]
        assert float(x.sum()) == 6.0                    # a conversion: no tangent
    with pytest.raises(ValueError, match="jvp_inplace"):
        family("shape")("not_declared_jvp_inplace", "function method", jvp_inplace="same")
    with pytest.raises(ValueError, match="jvp_inplace"):
        family("shape")("not_declared_jvp_inplace", "inplace", jvp_inplace="old")


# ptcore/autograd/_jvp_formulas.py's former _OUT_DTYPE_OPS
def test_out_dtype_is_the_old_list():
    import ptcore.autograd.forward_ad as fwAD
    assert {n: d.out_dtype for (g, n), d in DECLARED.items() if d.out_dtype is not None} == \
        {"mm": 2, "bmm": 2, "addmm": 3, "baddbmm": 3}
    a = ptcore.ones(2, 2, dtype=ptcore.float16)
    with fwAD.dual_level():
        x = fwAD.make_dual(a, a)
        with pytest.raises(NotImplementedError, match="forward AD with addmm"):
            ptcore.addmm(x, x, a, ptcore.float32)       # (out_dtype by position)
        with pytest.raises(NotImplementedError, match="forward AD with mm"):
            x.mm(a, out_dtype=ptcore.float32)
    with pytest.raises(ValueError, match="out_dtype"):
        family("linalg")("not_declared_out_dtype", "function", out_dtype=0)


# ptcore/_dispatch/autocast.py's former _CPU_RULES (name -> CPU category or rule)
OLD_CPU_RULES = {"mv": None, "addmv": None, "addr": None, "einsum": "args", "tensordot": "args",
                 "inner": "args", "matrix_power": "args", "pad": "args", "bilinear": "off",
                 "multi_head_attention_forward": "lower", "batch_norm": "norm",
                 "layer_norm": "norm", "group_norm": "norm", "instance_norm": "norm",
                 "rms_norm": "norm"}


def test_autocast_cpu_is_the_old_rules():
    from ptcore._dispatch import autocast as ac
    from ptcore._dispatch.table import OPS
    assert set(ac._cpu_rule) == {n for n, c in OLD_CPU_RULES.items() if c == "args"}
    for key, o in OPS.items():
        if o.name in ac._cpu_rule:
            continue
        cat = ac._category(o, "cpu", (), {})
        if o.name in OLD_CPU_RULES:
            assert cat == OLD_CPU_RULES[o.name], key
        else:
            assert cat == o.autocast, key
    with ptcore.autocast("cpu"):
        a = ptcore.ones(2, 2)
        assert ptcore.mm(a, a).dtype == ptcore.bfloat16
        assert ptcore.mv(a, a[0]).dtype == ptcore.float32        # (mv: not on CPU)
        assert ptcore.einsum("ij,jk->ik", a, a).dtype == ptcore.bfloat16
        assert ptcore.einsum("ij,ij->ij", a, a).dtype == ptcore.float32
    with pytest.raises(ValueError, match="autocast_cpu"):
        family("linalg")("not_declared_autocast_cpu", "function", autocast_cpu="low")


# ptcore/_inductor/kernel_grads.py's former _SOFTMAX and _GELU
def test_direct_kernel_backwards_are_the_old_lists():
    from ptcore._inductor import kernel_grads as kg
    softmax = {(ns, n) for ns in ("ptcore", "Tensor", "nn.functional")
               for n in ("softmax", "log_softmax")}
    assert set(kg._direct) == softmax | {("nn.functional", "gelu")}


# ptcore/_dispatch/generate.py's former CORE_ENTRIES
OLD_CORE_ENTRIES = (
    "view", "view_as", "reshape", "reshape_as", "transpose", "swapaxes", "swapdims", "permute",
    "t", "expand", "expand_as", "broadcast_to", "unsqueeze", "squeeze", "flatten", "unflatten",
    "narrow", "select", "split", "split_with_sizes", "tensor_split", "chunk", "unbind",
    "contiguous", "clone", "detach", "to", "type_as", "float", "double", "half", "bfloat16",
    "int", "long", "bool", "byte", "char", "short", "cfloat", "cdouble", "chalf", "cpu",
    "__getitem__", "as_strided", "diagonal", "movedim", "moveaxis", "unfold", "new_empty",
    "new_zeros", "new_ones", "new_full", "new_tensor",
    "item", "tolist", "numpy", "__bool__", "__int__", "__float__", "__index__",
    "normal_", "uniform_", "bernoulli_", "exponential_", "random_", "index_put_", "detach_",
    "new_empty_strided", "geqrf", "orgqr", "ormqr", "stft", "istft", "cuda", "pin_memory",
    "resize_", "resize_as_", "set_",
)


def test_core_entry_is_the_old_core_entries():
    from ptcore._dispatch import dispatcher, generate
    from ptcore._dispatch.declarations import PROTOCOL_METHODS
    declared = {n for n in PROTOCOL_METHODS if PROTOCOL_METHODS[n].core_entry}
    for (g, name), d in DECLARED.items():
        assert g == "ptcore" or not d.core_entry
        declared |= {name if kind == "method" else name + "_" for kind in d.core_entry}
    assert declared == set(OLD_CORE_ENTRIES)
    # the core methods made entries are the old list's (those the class has as core methods)
    entries = {name for _, name, _, _ in dispatcher._CORE_ENTRIES}
    assert entries <= declared and entries == declared & generate.CORE
    assert "resize_" in entries and "resize" in generate.CORE and "resize" not in entries
    assert not hasattr(generate, "CORE_ENTRIES")


# ptcore/jit/_script.py's former _TENSOR_RESULT_METHODS
OLD_TENSOR_RESULT_METHODS = {
    "abs", "add", "clamp", "clone", "contiguous", "cos", "cumsum", "detach", "div", "double",
    "exp", "expand", "expand_as", "flatten", "float", "half", "int", "log", "log_softmax",
    "long", "masked_fill", "matmul", "mean", "mm", "mul", "neg", "permute", "pow", "relu",
    "repeat", "reshape", "sigmoid", "sin", "softmax", "sqrt", "squeeze", "sub", "sum", "t",
    "tanh", "transpose", "unsqueeze", "view"}
# ptcore/jit/_fusion.py's former _PURE_VIEWS
OLD_PURE_VIEWS = {"__getitem__", "view", "reshape", "transpose", "t", "permute", "unsqueeze",
                  "squeeze", "expand", "narrow", "select", "detach"}


def test_script_tensor_and_pure_view_are_the_old_jit_lists():
    from ptcore.jit._script import _tensor_result
    from ptcore.jit._fusion import _pure_view
    from ptcore._dispatch.declarations import PROTOCOL_METHODS
    assert {n for (g, n), d in DECLARED.items() if d.script_tensor} == OLD_TENSOR_RESULT_METHODS
    assert all(g == "ptcore" for (g, n), d in DECLARED.items() if d.script_tensor)
    assert {n for (g, n), d in DECLARED.items() if d.pure_view} | \
        {n for n, p in PROTOCOL_METHODS.items() if p.pure_view} == OLD_PURE_VIEWS
    # the out-of-place forms only, as the lists held
    assert _tensor_result("add") and not _tensor_result("add_") and not _tensor_result("size")
    assert not _tensor_result("absolute")          # an alias declares its own facts
    for ns in ("ptcore", "Tensor"):
        assert _pure_view(ns, "view") and _pure_view(ns, "__getitem__")
        assert not _pure_view(ns, "t_") and not _pure_view(ns, "add")
    assert not _pure_view("linalg", "view")


@pytest.mark.parametrize("fact, variants, bad", [
    ("core_entry", "method", dict(core_entry="function")),
    ("core_entry", "method", dict(core_entry="inplace")),
    ("script_tensor", "function", dict(script_tensor=True)),
    ("script_tensor", "method", dict(script_tensor="yes")),
    ("pure_view", "method", dict(pure_view="yes"))])
def test_core_entry_script_tensor_pure_view_are_validated(fact, variants, bad):
    op = family("shape")
    with pytest.raises(ValueError, match=fact):
        op("not_declared_" + fact, variants, **bad)
    assert ("ptcore", "not_declared_" + fact) not in DECLARED
    with pytest.raises(ValueError, match="core_entry"):
        family("x", group="linalg")("not_declared_core_entry", "method", core_entry="method")


# ptcore/jit/_script_module.py's former _PRIM_TENSOR_OPS / _PRIM_REFLECTED
# (by the names the op table knows the methods by: __pow__ and __neg__ *are* Tensor.pow
# and Tensor.neg, and a specialised plan naming Tensor::__neg__ failed on its second
# call -- geoopt's Lorentz maps, f2b2f56c)
OLD_PRIM_TENSOR_OPS = {"add": "__add__", "sub": "__sub__", "mul": "__mul__",
                       "truediv": "__truediv__", "pow": "pow", "neg": "neg",
                       "lt": "__lt__", "le": "__le__", "gt": "__gt__", "ge": "__ge__",
                       "eq": "__eq__", "ne": "__ne__"}
OLD_PRIM_REFLECTED = {"add": "__radd__", "mul": "__rmul__"}


def test_script_prim_is_the_old_prim_tables():
    from ptcore.jit import _script_module as SM
    assert SM._PRIM_TENSOR_METHODS == OLD_PRIM_TENSOR_OPS
    assert SM._PRIM_REFLECTED == OLD_PRIM_REFLECTED
    assert not hasattr(SM, "_PRIM_TENSOR_OPS")


# ptcore/masked/_tensor_ops.py's former _NOT_INPLACE (of its unary and binary ops)
OLD_MASKED_NOT_INPLACE = {"angle", "positive", "signbit", "isnan", "logaddexp", "logaddexp2",
                          "fmin", "minimum", "maximum", "fmax"}


def test_beyond_torch_is_what_torch_lacks_and_masked_reads_it():
    torch = pytest.importorskip("torch")
    from ptcore.masked import _tensor_ops as M
    lacks = {}
    for (g, n), d in DECLARED.items():
        if g != "ptcore":
            assert not d.beyond_torch
            continue
        has = {"function": hasattr(torch, n), "method": hasattr(torch.Tensor, n),
               "inplace": hasattr(torch.Tensor, n + "_") or hasattr(torch, n + "_")}
        missing = {k for k in d.variants if not has.get(k, True)}
        if missing:
            lacks[n] = missing
    assert {n: set(d.beyond_torch) for (g, n), d in DECLARED.items() if d.beyond_torch} == lacks
    assert M._INPLACE == frozenset([n + "_" for n in M._UNARY + M._BINARY
                                    if n not in OLD_MASKED_NOT_INPLACE] + M._IOPERATORS)
    with pytest.raises(ValueError, match="beyond_torch"):
        family("shape")("not_declared_beyond_torch", "method", beyond_torch="inplace")
    assert ("ptcore", "not_declared_beyond_torch") not in DECLARED
