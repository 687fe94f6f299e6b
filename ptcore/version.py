"""Build information (``torch.version``): ``__version__`` and the toolkits compiled in.

ptcore's CUDA backend compiles its kernels at run time (NVRTC), so no CUDA toolkit version is
fixed at build time: ``cuda`` is ``None`` as in torch's CPU builds; ``hip``, ``rocm`` and ``xpu``
are ``None`` too.
"""
__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]

__version__ = "0.1.0.dev0"
# The PyTorch release whose API ptcore follows: what ``importlib.metadata.version("torch")``
# answers inside ``python -m ptcore.as_torch`` (ptcore.as_torch).
torch_api = "2.13.0"
debug = False
cuda = None
git_version = "unknown"
hip = None
rocm = None
xpu = None
