"""The variants of every public op, declared explicitly.

As ``variants:`` in PyTorch's ``native_functions.yaml``, each op lists the
forms it has:

``function``   ``ptcore.X`` (or ``nn.functional.X``, ``linalg.X``, ``fft.X``,
               ``special.X``: the op's *group* is its namespace; ``ptcore``
               and ``Tensor`` are one group)
``method``     ``Tensor.X``
``inplace``    ``Tensor.X_`` or ``ptcore.X_`` (the in-place form)
``out``        the function takes ``out=``
``operator``   a Python operator method of ``Tensor`` computes it
               (:data:`OPERATOR_METHODS` says which)

:func:`ptcore._dispatch.table.declare` puts an op's declared variants in
its :class:`~ptcore._dispatch.table.OpDef` (``variants``), and
:mod:`ptcore._dispatch.generate` binds the operator methods listed here.
``tests/dispatch/test_variants.py`` checks that every declared variant
exists and every existing one is declared; ``tools/op_variants.py`` prints
the declaration from the package.  A new op adds its name to the group of
its variant set below.
"""

__all__ = ["VARIANTS", "OPERATOR_METHODS", "PROTOCOL_METHODS", "variants_of", "base_of"]

KINDS = ("function", "method", "inplace", "out", "operator")

# operator method -> the op it computes
OPERATOR_METHODS = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add",
    "__sub__": "sub", "__rsub__": "sub", "__isub__": "sub",
    "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul",
    "__truediv__": "div", "__rtruediv__": "div", "__itruediv__": "div", "__div__": "div",
    "__rdiv__": "div",
    "__floordiv__": "floor_divide", "__rfloordiv__": "floor_divide",
    "__ifloordiv__": "floor_divide",
    "__mod__": "remainder", "__rmod__": "remainder", "__imod__": "remainder",
    "__pow__": "pow", "__rpow__": "pow", "__ipow__": "pow",
    "__matmul__": "matmul", "__rmatmul__": "matmul", "__imatmul__": "matmul",
    "__and__": "bitwise_and", "__rand__": "bitwise_and", "__iand__": "bitwise_and",
    "__or__": "bitwise_or", "__ror__": "bitwise_or", "__ior__": "bitwise_or",
    "__xor__": "bitwise_xor", "__rxor__": "bitwise_xor", "__ixor__": "bitwise_xor",
    "__lshift__": "bitwise_left_shift", "__rlshift__": "bitwise_left_shift",
    "__ilshift__": "bitwise_left_shift",
    "__rshift__": "bitwise_right_shift", "__rrshift__": "bitwise_right_shift",
    "__irshift__": "bitwise_right_shift",
    "__eq__": "eq", "__ne__": "ne", "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge",
    "__neg__": "neg", "__abs__": "abs", "__pos__": "positive", "__invert__": "bitwise_not",
}

# Python protocol methods of the tensor core that are entries of the table
# (indexing, conversions to Python numbers), not variants of an op
PROTOCOL_METHODS = frozenset({"__getitem__", "__setitem__", "__bool__", "__int__", "__float__",
                              "__index__"})

