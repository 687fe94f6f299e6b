"""A compiled callable: the cache of graphs captured for it, each under its
guards, and what runs a call.

A call first looks for a cache entry whose guards hold (the most recently
used first) and runs its program; a call none fits is captured -- run
eagerly while its op calls are recorded (its result is the eager one) -- and
compiled into a new entry, until the function holds ``cache_size_limit``
entries (``ptcore._dynamo.config``): then, as torch, a call none fits runs
eagerly, with one warning.  An entry whose capture found something a graph
cannot replay (:mod:`ptcore._dynamo.capture`) runs the function eagerly.

Shapes (``dynamic=``).  ptcore's graphs are specialised to the shapes they
were captured at (it has no symbolic sizes), and a capture costs a call's
eager time and more, so a function whose shapes keep changing -- a generation
loop growing the sequence, the last short batch of an epoch, bucketed lengths
-- is handled as torch's dynamic shapes are seen from outside: no recompile
warning, results as eager's.  ``dynamic=False`` specialises every shape, as
torch, up to the recompile limit.  ``dynamic=True``, a tensor argument marked
by ``mark_dynamic``, and (``dynamic=None``, torch's automatic dynamic shapes)
the first call whose argument shapes differ from every entry's make the
function *shape-dynamic*: its entries are then found by the shapes of its
arguments (a dict, not a scan of every entry's guards), a shape not seen
before runs eagerly and is captured when it comes again (shapes that recur
are compiled; a loop over ever-new lengths runs at eager speed instead of
paying a capture per call), up to ``_SHAPES_CAP`` shapes, beyond which new
shapes run eagerly.  (With ``dynamic=None`` the call that makes the function
shape-dynamic is captured, as torch recompiles once there.)

A program cut by breaks runs segment by segment: after each, the driver
converts the value the program converted (``bool(t)`` ...) and continues with
the segment captured for that value.  A value not seen before means the
program takes a path not captured yet: the call runs eagerly again from the
start (the segments run so far wrote nothing outside; the random generators
are set back), and that run is captured into a new branch of the entry.
"""
import sys as _sys
import warnings
import weakref

import ptcore
from ptcore._dispatch import dispatcher as _D
from ptcore._tensor import _TensorBase, _layout_live_count
from ptcore._dispatch import tracing as _tracing
from ptcore._dispatch.table import lookup
from ptcore._dynamo import config, exc
from ptcore._dynamo import capture as _capture
from ptcore._dynamo import guards as _guards
from ptcore._dynamo.utils import counters as _torch_counters
from ptcore._inductor import backend as _backend
from ptcore._inductor import cudagraphs as _cudagraphs
from ptcore._inductor.codegen import Diverged

__all__ = ["CompiledFunction", "Entry", "reset_all", "stance", "counters"]

# every compiled callable, for reset()
_ALL = weakref.WeakSet()
# set_stance's stance ("default", "force_eager", "eager_on_recompile", "fail_on_recompile")
stance = ["default"]
# process-wide counts (ptcore._dynamo.utils.counters-like): captures, graphs, breaks ...
counters = {"captures": 0, "graphs": 0, "breaks": 0, "eager_calls": 0, "recompiles": 0}
_total = [0]          # entries made since the last reset (accumulated_recompile_limit)
# (the settings' dict, read per call: ``config.disable`` through the module's
# __getattr__ costs a microsecond)
_settings = config.__dict__["_values"]


# conversions torch's ``fullgraph=True`` captures as symbolic values (its
# capture_scalar_outputs): a number from ``item()``/``int()``/``float()``/
# ``__index__``.  ptcore runs them as a break whose value selects the next
# segment, with the same result.  A conversion to ``bool`` (a branch on data)
# stays refused, as torch's.
_SCALAR_OUTPUTS = frozenset(("item", "__int__", "__float__", "__index__"))


def _scalar_output(b):
    return b.kind == "conversion" and b.method in _SCALAR_OUTPUTS and not isinstance(b.value, bool)


class Entry:
    """One cache entry: guards, and the program (None: run eagerly, for
    ``reason``); ``breaks`` and ``problems`` as the capture found them.
    ``retry``: the entry's first capture wrote Python state (a cache the program
    fills on its first call, an attribute it initializes lazily), so its next
    call is captured again before the entry settles on eager."""
    __slots__ = ("guards", "program", "reason", "breaks", "problems", "random_before_break",
                 "hits", "retry", "shape_key")

    def __init__(self, guards, program, reason=None, breaks=(), problems=(), shape_key=None):
        self.shape_key = shape_key
        self.guards = guards
        self.program = program
        self.reason = reason
        self.breaks = list(breaks)
        self.problems = list(problems)
        self.random_before_break = False
        self.hits = 0
        self.retry = False


