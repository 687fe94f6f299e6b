"""The generic join context manager for uneven inputs (``torch.distributed.algorithms.join``).

When ranks have different numbers of batches, a rank that runs out of data leaves the
training loop while the others still issue collectives every iteration.  Inside
``with Join([...]):`` the early rank does not leave: on exit it keeps *shadowing* the others'
per-iteration collectives through the :class:`JoinHook` of every :class:`Joinable` until all
ranks are done.

The protocol (torch's): every iteration, each non-joined rank calls
:meth:`Join.notify_join_context` once (through its first joinable), which all-reduces a one;
a joined rank all-reduces a zero at the same point, so the sum is the number of ranks still
training.  While that number is not zero, the joined ranks run the joinables' main hooks
(which issue the matching collectives); when it reaches zero every rank runs the post hooks.
"""
from abc import ABC, abstractmethod
from typing import NamedTuple
import warnings

import ptcore
import ptcore.distributed as dist

__all__ = ["Join", "JoinHook", "Joinable"]

_SKEW_WARNING = 1000        # iterations shadowed before warning about the input skew


class JoinHook:
    """Shadows a :class:`Joinable`'s collectives on a rank that has joined.

    Subclass it and override :meth:`main_hook` and/or :meth:`post_hook`; both do nothing
    by default.
    """

    def main_hook(self):
        """Called once per iteration of the still-training ranks, on every joined rank: issue
        the collectives that one training iteration (forward, backward, step) issues."""

    def post_hook(self, is_last_joiner):
        """Called once on every rank when all ranks have joined; ``is_last_joiner`` is True on
        the ranks that joined last (they hold the most up-to-date state)."""


class _JoinConfig(NamedTuple):
    """What a :class:`Joinable` needs to know about the join context manager it is in."""
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config():
        """The configuration outside any join context: join logic off."""
        return _JoinConfig(enable=False, throw_on_early_termination=False,
                           is_first_joinable=False)


class Joinable(ABC):
    """Abstract base of the classes that can take part in a :class:`Join` context.

    A joinable implements :meth:`join_hook` (a :class:`JoinHook`), and the properties
    :attr:`join_device` and :attr:`join_process_group` (where the join bookkeeping
    all-reduces run).  Its ``__init__`` must call ``Joinable.__init__(self)``, and it must call
    ``Join.notify_join_context(self)`` before its own collectives of each iteration.
    """

    @abstractmethod
    def __init__(self):
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs):
        """The :class:`JoinHook` of this joinable; ``kwargs`` are those given to
        :class:`Join` (the same for every joinable of the context)."""

    @property
    @abstractmethod
    def join_device(self):
        """Device of the join context's bookkeeping tensors."""

    @property
    @abstractmethod
    def join_process_group(self):
        """Process group of the join context's bookkeeping all-reduces."""


class Join:
    """Context manager that lets ranks with fewer inputs wait for the others.

    Parameters
    ----------
    joinables : list of Joinable
        The participating joinables; their hooks run in this order.  All must use the same
        process group; the first one's device is used.
    enable : bool
        False turns the context manager into a no-op (for inputs known to be even).
    throw_on_early_termination : bool
        Raise ``RuntimeError`` on every rank as soon as one rank runs out of inputs, instead
        of shadowing.
    **kwargs
        Passed to every joinable's ``join_hook``.

    Notes
    -----
    An exception raised inside the ``with`` body propagates at once; no hook runs.
    """

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        joinables = list(joinables)
        if not joinables:
            raise ValueError("The join context manager requires at least one joinable")
        for j in joinables:
            if not isinstance(j, Joinable):
                raise TypeError(f"Join: {type(j).__name__} is not a Joinable")
        self._joinables = joinables
        self._join_hooks = [j.join_hook(**kwargs) for j in joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        for i, j in enumerate(joinables):
            j._join_config = _JoinConfig(enable=enable,
                                         throw_on_early_termination=throw_on_early_termination,
                                         is_first_joinable=i == 0)
        group = joinables[0].join_process_group
        for j in joinables[1:]:
            if j.join_process_group is not group and j.join_process_group != group:
                raise ValueError("Using join context manager with multiple process groups")
        self._process_group = group
        self._device = joinables[0].join_device
        self._rank = dist.get_rank(group)

    def __enter__(self):
        return None

    def __exit__(self, exc_type, exc, tb):
        if not self._enable or exc_type is not None:
            return None          # an exception in the body propagates unchanged
        is_last_joiner = True
        shadowed = 0
        while self._count_nonjoined() > 0:
            if shadowed == _SKEW_WARNING:
                warnings.warn(f"Detected uneven input skew of greater than {_SKEW_WARNING}: "
                              f"rank {self._rank} has at least {_SKEW_WARNING} fewer inputs "
                              "than other currently-active ranks, which could slow training "
                              "down.", stacklevel=2)
            if self._throw_on_early_termination:
                self._notify_procs_to_terminate()
            for hook in self._join_hooks:
                hook.main_hook()
            is_last_joiner = False
            shadowed += 1
        for hook in self._join_hooks:
            hook.post_hook(is_last_joiner)
        return None

    def _count_nonjoined(self):
        """The joined rank's half of the non-joined count: all-reduce a zero."""
        count = ptcore.zeros(1, device=self._device)
        dist.all_reduce(count, group=self._process_group)
        return int(count.item())

    def _notify_procs_to_terminate(self):
        """Tell the other ranks (through their termination check) to stop, then raise."""
        dist.all_reduce(ptcore.ones(1, device=self._device), group=self._process_group)
        raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable):
        """Tell the join context that this rank has not joined yet.

        Call it from a :class:`Joinable` before its collectives of each iteration.  Only the
        first joinable of the context communicates (an all-reduce of a one); for the others,
        and outside a join context, it does nothing and returns None.  With
        ``throw_on_early_termination=True`` it raises ``RuntimeError`` on every rank once some
        rank has run out of inputs.

        Returns
        -------
        Work or None
            The handle of the asynchronous all-reduce (the caller should ``wait()`` it).
        """
        config = getattr(joinable, "_join_config", None)
        if config is None:
            raise RuntimeError(f"{type(joinable).__name__} has no join configuration; its "
                               "constructor must call Joinable.__init__(self)")
        if not config.is_first_joinable or not config.enable:
            return None
        device, group = joinable.join_device, joinable.join_process_group
        work = dist.all_reduce(ptcore.ones(1, device=device), group=group, async_op=True)
        if config.throw_on_early_termination:
            flag = ptcore.zeros(1, device=device)
            dist.all_reduce(flag, group=group)
            if flag.item():
                work.wait()
                raise RuntimeError("Detected at least one rank that exhausted inputs. "
                                   "Throwing across all ranks.")
        return work
