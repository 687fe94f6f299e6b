"""Sweep the operator table on the (emulated) CUDA device.

For every public op of ``ptcore._dispatch.table.OPS`` (``linalg.*`` and the
factory functions left out: the linalg ops belong to the cuSOLVER work, the
factories take no tensor), find a sample call that runs on the CPU -- a
hand-written one from ``SAMPLES`` or the first of a few generic argument
lists that the CPU accepts -- then run the same call with every tensor moved
to ``cuda`` and compare ``.cpu()`` of the result with the CPU result.

Each op gets one status:

* ``OK``      same values, dtypes and shapes on both devices;
* ``NOTIMPL`` ``NotImplementedError`` on CUDA (no kernel yet);
* ``ERROR``   another exception on CUDA that the CPU did not raise;
* ``WRONG``   a result that differs from the CPU's;
* ``NOSAMPLE`` no sample call the CPU accepts (the op is not exercised).

Usage (from the repository root)::

    PYTHONPATH=$PWD python tools/cuda_coverage.py [--only NAME ...] [--status NOTIMPL,ERROR]

``PTCORE_CUDA_EMULATE`` is set to 1 when unset, so the sweep runs without a
GPU.  Complex dtypes are not swept (that is the complex-on-CUDA work).
"""
import argparse
import math
import os
import sys
import traceback

os.environ.setdefault("PTCORE_CUDA_EMULATE", "1")

import numpy as np  # noqa: E402

import ptcore  # noqa: E402
import ptcore.fft  # noqa: E402,F401
import ptcore.nn.functional as F  # noqa: E402
import ptcore.special  # noqa: E402,F401


def _x(*shape, lo=0.1, hi=2.0, dtype=None, seed=0):
    g = np.random.default_rng(seed + len(shape) * 7 + sum(shape))
    return ptcore.tensor(g.uniform(lo, hi, size=shape), dtype=dtype or ptcore.float32)


def _i(*shape, hi=4, dtype=None, seed=1):
    g = np.random.default_rng(seed + sum(shape))
    return ptcore.tensor(g.integers(0, hi, size=shape), dtype=dtype or ptcore.int64)


