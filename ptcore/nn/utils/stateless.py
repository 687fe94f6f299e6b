"""``ptcore.nn.utils.stateless`` (``torch.nn.utils.stateless``): calling a module with
substitute parameters and buffers.  Deprecated in torch for ``torch.func.functional_call``;
this one warns as torch's and calls :func:`ptcore.func.functional_call`."""
import warnings

from ptcore.func import functional_call as _functional_call

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True,
                    strict=False):
    """Run ``module`` with the given parameters and buffers in place of its own."""
    warnings.warn(
        "`ptcore.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be "
        "removed in a future version. Please use `ptcore.func.functional_call` instead which is "
        "a drop-in replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)
