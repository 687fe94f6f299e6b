"""A compiled optimizer step: ``ptcore.compile(opt.step)`` for :class:`~ptcore.optim.SGD`
(with momentum), :class:`~ptcore.optim.Adam` and :class:`~ptcore.optim.AdamW` on the CPU
(torch's "compiled optimizer": ``opt.step = torch.compile(opt.step)``).

The eager step makes, for each parameter, its Python checks and one call of the
one-pass update loop (``ptcore._ops.kernels._optim``); compiled, each parameter
group is one call of the loops over all its parameters (``sgd_step_many``,
``adam_step_many``), which the same loops run in the same order -- the results
are the eager step's bit for bit.  What the call checks on the Python side is the
optimizer's structure, against what it was when the step was planned: the same
param groups and state objects, each parameter's state present (the state
dicts are watched, :class:`ptcore._dynamo._guard_fast.DictWatch`: a step that
finds none changed since they last held the planned tensors does not compare
them again).  Whatever else -- a closure, step hooks, another optimizer class, ``differentiable``, the state
not made yet (the first step), a parameter the loops do not take (complex,
sparse, on another device, not contiguous) -- runs the eager step, as the
optimizer would; a step that finds the structure changed plans again.
"""
from ptcore._dynamo import _guard_fast
from ptcore._ops.kernels import _optim
from ptcore._dispatch import profiling as _profiling
from ptcore.optim import SGD, Adam, AdamW
from ptcore.optim import optimizer as _optimizer

__all__ = ["CompiledStep", "compiles_step"]


def _kind(opt):
    t = type(opt)
    if t is SGD:
        return "sgd"
    if t is Adam or t is AdamW:
        return "adam"
    return None


def compiles_step(fn):
    """Whether ``fn`` is the bound ``step`` of an optimizer this module compiles."""
    opt = getattr(fn, "__self__", None)
    if opt is None or _kind(opt) is None:
        return False
    return getattr(fn, "__func__", None) is type(opt).step


class _Group:
    """A param group as planned: its dict and ``params`` list, and each
    parameter's state tensors (lists, parameter order)."""
    __slots__ = ("group", "params", "n", "state")

    def __init__(self, group, state):
        self.group = group
        self.params = group["params"]
        self.n = len(self.params)
        self.state = state