# hand-written sample calls: name -> fn(P) returning (args, kwargs); P is ptcore.
# Keys "ns.name" (ns one of ptcore/Tensor/nn.functional/special/fft) win over bare names.
def _samples():
    x34 = lambda: _x(3, 4)  # noqa: E731
    img = lambda: _x(2, 3, 5, 6)  # noqa: E731
    S = {
        "einsum": lambda: (("ij,jk->ik", _x(3, 4), _x(4, 2)), {}),
        "kron": lambda: ((_x(2, 3), _x(3, 2)), {}),
        "baddbmm": lambda: ((_x(2, 3, 5), _x(2, 3, 4), _x(2, 4, 5)), {"beta": 0.5, "alpha": 2.0}),
        "baddbmm_": lambda: ((_x(2, 3, 5), _x(2, 3, 4), _x(2, 4, 5)), {"beta": 0.5, "alpha": 2.0}),
        "addbmm": lambda: ((_x(3, 5), _x(2, 3, 4), _x(2, 4, 5)), {"beta": 0.5, "alpha": 2.0}),
        "addbmm_": lambda: ((_x(3, 5), _x(2, 3, 4), _x(2, 4, 5)), {"beta": 0.5, "alpha": 2.0}),
        "addmm_": lambda: ((_x(3, 5), _x(3, 4), _x(4, 5)), {"beta": 0.5, "alpha": 2.0}),
        "addmv": lambda: ((_x(3), _x(3, 4), _x(4)), {"beta": 0.5, "alpha": 2.0}),
        "addmv_": lambda: ((_x(3), _x(3, 4), _x(4)), {"beta": 0.5, "alpha": 2.0}),
        "addr": lambda: ((_x(3, 4), _x(3), _x(4)), {"beta": 0.5, "alpha": 2.0}),
        "addr_": lambda: ((_x(3, 4), _x(3), _x(4)), {"beta": 0.5, "alpha": 2.0}),
        "mv": lambda: ((_x(3, 4), _x(4)), {}),
        "dot": lambda: ((_x(4), _x(4, seed=3)), {}),
        "vdot": lambda: ((_x(4), _x(4, seed=3)), {}),
        "inner": lambda: ((_x(3, 4), _x(2, 4)), {}),
        "outer": lambda: ((_x(3), _x(4)), {}),
        "ger": lambda: ((_x(3), _x(4)), {}),
        "tensordot": lambda: ((_x(3, 4, 2), _x(4, 2, 5)), {"dims": 2}),
        "chain_matmul": lambda: ((_x(3, 4), _x(4, 2), _x(2, 5)), {}),
        "matrix_power": lambda: ((_x(3, 3), 3), {}),
        "cdist": lambda: ((_x(2, 4, 3), _x(2, 5, 3)), {}),
        "pdist": lambda: ((_x(5, 3),), {}),
        "searchsorted": lambda: ((ptcore.tensor([0.1, 0.5, 0.9, 1.5]), _x(3, 2)), {}),
        "bucketize": lambda: ((_x(3, 2), ptcore.tensor([0.1, 0.5, 0.9, 1.5])), {}),
        "histc": lambda: ((_x(20),), {"bins": 6, "min": 0.0, "max": 2.0}),
        "histogram": lambda: ((_x(20), 5), {}),
        "bincount": lambda: ((_i(12, hi=6),), {"weights": _x(12), "minlength": 8}),
        "quantile": lambda: ((_x(3, 7), ptcore.tensor([0.1, 0.5, 0.93])), {"dim": 1}),
        "nanquantile": lambda: ((ptcore.tensor([[0.3, float("nan"), 1.2, 0.1], [0.4, 0.2, 0.9, 3.0]]),
                                 0.4), {"dim": 1}),
        "unique": lambda: ((_i(5, 3, hi=2),), {"dim": 0, "return_inverse": True, "return_counts": True}),
        "stft": lambda: ((_x(40), 8), {"hop_length": 4, "window": ptcore.hann_window(8),
                                       "return_complex": False}),
        "istft": lambda: ((ptcore.stft(_x(40), 8, hop_length=4, window=ptcore.hann_window(8),
                                       return_complex=True), 8),
                          {"hop_length": 4, "window": ptcore.hann_window(8)}),
        "nn.functional.pad": lambda: ((img(), (1, 2, 2, 1)), {"mode": "reflect"}),
        "constant_pad_nd": lambda: ((x34(), (1, 2)), {"value": 1.5}),
        "nn.functional.interpolate": lambda: ((img(),), {"scale_factor": 2, "mode": "bilinear",
                                                         "align_corners": False}),
        "nn.functional.upsample": lambda: ((img(),), {"scale_factor": 2, "mode": "nearest"}),
        "nn.functional.upsample_nearest": lambda: ((img(),), {"scale_factor": 2}),
        "nn.functional.upsample_bilinear": lambda: ((img(),), {"scale_factor": 2}),
        "nn.functional.grid_sample": lambda: ((img(), _x(2, 4, 3, 2, lo=-1.1, hi=1.1)),
                                              {"align_corners": False}),
        "nn.functional.affine_grid": lambda: ((_x(2, 2, 3, lo=-1, hi=1), [2, 3, 4, 5]),
                                              {"align_corners": False}),
        "pixel_shuffle": lambda: ((_x(1, 8, 2, 3), 2), {}),
        "pixel_unshuffle": lambda: ((_x(1, 2, 4, 6), 2), {}),
        "channel_shuffle": lambda: ((_x(1, 6, 2, 2), 3), {}),
        "native_channel_shuffle": lambda: ((_x(1, 6, 2, 2), 3), {}),
        "nn.functional.embedding_bag": lambda: ((_i(2, 3, hi=5), _x(5, 3)), {"mode": "mean"}),
        "ctc_loss": lambda: ((_x(6, 2, 4, lo=-2, hi=0).log_softmax(2), _i(2, 3, hi=3) + 1,
                              [6, 5], [3, 2]), {}),
        "nn.functional.ctc_loss": lambda: ((_x(6, 2, 4, lo=-2, hi=0).log_softmax(2),
                                            _i(2, 3, hi=3) + 1, [6, 5], [3, 2]), {}),
        "cross": lambda: ((_x(4, 3), _x(4, 3, seed=5)), {"dim": 1}),
        "repeat_interleave": lambda: ((x34(), ptcore.tensor([1, 0, 2])), {"dim": 0}),
        "diagflat": lambda: ((_x(3),), {"offset": 1}),
        "narrow_copy": lambda: ((x34(), 1, 1, 2), {}),
        "row_stack": lambda: (([_x(4), _x(4, seed=2)],), {}),
        "isin": lambda: ((_i(3, 4, hi=6), ptcore.tensor([1, 3])), {}),
        "prelu": lambda: ((_x(2, 3, 4, lo=-1, hi=1), _x(3)), {}),
        "bilinear": lambda: ((_x(2, 3), _x(2, 4), _x(5, 3, 4), _x(5)), {}),
        "nn.functional.bilinear": lambda: ((_x(2, 3), _x(2, 4), _x(5, 3, 4), _x(5)), {}),
        "cosine_similarity": lambda: ((x34(), _x(3, 4, seed=4)), {}),
        "pairwise_distance": lambda: ((x34(), _x(3, 4, seed=4)), {}),
        "cosine_embedding_loss": lambda: ((x34(), _x(3, 4, seed=4), ptcore.tensor([1.0, -1.0, 1.0])),
                                          {}),
        "margin_ranking_loss": lambda: ((_x(4), _x(4, seed=2), ptcore.tensor([1.0, -1.0, 1.0, -1.0])),
                                        {}),
        "hinge_embedding_loss": lambda: ((x34(), ptcore.tensor([[1.0, -1, 1, -1]] * 3)), {}),
        "triplet_margin_loss": lambda: ((x34(), _x(3, 4, seed=4), _x(3, 4, seed=9)), {}),
        "nn.functional.triplet_margin_with_distance_loss":
            lambda: ((x34(), _x(3, 4, seed=4), _x(3, 4, seed=9)), {}),
        "kl_div": lambda: ((x34().log(), _x(3, 4, seed=4)), {}),
        "poisson_nll_loss": lambda: ((x34(), _x(3, 4, seed=4)), {}),
        "binary_cross_entropy_with_logits": lambda: ((x34(), _x(3, 4, lo=0, hi=1)), {}),
        "nn.functional.multi_margin_loss": lambda: ((x34(), _i(3, hi=4)), {}),
        "nn.functional.multilabel_margin_loss": lambda: ((x34(), ptcore.tensor([[1, 0, -1, 2]] * 3)),
                                                         {}),
        "nn.functional.one_hot": lambda: ((_i(5, hi=4),), {"num_classes": 5}),
        "nn.functional.max_unpool1d": lambda: (F.max_pool1d(_x(1, 2, 8), 2, return_indices=True),
                                               {"kernel_size": 2}),
        "nn.functional.max_unpool2d": lambda: (F.max_pool2d(_x(1, 2, 4, 4), 2, return_indices=True),
                                               {"kernel_size": 2}),
        "nn.functional.max_unpool3d": lambda: (F.max_pool3d(_x(1, 1, 4, 4, 4), 2,
                                                            return_indices=True), {"kernel_size": 2}),
        "max_pool1d_with_indices": lambda: ((_x(1, 2, 8), 2), {}),
        "adaptive_max_pool1d": lambda: ((_x(1, 2, 8), 3), {}),
        "convolution": lambda: ((_x(1, 2, 5, 5), _x(3, 2, 3, 3), None, [1, 1], [0, 0], [1, 1], False,
                                 [0, 0], 1), {}),
        "nn.functional.conv_tbc": lambda: ((_x(5, 2, 3), _x(3, 3, 4), _x(4)), {"pad": 1}),
        "native_batch_norm": lambda: ((_x(4, 3), _x(3), _x(3), _x(3), _x(3), False, 0.1, 1e-5), {}),
        "native_layer_norm": lambda: ((x34(), [4], _x(4), _x(4), 1e-5), {}),
        "native_group_norm": lambda: ((_x(2, 4, 3), _x(4), _x(4), 2, 4, 3, 2, 1e-5), {}),
        "instance_norm": lambda: ((_x(2, 3, 5),), {}),
        "rms_norm": lambda: ((x34(), [4]), {}),
        "embedding_renorm_": lambda: ((_x(5, 3), _i(4, hi=5), 1.0, 2.0), {}),
        "threshold": lambda: ((x34(), 1.0, 0.5), {}),
        "threshold_": lambda: ((x34(), 1.0, 0.5), {}),
        "hardshrink": lambda: ((_x(3, 4, lo=-1, hi=1),), {}),
        "diag_embed": lambda: ((x34(),), {}),
        "special.multigammaln": lambda: ((_x(3, 4, lo=2, hi=4), 2), {}),
        "special.gammainc": lambda: ((x34(), _x(3, 4, seed=4)), {}),
        "special.gammaincc": lambda: ((x34(), _x(3, 4, seed=4)), {}),
        "special.xlog1py": lambda: ((x34(), _x(3, 4, seed=4)), {}),
        "special.zeta": lambda: ((_x(3, 4, lo=1.5, hi=3), _x(3, 4, seed=4)), {}),
        "special.softmax": lambda: ((x34(), 1), {}),
        "special.log_softmax": lambda: ((x34(), 1), {}),
        "fft.fftshift": lambda: ((x34(),), {}),
        "conv3d": lambda: ((_x(1, 2, 4, 4, 4), _x(3, 2, 2, 2, 2)), {}),
        "conv_transpose1d": lambda: ((_x(1, 2, 5), _x(2, 3, 3)), {"stride": 2}),
        "conv_transpose2d": lambda: ((_x(1, 2, 4, 4), _x(2, 3, 3, 3)), {"stride": 2}),
        "conv_transpose3d": lambda: ((_x(1, 2, 3, 3, 3), _x(2, 1, 2, 2, 2)), {}),
        "nn.functional.fold": lambda: ((_x(1, 4, 9),), {"output_size": (4, 4), "kernel_size": 2}),
        "nn.functional.lp_pool1d": lambda: ((_x(1, 2, 8), 2.0, 2), {}),
        "nn.functional.lp_pool2d": lambda: ((_x(1, 2, 4, 4), 2.0, 2), {}),
        "nn.functional.lp_pool3d": lambda: ((_x(1, 1, 4, 4, 4), 2.0, 2), {}),
        "nn.functional.binary_cross_entropy": lambda: ((_x(3, 4, lo=0.1, hi=0.9),
                                                        _x(3, 4, lo=0, hi=1, seed=3)), {}),
        "nn.functional.fractional_max_pool2d": lambda: ((_x(1, 2, 6, 6), 2),
                                                        {"output_size": (3, 3)}),
        "nn.functional.fractional_max_pool3d": lambda: ((_x(1, 1, 6, 6, 6), 2),
                                                        {"output_size": (3, 3, 3)}),
        "batch_norm": lambda: ((_x(4, 3), _x(3), _x(3), _x(3), _x(3), True, 0.1, 1e-5, False), {}),
        "instance_norm": lambda: ((_x(2, 3, 5), None, None, None, None, True, 0.1, 1e-5, False), {}),
        "poisson_nll_loss": lambda: ((_x(3, 4), _x(3, 4, seed=4), True, False, 1e-8, 1), {}),
        "nn.functional.multi_head_attention_forward":
            lambda: ((_x(3, 1, 4), _x(3, 1, 4), _x(3, 1, 4), 4, 2, _x(12, 4), _x(12), None, None,
                      False, 0.0, _x(4, 4), _x(4)), {"training": False}),
        "renorm": lambda: ((x34(), 2, 0, 1.0), {}),
        "renorm_": lambda: ((x34(), 2, 0, 1.0), {}),
        "unravel_index": lambda: ((ptcore.tensor([3, 7]), (3, 4)), {}),
        "float_power_": lambda: ((_x(3, 4, dtype=ptcore.float64), 2), {}),
        "fft.ifftshift": lambda: ((x34(),), {}),
        # indexing: scatter/index/put families
        "scatter": lambda: ((x34(), 1, _i(3, 2, hi=4), _x(3, 2, seed=3)), {}),
        "scatter_add": lambda: ((x34(), 1, _i(3, 2, hi=4), _x(3, 2, seed=3)), {}),
        "scatter_reduce": lambda: ((x34(), 1, _i(3, 2, hi=4), _x(3, 2, seed=3), "amax"),
                                   {"include_self": False}),
        "index_add": lambda: ((x34(), 0, ptcore.tensor([2, 0, 2]), _x(3, 4, seed=3)), {"alpha": 2.0}),
        "index_copy": lambda: ((x34(), 0, ptcore.tensor([2, 0]), _x(2, 4, seed=3)), {}),
        "index_fill": lambda: ((x34(), 1, ptcore.tensor([3, 0]), -1.5), {}),
        "index_put": lambda: ((x34(), (ptcore.tensor([0, 2, 0]), ptcore.tensor([1, 3, 1])),
                               ptcore.tensor([7.0, 8.0, 9.0])), {"accumulate": True}),
        "index_reduce": lambda: ((x34(), 0, ptcore.tensor([2, 0, 2]), _x(3, 4, seed=3), "prod"), {}),
        "masked_scatter": lambda: ((x34(), _x(3, 4, seed=5) > 1.0, _x(12, seed=6)), {}),
        "put": lambda: ((x34(), ptcore.tensor([0, 5, 11, 5]), ptcore.tensor([1.0, 2.0, 3.0, 4.0])),
                        {"accumulate": True}),
        "select_scatter": lambda: ((x34(), _x(4, seed=3), 0, 1), {}),
        "as_strided_scatter": lambda: ((_x(4, 4), _x(2, 2, seed=3), (2, 2), (4, 1)), {"storage_offset": 1}),
        "as_strided": lambda: ((_x(4, 4), (2, 3), (4, 1)), {"storage_offset": 1}),
        "nonzero_static": lambda: ((_x(3, 4) > 1.0,), {"size": 8}),
        # views and their copies
        "select": lambda: ((x34(), 1, 2), {}),
        "narrow": lambda: ((x34(), 1, 1, 2), {}),
        "transpose": lambda: ((x34(), 0, 1), {}),
        "movedim": lambda: ((_x(2, 3, 4), 0, 2), {}),
        "reshape": lambda: ((x34(), (4, 3)), {}),
        "broadcast_to": lambda: ((_x(3, 1), (3, 4)), {}),
        "unfold_copy": lambda: ((x34(), 1, 2, 1), {}),
        "unflatten": lambda: ((x34(), 1, (2, 2)), {}),
        "is_nonzero": lambda: ((_x(1),), {}),
        "Tensor.__rmatmul__": lambda: ((_x(4, 5), _x(3, 4)), {}),
        # samplers (the same Philox stream on both devices)
        "geometric_": lambda: ((x34(), 0.3), {}),
        "dropout": lambda: ((x34(), 0.3, True), {}),
        "nn.functional.fractional_max_pool2d_with_indices": lambda: ((_x(1, 2, 6, 6), 2),
                                                                     {"output_size": (3, 3)}),
        "nn.functional.fractional_max_pool3d_with_indices": lambda: ((_x(1, 1, 6, 6, 6), 2),
                                                                     {"output_size": (3, 3, 3)}),
        # norms
        "nn.functional.batch_norm": lambda: ((_x(4, 3), _x(3), _x(3)), {"training": True}),
        "nn.functional.instance_norm": lambda: ((_x(2, 3, 5),), {}),
        "ptcore.polygamma": lambda: ((1, x34()), {}),
        "special.polygamma": lambda: ((1, x34()), {}),
    }
    for k, base in (("scatter_", "scatter"), ("scatter_add_", "scatter_add"), ("scatter_reduce_", "scatter_reduce"),
                    ("index_add_", "index_add"), ("index_copy_", "index_copy"), ("index_fill_", "index_fill"),
                    ("index_put_", "index_put"), ("index_reduce_", "index_reduce"),
                    ("masked_scatter_", "masked_scatter"), ("put_", "put"), ("as_strided_", "as_strided"),
                    ("as_strided_copy", "as_strided"), ("select_copy", "select"), ("transpose_", "transpose"),
                    ("transpose_copy", "transpose"), ("swapaxes", "transpose"), ("swapaxes_", "transpose"),
                    ("swapdims", "transpose"), ("swapdims_", "transpose"), ("moveaxis", "movedim"),
                    ("view_copy", "reshape"), ("expand_copy", "broadcast_to"), ("dropout_", "dropout"),
                    ("feature_dropout", "dropout"), ("feature_dropout_", "dropout"), ("alpha_dropout", "dropout"),
                    ("alpha_dropout_", "dropout"), ("feature_alpha_dropout", "dropout"),
                    ("feature_alpha_dropout_", "dropout"), ("native_dropout", "dropout")):
        S[k] = S[base]
    for k in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
              "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
              "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
              "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"):
        S["special." + k] = lambda: ((_x(3, 4, lo=-1, hi=1), _i(3, 4, hi=5)), {})
    return S


