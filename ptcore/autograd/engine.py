"""``backward`` and ``grad``: the public entry points to the engine."""
import warnings

from ptcore._tensor import _TensorBase
from ptcore.autograd.graph import gradient_edge, run_backward, accumulate_grad
from ptcore.autograd.graph import GradientEdge
from ptcore import ones_like
from ptcore.autograd import grad_mode
from ptcore import zeros_like
from ptcore.autograd.graph import _sum_to
from ptcore import stack

__all__ = ["backward", "grad"]

_warned_create_graph = [False]


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, (_TensorBase, GradientEdge)) or type(x).__name__ == "SparseTensor":
        return (x,)
    return tuple(x)


def _make_grads(outputs, grad_outputs, is_grads_batched=False):
    res = []
    for i, (o, g) in enumerate(zip(outputs, grad_outputs)):
        if isinstance(o, GradientEdge):
            if not isinstance(g, _TensorBase):
                raise RuntimeError(f"grad_outputs[{i}]: a GradientEdge output needs the gradient "
                                   "flowing into it (a Tensor), got "
                                   f"{'None' if g is None else type(g).__name__}")
            res.append(g)
            continue
        if g is None:
            if o.requires_grad:
                if o.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not (o.dtype.is_floating_point or o.dtype.is_complex):
                    raise RuntimeError("grad can be implicitly created only for real scalar outputs "
                                       f"but got {o.dtype}")
                if o.dtype.is_complex:
                    raise RuntimeError("grad can be implicitly created only for real scalar outputs "
                                       f"but got {o.dtype}")
                res.append(ones_like(o))
            else:
                res.append(None)
        else:
            if not isinstance(g, _TensorBase):
                raise TypeError("gradients can be either Tensors or None, but got "
                                f"{type(g).__name__}")
            if tuple(g.shape) != tuple(o.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{g.shape} and output[{i}] has a shape of {o.shape}.")
            if o.dtype.is_complex != g.dtype.is_complex:
                raise RuntimeError("For complex Tensors, both grad_output and output are required "
                                   "to have the same dtype. Mismatch in dtype: grad_output[" f"{i}] "
                                   f"has a dtype of {g.dtype} and output[{i}] has a dtype of "
                                   f"{o.dtype}.")
            res.append(g)
    return res


def _roots(outputs, grads, fname):
    roots, rgrads = [], []
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if isinstance(o, GradientEdge):
            roots.append((o.node, o.output_nr))
            rgrads.append(g)
            continue
        if not isinstance(o, _TensorBase):
            raise TypeError(f"{fname}: expected outputs to be Tensors, got {type(o).__name__}")
        if not o.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a "
                               "grad_fn")
        if g is None:
            continue
        roots.append(gradient_edge(o))
        rgrads.append(g)
    return roots, rgrads