# distinct argument shapes a shape-dynamic function compiles (then: eager), and
# the shapes it counts while waiting for them to recur
_SHAPES_CAP = 64
_SEEN_CAP = 4096


def _shape_key(args, kwargs):
    """What tells a shape-dynamic function's entries apart: the shapes of its
    tensor arguments and the values of its int arguments (a length), None for
    anything else (the entries' guards compare it all)."""
    key = [a.shape if isinstance(a, _TensorBase) else (a if type(a) is int else None)
           for a in args]
    if kwargs:
        for k, a in kwargs.items():
            key.append((k, a.shape if isinstance(a, _TensorBase)
                        else (a if type(a) is int else None)))
    return tuple(key)


def _marked_dynamic(args, kwargs):
    """Whether a tensor argument was marked by ``mark_dynamic``."""
    for a in (*args, *kwargs.values()):
        if isinstance(a, _TensorBase) and getattr(a, "_dynamo_dynamic_indices", None):
            return True
    return False


def _get(args, kwargs, path):
    x = args if path[0] == 0 else kwargs
    for p in path[1:]:
        x = x[p]
    return x


def build_result(spec, env):
    kind = spec[0]
    if kind == "v":
        return env[spec[1]]
    if kind == "c":
        return spec[1]
    if kind == "seq":
        items = [build_result(s, env) for s in spec[2]]
        return items if spec[1] is list else spec[1](items)
    if kind == "nt":
        items = [build_result(s, env) for s in spec[2]]
        t = spec[1]
        return t._make(items) if hasattr(t, "_make") else t(items)
    if kind == "dict":
        return spec[1](zip(spec[2], [build_result(s, env) for s in spec[3]]))
    if kind == "tree":
        return spec[1].unflatten_fn([build_result(s, env) for s in spec[3]], spec[2])
    if kind == "dc":
        return spec[1](**dict(zip(spec[2], [build_result(s, env) for s in spec[3]])))
    if kind == "obj":
        obj = spec[1].__new__(spec[1])
        obj.__dict__.update(zip(spec[2], [build_result(s, env) for s in spec[3]]))
        return obj
    raise AssertionError(kind)


def convert(t, method):
    """The Python value a break converts ``t`` to, as the program did."""
    return getattr(t, method)()


def _layers_we_cannot_capture():
    """Whether a dispatch layer is on that a capture does not record
    (``__torch_function__`` modes, vmap, forward AD, a default device), or a sparse
    tensor lives (its ops run in its class, outside the layers a capture records; they
    kept the protocol's layer on before its instances were routed apart)."""
    if _D.arg_scan[0] and _layout_live_count():
        return True
    if not _D.on[0]:
        return False
    for layer in _D._LAYERS:
        if layer.enabled and layer.name not in ("autocast", "tracing", "device", "profiler"):
            return True
    return False