# (group, variants) -> the ops with exactly those variants
_DECLARED = {
    ('fft', 'function'): """
        fftshift ifftshift""",
    ('fft', 'function out'): """
        fft fft2 fftfreq fftn hfft hfft2 hfftn ifft ifft2 ifftn ihfft ihfft2 ihfftn irfft irfft2
        irfftn rfft rfft2 rfftfreq rfftn""",
    ('linalg', 'function'): """
        diagonal matrix_exp vander""",
    ('linalg', 'function out'): """
        cond householder_product ldl_factor ldl_factor_ex ldl_solve linalg_cholesky
        linalg_cholesky_ex linalg_cross linalg_det linalg_eig linalg_eigh linalg_eigvals
        linalg_eigvalsh linalg_inv linalg_inv_ex linalg_lstsq linalg_lu_factor linalg_lu_factor_ex
        linalg_pinv linalg_qr linalg_slogdet linalg_solve linalg_solve_ex linalg_svd linalg_svdvals lu
        lu_solve matrix_norm matrix_power matrix_rank multi_dot norm solve_triangular tensorinv
        tensorsolve vecdot vector_norm""",
    ('nn.functional', 'function'): """
        adaptive_avg_pool1d adaptive_avg_pool2d adaptive_avg_pool3d adaptive_max_pool1d
        adaptive_max_pool1d_with_indices adaptive_max_pool2d adaptive_max_pool2d_with_indices
        adaptive_max_pool3d adaptive_max_pool3d_with_indices affine_grid alpha_dropout
        assert_int_or_pair avg_pool1d batch_norm bilinear binary_cross_entropy
        binary_cross_entropy_with_logits channel_shuffle conv1d conv2d conv3d conv_tbc
        conv_transpose1d conv_transpose2d conv_transpose3d cosine_embedding_loss cosine_similarity
        cross_entropy ctc_loss dropout dropout1d dropout2d dropout3d embedding embedding_bag
        feature_alpha_dropout fold fractional_max_pool2d fractional_max_pool2d_with_indices
        fractional_max_pool3d fractional_max_pool3d_with_indices gaussian_nll_loss glu grid_sample
        group_norm grouped_mm gumbel_softmax hardsigmoid hardswish hinge_embedding_loss huber_loss
        instance_norm interpolate kl_div l1_loss layer_norm linear_cross_entropy
        local_response_norm log_softmax lp_pool1d lp_pool2d lp_pool3d margin_ranking_loss
        max_pool1d max_pool1d_with_indices max_pool2d max_pool2d_with_indices max_pool3d
        max_pool3d_with_indices max_unpool1d max_unpool2d max_unpool3d mish mse_loss
        multi_head_attention_forward multi_margin_loss multilabel_margin_loss
        multilabel_soft_margin_loss native_channel_shuffle nll_loss one_hot pad pairwise_distance
        pdist pixel_shuffle pixel_unshuffle poisson_nll_loss prelu relu6 rms_norm
        scaled_dot_product_attention sigmoid silu smooth_l1_loss soft_margin_loss softmax softmin
        softsign tanh tanhshrink triplet_margin_loss triplet_margin_with_distance_loss unfold
        upsample upsample_bilinear upsample_nearest""",
    ('nn.functional', 'function inplace'): """
        celu elu hardtanh leaky_relu relu rrelu selu threshold""",
    ('nn.functional', 'function out'): """
        avg_pool2d avg_pool3d gelu hardshrink linear logsigmoid normalize softplus softshrink""",
    ('ptcore', 'function'): """
        _weight_norm adaptive_avg_pool1d adaptive_max_pool1d as_tensor asarray atleast_1d atleast_2d atleast_3d
        avg_pool1d bartlett_window batch_norm bilinear binary_cross_entropy_with_logits binomial
        blackman_window block_diag broadcast_shapes broadcast_tensors cartesian_prod cdist
        channel_shuffle combinations constant_pad_nd conv1d conv2d conv3d conv_transpose1d
        conv_transpose2d conv_transpose3d convolution cosine_embedding_loss cosine_similarity
        ctc_loss cumulative_trapezoid einsum embedding empty_like empty_permuted empty_strided
        from_dlpack from_numpy full_like gradient group_norm hamming_window hann_window
        hinge_embedding_loss imag instance_norm kaiser_window kl_div layer_norm
        gru lstm rnn_relu rnn_tanh
        margin_ranking_loss max_pool1d max_pool1d_with_indices max_pool2d max_pool3d meshgrid
        native_channel_shuffle native_dropout native_group_norm
        native_layer_norm norm_except_dim ones_like pairwise_distance pdist pixel_shuffle
        pixel_unshuffle poisson poisson_nll_loss rand_like randint_like randn_like real rms_norm
        scalar_tensor segment_reduce slice_inverse tensor trapezoid trapz tril_indices
        triplet_margin_loss triu_indices unravel_index vander view_as_complex view_as_real
        zeros_like""",
    ('ptcore', 'function inplace'): """
        alpha_dropout celu dropout feature_alpha_dropout feature_dropout fill rrelu selu""",
    ('ptcore', 'function inplace out'): """
        normal threshold""",
    ('ptcore', 'function method'): """
        adjoint allclose argwhere as_strided_scatter bincount broadcast_to chunk clone conj corrcoef
        count_nonzero cov det diag_embed diagflat diagonal diagonal_scatter dist dsplit equal
        flatten flip fliplr flipud hsplit is_complex is_conj is_floating_point is_inference is_neg
        is_nonzero is_same_size is_signed isclose isfinite isinf isnan isreal istft logdet
        matrix_exp moveaxis movedim narrow numel permute pinverse prelu ravel repeat_interleave
        reshape resolve_conj resolve_neg roll rot90 rsub select select_scatter split
        split_with_sizes stft tensor_split tile trace unbind unflatten unique unique_consecutive
        unsafe_chunk unsafe_split unsafe_split_with_sizes vsplit""",
    ('ptcore', 'function method inplace'): """
        as_strided detach index_fill index_put masked_fill masked_scatter put relu squeeze swapaxes
        swapdims t transpose unsqueeze""",
    ('ptcore', 'function method inplace out'): """
        absolute acos acosh addbmm addcdiv addcmul addmm addmv addr arccos arccosh arcsin arcsinh
        arctan arctan2 arctanh asin asinh atan atan2 atanh baddbmm bernoulli ceil clamp clamp_max
        clamp_min clip conj_physical copysign cos cosh cumprod cumsum deg2rad digamma divide erf
        erfc erfinv exp exp2 expm1 fix float_power floor fmax fmin fmod frac gcd greater
        greater_equal heaviside hypot i0 igamma igammac index_add index_copy index_reduce lcm ldexp
        lerp less less_equal lgamma log log10 log1p log2 logical_and logical_not logical_or
        logical_xor logit maximum minimum multiply mvlgamma nan_to_num negative nextafter not_equal
        polygamma rad2deg reciprocal renorm round rsqrt scatter scatter_add scatter_reduce sgn
        sigmoid sign sin sinc sinh sqrt square subtract tan tanh tril triu true_divide trunc
        xlogy""",
    ('ptcore', 'function method inplace out operator'): """
        abs add bitwise_and bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift
        bitwise_xor div eq floor_divide ge gt le lt mul ne neg pow remainder sub""",
    ('ptcore', 'function method operator'): """
        positive""",
    ('ptcore', 'function method out'): """
        all amax amin aminmax angle any argmax argmin argsort bmm cholesky cholesky_inverse
        cholesky_solve cross cummax cummin diag diff dot frexp gather geqrf ger hardshrink histc
        histogram index_select inner inverse isneginf isposinf kron kthvalue log_softmax logaddexp
        logaddexp2 logcumsumexp logsumexp lu lu_solve masked_select matrix_power max mean median min
        mm mode msort multinomial mv nanmean nanmedian nanquantile nansum narrow_copy nonzero
        nonzero_static norm orgqr ormqr outer prod qr quantile signbit slice_scatter slogdet softmax
        sort std sum svd take take_along_dim topk triangular_solve var vdot where""",
    ('ptcore', 'function method out operator'): """
        matmul""",
    ('ptcore', 'function out'): """
        _vector_norm alias_copy arange as_strided_copy bucketize cat chain_matmul column_stack
        complex concat concatenate detach_copy diagonal_copy dstack empty expand_copy eye
        frobenius_norm full histogramdd hstack isin linspace logspace lu_unpack native_batch_norm
        nuclear_norm ones
        permute_copy polar rand randint randn randperm range row_stack searchsorted select_copy
        slice_copy split_copy split_with_sizes_copy squeeze_copy stack std_mean t_copy tensordot
        transpose_copy unbind_copy unfold_copy unsqueeze_copy var_mean vector_norm
        view_as_complex_copy view_as_real_copy view_copy vstack zeros""",
    ('ptcore', 'inplace'): """
        apply cauchy copy embedding_renorm exponential fill_diagonal geometric log_normal map map2
        random requires_grad set share_memory uniform zero""",
    ('ptcore', 'method'): """
        as_subclass backward bfloat16 bool byte cdouble cfloat chalf char const_data_ptr
        contiguous cpu cuda data_ptr dense_dim dim dim_order double eig element_size expand
        expand_as float get_device half int ipu is_contiguous is_distributed
        is_non_overlapping_and_dense is_pinned is_set_to is_shared item long lstsq module_load
        mtia ndimension nelement new new_empty new_empty_strided new_full new_ones new_tensor
        new_zeros numpy pin_memory record_stream register_hook register_post_accumulate_grad_hook
        reinforce repeat reshape_as retain_grad short size solve sparse_dim sparse_mask storage
        storage_offset storage_type stride sum_to_size symeig to to_dense to_device to_sparse
        to_sparse_coo to_sparse_csc to_sparse_csr tolist type type_as unfold untyped_storage view
        view_as xpu""",
    ('ptcore', 'method inplace'): """
        resize resize_as""",
    ('special', 'function'): """
        log_softmax softmax""",
    ('special', 'function out'): """
        airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 chebyshev_polynomial_t
        chebyshev_polynomial_u chebyshev_polynomial_v chebyshev_polynomial_w digamma entr erf erfc
        erfcx erfinv exp2 expit expm1 gammainc gammaincc gammaln hermite_polynomial_h
        hermite_polynomial_he i0 i0e i1 i1e laguerre_polynomial_l legendre_polynomial_p log1p
        log_ndtr logit logsumexp modified_bessel_i0 modified_bessel_i1 modified_bessel_k0
        modified_bessel_k1 multigammaln ndtr ndtri polygamma psi round scaled_modified_bessel_k0
        scaled_modified_bessel_k1 shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u
        shifted_chebyshev_polynomial_v shifted_chebyshev_polynomial_w sinc spherical_bessel_j0
        xlog1py xlogy zeta""",
}

