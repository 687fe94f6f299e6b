"""``PassManager`` (``torch.fx.passes.infra.pass_manager``): runs a list of
passes in an order satisfying the given constraints, repeatedly (``steps``)
until none changes the module, with optional checks after each pass."""
import inspect
from functools import wraps
from queue import Queue

from ptcore.fx.graph_module import GraphModule
from ptcore.fx.passes.infra.pass_base import PassResult
from ptcore.nn import Module

__all__ = ["pass_result_wrapper", "this_before_that_pass_constraint", "PassManager"]


def pass_result_wrapper(fn):
    """``fn`` (a pass returning None or a module) as a pass returning a
    :class:`PassResult` with ``modified`` True."""
    if fn is None:
        return None

    @wraps(fn)
    def wrapped_fn(gm):
        res = fn(gm)
        if res is None:
            return PassResult(gm, True)
        if isinstance(res, PassResult):
            return res
        if isinstance(res, Module):
            return PassResult(res, True)
        return None

    if not inspect.isfunction(fn):
        wrapped_fn.__name__ = type(fn).__name__
    return wrapped_fn


def _validate_pass_schedule_constraint(constraint, passes):
    for i, a in enumerate(passes):
        for j, b in enumerate(passes[i + 1:]):
            if constraint(a, b):
                continue
            raise RuntimeError(f"pass schedule constraint violated. Expected {a} before {b}"
                               f" but found {a} at index {i} and {b} at index {j} in pass"
                               f" list.")


def _topological_sort_passes(passes, constraints):
    """``passes`` ordered so that every constraint holds (RuntimeError on a cycle)."""
    if len(constraints) == 0:
        return passes
    graph = {p: [] for p in passes}
    indegree = dict.fromkeys(passes, 0)
    candidates = Queue()
    for a in passes:
        for b in passes:
            if a == b:
                continue
            for constraint in constraints:
                if not constraint(a, b):
                    graph[b].append(a)
                    indegree[a] += 1
        if indegree[a] == 0:
            candidates.put(a)
    visited = dict.fromkeys(passes, False)
    sorted_passes = []
    while not candidates.empty():
        p = candidates.get()
        sorted_passes.append(p)
        visited[p] = True
        for n in graph[p]:
            if not visited[n]:
                indegree[n] -= 1
                if indegree[n] == 0:
                    candidates.put(n)
    cycle = [p for p, d in indegree.items() if d != 0]
    if cycle:
        raise RuntimeError(f"Circular dependency detected within the following passes: {cycle}")
    return sorted_passes


def this_before_that_pass_constraint(this, that):
    """A constraint (``depends_on(a, b)``) that ``this`` runs before ``that``."""

    def depends_on(a, b):
        return a != that or b != this
    return depends_on


def _pass_name(fn):
    return fn.__name__ if inspect.isfunction(fn) else type(fn).__name__


class PassManager:
    """Collects passes and constraints and runs them on a module.

    Parameters
    ----------
    passes : list of callable, optional
        Passes (each returns a :class:`PassResult`).
    constraints : list of callable, optional
        ``constraint(a, b)`` is False when pass ``a`` must not run before ``b``.
    steps : int, optional
        The most times the pass list runs (it stops when no pass modifies).
    run_checks_after_each_pass : bool
        Run :meth:`check` after each pass too.
    suppress_check_failures : bool
        Kept as torch's (unused there as well).
    """
    _validated = False
    steps = 1

    def __init__(self, passes=None, constraints=None, steps=None,
                 run_checks_after_each_pass=False, suppress_check_failures=False):
        self.passes = passes or []
        self.constraints = constraints or []
        if steps:
            self.steps = steps
        self.run_checks_after_each_pass = run_checks_after_each_pass
        self.suppress_check_failures = suppress_check_failures

    def add_pass(self, _pass):
        """Append a pass."""
        self.passes.append(_pass)
        self._validated = False

    def add_constraint(self, constraint):
        """Add a scheduling constraint."""
        self.constraints.append(constraint)
        self._validated = False

    def validate_constraints(self):
        """Raise RuntimeError unless the current order satisfies every constraint."""
        if self._validated:
            return
        for constraint in self.constraints:
            _validate_pass_schedule_constraint(constraint, self.passes)
        self._validated = True

    def solve_constraints(self):
        """Reorder the passes to satisfy the constraints."""
        self.passes = _topological_sort_passes(self.passes, self.constraints)
        self._validated = True

    def add_checks(self, check):
        """Use ``check(module)`` before the passes (and after each one with
        ``run_checks_after_each_pass``)."""
        sig = inspect.signature(check)
        if len(list(sig.parameters.values())) != 1:
            raise TypeError("PassManager check function should only take in one variable, "
                            "a module")
        setattr(self, "check", check)  # noqa: B010

    def check(self, module):
        pass

    def __call__(self, module):
        if not self._validated:
            self.solve_constraints()
        self.check(module)
        overall_modified = False
        for _ in range(self.steps):
            modified = False
            for i, fn in enumerate(self.passes):
                fn_name = _pass_name(fn)
                try:
                    res = fn(module)
                    if not isinstance(res, PassResult) and not hasattr(res, "graph_module"):
                        raise TypeError(f"The result of the pass {fn_name} should be type "
                                        "PassResult.Please wrap it with pass_result_wrapper()")
                    module = res.graph_module
                    modified = modified or res.modified
                    if isinstance(module, GraphModule):
                        module.recompile()
                    if self.run_checks_after_each_pass:
                        self.check(module)
                except Exception as e:
                    prev = [_pass_name(p) for p in self.passes[:i]]
                    raise Exception(f"An error occurred when running the '{fn_name}' pass after "
                                    f"the following passes: {prev}") from e  # noqa: TRY002
            overall_modified = overall_modified or modified
            if not modified:
                break
        return PassResult(module, overall_modified)
