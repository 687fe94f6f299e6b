"""The operator table: one :class:`OpDef` per public op.

An op is declared by the module that implements it (the function with its
name, family, and whether it is also a Tensor method); the table adds what
later passes read: its tags (pointwise, reduction, view, inplace, random,
nondeterministic), its autocast category, and the autograd body that
:mod:`ptcore.autograd` supplies.  :mod:`ptcore._dispatch.generate` makes the
public callables (``ptcore.X``, ``Tensor.X``, ``nn.functional.X``) from it,
each an entry of the one dispatch point (:mod:`ptcore._dispatch.dispatcher`).
"""

from ptcore._dispatch.variants import variants_of

__all__ = ["OpDef", "OPS", "declare", "lookup", "op_of"]


class OpDef:
    """One public op: ``name`` (PyTorch's), the implementation ``raw`` (the
    device-routing front-end), ``body`` (``raw`` under autograd recording),
    its ``family`` (the module group it belongs to), ``tags`` and the
    ``autocast`` category (``"lower"``, ``"fp32"``, ``"promote"`` or None).
    ``kernels`` maps a device type (``"cuda"``) to the op's kernel there
    (see :mod:`ptcore._dispatch.device`); the CPU kernel is ``raw``.
    ``variants`` are the forms the op is declared with in
    :mod:`ptcore._dispatch.variants` (function, method, inplace, out,
    operator), shared by the OpDefs of those forms."""

    __slots__ = ("name", "raw", "body", "family", "tags", "autocast", "aliases", "kind", "namespace",
                 "_hooked_body", "_body_factory", "kernels", "device_bodies", "variants",
                 "device_fast", "__weakref__")

    def __init__(self, name, raw, family="", kind="function", tags=(), namespace=None):
        self.name = name
        self.namespace = namespace or ("Tensor" if kind == "method" else "ptcore")
        self.raw = raw
        self.body = raw
        self.family = family
        self.kind = kind
        self.tags = frozenset(tags) | _tags_of(name, family, kind)
        self.autocast = autocast_category(name)
        self.aliases = []
        self._hooked_body = None
        self._body_factory = None
        self.kernels = {}
        self.device_bodies = {}
        # (args, kwargs) -> result, or None for the device layer: a call with
        # an argument off the CPU tries it first while no other layer is on
        # (autograd sets it for the elementwise ops with a C fast path on
        # devices, see ptcore.autograd._record.device_fast_binary)
        self.device_fast = None
        self.variants = variants_of(self.namespace, name)

    def __repr__(self):
        return f"<op {self.name} ({self.family}, {self.kind})>"


# (namespace, name) -> OpDef for every public op, namespace one of "ptcore",
# "Tensor", "nn.functional", "linalg"; entries (the public callables) -> OpDef
OPS = {}
_BY_ENTRY = {}


def declare(name, raw, family="", kind="function", tags=(), namespace=None):
    """Declare (or extend) the op ``name`` of ``namespace`` implemented by ``raw``."""
    d = OpDef(name, raw, family, kind, tags, namespace)
    key = (d.namespace, name)
    old = OPS.get(key)
    if old is not None:
        return old
    OPS[key] = d
    return d


def lookup(name, namespace="ptcore"):
    return OPS.get((namespace, name))


def op_of(entry):
    """The OpDef behind a public callable, or None."""
    try:
        return _BY_ENTRY.get(entry)
    except TypeError:       # unhashable: not an entry
        return None


def _register_entry(entry, opdef):
    _BY_ENTRY[entry] = opdef


# ---------------------------------------------------------------------------
# tags
# ---------------------------------------------------------------------------

_FAMILY_TAGS = {
    "pointwise": "pointwise", "reduction": "reduction", "shape": "view",
    "random": "random", "linalg": "linalg", "sorting": "sorting", "indexing": "indexing",
}
_RANDOM = {"rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial",
           "rand_like", "randn_like", "randint_like", "poisson", "binomial", "dropout",
           "alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d", "dropout3d",
           "rrelu", "random_", "uniform_", "normal_", "exponential_", "geometric_",
           "cauchy_", "log_normal_", "bernoulli_", "gumbel_softmax"}
