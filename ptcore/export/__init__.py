"""``ptcore.export`` (``torch.export``): capture a module's computation on
example inputs as a graph of aten ops, with its parameters and buffers, to
run, inspect, transform or save.

:func:`export` runs the module once with the tracing layer of the dispatch
point on (as ``torch.export``'s non-strict mode): each op call becomes a node
whose target is an aten overload (``ptcore.ops.aten.linear.default``);
Python control flow is specialised to the example inputs; control flow on
tensor values raises :class:`GuardOnDataDependentSymNode`.  Dimensions named
in ``dynamic_shapes`` (:class:`Dim`) keep their size free: the graph reads
them at run time.  :func:`save` / :func:`load` write and read a program as a
zip of JSON and tensors; loading executes nothing from the file.

Examples
--------
>>> m = ptcore.nn.Sequential(ptcore.nn.Linear(4, 3), ptcore.nn.ReLU())
>>> batch = ptcore.export.Dim("batch", min=1, max=64)
>>> ep = ptcore.export.export(m, (ptcore.randn(2, 4),), dynamic_shapes=({0: batch},))
>>> [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
['aten.linear.default', 'aten.relu.default']
>>> ep.module()(ptcore.randn(5, 4)).shape
ptcore.Size([5, 3])
"""
from ptcore.export._trace import check_module, trace_program
from ptcore.export._serialize import load, save
from ptcore.export.dynamic_shapes import (ConstraintViolationError, Dim, GuardOnDataDependentSymNode,
                                          ShapesCollection, UserError, dims)
from ptcore.export.exported_program import (ExportedProgram, ModuleCallEntry, ModuleCallSignature,
                                            default_decompositions, from_trace)
from ptcore.export.graph_signature import ExportGraphSignature

__all__ = ["Constraint", "Dim", "ExportBackwardSignature", "ExportGraphSignature", "ExportedProgram",
           "ModuleCallEntry", "ModuleCallSignature", "ShapesCollection", "UserError",
           "ConstraintViolationError", "GuardOnDataDependentSymNode", "default_decompositions",
           "dims", "export", "load", "save"]

Constraint = object
ExportBackwardSignature = type(None)


def export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False,
           preserve_module_call_signature=(), prefer_deferred_runtime_asserts_over_guards=False):
    """Trace ``mod`` on example inputs into an :class:`ExportedProgram`.

    Parameters
    ----------
    mod : ptcore.nn.Module
        The module; it is called once, as ``mod(*args, **kwargs)``.
    args : tuple
        The example positional inputs (tensors, numbers, None, and
        tuples/lists/dicts of them).
    kwargs : dict, optional
        The example keyword inputs.
    dynamic_shapes : dict or tuple, optional
        Per input (by name, or in order), the dimensions whose size is free:
        ``{"x": {0: Dim("batch")}}``, ``Dim.AUTO``/``Dim.DYNAMIC``; None
        (default) fixes every size.
    strict : bool, optional
        Accepted for torch's signature; ptcore always traces non-strictly.
    preserve_module_call_signature : tuple of str, optional
        Accepted for torch's signature.

    Returns
    -------
    ExportedProgram

    Raises
    ------
    UserError
        ``args`` is not a tuple, ``dynamic_shapes`` does not match the
        inputs, or an input dimension marked dynamic has size 0 or 1.
    ConstraintViolationError
        An example size lies outside its Dim's range.
    GuardOnDataDependentSymNode
        The program branches on a tensor's value.
    """
    check_module(mod)
    if not isinstance(args, tuple):
        raise UserError(f"Expecting `args` to be a tuple of example positional inputs, got "
                        f"{type(args)}")
    if kwargs is not None and not isinstance(kwargs, dict):
        raise UserError(f"Expecting `kwargs` to be a dict of example keyword inputs, got "
                        f"{type(kwargs)}")
    return from_trace(trace_program(mod, args, dict(kwargs or {}), dynamic_shapes))
