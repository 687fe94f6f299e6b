"""More of torch's test databases through tools/opinfo_sweep.py (run by hand).

    python tools/opinfo_sweep_more.py DB [opinfo_sweep options]

DB is one of

``foreach``
    torch's ``foreach_*_op_db`` (the ``_foreach_*`` multi-tensor ops).
``autograd_function``
    ``autograd_function_db``: custom ``autograd.Function`` classes (setup_context,
    save_for_forward, mark_dirty, once_differentiable, vmap/jvp staticmethods); the
    module is executed again with ``torch`` naming ptcore, so the classes are
    ptcore Functions, and torch's samples feed both.
``custom_op``
    ``custom_op_db``: ``torch.library.custom_op`` ops with fake functions, autograd
    and vmap registrations, re-executed the same way under ``ptcore.library``.
``cuda``
    ``op_db`` with every ptcore input moved to the CUDA device (the emulated one
    unless PTCORE_CUDA_EMULATE is set otherwise), against torch on the CPU.

The options are opinfo_sweep's (``--ops``, ``--dtypes``, ``--grad``, ``--report`` ...).
"""
import builtins
import os
import sys
import types

_HERE = os.path.dirname(os.path.abspath(__file__))


def _reexecuted_db(module, db_name, S):
    """``module``'s OpInfo list executed again with ``torch`` naming ptcore."""
    import torch
    from torch.testing._internal import common_dtype

    real_import = builtins.__import__

    def imp(name, globals=None, locals=None, fromlist=(), level=0):
        if name == "torch":
            return S._SHIM
        if name == "torch.testing._internal.common_dtype":
            # (dtype sets of the re-executed OpInfos are never used)
            return types.SimpleNamespace(
                all_types_and=lambda *a: common_dtype.all_types_and(torch.bool, torch.half))
        return real_import(name, globals, locals, fromlist, level)
    ns = {"__name__": f"ptcore_{db_name}",
          "__builtins__": dict(vars(builtins), __import__=imp)}
    with open(module.__file__) as f:
        exec(compile(f.read(), module.__file__, "exec"), ns)
    return {(o.name, o.variant_test_name): o.op for o in ns[db_name]}


def _on_cuda(S):
    import ptcore
    os.environ.setdefault("PTCORE_CUDA_EMULATE", "1")
    to_pt, to_np, grad = S.to_pt, S.to_np, ptcore.autograd.grad

    def move(r):
        if isinstance(r, ptcore.Tensor):
            c = r.detach().to("cuda")
            return c.requires_grad_(True) if r.requires_grad else c
        if isinstance(r, (tuple, list)):
            return type(r)(move(v) for v in r)
        if isinstance(r, dict):
            return {k: move(v) for k, v in r.items()}
        if isinstance(r, ptcore.device):
            return ptcore.device("cuda")
        return r

    def host(x):
        if isinstance(x, ptcore.Tensor) and x.device.type != "cpu":
            x = x.detach().cpu()
        return to_np(x)

    def device_grad(outs, ins, cots=None, **kw):
        if cots is not None:
            cots = [c.to(o.device) if isinstance(c, ptcore.Tensor) else c
                    for o, c in zip(outs, cots)]
        return grad(outs, ins, cots, **kw)

    class _Autograd:
        def __getattr__(self, n):
            return device_grad if n == "grad" else getattr(ptcore.autograd, n)

    class _Ptcore:
        autograd = _Autograd()

        def __getattr__(self, n):
            return getattr(ptcore, n)

    S.to_pt = lambda x, memo=None: move(to_pt(x, memo))
    S.to_np = host
    S.ptcore = _Ptcore()


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in ("foreach", "autograd_function", "custom_op", "cuda"):
        sys.exit(__doc__)
    which = argv.pop(0)
    if which == "cuda":
        os.environ.setdefault("PTCORE_CUDA_EMULATE", "1")
    sys.path.insert(0, _HERE)
    import opinfo_sweep as S
    if which == "foreach":
        import torch.testing._internal.common_methods_invocations as c
        S.op_db = (c.foreach_unary_op_db + c.foreach_binary_op_db + c.foreach_pointwise_op_db
                   + c.foreach_reduce_op_db + c.foreach_other_op_db)
    elif which == "cuda":
        _on_cuda(S)
    else:
        import importlib
        mod = importlib.import_module(f"torch.testing._internal.{which}_db")
        ops = _reexecuted_db(mod, f"{which}_db", S)
        S.op_db = getattr(mod, f"{which}_db")
        S.pt_op = lambda op: ops[(op.name, op.variant_test_name)]
    S.main(argv)


if __name__ == "__main__":
    main()
