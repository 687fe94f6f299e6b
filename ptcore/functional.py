"""``ptcore.functional`` (``torch.functional``): the tensor functions torch defines in
Python, under the module path scripts import them from (the same objects as ``ptcore.X``)."""
import ptcore as _ptcore

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors",
           "cartesian_prod", "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu",
           "norm", "meshgrid", "pca_lowrank", "split", "stft", "svd_lowrank", "tensordot",
           "unique", "unique_consecutive", "unravel_index"]


def __getattr__(name):
    # resolved on use: stft/istft/pca_lowrank/svd_lowrank exist only when ptcore has them
    if name in __all__ and hasattr(_ptcore, name):
        return getattr(_ptcore, name)
    raise AttributeError(f"module 'ptcore.functional' has no attribute '{name}'")
