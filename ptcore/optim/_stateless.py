"""Running an optimizer against other parameters and state for a while
(``torch.optim.swap_in_optimizer_params_and_state``)."""
import contextlib
from collections import defaultdict

from ptcore._tensor import _TensorBase

__all__ = ["swap_in_optimizer_params_and_state"]

_NAME = "swap_in_optimizer_params_and_state"


def _check_state(state):
    """``state``: a dict from packed parameter ids to per-parameter dicts."""
    if not isinstance(state, dict):
        raise RuntimeError(
            f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping packed "
            f"parameter ids to per-param state dicts, got {type(state).__name__}.")
    if any(isinstance(k, _TensorBase) for k in state):
        raise RuntimeError(
            f"{_NAME} requires optimizer.state_dict()-style state keyed by packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(
            f"{_NAME} requires per-parameter optimizer state entries to be dictionaries.")
    return state


def _check_groups(optimizer, groups):
    """``groups``: a list with one dict per live param group, the same keys and
    the same number of packed parameter ids; returns the ids of each group."""
    if not isinstance(groups, list):
        raise RuntimeError(
            f"{_NAME} requires swapin_optim_state['param_groups'] to be a list of "
            f"param-group dicts, got {type(groups).__name__}.")
    if len(groups) != len(optimizer.param_groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups "
                           "than the live optimizer.")
    ids_per_group = []
    for idx, (live, group) in enumerate(zip(optimizer.param_groups, groups)):
        if not isinstance(group, dict):
            raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
        ids = group.get("params")
        if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
            raise RuntimeError(
                f"{_NAME} requires optimizer.state_dict()-style param_groups[*]['params'] "
                "entries keyed by packed parameter ids.")
        if len(ids) != len(live["params"]):
            raise RuntimeError(
                f"swapin_optim_state param group {idx} has a different number of params "
                "than the live optimizer param group.")
        only_swapin = [k for k in group if k not in live]
        only_live = [k for k in live if k not in group]
        if only_swapin or only_live:
            raise RuntimeError(
                f"{_NAME} requires optimizer.state_dict()-style param group keys to exactly "
                f"match the live optimizer group keys for group {idx}. Keys only in swap-in: "
                f"{only_swapin}. Keys only in live: {only_live}.")
        ids_per_group.append(ids)
    return ids_per_group


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    """Run ``optimizer`` on other parameters and state inside the ``with`` block.

    Inside the block the optimizer's param groups hold ``swapin_parameters``
    and the hyperparameters of ``swapin_optim_state["param_groups"]``, and its
    state is ``swapin_optim_state["state"]`` keyed by those parameters; on
    exit the live parameters, hyperparameters and state come back. Unlike
    :meth:`Optimizer.load_state_dict`, the parameters are swapped too, so
    ``optimizer.step()`` updates the tensors given here.

    Parameters
    ----------
    optimizer : Optimizer
        The live optimizer; its state must already exist (it has stepped).
    swapin_parameters : dict of str to Tensor
        The parameters to use, in the order of the optimizer's parameters
        (usually ``model.named_parameters()`` order).
    swapin_optim_state : dict
        Shaped like ``optimizer.state_dict()``: ``"state"`` keyed by packed
        parameter ids, ``"param_groups"`` one dict per live group with the
        same keys. In-place changes to its state tensors are kept; any other
        change to the optimizer's state inside the block is dropped.

    Raises
    ------
    RuntimeError
        When the optimizer has no state yet or ``swapin_optim_state`` does
        not match the live optimizer's groups.

    Examples
    --------
    >>> import ptcore
    >>> p = ptcore.nn.Parameter(ptcore.ones(2))
    >>> opt = ptcore.optim.SGD([p], lr=0.5, momentum=0.9)
    >>> p.grad = ptcore.ones(2); opt.step()
    >>> q = ptcore.nn.Parameter(ptcore.zeros(2)); q.grad = ptcore.ones(2)
    >>> with ptcore.optim.swap_in_optimizer_params_and_state(opt, {"p": q}, opt.state_dict()):
    ...     opt.step()
    >>> q.tolist(), p.tolist()
    ([-0.949999988079071, -0.949999988079071], [0.5, 0.5])
    """
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    packed_state = _check_state(swapin_optim_state.get("state"))
    groups = swapin_optim_state.get("param_groups")
    ids_per_group = _check_groups(optimizer, groups)

    # the explicit tensors go to the groups in order: with ids [[0, 1], [2]]
    # the first group gets the first two tensors, the second the third
    tensors = list(swapin_parameters.values())
    group_params, start = [], 0
    for ids in ids_per_group:
        if start + len(ids) > len(tensors):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match "
                               "optimizer.param_groups ordering.")
        group_params.append(tensors[start:start + len(ids)])
        start += len(ids)
    used = {i for ids in ids_per_group for i in ids}
    extra = [k for k in packed_state if k not in used]
    if extra:
        raise RuntimeError(
            f"{_NAME} requires swapin_optim_state['state'] to be keyed only by packed "
            f"parameter ids from param_groups[*]['params']; got extra keys {extra!r}.")

    live_state = optimizer.state
    # shallow copies: the restored groups keep their own 'params' list objects
    live_groups = [dict(g) for g in optimizer.param_groups]
    try:
        state = defaultdict(dict)
        for live, group, ids, params in zip(optimizer.param_groups, groups, ids_per_group,
                                            group_params):
            live["params"] = params
            live.update((k, v) for k, v in group.items() if k != "params")
            for p, i in zip(params, ids):
                # a copy of each per-parameter dict: in-place tensor updates reach
                # the caller's dict, new entries do not
                state[p] = dict(packed_state.get(i, {}))
        optimizer.state = state
        yield
    finally:
        for live, saved in zip(optimizer.param_groups, live_groups):
            live.clear()
            live.update(saved)
        optimizer.state = live_state