def _check_inputs_require_grad(inputs):
    for t in inputs:
        if not isinstance(t, GradientEdge) and not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None,
             inputs=None):
    """Accumulate gradients of ``tensors`` into the ``.grad`` of the graph's
    leaves (or of ``inputs`` only)."""
    if grad_tensors is None and inputs is None and grad_variables is None and not create_graph \
            and isinstance(tensors, _TensorBase) and tensors._requires_grad:
        # the everyday call, ``loss.backward()``: a real scalar, its gradient implied
        dt = tensors.dtype
        if dt.is_floating_point and tensors.numel() == 1:
            run_backward([gradient_edge(tensors)], [ones_like(tensors)], bool(retain_graph), False)
            return
    if grad_variables is not None:
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.",
                      FutureWarning, stacklevel=2)
        if grad_tensors is not None:
            raise RuntimeError("`grad_tensors` and `grad_variables` (deprecated) arguments both "
                               "passed to `backward()`. Please only use `grad_tensors`.")
        grad_tensors = grad_variables
    if create_graph and not _warned_create_graph[0]:
        # once per process, as torch's TORCH_WARN_ONCE
        _warned_create_graph[0] = True
        warnings.warn(
            "Using backward() with create_graph=True will create a reference cycle between the "
            "parameter and its gradient which can cause a memory leak. We recommend using "
            "autograd.grad when creating the graph to avoid this. If you have to use this "
            "function, make sure to reset the .grad fields of your parameters to None after use "
            "to break the cycle and avoid the leak.", UserWarning, stacklevel=2)
    tensors = _as_tuple(tensors)
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if len(inputs) == 0:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    else:
        grad_tensors = list(_as_tuple(grad_tensors))
        if len(grad_tensors) != len(tensors):
            raise RuntimeError(f"got {len(grad_tensors)} gradients for {len(tensors)} tensors")
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(tensors, grad_tensors)
    roots, rgrads = _roots(tensors, grads, "backward")
    if not roots:
        return
    if inputs is None:
        run_backward(roots, rgrads, retain_graph, create_graph)
        return
    targets = []
    for t in inputs:
        if isinstance(t, GradientEdge):
            targets.append((t.node, t.output_nr))
            continue
        if not isinstance(t, _TensorBase):
            raise TypeError("backward(inputs=...) expects Tensors")
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        targets.append(gradient_edge(t))
    captured = run_backward(roots, rgrads, retain_graph, create_graph, targets=targets,
                            accumulate=True)
    for t, e, g in zip(inputs, targets, captured):
        if g is None or isinstance(t, GradientEdge) or t.grad_fn is None or t._retains_grad:
            continue        # leaves were accumulated by their AccumulateGrad node,
            #                 non-leaves that retain grad by their retain hook
        with grad_mode.set_grad_enabled(bool(create_graph)):
            accumulate_grad(t, g)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Gradients of ``outputs`` with respect to ``inputs`` (returned, not
    accumulated into ``.grad``)."""
    outputs = _as_tuple(outputs)
    t_inputs = _as_tuple(inputs)
    if not t_inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    sparse = {i: t for i, t in enumerate(t_inputs) if type(t).__name__ == "SparseTensor"}
    if sparse:
        # a sparse input: the gradient of its values, as a sparse tensor
        t_inputs = tuple(sparse[i]._parts[-1] if i in sparse else t
                         for i, t in enumerate(t_inputs))
        res = grad(outputs, t_inputs, grad_outputs, retain_graph, create_graph, only_inputs,
                   allow_unused, is_grads_batched, materialize_grads)
        return tuple(sparse[i]._grad_of_values(g) if i in sparse else g
                     for i, g in enumerate(res))
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    else:
        grad_outputs = list(_as_tuple(grad_outputs))
        if len(grad_outputs) != len(outputs):
            raise RuntimeError(f"grad requires one grad_output per output: got {len(grad_outputs)} "
                               f"for {len(outputs)} outputs")
    if retain_graph is None:
        retain_graph = create_graph
    edges = any(isinstance(t, GradientEdge) for t in t_inputs)
    for t in t_inputs:
        if isinstance(t, GradientEdge):
            continue
        if not isinstance(t, _TensorBase):
            raise TypeError(f"grad: expected inputs to be Tensors, got {type(t).__name__}")
    if is_grads_batched:
        if edges or any(isinstance(o, GradientEdge) for o in outputs):
            raise RuntimeError("Batched grads are not supported with GradientEdge")
        _check_inputs_require_grad(t_inputs)
        return _grad_batched(outputs, t_inputs, grad_outputs, retain_graph, create_graph,
                             allow_unused, materialize_grads)
    grads = _make_grads(outputs, grad_outputs)
    roots, rgrads = _roots(outputs, grads, "grad")
    # (after the outputs' check, as torch: the outputs' error comes first)
    _check_inputs_require_grad(t_inputs)
    targets = [(t.node, t.output_nr) if isinstance(t, GradientEdge) else gradient_edge(t)
               for t in t_inputs]
    captured = run_backward(roots, rgrads, retain_graph, create_graph, targets=targets,
                            accumulate=False) if roots else [None] * len(targets)
    res = []
    for i, (t, g) in enumerate(zip(t_inputs, captured)):
        if g is None:
            if materialize_grads and isinstance(t, GradientEdge):
                raise RuntimeError("materialize_grads cannot be used when the given input is a "
                                   "GradientEdge")
            if materialize_grads:
                g = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
        elif not isinstance(t, GradientEdge) and tuple(g.shape) != tuple(t.shape):
            g = _sum_to(g, tuple(t.shape))
        res.append(g)
    return tuple(res)


def _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    """``grad(..., is_grads_batched=True)``: the first dim of every
    grad_output is a batch of vectors; one backward per batch entry (the
    graph is kept until the last), results stacked along a new first dim."""
    B = None
    for i, (o, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            continue
        if not isinstance(g, _TensorBase):
            raise TypeError("gradients can be either Tensors or None, but got "
                            f"{type(g).__name__}")
        if g.dim() == 0 or tuple(g.shape[1:]) != tuple(o.shape) or (B is not None and
                                                                    g.shape[0] != B):
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each "
                "grad_output as the batch dimension. The sizes of the remaining dimensions are "
                "expected to match the shape of corresponding output, but a mismatch was "
                f"detected: grad_output[{i}] has a shape of {g.shape[1:]} and output[{i}] has a "
                f"shape of {o.shape}. If you only want some tensors in `grad_output` to be "
                "considered batched, consider using vmap.")
        B = g.shape[0]
    if B is None:
        return grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                    allow_unused=allow_unused, materialize_grads=materialize_grads)
    per = []
    for b in range(B):
        per.append(grad(outputs, inputs, [None if g is None else g[b] for g in grad_outputs],
                        retain_graph=True if b < B - 1 else retain_graph,
                        create_graph=create_graph, allow_unused=allow_unused,
                        materialize_grads=materialize_grads))
    res = []
    for k in range(len(inputs)):
        parts = [p[k] for p in per]
        res.append(None if parts and parts[0] is None else stack(parts))
    return tuple(res)
