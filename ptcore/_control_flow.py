"""``ptcore.cond`` and ``ptcore.while_loop``: torch's control-flow operators, which run
eagerly here (as torch's do outside ``torch.compile``/``torch.export``)."""
import builtins

from ptcore.tensor import Tensor

__all__ = ["cond", "while_loop"]


def _truth(pred, who):
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                               f"{pred}.")
        return builtins.bool(pred.item())
    if not isinstance(pred, (builtins.bool, builtins.int, builtins.float)):
        raise RuntimeError(f"{who}: expected pred to be bool or single-element tensor, but got "
                           f"{type(pred).__name__}")
    return builtins.bool(pred)


def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``.

    Parameters
    ----------
    pred : bool or int or float or Tensor
        A Python number or a single-element tensor.
    true_fn, false_fn : callable
        Branches, called with the operands.
    operands : tuple or list, default ()
        The branches' arguments.
    """
    if not (callable(true_fn) and callable(false_fn)):
        raise RuntimeError("Expect both branches to be callable.")
    branch = true_fn if _truth(pred, "cond") else false_fn
    return branch(*operands)


def while_loop(cond_fn, body_fn, carried_inputs):
    """Run ``carried = body_fn(*carried)`` while ``cond_fn(*carried)`` is true; the final
    ``carried`` is returned (what ``body_fn`` last returned, the inputs as a tuple when the
    loop never ran).

    ``cond_fn`` returns a bool or a single-element tensor; ``body_fn`` returns as many values
    as ``carried_inputs`` holds (a tuple, or one tensor for one carried value).
    """
    if not (callable(cond_fn) and callable(body_fn)):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"Expect carried_inputs to be a tuple or list, got "
                           f"{type(carried_inputs).__name__}")
    result = tuple(carried_inputs)
    args = result
    while _truth(cond_fn(*args), "while_loop"):
        result = body_fn(*args)
        args = result if isinstance(result, (tuple, list)) else (result,)
        if len(args) != len(carried_inputs):
            raise RuntimeError(f"while_loop: body_fn returned {len(args)} values for "
                               f"{len(carried_inputs)} carried inputs")
    return result