# ops whose CPU or CUDA kernels accumulate in an order that may vary (atomics
# on CUDA): PyTorch's use_deterministic_algorithms list
_NONDETERMINISTIC = {"index_add", "index_add_", "scatter_add", "scatter_add_", "scatter_reduce",
                     "scatter_reduce_", "index_put", "index_put_", "put_", "put", "bincount",
                     "histc", "embedding_bag", "ctc_loss", "nll_loss", "cumsum", "kthvalue",
                     "median", "index_copy", "index_copy_", "interpolate", "grid_sample"}

# factory functions: no tensor argument for a subclass to dispatch on (modes
# still see them); torch.overrides lists them among the ignored functions
_FACTORY = {"tensor", "as_tensor", "asarray", "arange", "range", "linspace", "logspace", "eye",
            "empty", "zeros", "ones", "full", "empty_strided", "rand", "randn", "randint",
            "randperm", "normal", "from_numpy", "frombuffer", "scalar_tensor", "tril_indices",
            "triu_indices", "hann_window", "hamming_window", "bartlett_window",
            "blackman_window", "kaiser_window", "rand_like", "sparse_coo_tensor",
            "empty_permuted", "is_tensor"}


def _tags_of(name, family, kind):
    tags = set()
    t = _FAMILY_TAGS.get(family)
    if t:
        tags.add(t)
    if kind == "inplace" or (name.endswith("_") and not name.startswith("_")):
        tags.add("inplace")
    if name in _RANDOM:
        tags.add("random")
    if name in _NONDETERMINISTIC:
        tags.add("nondeterministic")
    if kind == "function" and name in _FACTORY:
        tags.add("factory")
    return frozenset(tags)


# ---------------------------------------------------------------------------
# autocast categories (PyTorch's CPU/CUDA autocast op lists)
# ---------------------------------------------------------------------------

# run in the autocast dtype (float16/bfloat16)
AUTOCAST_LOWER = frozenset({
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "conv_tbc", "bmm", "mm", "linalg_vecdot", "baddbmm", "addmm", "addbmm", "linear", "matmul",
    "prelu", "scaled_dot_product_attention", "addmv", "addr", "chain_matmul", "multi_dot",
    "mv", "_product",
})
# run in float32
AUTOCAST_FP32 = frozenset({
    "avg_pool3d", "binary_cross_entropy", "grid_sample", "polar", "prod", "quantile",
    "nanquantile", "stft", "cdist", "trace", "view_as_complex", "cholesky", "cholesky_inverse",
    "cholesky_solve", "inverse", "lu_solve", "orgqr", "ormqr", "pinverse", "max_pool3d",
    "max_unpool2d", "max_unpool3d", "adaptive_avg_pool3d", "reflection_pad1d",
    "reflection_pad2d", "replication_pad1d", "replication_pad2d", "replication_pad3d",
    "mse_loss", "cosine_embedding_loss", "nll_loss", "hinge_embedding_loss", "poisson_nll_loss",
    "smooth_l1_loss", "cross_entropy", "l1_loss", "huber_loss", "margin_ranking_loss",
    "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss", "ctc_loss", "kl_div",
    "multilabel_margin_loss", "binary_cross_entropy_with_logits", "fft_fft", "fft_ifft",
    "fft_fft2", "fft_ifft2", "fft_fftn", "fft_ifftn", "fft_rfft", "fft_irfft", "fft_rfft2",
    "fft_irfft2", "fft_rfftn", "fft_irfftn", "fft_hfft", "fft_ihfft", "linalg_cond",
    "linalg_matrix_rank", "linalg_solve", "linalg_cholesky", "linalg_svdvals",
    "linalg_eigvals", "linalg_eigvalsh", "linalg_inv", "linalg_householder_product",
    "linalg_tensorinv", "linalg_tensorsolve", "fake_quantize_per_tensor_affine", "geqrf",
    "_lu_with_info", "qr", "svd", "triangular_solve", "fractional_max_pool2d",
    "fractional_max_pool3d", "adaptive_max_pool3d", "multilabel_margin_loss_forward",
    "linalg_qr", "linalg_cholesky_ex", "linalg_svd", "linalg_eig", "linalg_eigh",
    "linalg_lstsq", "linalg_inv_ex",
})
# run in the widest floating dtype of the arguments
AUTOCAST_PROMOTE = frozenset({"stack", "cat", "index_copy"})


def autocast_category(name):
    if name in AUTOCAST_LOWER:
        return "lower"
    if name in AUTOCAST_FP32:
        return "fp32"
    if name in AUTOCAST_PROMOTE:
        return "promote"
    return None
