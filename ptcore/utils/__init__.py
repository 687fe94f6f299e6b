"""ptcore.utils: data loading and file-format helpers."""
from ptcore.utils._swap_tensors import swap_tensors  # noqa: F401  (torch.utils.swap_tensors)


def set_module(obj, mod):
    """Set ``obj.__module__`` to ``mod`` (a string), for nicer printing
    (``torch.utils.set_module``)."""
    if not isinstance(mod, str):
        raise TypeError("The mod argument should be a string")
    obj.__module__ = mod


def __getattr__(name):
    import importlib
    if name in ("data", "safetensors", "hooks", "checkpoint", "dlpack", "benchmark", "tensorboard",
                "cython_extension", "_pytree", "deterministic", "_python_dispatch"):
        mod = importlib.import_module(f"ptcore.utils.{name}")
        globals()[name] = mod
        return mod
    raise AttributeError(f"module 'ptcore.utils' has no attribute '{name}'")