def _generic():
    """Argument lists tried in order for an op with no hand-written sample."""
    return [
        lambda: ((_x(3, 4),), {}),
        lambda: ((_x(3, 4), _x(3, 4, seed=5)), {}),
        lambda: ((_x(3, 4), 1), {}),
        lambda: ((_x(3, 4), 2.0), {}),
        lambda: ((_x(3, 4), _x(3, 4, seed=5), _x(3, 4, seed=6)), {}),
        lambda: ((_x(2, 3, 6, 6), 2), {}),
        lambda: ((_x(2, 3, 6), 2), {}),
        lambda: ((_x(3, 4), _i(3, hi=4)), {}),
        lambda: ((_x(3, 4),), {"dim": 1}),
        lambda: ((_x(4, 4),), {}),
        lambda: ((_x(4),), {}),
        lambda: ((_i(3, 4),), {}),
        lambda: ((_x(3, 4) > 1.0,), {}),
        lambda: ((_i(3, 4, hi=9), _i(3, 4, hi=3, seed=7)), {}),
        lambda: ((_x(3, 4), _x(4, 5)), {}),
        lambda: ((_x(2, 3, 4), _x(2, 4, 5)), {}),
        lambda: ((_x(3, 5), _x(3, 4), _x(4, 5)), {}),
        lambda: ((_x(3, 4), 1, _i(3, 2, hi=4)), {}),
        lambda: ((_x(3, 4), 0, _i(2, hi=3)), {}),
        lambda: ((_x(3, 4), _x(3, 4) > 1.0, 0.5), {}),
        lambda: ((_x(3, 4), _x(3, 4) > 1.0), {}),
        lambda: (([_x(3, 4), _x(3, 4, seed=5)],), {}),
        lambda: ((_x(3, 4), [2, 1]), {}),
        lambda: ((_x(3, 4), (1, 0)), {}),
        lambda: ((_x(2, 3, 6, 6), _x(4, 3, 3, 3)), {}),
        lambda: ((_x(2, 3, 6), _x(4, 3, 3)), {}),
        lambda: ((_x(2, 3, 6), [6]), {}),
        lambda: ((_x(2, 3, 6), None, None), {"training": True}),
        lambda: ((_x(3, 4), _x(3, 4, lo=0, hi=1)), {}),
        lambda: ((_i(5, hi=4), _x(4, 3)), {}),
    ]