class CompiledStep:
    """What ``ptcore.compile(opt.step)`` returns for a supported optimizer."""

    def __init__(self, fn):
        self._fn = fn
        self._opt = fn.__self__
        self._kind = _kind(self._opt)
        self._plan = None
        self.eager_steps = 0        # steps that ran eagerly (first step, fallbacks)
        self.compiled_steps = 0
        self.__wrapped__ = fn
        for a in ("__name__", "__qualname__", "__doc__", "__module__"):
            try:
                setattr(self, a, getattr(fn, a))
            except (AttributeError, TypeError):
                pass

    def __reduce__(self):
        raise TypeError("a compiled function cannot be pickled (compile it again after loading)")

    # -- planning ----------------------------------------------------------
    def _make_plan(self):
        """The groups' state lists, or None when the eager step must run
        (state not made yet, options the loops do not take)."""
        opt = self._opt
        state = opt.state
        groups = []
        for group in opt.param_groups:
            if group.get("differentiable") or group.get("capturable"):
                return None
            params = group["params"]
            if self._kind == "sgd":
                if group["momentum"] == 0:
                    return None
                bufs = []
                for p in params:
                    s = state.get(p)
                    b = None if s is None else s.get("momentum_buffer")
                    if b is None:
                        return None
                    bufs.append(b)
                groups.append(_Group(group, (bufs,)))
            else:
                ams = group["amsgrad"]
                m, v, mx, st = [], [], [] if ams else None, []
                for p in params:
                    s = state.get(p)
                    if not s or "exp_avg" not in s or (ams and "max_exp_avg_sq" not in s):
                        return None
                    m.append(s["exp_avg"])
                    v.append(s["exp_avg_sq"])
                    st.append(s["step"])
                    if ams:
                        mx.append(s["max_exp_avg_sq"])
                groups.append(_Group(group, (m, v, mx, st)))
        # (the state dicts, watched: a step that finds them unchanged since they
        # last held the planned tensors does not compare them again)
        held = [state] + [state[p] for g in groups for p in g.params]
        return (state, opt.param_groups, len(opt.param_groups), groups,
                _guard_fast.DictWatch(held, [None] * len(held)))

    def _valid(self, plan):
        opt = self._opt
        if plan[0] is not opt.state or plan[1] is not opt.param_groups or \
                plan[2] != len(plan[1]):
            return False
        for pg, g in zip(plan[1], plan[3]):
            if pg is not g.group or pg["params"] is not g.params or len(g.params) != g.n:
                return False
        return self._states_same(plan)

    def _states_same(self, plan):
        """Whether each parameter's state holds the tensors planned (a state
        loaded or replaced since is planned again)."""
        watch = plan[4]
        if watch.unchanged():
            return True
        tags = watch.begin()
        if not self._states_hold(plan):
            return False
        watch.commit(tags)
        return True

    def _states_hold(self, plan):
        state = plan[0]
        for g in plan[3]:
            if self._kind == "sgd":
                for p, b in zip(g.params, g.state[0]):
                    if state[p].get("momentum_buffer") is not b:
                        return False
            else:
                m, v, mx, st = g.state
                for i, p in enumerate(g.params):
                    s = state[p]
                    if s.get("exp_avg") is not m[i] or s.get("exp_avg_sq") is not v[i] or \
                            s.get("step") is not st[i] or \
                            (mx is not None and s.get("max_exp_avg_sq") is not mx[i]):
                        return False
        return True

    # -- a step ------------------------------------------------------------
    def _eager(self, closure):
        self.eager_steps += 1
        self._plan = None
        return self._fn(closure) if closure is not None else self._fn()

    def __call__(self, closure=None):
        opt = self._opt
        if closure is not None or opt._optimizer_step_pre_hooks or \
                opt._optimizer_step_post_hooks or _optimizer._global_optimizer_pre_hooks or \
                _optimizer._global_optimizer_post_hooks or _profiling.recording() or \
                type(opt).step is not self._fn.__func__:
            # (hooks, a profiler's range, a closure: what the eager step does)
            return self._eager(closure)
        plan = self._plan
        if plan is None or not self._valid(plan):
            plan = self._plan = self._make_plan()
            if plan is None:
                return self._eager(closure)
        if not self._run(plan):
            return self._eager(closure)
        self.compiled_steps += 1
        return None

    def _run(self, plan):
        """The update of every group (False: a parameter the loops do not
        take; nothing was written then)."""
        sgd = self._kind == "sgd"
        todo = []
        for g in plan[3]:
            # (the parameters' ``_grad``: what ``.grad`` reads without its warning,
            # which only a non-leaf without a gradient gets -- read through .grad then)
            grads = [p._grad for p in g.params]
            for gr in grads:
                if gr is None:
                    grads = [p.grad for p in g.params]
                    break
            if sgd:
                if not _optim.sgd_many_ok(g.params, grads, g.state[0]):
                    return False
            elif not _optim.adam_many_ok(g.params, grads, *g.state):
                return False
            todo.append(grads)
        for g, grads in zip(plan[3], todo):
            h = g.group
            if sgd:
                lr = h["lr"]
                _optim.sgd_step_many(g.params, grads, g.state[0], _value(lr), h["momentum"],
                                     h["dampening"], h["weight_decay"], h["nesterov"],
                                     h["maximize"])
            else:
                beta1, beta2 = h["betas"]
                _optim.adam_step_many(g.params, grads, *g.state, _value(h["lr"]),
                                      _value(beta1), _value(beta2), h["eps"],
                                      h["weight_decay"], h["maximize"],
                                      h["decoupled_weight_decay"])
        return True


def _value(x):
    """A hyperparameter as the eager step uses it (a one-element tensor's value)."""
    return x if type(x) is float or type(x) is int else float(x)