class CompiledFunction:
    """What ``ptcore.compile(fn)`` returns for a function (and what an
    ``OptimizedModule`` calls): ``fn`` with a cache of compiled graphs."""

    def __init__(self, fn, *, modules=(), fullgraph=False, dynamic=None, backend="inductor",
                 mode=None, options=None):
        self._fn = fn
        self._modules = list(modules)
        self.fullgraph = bool(fullgraph)
        self.dynamic = dynamic
        self.backend = backend
        self.mode = mode
        self.options = dict(options or {})
        self.entries = []
        self.last_breaks = []
        self._warned_limit = False
        # shape-dynamic (see the module's docstring): entries by argument shapes,
        # and how often each shape not compiled yet was seen
        self._by_shape = None
        self._seen = {}
        _ALL.add(self)
        for a in ("__name__", "__qualname__", "__doc__", "__module__"):
            try:
                setattr(self, a, getattr(fn, a))
            except (AttributeError, TypeError):
                pass
        self.__wrapped__ = fn

    def __reduce__(self):
        raise TypeError("a compiled function cannot be pickled (compile it again after loading)")

    def settings(self):
        """The compile arguments (to compile again: an unpickled OptimizedModule)."""
        return {"fullgraph": self.fullgraph, "dynamic": self.dynamic, "backend": self.backend,
                "mode": self.mode, "options": dict(self.options)}

    # -- calls ---------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        fn = self._fn
        if stance[0] == "force_eager" or _settings["disable"] or _capture._tls.tracer is not None \
                or _tracing._tls.tracer is not None or _layers_we_cannot_capture():
            # (inside a capture the call is recorded as part of the caller's graph)
            return fn(*args, **kwargs)
        if self._by_shape is not None:
            return self._call_by_shape(args, kwargs)
        hit, r = self._lookup(self.entries, args, kwargs)
        return r if hit else self._miss(args, kwargs, r)

    def _lookup(self, entries, args, kwargs):
        """``(True, result)`` of the call by the first of ``entries`` whose
        guards hold (moved to the front), else ``(False, why the last failed)``."""
        why = None
        for i, e in enumerate(entries):
            why = e.guards.check(args, kwargs)
            if why is None:
                if i:
                    entries.insert(0, entries.pop(i))
                e.hits += 1
                if e.program is None:
                    if e.retry:
                        self._drop(e)
                        _total[0] -= 1
                        return True, self._capture(args, kwargs, retried=True)
                    counters["eager_calls"] += 1
                    return True, self._fn(*args, **kwargs)
                return True, self._run(e, args, kwargs)
        return False, why

    def _call_by_shape(self, args, kwargs):
        """A call of a shape-dynamic function: the entries of its shapes, or
        eager for a shape not seen before (captured when it comes again)."""
        key = _shape_key(args, kwargs)
        bucket = self._by_shape.get(key)
        if bucket is not None:
            hit, r = self._lookup(bucket, args, kwargs)
            return r if hit else self._miss(args, kwargs, r, bucket)
        seen = self._seen.get(key, 0) + 1
        if (seen < 2 and self._by_shape) or len(self._by_shape) >= _SHAPES_CAP:
            # (the first shape of all is captured at once)
            if len(self._seen) >= _SEEN_CAP:
                self._seen.clear()
            self._seen[key] = seen
            counters["eager_calls"] += 1
            return self._fn(*args, **kwargs)
        self._seen.pop(key, None)
        return self._miss(args, kwargs, "a shape seen before", [])

    def _shape_dynamic(self, args, kwargs):
        """Whether a miss makes the function shape-dynamic (see the module's
        docstring); indexes its entries by shape when it does."""
        if self._by_shape is not None or self.dynamic is False:
            return False
        if self.dynamic is not True and not _marked_dynamic(args, kwargs):
            if not self.entries:
                return False
            key = _shape_key(args, kwargs)
            if any(e.shape_key == key for e in self.entries):
                return False        # (another guard failed: a recompile, not a shape)
        self._by_shape = {}
        for e in reversed(self.entries):
            self._by_shape.setdefault(e.shape_key, []).insert(0, e)
        return True

    def _drop(self, e):
        self.entries.remove(e)
        if self._by_shape is not None:
            bucket = self._by_shape.get(e.shape_key)
            if bucket is not None and e in bucket:
                bucket.remove(e)

    def _run(self, e, args, kwargs):
        prog = e.program
        one = prog.one_segment
        if one is False:
            one = prog.one_segment = _one_segment(prog)
        if one is not None:
            # (one segment, no break, its inputs positional arguments, its result one
            # of its outputs: the same steps without the environment)
            seg, picks, k = one
            try:
                return seg.fn(*[args[i] for i in picks])[k]
            except Diverged:
                return self._diverged(e, args, kwargs, None)
        env = {vid: _get(args, kwargs, path) for vid, path in prog.arg_inputs}
        if prog.break_inputs:
            env.update(prog.break_inputs)
        rng = ptcore.get_rng_state() if e.random_before_break else None
        seg = prog.root
        while True:
            try:
                outs = seg.fn(*[env[v] for v in seg.in_ids])
            except Diverged:
                return self._diverged(e, args, kwargs, rng)
            for v, o in zip(seg.out_ids, outs):
                env[v] = o
            b = seg.brk
            if b is None:
                return build_result(seg.out_spec, env)
            key = None if b.vid is None else _backend.value_key(convert(env[b.vid], b.method))
            nxt = seg.children.get(key)
            if nxt is None:
                return self._diverged(e, args, kwargs, rng)
            seg = nxt

    def _limit(self):
        return config.recompile_limit

    def _miss(self, args, kwargs, why, bucket=None):
        if bucket is None and self._shape_dynamic(args, kwargs):
            if self.dynamic is True or _marked_dynamic(args, kwargs):
                # (dynamic from the first call: this shape is captured when it recurs)
                return self._call_by_shape(args, kwargs)
            bucket = []
        held = self.entries if bucket is None else bucket
        if held:
            if stance[0] == "eager_on_recompile":
                return self._fn(*args, **kwargs)
            if stance[0] == "fail_on_recompile":
                raise RuntimeError(f"Detected recompile when torch.compile stance is "
                                   f"'fail_on_recompile' (guard failed: {why})")
            if config.error_on_recompile:
                raise exc.RecompileError(f"Recompiling function {self.__qualname__} "
                                         f"(guard failed: {why})")
        if len(held) >= self._limit() or \
                _total[0] >= config.accumulated_recompile_limit:
            if config.fail_on_recompile_limit_hit:
                raise exc.FailOnRecompileLimitHit(
                    f"recompile_limit reached with fullgraph=True or "
                    f"fail_on_recompile_limit_hit; last guard failure: {why}")
            if not self._warned_limit:
                self._warned_limit = True
                warnings.warn(
                    f"ptcore._dynamo hit config.recompile_limit ({self._limit()})\n"
                    f"   function: {getattr(self._fn, '__qualname__', self._fn)!r}\n"
                    f"   last reason: {why}\n"
                    "To log all recompilation reasons, use TORCH_LOGS=\"recompiles\".\n"
                    "To diagnose recompilation issues, see the ptcore.compile user guide.",
                    UserWarning, stacklevel=3)
            counters["eager_calls"] += 1
            return self._fn(*args, **kwargs)
        if self.entries:
            counters["recompiles"] += 1
        return self._capture(args, kwargs)

    def _modules_of_call(self):
        mods = list(self._modules)
        owner = getattr(self._fn, "__self__", None)
        from_nn = _guards.Module
        if isinstance(owner, from_nn) and not any(owner is m for m in mods):
            mods.insert(0, owner)
        return mods

    def _capture(self, args, kwargs, into=None, retried=False):
        """Capture this call (its eager result is returned) into a new entry,
        or into the tree of ``into`` (an entry whose path diverged);
        ``retried``: the call replaces an entry whose first capture wrote
        Python state (see ``Entry.retry``)."""
        if _sys.getprofile() is not None:
            # (a profiler or debugger holds the profile hook the capture needs to see
            # the program's calls: run eagerly, capture when it is gone)
            counters["eager_calls"] += 1
            return self._fn(*args, **kwargs)
        modules = self._modules_of_call()
        state = _guards.global_state()
        if into is None:
            guards, found = _guards.build(self._fn, args, kwargs, modules, state)
            # (before the call: an argument it writes is guarded as it came in)
            loose = _guards.build(self._fn, args, kwargs, modules, state, arguments_only=True)[0]
        else:
            guards, found = into.guards, modules
        counters["captures"] += 1
        _torch_counters["frames"]["total"] += 1
        cap, out = _capture.capture(self._fn, args, kwargs, found)
        self.last_breaks = list(cap.breaks) + list(cap.problems)
        counters["breaks"] += len(cap.breaks) + len(cap.problems)
        for b in self.last_breaks:
            _torch_counters["unimplemented"][b.reason] += 1
        if self.fullgraph:
            refused = cap.problems or [b for b in cap.breaks if not _scalar_output(b)]
            if refused:
                b = refused[0]
                raise exc.Unsupported(f"fullgraph=True: the program cannot be one graph: "
                                      f"{b.reason}" + _where(b))
        prog, reason = None, None
        custom = self.backend if callable(self.backend) else None
        if cap.problems:
            reason = cap.problems[0].reason
        else:
            try:
                prog = _backend.compile_capture(cap, backend=self._backend_name(),
                                                name=_safe_name(self._fn), custom=custom)
            except Exception as err:
                if config.suppress_errors:
                    warnings.warn(f"ptcore.compile: compiling {self.__qualname__} failed, it "
                                  f"runs eagerly ({type(err).__name__}: {err})", UserWarning,
                                  stacklevel=3)
                    reason = f"backend error: {err}"
                else:
                    raise exc.BackendCompilerFailed(
                        f"backend {self.backend!r} raised {type(err).__name__}: {err}") from err
            if prog is not None and cap.breaks and not prog.speculative:
                reason, prog = ("the program writes an input before a graph break (a path "
                                "diverging after it could not be run again)"), None
        if into is not None:
            if prog is not None and _merge(into.program.root, prog):
                into.breaks += [b for b in cap.breaks if b not in into.breaks]
                into.program.break_inputs.update(prog.break_inputs)
            return out
        if prog is not None and self._cudagraphs_on():
            # (mode="reduce-overhead" / backend="cudagraphs": the run replayed as CUDA graphs)
            _cudagraphs.install(prog, cap, _safe_name(self._fn))
        if prog is None and cap.state_writes:
            guards = loose
        e = Entry(guards, prog, reason, cap.breaks, cap.problems, _shape_key(args, kwargs))
        e.retry = prog is None and cap.state_writes and not retried
        if prog is not None:
            counters["graphs"] += prog.n_graphs
            _torch_counters["frames"]["ok"] += 1
            _torch_counters["stats"]["unique_graphs"] += prog.n_graphs
            _torch_counters["stats"]["calls_captured"] += len(cap.graph.nodes)
            e.random_before_break = bool(cap.breaks) and _random_before_break(cap)
        self.entries.insert(0, e)
        if self._by_shape is not None:
            self._by_shape.setdefault(e.shape_key, []).insert(0, e)
        _total[0] += 1
        if custom is not None and prog is not None and not cap.effects and not cap.input_writes:
            # (a user's backend may compute otherwise than the ops did: its callables
            # give the first call's result too, as torch's, where running the program
            # again changes nothing)
            return self._run(e, args, kwargs)
        return out

    def _diverged(self, e, args, kwargs, rng):
        """The call left the captured path of ``e``: run it again eagerly
        (capturing the new branch while the cache has room)."""
        if rng is not None:
            ptcore.set_rng_state(rng)
        if _count_branches(e.program.root) >= self._limit():
            counters["eager_calls"] += 1
            return self._fn(*args, **kwargs)
        counters["recompiles"] += 1
        return self._capture(args, kwargs, into=e)

    def _backend_name(self):
        b = self.backend
        if callable(b):
            return "eager"          # (the graphs go to the callable: ptcore.fx graph modules)
        if not isinstance(b, str):
            raise TypeError(f"backend must be a name or a callable, not {type(b).__name__}")
        return {"inductor": "inductor", "eager": "eager", "aot_eager": "aot_eager",
                "cudagraphs": "aot_eager"}.get(b, "inductor")

    def _cudagraphs_on(self):
        return self.backend == "cudagraphs" or bool(self.options.get("triton.cudagraphs"))

    def reset(self):
        for e in self.entries:
            if e.program is not None:
                _cudagraphs.release(e.program)
        self.entries = []
        self.last_breaks = []
        self._warned_limit = False
        self._by_shape = None
        self._seen = {}