# (group, op) -> frozenset of its variants
VARIANTS = {}


def _build():
    for (group, kinds), ops in _DECLARED.items():
        v = frozenset(kinds.split())
        if not v <= set(KINDS):
            raise ValueError(f"variants of {group}: unknown kinds in {kinds!r}")
        for op in ops.split():
            if (group, op) in VARIANTS:
                raise ValueError(f"variants: {group}.{op} declared twice")
            VARIANTS[(group, op)] = v


_build()

_GROUP = {"ptcore": "ptcore", "Tensor": "ptcore", "nn.functional": "nn.functional",
          "linalg": "linalg", "fft": "fft", "special": "special"}


def base_of(namespace, name):
    """``(group, op)`` whose variant ``namespace.name`` is, or None (custom
    ops and the tensor core's protocol methods)."""
    group = _GROUP.get(namespace)
    if group is None or name in PROTOCOL_METHODS:
        return None
    if name.startswith("__") and name.endswith("__"):
        return group, OPERATOR_METHODS.get(name, name)
    if name.endswith("_") and not name.startswith("_"):
        return group, name[:-1]
    return group, name


def variants_of(namespace, name):
    """The declared variants of the op that ``namespace.name`` is a form of
    (an empty frozenset when it is not declared)."""
    key = base_of(namespace, name)
    return VARIANTS.get(key, frozenset()) if key is not None else frozenset()