def _to(obj, dev):
    if isinstance(obj, ptcore.Tensor):
        return obj.to(dev)
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(_to(o, dev) for o in obj)
    if isinstance(obj, dict):
        return {k: _to(v, dev) for k, v in obj.items()}
    return obj


def _call(fn, args, kwargs):
    ptcore.manual_seed(0)
    args = tuple(a.clone() if isinstance(a, ptcore.Tensor) else a for a in args)
    return fn(*args, **kwargs)


def _same(a, b, where="result", values=True):
    """None when ``a`` (CUDA run) equals ``b`` (CPU run), else the difference
    (only devices, dtypes and shapes unless ``values``)."""
    if isinstance(b, ptcore.Tensor):
        if not isinstance(a, ptcore.Tensor):
            return f"{where}: {type(a).__name__} instead of a Tensor"
        if a.device.type != "cuda":
            return f"{where}: result on {a.device}, not on cuda"
        if a.dtype != b.dtype or tuple(a.shape) != tuple(b.shape):
            return f"{where}: {a.dtype}{list(a.shape)} vs CPU {b.dtype}{list(b.shape)}"
        if not values:
            return None
        if a.is_complex() or b.is_complex():
            an, bn = a.detach().cpu().numpy(), b.detach().cpu().numpy()
        else:
            an = a.detach().cpu().to(ptcore.float64 if a.is_floating_point() else a.dtype).numpy()
            bn = b.detach().cpu().to(ptcore.float64 if b.is_floating_point() else b.dtype).numpy()
        tol = 1e-2 if b.dtype in (ptcore.float16, ptcore.bfloat16) else 2e-5
        if not np.allclose(an, bn, rtol=tol, atol=tol, equal_nan=True):
            return f"{where}: values differ (max |diff| {np.nanmax(np.abs(an - bn)) if an.size else 0})"
        return None
    if isinstance(b, (list, tuple)):
        if not isinstance(a, (list, tuple)) or len(a) != len(b):
            return f"{where}: {type(a).__name__} vs CPU {type(b).__name__}"
        for k, (x, y) in enumerate(zip(a, b)):
            r = _same(x, y, f"{where}[{k}]", values)
            if r:
                return r
        return None
    if isinstance(b, float) and isinstance(a, float) and math.isnan(b) and math.isnan(a):
        return None
    if not values:
        return None if type(a) is type(b) else f"{where}: {type(a).__name__} vs CPU {type(b).__name__}"
    if type(a) is not type(b) or a != b:
        return f"{where}: {a!r} vs CPU {b!r}"
    return None