def _one_segment(prog):
    """``(segment, argument positions of its inputs, index of the result among
    its outputs)`` when ``prog`` is one segment without a break that takes
    positional arguments and returns one of its outputs; else None."""
    seg = prog.root
    if seg.brk is not None or seg.children or len(prog.segments) != 1:
        return None
    where = {}
    for vid, path in prog.arg_inputs:
        if len(path) != 2 or path[0] != 0 or type(path[1]) is not int:
            return None
        where[vid] = path[1]
    spec = seg.out_spec
    if any(v not in where for v in seg.in_ids) or spec is None or spec[0] != "v" or \
            spec[1] not in seg.out_ids:
        return None
    return seg, [where[v] for v in seg.in_ids], list(seg.out_ids).index(spec[1])


def _random_before_break(cap):
    last = cap.breaks[-1].index if cap.breaks else 0
    for i, n in enumerate(cap.graph.nodes[:last]):
        d = lookup(n.op[1], n.op[0])
        if d is not None and "random" in d.tags:
            return True
    return False


def _count_branches(seg):
    """The paths of the tree at ``seg`` (its leaves)."""
    if not seg.children:
        return 1
    return sum(_count_branches(c) for c in seg.children.values())


def _merge(root, prog):
    """Attach ``prog``'s path to the tree at ``root`` where the two part;
    False when their shared part differs (the program is not a function of
    its inputs and the converted values: the branch is not kept)."""
    a, b = root, prog.root
    while True:
        if a.key != b.key:
            return False
        if a.brk is None or b.brk is None:
            return False
        k = _backend._key(b.brk)
        nxt = a.children.get(k)
        if nxt is None:
            a.children[k] = b.children[k]
            return True
        a, b = nxt, b.children[k]


def _where(b):
    if b.user_stack:
        f = b.user_stack[-1]
        return f"\n  at {f.filename}:{f.lineno} in {f.name}\n    {f.line}"
    return ""


def _safe_name(fn):
    name = getattr(fn, "__name__", "fn")
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "fn"


def reset_all():
    """Forget every compiled graph (``ptcore.compiler.reset``)."""
    for f in list(_ALL):
        f.reset()
    _total[0] = 0
