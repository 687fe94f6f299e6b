"""The compiler backends ``ptcore.compile(backend=...)`` accepts, by name
(``torch._dynamo.list_backends`` / ``register_backend``).

``"inductor"`` runs the captured graphs with fused kernels, ``"eager"`` and
``"aot_eager"`` op by op (``"aot_eager"`` with the captured backward),
``"cudagraphs"`` replays CUDA programs as CUDA graphs.  A registered backend
is a callable ``backend(graph_module, example_inputs) -> callable`` called
with each captured graph (:mod:`ptcore._inductor.custom`)."""
from ptcore._dynamo import exc

__all__ = ["BUILTIN", "register_backend", "lookup_backend", "list_backends"]

# name -> tags (torch's: "debug" backends are left out of list_backends() by default)
BUILTIN = {"cudagraphs": (), "inductor": (), "eager": ("debug",), "aot_eager": ("debug",)}
_REGISTERED = {}


def register_backend(compiler_fn=None, name=None, tags=()):
    """Register a compiler backend by name (a decorator without ``compiler_fn``)."""
    if compiler_fn is None:
        return lambda fn: register_backend(fn, name=name, tags=tags)
    _REGISTERED[name or compiler_fn.__name__] = (compiler_fn, tuple(tags))
    return compiler_fn


def lookup_backend(compiler_fn):
    """The backend registered under a name (a built-in name is returned as is, a
    callable too); :class:`~ptcore._dynamo.exc.InvalidBackend` for an unknown name."""
    if callable(compiler_fn):
        return compiler_fn
    if compiler_fn in _REGISTERED:
        return _REGISTERED[compiler_fn][0]
    if compiler_fn in BUILTIN:
        return compiler_fn
    raise exc.InvalidBackend(compiler_fn)


def list_backends(exclude_tags=("debug", "experimental")):
    """Names accepted as ``ptcore.compile(backend=...)``."""
    exclude = set(exclude_tags or ())
    names = {n for n, tags in BUILTIN.items() if not exclude.intersection(tags)}
    names |= {n for n, (_, tags) in _REGISTERED.items() if not exclude.intersection(tags)}
    return sorted(names)
