"""``ptcore.nn.utils.stateless`` (``torch.nn.utils.stateless``): calling a module with
substitute parameters and buffers.  Deprecated in torch for ``torch.func.functional_call``;
this one warns as torch's and calls :func:`ptcore.func.functional_call`."""
import contextlib
import warnings

from ptcore.func import _untie, functional_call as _functional_call

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


_MISSING = object()


def _swap_member(module, name, value):
    """Put ``value`` at ``module``'s dotted ``name`` (parameter, buffer or plain
    attribute; ``_MISSING`` removes it) and return what was there."""
    *path, leaf = name.split(".")
    owner = module
    for p in path:
        owner = getattr(owner, p)
    store = owner.__dict__
    for kind in ("_parameters", "_buffers"):
        d = owner.__dict__.get(kind)
        if d is not None and leaf in d:
            store = d
            break
    old = store.get(leaf, _MISSING)
    if value is _MISSING:
        store.pop(leaf, None)
    else:
        store[leaf] = value
    return old


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False,
                          stack_weights=False):
    """Within the block, ``module`` holds the given tensors in place of its
    parameters and buffers (torch's helper under ``functional_call``, which
    code reparametrizing a module imports).  Tensors the module assigns anew
    meanwhile are written back into the given dict."""
    named = list(module.named_parameters(remove_duplicate=False))
    named += list(module.named_buffers(remove_duplicate=False))
    given = _untie(named, parameters_and_buffers) if tie_weights else parameters_and_buffers
    if strict:
        have = {n for n, _ in named}
        problems = [f"Unexpected key(s): {', '.join(map(repr, sorted(set(given) - have)))}."] \
            if set(given) - have else []
        if have - set(given):
            problems.append(f"Missing key(s): {', '.join(map(repr, sorted(have - set(given))))}.")
        if problems:
            raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t"
                               + "\n\t".join(problems))
    swapped = []
    try:
        for name, value in given.items():
            swapped.append((name, _swap_member(module, name, value)))
        yield
    finally:
        now = {name: _swap_member(module, name, old) for name, old in reversed(swapped)}
        parameters_and_buffers.update({k: v for k, v in now.items()
                                       if k in parameters_and_buffers and v is not _MISSING})