# results that differ between devices by nature (addresses; the rejection
# samplers, whose CUDA kernels draw from per-element streams)
_NO_VALUES = frozenset({"data_ptr", "const_data_ptr", "mutable_data_ptr", "poisson", "binomial"})


def _ops():
    from ptcore._dispatch.table import OPS
    out = []
    for (ns, name), d in sorted(OPS.items()):
        if ns == "linalg" or d.kind == "core" or "factory" in d.tags:
            continue
        fn = _resolve(ns, name)
        if fn is not None:
            out.append((ns, name, fn, d))
    return out


def _resolve(ns, name):
    if ns == "Tensor":
        f = getattr(ptcore.Tensor, name, None)
        return None if f is None else (lambda *a, _f=f, **k: _f(*a, **k))
    mod = {"ptcore": ptcore, "nn.functional": F, "special": ptcore.special, "fft": ptcore.fft}.get(ns)
    return getattr(mod, name, None) if mod is not None else None


def sweep(only=None):
    """[(qualified name, status, detail)] for every op swept."""
    samples = _samples()
    rows = []
    for ns, name, fn, d in _ops():
        q = f"{ns}.{name}"
        if only and name not in only and q not in only:
            continue
        cands = [samples[k] for k in (q, name) if k in samples][:1] or _generic()
        got = None
        for c in cands:
            try:
                args, kwargs = c()
                ref = _call(fn, args, kwargs)
            except Exception:  # noqa: BLE001 (the CPU rejects this sample)
                continue
            if ref is NotImplemented:      # an operator method declining the operands
                continue
            got = (args, kwargs, ref)
            break
        if got is None:
            rows.append((q, "NOSAMPLE", ""))
            continue
        args, kwargs, ref = got
        try:
            res = _call(fn, _to(args, "cuda"), _to(kwargs, "cuda"))
        except NotImplementedError as e:
            rows.append((q, "NOTIMPL", str(e).split("\n")[0][:110]))
            continue
        except Exception as e:  # noqa: BLE001
            tb = traceback.extract_tb(e.__traceback__)[-1]
            rows.append((q, "ERROR", f"{type(e).__name__}: {str(e)[:90]} "
                                     f"({os.path.basename(tb.filename)}:{tb.lineno})"))
            continue
        diff = _same(res, ref, values="empty" not in name and name not in _NO_VALUES)
        rows.append((q, "WRONG" if diff else "OK", diff or ""))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", help="op names (bare or ns.name) to sweep")
    ap.add_argument("--status", help="comma-separated statuses to print (default: all)")
    args = ap.parse_args(argv)
    ptcore.zeros(1, device="cuda")
    rows = sweep(set(args.only) if args.only else None)
    show = set(args.status.split(",")) if args.status else None
    counts = {}
    for q, st, detail in rows:
        counts[st] = counts.get(st, 0) + 1
        if show is None or st in show:
            print(f"{st:8s} {q:52s} {detail}")
    print("summary:", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), f"(of {len(rows)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
