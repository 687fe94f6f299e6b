"""Numerical gradient checks (central differences), as ``torch.autograd.gradcheck``."""
from ptcore._tensor import _TensorBase
import ptcore
from ptcore.autograd.engine import grad
from ptcore.autograd import forward_ad as fw
from ptcore import from_numpy

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by :func:`gradcheck` when analytical and numerical gradients differ."""


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,) if not isinstance(x, list) else tuple(x)


def _outputs(fn, inputs):
    out = fn(*inputs)
    return tuple(o for o in _as_tuple(out) if isinstance(o, _TensorBase))


def _numerical_jacobian(fn, inputs, outputs, eps):
    """J[i][j]: d output j / d input i as (numel_in, numel_out) float64 NumPy arrays."""
    import numpy as np
    jac = []
    for x in inputs:
        if not (isinstance(x, _TensorBase) and x.requires_grad):
            jac.append(None)
            continue
        cols = [np.zeros((x.numel(), o.numel()), dtype=np.complex128 if o.is_complex() else np.float64)
                for o in outputs]
        flat = x.detach().reshape(-1) if x.is_contiguous() else None
        xd = x.data
        for k in range(x.numel()):
            idx = np.unravel_index(k, tuple(x.shape)) if x.dim() else ()
            orig = xd[idx].item() if x.dim() else xd.item()
            xd[idx] = orig + eps
            plus = [o.detach().clone() for o in _outputs(fn, inputs)]
            xd[idx] = orig - eps
            minus = [o.detach().clone() for o in _outputs(fn, inputs)]
            xd[idx] = orig
            for j, (p, m) in enumerate(zip(plus, minus)):
                cols[j][k] = ((p - m) / (2 * eps)).cpu().numpy().reshape(-1)
        del flat
        jac.append(cols)
    return jac


def _analytical_jacobian(inputs, outputs):
    import numpy as np
    diff_in = [x for x in inputs if isinstance(x, _TensorBase) and x.requires_grad]
    jac = [[np.zeros((x.numel(), o.numel()), dtype=np.float64) for o in outputs] for x in diff_in]
    for j, o in enumerate(outputs):
        if not o.requires_grad:
            continue
        for k in range(o.numel()):
            go = ptcore.zeros(tuple(o.shape), dtype=o.dtype, device=o.device)
            go.view(-1)[k] = 1
            gs = grad((o,), diff_in, (go,), retain_graph=True, allow_unused=True)
            for i, g in enumerate(gs):
                if g is not None:
                    jac[i][j][:, k] = g.detach().to(ptcore.float64).cpu().numpy().reshape(-1)
    return jac


def _forward_jacobian(fn, inputs, n_outputs):
    """J[i][j] from forward-mode AD: one unit tangent per input element."""
    import numpy as np
    diff_in = [x for x in inputs if isinstance(x, _TensorBase) and x.requires_grad]
    jac = []
    for x in diff_in:
        cols = None
        for k in range(x.numel()):
            tangent = ptcore.zeros(x.numel(), dtype=x.dtype, device=x.device)
            tangent[k] = 1
            with fw.dual_level():
                args = tuple(fw.make_dual(a.detach(), tangent.reshape(tuple(x.shape)))
                             if a is x else (a.detach() if isinstance(a, _TensorBase) else a)
                             for a in inputs)
                outs = _outputs(fn, args)
                if cols is None:
                    cols = [np.zeros((x.numel(), o.numel()), dtype=np.float64) for o in outs]
                for j, o in enumerate(outs):
                    t = fw.unpack_dual(o).tangent
                    if t is not None:
                        cols[j][k] = t.detach().to(ptcore.float64).cpu().numpy().reshape(-1)
        jac.append(cols if cols is not None else [None] * n_outputs)
    return jac


def _compare(ana, num, n_outputs, rtol, atol, raise_exception, kind):
    import numpy as np
    for i in range(len(ana)):
        for j in range(n_outputs):
            a, n = ana[i][j], num[i][j].real
            if a is None:
                continue
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                # torch's message, the Jacobians printed as tensors
                msg = (f"Jacobian mismatch for output {j} with respect to input {i},\n"
                       f"numerical:{from_numpy(np.ascontiguousarray(n))}\n"
                       f"{kind}:{from_numpy(np.ascontiguousarray(a))}\n")
                if raise_exception:
                    raise GradcheckError(msg)
                return False
    return True


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False, check_forward_ad=False,
              check_backward_ad=True, fast_mode=False, masked=None):
    """Compare the gradients from backward (and, with ``check_forward_ad``,
    from forward-mode AD) with central finite differences; inputs may live
    on any device."""
    inputs = _as_tuple(inputs)
    for x in inputs:
        if isinstance(x, _TensorBase) and x.requires_grad and x.dtype.itemsize < 8 and \
                not x.is_complex():
            import warnings
            warnings.warn("Input #0 requires gradient and is not a double precision floating point. "
                          "This check will likely fail if all the inputs are not of double precision "
                          "floating point. ")
    outputs = _outputs(func, inputs)
    diff_in = [x for x in inputs if isinstance(x, _TensorBase) and x.requires_grad]
    if not diff_in:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none "
                         "of the them have requires_grad=True.")
    num = [j for j in _numerical_jacobian(func, inputs, outputs, eps) if j is not None]
    if check_backward_ad:
        outputs = _outputs(func, inputs)      # a fresh graph (the perturbations bumped versions)
        ana = _analytical_jacobian(inputs, outputs)
        if not _compare(ana, num, len(outputs), rtol, atol, raise_exception, "analytical"):
            return False
    if check_forward_ad:
        fwd = _forward_jacobian(func, inputs, len(outputs))
        if not _compare(fwd, num, len(outputs), rtol, atol, raise_exception, "forward-mode"):
            return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """Check second derivatives: gradcheck of the gradient computation."""
    inputs = _as_tuple(inputs)
    outputs = _outputs(func, inputs)
    if grad_outputs is None:
        gen = ptcore.Generator().manual_seed(0)
        grad_outputs = tuple(ptcore.randn(o.shape, dtype=o.dtype, generator=gen).to(o.device)
                             .requires_grad_() for o in outputs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, _TensorBase) and x.requires_grad]

    def new_func(*args):
        ins = args[:n_in]
        gos = args[n_in:]
        outs = _outputs(func, ins)
        d_in = [ins[i] for i in diff_idx]
        gs = grad(outs, d_in, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)
    return gradcheck(new_func, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
